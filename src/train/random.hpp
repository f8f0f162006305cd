#pragma once
// Portable random draws for the dataset generators: std::mt19937_64 is fully specified by the
// standard, but its distributions are not (libstdc++ and libc++ give different numbers), so the
// conversions to uniform reals, bounded integers and normals are written here once.
#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>

namespace spikeforge::train::detail {

// splitmix64 finaliser (Steele, Lea & Flood 2014): mixes (seed, stream) into one engine seed so
// that neighbouring streams start far apart.
inline uint64_t mixSeed(uint64_t seed, uint64_t stream) {
    uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (stream + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

class Rng {
public:
    explicit Rng(uint64_t seed) : engine_(seed) {}
    Rng(uint64_t seed, uint64_t stream) : engine_(mixSeed(seed, stream)) {}

    // Uniform in [0, 1) from the top 53 bits of one draw.
    double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
    double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }

    // Uniform in [0, bound] (inclusive) by rejection: no modulo bias.
    uint64_t upTo(uint64_t bound) {
        if (bound == UINT64_MAX) return engine_();
        const uint64_t range = bound + 1;
        const uint64_t limit = UINT64_MAX - UINT64_MAX % range; // draws >= limit are rejected
        uint64_t draw = engine_();
        while (draw >= limit)
            draw = engine_();
        return draw % range;
    }

    // Standard normal by Box–Muller (one of the pair; the other is discarded for simplicity).
    double normal() {
        const double u1 = 1.0 - uniform(); // (0, 1]: log is finite
        const double u2 = uniform();
        return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
    }

private:
    std::mt19937_64 engine_;
};

} // namespace spikeforge::train::detail
