// Inputs of a config beyond the model: SpikeSourceArray spike times (inline and from a CSV file),
// extra global parameters a config cannot give, and the limits on the files that are read.
#include "config.hpp"
#include "config_parts.hpp"
#include "input_file.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace spikeforge;
using namespace spikeforge::cli;
namespace fs = std::filesystem;

namespace {

// A SpikeSourceArray population of 3 neurons; each test replaces SPIKES with its input.
const std::string source = R"([model]
dt = 0.1

[[populations]]
name = "In"
size = 3
model = "SpikeSourceArray"
SPIKES
)";

std::string withSpikes(const std::string& spikes) {
    std::string text = source;
    return text.replace(text.find("SPIKES"), 6, spikes);
}

// A directory of its own for each test, removed at the end.
class TempDir {
public:
    TempDir() {
        static std::atomic<int> counter{0};
        const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
        m_path = fs::temp_directory_path() / ("sf_inputs_" + std::to_string(::getpid()) + "_" +
                                              test->name() + "_" + std::to_string(counter++));
        fs::create_directories(m_path);
    }
    ~TempDir() { fs::remove_all(m_path); }
    fs::path write(const std::string& name, const std::string& text) const {
        std::ofstream(m_path / name) << text;
        return m_path / name;
    }
    const fs::path& path() const { return m_path; }

private:
    fs::path m_path;
};

// "LINE:COLUMN" of the first `needle` in `text`.
std::string positionOf(const std::string& text, const std::string& needle) {
    const std::size_t at = text.find(needle);
    if (at == std::string::npos) {
        ADD_FAILURE() << "test bug: '" << needle << "' is not in the config";
        return "?";
    }
    const std::size_t lineStart = text.rfind('\n', at);
    const std::size_t column = lineStart == std::string::npos ? at + 1 : at - lineStart;
    const auto line = 1 + std::count(text.begin(), text.begin() + at, '\n');
    return std::to_string(line) + ":" + std::to_string(column);
}

// Loads the config expecting a ConfigError that starts with `prefix` and contains each part.
void expectError(const fs::path& config, const std::string& prefix,
                 const std::vector<std::string>& parts) {
    try {
        loadConfig(config.string());
        ADD_FAILURE() << "no error for " << config;
    } catch (const ConfigError& e) {
        const std::string message = e.what();
        EXPECT_EQ(message.rfind(prefix, 0), 0u) << "expected " << prefix << "\n got " << message;
        for (const std::string& part : parts)
            EXPECT_NE(message.find(part), std::string::npos) << part << " not in " << message;
    }
}

// Expects an error at the position of `needle` in the config text.
void expectErrorAt(const std::string& text, const std::string& needle,
                   const std::vector<std::string>& parts) {
    const TempDir dir;
    const fs::path config = dir.write("c.toml", text);
    expectError(config, config.string() + ":" + positionOf(text, needle) + ": ", parts);
}

} // namespace

// ---- inline spike times ---------------------------------------------------------------------

TEST(SpikeTimes, InlineListsArePackedAndSortedPerNeuron) {
    const TempDir dir;
    const Config cfg =
        loadConfig(dir.write("c.toml", withSpikes("spike_times = [[5.0, 1.0], [], [2.5]]")));
    ASSERT_EQ(cfg.spikeSources.size(), 1u);
    const SpikeSourceInput& in = cfg.spikeSources[0];
    EXPECT_EQ(in.population, "In");
    EXPECT_EQ(in.size, 3u);
    EXPECT_EQ(in.neurons, (std::vector<uint32_t>{0, 0, 2}));
    std::vector<uint32_t> start(3, 99), end(3, 99);
    in.fillRanges(start, end);
    EXPECT_EQ(start, (std::vector<uint32_t>{0, 2, 2}));
    EXPECT_EQ(end, (std::vector<uint32_t>{2, 2, 3}));
    EXPECT_EQ(in.spikeTimes, (std::vector<double>{1.0, 5.0, 2.5}));
    EXPECT_TRUE(cfg.inputFiles.empty());
}

TEST(SpikeTimes, InlineTimesMayBeParameterExpressions) {
    const TempDir dir;
    std::string text = withSpikes("spike_times = [[\"2*T\"], [\"T\"], []]");
    text += "[parameters]\nT = 1.5\n";
    const Config cfg = loadConfig(dir.write("c.toml", text));
    ASSERT_EQ(cfg.spikeSources.size(), 1u);
    EXPECT_EQ(cfg.spikeSources[0].spikeTimes, (std::vector<double>{3.0, 1.5}));
}

TEST(SpikeTimes, InlineNeedsOneListPerNeuron) {
    const std::string text = withSpikes("spike_times = [[1.0], [2.0]]");
    expectErrorAt(text, "[[1.0]", {"population 'In': spike_times", "3 lists", "got 2"});
}

TEST(SpikeTimes, InlineNegativeTimeIsRefusedAtItsPosition) {
    const std::string text = withSpikes("spike_times = [[1.0], [-2.0], []]");
    expectErrorAt(text, "-2.0", {"spike_times[1][0]", ">= 0", "-2"});
}

TEST(SpikeTimes, InlineInfiniteTimeIsRefused) {
    const std::string text = withSpikes("spike_times = [[1.0], [], [inf]]");
    expectErrorAt(text, "inf", {"spike_times[2][0]", "finite"});
}

TEST(SpikeTimes, InlineNonNumberIsRefused) {
    const std::string text = withSpikes("spike_times = [[1.0], [true], []]");
    expectErrorAt(text, "true", {"spike_times[1][0]", "got a boolean"});
}

// ---- an EGP the config does not give --------------------------------------------------------

TEST(SpikeTimes, MissingSpikeTimesNameThePopulationAndTheEgp) {
    const std::string text = withSpikes("");
    expectErrorAt(text, "\"SpikeSourceArray\"",
                  {"population 'In'", "'spikeTimes'", "spike_times", "spike_times_file"});
}

TEST(SpikeTimes, VarsOfASpikeSourceArrayAreRefused) {
    const std::string text =
        withSpikes("spike_times = [[], [], []]\nvars = { startSpike = 0, endSpike = 1 }");
    expectErrorAt(text, "{ startSpike", {"population 'In': vars", "startSpike"});
}

TEST(SpikeTimes, SpikeTimesOnAnotherModelAreRefused) {
    const std::string text = R"([model]
dt = 0.1
[[populations]]
name = "P"
size = 1
model = "Poisson"
params = { rate = 10.0 }
vars = { timeStepToSpike = 0.0 }
spike_times = [[1.0]]
)";
    expectErrorAt(text, "[[1.0]]", {"population 'P': spike_times", "SpikeSourceArray"});
}

TEST(SpikeTimes, InlineAndFileTogetherAreRefused) {
    const std::string text =
        withSpikes("spike_times = [[], [], []]\nspike_times_file = \"in.csv\"");
    expectErrorAt(text, "\"in.csv\"", {"population 'In'", "not both"});
}

// Models whose EGPs a config cannot give (none of the built-ins but SpikeSourceArray has one):
// the check names the group and the EGP.
TEST(SpikeTimes, AnEgpAConfigCannotGiveIsAnError) {
    NeuronModel model;
    model.name = "Table";
    model.egps = {EGPDecl{"table", "scalar"}, EGPDecl{"other", "scalar"}};
    const toml::table root = toml::parse("x = 1\n");
    const Reader r("c.toml");
    try {
        checkEgpsGiven(r, *root.get("x"), "population 'P'", model, "neuron model 'Table'",
                       {"table"});
        FAIL() << "an EGP the config cannot give was accepted";
    } catch (const ConfigError& e) {
        const std::string message = e.what();
        EXPECT_EQ(message.rfind("c.toml:1:5: population 'P': neuron model 'Table'", 0), 0u)
            << message;
        EXPECT_NE(message.find("'other'"), std::string::npos) << message;
    }
    EXPECT_NO_THROW(
        checkEgpsGiven(r, *root.get("x"), "population 'P'", model, "m", {"table", "other"}));
}

// ---- spike times from a file ----------------------------------------------------------------

TEST(SpikeTimes, FileRowsAreReadRelativeToTheConfig) {
    const TempDir dir;
    fs::create_directories(dir.path() / "data");
    const fs::path csv =
        dir.write("data/in.csv", "neuron,time_ms\n# a comment\n2, 4.5\n0,3.0\r\n\n0,1.25\n");
    const fs::path config = dir.write("c.toml", withSpikes("spike_times_file = \"data/in.csv\""));
    const Config cfg = loadConfig(config.string());
    ASSERT_EQ(cfg.spikeSources.size(), 1u);
    const SpikeSourceInput& in = cfg.spikeSources[0];
    EXPECT_EQ(in.size, 3u);
    EXPECT_EQ(in.neurons, (std::vector<uint32_t>{0, 0, 2}));
    std::vector<uint32_t> start(3, 99), end(3, 99);
    in.fillRanges(start, end);
    EXPECT_EQ(start, (std::vector<uint32_t>{0, 2, 2}));
    EXPECT_EQ(end, (std::vector<uint32_t>{2, 2, 3}));
    EXPECT_EQ(in.spikeTimes, (std::vector<double>{1.25, 3.0, 4.5}));
    ASSERT_EQ(cfg.inputFiles.size(), 1u);
    EXPECT_TRUE(fs::equivalent(cfg.inputFiles[0], csv));
}

TEST(SpikeTimes, FileErrorsNameTheFileAndLine) {
    const TempDir dir;
    const fs::path config = dir.write("c.toml", withSpikes("spike_times_file = \"in.csv\""));
    const std::string csv = (dir.path() / "in.csv").string();
    const auto check = [&](const std::string& rows, const std::string& where,
                           const std::vector<std::string>& parts) {
        dir.write("in.csv", rows);
        expectError(config, csv + ":" + where + ": population 'In': ", parts);
    };
    check("neuron,time_ms\n0,1.0\n3,2.0\n", "3", {"neuron 3 does not exist", "3 neurons"});
    check("0,1.0\n1,-0.5\n", "2", {">= 0", "-0.5"});
    check("0,abc\n", "1", {"time 'abc'", "finite"});
    check("0,nan\n", "1", {"time 'nan'", "finite"});
    check("\n\n-1,1.0\n", "3", {"neuron '-1'"});
    check("0;1.0\n", "1", {"expected a row 'neuron,time_ms'"});
    check("0,1.0,2\n", "1", {"expected a row"});
    check("0,1.0\nneuron,time_ms\n", "2", {"neuron 'neuron'"}); // a header only comes first
}

TEST(SpikeTimes, MissingFileIsReportedAtTheKey) {
    const std::string text = withSpikes("spike_times_file = \"missing.csv\"");
    expectErrorAt(text, "\"missing.csv\"", {"spike_times_file", "cannot open", "missing.csv"});
}

TEST(SpikeTimes, FifoAsSpikeFileIsRefusedWithoutBlocking) {
    const TempDir dir;
    ASSERT_EQ(::mkfifo((dir.path() / "in.csv").c_str(), 0600), 0);
    const std::string text = withSpikes("spike_times_file = \"in.csv\"");
    const fs::path config = dir.write("c.toml", text);
    expectError(config, config.string() + ":" + positionOf(text, "\"in.csv\"") + ": ",
                {"cannot read", "FIFO"});
}

// ---- limits on the files that are read ------------------------------------------------------

TEST(InputFiles, OnlyRegularFilesAreRead) {
    const TempDir dir;
    ASSERT_EQ(::mkfifo((dir.path() / "fifo").c_str(), 0600), 0);
    const auto reason = [](const std::string& path) -> std::string {
        try {
            readInputFile(path);
        } catch (const InputFileError& e) {
            return e.what();
        }
        return "read";
    };
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(reason((dir.path() / "fifo").string()), "it is a FIFO (named pipe)");
    EXPECT_EQ(reason("/dev/zero"), "it is a device");
    EXPECT_EQ(reason(dir.path().string()), "it is a directory");
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
    EXPECT_EQ(reason(dir.write("ok.toml", "abc").string()), "read");
    EXPECT_EQ(readInputFile(dir.write("ok.toml", "abc").string()), "abc");
}

TEST(InputFiles, SizeLimitIsExact) {
    const TempDir dir;
    const fs::path file = dir.write("f", std::string(100, 'x'));
    EXPECT_EQ(readInputFile(file.string(), 100).size(), 100u);
    try {
        readInputFile(file.string(), 99);
        FAIL() << "a file over the limit was read";
    } catch (const InputFileError& e) {
        EXPECT_NE(std::string(e.what()).find("larger than the limit of 99 bytes"),
                  std::string::npos)
            << e.what();
        EXPECT_FALSE(e.atOpen());
    }
}

TEST(InputFiles, ConfigOverTheLimitIsRefusedUnread) {
    const TempDir dir;
    const fs::path config = dir.write("big.toml", "");
    fs::resize_file(config, maxInputFileBytes + 1); // sparse: nothing is written
    expectError(config, config.string() + ": cannot read the config file: ",
                {"larger than the limit", "16 MiB"});
    fs::resize_file(config, 0);
    std::ofstream(config) << "[model]\ndt = 0.1\n[[populations]]\nname = \"P\"\nsize = 1\n"
                             "model = \"SpikeSourceArray\"\nspike_times = [[]]\n";
    EXPECT_NO_THROW(loadConfig(config.string()));
}

TEST(InputFiles, DeviceAndDirectoryAsConfig) {
    const TempDir dir;
    expectError("/dev/zero", "/dev/zero: cannot read the config file: it is a device", {});
    expectError(dir.path(),
                dir.path().string() + ": cannot read the config file: it is a directory", {});
}

TEST(ConfigLimits, BatchIsBounded) {
    const std::string text = "[model]\ndt = 0.1\nbatch = 65537\n[[populations]]\nname = \"P\"\n"
                             "size = 1\nmodel = \"SpikeSourceArray\"\nspike_times = [[]]\n";
    expectErrorAt(text, "65537", {"model: batch", "between 1 and 65536"});
}

// ---- engine errors get the group's position in the file ------------------------------------

TEST(ConfigFinalise, EngineErrorIsPlacedAtTheGroupItNames) {
    const std::string text = R"([model]
dt = 0.1
[neuron_models.Bad]
vars = ["v"]
sim_code = "v += undefined_name;"
[neuron_models.Good]
vars = ["v"]
sim_code = "v += 1.0;"
[[populations]]
name = "P"
size = 1
model = "Good"
vars = { v = 0.0 }
[[populations]]
name = "XP"
size = 1
model = "Bad"
vars = { v = 0.0 }
)";
    const TempDir dir;
    const fs::path config = dir.write("c.toml", text);
    Config cfg = loadConfig(config.string());
    try {
        finaliseModel(cfg);
        FAIL() << "finalise accepted an unknown name";
    } catch (const ConfigError& e) {
        const std::string message = e.what();
        // "XP", not "P" (a suffix of it): the entry at line 15.
        EXPECT_EQ(message.rfind(config.string() + ":15:8: ", 0), 0u) << message;
        EXPECT_NE(message.find("undefined_name"), std::string::npos) << message;
    }
}

TEST(ConfigLimits, SetValuesMustBeFinite) {
    const TempDir dir;
    const fs::path config =
        dir.write("c.toml", withSpikes("spike_times = [[], [], []]") + "[parameters]\nT = 1.0\n");
    for (const std::string value : {"inf", "-inf", "nan", "1e999"}) {
        try {
            loadConfig(config.string(), {"T=" + value});
            ADD_FAILURE() << "--set T=" << value << " was accepted";
        } catch (const ConfigError& e) {
            EXPECT_NE(std::string(e.what()).find("'" + value + "' is not a number"),
                      std::string::npos)
                << e.what();
        }
    }
    EXPECT_NO_THROW(loadConfig(config.string(), {"T=1e300"}));
}

TEST(ConfigLimits, DtMustBeFiniteAndPositive) {
    for (const auto& [dt, part] :
         std::vector<std::pair<std::string, std::string>>{{"0", "greater than 0"},
                                                          {"-0.1", "greater than 0"},
                                                          {"inf", "finite"},
                                                          {"nan", "finite"},
                                                          {"\"0.1 - 0.1\"", "greater than 0"}}) {
        std::string text = withSpikes("spike_times = [[], [], []]");
        text.replace(text.find("dt = 0.1"), 8, "dt = " + dt);
        expectErrorAt(text, dt, {"model: dt", part});
    }
}
