// EventPropCompiler, part 2 (part 1, the model, is eventprop_build.cpp): the dataset upload and
// the batches, each run as one Schedule
//   resetState, select the examples, T forward steps, loss, T backward steps, batch reduction,
//   Adam
// with every number staying on the device: the host only issues the calls. Then weights,
// gradients and the learnable state for checkpoints.
#include "spikeforge/train/eventprop.hpp"

#include "spikeforge/errors.hpp"

#include "train/device_dataset.hpp"
#include "train/eventprop_impl.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace spikeforge::train {

using namespace detail;

uint32_t EventPropCompiler::Impl::bufferSize(const Population& p) {
    return p.kind == PopulationKind::FirstSpikeReadout ? p.firstSpike.lif.spikeBufferSize
                                                       : p.lif.spikeBufferSize;
}

void EventPropCompiler::Impl::zeroInts(const std::string& group, const std::string& var) {
    sim->pull(group, var);
    for (auto& x : sim->view<int32_t>(group, var))
        x = 0;
    sim->push(group, var);
}

void EventPropCompiler::Impl::checkDropped() {
    for (const auto& pop : lifPopulations) {
        const std::string group = "EventPropDropped" + pop;
        sim->pull(group, "total");
        uint64_t dropped = 0;
        for (int32_t x : sim->view<int32_t>(group, "total"))
            dropped += uint64_t(x);
        if (dropped == 0) continue;
        zeroInts(group, "total");
        throw ModelError("population '" + pop + "': " + std::to_string(dropped) +
                         " spikes did not fit in the EventProp spike buffers (" +
                         std::to_string(bufferSize(network.population(pop))) +
                         " per neuron and example), so their gradients would be wrong; "
                         "raise LifParams::spikeBufferSize");
    }
}

void EventPropCompiler::Impl::clearAccumulators() {
    zeroInts(kLossValue, "correct");
    zeroScalars(kLossValue, "lossSum");
    sim->push(kLossValue, "lossSum");
}

void EventPropCompiler::Impl::zeroScalars(const std::string& group, const std::string& var) {
    if (options.precision == Precision::Double)
        for (auto& x : sim->view<double>(group, var))
            x = 0.0;
    else
        for (auto& x : sim->view<float>(group, var))
            x = 0.0f;
}

std::vector<double> EventPropCompiler::Impl::pullScalars(const std::string& group,
                                                         const std::string& var) {
    sim->pull(group, var);
    if (options.precision == Precision::Double) {
        auto v = sim->view<double>(group, var);
        return {v.begin(), v.end()};
    }
    auto v = sim->view<float>(group, var);
    return {v.begin(), v.end()};
}

Metrics EventPropCompiler::Impl::readAccumulators(uint64_t examples) {
    Metrics m;
    for (double x : pullScalars(kLossValue, "lossSum"))
        m.loss += x;
    sim->pull(kLossValue, "correct");
    for (int32_t x : sim->view<int32_t>(kLossValue, "correct"))
        m.correct += uint64_t(x);
    m.examples = examples;
    return m;
}

uint64_t EventPropCompiler::Impl::uploadOrder(std::span<const uint32_t> examples, Mode mode) {
    if (datasetSize == 0) throw ModelError("EventPropCompiler: no dataset (call setDataset first)");
    const uint32_t B = options.batchSize;
    const uint64_t batches = (examples.size() + B - 1) / B;
    std::vector<int32_t> perm(batches * B, -1);
    for (size_t i = 0; i < examples.size(); i++) {
        if (examples[i] >= datasetSize)
            throw ModelError("example index " + std::to_string(examples[i]) + " at position " +
                             std::to_string(i) + " is not in the dataset of " +
                             std::to_string(datasetSize) + " examples");
        perm[i] = static_cast<int32_t>(examples[i]);
    }
    if (perm.empty()) return 0;
    sim->setEGP<int32_t>(input, "perm", perm);
    // Channel shifts only while training (options.channelShift), seeded per call.
    const std::string selectInput = "EventPropSelect" + input;
    sim->setDynamicParam(selectInput, "shiftMax",
                         mode == Mode::Train ? double(options.channelShift) : 0.0);
    sim->setDynamicParam(selectInput, "shiftSeed", double(augmentSeed & 0xffffffffu));
    for (const auto& name : selectUpdates)
        sim->setDynamicParam(name, "trialBase", double(trialsRun));
    return batches;
}

Schedule EventPropCompiler::Impl::batchSchedule(Mode mode) const {
    const uint64_t T = options.exampleTimesteps;
    Schedule s;
    s.resetState().customUpdate(kTrial).steps(T).customUpdate(kLoss);
    switch (mode) {
    case Mode::Evaluate:
        break;
    case Mode::Gradients:
        s.steps(T).customUpdate(kReduce).customUpdate(kCheck);
        break;
    case Mode::Train:
        s.steps(T).customUpdate(kReduce).customUpdate(kCheck).customUpdate(kAdam);
        break;
    }
    return s;
}

Metrics EventPropCompiler::Impl::run(std::span<const uint32_t> examples, Mode mode,
                                     const Progress& progress) {
    const uint64_t batches = uploadOrder(examples, mode);
    clearAccumulators();
    const uint64_t firstCheck = checksRun;
    // trialsRun and checksRun count batches as soon as they ran, so that a progress function
    // that throws leaves the device's trial numbering and the host's in step.
    if (mode == Mode::Evaluate && (!recorded.empty() || !recordedVars.empty())) {
        runRecorded(examples, batches, progress);
    } else {
        // With a progress function the host reports (and waits for the device) at most
        // kProgressPoints times per call; between them the batches run back to back.
        const Schedule schedule = batchSchedule(mode);
        const uint64_t chunk =
            progress ? std::max<uint64_t>(1, (batches + kProgressPoints - 1) / kProgressPoints)
                     : std::max<uint64_t>(1, batches);
        // Training runs also stop where a connection's pruning is due (between two batches).
        for (uint64_t done = 0, report = std::min(chunk, batches); done < batches;) {
            uint64_t n = report - done;
            if (mode == Mode::Train) n = std::min(n, batchesToNextPruning());
            sim->run(schedule, n);
            trialsRun += n;
            if (mode != Mode::Evaluate) checksRun += n;
            done += n;
            if (mode == Mode::Train) {
                trainBatches += n;
                pruneDueConnections();
            }
            if (done < report) continue;
            if (progress) progress(done, batches);
            report = std::min(report + chunk, batches);
        }
    }
    if (mode != Mode::Evaluate) checkFinite(firstCheck); // before the overflow count: worse
    checkDropped();
    const Metrics m = readAccumulators(examples.size());
    if (!std::isfinite(m.loss))
        throw ModelError("the loss is not finite (" + std::to_string(m.loss) +
                         "): a weight or input is NaN or Inf, or the readouts overflowed");
    return m;
}

uint64_t EventPropCompiler::Impl::batchesToNextPruning() const {
    uint64_t n = UINT64_MAX;
    for (const auto& c : network.connections())
        if (c.params.pruning) {
            const uint64_t every = c.params.pruning->everyBatches;
            n = std::min(n, every - trainBatches % every);
        }
    return n;
}

void EventPropCompiler::Impl::pruneDueConnections() {
    for (const auto& c : network.connections()) {
        if (!c.params.pruning) continue;
        const SynapseGroup& sg = model->synapseGroup(c.name);
        if (const uint32_t k = tilesToPrune(*c.params.pruning, sg.numTiles(), trainBatches))
            sim->pruneBlocks(c.name, k);
    }
}

void EventPropCompiler::Impl::checkFinite(uint64_t firstCheck) {
    std::string report;
    for (const auto& c : network.connections()) {
        const std::string group = kCheck + c.name;
        sim->pull(group, "bad");
        int64_t first = 0;
        uint64_t count = 0;
        for (int32_t x : sim->view<int32_t>(group, "bad")) {
            if (x == 0) continue;
            count++;
            if (first == 0 || x < first) first = x;
        }
        if (count == 0) continue;
        zeroInts(group, "bad");
        // `bad` counts the checked batches since the build: this call's start at firstCheck.
        const uint64_t at = uint64_t(first) - 1;
        const std::string where =
            at >= firstCheck
                ? "first in batch " + std::to_string(at - firstCheck + 1) + " of this call"
                : "first in an earlier call";
        report += std::string(report.empty() ? "" : "; ") + "connection '" + c.name +
                  "': " + std::to_string(count) +
                  " of its weights or gradients became NaN or Inf, " + where + " (those " +
                  "gradients were not applied)";
    }
    if (!report.empty())
        throw ModelError(report + ". Training cannot go on: lower the learning rate, check the " +
                         "inputs and initial weights, or raise the spike buffers");
}

void EventPropCompiler::Impl::chooseRecordings(const std::vector<std::string>& spikeNames,
                                               const std::vector<std::string>& variableNames,
                                               const std::string& optionsName) {
    recordingOptions = optionsName;
    for (const std::string& name : spikeNames) {
        network.population(name); // ModelError for an unknown population
        recorded.insert(name);
    }
    for (const std::string& name : variableNames) {
        const size_t dot = name.find('.');
        if (dot == std::string::npos)
            throw ModelError(optionsName + "::recordVariables entry '" + name +
                             "' must be population.variable (e.g. Out.V)");
        network.population(name.substr(0, dot)); // ModelError for an unknown population
        recordedVars.emplace_back(name.substr(0, dot), name.substr(dot + 1));
    }
}

void EventPropCompiler::Impl::checkRecordedVariables() {
    for (const auto& [pop, var] : recordedVars)
        sim->pull(pop, var); // ModelError for a variable the population does not have
}

const std::vector<std::vector<SpikeEvent>>&
EventPropCompiler::Impl::recordedSpikes(const std::string& population) const {
    if (!recorded.count(population))
        throw ModelError("population '" + population + "' is not recorded (list it in " +
                         recordingOptions + "::recordSpikes)");
    static const std::vector<std::vector<SpikeEvent>> none;
    auto it = spikes.find(population);
    return it == spikes.end() ? none : it->second;
}

const std::vector<std::vector<double>>&
EventPropCompiler::Impl::recordedVariables(const std::string& name) const {
    auto it = variables.find(name);
    if (it != variables.end()) return it->second;
    for (const auto& [pop, var] : recordedVars)
        if (pop + "." + var == name) {
            static const std::vector<std::vector<double>> none;
            return none; // recorded, but evaluate() has not run yet
        }
    throw ModelError("variable '" + name + "' is not recorded (list it in " + recordingOptions +
                     "::recordVariables)");
}

// Appends the recorded variables' values after this step to the examples of batch slots
// first … first + B - 1 (per example: [step][neuron]).
void EventPropCompiler::Impl::recordVariables(size_t examples, uint64_t first) {
    for (const auto& [pop, var] : recordedVars) {
        const std::vector<double> values = pullScalars(pop, var);
        const size_t n = network.population(pop).size;
        auto& out = variables[pop + "." + var];
        for (size_t slot = 0; slot < options.batchSize && first + slot < examples; slot++)
            out[first + slot].insert(out[first + slot].end(), values.begin() + slot * n,
                                     values.begin() + (slot + 1) * n);
    }
}

void EventPropCompiler::Impl::runRecorded(std::span<const uint32_t> examples, uint64_t batches,
                                          const Progress& progress) {
    const uint64_t T = options.exampleTimesteps;
    const uint32_t B = options.batchSize;
    spikes.clear();
    for (const auto& pop : recorded)
        spikes[pop].assign(examples.size(), {});
    variables.clear();
    for (const auto& [pop, var] : recordedVars)
        variables[pop + "." + var].assign(examples.size(), {});
    const Schedule start = Schedule().resetState().customUpdate(kTrial);
    for (uint64_t b = 0; b < batches; b++) {
        sim->run(start);
        trialsRun++;
        if (!recorded.empty()) sim->setRecordingWindow(T);
        if (recordedVars.empty()) {
            sim->run(T);
        } else {
            for (uint64_t step = 0; step < T; step++) {
                sim->step();
                recordVariables(examples.size(), b * B);
            }
        }
        if (!recorded.empty()) sim->pullRecording();
        for (const auto& pop : recorded)
            for (const SpikeEvent& e : sim->spikes(pop)) {
                const uint64_t position = b * B + e.batch;
                if (position < examples.size()) spikes[pop][position].push_back(e);
            }
        sim->customUpdate(kLoss);
        if (progress) progress(b + 1, batches);
    }
}

EventPropCompiler::EventPropCompiler(const Network& network, const EventPropOptions& options,
                                     const BackendPreferences& prefs)
    : m_impl(std::make_unique<Impl>(network, options)) {
    m_impl->chooseRecordings(options.recordSpikes, options.recordVariables, "EventPropOptions");
    m_impl->build(prefs);
    m_impl->checkRecordedVariables();
}

const std::vector<std::vector<SpikeEvent>>&
EventPropCompiler::spikes(const std::string& population) const {
    return m_impl->recordedSpikes(population);
}

const std::vector<std::vector<double>>&
EventPropCompiler::variables(const std::string& name) const {
    return m_impl->recordedVariables(name);
}

EventPropCompiler::~EventPropCompiler() = default;

void EventPropCompiler::Impl::setDataset(const EventDataset& data) {
    const Population& in = network.population(input);
    const Population& out = network.population(readout);
    if (data.numChannels() != in.input.numChannels)
        throw ModelError("dataset has " + std::to_string(data.numChannels()) +
                         " channels but SpikeInput '" + in.name + "' has " +
                         std::to_string(in.input.numChannels));
    if (data.numClasses() > out.size)
        throw ModelError("dataset has " + std::to_string(data.numClasses()) +
                         " classes but readout '" + out.name + "' has only " +
                         std::to_string(out.size) + " neurons");
    const auto layout = detail::layoutForDevice(data);
    sim->setEGP<float>(input, "evTimes", layout.evTimes);
    sim->setEGP<uint32_t>(input, "rowOffsets", layout.rowOffsets);
    sim->setEGP<int32_t>(input, "labels", layout.labels);
    datasetSize = data.size();
}

void EventPropCompiler::setDataset(const EventDataset& data) {
    m_impl->setDataset(data);
}

Metrics EventPropCompiler::trainEpoch(std::span<const uint32_t> order, const Progress& progress) {
    return m_impl->run(order, Mode::Train, progress);
}

Metrics EventPropCompiler::evaluate(std::span<const uint32_t> examples, const Progress& progress) {
    return m_impl->run(examples, Mode::Evaluate, progress);
}

Metrics EventPropCompiler::computeGradients(std::span<const uint32_t> batch) {
    if (batch.size() > m_impl->options.batchSize)
        throw ModelError("computeGradients takes at most batchSize (" +
                         std::to_string(m_impl->options.batchSize) + ") examples, got " +
                         std::to_string(batch.size()));
    return m_impl->run(batch, Mode::Gradients);
}

const Connection& EventPropCompiler::Impl::connection(const std::string& name) const {
    for (const auto& c : network.connections())
        if (c.name == name) return c;
    throw ModelError("network has no connection '" + name + "'");
}

std::vector<double> EventPropCompiler::Impl::pullMatrix(const std::string& name,
                                                        const std::string& var) {
    connection(name); // ModelError for an unknown connection
    return sim->synapseMatrix(name, var);
}

std::vector<double> EventPropCompiler::weights(const std::string& connection) {
    return m_impl->pullMatrix(connection, "g");
}

void EventPropCompiler::Impl::setWeights(const std::string& connection,
                                         std::span<const double> values) {
    const Connection& c = this->connection(connection);
    const size_t numPost = network.population(c.target).size;
    const size_t size = size_t(network.population(c.source).size) * numPost;
    if (values.size() != size)
        throw ModelError("connection '" + connection + "' is a " + std::to_string(size / numPost) +
                         " x " + std::to_string(numPost) + " matrix (" + std::to_string(size) +
                         " weights), got " + std::to_string(values.size()) + " values");
    // Through the connectivity's codec: a nonzero value without a synapse to go to is refused.
    sim->setSynapseMatrix(connection, "g", values);
}

void EventPropCompiler::setWeights(const std::string& connection, std::span<const double> values) {
    m_impl->setWeights(connection, values);
}

std::vector<double> EventPropCompiler::gradient(const std::string& connection) {
    return m_impl->pullMatrix(connection, "ReducedGradient");
}

void EventPropCompiler::setAugmentationSeed(uint64_t seed) {
    m_impl->augmentSeed = seed;
}

uint64_t EventPropCompiler::boostSilentNeurons(double amount) {
    return m_impl->boostSilentNeurons(amount, m_impl->takeTrainingSpikeCounts());
}

uint64_t EventPropCompiler::boostSilentNeurons(double amount, const SpikeCounts& counts) {
    return m_impl->boostSilentNeurons(amount, counts);
}

EventPropCompiler::SpikeCounts EventPropCompiler::takeTrainingSpikeCounts() {
    return m_impl->takeTrainingSpikeCounts();
}

EventPropCompiler::SpikeCounts EventPropCompiler::Impl::takeTrainingSpikeCounts() {
    if (!backward) throw ModelError("takeTrainingSpikeCounts needs the training compiler");
    SpikeCounts out;
    for (const std::string& pop : lifPopulations) {
        const std::string counts = kEpochSpikes + pop;
        out[pop] = pullScalars(counts, "count");
        zeroScalars(counts, "count");
        sim->push(counts, "count");
    }
    return out;
}

uint64_t EventPropCompiler::Impl::boostSilentNeurons(double amount, const SpikeCounts& counts) {
    if (!std::isfinite(amount))
        throw ModelError("boostSilentNeurons: the amount must be a finite number");
    if (!backward) throw ModelError("boostSilentNeurons needs the training compiler");
    uint64_t boosted = 0;
    for (const std::string& pop : lifPopulations) {
        const auto found = counts.find(pop);
        const size_t numPost = network.population(pop).size;
        if (found == counts.end() || found->second.size() != numPost)
            throw ModelError("boostSilentNeurons: no spike count for each neuron of '" + pop +
                             "' (pass takeTrainingSpikeCounts())");
        const std::vector<double>& spikes = found->second;
        for (double n : spikes)
            boosted += n == 0.0;
        for (const auto& c : network.connections()) {
            if (c.source != input || c.target != pop) continue;
            const std::vector<spikeforge::SynapsePair> synapses = sim->synapses(c.name);
            std::vector<double> g = sim->synapseValues(c.name, "g");
            for (size_t i = 0; i < synapses.size(); i++)
                if (spikes[synapses[i].post] == 0.0) g[i] += amount;
            sim->setSynapseValues(c.name, "g", g);
        }
    }
    return boosted;
}

void EventPropCompiler::setLearningRate(double rate) {
    for (const auto& c : m_impl->network.connections())
        m_impl->sim->setDynamicParam("EventPropAdam" + c.name, "alpha", rate);
}

// The arrays of the learnable state, with their element size: weights and Adam moments are
// scalars, the Adam step counter a uint32.
std::vector<std::pair<std::string, std::string>> EventPropCompiler::Impl::stateArrays() const {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& c : network.connections()) {
        out.emplace_back(c.name, "g");
        if (!backward) continue; // inference: the weights alone
        out.emplace_back("EventPropAdam" + c.name, "m");
        out.emplace_back("EventPropAdam" + c.name, "v");
        out.emplace_back("EventPropAdam" + c.name, "updateCount");
    }
    // A pruned connection's tiles have moved: its block index (and the transposed one, where
    // kept) and the pruning round, which keys the next regrowth.
    for (const auto& c : network.connections()) {
        if (!c.params.pruning) continue;
        out.emplace_back(c.name, "blockCol");
        if (!model->synapseGroup(c.name).wu().model.postSpikeSynCode.empty()) {
            out.emplace_back(c.name, "blockColStart");
            out.emplace_back(c.name, "blockColTiles");
        }
        out.emplace_back(c.name, "pruneRound");
    }
    return out;
}

std::vector<EventPropCompiler::StateArray> EventPropCompiler::saveState() {
    auto& s = *m_impl;
    std::vector<StateArray> out;
    for (const auto& [group, var] : s.stateArrays()) {
        s.sim->pull(group, var);
        StateArray a{group + "." + var, {}};
        auto append = [&a](auto span) {
            const auto* p = reinterpret_cast<const uint8_t*>(span.data());
            a.bytes.assign(p, p + span.size_bytes());
        };
        if (detail::isIndexArray(var))
            append(s.sim->view<uint32_t>(group, var));
        else if (s.options.precision == Precision::Double)
            append(s.sim->view<double>(group, var));
        else
            append(s.sim->view<float>(group, var));
        out.push_back(std::move(a));
    }
    return out;
}

void EventPropCompiler::Impl::loadState(const std::vector<StateArray>& state) {
    const auto arrays = stateArrays();
    if (state.size() != arrays.size())
        throw ModelError("state has " + std::to_string(state.size()) + " arrays, this network " +
                         std::to_string(arrays.size()));
    // Check everything first, then write: a refused state leaves the network untouched.
    std::vector<std::span<uint8_t>> targets;
    auto raw = [](auto span) {
        return std::span<uint8_t>(reinterpret_cast<uint8_t*>(span.data()), span.size_bytes());
    };
    for (size_t i = 0; i < arrays.size(); i++) {
        const auto& [group, var] = arrays[i];
        if (state[i].name != group + "." + var)
            throw ModelError("state array " + std::to_string(i) + " is '" + state[i].name +
                             "', this network expects '" + group + "." + var + "'");
        std::span<uint8_t> bytes;
        if (detail::isIndexArray(var))
            bytes = raw(sim->view<uint32_t>(group, var));
        else if (options.precision == Precision::Double)
            bytes = raw(sim->view<double>(group, var));
        else
            bytes = raw(sim->view<float>(group, var));
        if (bytes.size() != state[i].bytes.size())
            throw ModelError("state array '" + state[i].name + "' has " +
                             std::to_string(state[i].bytes.size()) + " bytes, this network " +
                             std::to_string(bytes.size()));
        targets.push_back(bytes);
    }
    for (size_t i = 0; i < arrays.size(); i++) {
        std::copy(state[i].bytes.begin(), state[i].bytes.end(), targets[i].begin());
        sim->push(arrays[i].first, arrays[i].second);
    }
    // The pruning schedules go on from the batches the loaded state was trained for (the Adam
    // step count: one step per training batch).
    for (size_t i = 0; i < arrays.size(); i++)
        if (arrays[i].second == "updateCount") {
            trainBatches = sim->view<uint32_t>(arrays[i].first, "updateCount")[0];
            break;
        }
}

void EventPropCompiler::loadState(const std::vector<StateArray>& state) {
    m_impl->loadState(state);
}

Simulation& EventPropCompiler::simulation() {
    return *m_impl->sim;
}

const EventPropOptions& EventPropCompiler::options() const {
    return m_impl->options;
}

const Network& EventPropCompiler::network() const {
    return m_impl->network;
}

} // namespace spikeforge::train
