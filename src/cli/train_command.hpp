#pragma once
// `spikeforge train` and `spikeforge evaluate` (docs/cli.md, docs/training.md "The train
// command").
#include "backend_options.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace spikeforge::cli {

struct TrainCommandOptions {
    std::string config;
    BackendOptions run; // --backend, --device, --threads, --fast-math (backend_options.hpp)
    std::optional<uint32_t> epochs; // overrides [training] epochs
    std::string dataDir;   // base of relative dataset file names; empty = the config's directory
    std::string resumeDir; // train: continue from this checkpoint directory
    std::string checkpointDir;     // evaluate: the checkpoint to evaluate
    std::vector<std::string> sets; // "NAME=VALUE" overrides of [parameters]
    bool json = false;             // end stdout with one JSON line
    bool interactive = false;      // progress bar redrawn in place (stdout is a terminal)
};

// Each returns an exit code (commands.hpp) and reports errors on `err` as "error: <message>".
int runTrain(const TrainCommandOptions& options, std::ostream& out, std::ostream& err);
int runEvaluate(const TrainCommandOptions& options, std::ostream& out, std::ostream& err);

// Adds the `train` and `evaluate` subcommands to `app`. After app.parse, the returned function
// runs the one that was parsed and returns its exit code, or nullopt if neither was.
std::function<std::optional<int>()> addTrainCommands(CLI::App& app);

} // namespace spikeforge::cli
