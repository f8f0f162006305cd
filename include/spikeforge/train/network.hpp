#pragma once
// A network to train, described as mlGeNN describes one (docs/training.md): populations
// (spike input, LIF, leaky-integrate readout) and connections between them. It is only a
// description: a compiler (EventPropCompiler) turns it into a spikeforge::Model with the forward
// and backward dynamics. Every check that needs only the description is made when an item is
// added (ModelError naming the population or connection).
#include "spikeforge/snippets.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace spikeforge::train {

// How a readout population turns its membrane voltage V over an example of T steps into the
// value R the loss sees.
enum class Readout {
    SumVar,          // R = sum over the steps of V
    AvgVar,          // R = (1/T) sum of V
    AvgVarExpWeight, // R = (1/T) sum of exp(-(k+1)/T) V_k: late steps count less
    MaxVar,          // R = the largest V over the steps
    Var,             // V at every step, for the mean squared error loss (EventPropOptions::loss)
};
const char* readoutName(Readout r);

// A population of spike sources fed from a dataset: neuron c emits the events of channel c of
// the current example, at most one spike per step (events are binned to the step they fall in).
// With a delay line (the loss-shaping paper's) the population has numChannels * (1 +
// delayCopies) neurons: copy d (neurons d * numChannels ...) emits the events delayed by
// d * delayStep [ms].
struct SpikeInputParams {
    uint32_t numChannels = 0;
    uint32_t delayCopies = 0;
    double delayStep = 30.0; // [ms]
};

// Leaky integrate-and-fire neurons with a current synapse (Wunderlich & Pehle 2021):
// tauMem dV/dt = -V + I, a spike when V reaches vThresh, then V -> 0.
struct LifParams {
    double tauMem = 20.0;           // [ms]
    double vThresh = 1.0;           // [threshold units]
    uint32_t spikeBufferSize = 500; // spikes one neuron may emit in one example (EventProp ring)
    // Spike-count regularisation (Nowotny, Turner & Knight): pulls each neuron's batch-mean
    // spike count towards regTarget with strength regStrength (0: off).
    double regStrength = 0.0;
    double regTarget = 14.0; // [spikes per example]
};

// Leaky integrators that never spike, read out by `readout`.
struct LeakyIntegrateParams {
    double tauMem = 20.0; // [ms]
    Readout readout = Readout::AvgVar;
};

// LIF readout trained on the time of each neuron's first spike t_k (Wunderlich & Pehle's
// Yin-Yang loss): cross-entropy of softmax(-t_k / tau0) at the label plus
// alpha * (exp(t_label / tau1) - 1); outputs that never spike are left out of the softmax. An
// example is correct when the label's neuron spikes first. Spike times are interpolated within
// the step, so small dt (<< tau0) pays off.
struct FirstSpikeReadoutParams {
    LifParams lif;
    double tau0 = 0.5; // [ms]
    double tau1 = 6.4; // [ms]
    double alpha = 3e-3;
    // A label output that does not spike has no spike time to learn from: its loss is then
    // silentPush * (vThresh - its largest V), which pushes that voltage up (0: no push, and the
    // output may stay silent for good).
    double silentPush = 1.0;
};

enum class PopulationKind { SpikeInput, Lif, LeakyIntegrate, FirstSpikeReadout };

struct Population {
    std::string name;
    PopulationKind kind;
    uint32_t size;
    SpikeInputParams input;             // SpikeInput only
    LifParams lif;                      // Lif only
    LeakyIntegrateParams li;            // LeakyIntegrate only
    FirstSpikeReadoutParams firstSpike; // FirstSpikeReadout only
};

// Initial weights: normal with `mean` and `sd` (sd 0: every weight is `mean`).
struct WeightInit {
    double mean = 0.0;
    double sd = 0.0;
};

// How a spike acts on its target. Exponential: a current synapse, tauSyn dI/dt = -I, I += w at a
// spike. Delta: V += w at a spike. Delta connections may only target a LeakyIntegrate readout: a
// LIF neuron driven by jumps crosses its threshold only at a jump, where the EventProp jump is
// undefined (its slope there is not the input's).
enum class Synapse { Exponential, Delta };

// Block pruning and regrowth while a BlockSparse connection trains (RigL, Evci et al. 2020, at
// block level): after every `everyBatches`-th training batch, the tiles of smallest weight norm
// are removed and as many grown at random block-columns their block-rows do not hold (weights
// from the connection's initialiser, Adam moments reset; Simulation::pruneBlocks), on the
// device between batches. The share removed at batch t is `fraction` while untilBatch is 0;
// else RigL's cosine decay, fraction x (1 + cos(pi t / untilBatch)) / 2, and none from
// untilBatch on.
struct BlockPruning {
    uint32_t everyBatches = 100;
    double fraction = 0.1; // (0, 1]
    uint64_t untilBatch = 0;
};
// Tiles to prune after training batch `batch` (counted from 1) of a connection of `tiles` tiles:
// 0 unless batch is a multiple of everyBatches; else the share at that batch, rounded.
uint32_t tilesToPrune(const BlockPruning& p, uint64_t tiles, uint64_t batch);

// A projection. Every connection into one population must have the same synapse kind and (for
// Exponential) the same tauSyn. probability 1 connects every
// source to every target (Dense); below 1 each pair is connected independently with that
// probability (Sparse: only the synapses that exist are stored, updated and trained).
struct ConnectionParams {
    WeightInit weights;
    double tauSyn = 5.0;      // [ms] (Exponential)
    double probability = 1.0; // in (0, 1]
    Synapse synapse = Synapse::Exponential;
    // Set: a BlockSparse connection with this block layout (docs/models.md, "Block-sparse
    // connectivity"); probability must then be 1. Unset: Dense (probability 1) or Sparse.
    std::optional<BlockSparseInit> blocks = std::nullopt;
    // Set (a block-sparse connection only): prune and regrow its tiles while training.
    std::optional<BlockPruning> pruning = std::nullopt;
};

struct Connection {
    std::string name;
    std::string source, target;
    ConnectionParams params;
};

class Network {
public:
    // Each throws ModelError for a bad or duplicate name, a zero size or a bad parameter.
    void addSpikeInput(const std::string& name, const SpikeInputParams& params);
    void addLif(const std::string& name, uint32_t size, const LifParams& params = {});
    void addLeakyIntegrate(const std::string& name, uint32_t size,
                           const LeakyIntegrateParams& params = {});
    void addFirstSpikeReadout(const std::string& name, uint32_t size,
                              const FirstSpikeReadoutParams& params = {});
    // The target may not be a SpikeInput; the source may not be a readout; a LIF population may
    // connect to itself (recurrent).
    void addConnection(const std::string& name, const std::string& source,
                       const std::string& target, const ConnectionParams& params = {});

    const std::vector<Population>& populations() const { return m_populations; }
    const std::vector<Connection>& connections() const { return m_connections; }
    const Population& population(const std::string& name) const; // ModelError if unknown
    // The synaptic time constant of the connections into `target`, if any [ms].
    std::optional<double> tauSynInto(const std::string& target) const;
    // The synapse kind of the connections into `target`, if any.
    std::optional<Synapse> synapseInto(const std::string& target) const;

private:
    void checkNewName(const std::string& name, const char* what) const;
    std::vector<Population> m_populations;
    std::vector<Connection> m_connections;
};

} // namespace spikeforge::train
