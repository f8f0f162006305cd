#include "codegen/ctype.hpp"

#include "spikeforge/errors.hpp"

#include <cstdint>
#include <cstring>

namespace spikeforge::codegen {

namespace {

template <typename T> void put(unsigned char* dst, double v) {
    const T x = static_cast<T>(v);
    std::memcpy(dst, &x, sizeof x);
}

template <typename T> double get(const unsigned char* src) {
    T x;
    std::memcpy(&x, src, sizeof x);
    return static_cast<double>(x);
}

// Other spellings of the canonical names that generated code and snippets use.
struct Alias {
    std::string_view name;
    CType type;
};
constexpr Alias kAliases[] = {{"int", CType::Int32},
                              {"signed int", CType::Int32},
                              {"unsigned int", CType::UInt32},
                              {"unsigned", CType::UInt32},
                              {"unsigned long long", CType::UInt64},
                              {"long long", CType::Int64}};

constexpr CType kAll[] = {CType::Bool,   CType::Int8,  CType::UInt8,  CType::Int16,
                          CType::UInt16, CType::Int32, CType::UInt32, CType::Int64,
                          CType::UInt64, CType::Float, CType::Double};

} // namespace

const CTypeInfo& info(CType t) {
    static const CTypeInfo kBool{"bool", 1, false, false}, kI8{"int8_t", 1, false, true},
        kU8{"uint8_t", 1, false, false}, kI16{"int16_t", 2, false, true},
        kU16{"uint16_t", 2, false, false}, kI32{"int32_t", 4, false, true},
        kU32{"uint32_t", 4, false, false}, kI64{"int64_t", 8, false, true},
        kU64{"uint64_t", 8, false, false}, kF{"float", 4, true, true}, kD{"double", 8, true, true},
        kPtr{"void*", 8, false, false};
    switch (t) {
    case CType::Bool:
        return kBool;
    case CType::Int8:
        return kI8;
    case CType::UInt8:
        return kU8;
    case CType::Int16:
        return kI16;
    case CType::UInt16:
        return kU16;
    case CType::Int32:
        return kI32;
    case CType::UInt32:
        return kU32;
    case CType::Int64:
        return kI64;
    case CType::UInt64:
        return kU64;
    case CType::Float:
        return kF;
    case CType::Double:
        return kD;
    case CType::Pointer:
        return kPtr;
    }
    throw InternalError("unknown CType " + std::to_string(static_cast<int>(t)));
}

std::optional<CType> parseCType(std::string_view name) {
    if (!name.empty() && name.back() == '*') return CType::Pointer;
    for (CType t : kAll)
        if (name == info(t).name) return t;
    for (const auto& a : kAliases)
        if (name == a.name) return a.type;
    return std::nullopt;
}

CType cTypeOf(std::string_view name) {
    if (auto t = parseCType(name)) return *t;
    throw InternalError("unknown C type '" + std::string(name) + "'");
}

std::optional<CType> fromSnippetType(std::string_view name, Precision p) {
    if (name == "scalar") return p == Precision::Float ? CType::Float : CType::Double;
    return parseCType(name);
}

void storeNumber(unsigned char* dst, CType t, double v) {
    switch (t) {
    case CType::Bool: // stored as one byte, as C++ and C99 _Bool are on every target
    case CType::UInt8:
        return put<uint8_t>(dst, v);
    case CType::Int8:
        return put<int8_t>(dst, v);
    case CType::Int16:
        return put<int16_t>(dst, v);
    case CType::UInt16:
        return put<uint16_t>(dst, v);
    case CType::Int32:
        return put<int32_t>(dst, v);
    case CType::UInt32:
        return put<uint32_t>(dst, v);
    case CType::Int64:
        return put<int64_t>(dst, v);
    case CType::UInt64:
        return put<uint64_t>(dst, v);
    case CType::Float:
        return put<float>(dst, v);
    case CType::Double:
        return put<double>(dst, v);
    case CType::Pointer:
        break;
    }
    throw InternalError(std::string("cannot store a number as ") + cName(t));
}

double loadNumber(const unsigned char* src, CType t) {
    switch (t) {
    case CType::Bool:
    case CType::UInt8:
        return get<uint8_t>(src);
    case CType::Int8:
        return get<int8_t>(src);
    case CType::Int16:
        return get<int16_t>(src);
    case CType::UInt16:
        return get<uint16_t>(src);
    case CType::Int32:
        return get<int32_t>(src);
    case CType::UInt32:
        return get<uint32_t>(src);
    case CType::Int64:
        return get<int64_t>(src);
    case CType::UInt64:
        return get<uint64_t>(src);
    case CType::Float:
        return get<float>(src);
    case CType::Double:
        return get<double>(src);
    case CType::Pointer:
        break;
    }
    throw InternalError(std::string("cannot load a number of type ") + cName(t));
}

} // namespace spikeforge::codegen
