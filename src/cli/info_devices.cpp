#include "info_devices.hpp"

#include "json.hpp"

#if SPIKEFORGE_BACKEND_OPENCL
#include "backends/opencl/platforms.hpp"
#endif

#include "spikeforge/errors.hpp"

#include <vector>

namespace spikeforge::cli {

#if SPIKEFORGE_BACKEND_OPENCL

namespace {

// Every device, or the reason discovery failed (then no device).
std::vector<opencl::DeviceInfo> devicesOrError(std::string& error) {
    std::vector<opencl::DeviceInfo> out;
    try {
        for (const opencl::PlatformInfo& p : opencl::discoverPlatforms())
            out.insert(out.end(), p.devices.begin(), p.devices.end());
    } catch (const BackendError& e) {
        error = e.what();
    }
    return out;
}

const char* yesNo(bool value) {
    return value ? "yes" : "no";
}

} // namespace

std::string openclDevicesJson() {
    std::string error;
    std::string list;
    for (const opencl::DeviceInfo& d : devicesOrError(error)) {
        JsonObject o;
        o.addString("selector", d.selector())
            .addString("platform", d.platformName)
            .addString("name", d.name)
            .addString("vendor", d.vendor)
            .addString("type", d.type)
            .addString("version", d.version)
            .addString("opencl_c_version", d.openclCVersion)
            .addString("driver_version", d.driverVersion)
            .addBool("available", d.available)
            .addInteger("compute_units", d.computeUnits)
            .addInteger("global_memory_bytes", d.globalMemoryBytes)
            .addInteger("max_allocation_bytes", d.maxAllocationBytes)
            .addBool("int64_atomics", d.int64Atomics)
            .addBool("fp64", d.fp64)
            .addBool("sub_groups", d.subGroups)
            .addBool("float_atomics", d.floatAtomics);
        list += (list.empty() ? "" : ", ") + o.str();
    }
    return JsonObject()
        .addBool("in_build", true)
        .addString("error", error)
        .addRaw("devices", "[" + list + "]")
        .str();
}

void printOpenclDevices(std::ostream& out) {
    std::string error;
    const std::vector<opencl::DeviceInfo> devices = devicesOrError(error);
    out << "\nOpenCL devices (select one with its P:D selector or a name substring):\n";
    if (!error.empty())
        out << "  discovery failed: " << error << '\n';
    else if (devices.empty())
        out << "  none: no OpenCL platform is installed (tools/install-deps installs PoCL)\n";
    for (const opencl::DeviceInfo& d : devices)
        out << "  " << d.summary() << "\n        int64 atomics " << yesNo(d.int64Atomics)
            << ", fp64 " << yesNo(d.fp64) << ", sub-groups " << yesNo(d.subGroups)
            << ", float atomics " << yesNo(d.floatAtomics) << '\n';
}

std::string openclSelectorError(const std::string& selector) {
    try {
        opencl::selectDevice(opencl::discoverPlatforms(), selector);
    } catch (const BackendError& e) {
        return e.what();
    }
    return "";
}

#else

std::string openclDevicesJson() {
    return JsonObject()
        .addBool("in_build", false)
        .addString("error", "")
        .addRaw("devices", "[]")
        .str();
}

void printOpenclDevices(std::ostream&) {}

std::string openclSelectorError(const std::string&) {
    return "this build has no OpenCL (configured with SPIKEFORGE_BACKEND_OPENCL=OFF)";
}

#endif

} // namespace spikeforge::cli
