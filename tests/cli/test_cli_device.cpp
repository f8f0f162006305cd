// `spikeforge simulate --backend opencl [--device SEL]` through the built executable: the device
// selector reaches the backend, a wrong one is a usage error naming the flag, and a run on
// opencl gives the same spikes as on cpu for a model whose arithmetic cannot differ.
#include "exe_support.hpp"

#include <gtest/gtest.h>

#include <string>

using namespace exe;

namespace {

// The value of `"key": <value>` in a JSON line, up to the next comma or brace ("" if absent).
std::string jsonValue(const std::string& json, const std::string& key) {
    const std::string tag = "\"" + key + "\": ";
    const size_t at = json.find(tag);
    if (at == std::string::npos) return "";
    const size_t start = at + tag.size();
    const size_t end = json.find_first_of(",}", start);
    return json.substr(start, end - start);
}

// Whether `spikeforge info --json` calls the opencl backend usable, with its reason.
bool openclUsable(std::string& reason) {
    const Result info = run("info --json", 60);
    const std::string json = lastLine(info.out);
    const size_t at = json.find("{\"name\": \"opencl\"");
    if (info.exitCode != 0 || at == std::string::npos) {
        reason = "`spikeforge info --json` failed or lists no opencl backend: " + info.err;
        return false;
    }
    const std::string entry = json.substr(at, json.find('}', at) - at);
    reason = "opencl is not usable here: " + entry;
    return jsonValue(entry + "}", "usable") == "true";
}

} // namespace

TEST(CliDevice, DeviceWithTheCpuBackendIsAUsageError) {
    const fs::path config = writeConfig(tinyConfig);
    const Result r = run("simulate " + quoted(config) + " --device 0:0");
    fs::remove(config);
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_NE(r.err.find("--device '0:0'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--backend cpu"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
}

// In a build without OpenCL the message says so; with it, it lists the devices found. Either way
// it names the flag and the run stops before anything is built.
TEST(CliDevice, SelectorMatchingNothingIsAUsageErrorNamingTheFlag) {
    const fs::path config = writeConfig(tinyConfig);
    const Result r =
        run("simulate " + quoted(config) + " --backend opencl --device no-such-device-42");
    fs::remove(config);
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_EQ(r.err.rfind("error: --device 'no-such-device-42': ", 0), 0u) << r.err;
    EXPECT_EQ(r.out, "");
}

TEST(CliDevice, ThreadsWithTheOpenclBackendIsAUsageError) {
    const fs::path config = writeConfig(tinyConfig);
    const Result r = run("simulate " + quoted(config) + " --backend opencl --threads 3");
    fs::remove(config);
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_EQ(r.err.rfind("error: --threads 3 ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("--backend opencl"), std::string::npos) << r.err;
}

// train and evaluate check the backend options as simulate does (one definition,
// src/cli/backend_options.cpp), before the config is read: the config named here does not exist.
TEST(CliDevice, TrainAndEvaluateCheckTheBackendOptionsAsSimulateDoes) {
    for (const char* command : {"train", "evaluate --checkpoint ckpt"}) {
        const std::string head = std::string(command) + " no-such-config.toml";
        Result r = run(head + " --backend opencl --threads 3");
        EXPECT_EQ(r.exitCode, 2) << r.err;
        EXPECT_EQ(r.err.rfind("error: --threads 3 ", 0), 0u) << r.err;
        r = run(head + " --device 0:0");
        EXPECT_EQ(r.exitCode, 2) << r.err;
        EXPECT_EQ(r.err.rfind("error: --device '0:0' ", 0), 0u) << r.err;
        r = run(head + " --backend openlc");
        EXPECT_EQ(r.exitCode, 2) << r.err;
        EXPECT_EQ(r.err.rfind("error: unknown backend 'openlc'", 0), 0u) << r.err;
        EXPECT_NE(r.err.find("opencl"), std::string::npos) << r.err;
        EXPECT_EQ(r.out, "");
    }
}

TEST(CliDevice, CudaGraphStepsWithAnotherBackendIsAUsageError) {
    const fs::path config = writeConfig(tinyConfig);
    for (const char* backend : {"cpu", "opencl"}) {
        const Result r =
            run("simulate " + quoted(config) + " --backend " + backend + " --cuda-graph-steps 64");
        EXPECT_EQ(r.exitCode, 2) << r.err;
        EXPECT_EQ(r.err.rfind("error: --cuda-graph-steps 64 ", 0), 0u) << r.err;
        EXPECT_NE(r.err.find(std::string("--backend ") + backend), std::string::npos) << r.err;
        EXPECT_EQ(r.out, "");
    }
    fs::remove(config);
}

TEST(CliDevice, HelpListsTheOption) {
    const Result r = run("simulate --help");
    EXPECT_EQ(r.exitCode, 0);
    EXPECT_NE(r.out.find("--device"), std::string::npos) << r.out;
}

// The ramp model adds the same float each step in the same order on every backend (no atomics,
// no contraction), so cpu and opencl must give exactly the same spike counts; the selector 0:0
// (the first device `spikeforge info` lists) must be accepted.
TEST(CliDevice, OpenclRunMatchesCpu) {
    std::string reason;
    if (!openclUsable(reason)) GTEST_SKIP() << reason;
    const fs::path config = writeConfig(tinyConfig);
    const Result cpu = run("simulate " + quoted(config) + " --json");
    const Result ocl = run("simulate " + quoted(config) + " --backend opencl --device 0:0 --json");
    fs::remove(config);
    ASSERT_EQ(cpu.exitCode, 0) << cpu.err;
    ASSERT_EQ(ocl.exitCode, 0) << ocl.err;
    const std::string c = lastLine(cpu.out), o = lastLine(ocl.out);
    EXPECT_EQ(jsonValue(o, "backend"), "\"opencl\"") << o;
    EXPECT_NE(jsonValue(c, "spikes"), "0") << c; // the comparison below must compare something
    EXPECT_EQ(jsonValue(o, "spikes"), jsonValue(c, "spikes")) << c << "\n" << o;
    EXPECT_EQ(o.substr(o.find("\"spike_counts\"")), c.substr(c.find("\"spike_counts\"")));
}
