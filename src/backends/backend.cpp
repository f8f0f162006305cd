#include "backends/backend.hpp"

#include "spikeforge/errors.hpp"

#if SPIKEFORGE_BACKEND_CPU
#include "backends/cpu/cpu_backend.hpp"
#endif
#if SPIKEFORGE_BACKEND_OPENCL
#include "backends/opencl/opencl_backend.hpp"
#include "backends/opencl/platforms.hpp"
#endif
#if SPIKEFORGE_BACKEND_CUDA
#include "backends/cuda/cuda_backend.hpp"
#endif

namespace spikeforge {

namespace backends {

namespace {

// BackendPreferences::cudaGraphSteps, checked before any backend is opened.
void checkCudaGraphSteps(const BackendPreferences& prefs) {
    if (prefs.cudaGraphSteps == 0) return;
    if (prefs.backend != "cuda")
        throw ModelError("BackendPreferences::cudaGraphSteps (" +
                         std::to_string(prefs.cudaGraphSteps) +
                         ") applies to the cuda backend only; backend '" + prefs.backend +
                         "' has no CUDA graphs (leave it 0)");
    if (prefs.cudaGraphSteps > kMaxCudaGraphSteps)
        throw ModelError("BackendPreferences::cudaGraphSteps (" +
                         std::to_string(prefs.cudaGraphSteps) + ") must be at most " +
                         std::to_string(kMaxCudaGraphSteps) + " steps (0 = no CUDA graphs)");
}

// BackendPreferences::openclKernels, checked before any backend is opened.
void checkKernelForm(const BackendPreferences& prefs) {
    if (prefs.openclKernels != BackendPreferences::KernelForm::Auto && prefs.backend != "opencl")
        throw ModelError("BackendPreferences::openclKernels chooses the opencl backend's kernel "
                         "form; backend '" +
                         prefs.backend + "' has none (leave it Auto)");
}

// BackendPreferences::cpuStepOrder, likewise.
void checkStepOrder(const BackendPreferences& prefs) {
    if (prefs.cpuStepOrder != BackendPreferences::StepOrder::Auto && prefs.backend != "cpu")
        throw ModelError("BackendPreferences::cpuStepOrder orders the cpu backend's steps; "
                         "backend '" +
                         prefs.backend + "' has no such choice (leave it Auto)");
}

} // namespace

std::unique_ptr<Backend> makeBackend(const BackendPreferences& prefs) {
    checkCudaGraphSteps(prefs);
    checkKernelForm(prefs);
    checkStepOrder(prefs);
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
    if (prefs.backend == "cuda") {
#if SPIKEFORGE_BACKEND_CUDA
        return std::make_unique<cuda::CudaBackend>(prefs);
#else
        throw ModelError("backend 'cuda' is not in this build (configured with "
                         "SPIKEFORGE_BACKEND_CUDA=OFF, the default without a CUDA toolkit; see "
                         "`spikeforge info`)");
#endif
    }
    throw ModelError("unknown backend '" + prefs.backend + "' (known: cpu, opencl, cuda)");
}

} // namespace backends

namespace {

// Why the opencl backend cannot run here ("" when it can): not built, or no OpenCL device.
// Discovery loads every OpenCL driver (~0.2 s for PoCL, which loads LLVM), so it happens only
// here, when someone asks which backends are usable, never at startup; a process asks the
// drivers once and keeps the answer (platforms do not come and go while it runs).
std::string openclStatus() {
#if SPIKEFORGE_BACKEND_OPENCL
    static const std::string status = [] {
        try {
            for (const opencl::PlatformInfo& p : opencl::discoverPlatforms())
                for (const opencl::DeviceInfo& d : p.devices)
                    if (d.available) return std::string();
        } catch (const BackendError& e) {
            return std::string("OpenCL device discovery failed: ") + e.what();
        }
        return std::string("no OpenCL platform/device found (install pocl-opencl-icd to run "
                           "OpenCL on the CPU: tools/install-deps; `spikeforge info` lists what "
                           "was found)");
    }();
    return status;
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
    const std::string openclReason = openclStatus();
    out.push_back({"opencl", openclReason.empty(), openclReason});
#if SPIKEFORGE_BACKEND_CUDA
    const std::string cudaReason = cuda::cudaStatus();
    out.push_back({"cuda", cudaReason.empty(), cudaReason});
#else
    out.push_back({"cuda", false, "not in this build (SPIKEFORGE_BACKEND_CUDA=OFF)"});
#endif
    return out;
}

} // namespace spikeforge
