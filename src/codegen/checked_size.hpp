#pragma once
// Overflow-checked size arithmetic. Every element count and byte count of an array goes through
// these: a product that wraps would allocate a few bytes and let kernels write far past them.
#include "spikeforge/errors.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <string>

namespace spikeforge::codegen {

// a * b, or a ModelError naming `what` (e.g. "neuron group 'Exc': spike queue") when the product
// does not fit in size_t.
inline size_t checkedMul(size_t a, size_t b, const std::string& what) {
    if (a != 0 && b > std::numeric_limits<size_t>::max() / a)
        throw ModelError(what + ": size " + std::to_string(a) + " x " + std::to_string(b) +
                         " overflows a 64-bit count (model too large)");
    return a * b;
}

// The product of all factors, checked after each multiplication.
inline size_t checkedProduct(std::initializer_list<size_t> factors, const std::string& what) {
    size_t r = 1;
    bool zero = false;
    for (size_t f : factors)
        zero = zero || f == 0;
    if (zero) return 0; // an empty dimension: no overflow whatever the other factors are
    for (size_t f : factors)
        r = checkedMul(r, f, what);
    return r;
}

inline size_t checkedAdd(size_t a, size_t b, const std::string& what) {
    if (b > std::numeric_limits<size_t>::max() - a)
        throw ModelError(what + ": size " + std::to_string(a) + " + " + std::to_string(b) +
                         " overflows a 64-bit count (model too large)");
    return a + b;
}

// Byte counts for messages: "512 B", "1.5 KiB", "1.2 GiB", "4.0 TiB".
inline std::string humanBytes(uint64_t bytes) {
    static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024) return std::to_string(bytes) + " B";
    double v = static_cast<double>(bytes);
    size_t u = 0;
    while (v >= 1024.0 && u + 1 < std::size(units)) {
        v /= 1024.0;
        u++;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
    return buf;
}

} // namespace spikeforge::codegen
