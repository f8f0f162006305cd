#include "backends/backend.hpp"

#include "backends/cpu/cpu_backend.hpp"

namespace spikeforge {

namespace backends {

std::unique_ptr<Backend> makeBackend(const BackendPreferences& prefs) {
    if (prefs.backend == "cpu") return std::make_unique<cpu::CpuBackend>(prefs);
    if (prefs.backend == "opencl" || prefs.backend == "cuda")
        throw ModelError("backend '" + prefs.backend +
                         "' is not available in this build yet (see `spikeforge info`)");
    throw ModelError("unknown backend '" + prefs.backend + "' (known: cpu, opencl, cuda)");
}

} // namespace backends

std::vector<BackendStatus> availableBackends() {
    std::vector<BackendStatus> out;
    const std::string cpuReason = cpu::compilerStatus({});
    out.push_back({"cpu", cpuReason.empty(), cpuReason});
    out.push_back({"opencl", false, "not implemented yet: the SIMT backends are planned"});
    out.push_back({"cuda", false, "not implemented yet: the SIMT backends are planned"});
    return out;
}

} // namespace spikeforge
