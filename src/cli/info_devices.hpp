#pragma once
// The device part of `spikeforge info`: the OpenCL platforms and devices this machine offers.
#include <ostream>
#include <string>

namespace spikeforge::cli {

// The devices as a JSON object {"in_build": …, "error": …, "devices": […]} (docs/cli.md).
std::string openclDevicesJson();
// The devices as text, one block per device; nothing when the build has no opencl backend.
void printOpenclDevices(std::ostream& out);
// Why `selector` (`simulate --device`) names no usable OpenCL device: the selector error with
// the list of devices, or "" when it names one. Runs device discovery (~0.2 s), so it is only
// called when the option is given.
std::string openclSelectorError(const std::string& selector);

} // namespace spikeforge::cli
