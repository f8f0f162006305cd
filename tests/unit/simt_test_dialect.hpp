#pragma once
// An OpenCL C dialect for the SIMT generator's tests: every macro of the Dialect contract
// (src/backends/simt/simt.hpp), float atomics by compare-and-swap. Tests that only generate and
// build kernels use it so they do not depend on the OpenCL backend's own choices.
#include "backends/simt/simt.hpp"

namespace sftest {

inline spikeforge::simt::Dialect openclTestDialect(unsigned workGroupSize = 64) {
    spikeforge::simt::Dialect d;
    d.name = "opencl";
    d.workGroupSize = workGroupSize;
    d.prelude = R"(#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
typedef uchar uint8_t; typedef ushort uint16_t; typedef uint uint32_t; typedef ulong uint64_t;
typedef char int8_t; typedef short int16_t; typedef int int32_t; typedef long int64_t;
#define SF_KERNEL __kernel void
#define SF_FN static inline
#define SF_GLOBAL __global
#define SF_LOCAL __local
#define SF_SHARED __local
#define SF_LOCAL_ID ((uint32_t)get_local_id(0))
#define SF_GLOBAL_ID ((uint64_t)get_global_id(0))
#define SF_DIM1_ID ((uint32_t)get_global_id(1))
#define SF_BARRIER() barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)
#define sf_popcount(x) popcount((uint32_t)(x))
#define sf_ctz(x) popcount(((uint32_t)(x) & (0u - (uint32_t)(x))) - 1u)
#define sf_atomic_add_u32(p, v) atomic_add((p), (v))
#define sf_atomic_or_u32(p, v) atomic_or((p), (v))
#define sf_atomic_store_u32(p, v) ((void)atomic_xchg((p), (v)))
#define sf_local_atomic_add_u32(p, v) atomic_add((p), (v))
#define sf_local_atomic_or_u32(p, v) atomic_or((p), (v))
SF_FN float sf_atomic_add_f32(__global float* p, float v) {
    __global volatile uint* q = (__global volatile uint*)p;
    uint old = *q, seen;
    do {
        seen = old;
        old = atomic_cmpxchg(q, seen, as_uint(as_float(seen) + v));
    } while (old != seen);
    return as_float(seen);
}
#ifdef SF_DOUBLE
SF_FN double sf_atomic_add_f64(__global double* p, double v) {
    __global volatile ulong* q = (__global volatile ulong*)p;
    ulong old = *q, seen;
    do {
        seen = old;
        old = atom_cmpxchg(q, seen, as_ulong(as_double(seen) + v));
    } while (old != seen);
    return as_double(seen);
}
#endif
)";
    return d;
}

} // namespace sftest
