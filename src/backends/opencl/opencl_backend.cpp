#include "backends/opencl/opencl_backend.hpp"

#include "backends/common/optimisation.hpp"
#include "backends/opencl/opencl_device.hpp"
#include "backends/opencl/opencl_dialect.hpp"
#include "backends/opencl/program_cache.hpp"
#include "spikeforge/errors.hpp"

#include <chrono>

namespace spikeforge::opencl {

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// What the kernels need of a device beyond OpenCL 1.2, checked before anything is built so the
// error names the device and the feature rather than a line of generated code.
void checkFeatures(const DeviceInfo& d, const codegen::Plan& plan) {
    const std::string where = "OpenCL device " + d.selector() + " " + d.name;
    if (!d.fp64)
        throw BackendError(where +
                           " has no double precision (cl_khr_fp64), which the step arguments "
                           "(the time in ms) need");
    if (plan.precision == Precision::Double && !d.int64Atomics)
        throw BackendError(where +
                           " has no 64-bit atomics (cl_khr_int64_base_atomics), which double "
                           "precision models need for their atomic additions");
    // The host writes the merged-group tables in its own layout and byte order
    // (simt::Program::tableStore), with 8-byte device addresses.
    if (d.addressBits != 64)
        throw BackendError(where + " has " + std::to_string(d.addressBits) +
                           "-bit device addresses; the merged-group tables need 64-bit ones");
    if (!d.littleEndian)
        throw BackendError(where + " is big-endian; the merged-group tables are written in the "
                                   "host's little-endian byte order");
    if (d.maxWorkGroupSize != 0 && d.maxWorkGroupSize < 32)
        throw BackendError(where + " runs at most " + std::to_string(d.maxWorkGroupSize) +
                           " work-items per work-group; the kernels need 32");
}

} // namespace

OpenClBackend::OpenClBackend(BackendPreferences prefs) : m_prefs(std::move(prefs)) {
    // Settings of the cpu backend are refused rather than ignored: a user who sets them expects
    // them to act.
    if (m_prefs.threads != 0)
        throw ModelError("BackendPreferences::threads (" + std::to_string(m_prefs.threads) +
                         ") sets the cpu backend's OpenMP threads; the opencl backend has none "
                         "(leave it 0)");
    if (!m_prefs.compiler.empty())
        throw ModelError("BackendPreferences::compiler ('" + m_prefs.compiler +
                         "') names the cpu backend's C++ compiler; the opencl backend builds with "
                         "the OpenCL driver");
}

std::unique_ptr<backends::Device> OpenClBackend::build(const codegen::Plan& plan, BuildInfo& info) {
    auto device = OpenClDevice::open(m_prefs.device);
    checkFeatures(device->info(), plan);
    const auto start = std::chrono::steady_clock::now();
    const simt::Program program =
        simt::generate(plan, openclDialect(device->info(), m_prefs.openclKernels));
    info.generateSeconds = secondsSince(start);
    const std::string options =
        buildOptions(device->info(), m_prefs.fastMath, backends::quickBuild(m_prefs));
    Program built = isPocl(device->info())
                        ? buildFromSource(*device, program.source, options, m_prefs, info)
                        : buildCached(*device, program.source, options, m_prefs, info);
    device->load(plan, program, std::move(built));
    return device;
}

} // namespace spikeforge::opencl
