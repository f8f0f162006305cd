#include "backends/backend.hpp"

#include "spikeforge/errors.hpp"

#if SPIKEFORGE_BACKEND_CPU
#include "backends/cpu/cpu_backend.hpp"
#endif
#if SPIKEFORGE_BACKEND_OPENCL
#include "backends/opencl/opencl_backend.hpp"
#endif

namespace spikeforge {

namespace backends {

std::unique_ptr<Backend> makeBackend(const BackendPreferences& prefs) {
    if (prefs.backend == "cpu") {
        if (!prefs.device.empty())
            throw ModelError("BackendPreferences::device ('" + prefs.device +
                             "') selects an OpenCL or CUDA device; the cpu backend has none");
#if SPIKEFORGE_BACKEND_CPU
        return std::make_unique<cpu::CpuBackend>(prefs);
#else
        throw ModelError("backend 'cpu' is not in this build (configured with "
                         "SPIKEFORGE_BACKEND_CPU=OFF; see `spikeforge info`)");
#endif
    }
    if (prefs.backend == "opencl") {
#if SPIKEFORGE_BACKEND_OPENCL
        return std::make_unique<opencl::OpenClBackend>(prefs);
#else
        throw ModelError("backend 'opencl' is not in this build (configured with "
                         "SPIKEFORGE_BACKEND_OPENCL=OFF; see `spikeforge info`)");
#endif
    }
    if (prefs.backend == "cuda")
        throw ModelError("backend 'cuda' is not available in this build yet (see `spikeforge "
                         "info`)");
    throw ModelError("unknown backend '" + prefs.backend + "' (known: cpu, opencl, cuda)");
}

} // namespace backends

namespace {

// Why the opencl backend cannot run here. No device discovery: loading an OpenCL driver takes
// ~0.2 s (PoCL loads LLVM), and every process that lists backends (each CLI run, each test)
// would pay it while no kernel could use the device anyway; `spikeforge info` lists them.
std::string openclStatus() {
#if SPIKEFORGE_BACKEND_OPENCL
    return "not implemented yet: the SIMT kernels are planned (`spikeforge info` lists the "
           "OpenCL devices found)";
#else
    return "not in this build (SPIKEFORGE_BACKEND_OPENCL=OFF)";
#endif
}

} // namespace

std::vector<BackendStatus> availableBackends() {
    std::vector<BackendStatus> out;
#if SPIKEFORGE_BACKEND_CPU
    const std::string cpuReason = cpu::compilerStatus({});
    out.push_back({"cpu", cpuReason.empty(), cpuReason});
#else
    out.push_back({"cpu", false, "not in this build (SPIKEFORGE_BACKEND_CPU=OFF)"});
#endif
    out.push_back({"opencl", false, openclStatus()});
    out.push_back({"cuda", false, "not implemented yet: the SIMT backends are planned"});
    return out;
}

} // namespace spikeforge
