#pragma once
// TOML network configs → spikeforge::Model. The schema is documented in docs/config.md.
#include "spikeforge/errors.hpp"
#include "spikeforge/model.hpp"
#include "spikeforge/simulation.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace spikeforge::cli {

// A mistake in a config file or in a --set option. The message always starts with the file
// name, and with "FILE:LINE:COLUMN: " whenever the mistake has a place in the file; it then names
// the section or group and the key.
class ConfigError : public ModelError {
public:
    // line and column are 1-based; 0 means "no position" (e.g. a bad --set option). A line
    // without a column (a CSV file) prints as FILE:LINE.
    ConfigError(std::string file, unsigned line, unsigned column, const std::string& what);

    const std::string& file() const { return m_file; }
    unsigned line() const { return m_line; }
    unsigned column() const { return m_column; }

private:
    std::string m_file;
    unsigned m_line;
    unsigned m_column;
};

// The spike times of a SpikeSourceArray population, sorted by neuron, then time. Memory follows
// the number of spikes, not the population size.
struct SpikeSourceInput {
    std::string population;
    unsigned size = 0;              // neurons
    std::vector<uint32_t> neurons;  // per spike, ascending
    std::vector<double> spikeTimes; // per spike [ms]

    // The built-in model's layout for one batch element: neuron i emits
    // spikeTimes[start[i] .. end[i]). Both spans have `size` elements.
    void fillRanges(std::span<uint32_t> start, std::span<uint32_t> end) const;
};

// A loaded config: the model (not yet finalised) and the run settings that are not part of it.
// Spike recording is already switched on for every population with record_spikes = true.
struct Config {
    std::string file;
    std::unique_ptr<Model> model;
    std::optional<double> durationMs;           // [ms] default run length ([model] duration_ms)
    std::map<std::string, double> parameters;   // [parameters] after --set and evaluation
    std::vector<SpikeSourceInput> spikeSources; // set on the Simulation by applyInputs
    std::vector<std::string> inputFiles;        // files read besides the config (spike times)
    // Where each group (population, projection, current source) is named in the file.
    struct Position {
        unsigned line = 0, column = 0;
    };
    std::map<std::string, Position> groupPositions;
};

// Reads and checks a config file. `overrides` are "NAME=VALUE" strings from --set; each must
// name an entry of [parameters] and give a number. Throws ConfigError; what Model::add* rejects
// is rethrown as a ConfigError at the offending entry. The model is not finalised here (the CLI
// may still change its batch size); Model::finalise reports snippet errors as ModelError.
Config loadConfig(const std::string& path, const std::vector<std::string>& overrides = {});

// Largest batch size a config or --batch may ask for.
constexpr unsigned maxBatchSize = 65536;

// The same from text in memory; `sourceName` is used as FILE in diagnostics.
Config parseConfig(std::string_view text, const std::string& sourceName,
                   const std::vector<std::string>& overrides = {});

// Rethrows an engine error that names a group as a ConfigError at the position of that group's
// name in the file; any other error unchanged. Call it only from the handler catching `e`. (The
// engine checks what the loader does not: parameter domains, code strings, connectivity and delays
// at initialisation and run time.)
[[noreturn]] void rethrowAtGroup(const Config& cfg, const ModelError& e);

// Model::finalise, its errors placed with rethrowAtGroup.
void finaliseModel(Config& cfg);

// Gives a built Simulation what the config holds outside the model: the spike times of every
// SpikeSourceArray population (the same for every batch element).
void applyInputs(Simulation& sim, const Config& cfg);

} // namespace spikeforge::cli
