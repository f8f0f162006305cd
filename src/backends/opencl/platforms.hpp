#pragma once
// OpenCL platform and device discovery, and the device selector of
// BackendPreferences::device (docs/backends.md).
#include "backends/opencl/cl_api.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace spikeforge::opencl {

struct DeviceInfo {
    size_t platform = 0; // index of its platform in discovery order
    size_t index = 0;    // index within its platform
    cl_device_id id = nullptr;
    std::string platformName;
    std::string name;
    std::string vendor;
    std::string version;        // "OpenCL 3.0 PoCL …"
    std::string openclCVersion; // "OpenCL C 1.2 …"
    std::string driverVersion;
    std::string type; // "gpu", "cpu", "accelerator" or "other"
    bool available = true;
    unsigned computeUnits = 0;
    uint64_t globalMemoryBytes = 0;  // [B]
    uint64_t maxAllocationBytes = 0; // [B] largest single buffer
    size_t maxWorkGroupSize = 0;
    unsigned addressBits = 64; // CL_DEVICE_ADDRESS_BITS: a device pointer's width
    bool littleEndian = true;  // CL_DEVICE_ENDIAN_LITTLE
    // Features the SIMT kernels use where present (emulated or refused where not).
    bool int64Atomics = false; // cl_khr_int64_base_atomics
    bool fp64 = false;         // cl_khr_fp64 or a double FP config
    bool subGroups = false;    // cl_khr_subgroups, cl_intel_subgroups or OpenCL 2.1+ sub-groups
    bool floatAtomics = false; // cl_ext_float_atomics

    std::string selector() const; // "platform:device", as BackendPreferences::device takes it
    std::string summary() const;  // one line for messages and `spikeforge info`
};

struct PlatformInfo {
    cl_platform_id id = nullptr;
    std::string name;
    std::string vendor;
    std::string version;
    std::vector<DeviceInfo> devices;
};

// Every platform the ICD loader knows and every device of each. No platform (no driver
// installed) is an empty list, not an error; a failing query is a BackendError.
std::vector<PlatformInfo> discoverPlatforms();

// The device `selector` names (BackendPreferences::device):
//   ""           the first available GPU or accelerator in discovery order, else the first
//                available device;
//   "P:D"        device D of platform P (indices as `spikeforge info` lists them);
//   other text   the first device whose "<platform name> <device name>" contains it, ignoring
//                case (use "P:D" to choose among several).
// Throws BackendError listing every device when nothing matches.
const DeviceInfo& selectDevice(const std::vector<PlatformInfo>& platforms,
                               const std::string& selector);

} // namespace spikeforge::opencl
