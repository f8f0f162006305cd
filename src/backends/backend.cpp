#include "backends/backend.hpp"

#if SPIKEFORGE_BACKEND_CPU
#include "backends/cpu/cpu_backend.hpp"
#endif

namespace spikeforge {

namespace backends {

std::unique_ptr<Backend> makeBackend(const BackendPreferences& prefs) {
    if (prefs.backend == "cpu") {
#if SPIKEFORGE_BACKEND_CPU
        return std::make_unique<cpu::CpuBackend>(prefs);
#else
        throw ModelError("backend 'cpu' is not in this build (configured with "
                         "SPIKEFORGE_BACKEND_CPU=OFF; see `spikeforge info`)");
#endif
    }
    if (prefs.backend == "opencl" || prefs.backend == "cuda")
        throw ModelError("backend '" + prefs.backend +
                         "' is not available in this build yet (see `spikeforge info`)");
    throw ModelError("unknown backend '" + prefs.backend + "' (known: cpu, opencl, cuda)");
}

} // namespace backends

std::vector<BackendStatus> availableBackends() {
    std::vector<BackendStatus> out;
#if SPIKEFORGE_BACKEND_CPU
    const std::string cpuReason = cpu::compilerStatus({});
    out.push_back({"cpu", cpuReason.empty(), cpuReason});
#else
    out.push_back({"cpu", false, "not in this build (SPIKEFORGE_BACKEND_CPU=OFF)"});
#endif
    out.push_back({"opencl", false, "not implemented yet: the SIMT backends are planned"});
    out.push_back({"cuda", false, "not implemented yet: the SIMT backends are planned"});
    return out;
}

} // namespace spikeforge
