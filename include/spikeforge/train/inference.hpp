#pragma once
// Inference on a trained Network (mlGeNN's InferenceCompiler; docs/training.md, "Inference"):
// the forward half of the EventProp model alone — no adjoints, spike buffers, gradients or
// optimiser — with the same dataset handling, loss and accuracy, and optional spike recording
// per example.
#include "spikeforge/simulation.hpp"
#include "spikeforge/train/dataset.hpp"
#include "spikeforge/train/eventprop.hpp"
#include "spikeforge/train/network.hpp"

#include <memory>
#include <span>
#include <string>
#include <vector>

namespace spikeforge::train {

struct InferenceOptions {
    uint32_t exampleTimesteps = 0; // T [steps]
    double dt = 1.0;               // [ms]
    uint32_t batchSize = 32;
    Precision precision = Precision::Float;
    uint64_t seed = 1234;                  // weight initialisation (before setWeights/loadState)
    std::vector<std::string> recordSpikes; // populations whose spikes evaluate() records
    // Variables evaluate() records after every step, as "population.variable" (e.g. "Out.V",
    // "Hid.V"); the host reads them every step, so this is for analysis, not for speed.
    std::vector<std::string> recordVariables;
};

class InferenceCompiler {
public:
    InferenceCompiler(const Network& network, const InferenceOptions& options,
                      const BackendPreferences& prefs = {});
    ~InferenceCompiler();
    InferenceCompiler(const InferenceCompiler&) = delete;
    InferenceCompiler& operator=(const InferenceCompiler&) = delete;

    void setDataset(const EventDataset& data); // as EventPropCompiler::setDataset
    // Forward passes of `examples`, in batches; the loss and accuracy as EventPropCompiler's.
    // With populations to record, the host reads each batch's spikes (a sync per batch).
    Metrics evaluate(std::span<const uint32_t> examples,
                     const EventPropCompiler::Progress& progress = {});
    // Spikes of a recorded population in the last evaluate(), one list per example in the
    // order evaluate() was given: time [ms] from the example's start, neuron, and the batch
    // slot the example ran in. ModelError for a population that is not recorded.
    const std::vector<std::vector<SpikeEvent>>& spikes(const std::string& population) const;

    // A recorded variable in the last evaluate(), one vector per example in the order evaluate()
    // was given, [step][neuron] (T * size values). ModelError for a variable not recorded.
    const std::vector<std::vector<double>>& variables(const std::string& name) const;

    std::vector<double> weights(const std::string& connection);
    void setWeights(const std::string& connection, std::span<const double> values);
    // The weights of a trained network: takes the "<connection>.g" arrays of an EventProp
    // state (EventPropCompiler::saveState, a checkpoint) and ignores its optimiser arrays.
    // ModelError when a connection's weights are missing or of another size.
    void loadWeights(const std::vector<EventPropCompiler::StateArray>& state);

    Simulation& simulation();

private:
    std::unique_ptr<EventPropCompiler::Impl> m_impl;
};

} // namespace spikeforge::train
