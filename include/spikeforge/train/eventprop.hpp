#pragma once
// EventProp training (Wunderlich & Pehle 2021; docs/training.md): exact gradients of a loss on
// the readout through spiking layers, computed on the device in batches. The compiler turns a
// Network into one spikeforge::Model whose neuron code runs the forward pass (recording each
// LIF neuron's spikes in a per-neuron ring buffer) and then, in the same group, the backward
// pass (adjoint variables integrated back in time with jumps at the recorded spikes); custom
// updates compute the loss, sum the gradients over the batch and apply Adam. The dataset lives
// on the device; each example of a batch is picked there from an index uploaded once per epoch.
#include "spikeforge/simulation.hpp"
#include "spikeforge/train/dataset.hpp"
#include "spikeforge/train/network.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace spikeforge::train {

struct AdamParams {
    double learningRate = 1e-3;
    double beta1 = 0.9;
    double beta2 = 0.999;
    double epsilon = 1e-8;
    // Warm-up (the loss-shaping paper's ease-in): with warmupStart > 0 the rate of batch t (the
    // Adam step counter on the device, kept in checkpoints) is min(learning rate,
    // warmupStart * warmupFactor^(t-1)); no host work per batch. 0 turns it off.
    double warmupStart = 0.0;
    double warmupFactor = 1.05;
};

// The loss on a LeakyIntegrate readout. SparseCategoricalCrossEntropy: of softmax(R) at the
// label, for the SumVar, AvgVar, AvgVarExpWeight and MaxVar readouts. MeanSquaredError: of V
// at every step against the one-hot label, (1/2T) sum_t sum_k (V_k(t) - y_k)^2, for the Var
// readout (correct = the label's output has the largest mean V). A FirstSpikeReadout has its own
// loss and takes SparseCategoricalCrossEntropy.
enum class Loss { SparseCategoricalCrossEntropy, MeanSquaredError };

// The largest exampleTimesteps: the models count up to 2T steps in 32-bit signed integers.
inline constexpr uint32_t kMaxExampleTimesteps = 1u << 30;

struct EventPropOptions {
    uint32_t exampleTimesteps = 0; // T: steps of one example (forward; the backward takes T more)
    double dt = 1.0;               // [ms]
    uint32_t batchSize = 32;
    Precision precision = Precision::Float;
    uint64_t seed = 1234; // weight initialisation
    AdamParams adam;
    Loss loss = Loss::SparseCategoricalCrossEntropy;
    // Recorders of evaluate() (fit's validation included), as InferenceOptions's: populations
    // whose spikes and "population.variable"s whose values after every step are kept per
    // example; read with spikes() / variables(). Training batches are never recorded.
    std::vector<std::string> recordSpikes;
    std::vector<std::string> recordVariables;
    // Augmentation (training batches only; the loss-shaping paper's): each example is shifted
    // by a whole number of channels drawn uniformly from [-channelShift, channelShift] on the
    // device (channels pushed past an edge are dropped). 0: off.
    uint32_t channelShift = 0;
};

// Totals over the examples of one call. The loss is the sparse categorical cross-entropy of the
// softmax of the readout, summed over the examples (its gradient is the sum of the examples'
// gradients, so a batch of B gives the sum of B single-example gradients). An example is correct
// when the readout of its label is the largest.
struct Metrics {
    double loss = 0.0; // summed over the examples
    uint64_t correct = 0;
    uint64_t examples = 0;
    double meanLoss() const { return examples ? loss / double(examples) : 0.0; }
    double accuracy() const { return examples ? double(correct) / double(examples) : 0.0; }
};

class EventPropCompiler {
public:
    // Builds and compiles the model for `network` (ModelError for a network EventProp cannot
    // train: no readout, a readout that is not the last layer, …). Of `prefs`,
    // keepInitialState is always on and errorCheckInterval is not used: device errors are read
    // at the end of each call below and at its progress points, so that a batch is one stretch
    // of device work with no host wait inside or between batches.
    EventPropCompiler(const Network& network, const EventPropOptions& options,
                      const BackendPreferences& prefs = {});
    ~EventPropCompiler();
    EventPropCompiler(const EventPropCompiler&) = delete;
    EventPropCompiler& operator=(const EventPropCompiler&) = delete;

    // Uploads the examples once; every call below names examples by their index in `data`.
    // Its channel count must match the SpikeInput population and its classes the readout.
    void setDataset(const EventDataset& data);

    // Called between batches with (batches done, batches in total), at most 20 times per call
    // (each call waits for the device: between them the batches run back to back); it must not
    // touch the simulation.
    using Progress = std::function<void(uint64_t done, uint64_t total)>;

    // One epoch: the examples in `order`, in batches of batchSize (the last one may be short),
    // each batch a forward pass, the loss, a backward pass and one Adam step.
    Metrics trainEpoch(std::span<const uint32_t> order, const Progress& progress = {});
    // Forward passes only; the weights do not change.
    Metrics evaluate(std::span<const uint32_t> examples, const Progress& progress = {});
    // One batch (at most batchSize examples) without a weight update: afterwards gradient()
    // holds d(loss summed over the batch)/d(weight).
    Metrics computeGradients(std::span<const uint32_t> batch);

    // The recordings of the last evaluate(): per example in the order given, as
    // InferenceCompiler::spikes / variables. ModelError for what is not recorded.
    const std::vector<std::vector<SpikeEvent>>& spikes(const std::string& population) const;
    const std::vector<std::vector<double>>& variables(const std::string& name) const;

    // Weights of a connection [source][target], row-major, and the gradient of the last
    // computeGradients (same layout); 0 where a Sparse connection has no synapse. ModelError for
    // an unknown connection, a wrong length or (setWeights) a nonzero weight where there is no
    // synapse.
    std::vector<double> weights(const std::string& connection);
    void setWeights(const std::string& connection, std::span<const double> values);
    std::vector<double> gradient(const std::string& connection);
    void setLearningRate(double rate);
    // The seed of the augmentation's random draws from the next call on (fit() sets it from the
    // epoch, so a resumed run draws the same shifts).
    void setAugmentationSeed(uint64_t seed);
    // Spikes of each neuron of every spiking population (LIF, first-spike readout), summed over
    // the training batches since the last call; the counters restart at 0. One read from the
    // device per call (fit() calls it once per epoch).
    using SpikeCounts = std::map<std::string, std::vector<double>>;
    SpikeCounts takeTrainingSpikeCounts();
    // Adds `amount` to every weight from the SpikeInput onto each LIF neuron that emitted no
    // spike in `counts` (the loss-shaping paper's boost of silent neurons, once per epoch);
    // returns how many neurons were boosted. Without `counts` it takes them itself.
    uint64_t boostSilentNeurons(double amount);
    uint64_t boostSilentNeurons(double amount, const SpikeCounts& counts);

    // The learnable state — every weight, Adam moment and Adam step counter — as named byte
    // arrays, for checkpoints. loadState checks every name and size before writing anything
    // (ModelError naming the first mismatch), so a checkpoint of another network is refused.
    struct StateArray {
        std::string name; // "<group>.<variable>"
        std::vector<uint8_t> bytes;
    };
    std::vector<StateArray> saveState();
    void loadState(const std::vector<StateArray>& state);

    Simulation& simulation();
    const Network& network() const;
    const EventPropOptions& options() const;

    struct Impl;

private:
    std::unique_ptr<Impl> m_impl;
};

} // namespace spikeforge::train
