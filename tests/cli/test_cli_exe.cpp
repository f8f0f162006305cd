// The `spikeforge` executable end to end: exit codes, error output and --json.
#include "exe_support.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace fs = std::filesystem;
using namespace exe;

namespace {

const std::string& tiny = tinyConfig;

} // namespace

TEST(CliExe, BadConfigExitsWith2AndNamesThePosition) {
    const fs::path config = writeConfig(tiny + "sise = 3\n");
    const Result r = run("simulate '" + config.string() + "'");
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_EQ(r.err.rfind("error: " + config.string() + ":19:1: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("unknown key 'sise'"), std::string::npos) << r.err;
    fs::remove(config);
}

TEST(CliExe, BadSetExitsWith2) {
    const fs::path config = writeConfig(tiny);
    const Result r = run("simulate '" + config.string() + "' --set N=3");
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("--set 'N=3': unknown parameter 'N'"), std::string::npos) << r.err;
    fs::remove(config);
}

TEST(CliExe, MissingConfigFileExitsWith2) {
    const Result r = run("simulate /nonexistent/spikeforge.toml");
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("error: /nonexistent/spikeforge.toml: cannot open"), std::string::npos)
        << r.err;
}

TEST(CliExe, UsageErrorsExitWith2) {
    EXPECT_EQ(run("").exitCode, 2);
    EXPECT_EQ(run("simulate").exitCode, 2);
    EXPECT_EQ(run("frobnicate").exitCode, 2);
    EXPECT_EQ(run("simulate x.toml --duration-ms -1").exitCode, 2);
    EXPECT_EQ(run("simulate x.toml --backend no_such_backend").exitCode, 2);
}

TEST(CliExe, HelpExitsZero) {
    const Result r = run("simulate --help");
    EXPECT_EQ(r.exitCode, 0);
    EXPECT_NE(r.out.find("--duration-ms"), std::string::npos) << r.out;
}

TEST(CliExe, InfoJsonExitsZero) {
    const Result r = run("info --json");
    EXPECT_EQ(r.exitCode, 0) << r.err;
    const std::string json = lastLine(r.out);
    ASSERT_FALSE(json.empty());
    EXPECT_EQ(json.front(), '{');
    EXPECT_EQ(json.back(), '}');
    EXPECT_NE(json.find("\"backends\": ["), std::string::npos) << json;
    EXPECT_NE(json.find("\"name\": \"cpu\""), std::string::npos) << json;
    EXPECT_EQ(run("info").exitCode, 0);
}

TEST(CliExe, NoRunLengthExitsWith2) {
    std::string text = tiny;
    text.erase(text.find("duration_ms = 5.0\n"), 18);
    const fs::path config = writeConfig(text);
    const Result r = run("simulate '" + config.string() + "'");
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("--duration-ms"), std::string::npos) << r.err;
    fs::remove(config);
}

// Needs the core library, the cpu backend and a C++ compiler: a real build and run.
TEST(CliExe, SimulateWritesJsonAndCsv) {
    const fs::path config = writeConfig(tiny);
    const fs::path csv = tempPath(".csv");
    const Result r =
        run("simulate '" + config.string() + "' --json --batch 2 --record '" + csv.string() + "'");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const std::string json = lastLine(r.out);
    ASSERT_EQ(json.front(), '{') << r.out;
    for (const char* key :
         {"\"backend\": \"cpu\"", "\"neurons\": 10", "\"synapses\": 0", "\"duration_ms\": 5",
          "\"batch\": 2", "\"build_s\": ", "\"compile_s\": ", "\"cache_hit\": ", "\"init_s\": ",
          "\"sim_wall_s\": ", "\"rates_hz\": {\"R\": ", "\"projection_bytes\": {}"})
        EXPECT_NE(json.find(key), std::string::npos) << key << " missing from " << json;
    const std::size_t spikesAt = json.find("\"spikes\": ");
    ASSERT_NE(spikesAt, std::string::npos);
    const unsigned long spikes = std::stoul(json.substr(spikesAt + 10));
    EXPECT_GT(spikes, 0u);

    std::istringstream rows(readFile(csv));
    std::string line;
    std::getline(rows, line);
    EXPECT_EQ(line, "time_ms,population,neuron,batch");
    unsigned long count = 0;
    while (std::getline(rows, line))
        ++count;
    EXPECT_EQ(count, spikes);
    fs::remove(config);
    fs::remove(csv);
}

// --kernel-timing: each kernel's seconds and launches in the JSON line (50 steps of 0.1 ms: the
// step kernels ran 50 times, initialisation once) and in the table.
TEST(CliExe, KernelTimingIsPrintedPerKernel) {
    const fs::path config = writeConfig(tiny);
    const Result r = run("simulate '" + config.string() + "' --json --kernel-timing");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const std::string json = lastLine(r.out);
    for (const char* key :
         {"\"kernel_s\": {\"initialise\": ", "\"presynaptic_update\": ", "\"neuron_update\": ",
          "\"kernel_launches\": {\"initialise\": 1, "
          "\"presynaptic_update\": 50, "
          "\"neuron_update\": 50}"})
        EXPECT_NE(json.find(key), std::string::npos) << key << " missing from " << json;
    EXPECT_NE(r.out.find("neuron_update"), r.out.rfind("neuron_update")) << "no table: " << r.out;
    const Result plain = run("simulate '" + config.string() + "' --json");
    ASSERT_EQ(plain.exitCode, 0) << plain.err;
    EXPECT_EQ(lastLine(plain.out).find("kernel_s"), std::string::npos) << plain.out;
    fs::remove(config);
}

// Spike-like events from TOML: a user weight update's event condition, recorded with
// record_pre_events and written by --record as population "S.preEvents". The expected events
// follow the Ramp in float arithmetic: v grows by rate * dt each step, an event where v > 0.55
// (before the reset), a spike and reset to 0 where v > 1.
TEST(CliExe, SpikeLikeEventsAreRecordedFromToml) {
    const fs::path config = writeConfig(tiny + R"(
[weight_update_models.W]
pre_event_threshold_condition_code = "v_pre > 0.55"
pre_event_syn_code = "addToPost(1.0);"

[[projections]]
name = "S"
source = "R"
target = "R"
matrix = "dense"
record_pre_events = true
weight_update = { model = "W" }
postsynaptic = { model = "DeltaCurr" }
)");
    const fs::path csv = tempPath(".csv");
    const Result r = run("simulate " + quoted(config) + " --record " + quoted(csv));
    ASSERT_EQ(r.exitCode, 0) << r.err;
    size_t events = 0, spikes = 0;
    std::istringstream lines(readFile(csv));
    std::string line;
    while (std::getline(lines, line)) {
        events += line.find(",S.preEvents,") != std::string::npos;
        spikes += line.find(",R,") != std::string::npos;
    }
    size_t wantEvents = 0, wantSpikes = 0;
    float v = 0.0f;
    for (int step = 0; step < 50; step++) {
        v += 1.0f * 0.1f;
        wantEvents += v > 0.55f;
        if (v > 1.0f) {
            wantSpikes++;
            v = 0.0f;
        }
    }
    EXPECT_GT(wantEvents, 0u);
    EXPECT_EQ(events, 10 * wantEvents) << readFile(csv).substr(0, 400);
    EXPECT_EQ(spikes, 10 * wantSpikes);
    fs::remove(csv);
    fs::remove(config);
}

TEST(CliExe, SnippetErrorFromTheEngineExitsWith2) {
    std::string text = tiny;
    text.replace(text.find("v += rate * dt;"), 15, "v += rate * undefined_name;");
    const fs::path config = writeConfig(text);
    const Result r = run("simulate '" + config.string() + "'");
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("undefined_name"), std::string::npos) << r.err;
    fs::remove(config);
}

// A model that passes every check but needs more memory than the machine has (Dense 2^20 x 2^20
// float weights: 4 TiB) is refused by the runtime before allocating: exit 1 with the sizes, not
// the OOM killer's signal.
TEST(CliExe, ModelBeyondMemoryExitsWith1) {
    std::string text = tiny;
    text.replace(text.find("size = 10"), 9, "size = 1048576");
    text += R"(
[[projections]]
name = "Huge"
source = "R"
target = "R"
matrix = "dense"
weight_update = { model = "StaticPulse", vars = { g = 0.0 } }
postsynaptic = { model = "DeltaCurr" }
)";
    const fs::path config = writeConfig(text);
    const Result r = run("simulate '" + config.string() + "'", 120);
    EXPECT_EQ(r.exitCode, 1) << r.err;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
    for (const char* part :
         {"needs 4.0 TiB", "largest arrays: Huge.g 4.0 TiB", "available", "smaller model"})
        EXPECT_NE(r.err.find(part), std::string::npos) << part << " not in: " << r.err;
    fs::remove(config);
}
