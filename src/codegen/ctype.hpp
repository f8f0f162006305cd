#pragma once
// The one table of C element types: name, size, kind. Every place that turns a type name into a
// size, a conversion or a check goes through it, so a new type is added here and nowhere else.
#include "spikeforge/types.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace spikeforge::codegen {

// Pointer: any field type ending in '*' (a device buffer in a merged-group struct).
enum class CType {
    Bool,
    Int8,
    UInt8,
    Int16,
    UInt16,
    Int32,
    UInt32,
    Int64,
    UInt64,
    Float,
    Double,
    Pointer
};

struct CTypeInfo {
    const char* name; // canonical C name in generated code ("uint32_t"; Pointer: "void*")
    size_t size;      // [B] also the alignment; pointers are 8 bytes on every target
    bool floating;
    bool isSigned;
};

const CTypeInfo& info(CType t);
inline const char* cName(CType t) {
    return info(t).name;
}
inline size_t sizeOf(CType t) {
    return info(t).size;
}

// A C type name as generated code, plans and snippets spell it ("float", "uint32_t",
// "unsigned int", "int", "bool", "T*", …); empty for anything else ("scalar" included: it needs a
// precision, see fromSnippetType).
std::optional<CType> parseCType(std::string_view name);
// parseCType or InternalError: for names the code generator made itself.
CType cTypeOf(std::string_view name);
// A snippet type name under a precision ("scalar" → Float or Double); empty if unknown.
std::optional<CType> fromSnippetType(std::string_view name, Precision p);

// Stores `v` converted to `t` at `dst` (sizeOf(t) bytes, any alignment); Pointer is refused
// (InternalError): a device chooses its own pointer representation.
void storeNumber(unsigned char* dst, CType t, double v);
double loadNumber(const unsigned char* src, CType t);

} // namespace spikeforge::codegen
