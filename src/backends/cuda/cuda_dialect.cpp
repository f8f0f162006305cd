// CUDA C++ spelling of the SIMT kernels' needs, for NVRTC without headers: the fixed-width types
// are typedefs of the built-in ones, INFINITY is built from its bit pattern, and the maths are
// NVRTC's built-in device functions (overloaded for float and double as in <cmath>). Float
// atomics are native (atomicAdd on double from sm_60; a compare-and-swap loop below that).
// Warp shuffles give the sub-group reductions (simt::Dialect::subGroupSize).
#include "backends/cuda/cuda_dialect.hpp"

#include "backends/cuda/nvrtc.hpp"

#include "spikeforge/errors.hpp"

#include <utility>

namespace spikeforge::cuda {

namespace {

constexpr int kFastCompileSince = 13; // NVRTC major version with --Ofast-compile
// NVRTC version (major, minor) with --minimal.
constexpr std::pair<int, int> kMinimalSince = {12, 4};

// The shuffles use the full-warp mask: the SIMT reductions call them in every lane of a warp.
// Max keeps the tree's `y > x ? y : x` (simt_reduce.cpp), so a NaN is dropped the same way.
constexpr const char* kPrelude = R"(typedef unsigned char uint8_t;
typedef signed char int8_t;
typedef unsigned short uint16_t;
typedef short int16_t;
typedef unsigned int uint32_t;
typedef int int32_t;
typedef unsigned long long uint64_t;
typedef long long int64_t;
typedef decltype(sizeof(0)) size_t;
#define SF_KERNEL extern "C" __global__ void
#define SF_FN __device__ inline
#define SF_GLOBAL
#define SF_RESTRICT __restrict__
#define SF_LOCAL
#define SF_SHARED __shared__
#define SF_LOCAL_ID ((uint32_t)threadIdx.x)
#define SF_GROUP_ID ((uint64_t)blockIdx.x)
#define SF_DIM1_ID ((uint32_t)(blockIdx.y * blockDim.y + threadIdx.y))
#define SF_BARRIER() __syncthreads()
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
SF_FN uint32_t sf_ctz(uint32_t x) { return x ? (uint32_t)(__ffs((int)x) - 1) : 32u; }
SF_FN uint32_t sf_popcount(uint32_t x) { return (uint32_t)__popc(x); }
SF_FN uint32_t sf_float_bits(float x) { return __float_as_uint(x); }
SF_FN uint32_t sf_atomic_add_u32(uint32_t* p, uint32_t v) { return atomicAdd(p, v); }
SF_FN uint32_t sf_atomic_or_u32(uint32_t* p, uint32_t v) { return atomicOr(p, v); }
SF_FN void sf_atomic_store_u32(uint32_t* p, uint32_t v) { (void)atomicExch(p, v); }
SF_FN uint32_t sf_local_atomic_add_u32(uint32_t* p, uint32_t v) { return atomicAdd(p, v); }
SF_FN uint32_t sf_local_atomic_or_u32(uint32_t* p, uint32_t v) { return atomicOr(p, v); }
SF_FN void sf_atomic_add_f32(float* p, float v) { (void)atomicAdd(p, v); }
#ifdef SF_DOUBLE
SF_FN void sf_atomic_add_f64(double* p, double v) {
#if __CUDA_ARCH__ >= 600
    (void)atomicAdd(p, v);
#else
    unsigned long long* u = (unsigned long long*)p;
    unsigned long long old = *u, seen;
    do {
        seen = old;
        old = atomicCAS(u, seen, __double_as_longlong(__longlong_as_double((long long)seen) + v));
    } while (old != seen);
#endif
}
#endif
SF_FN uint32_t sf_subgroup_ballot(bool p) { return __ballot_sync(0xffffffffu, p); }
SF_FN uint32_t sf_subgroup_broadcast_u32(uint32_t x, uint32_t lane) {
    return __shfl_sync(0xffffffffu, x, (int)lane);
}
SF_FN float sf_subgroup_add_f32(float x) {
    for (int d = 16; d > 0; d >>= 1) x += __shfl_xor_sync(0xffffffffu, x, d);
    return x;
}
SF_FN double sf_subgroup_add_f64(double x) {
    for (int d = 16; d > 0; d >>= 1) x += __shfl_xor_sync(0xffffffffu, x, d);
    return x;
}
SF_FN float sf_subgroup_max_f32(float x) {
    for (int d = 16; d > 0; d >>= 1) {
        const float y = __shfl_xor_sync(0xffffffffu, x, d);
        x = y > x ? y : x;
    }
    return x;
}
SF_FN double sf_subgroup_max_f64(double x) {
    for (int d = 16; d > 0; d >>= 1) {
        const double y = __shfl_xor_sync(0xffffffffu, x, d);
        x = y > x ? y : x;
    }
    return x;
}
)";

} // namespace

simt::Dialect cudaDialect(unsigned workGroupSize) {
    if (workGroupSize < 32 || workGroupSize > 1024 || (workGroupSize & (workGroupSize - 1)))
        throw InternalError("CUDA block size " + std::to_string(workGroupSize) +
                            " is not a power of two in [32, 1024]");
    simt::Dialect d;
    d.name = "cuda";
    d.prelude = kPrelude;
    d.sourceName = kSourceName;
    d.workGroupSize = workGroupSize;
    d.tablesShareLaunches = true;
    d.subGroupSize = 32;
    d.nativeFloatAtomics = true;
    return d;
}

std::vector<std::string> cudaCompileOptions(bool fastMath, bool quick) {
    // No fused multiply-add: a*b+c stays two roundings, as on the cpu and opencl backends, so
    // that one model gives the same numbers wherever summation order cannot differ (unless the
    // user asked for fast maths: approximate division and square root, fused multiply-add).
    // Every stage function loads all fields of its table and declares the names every body may
    // use, and a launch tests every range's bounds (the first's lower bound is 0): by design, so
    // their warnings (177: declared but never referenced, 186: unsigned compared with zero, 550:
    // set but never used) would only bury a real message in the log.
    std::vector<std::string> options{fastMath ? "--use_fast_math" : "--fmad=false", "--std=c++17",
                                     "--diag-suppress=177,186,550"};
    // --minimal leaves out what the generated code never uses (textures and surfaces, the CUDA
    // runtime's device functions and types, launches from device code): NVRTC then declares less
    // before it reads the program, a fifth less compile time for a test model (NVRTC 13, sm_90).
    // An older NVRTC, without the option, compiles the same source without it.
    if (nvrtcInfo().available && std::pair(nvrtcInfo().major, nvrtcInfo().minor) >= kMinimalSince)
        options.push_back("--minimal");
    // A quick build (BackendPreferences::optimisation) trades optimisation in NVVM and ptxas
    // for compile time: a test model compiles in half the time or less (a 110 kB program:
    // 3.0 s -> 1.0 s for sm_90). It changes no arithmetic: the options above still hold.
    // NVRTC 13 has the option; an older one builds every program as a release build.
    if (quick && nvrtcInfo().available && nvrtcInfo().major >= kFastCompileSince)
        options.push_back("--Ofast-compile=mid");
    return options;
}

} // namespace spikeforge::cuda
