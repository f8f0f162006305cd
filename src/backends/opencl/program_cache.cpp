#include "backends/opencl/program_cache.hpp"

#include "backends/common/cache_dir.hpp"
#include "backends/common/sha256.hpp"
#include "spikeforge/errors.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

namespace fs = std::filesystem;

namespace spikeforge::opencl {

namespace {

constexpr char kMagic[] = "SFCLBIN1";

// The program of a cached binary, or nothing (with the reason in `why`) when the platform
// refuses it: another driver's format, or a binary it cannot finalise.
std::optional<Program> fromBinary(const OpenClDevice& device, const std::string& binary,
                                  const std::string& options, std::string& why) {
    const cl_device_id id = device.info().id;
    const auto* bytes = reinterpret_cast<const unsigned char*>(binary.data());
    const size_t length = binary.size();
    cl_int status = CL_SUCCESS;
    cl_int err = CL_SUCCESS;
    cl_program program =
        clCreateProgramWithBinary(device.context(), 1, &id, &length, &bytes, &status, &err);
    if (err != CL_SUCCESS || status != CL_SUCCESS) {
        if (program) clReleaseProgram(program);
        why = "clCreateProgramWithBinary: " + errorName(err != CL_SUCCESS ? err : status);
        return std::nullopt;
    }
    Program owned(program);
    err = clBuildProgram(program, 1, &id, options.c_str(), nullptr, nullptr);
    if (err != CL_SUCCESS) {
        why = "clBuildProgram of the binary: " + errorName(err);
        return std::nullopt;
    }
    return owned;
}

// The program of the entry at `path` if it is valid and the device takes it. A bad entry is
// removed when `locked` (the key's lock is held, so no one is publishing it right now).
std::optional<Program> loadEntry(const OpenClDevice& device, const fs::path& path,
                                 const std::string& key, const std::string& options, bool locked,
                                 std::string& why) {
    std::string binary;
    const EntryState state = readEntry(path, key, binary);
    if (state == EntryState::Ok)
        if (auto program = fromBinary(device, binary, options, why)) return program;
    if (state != EntryState::Ok) why = path.string() + " is " + describe(state);
    std::error_code ec;
    if (locked && state != EntryState::Missing) fs::remove(path, ec);
    return std::nullopt;
}

double secondsSince(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

std::string programKey(const DeviceInfo& device, const std::string& source,
                       const std::string& options) {
    backends::Sha256 h;
    h.field("spikeforge-opencl-cache-1"); // bump when this key's layout or the entry changes
    h.field(source);
    h.field(options);
    for (const std::string* part : {&device.platformName, &device.name, &device.vendor,
                                    &device.version, &device.openclCVersion, &device.driverVersion})
        h.field(*part);
    return h.hexDigest();
}

std::string entryBytes(const std::string& key, const std::string& binary) {
    return backends::cache::entryBytes(kMagic, key, binary);
}

EntryState readEntry(const fs::path& path, const std::string& key, std::string& binary) {
    return backends::cache::readEntry(path, kMagic, key, binary);
}

void writeEntry(const fs::path& dir, const std::string& key, const std::string& binary) {
    backends::cache::publish(dir, key, dir / (key + ".clbin"), entryBytes(key, binary));
}

std::string programBinary(const Program& program) {
    cl_uint devices = 0;
    check(clGetProgramInfo(program.handle(), CL_PROGRAM_NUM_DEVICES, sizeof devices, &devices,
                           nullptr),
          "clGetProgramInfo", "CL_PROGRAM_NUM_DEVICES");
    if (devices != 1)
        throw InternalError("OpenCL program cache: a program for " + std::to_string(devices) +
                            " devices (expected one)");
    size_t size = 0;
    check(clGetProgramInfo(program.handle(), CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr),
          "clGetProgramInfo", "CL_PROGRAM_BINARY_SIZES");
    std::string binary(size, '\0');
    if (size == 0) return binary;
    unsigned char* data = reinterpret_cast<unsigned char*>(binary.data());
    check(clGetProgramInfo(program.handle(), CL_PROGRAM_BINARIES, sizeof data, &data, nullptr),
          "clGetProgramInfo", "CL_PROGRAM_BINARIES");
    return binary;
}

Program buildCached(const OpenClDevice& device, const std::string& source,
                    const std::string& options, const BackendPreferences& prefs, BuildInfo& info) {
    const double timeout = prefs.compileTimeout; // [s] bounds the wait for another build
    if (!std::isfinite(timeout) || timeout < 0)
        throw ModelError("compileTimeout must be a number of seconds >= 0 (0 = no limit)");
    const fs::path dir = backends::cache::prepare(prefs);
    const std::string key = programKey(device.info(), source, options);
    const fs::path entry = dir / (key + ".clbin"), src = dir / (key + ".cl");
    info.sourcePath = src.string();
    info.cacheHit = true;
    info.compileSeconds = 0.0;
    std::string why;
    if (auto program = loadEntry(device, entry, key, options, false, why))
        return std::move(*program);
    // Build under the key's lock; whoever waited for it finds the entry written.
    backends::cache::KeyLock lock(dir, key, timeout);
    if (lock.held()) backends::cache::removeStaleTemps(dir, key, std::chrono::hours(1));
    if (auto program = loadEntry(device, entry, key, options, lock.held(), why))
        return std::move(*program);
    backends::cache::publish(dir, key, src, source);
    const auto t0 = std::chrono::steady_clock::now();
    std::optional<Program> program;
    try {
        program.emplace(device.buildProgram(source, options));
    } catch (const BackendError& e) {
        throw BackendError(std::string(e.what()) + "\n(source kept at " + src.string() + ")");
    }
    info.compileSeconds = secondsSince(t0);
    info.cacheHit = false;
    // A platform that gives no binary is simply not cached: the next run compiles again.
    if (const std::string binary = programBinary(*program); !binary.empty())
        writeEntry(dir, key, binary);
    return std::move(*program);
}

Program buildFromSource(const OpenClDevice& device, const std::string& source,
                        const std::string& options, const BackendPreferences& prefs,
                        BuildInfo& info) {
    const fs::path dir = backends::cache::prepare(prefs);
    const std::string key = programKey(device.info(), source, options);
    const fs::path src = dir / (key + ".cl");
    backends::cache::publish(dir, key, src, source); // kept for inspection, as buildCached does
    info.sourcePath = src.string();
    info.cacheHit = false;
    const auto t0 = std::chrono::steady_clock::now();
    try {
        Program program = device.buildProgram(source, options);
        info.compileSeconds = secondsSince(t0);
        return program;
    } catch (const BackendError& e) {
        throw BackendError(std::string(e.what()) + "\n(source kept at " + src.string() + ")");
    }
}

} // namespace spikeforge::opencl
