// The public view of device discovery (spikeforge/devices.hpp): what `spikeforge info` and a
// device selector check need, without exposing a backend's internals above this layer.
#include "spikeforge/devices.hpp"

#include "spikeforge/errors.hpp"

#if SPIKEFORGE_BACKEND_OPENCL
#include "backends/opencl/platforms.hpp"
#endif

namespace spikeforge {

#if SPIKEFORGE_BACKEND_OPENCL

namespace {

OpenClDeviceDescription describe(const opencl::DeviceInfo& d) {
    OpenClDeviceDescription o;
    o.selector = d.selector();
    o.summary = d.summary();
    o.platform = d.platformName;
    o.name = d.name;
    o.vendor = d.vendor;
    o.type = d.type;
    o.version = d.version;
    o.openclCVersion = d.openclCVersion;
    o.driverVersion = d.driverVersion;
    o.available = d.available;
    o.computeUnits = d.computeUnits;
    o.globalMemoryBytes = d.globalMemoryBytes;
    o.maxAllocationBytes = d.maxAllocationBytes;
    o.int64Atomics = d.int64Atomics;
    o.fp64 = d.fp64;
    o.subGroups = d.subGroups;
    o.floatAtomics = d.floatAtomics;
    return o;
}

} // namespace

OpenClDevices openclDevices() {
    OpenClDevices out;
    out.inBuild = true;
    try {
        for (const opencl::PlatformInfo& p : opencl::discoverPlatforms())
            for (const opencl::DeviceInfo& d : p.devices)
                out.devices.push_back(describe(d));
    } catch (const BackendError& e) {
        out.error = e.what();
        out.devices.clear();
    }
    return out;
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

OpenClDevices openclDevices() {
    return {};
}

std::string openclSelectorError(const std::string&) {
    return "this build has no OpenCL (configured with SPIKEFORGE_BACKEND_OPENCL=OFF)";
}

#endif

} // namespace spikeforge
