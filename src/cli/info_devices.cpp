#include "info_devices.hpp"

#include "json.hpp"

#include "spikeforge/devices.hpp"

namespace spikeforge::cli {

namespace {

const char* yesNo(bool value) {
    return value ? "yes" : "no";
}

} // namespace

std::string openclDevicesJson() {
    const OpenClDevices found = openclDevices();
    std::string list;
    for (const OpenClDeviceDescription& d : found.devices) {
        JsonObject o;
        o.addString("selector", d.selector)
            .addString("platform", d.platform)
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
        .addBool("in_build", found.inBuild)
        .addString("error", found.error)
        .addRaw("devices", "[" + list + "]")
        .str();
}

void printOpenclDevices(std::ostream& out) {
    const OpenClDevices found = openclDevices();
    if (!found.inBuild) return;
    out << "\nOpenCL devices (select one with its P:D selector or a name substring):\n";
    if (!found.error.empty())
        out << "  discovery failed: " << found.error << '\n';
    else if (found.devices.empty())
        out << "  none: no OpenCL platform is installed (tools/install-deps installs PoCL)\n";
    for (const OpenClDeviceDescription& d : found.devices)
        out << "  " << d.summary << "\n        int64 atomics " << yesNo(d.int64Atomics)
            << ", fp64 " << yesNo(d.fp64) << ", sub-groups " << yesNo(d.subGroups)
            << ", float atomics " << yesNo(d.floatAtomics) << '\n';
}

} // namespace spikeforge::cli
