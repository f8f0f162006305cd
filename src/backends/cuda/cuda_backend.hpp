#pragma once
// The cuda backend: the SIMT kernels printed in CUDA C++, compiled at run time by NVRTC for the
// compute capability of the GPU BackendPreferences::device selects (cubins cached by content
// hash), loaded and launched through the driver API (cuda_driver.hpp).
#include "backends/backend.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace spikeforge::cuda {

class CudaBackend : public backends::Backend {
public:
    // ModelError for settings of other backends (threads, compiler); BackendError naming the
    // reason when cuda cannot run here (cudaStatus: no driver, no device, no NVRTC).
    explicit CudaBackend(BackendPreferences prefs);
    std::string name() const override { return "cuda"; }
    std::unique_ptr<backends::Device> build(const codegen::Plan& plan, BuildInfo& info) override;

private:
    BackendPreferences m_prefs;
};

// Why the cuda backend cannot run here ("" when it can): no driver, no device, no NVRTC. Never
// throws; for availableBackends and `spikeforge info`.
std::string cudaStatus();

// ---- cubin cache (the pattern of the opencl backend's program cache, docs/gpu.md) ----

// SHA-256 (hex) over everything that decides the cubin: source, NVRTC options, target
// architecture and NVRTC version.
std::string cubinKey(const std::string& source, const std::vector<std::string>& options, int major,
                     int minor, int nvrtcMajor, int nvrtcMinor);
// The bytes of cache entry `<key>.cubin`: the magic "SFCUBIN1", the key (64 hex digits), the
// cubin's size (16 hex digits), its SHA-256 (64 hex digits), a newline, then the cubin.
std::string cubinEntry(const std::string& key, const std::string& cubin);
// The cubin of entry bytes `bytes` when they are a whole, valid entry of `key`; else "".
std::string cubinFromEntry(const std::string& bytes, const std::string& key);

} // namespace spikeforge::cuda
