#pragma once
// TOML training configs (docs/training.md, "The train command") → a Network, EventProp and fit
// options, the datasets and the outputs. Every mistake is a ConfigError at the key's position.
#include "config.hpp"

#include "spikeforge/train/eventprop.hpp"
#include "spikeforge/train/fit.hpp"
#include "spikeforge/train/network.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace spikeforge::cli {

enum class DatasetKind { YinYang, Shd, Ssc, SyntheticShd };

// Where the examples come from.
struct DatasetConfig {
    DatasetKind kind = DatasetKind::YinYang;
    // yinyang, synthetic_shd: generated sets of these sizes from these seeds.
    uint64_t trainSize = 0, validationSize = 0, testSize = 0;
    uint64_t trainSeed = 0, validationSeed = 0, testSeed = 0;
    // shd, ssc: the published HDF5 files. The validation set is validationFile, or split off
    // the training file (validationSize examples picked with validationSeed). Optional files
    // are empty names.
    // Relative names are resolved against dataDir (loadTrainData's argument) when given, else
    // against the config's directory (configDir).
    std::string trainFile, validationFile, testFile, configDir;
    uint64_t maxExamples = 0; // 0 = all
    double durationMs = 0.0;  // [ms] crop (shd/ssc), trial length (synthetic); 0 = default
    double meanSpikes = 0.0;  // synthetic_shd: spikes per example; 0 = default
};

struct TrainConfig {
    std::string file;
    train::Network network;
    train::EventPropOptions eventprop;
    train::FitOptions fit;
    DatasetConfig dataset;
    std::string checkpointDir; // empty = no checkpoints
    uint32_t checkpointEvery = 1;
    std::string metricsCsv; // empty = none
};

// Reads and checks a training config; `overrides` are --set "NAME=VALUE" for [parameters].
TrainConfig loadTrainConfig(const std::string& path, const std::vector<std::string>& overrides);
// The same from text; `sourceName` is FILE in diagnostics and the base of relative paths.
TrainConfig parseTrainConfig(std::string_view text, const std::string& sourceName,
                             const std::vector<std::string>& overrides = {});

// The sets a config describes. Errors of the generators and the HDF5 reader are
// ModelErrors/BackendErrors naming the file.
struct TrainData {
    train::EventDataset train;
    std::optional<train::EventDataset> validation, test; // absent: size 0 or no file
};
TrainData loadTrainData(const DatasetConfig& d, uint32_t numChannels,
                        const std::string& dataDir = "");

} // namespace spikeforge::cli
