#pragma once
// EventPropCompiler's implementation, shared by eventprop_build.cpp (the network becomes a
// spikeforge::Model) and eventprop_compiler.cpp (datasets, batches, weights, state).
#include "spikeforge/simulation.hpp"
#include "spikeforge/train/eventprop.hpp"

#include "train/eventprop_models.hpp"

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace spikeforge::train {

namespace detail {

// Names of the custom updates and their update groups. User names cannot start with "sf", so
// internal names are prefixed "EventProp" and clash only with a user name of that form, which
// the Model then reports.
inline const std::string kTrial = "EventPropTrial";
inline const std::string kLoss = "EventPropLoss";
inline const std::string kReduce = "EventPropReduce";
inline const std::string kAdam = "EventPropAdam";
inline const std::string kSoftmax = "EventPropSoftmax";
inline const std::string kLossValue = "EventPropLossValue";
inline const std::string kTies = "EventPropTies";
inline const std::string kCheck = "EventPropFinite";
inline const std::string kEpochSpikes = "EventPropEpochSpikes";

enum class Mode { Train, Gradients, Evaluate };

// Whether a checkpointed array (EventPropCompiler::Impl::stateArrays) holds uint32_t indices or
// counts rather than scalars.
inline bool isIndexArray(const std::string& var) {
    return var == "updateCount" || var == "blockCol" || var == "blockColStart" ||
           var == "blockColTiles" || var == "pruneRound";
}

// Progress calls (and waits for the device) per trainEpoch/evaluate call at most.
inline constexpr uint64_t kProgressPoints = 20;

} // namespace detail

struct EventPropCompiler::Impl {
    using Mode = detail::Mode;
    using StateArray = EventPropCompiler::StateArray;

    Network network;
    EventPropOptions options;
    std::unique_ptr<Model> model;
    std::unique_ptr<Simulation> sim;
    std::string input, readout;
    std::vector<std::string> selectUpdates;
    std::vector<std::string> lifPopulations;
    size_t datasetSize = 0;
    uint64_t trialsRun = 0;
    bool backward = true;           // false: InferenceCompiler (forward half only)
    std::set<std::string> recorded; // populations whose spikes evaluate records
    // Recorded spikes of the last run: [population][position in the call's example list].
    std::map<std::string, std::vector<std::vector<SpikeEvent>>> spikes;
    // Recorded variables (population, variable) and their values of the last run:
    // ["pop.var"][position][step * size + neuron].
    std::vector<std::pair<std::string, std::string>> recordedVars;
    std::map<std::string, std::vector<std::vector<double>>> variables;

    Impl(const Network& net, const EventPropOptions& opt) : network(net), options(opt) {}

    // The arrays a checkpoint keeps: every weight, Adam moment and Adam step counter, and a
    // pruned connection's block index and pruning round.
    std::vector<std::pair<std::string, std::string>> stateArrays() const;
    // The positions of a connection's synapses in its [source][target] matrix, in storage
    // order (Sparse rows are padded to the row stride: padding slots map to SIZE_MAX).
    // A per-synapse scalar of a connection as a dense [source][target] matrix (0 where a
    // Sparse connection has no synapse).
    std::vector<double> pullMatrix(const std::string& connection, const std::string& var);
    const Connection& connection(const std::string& name) const;

    void checkNetwork();
    double tauSynOf(const std::string& pop) const;
    double tauMemOf(const Population& p) const;
    // The distinct kinds of target of a population's outgoing connections, in connection order,
    // and the kind of one connection's target (eventprop_models.hpp).
    std::vector<detail::TargetKind> targetKinds(const std::string& pop) const;
    detail::TargetKind targetKindOf(const Connection& c) const;
    ParamValues lifParams(const std::string& name, const LifParams& lif) const;
    VarInitMap lifVars(const std::string& name) const;
    void addPopulation(const Population& p);
    void addConnection(const Connection& c);
    void addTies(const std::string& var);
    void addCustomUpdates();
    void build(const BackendPreferences& prefs);
    static uint32_t bufferSize(const Population& p);
    // Sets an int array of the model to zero (a host write, once per call, not per batch).
    void zeroInts(const std::string& group, const std::string& var);
    // Spikes that did not fit in a LIF population's rings since the last call: an error naming
    // the population and the count (the gradients of those examples would be wrong).
    void checkDropped();
    // Gradients or weights that were NaN or Inf in this call (batches from `firstCheck` on):
    // an error naming each connection and the first batch (finiteCheckModel).
    void checkFinite(uint64_t firstCheck);
    uint64_t checksRun = 0; // batches whose reduced gradients were checked, since the build
    // Training batches run since the build (or as loaded with a checkpoint's Adam step count):
    // the clock of the connections' pruning schedules (BlockPruning).
    uint64_t trainBatches = 0;
    // Batches until the next connection's pruning is due (UINT64_MAX: none prunes), and the
    // pruning of every connection due after trainBatches.
    uint64_t batchesToNextPruning() const;
    void pruneDueConnections();
    // Sets the per-batch accumulators of the loss update to zero.
    void clearAccumulators();
    void zeroScalars(const std::string& group, const std::string& var);
    std::vector<double> pullScalars(const std::string& group, const std::string& var);
    Metrics readAccumulators(uint64_t examples);
    // Uploads the trial order (padded with -1 to whole batches) and points the example
    // selection at its start.
    uint64_t uploadOrder(std::span<const uint32_t> examples, Mode mode);
    uint64_t augmentSeed = 0; // setAugmentationSeed
    SpikeCounts takeTrainingSpikeCounts();
    uint64_t boostSilentNeurons(double amount, const SpikeCounts& counts);
    // One batch as a schedule: the device runs it without the host touching any number
    // (Simulation::run(Schedule): one CUDA graph per batch on cuda with cudaGraphSteps >= 2T).
    Schedule batchSchedule(Mode mode) const;
    Metrics run(std::span<const uint32_t> examples, Mode mode, const Progress& progress = {});
    // A forward-only run that records spikes: per batch the host reads the recording.
    // Recordings of evaluate() (the options' recordSpikes / recordVariables, named in errors as
    // `optionsName`): checked before the model is built (populations) and after (variables).
    void chooseRecordings(const std::vector<std::string>& spikes,
                          const std::vector<std::string>& variables,
                          const std::string& optionsName);
    void checkRecordedVariables();
    const std::vector<std::vector<SpikeEvent>>& recordedSpikes(const std::string& population) const;
    const std::vector<std::vector<double>>& recordedVariables(const std::string& name) const;
    std::string recordingOptions; // "InferenceOptions" or "EventPropOptions", for errors
    void recordVariables(size_t examples, uint64_t first);
    void runRecorded(std::span<const uint32_t> examples, uint64_t batches,
                     const Progress& progress);
    void setDataset(const EventDataset& data);
    void setWeights(const std::string& connection, std::span<const double> values);
    void loadState(const std::vector<StateArray>& state);
};

} // namespace spikeforge::train
