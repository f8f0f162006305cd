#pragma once
// The OpenCL devices this machine offers, as `spikeforge info` lists them and as
// BackendPreferences::device selects them (docs/backends.md, "Choosing a device").
#include <cstdint>
#include <string>
#include <vector>

namespace spikeforge {

struct OpenClDeviceDescription {
    std::string selector; // "P:D", as BackendPreferences::device takes it
    std::string summary;  // one line: selector, name, type, platform, versions, memory
    std::string platform;
    std::string name;
    std::string vendor;
    std::string type;           // "gpu", "cpu", "accelerator" or "other"
    std::string version;        // "OpenCL 3.0 PoCL …"
    std::string openclCVersion; // "OpenCL C 1.2 …"
    std::string driverVersion;
    bool available = true;
    unsigned computeUnits = 0;
    uint64_t globalMemoryBytes = 0;  // [B]
    uint64_t maxAllocationBytes = 0; // [B] largest single buffer
    bool int64Atomics = false;       // cl_khr_int64_base_atomics
    bool fp64 = false;               // double precision
    bool subGroups = false;          // sub-groups of some kind
    bool floatAtomics = false;       // cl_ext_float_atomics
};

struct OpenClDevices {
    bool inBuild = false; // the library was built with the opencl backend
    std::string error;    // why discovery failed ("" when it did not); then no devices
    std::vector<OpenClDeviceDescription> devices; // every device of every platform, in order
};

// Runs device discovery (loads every OpenCL driver: ~0.2 s for PoCL).
OpenClDevices openclDevices();

// Why `selector` names no usable OpenCL device (the error lists the devices), or "" when it
// names one; without the opencl backend in the build, says so.
std::string openclSelectorError(const std::string& selector);

} // namespace spikeforge
