#pragma once
// The training loop on top of EventPropCompiler (docs/training.md, "Training a network"):
// epochs over a shuffled training set, validation after each epoch, a per-epoch learning-rate
// decay, callbacks (progress bar, metrics CSV, checkpoints) and exact resume from a checkpoint.
#include "spikeforge/train/dataset.hpp"
#include "spikeforge/train/eventprop.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace spikeforge::train {

struct FitOptions {
    uint32_t epochs = 1;
    // Epoch e trains on shuffledIndices(trainSize, mix(shuffleSeed, e)): the order depends only
    // on the seed and the epoch number, so a resumed run sees the same orders.
    uint64_t shuffleSeed = 1;
    // The learning rate of epoch e is adam.learningRate * learningRateDecay^e.
    double learningRateDecay = 1.0;
};

struct EpochReport {
    uint32_t epoch = 0; // 0-based
    Metrics train;
    std::optional<Metrics> validation;
    double seconds = 0.0;      // wall time of the epoch, validation included
    double learningRate = 0.0; // used in this epoch
};

// Called by fit() from the training thread. Every hook has an empty default.
class Callback {
public:
    virtual ~Callback() = default;
    virtual void onTrainBegin(uint32_t firstEpoch, uint32_t epochs) {}
    virtual void onEpochBegin(uint32_t epoch, uint64_t batches) {}
    // Progress within an epoch, at most every progressInterval (fit's argument); `done` batches
    // of `total`. Metrics so far are not read from the device here (that would stall it).
    virtual void onBatchesDone(uint32_t epoch, uint64_t done, uint64_t total) {}
    virtual void onEpochEnd(const EpochReport& report) {}
    virtual void onTrainEnd(const std::vector<EpochReport>& reports) {}
};

} // namespace spikeforge::train
