#pragma once
// The `spikeforge` command: `info`, `simulate`, `train` and `evaluate` (usage: docs/cli.md).
#include "backend_options.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace spikeforge::cli {

// Exit codes.
constexpr int exitOk = 0;
constexpr int exitFailure = 1; // backend, toolchain or I/O failure
constexpr int exitUsage = 2;   // bad command line, bad config or a model the engine rejects

struct SimulateOptions {
    std::string config; // path of the TOML config
    BackendOptions run; // --backend, --device, --threads, … (backend_options.hpp)
    std::optional<double> durationMs; // [ms] overrides [model] duration_ms
    std::optional<unsigned> batch;    // overrides [model] batch
    std::string recordPath;                      // CSV of every recorded spike; empty = none
    bool force = false;                          // --record may overwrite an existing file
    std::vector<std::string> sets;               // "NAME=VALUE" overrides of [parameters]
    bool json = false;                           // end stdout with one JSON line
};

// "error: <message>" on `err`, control characters other than newlines shown as \xNN.
void printError(std::ostream& err, std::string_view message);
// Runs a command, turning what it throws into an `error:` line and an exit code: the input's
// mistakes (ModelError, ConfigError, UsageError) 2, the machine's failures 1.
int runGuarded(std::ostream& err, const std::function<int()>& command);

// Each returns an exit code and reports errors on `err` as "error: <message>".
int runInfo(bool json, std::ostream& out, std::ostream& err);
int runSimulate(const SimulateOptions& options, std::ostream& out, std::ostream& err);

// Parses the command line and runs the chosen subcommand.
int runCli(int argc, char** argv);

} // namespace spikeforge::cli
