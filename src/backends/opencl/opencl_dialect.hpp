#pragma once
// OpenCL C as the SIMT generator's dialect (simt.hpp lists what a dialect defines).
#include "backends/opencl/platforms.hpp"
#include "backends/simt/simt.hpp"
#include "spikeforge/simulation.hpp"

#include <string>

namespace spikeforge::opencl {

// The dialect for `device`; `form` chooses the kernel form (BackendPreferences::openclKernels).
simt::Dialect
openclDialect(const DeviceInfo& device,
              BackendPreferences::KernelForm form = BackendPreferences::KernelForm::Auto);
// PoCL (OpenCL on the CPU): its launches of stages with barriers run one merged-group table each
// (simt::Dialect::tablesShareLaunches).
bool isPocl(const DeviceInfo& device);
// Options every SIMT program is built with; `quick` for quick builds (backends::quickBuild).
std::string buildOptions(const DeviceInfo& device, bool fastMath = false, bool quick = false);

} // namespace spikeforge::opencl
