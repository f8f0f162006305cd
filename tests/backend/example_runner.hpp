#pragma once
// Runs an example config (examples/*.toml) the way `spikeforge simulate` does — loadConfig with
// --set overrides, finaliseModel, Simulation, applyInputs, a recording window over the whole
// run — and hands back every recorded population's spikes. Shared by the model tests
// (test_microcircuit.cpp, test_cross_backend.cpp).
#include "cli/config.hpp"
#include "spikeforge/simulation.hpp"

#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace sftest {

inline std::string examplePath(const std::string& file) {
    return std::string(SPIKEFORGE_SOURCE_DIR) + "/examples/" + file;
}

// A loaded, built and initialised example, ready to run.
struct ExampleRun {
    spikeforge::cli::Config config;
    std::unique_ptr<spikeforge::Simulation> sim;
    uint64_t steps = 0; // of the last run()

    // An example from examples/ with --set overrides; batch 0 keeps the config's batch size.
    ExampleRun(const std::string& file, const std::vector<std::string>& sets,
               const spikeforge::BackendPreferences& prefs, unsigned batch = 0)
        : ExampleRun(spikeforge::cli::loadConfig(examplePath(file), sets), prefs, batch) {}

    // A config given as text (a test's own network).
    static ExampleRun fromText(const std::string& toml, const spikeforge::BackendPreferences& prefs,
                               unsigned batch = 0) {
        return ExampleRun(spikeforge::cli::parseConfig(toml, "test.toml"), prefs, batch);
    }

    ExampleRun(spikeforge::cli::Config loaded, const spikeforge::BackendPreferences& prefs,
               unsigned batch)
        : config(std::move(loaded)) {
        if (batch != 0) config.model->setBatchSize(batch);
        spikeforge::cli::finaliseModel(config);
        sim = std::make_unique<spikeforge::Simulation>(*config.model, prefs);
        spikeforge::cli::applyInputs(*sim, config);
    }

    // Runs durationMs [ms] (0: the config's duration_ms) with every recorded population
    // recorded; returns the spikes.
    std::map<std::string, std::vector<spikeforge::SpikeEvent>> run(double durationMs = 0.0) {
        const double ms = durationMs > 0.0 ? durationMs : *config.durationMs;
        steps = static_cast<uint64_t>(std::llround(ms / config.model->dt()));
        sim->setRecordingWindow(steps);
        sim->run(steps);
        sim->pullRecording();
        std::map<std::string, std::vector<spikeforge::SpikeEvent>> out;
        for (const auto& group : config.model->neuronGroups())
            if (group->spikeRecording()) out[group->name()] = sim->spikes(group->name());
        return out;
    }
};

} // namespace sftest
