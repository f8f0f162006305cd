// The `spikeforge` executable end to end: exit codes, error output and --json.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

struct Result {
    int exitCode = -1;
    std::string out;
    std::string err;
};

fs::path tempPath(const std::string& suffix) {
    static std::atomic<int> counter{0};
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    return fs::temp_directory_path() / ("sf_exe_" + std::to_string(::getpid()) + "_" +
                                        test->name() + "_" + std::to_string(counter++) + suffix);
}

std::string readFile(const fs::path& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

fs::path writeConfig(const std::string& text) {
    const fs::path path = tempPath(".toml");
    std::ofstream(path) << text;
    return path;
}

// Runs the executable with `args` (already shell-quoted where needed).
Result run(const std::string& args) {
    const fs::path out = tempPath(".out");
    const fs::path err = tempPath(".err");
    const std::string command = std::string("'") + SPIKEFORGE_EXE + "' " + args + " >'" +
                                out.string() + "' 2>'" + err.string() + "'";
    const int status = std::system(command.c_str());
    Result r;
    r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = readFile(out);
    r.err = readFile(err);
    fs::remove(out);
    fs::remove(err);
    return r;
}

std::string lastLine(const std::string& text) {
    std::string trimmed = text;
    while (!trimmed.empty() && trimmed.back() == '\n')
        trimmed.pop_back();
    const std::size_t newline = trimmed.rfind('\n');
    return newline == std::string::npos ? trimmed : trimmed.substr(newline + 1);
}

// A tiny deterministic network: each neuron ramps up and fires about every 1.1 ms.
const std::string tiny = R"([model]
name = "tiny"
dt = 0.1
duration_ms = 5.0

[neuron_models.Ramp]
params = ["rate"]
vars = ["v"]
sim_code = "v += rate * dt;"
threshold_condition_code = "v > 1.0"
reset_code = "v = 0.0;"

[[populations]]
name = "R"
size = 10
model = "Ramp"
params = { rate = 1.0 }
vars = { v = 0.0 }
)";

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
          "\"sim_wall_s\": ", "\"rates_hz\": {\"R\": "})
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
