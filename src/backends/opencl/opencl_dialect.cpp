// OpenCL C 1.2 spelling of the SIMT kernels' needs. Only core 1.2 features and the fp64 and
// 64-bit atomics extensions: float atomics are compare-and-swap loops (NVIDIA's OpenCL has no
// float atomics, docs/backends.md), sub-group operations are not used.
#include "backends/opencl/opencl_dialect.hpp"

#include <algorithm>

namespace spikeforge::opencl {

namespace {

// Contraction off: a*b+c stays two roundings, as on the cpu backend, so that one model gives
// the same numbers on both wherever summation order cannot differ.
constexpr const char* kPrelude = R"(#pragma OPENCL FP_CONTRACT OFF
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#ifdef SF_DOUBLE
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif
typedef uchar uint8_t;
typedef char int8_t;
typedef ushort uint16_t;
typedef short int16_t;
typedef uint uint32_t;
typedef int int32_t;
typedef ulong uint64_t;
typedef long int64_t;
#define SF_KERNEL __kernel void
#define SF_FN static inline
#define SF_GLOBAL __global
#define SF_RESTRICT restrict
#define SF_LOCAL __local
#define SF_SHARED __local
#define SF_LOCAL_ID ((uint32_t)get_local_id(0))
#define SF_GROUP_ID ((uint64_t)get_group_id(0))
#define SF_DIM1_ID ((uint32_t)get_global_id(1))
#define SF_BARRIER() barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)
SF_FN uint32_t sf_ctz(uint32_t x) { return x ? 31u - (uint32_t)clz(x & (0u - x)) : 32u; }
SF_FN uint32_t sf_popcount(uint32_t x) { return (uint32_t)popcount(x); }
SF_FN uint32_t sf_float_bits(float x) { return as_uint(x); }
SF_FN uint32_t sf_atomic_add_u32(SF_GLOBAL uint32_t* p, uint32_t v) { return atomic_add(p, v); }
SF_FN uint32_t sf_atomic_or_u32(SF_GLOBAL uint32_t* p, uint32_t v) { return atomic_or(p, v); }
SF_FN void sf_atomic_store_u32(SF_GLOBAL uint32_t* p, uint32_t v) { (void)atomic_xchg(p, v); }
SF_FN uint32_t sf_local_atomic_add_u32(SF_LOCAL uint32_t* p, uint32_t v) { return atomic_add(p, v); }
SF_FN uint32_t sf_local_atomic_or_u32(SF_LOCAL uint32_t* p, uint32_t v) { return atomic_or(p, v); }
SF_FN void sf_atomic_add_f32(SF_GLOBAL float* p, float v) {
    SF_GLOBAL volatile uint32_t* u = (SF_GLOBAL volatile uint32_t*)p;
    uint32_t old = *u, seen;
    do {
        seen = old;
        old = atomic_cmpxchg(u, seen, as_uint(as_float(seen) + v));
    } while (old != seen);
}
#ifdef SF_DOUBLE
SF_FN void sf_atomic_add_f64(SF_GLOBAL double* p, double v) {
    SF_GLOBAL volatile uint64_t* u = (SF_GLOBAL volatile uint64_t*)p;
    uint64_t old = *u, seen;
    do {
        seen = old;
        old = atom_cmpxchg(u, seen, as_ulong(as_double(seen) + v));
    } while (old != seen);
}
#endif
)";

} // namespace

bool isPocl(const DeviceInfo& device) {
    return device.platformName.find("Portable Computing Language") != std::string::npos ||
           device.version.find("PoCL") != std::string::npos;
}

simt::Dialect openclDialect(const DeviceInfo& device, BackendPreferences::KernelForm form) {
    simt::Dialect d;
    d.name = "opencl";
    d.prelude = kPrelude;
    // 64 work-items: two NVIDIA warps, and on a CPU device (PoCL) enough to vectorise the
    // work-group loop without making the barrier regions long.
    d.workGroupSize = device.maxWorkGroupSize >= 64 || device.maxWorkGroupSize == 0 ? 64 : 32;
    d.tablesShareLaunches = !isPocl(device);
    // A CPU device runs a few work-groups per core at once: a work-group per element only pays
    // below that (measured on PoCL, 2 cores: 4096 elements x batch 512 ran at 0.03 of copy
    // bandwidth with a work-group per element, whose work-items read the batch N apart).
    if (device.type == "cpu")
        d.fewElements = std::max<size_t>(1, device.computeUnits) * d.workGroupSize * 4;
    switch (form) {
    case BackendPreferences::KernelForm::Auto:
        d.cpuDevice = device.type == "cpu";
        break;
    case BackendPreferences::KernelForm::Gpu:
        d.cpuDevice = false;
        break;
    case BackendPreferences::KernelForm::Cpu:
        d.cpuDevice = true;
        break;
    }
    return d;
}

std::string buildOptions(const DeviceInfo&, bool fastMath, bool quick) {
    // Fast maths without -cl-fast-relaxed-math, which would add -cl-finite-math-only: NaN and Inf
    // must keep their meaning (isnan in snippets, the NaN checks of training).
    std::string options = fastMath
                              ? "-cl-std=CL1.2 -cl-unsafe-math-optimizations -cl-no-signed-zeros"
                              : "-cl-std=CL1.2";
    // Quick builds (BackendPreferences::optimisation, what the test suite uses) skip the
    // optimiser: a test whose time is PoCL's builds takes a quarter to a half less, and the
    // arithmetic is the same (QuickBuildTest compares every bit). The kernels run slower, up to
    // 9x for a long simulation (the microcircuit test's GPU forms: 17 s -> 154 s), so the few
    // tests whose time is the simulation itself ask for Release (docs/backends.md). Fast maths
    // keeps the optimiser: its flags only license rewrites the optimiser makes, and a build
    // that asked for them must not silently compute the exact results.
    if (quick && !fastMath) options += " -cl-opt-disable";
    return options;
}

} // namespace spikeforge::opencl
