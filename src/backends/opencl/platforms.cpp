#include "backends/opencl/platforms.hpp"

#include "spikeforge/errors.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <optional>
#include <sstream>

namespace spikeforge::opencl {

namespace {

// CL_DEVICE_MAX_NUM_SUB_GROUPS, an OpenCL 2.1 query the 1.2 headers do not define.
constexpr cl_device_info deviceMaxNumSubGroups = 0x105C;

std::string platformString(cl_platform_id p, cl_platform_info what, const char* whatName) {
    size_t size = 0;
    check(clGetPlatformInfo(p, what, 0, nullptr, &size), "clGetPlatformInfo", whatName);
    std::string out(size, '\0');
    check(clGetPlatformInfo(p, what, size, out.data(), nullptr), "clGetPlatformInfo", whatName);
    while (!out.empty() && (out.back() == '\0' || out.back() == ' '))
        out.pop_back();
    return out;
}

std::string deviceString(cl_device_id d, cl_device_info what, const char* whatName) {
    size_t size = 0;
    check(clGetDeviceInfo(d, what, 0, nullptr, &size), "clGetDeviceInfo", whatName);
    std::string out(size, '\0');
    check(clGetDeviceInfo(d, what, size, out.data(), nullptr), "clGetDeviceInfo", whatName);
    while (!out.empty() && (out.back() == '\0' || out.back() == ' '))
        out.pop_back();
    return out;
}

template <typename T> T deviceValue(cl_device_id d, cl_device_info what, const char* whatName) {
    T value{};
    check(clGetDeviceInfo(d, what, sizeof value, &value, nullptr), "clGetDeviceInfo", whatName);
    return value;
}

bool hasExtension(const std::string& extensions, const std::string& name) {
    std::istringstream in(extensions);
    std::string token;
    while (in >> token)
        if (token == name) return true;
    return false;
}

// OpenCL "major.minor" from a version string "OpenCL 2.1 …" (0 when it cannot be read).
int versionNumber(const std::string& version) {
    int major = 0, minor = 0;
    if (std::sscanf(version.c_str(), "OpenCL %d.%d", &major, &minor) != 2) return 0;
    return major * 10 + minor;
}

std::string typeName(cl_device_type type) {
    if (type & CL_DEVICE_TYPE_GPU) return "gpu";
    if (type & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
    if (type & CL_DEVICE_TYPE_CPU) return "cpu";
    return "other";
}

DeviceInfo describe(cl_device_id id, const PlatformInfo& platform, size_t p, size_t index) {
    DeviceInfo d;
    d.platform = p;
    d.index = index;
    d.id = id;
    d.platformName = platform.name;
    d.name = deviceString(id, CL_DEVICE_NAME, "CL_DEVICE_NAME");
    d.vendor = deviceString(id, CL_DEVICE_VENDOR, "CL_DEVICE_VENDOR");
    d.version = deviceString(id, CL_DEVICE_VERSION, "CL_DEVICE_VERSION");
    d.openclCVersion = deviceString(id, CL_DEVICE_OPENCL_C_VERSION, "CL_DEVICE_OPENCL_C_VERSION");
    d.driverVersion = deviceString(id, CL_DRIVER_VERSION, "CL_DRIVER_VERSION");
    d.type = typeName(deviceValue<cl_device_type>(id, CL_DEVICE_TYPE, "CL_DEVICE_TYPE"));
    d.available = deviceValue<cl_bool>(id, CL_DEVICE_AVAILABLE, "CL_DEVICE_AVAILABLE");
    d.computeUnits =
        deviceValue<cl_uint>(id, CL_DEVICE_MAX_COMPUTE_UNITS, "CL_DEVICE_MAX_COMPUTE_UNITS");
    d.globalMemoryBytes =
        deviceValue<cl_ulong>(id, CL_DEVICE_GLOBAL_MEM_SIZE, "CL_DEVICE_GLOBAL_MEM_SIZE");
    d.maxAllocationBytes =
        deviceValue<cl_ulong>(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, "CL_DEVICE_MAX_MEM_ALLOC_SIZE");
    d.maxWorkGroupSize =
        deviceValue<size_t>(id, CL_DEVICE_MAX_WORK_GROUP_SIZE, "CL_DEVICE_MAX_WORK_GROUP_SIZE");
    d.addressBits = deviceValue<cl_uint>(id, CL_DEVICE_ADDRESS_BITS, "CL_DEVICE_ADDRESS_BITS");
    d.littleEndian = deviceValue<cl_bool>(id, CL_DEVICE_ENDIAN_LITTLE, "CL_DEVICE_ENDIAN_LITTLE");
    const std::string ext = deviceString(id, CL_DEVICE_EXTENSIONS, "CL_DEVICE_EXTENSIONS");
    d.int64Atomics = hasExtension(ext, "cl_khr_int64_base_atomics");
    d.fp64 = hasExtension(ext, "cl_khr_fp64") ||
             deviceValue<cl_device_fp_config>(id, CL_DEVICE_DOUBLE_FP_CONFIG,
                                              "CL_DEVICE_DOUBLE_FP_CONFIG") != 0;
    d.subGroups = hasExtension(ext, "cl_khr_subgroups") || hasExtension(ext, "cl_intel_subgroups");
    if (!d.subGroups && versionNumber(d.version) >= 21) {
        // Optional in OpenCL 3.0: a device without sub-groups reports 0 (or refuses the query).
        cl_uint count = 0;
        if (clGetDeviceInfo(id, deviceMaxNumSubGroups, sizeof count, &count, nullptr) == CL_SUCCESS)
            d.subGroups = count > 0;
    }
    d.floatAtomics = hasExtension(ext, "cl_ext_float_atomics");
    return d;
}

std::string lower(std::string s) {
    for (char& c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::optional<size_t> parseIndex(const std::string& text) {
    if (text.empty() || !std::all_of(text.begin(), text.end(), [](char c) {
            return std::isdigit(static_cast<unsigned char>(c));
        }))
        return std::nullopt;
    size_t value = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
    return value;
}

std::string listOf(const std::vector<PlatformInfo>& platforms) {
    std::string out;
    for (const PlatformInfo& p : platforms)
        for (const DeviceInfo& d : p.devices)
            out += "\n  " + d.summary();
    return out.empty() ? " none" : out;
}

[[noreturn]] void noMatch(const std::vector<PlatformInfo>& platforms, const std::string& why) {
    throw BackendError(why +
                       " (BackendPreferences::device); OpenCL devices here:" + listOf(platforms));
}

} // namespace

std::string DeviceInfo::selector() const {
    return std::to_string(platform) + ":" + std::to_string(index);
}

std::string DeviceInfo::summary() const {
    const double gib = static_cast<double>(globalMemoryBytes) / (1024.0 * 1024.0 * 1024.0);
    char memory[32];
    std::snprintf(memory, sizeof memory, "%.1f GiB", gib);
    std::string out = selector() + "  " + name + " [" + type + "; " + platformName + "; " +
                      version + "; " + openclCVersion + "; " + std::to_string(computeUnits) +
                      " compute units; " + memory + "]";
    if (!available) out += " (not available)";
    return out;
}

std::vector<PlatformInfo> discoverPlatforms() {
    cl_uint count = 0;
    const cl_int err = clGetPlatformIDs(0, nullptr, &count);
    // The ICD loader answers CL_PLATFORM_NOT_FOUND_KHR when no driver is registered.
    if (err == -1001 || (err == CL_SUCCESS && count == 0)) return {};
    check(err, "clGetPlatformIDs");
    std::vector<cl_platform_id> ids(count);
    check(clGetPlatformIDs(count, ids.data(), nullptr), "clGetPlatformIDs");
    std::vector<PlatformInfo> platforms;
    for (size_t p = 0; p < ids.size(); ++p) {
        PlatformInfo info;
        info.id = ids[p];
        info.name = platformString(ids[p], CL_PLATFORM_NAME, "CL_PLATFORM_NAME");
        info.vendor = platformString(ids[p], CL_PLATFORM_VENDOR, "CL_PLATFORM_VENDOR");
        info.version = platformString(ids[p], CL_PLATFORM_VERSION, "CL_PLATFORM_VERSION");
        cl_uint numDevices = 0;
        const cl_int derr = clGetDeviceIDs(ids[p], CL_DEVICE_TYPE_ALL, 0, nullptr, &numDevices);
        if (derr != CL_DEVICE_NOT_FOUND) {
            check(derr, "clGetDeviceIDs", info.name);
            std::vector<cl_device_id> devices(numDevices);
            check(clGetDeviceIDs(ids[p], CL_DEVICE_TYPE_ALL, numDevices, devices.data(), nullptr),
                  "clGetDeviceIDs", info.name);
            for (size_t d = 0; d < devices.size(); ++d)
                info.devices.push_back(describe(devices[d], info, p, d));
        }
        platforms.push_back(std::move(info));
    }
    return platforms;
}

const DeviceInfo& selectDevice(const std::vector<PlatformInfo>& platforms,
                               const std::string& selector) {
    if (selector.empty()) {
        const DeviceInfo* first = nullptr;
        for (const PlatformInfo& p : platforms)
            for (const DeviceInfo& d : p.devices) {
                if (!d.available) continue;
                if (d.type == "gpu" || d.type == "accelerator") return d;
                if (!first) first = &d;
            }
        if (first) return *first;
        noMatch(platforms, "no available OpenCL device (install a driver, or PoCL to run OpenCL "
                           "on the CPU: tools/install-deps)");
    }
    const size_t colon = selector.find(':');
    const std::optional<size_t> p =
        colon == std::string::npos ? std::nullopt : parseIndex(selector.substr(0, colon));
    const std::optional<size_t> d =
        colon == std::string::npos ? std::nullopt : parseIndex(selector.substr(colon + 1));
    if (p && d) {
        if (*p >= platforms.size() || *d >= platforms[*p].devices.size())
            noMatch(platforms, "no OpenCL device " + selector);
        const DeviceInfo& found = platforms[*p].devices[*d];
        if (!found.available) noMatch(platforms, "OpenCL device " + selector + " is not available");
        return found;
    }
    const std::string needle = lower(selector);
    for (const PlatformInfo& pl : platforms)
        for (const DeviceInfo& dev : pl.devices)
            if (dev.available && lower(pl.name + " " + dev.name).find(needle) != std::string::npos)
                return dev;
    noMatch(platforms, "no available OpenCL device matches '" + selector + "'");
}

} // namespace spikeforge::opencl
