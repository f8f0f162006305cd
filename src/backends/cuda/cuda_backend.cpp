#include "backends/cuda/cuda_backend.hpp"

#include "backends/common/cache_dir.hpp"
#include "backends/common/cache_entry.hpp"
#include "backends/common/optimisation.hpp"
#include "backends/common/sha256.hpp"
#include "backends/cuda/cuda_device.hpp"
#include "backends/cuda/cuda_dialect.hpp"
#include "backends/cuda/nvrtc.hpp"
#include "spikeforge/errors.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace spikeforge::cuda {

namespace {

constexpr char kMagic[] = "SFCUBIN1";

double secondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string readFile(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return {};
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// A cache that cannot be written only costs a recompile.
void publish(const fs::path& dir, const std::string& key, const fs::path& path,
             const std::string& bytes) {
    try {
        backends::cache::publish(dir, key, path, bytes);
    } catch (const BackendError&) {
    }
}

// The cubin of `source` for `device`, from the cache or compiled by NVRTC (filling the compile
// part of `info`), under the key's lock so that concurrent processes compile it once.
std::string cachedCubin(const DeviceInfo& device, const std::string& source,
                        const BackendPreferences& prefs, BuildInfo& info) {
    const NvrtcInfo& nvrtc = nvrtcInfo();
    if (!nvrtc.available) throw BackendError("the cuda backend cannot run: " + nvrtc.reason);
    const std::vector<std::string> options =
        cudaCompileOptions(prefs.fastMath, backends::quickBuild(prefs));
    const fs::path dir = backends::cache::prepare(prefs);
    const std::string key =
        cubinKey(source, options, device.major, device.minor, nvrtc.major, nvrtc.minor);
    const fs::path entry = dir / (key + ".cubin"), src = dir / (key + ".cu");
    info.sourcePath = src.string();
    info.cacheHit = true;
    info.compileSeconds = 0.0;
    if (std::string cubin = cubinFromEntry(readFile(entry), key); !cubin.empty()) return cubin;
    backends::cache::KeyLock lock(dir, key, prefs.compileTimeout);
    if (lock.held()) backends::cache::removeStaleTemps(dir, key, std::chrono::hours(1));
    if (std::string cubin = cubinFromEntry(readFile(entry), key); !cubin.empty()) return cubin;
    publish(dir, key, src, source); // kept for inspection, and for a failed compile
    const auto start = std::chrono::steady_clock::now();
    CompiledCuda compiled;
    try {
        compiled = compileCuda(source, device.major, device.minor, options, src.string());
    } catch (const BackendError& e) {
        throw BackendError(std::string(e.what()) + "\n(source kept at " + src.string() + ")");
    }
    info.compileSeconds = secondsSince(start);
    info.cacheHit = false;
    std::string cubin(compiled.cubin.begin(), compiled.cubin.end());
    publish(dir, key, entry, cubinEntry(key, cubin));
    return cubin;
}

} // namespace

CudaBackend::CudaBackend(BackendPreferences prefs) : m_prefs(std::move(prefs)) {
    // Settings of the cpu backend are refused rather than ignored: a user who sets them expects
    // them to act.
    if (m_prefs.threads != 0)
        throw ModelError("BackendPreferences::threads (" + std::to_string(m_prefs.threads) +
                         ") sets the cpu backend's OpenMP threads; the cuda backend has none "
                         "(leave it 0)");
    if (!m_prefs.compiler.empty())
        throw ModelError("BackendPreferences::compiler ('" + m_prefs.compiler +
                         "') names the cpu backend's C++ compiler; the cuda backend compiles "
                         "with NVRTC");
    if (!std::isfinite(m_prefs.compileTimeout) || m_prefs.compileTimeout < 0)
        throw ModelError("compileTimeout must be a number of seconds >= 0 (0 = no limit)");
    // Asked once per process (the driver is loaded once): fail here, naming what is missing,
    // rather than after the model was generated.
    if (const std::string why = cudaStatus(); !why.empty())
        throw BackendError("the cuda backend cannot run here: " + why);
}

std::unique_ptr<backends::Device> CudaBackend::build(const codegen::Plan& plan, BuildInfo& info) {
    const DriverApi& api = driver();
    int count = 0;
    check(api, api.cuDeviceGetCount(&count), "cuDeviceGetCount");
    const DeviceInfo device = queryDevice(api, selectDevice(m_prefs.device, count));
    const auto start = std::chrono::steady_clock::now();
    const simt::Dialect dialect = cudaDialect();
    if (dialect.workGroupSize > unsigned(device.maxThreadsPerBlock))
        throw BackendError("CUDA device " + std::to_string(device.ordinal) + " " + device.name +
                           " runs at most " + std::to_string(device.maxThreadsPerBlock) +
                           " threads per block; the kernels need " +
                           std::to_string(dialect.workGroupSize));
    const simt::Program program = simt::generate(plan, dialect);
    info.generateSeconds = secondsSince(start);
    const std::string cubin = cachedCubin(device, program.source, m_prefs, info);
    auto dev = std::make_unique<CudaDevice>(api, device, m_prefs.cudaGraphSteps);
    dev->load(plan, program, cubin);
    return dev;
}

std::string cudaStatus() {
    if (std::string why = driverStatus(); !why.empty()) return why;
    const NvrtcInfo& nvrtc = nvrtcInfo();
    if (!nvrtc.available) return "NVRTC not found: " + nvrtc.reason;
    return "";
}

std::string cubinKey(const std::string& source, const std::vector<std::string>& options, int major,
                     int minor, int nvrtcMajor, int nvrtcMinor) {
    backends::Sha256 h;
    h.field("spikeforge-cuda-cache-2"); // bump when this key's layout or the entry changes
    h.field(source);
    for (const std::string& o : options)
        h.field(o);
    // Both numbers, separated: "sm_" + major + minor would read (1, 10) as (11, 0).
    h.field("compute capability " + std::to_string(major) + "." + std::to_string(minor));
    h.field("nvrtc " + std::to_string(nvrtcMajor) + "." + std::to_string(nvrtcMinor));
    return h.hexDigest();
}

std::string cubinEntry(const std::string& key, const std::string& cubin) {
    return backends::cache::entryBytes(kMagic, key, cubin);
}

std::string cubinFromEntry(const std::string& bytes, const std::string& key) {
    std::string cubin;
    return backends::cache::parseEntry(bytes, kMagic, key, cubin) == backends::cache::EntryState::Ok
               ? cubin
               : std::string();
}

} // namespace spikeforge::cuda
