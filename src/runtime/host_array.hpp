#pragma once
// A device array with its host mirror, and conversions between numbers and C element types.
#include "backends/backend.hpp"
#include "codegen/checked_size.hpp"
#include "codegen/ctype.hpp"
#include "codegen/plan.hpp"
#include "spikeforge/errors.hpp"

#include <cstdint>
#include <type_traits>
#include <vector>

namespace spikeforge::runtime {

// The device array is the only copy of the data; `host` (the mirror) stays empty until the
// array is pulled, pushed, viewed or set from the host (docs/memory.md).
struct HostArray {
    codegen::ArrayDecl decl;
    backends::Buffer device = nullptr;
    std::vector<unsigned char> host;
    codegen::CType type() const { return codegen::cTypeOf(decl.ctype); }
    size_t elementSize() const { return codegen::sizeOf(type()); }
    size_t bytes() const { return codegen::checkedMul(decl.count, elementSize(), decl.name); }
};

// The C type a host view of T reads; bool arrays are viewed as uint8_t (one byte each).
template <typename T> bool typeMatches(codegen::CType t) {
    using codegen::CType;
    if constexpr (std::is_same_v<T, float>)
        return t == CType::Float;
    else if constexpr (std::is_same_v<T, double>)
        return t == CType::Double;
    else if constexpr (std::is_same_v<T, int32_t>)
        return t == CType::Int32;
    else if constexpr (std::is_same_v<T, uint32_t>)
        return t == CType::UInt32;
    else if constexpr (std::is_same_v<T, int16_t>)
        return t == CType::Int16;
    else if constexpr (std::is_same_v<T, uint16_t>)
        return t == CType::UInt16;
    else if constexpr (std::is_same_v<T, int8_t>)
        return t == CType::Int8;
    else if constexpr (std::is_same_v<T, uint8_t>)
        return t == CType::UInt8 || t == CType::Bool;
    else if constexpr (std::is_same_v<T, int64_t>)
        return t == CType::Int64;
    else if constexpr (std::is_same_v<T, uint64_t>)
        return t == CType::UInt64;
    else
        return false;
}

// Element i of a host buffer of `a`'s type, as a number, and back.
inline void storeElement(HostArray& a, unsigned char* host, size_t i, double v) {
    codegen::storeNumber(host + i * a.elementSize(), a.type(), v);
}
inline double loadElement(const HostArray& a, const unsigned char* host, size_t i) {
    return codegen::loadNumber(host + i * a.elementSize(), a.type());
}

} // namespace spikeforge::runtime
