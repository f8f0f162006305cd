// The executable and its files: SpikeSourceArray input (inline and CSV) reproduced in the
// recorded spikes, --record refusing to overwrite, configs that are not regular files, run
// lengths, --version and parser errors.
#include "exe_support.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <regex>
#include <sys/stat.h>

using namespace exe;

namespace {

// Three sources; neuron 2 is given one time twice (it spikes in two successive steps).
const std::string sources = R"([model]
name = "sources"
dt = 0.1
duration_ms = 10.0
batch = 2

[[populations]]
name = "In"
size = 3
model = "SpikeSourceArray"
SPIKES
)";

std::string withSpikes(const std::string& spikes) {
    std::string text = sources;
    return text.replace(text.find("SPIKES"), 6, spikes);
}

struct Row {
    long step; // time_ms / dt
    unsigned neuron;
    unsigned batch;
    auto operator<=>(const Row&) const = default;
};

// The rows of a --record CSV of population In, as steps of 0.1 ms, sorted.
std::vector<Row> readRows(const fs::path& csv) {
    std::istringstream lines(readFile(csv));
    std::string line;
    std::getline(lines, line);
    EXPECT_EQ(line, "time_ms,population,neuron,batch");
    std::vector<Row> rows;
    while (std::getline(lines, line)) {
        double time = 0.0;
        unsigned neuron = 0, batch = 0;
        char population[16] = {};
        EXPECT_EQ(
            std::sscanf(line.c_str(), "%lf,%15[^,],%u,%u", &time, population, &neuron, &batch), 4)
            << line;
        EXPECT_STREQ(population, "In");
        const double step = time / 0.1;
        EXPECT_NEAR(step, std::round(step), 1e-6) << line;
        rows.push_back({std::lround(step), neuron, batch});
    }
    std::sort(rows.begin(), rows.end());
    return rows;
}

// A time T is emitted in the first step whose time t = step * dt is >= T, and recorded with
// that step's time (docs/config.md): 1.05 → 1.1 ms, 2.55 → 2.6 ms (and 2.7 ms for the second
// copy), 5.05 → 5.1 ms; neuron 1 never spikes; both batch elements replay the same times.
std::vector<Row> expectedRows() {
    std::vector<Row> rows;
    for (unsigned b = 0; b < 2; ++b)
        for (const Row& r : {Row{11, 0, b}, Row{51, 0, b}, Row{26, 2, b}, Row{27, 2, b}})
            rows.push_back(r);
    std::sort(rows.begin(), rows.end());
    return rows;
}

void expectSpikes(const fs::path& config, const std::string& extra = "") {
    const fs::path csv = tempPath(".csv");
    const Result r = run("simulate " + quoted(config) + " --record " + quoted(csv) + extra);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(readRows(csv), expectedRows());
    fs::remove(csv);
}

} // namespace

// Needs the cpu backend and a C++ compiler (both tests build the same model: one compile).
TEST(CliSpikeSource, InlineTimesAreReplayed) {
    const fs::path config =
        writeConfig(withSpikes("spike_times = [[5.05, 1.05], [], [2.55, 2.55]]"));
    expectSpikes(config);
    fs::remove(config);
}

TEST(CliSpikeSource, FileTimesAreReplayed) {
    const fs::path dir = tempPath("");
    fs::create_directories(dir);
    std::ofstream(dir / "times.csv") << "neuron,time_ms\n2,2.55\n0,5.05\n2,2.55\n0,1.05\n";
    std::ofstream(dir / "c.toml") << withSpikes("spike_times_file = \"times.csv\"");
    expectSpikes(dir / "c.toml");
    // The spike-time file is an input: never overwritten.
    const Result r = run("simulate " + quoted(dir / "c.toml") + " --force --record " +
                         quoted(dir / "." / "times.csv"));
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("is the input file"), std::string::npos) << r.err;
    EXPECT_NE(readFile(dir / "times.csv").find("2,2.55\n0,5.05"), std::string::npos);
    fs::remove_all(dir);
}

TEST(CliSpikeSource, MissingSpikeTimesIsAnErrorNotACrash) {
    const fs::path config = writeConfig(withSpikes(""));
    const Result r = run("simulate " + quoted(config));
    fs::remove(config);
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_NE(r.err.find("population 'In'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("'spikeTimes'"), std::string::npos) << r.err;
}

// ---- --record and --force -------------------------------------------------------------------

TEST(CliRecord, RecordOntoTheConfigIsRefusedEvenWithForce) {
    const fs::path config = writeConfig(tinyConfig);
    // Another name of the same file: found by identity, not by path.
    const fs::path alias = config.parent_path() / "." / config.filename();
    for (const std::string force : {"", " --force"}) {
        const Result r = run("simulate " + quoted(config) + " --record " + quoted(alias) + force);
        EXPECT_EQ(r.exitCode, 2) << force;
        EXPECT_EQ(r.err.rfind("error: --record", 0), 0u) << r.err;
        EXPECT_EQ(readFile(config), tinyConfig) << "the config was changed";
    }
    fs::remove(config);
}

TEST(CliRecord, ExistingFileNeedsForce) {
    const fs::path config = writeConfig(tinyConfig);
    const fs::path csv = tempPath(".csv");
    std::ofstream(csv) << "keep me\n";
    const Result refused = run("simulate " + quoted(config) + " --record " + quoted(csv));
    EXPECT_EQ(refused.exitCode, 2);
    EXPECT_NE(refused.err.find("--force"), std::string::npos) << refused.err;
    EXPECT_EQ(readFile(csv), "keep me\n");

    const Result forced =
        run("simulate " + quoted(config) + " --record " + quoted(csv) + " --force");
    ASSERT_EQ(forced.exitCode, 0) << forced.err;
    const std::string rows = readFile(csv);
    EXPECT_EQ(rows.rfind("time_ms,population,neuron,batch\n", 0), 0u) << rows;
    EXPECT_EQ(rows.find("keep me"), std::string::npos);
    EXPECT_NE(rows.find(",R,"), std::string::npos) << rows;
    fs::remove(config);
    fs::remove(csv);
}

TEST(CliRecord, FailedRunLeavesNoFile) {
    // A model no earlier run compiled (a unique constant) and a compiler that always fails: the
    // run fails after the CSV file was created.
    std::string text = tinyConfig;
    text.replace(text.find("rate = 1.0"), 10, "rate = 1." + std::to_string(::getpid()));
    const fs::path config = writeConfig(text);
    const fs::path csv = tempPath(".csv");
    const Result r =
        run("simulate " + quoted(config) + " --record " + quoted(csv), 300, "CXX=false");
    EXPECT_EQ(r.exitCode, 1) << r.err;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
    EXPECT_FALSE(fs::exists(csv));
    fs::remove(config);
}

TEST(CliRecord, EngineErrorsNameTheGroupsPositionInTheConfig) {
    std::string text = tinyConfig;
    text.replace(text.find("v += rate * dt;"), 15, "v += undefined_name;");
    const fs::path config = writeConfig(text);
    const Result r = run("simulate " + quoted(config));
    EXPECT_EQ(r.exitCode, 2) << r.err;
    // [[populations]] name = "R" is on line 14, the value at column 8.
    EXPECT_EQ(r.err.rfind("error: " + config.string() + ":14:8: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("undefined_name"), std::string::npos) << r.err;
    fs::remove(config);
}

TEST(CliRecord, UnwritablePathExitsWith1) {
    const fs::path config = writeConfig(tinyConfig);
    const Result r = run("simulate " + quoted(config) + " --record /nonexistent/dir/out.csv");
    EXPECT_EQ(r.exitCode, 1) << r.err;
    EXPECT_NE(r.err.find("cannot write '/nonexistent/dir/out.csv'"), std::string::npos) << r.err;
    fs::remove(config);
}

// ---- configs that are not regular files ------------------------------------------------------

TEST(CliInputs, FifoAndDeviceConfigsAreRefusedQuickly) {
    const fs::path fifo = tempPath(".toml");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const auto start = std::chrono::steady_clock::now();
    const Result fromFifo = run("simulate " + quoted(fifo), 20);
    const Result fromZero = run("simulate /dev/zero", 20);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
    fs::remove(fifo);
    EXPECT_EQ(fromFifo.exitCode, 2) << fromFifo.err;
    EXPECT_NE(fromFifo.err.find("FIFO"), std::string::npos) << fromFifo.err;
    EXPECT_EQ(fromZero.exitCode, 2) << fromZero.err;
    EXPECT_NE(fromZero.err.find("error: /dev/zero: cannot read the config file: it is a device"),
              std::string::npos)
        << fromZero.err;
}

// ---- run length ------------------------------------------------------------------------------

TEST(CliRunLength, ZeroStepsExitWith2NamingTheValue) {
    const fs::path config = writeConfig(tinyConfig);
    const Result option = run("simulate " + quoted(config) + " --duration-ms 0.04");
    EXPECT_EQ(option.exitCode, 2);
    EXPECT_NE(option.err.find("--duration-ms 0.04 ms with dt = 0.1 ms gives 0 time steps"),
              std::string::npos)
        << option.err;
    std::string text = tinyConfig;
    text.replace(text.find("duration_ms = 5.0"), 17, "duration_ms = 0.01");
    const fs::path short_ = writeConfig(text);
    const Result fromConfig = run("simulate " + quoted(short_));
    EXPECT_EQ(fromConfig.exitCode, 2);
    EXPECT_NE(fromConfig.err.find("duration_ms = 0.01 ms"), std::string::npos) << fromConfig.err;
    fs::remove(config);
    fs::remove(short_);
}

TEST(CliRunLength, TooManyStepsExitWith2) {
    const fs::path config = writeConfig(tinyConfig);
    const Result r = run("simulate " + quoted(config) + " --duration-ms 1e12");
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("more than 2^40 time steps"), std::string::npos) << r.err;
    fs::remove(config);
}

// ---- command line ------------------------------------------------------------------------------

TEST(CliOptions, VersionPrintsTheProjectVersion) {
    const std::string cmake = readFile(std::string(SPIKEFORGE_SOURCE_DIR) + "/CMakeLists.txt");
    std::smatch match;
    ASSERT_TRUE(
        std::regex_search(cmake, match, std::regex(R"(project\(spikeforge VERSION ([0-9.]+))")));
    const Result r = run("--version");
    EXPECT_EQ(r.exitCode, 0);
    EXPECT_EQ(r.out, "spikeforge " + match[1].str() + "\n");
}

TEST(CliOptions, ParserErrorsAreOneErrorLineWithExit2) {
    for (const std::string args :
         {"simulate x.toml --frobnicate", "simulate x.toml --batch", "simulate x.toml --batch x",
          "simulate x.toml --batch 0", "simulate x.toml --batch 65537",
          "simulate x.toml --threads -1", "simulate x.toml --compile-timeout -1",
          "simulate x.toml --cuda-graph-steps -1", "simulate x.toml --cuda-graph-steps 10001",
          "simulate x.toml --duration-ms nan", "frobnicate", ""}) {
        const Result r = run(args);
        EXPECT_EQ(r.exitCode, 2) << args;
        EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << args << ": " << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
        EXPECT_EQ(r.out, "") << args;
    }
}

TEST(CliOptions, CompileTimeoutZeroIsAccepted) {
    // Parsed and applied before the config is read: a missing config is then the only error.
    const Result r = run("simulate /nonexistent/x.toml --compile-timeout 0");
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("cannot open the config file"), std::string::npos) << r.err;
}

// A delay beyond the dendritic ring is found by the engine (at finalise or while running): the
// error is placed at the projection's name in the config.
TEST(CliRecord, RunTimeEngineErrorsAreAlsoPlaced) {
    const std::string text = R"([model]
dt = 1.0
duration_ms = 5.0
[[populations]]
name = "Src"
size = 1
model = "SpikeSourceArray"
spike_times = [[0.5]]
[[populations]]
name = "Tgt"
size = 1
model = "LIF"
params = { C = 1.0, TauM = 20.0, Vrest = -65.0, Vreset = -65.0, Vthresh = -50.0, Ioffset = 0.0, TauRefrac = 2.0 }
vars = { V = -65.0, RefracTime = 0.0 }
[[projections]]
name = "Syn"
source = "Src"
target = "Tgt"
matrix = "dense"
max_dendritic_delay_steps = 3
weight_update = { model = "StaticPulseDendriticDelay", vars = { g = 1.0, d = 5 } }
postsynaptic = { model = "DeltaCurr" }
)";
    const fs::path config = writeConfig(text);
    const Result r = run("simulate " + quoted(config));
    fs::remove(config);
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_EQ(r.err.rfind("error: " + config.string() + ":16:8: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("Syn"), std::string::npos) << r.err;
}

// Text from a config or a data file reaches the terminal without control characters, and a
// long CSV field is cut short in the message.
TEST(CliOptions, ErrorsCarryNoControlCharacters) {
    const fs::path dir = tempPath("");
    fs::create_directories(dir);
    std::ofstream(dir / "t.csv") << "0,1.0\n" << std::string(5000, 'x') << "\x1b[2J,1\n";
    std::ofstream(dir / "c.toml") << withSpikes("spike_times_file = \"t.csv\"");
    const Result fromCsv = run("simulate " + quoted(dir / "c.toml"));
    EXPECT_EQ(fromCsv.exitCode, 2) << fromCsv.err;
    EXPECT_NE(fromCsv.err.find("t.csv:2: population 'In': neuron 'xxxx"), std::string::npos)
        << fromCsv.err;
    EXPECT_LT(fromCsv.err.size(), 300u);

    std::ofstream(dir / "k.toml") << tinyConfig << "\"bad\\u001b[31mkey\" = 1\n";
    const Result fromKey = run("simulate " + quoted(dir / "k.toml"));
    EXPECT_EQ(fromKey.exitCode, 2) << fromKey.err;
    EXPECT_EQ(fromKey.err.find('\x1b'), std::string::npos) << fromKey.err;
    EXPECT_NE(fromKey.err.find("bad\\x1b[31mkey"), std::string::npos) << fromKey.err;
    EXPECT_EQ(std::count(fromKey.err.begin(), fromKey.err.end(), '\n'), 1) << fromKey.err;
    fs::remove_all(dir);
}

TEST(CliSpikeSource, TimesAfterTheRunAreWarnedAbout) {
    const fs::path config =
        writeConfig(withSpikes("spike_times = [[5.05, 1.05], [], [2.55, 2.55]]"));
    // 30 steps: the last at 2.9 ms; 5.05 is never reached.
    const Result r = run("simulate " + quoted(config) + " --duration-ms 3");
    fs::remove(config);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.err.find("warning: population 'In': 1 of 4 spike times are after the last step "
                         "of the run (2.9 ms)"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.out.find("In                             3             6"), std::string::npos)
        << r.out;
}
