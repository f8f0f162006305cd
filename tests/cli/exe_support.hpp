#pragma once
// Running the built `spikeforge` executable from a test: exit code, stdout and stderr.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace exe {

namespace fs = std::filesystem;

struct Result {
    int exitCode = -1; // -1: killed by a signal
    std::string out;
    std::string err;
};

// A temporary path unique to the running test.
inline fs::path tempPath(const std::string& suffix) {
    static std::atomic<int> counter{0};
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    return fs::temp_directory_path() / ("sf_exe_" + std::to_string(::getpid()) + "_" +
                                        test->name() + "_" + std::to_string(counter++) + suffix);
}

inline std::string readFile(const fs::path& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

inline fs::path writeConfig(const std::string& text) {
    const fs::path path = tempPath(".toml");
    std::ofstream(path) << text;
    return path;
}

// Runs the executable with `args` (already shell-quoted where needed), killed after
// `timeoutSeconds` so that a hang fails the test instead of blocking it. `environment` is
// prepended to the command ("NAME=VALUE ...").
inline Result run(const std::string& args, int timeoutSeconds = 300,
                  const std::string& environment = "") {
    const fs::path out = tempPath(".out");
    const fs::path err = tempPath(".err");
    const std::string command = environment + " timeout -s KILL " + std::to_string(timeoutSeconds) +
                                " '" + SPIKEFORGE_EXE + "' " + args + " >'" + out.string() +
                                "' 2>'" + err.string() + "'";
    const int status = std::system(command.c_str());
    Result r;
    r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = readFile(out);
    r.err = readFile(err);
    fs::remove(out);
    fs::remove(err);
    return r;
}

inline std::string lastLine(const std::string& text) {
    std::string trimmed = text;
    while (!trimmed.empty() && trimmed.back() == '\n')
        trimmed.pop_back();
    const std::size_t newline = trimmed.rfind('\n');
    return newline == std::string::npos ? trimmed : trimmed.substr(newline + 1);
}

// A tiny deterministic network: each neuron ramps up and fires about every 1.1 ms.
inline const std::string tinyConfig = R"([model]
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

inline std::string quoted(const fs::path& path) {
    return "'" + path.string() + "'";
}

} // namespace exe
