#pragma once
// The device part of `spikeforge info`: the OpenCL platforms and devices this machine offers
// (read through the library's public spikeforge/devices.hpp).
#include <ostream>
#include <string>

namespace spikeforge::cli {

// The devices as a JSON object {"in_build": …, "error": …, "devices": […]} (docs/cli.md).
std::string openclDevicesJson();
// The devices as text, one block per device; nothing when the build has no opencl backend.
void printOpenclDevices(std::ostream& out);

} // namespace spikeforge::cli
