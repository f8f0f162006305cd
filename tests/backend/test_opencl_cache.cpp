// The OpenCL program cache (src/backends/opencl/program_cache.*): keys, the entry format and its
// checks, and buildCached on a real device (PoCL here): a second build hits the cache, a damaged
// entry is rebuilt and never handed to the driver as it is. The availability rule of
// availableBackends() for opencl is checked against discovery. Tests needing a device skip,
// saying why, on a machine without an OpenCL platform.
#include "backend_fixture.hpp"
#include "backends/opencl/opencl_device.hpp"
#include "backends/opencl/program_cache.hpp"

#include "spikeforge/errors.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace spikeforge;
using namespace spikeforge::opencl;
using sftest::errorOf;
using sftest::expectContains;
namespace fs = std::filesystem;

namespace {

// A fresh directory per call, removed by the destructor.
struct TempDir {
    fs::path path;
    TempDir() {
        static std::atomic<int> counter{0};
        path = fs::temp_directory_path() /
               ("sf_oclcache_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
        fs::create_directories(path);
        fs::permissions(path, fs::perms::owner_all, fs::perm_options::replace);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

std::string readAll(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void writeAll(const fs::path& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

size_t filesEndingIn(const fs::path& dir, const std::string& suffix) {
    size_t count = 0;
    for (const auto& entry : fs::directory_iterator(dir)) {
        const std::string name = entry.path().filename().string();
        if (name.size() >= suffix.size() &&
            name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
            ++count;
    }
    return count;
}

DeviceInfo fakeDevice() {
    DeviceInfo d;
    d.platformName = "Platform";
    d.name = "Device";
    d.vendor = "Vendor";
    d.version = "OpenCL 3.0 X";
    d.openclCVersion = "OpenCL C 1.2";
    d.driverVersion = "1.0";
    return d;
}

// The first available OpenCL device, or null with the reason in `why`.
std::unique_ptr<OpenClDevice> deviceOrSkip(std::string& why) {
    for (const PlatformInfo& p : discoverPlatforms())
        for (const DeviceInfo& d : p.devices)
            if (d.available) return std::make_unique<OpenClDevice>(d);
    why = "no OpenCL platform with an available device on this machine";
    return nullptr;
}

#define DEVICE_OR_SKIP(device)                                                                     \
    std::string skipReason;                                                                        \
    const std::unique_ptr<OpenClDevice> device = deviceOrSkip(skipReason);                         \
    if (!device) GTEST_SKIP() << skipReason

// x[i] = x[i] * 3 + add: a kernel whose result the test computes independently.
const std::string kSource = "__kernel void affine(__global int* x, int add) {\n"
                            "    size_t i = get_global_id(0);\n"
                            "    x[i] = x[i] * 3 + add;\n"
                            "}\n";

// Runs `affine` of `program` over 1000 elements x[i] = i - 500 with add = 7 and checks the result
// against 3 (i - 500) + 7.
void expectAffineRuns(OpenClDevice& device, const Program& program) {
    constexpr size_t n = 1000;
    std::vector<int32_t> x(n);
    for (size_t i = 0; i < n; ++i)
        x[i] = static_cast<int32_t>(i) - 500;
    const backends::Buffer buffer = device.allocate(n * sizeof(int32_t));
    device.copyToDevice(buffer, x.data(), n * sizeof(int32_t));
    Kernel kernel = program.kernel("affine");
    kernel.setBuffer(0, buffer);
    kernel.setValue(1, int32_t{7});
    device.enqueue(kernel, n);
    std::vector<int32_t> y(n);
    device.copyFromDevice(y.data(), buffer, n * sizeof(int32_t));
    device.release(buffer);
    for (size_t i = 0; i < n; ++i)
        ASSERT_EQ(y[i], 3 * (static_cast<int32_t>(i) - 500) + 7) << "element " << i;
}

BackendPreferences prefsIn(const fs::path& dir) {
    BackendPreferences prefs;
    prefs.backend = "opencl";
    prefs.cacheDir = dir.string();
    return prefs;
}

} // namespace

TEST(OpenClCacheKey, CoversSourceOptionsAndEveryDevicePart) {
    const DeviceInfo d = fakeDevice();
    const std::string key = programKey(d, kSource, "-cl-std=CL1.2");
    ASSERT_EQ(key.size(), 64u);
    EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos) << key;
    EXPECT_EQ(key, programKey(d, kSource, "-cl-std=CL1.2"));
    EXPECT_NE(key, programKey(d, kSource + " ", "-cl-std=CL1.2"));
    EXPECT_NE(key, programKey(d, kSource, "-cl-std=CL2.0"));
    // Fields are length-prefixed: moving text between source and options changes the key.
    EXPECT_NE(programKey(d, "ab", "c"), programKey(d, "a", "bc"));
    const std::vector<std::function<void(DeviceInfo&)>> changes = {[](DeviceInfo& x) { x.platformName += "2"; },
                                                                   [](DeviceInfo& x) { x.name += "2"; },
                                                                   [](DeviceInfo& x) { x.vendor += "2"; },
                                                                   [](DeviceInfo& x) { x.version += "2"; },
                                                                   [](DeviceInfo& x) { x.openclCVersion += "2"; },
                                                                   [](DeviceInfo& x) { x.driverVersion += "2"; }};
    for (size_t i = 0; i < changes.size(); ++i) {
        DeviceInfo other = fakeDevice();
        changes[i](other);
        EXPECT_NE(key, programKey(other, kSource, "-cl-std=CL1.2")) << "device part " << i;
    }
}

TEST(OpenClCacheEntry, RoundTripsAndNamesEveryKindOfDamage) {
    TempDir dir;
    const std::string key = programKey(fakeDevice(), "s", "");
    const std::string otherKey = programKey(fakeDevice(), "t", "");
    // NULs and newlines inside: the format must not care.
    const std::string binary = std::string("\x7f"
                                           "ELF\0\n\nbinary",
                                           13) +
                               std::string(3000, 'b');
    writeEntry(dir.path, key, binary);
    const fs::path path = dir.path / (key + ".clbin");
    EXPECT_EQ(filesEndingIn(dir.path, ""), 1u) << "a temporary file was left behind";
    std::string read;
    ASSERT_EQ(readEntry(path, key, read), EntryState::Ok);
    EXPECT_EQ(read, binary);
    EXPECT_EQ(readAll(path), entryBytes(key, binary));

    std::string unused;
    EXPECT_EQ(readEntry(dir.path / "none.clbin", key, unused), EntryState::Missing);
    EXPECT_EQ(readEntry(path, otherKey, unused), EntryState::WrongKey);
    const std::string good = readAll(path);
    const auto stateOf = [&](const std::string& bytes) {
        writeAll(path, bytes);
        std::string out = "untouched";
        const EntryState state = readEntry(path, key, out);
        if (state != EntryState::Ok) {
            EXPECT_EQ(out, "untouched") << describe(state);
        }
        return state;
    };
    EXPECT_EQ(stateOf(""), EntryState::Truncated);
    EXPECT_EQ(stateOf(good.substr(0, 20)), EntryState::Truncated);
    EXPECT_EQ(stateOf(good.substr(0, good.size() - 1)), EntryState::Truncated);
    EXPECT_EQ(stateOf(good + "x"), EntryState::BadHeader);
    EXPECT_EQ(stateOf("#!/bin/sh\n" + std::string(400, 'x')), EntryState::BadHeader);
    std::string flipped = good;
    flipped[flipped.size() - 100] ^= 0x01;
    EXPECT_EQ(stateOf(flipped), EntryState::BadChecksum);
    std::string badSize = good;
    badSize[8 + 64] = 'g'; // the first digit of the size field
    EXPECT_EQ(stateOf(badSize), EntryState::BadHeader);
    EXPECT_EQ(stateOf(good), EntryState::Ok);
    for (const EntryState s : {EntryState::Missing, EntryState::Truncated, EntryState::BadHeader,
                               EntryState::WrongKey, EntryState::BadChecksum, EntryState::Ok})
        EXPECT_STRNE(describe(s), "unknown");
}

TEST(OpenClProgramCache, SecondBuildHitsTheCacheAndRuns) {
    DEVICE_OR_SKIP(device);
    TempDir dir;
    const BackendPreferences prefs = prefsIn(dir.path);
    BuildInfo first;
    {
        const Program program = buildCached(*device, kSource, "", prefs, first);
        expectAffineRuns(*device, program);
    }
    EXPECT_FALSE(first.cacheHit);
    EXPECT_GT(first.compileSeconds, 0.0);
    const std::string key = programKey(device->info(), kSource, "");
    EXPECT_EQ(first.sourcePath, (dir.path / (key + ".cl")).string());
    EXPECT_EQ(readAll(first.sourcePath), kSource);
    std::string binary;
    ASSERT_EQ(readEntry(dir.path / (key + ".clbin"), key, binary), EntryState::Ok);
    EXPECT_FALSE(binary.empty());

    BuildInfo second;
    second.compileSeconds = 99.0; // must be overwritten
    const Program cached = buildCached(*device, kSource, "", prefs, second);
    EXPECT_TRUE(second.cacheHit);
    EXPECT_EQ(second.compileSeconds, 0.0);
    EXPECT_EQ(second.sourcePath, first.sourcePath);
    expectAffineRuns(*device, cached);
    EXPECT_EQ(filesEndingIn(dir.path, ".clbin"), 1u);

    // Other options are another program: another entry, another compile.
    BuildInfo third;
    buildCached(*device, kSource, "-cl-fast-relaxed-math", prefs, third);
    EXPECT_FALSE(third.cacheHit);
    EXPECT_EQ(filesEndingIn(dir.path, ".clbin"), 2u);
}

// Each kind of damage: the next build compiles again (no cache hit), the program runs, and the
// entry is valid again afterwards.
TEST(OpenClProgramCache, DamagedEntriesAreRebuiltNeverTrusted) {
    DEVICE_OR_SKIP(device);
    TempDir dir;
    const BackendPreferences prefs = prefsIn(dir.path);
    const std::string key = programKey(device->info(), kSource, "");
    const fs::path entry = dir.path / (key + ".clbin");
    BuildInfo info;
    buildCached(*device, kSource, "", prefs, info);
    const std::string good = readAll(entry);
    ASSERT_FALSE(good.empty());
    std::string flipped = good;
    flipped[good.size() / 2 + 80] ^= 0x20;
    const std::string otherKey = programKey(device->info(), kSource + "//", "");
    const std::vector<std::pair<std::string, std::string>> damages = {
        {"empty", ""},
        {"truncated", good.substr(0, good.size() - 7)},
        {"flipped byte", flipped},
        {"other key", entryBytes(otherKey, good.substr(good.find('\n') + 1))},
        // Consistent header and checksum, but not a program: the driver refuses it.
        {"not a binary", entryBytes(key, "this is not a program binary")},
    };
    for (const auto& [what, bytes] : damages) {
        SCOPED_TRACE(what);
        writeAll(entry, bytes);
        BuildInfo rebuilt;
        const Program program = buildCached(*device, kSource, "", prefs, rebuilt);
        EXPECT_FALSE(rebuilt.cacheHit);
        expectAffineRuns(*device, program);
        std::string binary;
        EXPECT_EQ(readEntry(entry, key, binary), EntryState::Ok);
    }
}

// Two builds of one program at once (threads here; processes take the same flock): the key's lock
// makes exactly one of them compile, the other loads what it wrote.
TEST(OpenClProgramCache, ConcurrentBuildsOfOneProgramCompileOnce) {
    DEVICE_OR_SKIP(device);
    TempDir dir;
    const BackendPreferences prefs = prefsIn(dir.path);
    const DeviceInfo info = device->info();
    BuildInfo results[2];
    std::string errors[2];
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t)
        threads.emplace_back([&, t] {
            try {
                OpenClDevice own(info); // a context per thread, as two processes would have
                const Program program = buildCached(own, kSource, "", prefs, results[t]);
                expectAffineRuns(own, program);
            } catch (const std::exception& e) {
                errors[t] = e.what();
            }
        });
    for (std::thread& t : threads)
        t.join();
    EXPECT_EQ(errors[0] + errors[1], "");
    EXPECT_NE(results[0].cacheHit, results[1].cacheHit) << "both compiled, or neither did";
    EXPECT_EQ(filesEndingIn(dir.path, ".clbin"), 1u);
}

TEST(OpenClProgramCache, BuildErrorsKeepTheSourceAndCacheNothing) {
    DEVICE_OR_SKIP(device);
    TempDir dir;
    const std::string bad = "__kernel void broken(__global int* x) { x[0] = undeclared_name; }\n";
    BuildInfo info;
    const std::string message =
        errorOf<BackendError>([&] { buildCached(*device, bad, "", prefsIn(dir.path), info); });
    expectContains(message, {"undeclared_name", "source kept at", info.sourcePath});
    EXPECT_EQ(readAll(info.sourcePath), bad);
    EXPECT_EQ(filesEndingIn(dir.path, ".clbin"), 0u);
}

TEST(OpenClProgramCache, RefusesABadCompileTimeout) {
    DEVICE_OR_SKIP(device);
    TempDir dir;
    BackendPreferences prefs = prefsIn(dir.path);
    prefs.compileTimeout = -1.0;
    BuildInfo info;
    expectContains(errorOf<ModelError>([&] { buildCached(*device, kSource, "", prefs, info); }),
                   {"compileTimeout"});
}

// opencl is usable exactly when this build has it and discovery finds an available device.
TEST(OpenClStatus, UsableExactlyWhenADeviceExists) {
    bool anyDevice = false;
    for (const PlatformInfo& p : discoverPlatforms())
        for (const DeviceInfo& d : p.devices)
            anyDevice = anyDevice || d.available;
    bool listed = false;
    for (const BackendStatus& b : availableBackends()) {
        if (b.name != "opencl") continue;
        listed = true;
        EXPECT_EQ(b.usable, anyDevice) << b.reason;
        EXPECT_EQ(b.reason.empty(), anyDevice) << b.reason;
        if (!anyDevice) expectContains(b.reason, {"no OpenCL platform/device", "pocl"});
    }
    EXPECT_TRUE(listed);
}
