#pragma once
// CUDA C++ (compiled by NVRTC) as the SIMT generator's dialect (simt.hpp lists what a dialect
// defines). The prelude needs no header, so a program compiles with no include path.
//
// Launch mapping of a simt::Launch: grid (items / localSize, dim1, 1), block (localSize, 1, 1);
// SF_GROUP_ID is blockIdx.x, SF_DIM1_ID blockIdx.y (so a batch is at most 65535, CUDA's limit
// on gridDim.y). Kernels are `extern "C"`, so a module's
// function has the simt::Launch::function name unmangled.
#include "backends/simt/simt.hpp"

#include <string>
#include <vector>

namespace spikeforge::cuda {

// `workGroupSize`: threads per block, a power of two from 32 to 1024 (the default, 128, is four
// warps).
simt::Dialect cudaDialect(unsigned workGroupSize = 128);

// NVRTC options every SIMT program is compiled with (besides the target architecture). `quick`:
// a quick build (backends::quickBuild), which compiles faster where NVRTC can.
std::vector<std::string> cudaCompileOptions(bool fastMath = false, bool quick = false);

} // namespace spikeforge::cuda
