// The OpenCL foundations (src/backends/opencl): discovery, the device selector, buffers and the
// program build helper. Every test skips, saying why, on a machine without an OpenCL platform.
#include "backend_fixture.hpp"
#include "backends/backend.hpp"
#include "backends/opencl/opencl_device.hpp"
#include "backends/opencl/opencl_dialect.hpp"

#include "spikeforge/errors.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

using namespace spikeforge;
using namespace spikeforge::opencl;
using sftest::errorOf;
using sftest::expectContains;

namespace {

std::vector<PlatformInfo> platformsOrSkip(std::string& why) {
    std::vector<PlatformInfo> platforms = discoverPlatforms();
    size_t devices = 0;
    for (const PlatformInfo& p : platforms)
        devices += p.devices.size();
    if (devices == 0) why = "no OpenCL platform with a device on this machine";
    return platforms;
}

#define SKIP_WITHOUT_OPENCL(platforms)                                                             \
    std::string skipReason;                                                                        \
    const std::vector<PlatformInfo> platforms = platformsOrSkip(skipReason);                       \
    if (!skipReason.empty()) GTEST_SKIP() << skipReason

// Bytes 1, 2, 3, … (mod 251, so no period of a power of two hides an offset error).
std::vector<uint8_t> pattern(size_t bytes, uint8_t seed) {
    std::vector<uint8_t> out(bytes);
    for (size_t i = 0; i < bytes; ++i)
        out[i] = static_cast<uint8_t>((i + seed) % 251 + 1);
    return out;
}

} // namespace

TEST(OpenClDiscovery, ListsEveryDeviceWithItsProperties) {
    SKIP_WITHOUT_OPENCL(platforms);
    for (size_t p = 0; p < platforms.size(); ++p) {
        EXPECT_FALSE(platforms[p].name.empty());
        for (size_t d = 0; d < platforms[p].devices.size(); ++d) {
            const DeviceInfo& dev = platforms[p].devices[d];
            EXPECT_EQ(dev.platform, p);
            EXPECT_EQ(dev.index, d);
            EXPECT_EQ(dev.selector(), std::to_string(p) + ":" + std::to_string(d));
            EXPECT_FALSE(dev.name.empty());
            EXPECT_EQ(dev.version.rfind("OpenCL ", 0), 0u) << dev.version;
            EXPECT_EQ(dev.openclCVersion.rfind("OpenCL C ", 0), 0u) << dev.openclCVersion;
            EXPECT_GT(dev.computeUnits, 0u);
            EXPECT_GT(dev.globalMemoryBytes, 0u);
            EXPECT_GT(dev.maxAllocationBytes, 0u);
            EXPECT_LE(dev.maxAllocationBytes, dev.globalMemoryBytes);
            expectContains(dev.summary(), {dev.selector(), dev.name, dev.platformName});
        }
    }
}

// tools/install-deps installs PoCL: where its driver is registered, discovery must find it.
TEST(OpenClDiscovery, FindsPoclWhereItIsInstalled) {
    if (!std::filesystem::exists("/etc/OpenCL/vendors/pocl.icd"))
        GTEST_SKIP() << "PoCL is not registered with the ICD loader on this machine";
    const std::vector<PlatformInfo> platforms = discoverPlatforms();
    bool found = false;
    for (const PlatformInfo& p : platforms)
        if (p.name == "Portable Computing Language") {
            found = true;
            ASSERT_FALSE(p.devices.empty());
            EXPECT_EQ(p.devices.front().type, "cpu");
            // PoCL's CPU device has what the SIMT kernels rely on.
            EXPECT_TRUE(p.devices.front().int64Atomics);
            EXPECT_TRUE(p.devices.front().fp64);
        }
    EXPECT_TRUE(found) << "PoCL is registered but not among the " << platforms.size()
                       << " platforms found";
}

TEST(OpenClDiscovery, SelectorTakesIndicesAndNameSubstrings) {
    SKIP_WITHOUT_OPENCL(platforms);
    const DeviceInfo& first = selectDevice(platforms, "");
    EXPECT_TRUE(first.available);
    for (const PlatformInfo& p : platforms)
        for (const DeviceInfo& d : p.devices) {
            if (!d.available) continue;
            EXPECT_EQ(selectDevice(platforms, d.selector()).id, d.id);
            // Case does not matter; the first match in discovery order wins.
            std::string upper = d.name;
            for (char& c : upper)
                c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
            const DeviceInfo& byName = selectDevice(platforms, upper);
            EXPECT_NE(byName.name.find(d.name), std::string::npos);
        }
}

TEST(OpenClDiscovery, SelectorMatchingNothingListsTheDevices) {
    SKIP_WITHOUT_OPENCL(platforms);
    const std::string first = platforms.front().devices.front().name;
    for (const std::string selector : {"no-such-device-xyz", "99:0", "0:99", "0:"}) {
        const std::string msg = errorOf<BackendError>([&] { selectDevice(platforms, selector); });
        expectContains(msg, {selector, "BackendPreferences::device", "0:0", first});
    }
    expectContains(errorOf<BackendError>([] { OpenClDevice::open("no-such-device-xyz"); }),
                   {"no-such-device-xyz", first});
}

TEST(OpenClDevice, BuffersRoundTripAndStartZeroed) {
    SKIP_WITHOUT_OPENCL(platforms);
    OpenClDevice device(selectDevice(platforms, ""));
    EXPECT_EQ(device.allocate(0), nullptr);
    for (const size_t bytes : {size_t(1), size_t(3), size_t(4), size_t(5), size_t(1000),
                               size_t(4097), size_t(1 << 20) + 3}) {
        // Dirty memory first, so that a buffer reusing it shows a missing zero-fill (fresh
        // pages from the OS are zero anyway).
        backends::Buffer dirty = device.allocate(bytes);
        const std::vector<uint8_t> junk(bytes, 0x5A);
        device.copyToDevice(dirty, junk.data(), bytes);
        device.release(dirty);
        device.synchronise();
        backends::Buffer buffer = device.allocate(bytes);
        ASSERT_NE(buffer, nullptr);
        std::vector<uint8_t> back(bytes, 0xAB);
        device.copyFromDevice(back.data(), buffer, bytes);
        EXPECT_EQ(back, std::vector<uint8_t>(bytes, 0)) << bytes << " bytes not zero-filled";
        const std::vector<uint8_t> sent = pattern(bytes, static_cast<uint8_t>(bytes));
        device.copyToDevice(buffer, sent.data(), bytes);
        device.copyFromDevice(back.data(), buffer, bytes);
        EXPECT_EQ(back, sent) << bytes << " bytes";
        device.release(buffer);
    }
    // Copies of 0 bytes touch nothing, even with the null buffer of a 0-byte array.
    device.copyToDevice(nullptr, nullptr, 0);
    device.copyFromDevice(nullptr, nullptr, 0);
    device.release(nullptr);
    EXPECT_EQ(device.transfers().toDevice, 15u);
    EXPECT_EQ(device.transfers().fromDevice, 15u);
    EXPECT_EQ(device.transfers().bytesToDevice, 2 * (1u + 3 + 4 + 5 + 1000 + 4097 + (1 << 20) + 3));
}

TEST(OpenClDevice, ZeroClearsOnlyTheBytesAsked) {
    SKIP_WITHOUT_OPENCL(platforms);
    OpenClDevice device(selectDevice(platforms, ""));
    for (const size_t bytes : {size_t(9), size_t(4096), size_t(4099)}) {
        backends::Buffer buffer = device.allocate(bytes);
        const std::vector<uint8_t> sent = pattern(bytes, 7);
        device.copyToDevice(buffer, sent.data(), bytes);
        const size_t cleared = bytes - 3; // not a multiple of 4 where bytes is
        device.zero(buffer, cleared);
        std::vector<uint8_t> back(bytes);
        device.copyFromDevice(back.data(), buffer, bytes);
        for (size_t i = 0; i < bytes; ++i)
            ASSERT_EQ(back[i], i < cleared ? 0 : sent[i]) << "byte " << i << " of " << bytes;
        device.zero(buffer, bytes);
        device.copyFromDevice(back.data(), buffer, bytes);
        EXPECT_EQ(back, std::vector<uint8_t>(bytes, 0));
        device.release(buffer);
    }
}

TEST(OpenClDevice, CapacityAndMisuse) {
    SKIP_WITHOUT_OPENCL(platforms);
    OpenClDevice device(selectDevice(platforms, ""));
    EXPECT_GT(device.memoryCapacity(), 0u);
    EXPECT_EQ(device.memoryCapacity(), device.info().globalMemoryBytes);
    EXPECT_EQ(device.name(), "opencl");
    backends::Buffer buffer = device.allocate(16);
    std::vector<uint8_t> host(32);
    expectContains(errorOf<InternalError>([&] { device.copyToDevice(buffer, host.data(), 32); }),
                   {"copyToDevice", "32 bytes", "16"});
    expectContains(errorOf<InternalError>([&] { device.copyFromDevice(host.data(), buffer, 17); }),
                   {"copyFromDevice", "17 bytes"});
    int notABuffer = 0;
    expectContains(errorOf<InternalError>([&] { device.zero(&notABuffer, 4); }),
                   {"did not allocate"});
    expectContains(errorOf<BackendError>(
                       [&] { device.allocate(size_t(device.info().maxAllocationBytes) + 1); }),
                   {"CL_DEVICE_MAX_MEM_ALLOC_SIZE", device.info().name});
    expectContains(errorOf<InternalError>([&] { device.bindTable(0, {}); }),
                   {"bindTable", "before a program was loaded"});
    expectContains(errorOf<InternalError>([&] { device.launch(0, {}); }),
                   {"launch", "before a program was loaded"});
    device.release(buffer);
    device.synchronise();
}

TEST(OpenClDevice, BuildsAndRunsAKernel) {
    SKIP_WITHOUT_OPENCL(platforms);
    OpenClDevice device(selectDevice(platforms, ""));
    const Program program = device.buildProgram(R"(
        kernel void axpy(global float* y, global const float* x, float a, uint n) {
            const size_t i = get_global_id(0);
            if (i < n) y[i] += a * x[i];
        })",
                                                "-cl-std=CL1.2");
    Kernel axpy = program.kernel("axpy");
    const unsigned n = 1000; // not a multiple of any work-group size the platform may pick
    std::vector<float> x(n), y(n);
    std::iota(x.begin(), x.end(), 0.0f);
    std::iota(y.begin(), y.end(), 5.0f);
    backends::Buffer xb = device.allocate(n * sizeof(float));
    backends::Buffer yb = device.allocate(n * sizeof(float));
    device.copyToDevice(xb, x.data(), n * sizeof(float));
    device.copyToDevice(yb, y.data(), n * sizeof(float));
    axpy.setBuffer(0, yb);
    axpy.setBuffer(1, xb);
    axpy.setValue(2, 2.0f);
    axpy.setValue(3, cl_uint(n));
    device.enqueue(axpy, 1024);
    device.synchronise();
    std::vector<float> back(n);
    device.copyFromDevice(back.data(), yb, n * sizeof(float));
    for (unsigned i = 0; i < n; ++i)
        ASSERT_EQ(back[i], y[i] + 2.0f * x[i]) << "element " << i; // exact: small integers
    expectContains(errorOf<BackendError>([&] { program.kernel("no_such_kernel"); }),
                   {"clCreateKernel", "CL_INVALID_KERNEL_NAME", "no_such_kernel"});
    expectContains(errorOf<BackendError>([&] { axpy.setValue(2, 1.0); }), // double for a float
                   {"clSetKernelArg", "axpy", "argument 2"});
    device.release(xb);
    device.release(yb);
}

TEST(OpenClDevice, ProgramThatDoesNotBuildShowsTheLog) {
    SKIP_WITHOUT_OPENCL(platforms);
    OpenClDevice device(selectDevice(platforms, ""));
    const std::string msg = errorOf<BackendError>([&] {
        device.buildProgram("kernel void broken(global int* p) { p[0] = undeclared_name; }", "");
    });
    expectContains(
        msg, {"does not build", "CL_BUILD_PROGRAM_FAILURE", device.info().name, "undeclared_name"});
}

TEST(OpenClApi, ErrorsAreNamed) {
    EXPECT_EQ(errorName(CL_OUT_OF_RESOURCES), "CL_OUT_OF_RESOURCES");
    EXPECT_EQ(errorName(-72), "CL_MAX_SIZE_RESTRICTION_EXCEEDED");
    EXPECT_EQ(errorName(-9999), "OpenCL error -9999");
    EXPECT_NO_THROW(check(CL_SUCCESS, "clFinish"));
    expectContains(errorOf<BackendError>([] { check(CL_INVALID_VALUE, "clFoo", "what"); }),
                   {"clFoo", "CL_INVALID_VALUE", "what"});
}

// The factory makes the opencl backend, which refuses cpu settings; the cpu backend refuses a
// device selector.
TEST(OpenClBackend, IsMadeByTheFactory) {
    BackendPreferences prefs;
    prefs.backend = "opencl";
    EXPECT_EQ(backends::makeBackend(prefs)->name(), "opencl");
    prefs.threads = 4; // a cpu setting is refused, not ignored
    expectContains(errorOf<ModelError>([&] { backends::makeBackend(prefs); }),
                   {"BackendPreferences::threads", "4", "opencl"});
    prefs.threads = 0;
    prefs.compiler = "g++";
    expectContains(errorOf<ModelError>([&] { backends::makeBackend(prefs); }),
                   {"BackendPreferences::compiler", "g++"});
    prefs.compiler.clear();
    prefs.backend = "cpu";
    prefs.device = "0:0";
    expectContains(errorOf<ModelError>([&] { backends::makeBackend(prefs); }),
                   {"BackendPreferences::device", "0:0", "cpu"});
}

// The build options (opencl_dialect.cpp): a quick build skips the optimiser, a release build and
// a fast-maths build keep it (fast maths only licenses rewrites the optimiser makes).
TEST(OpenClBuildOptions, QuickSkipsTheOptimiserUnlessFastMathsIsAsked) {
    const DeviceInfo device;
    const auto has = [](const std::string& options, const std::string& flag) {
        return options.find(flag) != std::string::npos;
    };
    EXPECT_FALSE(has(buildOptions(device, false, false), "-cl-opt-disable"));
    EXPECT_TRUE(has(buildOptions(device, false, true), "-cl-opt-disable"));
    const std::string fastQuick = buildOptions(device, true, true);
    EXPECT_FALSE(has(fastQuick, "-cl-opt-disable")) << fastQuick;
    EXPECT_TRUE(has(fastQuick, "-cl-unsafe-math-optimizations")) << fastQuick;
    for (bool fast : {false, true})
        for (bool quick : {false, true})
            EXPECT_TRUE(has(buildOptions(device, fast, quick), "-cl-std=CL1.2"));
}
