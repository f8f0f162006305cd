// EventPropCompiler (eventprop.hpp): the Network becomes one spikeforge::Model (forward and
// backward dynamics in the same groups, eventprop_models.hpp), and each batch is run as
//   resetState, select the examples, T forward steps, loss, T backward steps, batch reduction,
//   Adam
// with every number staying on the device: the host only issues the calls.
#include "spikeforge/train/eventprop.hpp"

#include "spikeforge/errors.hpp"
#include "spikeforge/models.hpp"

#include "train/device_dataset.hpp"
#include "train/eventprop_models.hpp"

#include <cmath>

namespace spikeforge::train {

namespace {

// Names of the custom updates and their update groups. User names cannot start with "sf", so
// internal names are prefixed "EventProp" and clash only with a user name of that form, which
// the Model then reports.
const std::string kTrial = "EventPropTrial";
const std::string kLoss = "EventPropLoss";
const std::string kReduce = "EventPropReduce";
const std::string kAdam = "EventPropAdam";
const std::string kSoftmax = "EventPropSoftmax";
const std::string kLossValue = "EventPropLossValue";

enum class Mode { Train, Gradients, Evaluate };

VarInit weightInit(const WeightInit& w) {
    if (w.sd == 0.0) return VarInit(w.mean);
    return init::Normal(w.mean, w.sd);
}

} // namespace

struct EventPropCompiler::Impl {
    Network network;
    EventPropOptions options;
    std::unique_ptr<Model> model;
    std::unique_ptr<Simulation> sim;
    std::string input, readout;
    std::vector<std::string> selectUpdates;
    std::vector<std::string> lifPopulations;
    size_t datasetSize = 0;
    uint64_t trialsRun = 0;

    Impl(const Network& net, const EventPropOptions& opt) : network(net), options(opt) {}

    std::vector<std::pair<std::string, std::string>> stateArrays() const;

    void checkNetwork() {
        if (options.exampleTimesteps == 0)
            throw ModelError("EventPropOptions::exampleTimesteps must be >= 1");
        if (!std::isfinite(options.dt) || options.dt <= 0.0)
            throw ModelError("EventPropOptions::dt must be a finite number > 0");
        if (options.batchSize == 0) throw ModelError("EventPropOptions::batchSize must be >= 1");
        for (const auto& p : network.populations()) {
            std::string* slot = nullptr;
            switch (p.kind) {
            case PopulationKind::SpikeInput:
                slot = &input;
                break;
            case PopulationKind::LeakyIntegrate:
            case PopulationKind::FirstSpikeReadout:
                slot = &readout;
                break;
            case PopulationKind::Lif:
                break;
            }
            if (!slot) continue;
            if (!slot->empty())
                throw ModelError("population '" + p.name + "': EventProp training takes one " +
                                 (slot == &input ? "SpikeInput" : "readout") +
                                 " population ('" + *slot + "' is the first)");
            *slot = p.name;
        }
        if (input.empty()) throw ModelError("the network has no SpikeInput population");
        if (readout.empty())
            throw ModelError("the network has no readout population (LeakyIntegrate or "
                             "FirstSpikeReadout) to train");
        if (!network.tauSynInto(readout))
            throw ModelError("readout '" + readout + "' has no incoming connection");
    }

    double tauSynOf(const std::string& pop) const {
        return network.tauSynInto(pop).value_or(5.0); // no input: the value is never used
    }

    double tauMemOf(const Population& p) const {
        switch (p.kind) {
        case PopulationKind::Lif:
            return p.lif.tauMem;
        case PopulationKind::LeakyIntegrate:
            return p.li.tauMem;
        case PopulationKind::FirstSpikeReadout:
            return p.firstSpike.lif.tauMem;
        case PopulationKind::SpikeInput:
            break;
        }
        throw InternalError("tauMem of a spike input");
    }

    ParamValues lifParams(const std::string& name, const LifParams& lif) const {
        return {{"T", double(options.exampleTimesteps)},
                {"tauM", lif.tauMem},
                {"tauS", tauSynOf(name)},
                {"vThresh", lif.vThresh},
                {"slots", double(lif.spikeBufferSize)},
                {"regStrength", lif.regStrength},
                {"regTarget", lif.regTarget},
                {"batchSize", double(options.batchSize)}};
    }

    static VarInitMap lifVars() {
        return {{"V", 0.0},         {"I", 0.0},         {"LambdaV", 0.0},
                {"LambdaI", 0.0},   {"Step", 0.0},      {"BackSpike", 0.0},
                {"NumSpikes", 0.0}, {"Dropped", 0.0},   {"SpikeSum", 0.0}};
    }

    void addPopulation(const Population& p) {
        const double T = options.exampleTimesteps;
        switch (p.kind) {
        case PopulationKind::SpikeInput:
            model->addNeuronGroup(p.name, p.size, detail::inputModel(),
                                  {{"T", T}, {"numChannels", double(p.size)}},
                                  {{"Example", -1.0},
                                   {"Start", 0.0},
                                   {"Cursor", 0.0},
                                   {"End", 0.0},
                                   {"Step", 0.0},
                                   {"Fire", 0.0}});
            return;
        case PopulationKind::Lif:
            model->addNeuronGroup(p.name, p.size, detail::lifModel(p.lif.spikeBufferSize),
                                  lifParams(p.name, p.lif), lifVars());
            return;
        case PopulationKind::FirstSpikeReadout: {
            ParamValues params = lifParams(p.name, p.firstSpike.lif);
            params["tau0"] = p.firstSpike.tau0;
            VarInitMap vars = lifVars();
            vars.insert({{"TFirst", 1e30}, {"Logit", 0.0}, {"Prob", 0.0}, {"DLdt", 0.0},
                         {"Example", -1.0}});
            model->addNeuronGroup(p.name, p.size,
                                  detail::lifModel(p.firstSpike.lif.spikeBufferSize, true), params,
                                  vars);
            return;
        }
        case PopulationKind::LeakyIntegrate:
            model->addNeuronGroup(p.name, p.size, detail::readoutModel(p.li.readout),
                                  {{"T", T}, {"tauM", p.li.tauMem}, {"tauS", tauSynOf(p.name)}},
                                  {{"V", 0.0},
                                   // MaxVar keeps the largest V: start below any
                                   {"Sum", p.li.readout == Readout::MaxVar ? -1e30 : 0.0},
                                   {"LambdaV", 0.0},
                                   {"LambdaI", 0.0},
                                   {"Grad", 0.0},
                                   {"Prob", 0.0},
                                   {"Step", 0.0},
                                   {"Example", -1.0},
                                   {"MaxStep", 0.0}});
            return;
        }
    }

    void addConnection(const Connection& c) {
        const Population& src = network.population(c.source);
        const Population& tgt = network.population(c.target);
        const double T = options.exampleTimesteps;
        WeightUpdateInit wu{detail::synapseModel(src.kind != PopulationKind::SpikeInput),
                            {{"T", T}, {"tauMPost", tauMemOf(tgt)}, {"tauSPost", c.params.tauSyn}},
                            {{"g", weightInit(c.params.weights)},
                             {"Gradient", 0.0},
                             {"ReducedGradient", 0.0}},
                            {},
                            {}};
        PostsynapticInit ps{detail::expCurrModel(), {{"T", T}, {"tauS", c.params.tauSyn}}, {}};
        model->addSynapseGroup(c.name, MatrixType::Dense, 0, c.source, c.target, wu, ps);
    }

    void addCustomUpdates() {
        for (const std::string& pop : {input, readout}) {
            const std::string name = "EventPropSelect" + pop;
            auto& cu = model->addCustomUpdate(name, kTrial, detail::selectExampleModel(),
                                              {{"trialBase", 0.0}}, {},
                                              {{"example", {pop, "Example"}}},
                                              {{"perm", {input, "perm"}}});
            cu.setParamDynamic("trialBase");
            selectUpdates.push_back(name);
        }
        const Population& out = network.population(readout);
        if (out.kind == PopulationKind::FirstSpikeReadout) {
            models::addSoftmax(*model, kSoftmax, kLoss, {readout, "Logit"}, {readout, "Prob"});
            model->addCustomUpdate(kLossValue, kLoss, detail::firstSpikeLossModel(),
                                   {{"tau0", out.firstSpike.tau0},
                                    {"tau1", out.firstSpike.tau1},
                                    {"alphaReg", out.firstSpike.alpha}},
                                   {{"lossSum", 0.0}, {"correct", 0.0}},
                                   {{"logit", {readout, "Logit"}},
                                    {"maxLogit", {kSoftmax + "Max", "maxValue"}},
                                    {"prob", {readout, "Prob"}},
                                    {"tFirst", {readout, "TFirst"}},
                                    {"example", {readout, "Example"}},
                                    {"dldt", {readout, "DLdt"}}},
                                   {{"labels", {input, "labels"}}});
        } else {
            models::addSoftmax(*model, kSoftmax, kLoss, {readout, "Sum"}, {readout, "Prob"});
            model->addCustomUpdate(kLossValue, kLoss, detail::crossEntropyModel(), {},
                                   {{"lossSum", 0.0}, {"correct", 0.0}},
                                   {{"readout", {readout, "Sum"}},
                                    {"maxReadout", {kSoftmax + "Max", "maxValue"}},
                                    {"prob", {readout, "Prob"}},
                                    {"example", {readout, "Example"}},
                                    {"grad", {readout, "Grad"}}},
                                   {{"labels", {input, "labels"}}});
        }
        for (const auto& p : network.populations()) {
            if (p.kind != PopulationKind::Lif && p.kind != PopulationKind::FirstSpikeReadout)
                continue;
            model->addCustomUpdate("EventPropSpikeSum" + p.name, kLoss, detail::spikeSumModel(),
                                   {}, {},
                                   {{"count", {p.name, "NumSpikes"}},
                                    {"dropped", {p.name, "Dropped"}},
                                    {"spikeSum", {p.name, "SpikeSum"}}});
            model->addCustomUpdate("EventPropDropped" + p.name, kLoss, detail::droppedModel(), {},
                                   {{"total", 0.0}}, {{"dropped", {p.name, "Dropped"}}});
            lifPopulations.push_back(p.name);
        }
        const AdamParams& a = options.adam;
        for (const auto& c : network.connections()) {
            model->addCustomUpdateWU("EventPropReduce" + c.name, kReduce,
                                     models::BatchReduceAndZero(), {}, {},
                                     {{"gradient", {c.name, "Gradient"}},
                                      {"reducedGradient", {c.name, "ReducedGradient"}}});
            auto& adam = model->addCustomUpdateWU(
                "EventPropAdam" + c.name, kAdam, models::Adam(),
                {{"beta1", a.beta1},
                 {"beta2", a.beta2},
                 {"epsilon", a.epsilon},
                 {"alpha", a.learningRate}},
                {{"m", 0.0}, {"v", 0.0}},
                {{"gradient", {c.name, "ReducedGradient"}}, {"variable", {c.name, "g"}}});
            adam.setParamDynamic("alpha");
        }
    }

    void build(const BackendPreferences& prefs) {
        checkNetwork();
        model = std::make_unique<Model>("eventprop");
        model->setDT(options.dt);
        model->setPrecision(options.precision);
        model->setBatchSize(options.batchSize);
        model->setSeed(options.seed);
        for (const auto& p : network.populations())
            addPopulation(p);
        for (const auto& c : network.connections())
            addConnection(c);
        addCustomUpdates();
        BackendPreferences p = prefs;
        p.keepInitialState = true; // every trial starts with resetState
        sim = std::make_unique<Simulation>(*model, p);
    }

    static uint32_t bufferSize(const Population& p) {
        return p.kind == PopulationKind::FirstSpikeReadout ? p.firstSpike.lif.spikeBufferSize
                                                           : p.lif.spikeBufferSize;
    }

    // Sets an int array of the model to zero (a host write, once per call, not per batch).
    void zeroInts(const std::string& group, const std::string& var) {
        sim->pull(group, var);
        for (auto& x : sim->view<int32_t>(group, var))
            x = 0;
        sim->push(group, var);
    }

    // Spikes that did not fit in a LIF population's rings since the last call: an error naming
    // the population and the count (the gradients of those examples would be wrong).
    void checkDropped() {
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

    // Sets the per-batch accumulators of the loss update to zero.
    void clearAccumulators() {
        zeroInts(kLossValue, "correct");
        zeroScalars(kLossValue, "lossSum");
        sim->push(kLossValue, "lossSum");
    }

    void zeroScalars(const std::string& group, const std::string& var) {
        if (options.precision == Precision::Double)
            for (auto& x : sim->view<double>(group, var))
                x = 0.0;
        else
            for (auto& x : sim->view<float>(group, var))
                x = 0.0f;
    }

    std::vector<double> pullScalars(const std::string& group, const std::string& var) {
        sim->pull(group, var);
        if (options.precision == Precision::Double) {
            auto v = sim->view<double>(group, var);
            return {v.begin(), v.end()};
        }
        auto v = sim->view<float>(group, var);
        return {v.begin(), v.end()};
    }

    Metrics readAccumulators(uint64_t examples) {
        Metrics m;
        for (double x : pullScalars(kLossValue, "lossSum"))
            m.loss += x;
        sim->pull(kLossValue, "correct");
        for (int32_t x : sim->view<int32_t>(kLossValue, "correct"))
            m.correct += uint64_t(x);
        m.examples = examples;
        return m;
    }

    // Uploads the trial order (padded with -1 to whole batches) and points the example
    // selection at its start.
    uint64_t uploadOrder(std::span<const uint32_t> examples) {
        if (datasetSize == 0)
            throw ModelError("EventPropCompiler: no dataset (call setDataset first)");
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
        for (const auto& name : selectUpdates)
            sim->setDynamicParam(name, "trialBase", double(trialsRun));
        return batches;
    }

    // One batch as a schedule: the device runs it without the host touching any number
    // (Simulation::run(Schedule): one CUDA graph per batch on cuda with cudaGraphSteps >= 2T).
    Schedule batchSchedule(Mode mode) const {
        const uint64_t T = options.exampleTimesteps;
        Schedule s;
        s.resetState().customUpdate(kTrial).steps(T).customUpdate(kLoss);
        switch (mode) {
        case Mode::Evaluate:
            break;
        case Mode::Gradients:
            s.steps(T).customUpdate(kReduce);
            break;
        case Mode::Train:
            s.steps(T).customUpdate(kReduce).customUpdate(kAdam);
            break;
        }
        return s;
    }

    Metrics run(std::span<const uint32_t> examples, Mode mode, const Progress& progress = {}) {
        const uint64_t batches = uploadOrder(examples);
        clearAccumulators();
        const Schedule schedule = batchSchedule(mode);
        if (!progress) {
            sim->run(schedule, batches);
        } else {
            for (uint64_t b = 0; b < batches; b++) {
                sim->run(schedule, 1);
                progress(b + 1, batches);
            }
        }
        trialsRun += batches;
        checkDropped();
        return readAccumulators(examples.size());
    }
};

EventPropCompiler::EventPropCompiler(const Network& network, const EventPropOptions& options,
                                     const BackendPreferences& prefs)
    : m_impl(std::make_unique<Impl>(network, options)) {
    m_impl->build(prefs);
}

EventPropCompiler::~EventPropCompiler() = default;

void EventPropCompiler::setDataset(const EventDataset& data) {
    auto& s = *m_impl;
    const Population& in = s.network.population(s.input);
    const Population& out = s.network.population(s.readout);
    if (data.numChannels() != in.size)
        throw ModelError("dataset has " + std::to_string(data.numChannels()) +
                         " channels but SpikeInput '" + in.name + "' has " +
                         std::to_string(in.size));
    if (data.numClasses() > out.size)
        throw ModelError("dataset has " + std::to_string(data.numClasses()) +
                         " classes but readout '" + out.name + "' has only " +
                         std::to_string(out.size) + " neurons");
    const auto layout = detail::layoutForDevice(data);
    s.sim->setEGP<float>(s.input, "evTimes", layout.evTimes);
    s.sim->setEGP<uint32_t>(s.input, "rowOffsets", layout.rowOffsets);
    s.sim->setEGP<int32_t>(s.input, "labels", layout.labels);
    s.datasetSize = data.size();
}

Metrics EventPropCompiler::trainEpoch(std::span<const uint32_t> order, const Progress& progress) {
    return m_impl->run(order, Mode::Train, progress);
}

Metrics EventPropCompiler::evaluate(std::span<const uint32_t> examples,
                                    const Progress& progress) {
    return m_impl->run(examples, Mode::Evaluate, progress);
}

Metrics EventPropCompiler::computeGradients(std::span<const uint32_t> batch) {
    if (batch.size() > m_impl->options.batchSize)
        throw ModelError("computeGradients takes at most batchSize (" +
                         std::to_string(m_impl->options.batchSize) + ") examples, got " +
                         std::to_string(batch.size()));
    return m_impl->run(batch, Mode::Gradients);
}

std::vector<double> EventPropCompiler::weights(const std::string& connection) {
    return m_impl->pullScalars(connection, "g");
}

void EventPropCompiler::setWeights(const std::string& connection, std::span<const double> values) {
    auto& s = *m_impl;
    s.sim->pull(connection, "g");
    if (s.options.precision == Precision::Double) {
        auto v = s.sim->view<double>(connection, "g");
        if (v.size() != values.size())
            throw ModelError("connection '" + connection + "' has " + std::to_string(v.size()) +
                             " weights, got " + std::to_string(values.size()));
        std::copy(values.begin(), values.end(), v.begin());
    } else {
        auto v = s.sim->view<float>(connection, "g");
        if (v.size() != values.size())
            throw ModelError("connection '" + connection + "' has " + std::to_string(v.size()) +
                             " weights, got " + std::to_string(values.size()));
        for (size_t i = 0; i < v.size(); i++)
            v[i] = static_cast<float>(values[i]);
    }
    s.sim->push(connection, "g");
}

std::vector<double> EventPropCompiler::gradient(const std::string& connection) {
    return m_impl->pullScalars(connection, "ReducedGradient");
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
        out.emplace_back("EventPropAdam" + c.name, "m");
        out.emplace_back("EventPropAdam" + c.name, "v");
        out.emplace_back("EventPropAdam" + c.name, "updateCount");
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
        if (var == "updateCount")
            append(s.sim->view<uint32_t>(group, var));
        else if (s.options.precision == Precision::Double)
            append(s.sim->view<double>(group, var));
        else
            append(s.sim->view<float>(group, var));
        out.push_back(std::move(a));
    }
    return out;
}

void EventPropCompiler::loadState(const std::vector<StateArray>& state) {
    auto& s = *m_impl;
    const auto arrays = s.stateArrays();
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
        if (var == "updateCount")
            bytes = raw(s.sim->view<uint32_t>(group, var));
        else if (s.options.precision == Precision::Double)
            bytes = raw(s.sim->view<double>(group, var));
        else
            bytes = raw(s.sim->view<float>(group, var));
        if (bytes.size() != state[i].bytes.size())
            throw ModelError("state array '" + state[i].name + "' has " +
                             std::to_string(state[i].bytes.size()) + " bytes, this network " +
                             std::to_string(bytes.size()));
        targets.push_back(bytes);
    }
    for (size_t i = 0; i < arrays.size(); i++) {
        std::copy(state[i].bytes.begin(), state[i].bytes.end(), targets[i].begin());
        s.sim->push(arrays[i].first, arrays[i].second);
    }
}

Simulation& EventPropCompiler::simulation() {
    return *m_impl->sim;
}

const Network& EventPropCompiler::network() const {
    return m_impl->network;
}

} // namespace spikeforge::train
