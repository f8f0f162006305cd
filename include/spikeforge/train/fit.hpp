#pragma once
// The training loop on top of EventPropCompiler (docs/training.md, "Training a network"):
// epochs over a shuffled training set, validation after each epoch, a per-epoch learning-rate
// decay, callbacks (progress bar, metrics CSV, checkpoints) and exact resume from a checkpoint.
#include "spikeforge/train/dataset.hpp"
#include "spikeforge/train/eventprop.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

namespace spikeforge::train {

struct FitOptions {
    // Train epochs [startEpoch, epochs) (fit's startEpoch argument; 0 for a fresh run).
    uint32_t epochs = 1;
    // Epoch e trains on shuffledIndices(trainSize, mixSeed(shuffleSeed, e)): the order depends
    // only on the seed and the epoch number, so a resumed run sees the same orders.
    uint64_t shuffleSeed = 1;
    // The learning rate of epoch e is learningRate * learningRateDecay^e. learningRate is the
    // rate of epoch 0: pass the compiler's EventPropOptions::adam.learningRate.
    double learningRate = 1e-3;
    double learningRateDecay = 1.0;
    // Halving on plateaus (the loss-shaping SHD recipe): after an epoch whose monitored loss
    // (the validation loss, or the training loss without a validation set) is not below the
    // best so far by a relative 1e-4, a counter grows; when it reaches plateauPatience the
    // rate is multiplied by plateauFactor from the next epoch on and the counter restarts.
    // 0: off. The state travels in checkpoints, so a resumed run halves where the
    // uninterrupted one would.
    uint32_t plateauPatience = 0;
    double plateauFactor = 0.5;
    // Same-class blending (the loss-shaping SHD recipe): each epoch trains on the training set
    // plus as many blends of two same-class examples (blendSameClass, each event kept with
    // probability 0.5), drawn afresh every epoch from the shuffle seed and the epoch number and
    // uploaded once per epoch with the rest of the data (nothing per batch).
    bool blend = false;
    // After each epoch's training batches, add this to the input weights of every LIF neuron
    // that did not spike in them (EventPropCompiler::boostSilentNeurons; the loss-shaping
    // paper uses 0.002). 0: off.
    double silentBoost = 0.0;
    // Callbacks hear about progress every this many batches (and at the last batch).
    uint64_t progressEveryBatches = 1;
};

// Where the plateau rule stands after an epoch (FitOptions::plateauPatience).
struct PlateauState {
    double best = 0.0;      // lowest monitored loss so far (meaningless while epochs is 0)
    uint32_t epochs = 0;    // epochs seen
    uint32_t sinceBest = 0; // epochs without improvement since the best or the last halving
    uint32_t halvings = 0;  // the rate is learningRate * decay^epoch * factor^halvings
    bool operator==(const PlateauState&) const = default;
};

// Where fit() starts: the epoch and the plateau rule's state after the epoch before it
// (resumeFromCheckpoint returns both; a plain epoch number starts a fresh rule).
struct ResumePoint {
    ResumePoint(uint32_t epoch = 0, PlateauState plateau = {}) : epoch(epoch), plateau(plateau) {}
    uint32_t epoch;
    PlateauState plateau;
};

// A spiking population's activity in an epoch's training batches.
struct PopulationActivity {
    std::string population;
    double spikesPerNeuron = 0.0; // mean spikes per neuron and training example
    uint64_t silent = 0;          // neurons that did not spike in the whole epoch
};

struct EpochReport {
    uint32_t epoch = 0; // 0-based
    Metrics train;
    std::optional<Metrics> validation;
    double seconds = 0.0;      // [s] wall time of the epoch, validation included
    double learningRate = 0.0; // used in this epoch
    PlateauState plateau;      // after this epoch (what the next epoch's rate follows)
    // [s] device busy time in the epoch (Simulation::deviceBusySeconds; nullopt where the
    // backend cannot measure it): host_fraction = 1 - deviceSeconds / seconds.
    std::optional<double> deviceSeconds;
    // Every LIF and first-spike population, by name (read from the device once per epoch).
    std::vector<PopulationActivity> activity;
};

// The share of the wall time of `reports` spent outside device work (docs/training.md,
// "host_fraction"); nullopt when the backend could not measure its busy time.
std::optional<double> hostFraction(const std::vector<EpochReport>& reports);

// Called by fit() from the training thread. Every hook has an empty default.
class Callback {
public:
    virtual ~Callback() = default;
    // Epochs [firstEpoch, epochs) follow.
    virtual void onTrainBegin(uint32_t /*firstEpoch*/, uint32_t /*epochs*/) {}
    // `examples` training examples follow (in batches of the compiler's batch size).
    virtual void onEpochBegin(uint32_t /*epoch*/, uint64_t /*examples*/) {}
    // Progress within an epoch's training, every FitOptions::progressEveryBatches and at the
    // last batch; `done` batches of `total`. Metrics so far are not read from the device here (that
    // would stall it).
    virtual void onBatchesDone(uint32_t /*epoch*/, uint64_t /*done*/, uint64_t /*total*/) {}
    virtual void onEpochEnd(const EpochReport& /*report*/) {}
    virtual void onTrainEnd(const std::vector<EpochReport>& /*reports*/) {}
};

// Trains `compiler` on `train` for epochs [startEpoch, options.epochs), evaluating on
// `validation` (if given) after each epoch. Both sets are uploaded once, concatenated into one
// dataset (setDataset; it replaces whatever dataset the compiler held). Returns the reports of
// the epochs run. ModelError for an empty training set, a bad option or startEpoch > epochs.
std::vector<EpochReport> fit(EventPropCompiler& compiler, const EventDataset& train,
                             const EventDataset* validation, const FitOptions& options,
                             std::span<Callback* const> callbacks = {}, ResumePoint start = {});

// The plateau rule's state after an epoch whose monitored loss is `loss`.
PlateauState nextPlateauState(const PlateauState& before, double loss, const FitOptions& options);

// `first` followed by `second` as one dataset (same channels; classes and duration the larger).
EventDataset concatenate(const EventDataset& first, const EventDataset& second);

// ---- callbacks ----

// On a terminal (`interactive`): one line redrawn with epoch, batch k/n, examples/s and ETA,
// finished with the epoch's loss and accuracy. Otherwise one plain line per epoch.
class ProgressBar : public Callback {
public:
    ProgressBar(std::ostream& out, bool interactive) : m_out(out), m_interactive(interactive) {}
    void onTrainBegin(uint32_t firstEpoch, uint32_t epochs) override;
    void onEpochBegin(uint32_t epoch, uint64_t examples) override;
    void onBatchesDone(uint32_t epoch, uint64_t done, uint64_t total) override;
    void onEpochEnd(const EpochReport& report) override;

private:
    using Clock = std::chrono::steady_clock;
    std::ostream& m_out;
    bool m_interactive;
    uint32_t m_epochs = 0;
    uint64_t m_examples = 0;
    Clock::time_point m_start, m_lastDraw;
};

// One CSV row per epoch: epoch (1-based: epochs completed), train_loss, train_accuracy,
// validation_loss, validation_accuracy (empty without validation), seconds, learning_rate.
// A fresh run (resumeFrom 0) refuses an existing file; a resumed run (resumeFrom k) needs the
// file with our header, keeps its rows of epochs 1 … k (dropping later ones, which the resumed
// run repeats) and appends. ModelError naming the file otherwise.
class MetricsCsv : public Callback {
public:
    MetricsCsv(std::filesystem::path path, uint32_t resumeFrom = 0);
    void onEpochEnd(const EpochReport& report) override;

    static const char* header();

private:
    std::filesystem::path m_path;
    std::ofstream m_out;
};

// What a checkpoint holds besides the learnable state: where training goes on, and the options
// an exact resume must repeat.
struct CheckpointInfo {
    uint32_t nextEpoch = 0; // epochs completed
    uint64_t shuffleSeed = 0;
    double learningRate = 0.0;
    double learningRateDecay = 0.0;
    uint32_t plateauPatience = 0; // format 2 on; files of format 1 read as 0 (off)
    double plateauFactor = 0.5;
    PlateauState plateau;
    bool blend = false; // FitOptions::blend (format 2 on)
};

// Writes `dir`/checkpoint.sfck after every `everyEpochs`-th epoch and after the last one:
// the compiler's saveState() and a CheckpointInfo, atomically (temporary file, then rename).
// The directory is created if missing; one that holds anything but our files is refused
// (ModelError), so a user's file is never overwritten.
class Checkpoint : public Callback {
public:
    Checkpoint(EventPropCompiler& compiler, std::filesystem::path dir, uint32_t everyEpochs,
               const FitOptions& options);
    void onTrainBegin(uint32_t firstEpoch, uint32_t epochs) override;
    void onEpochEnd(const EpochReport& report) override;

    static constexpr const char* kFileName = "checkpoint.sfck";

private:
    EventPropCompiler& m_compiler;
    std::filesystem::path m_dir;
    uint32_t m_every;
    FitOptions m_options;
    uint32_t m_lastEpoch = 0;
};

// Checks `dir` for the Checkpoint callback: creates it if missing, refuses (ModelError) a path
// that is not a directory or a directory holding files other than ours. Returns whether it
// already holds a checkpoint.
bool prepareCheckpointDir(const std::filesystem::path& dir);

// Writes / reads one checkpoint file. readCheckpoint refuses (ModelError naming the file) a
// missing, truncated or damaged file and one of another format version.
void writeCheckpoint(const std::filesystem::path& file, const CheckpointInfo& info,
                     const std::vector<EventPropCompiler::StateArray>& state);
std::pair<CheckpointInfo, std::vector<EventPropCompiler::StateArray>>
readCheckpoint(const std::filesystem::path& file);

// Loads `dir`'s checkpoint into `compiler` (to evaluate it, say) and returns its info. A
// checkpoint of another network is a ModelError naming the file; the compiler is then unchanged.
CheckpointInfo loadCheckpoint(EventPropCompiler& compiler, const std::filesystem::path& dir);

// Loads `dir`'s checkpoint into `compiler` and returns where to start (pass it to fit). A
// checkpoint of another network, or written with another shuffle seed, learning rate, decay,
// plateau rule or blending than `options` (resuming would not repeat the uninterrupted run), is a
// ModelError naming the file.
ResumePoint resumeFromCheckpoint(EventPropCompiler& compiler, const std::filesystem::path& dir,
                                 const FitOptions& options);

} // namespace spikeforge::train
