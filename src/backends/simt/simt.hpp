#pragma once
// The SIMT generator: every GPU algorithm of spikeforge written once, for all GPU backends. It
// prints a kernel plan as work-item kernels in a neutral C subset; a backend supplies a Dialect
// (how its language spells kernels, address spaces, ids, barriers and atomics) and runs the
// Program: the source, the launches of each plan kernel and the table store.
//
// Launch model. Every launch is two-dimensional: dimension 0 concatenates one range of work-items
// per group of every merged group it runs (each padded to whole work-groups, so a work-group
// never spans two groups and barriers are uniform), dimension 1 is the batch (or 1). Work-groups
// are `localSize` x 1. Every kernel function takes the step arguments by value, then the
// merged-group tables it runs (Launch::tables), each a pointer to an array of structs.
#include "codegen/plan.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace spikeforge::simt {

// What a backend's language provides to the kernels. `prelude` is printed first and must define
// (OpenCL C and CUDA spell every one differently):
//   types    uint8_t … uint64_t, int8_t … int64_t, size_t, bool (OpenCL C lacks the fixed-width
//            names; CUDA under NVRTC lacks <stdint.h>)
//   SF_KERNEL        declares a kernel function returning void ("__kernel void")
//   SF_FN            qualifies a device function ("static inline", "__device__ inline")
//   SF_GLOBAL        address space of device arrays ("__global"; empty in CUDA)
//   SF_RESTRICT      no-alias qualifier of a pointer parameter ("restrict", "__restrict__"):
//                    the merged-group tables, which no kernel writes, so a compiler may load
//                    their fields once per work-group however the kernel stores to arrays
//   SF_LOCAL         address space of work-group memory in pointer types ("__local"; empty in
//                    CUDA)
//   SF_SHARED        storage of a work-group array declared in a kernel ("__local",
//                    "__shared__")
//   SF_LOCAL_ID      work-item index within its work-group, dimension 0 (uint32_t)
//   SF_GROUP_ID      work-group index in the launch, dimension 0 (uint64_t)
//   SF_DIM1_ID       work-item index in dimension 1 (uint32_t; the batch element)
//   SF_BARRIER()     work-group barrier that also orders local and global memory
//   maths    log, exp, sqrt, pow, floor, fabs, log1p, sin, cos, … for float and double, INFINITY
//   sf_ctz(x), sf_popcount(x)                 on uint32_t
//   sf_atomic_add_u32(p, v), sf_atomic_or_u32(p, v)   SF_GLOBAL uint32_t*; return the old value
//   sf_atomic_store_u32(p, v)                 SF_GLOBAL uint32_t*
//   sf_local_atomic_add_u32(p, v), sf_local_atomic_or_u32(p, v)   SF_LOCAL uint32_t*; old value
//   sf_atomic_add_f32(p, v)                   SF_GLOBAL float* (emulated by compare-and-swap
//                                             where the platform has no float atomics)
//   sf_atomic_add_f64(p, v)                   SF_GLOBAL double*, only where SF_DOUBLE is defined
//                                             before the prelude
struct Dialect {
    std::string name;    // "opencl", "cuda": for messages
    std::string prelude; // the definitions above
    // The file name the source's #line directives give it (compiler messages name it).
    std::string sourceName = "spikeforge_generated.cl";
    // Work-items per work-group: a power of two, at least 32 (spike words are built in local
    // memory, one bit per work-item).
    unsigned workGroupSize = 64;
    // Whether one launch may run stages that have barriers for several merged-group tables
    // (each work-group calls its table's stage function under a condition that is uniform in
    // the work-group, as the OpenCL and CUDA barrier rules allow). False: such a stage gets one
    // launch per table, every work-item calling unconditionally; PoCL needs this (it ran
    // barriers in such conditional calls wrongly and crashed compiling them). Stages without
    // barriers share launches on every device.
    bool tablesShareLaunches = true;
    // Elements below which a batch reduction uses a work-group per element: fewer work-items
    // than this leave the device idle when each has one element (a GPU wants thousands; a CPU
    // device a few per core).
    size_t fewElements = 8192;
    // Whether the device is a CPU (an OpenCL CPU device such as PoCL): a work-group runs as a loop
    // on one core, a launch costs microseconds of scheduling, and a float compare-and-swap about
    // ten plain additions (measured on PoCL with COBA). Then the neuron update runs a 32-neuron
    // word per work-item and emits its spikes in the same launch, and the span rule's automatic
    // choice for a presynaptic update is serial (plain additions); a GPU wants the parallel forms.
    bool cpuDevice = false;
    // Optional capabilities; the defaults are "absent", and the printers then print exactly what
    // they print for OpenCL.
    // Sub-group (warp) size when the prelude also defines the sub-group reductions, 0 when not:
    //   sf_subgroup_add_f32/f64(x), sf_subgroup_max_f32/f64(x)   the sum/max of x over the
    //   sub-group, returned to every work-item of it; every work-item of the sub-group must call
    // and, where subGroupSize is 32, also
    //   sf_subgroup_ballot(p)            uint32_t: bit i set when work-item i of the sub-group
    //                                    passed p true
    //   sf_subgroup_broadcast_u32(x, i)  x of work-item i of the sub-group
    // Sub-groups are consecutive SF_LOCAL_IDs, workGroupSize is a multiple of subGroupSize and
    // at most its square. The reduction trees then reduce inside each sub-group first.
    unsigned subGroupSize = 0;
    // Whether sf_atomic_add_f32/f64 are native atomics (true) or compare-and-swap loops: for
    // algorithm choices and messages; the generated calls are the same.
    bool nativeFloatAtomics = false;
};

// One launch of a kernel function of the Program.
struct Launch {
    std::string function;       // kernel function name in the source
    std::vector<size_t> tables; // tables passed after the step arguments (Plan::mergedGroups)
    size_t items = 0;           // work-items in dimension 0, a multiple of localSize; 0: skip
    unsigned dim1 = 1;          // work-items in dimension 1
    unsigned localSize = 0;     // work-items per work-group in dimension 0
};

struct Program {
    std::string source;
    // Per Plan::kernels entry: the launches that make it, run in this order on one queue.
    std::vector<std::vector<Launch>> kernels;
    // The merged-group structs are laid out as codegen::layoutOf says (the source refuses to
    // build where the device's layout differs), so a table's bytes are known on the host. A
    // device whose buffers have no address the host can know (OpenCL) writes its tables with
    // this kernel, run as one work-item:
    //   function(SF_GLOBAL uint8_t* table, <kTableStoresPerLaunch times:
    //            uint32_t slot, uint64_t word, SF_GLOBAL uint8_t* address>)
    // A slot is the byte offset of an 8-byte word of the table buffer; with kStoreAddress set
    // the word becomes `address` (a buffer's device address), else `word` (8 bytes of numbers,
    // in the host's byte order); kNoStore stores nothing. One kernel serves every table and
    // every rebind: a kernel costs a compile on its first launch (about 0.2 s on PoCL).
    // It is the same for every model, so it is a program of its own, `tableStoreSource` (the
    // dialect's prelude and this kernel), which a device builds once and shares among all the
    // models it loads: on PoCL, a sixth of the suite's kernel compiles were this kernel, once
    // per model.
    std::string tableStore;
    std::string tableStoreSource;
    // On a CPU device (Dialect::cpuDevice), when every launch of the step kernels is free of
    // barriers and a step is small (kStepsKernelMaxItems), a kernel function that runs a whole
    // stretch of steps in one work-group, the step kernels' launches in order with a barrier
    // between them:
    //   function(SFStepArgs first, uint64_t steps, double dt, <tables, as in `tables`>)
    // launched as one work-group of workGroupSize work-items (Device::runSteps). A CPU device
    // runs a work-group on one core, so this trades its other cores for the launches, which
    // cost PoCL microseconds each. Empty function: not generated.
    struct Steps {
        std::string function;
        std::vector<size_t> kernels; // the step kernels it runs (codegen::stepKernels)
        std::vector<size_t> tables;  // its table arguments (Plan::mergedGroups indices)
        unsigned localSize = 0;      // its one work-group's size
    } steps;
    // On a CPU device, under the same conditions for the initialisation kernels
    // (codegen::initKernels), a function of the same form that runs them all in order, launched
    // as one step (Device::runSteps with steps = 1; the runtime initialises that way). PoCL
    // compiles each kernel at its first launch (about 0.15 s whatever its size) and a model runs
    // its initialisation once, so each launch folded in saves a compile. Few test models
    // qualify (most have one initialisation launch; multi-stage sparse builds use work-group
    // memory). Empty function: not generated.
    Steps init;
};

// The most work-items (x batch) of all step launches together for which a CPU device runs
// stretches of steps as one work-group (Program::steps): beyond that the step has enough work
// for the device's other cores (at 32 neurons per work-item of a neuron update, about 131000
// neurons).
inline constexpr size_t kStepsKernelMaxItems = 4096;

Program generate(const codegen::Plan& plan, const Dialect& dialect);
// Program::tableStoreSource for `dialect`.
std::string tableStoreSource(const Dialect& dialect);

// Program::tableStore's stores per launch and its slot flags.
inline constexpr unsigned kTableStoresPerLaunch = 8;
inline constexpr uint32_t kStoreAddress = 0x80000000u;
inline constexpr uint32_t kNoStore = 0xffffffffu;

} // namespace spikeforge::simt
