#pragma once
// A device array with its host mirror, and conversions between numbers and C element types.
#include "codegen/checked_size.hpp"
#include "codegen/plan.hpp"
#include "spikeforge/errors.hpp"

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace spikeforge::runtime {

// The device array is the only copy of the data; `host` (the mirror) stays empty until the
// array is pulled, pushed, viewed or set from the host (docs/memory.md).
struct HostArray {
    codegen::ArrayDecl decl;
    void* device = nullptr;
    std::vector<unsigned char> host;
    size_t elementSize() const { return codegen::fieldSize(decl.ctype); }
    size_t bytes() const { return codegen::checkedMul(decl.count, elementSize(), decl.name); }
};

template <typename T> bool typeMatches(const std::string& ctype) {
    if constexpr (std::is_same_v<T, float>)
        return ctype == "float";
    else if constexpr (std::is_same_v<T, double>)
        return ctype == "double";
    else if constexpr (std::is_same_v<T, int32_t>)
        return ctype == "int32_t";
    else if constexpr (std::is_same_v<T, uint32_t>)
        return ctype == "uint32_t";
    else if constexpr (std::is_same_v<T, int16_t>)
        return ctype == "int16_t";
    else if constexpr (std::is_same_v<T, uint16_t>)
        return ctype == "uint16_t";
    else if constexpr (std::is_same_v<T, int8_t>)
        return ctype == "int8_t";
    else if constexpr (std::is_same_v<T, uint8_t>)
        return ctype == "uint8_t" || ctype == "bool";
    else
        return false;
}

void storeNumber(unsigned char* dst, const std::string& ctype, double v);
double loadNumber(const unsigned char* src, const std::string& ctype);

} // namespace spikeforge::runtime
