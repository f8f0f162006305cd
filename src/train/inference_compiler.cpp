// InferenceCompiler (inference.hpp): EventPropCompiler's implementation built with the forward
// half of every model only (Impl::backward = false), plus per-example spike recording.
#include "spikeforge/train/inference.hpp"

#include "spikeforge/errors.hpp"

#include <algorithm>

#include "train/eventprop_impl.hpp"

namespace spikeforge::train {

namespace {

EventPropOptions forwardOptions(const InferenceOptions& o) {
    EventPropOptions e;
    e.exampleTimesteps = o.exampleTimesteps;
    e.dt = o.dt;
    e.batchSize = o.batchSize;
    e.precision = o.precision;
    e.seed = o.seed;
    return e;
}

} // namespace

InferenceCompiler::InferenceCompiler(const Network& network, const InferenceOptions& options,
                                     const BackendPreferences& prefs)
    : m_impl(std::make_unique<EventPropCompiler::Impl>(network, forwardOptions(options))) {
    m_impl->backward = false;
    m_impl->chooseRecordings(options.recordSpikes, options.recordVariables, "InferenceOptions");
    m_impl->build(prefs);
    m_impl->checkRecordedVariables();
}

InferenceCompiler::~InferenceCompiler() = default;

void InferenceCompiler::setDataset(const EventDataset& data) {
    m_impl->setDataset(data);
}

Metrics InferenceCompiler::evaluate(std::span<const uint32_t> examples,
                                    const EventPropCompiler::Progress& progress) {
    return m_impl->run(examples, detail::Mode::Evaluate, progress);
}

const std::vector<std::vector<SpikeEvent>>&
InferenceCompiler::spikes(const std::string& population) const {
    return m_impl->recordedSpikes(population);
}

const std::vector<std::vector<double>>&
InferenceCompiler::variables(const std::string& name) const {
    return m_impl->recordedVariables(name);
}

std::vector<double> InferenceCompiler::weights(const std::string& connection) {
    return m_impl->pullMatrix(connection, "g");
}

void InferenceCompiler::setWeights(const std::string& connection, std::span<const double> values) {
    m_impl->setWeights(connection, values);
}

void InferenceCompiler::loadWeights(const std::vector<EventPropCompiler::StateArray>& state) {
    std::vector<EventPropCompiler::StateArray> weights;
    for (const auto& c : m_impl->network.connections()) {
        const std::string name = c.name + ".g";
        auto it =
            std::find_if(state.begin(), state.end(), [&](const auto& a) { return a.name == name; });
        if (it == state.end())
            throw ModelError("the state has no weights for connection '" + c.name + "' (" + name +
                             ")");
        weights.push_back(*it);
    }
    m_impl->loadState(weights); // checks every size before writing anything
}

Simulation& InferenceCompiler::simulation() {
    return *m_impl->sim;
}

} // namespace spikeforge::train
