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

// Shd, Ssc: the published files (20 and 35 classes); Hdf5: any file in their layout.
enum class DatasetKind { YinYang, Shd, Ssc, SyntheticShd, Hdf5 };

// Where the examples come from.
struct DatasetConfig {
    DatasetKind kind = DatasetKind::YinYang;
    // yinyang, synthetic_shd: generated sets of these sizes from these seeds.
    uint64_t trainSize = 0, validationSize = 0, testSize = 0;
    uint64_t trainSeed = 0, validationSeed = 0, testSeed = 0;
    // shd, ssc, hdf5: HDF5 files in the SHD layout. The validation set is validationFile, or split
    // off the training file (validationSize examples picked with validationSeed). Optional files
    // are empty names.
    // Relative names are resolved against dataDir (loadTrainData's argument) when given, else
    // against the config's directory (configDir).
    std::string trainFile, validationFile, testFile, configDir;
    uint64_t maxExamples = 0; // 0 = all
    double durationMs = 0.0;  // [ms] crop (shd/ssc), trial length (synthetic); 0 = default
    double meanSpikes = 0.0;  // synthetic_shd: spikes per example; 0 = default
    // hdf5: num_classes (0 = from the training file: extra/keys, else largest label + 1) and
    // num_channels (0 = the spike_input population's size, which it must equal when given).
    uint32_t numClasses = 0, numChannels = 0;
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
// ModelErrors/BackendErrors naming the file. The HDF5 kinds read the training file first; the
// validation and test files must have its class count. `trialMs` (example_timesteps × dt; 0:
// no check) is the part of each example the network sees: when duration_ms is not given, a file
// with most events later than that gets a warning.
struct TrainData {
    train::EventDataset train;
    std::optional<train::EventDataset> validation, test; // absent: size 0 or no file
    std::string classesFrom; // where the class count came from, for messages ("" generated)
    std::vector<std::string> warnings; // each names its file; the commands print them to stderr
};
// The readout EventProp trains (the LeakyIntegrate or FirstSpikeReadout population; nullptr if
// none).
const train::Population* readoutPopulation(const train::Network& net);

TrainData loadTrainData(const DatasetConfig& d, uint32_t numChannels,
                        const std::string& dataDir = "", double trialMs = 0.0);

} // namespace spikeforge::cli
