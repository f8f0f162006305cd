// EventPropCompiler, part 1: the Network becomes one spikeforge::Model — forward and backward
// dynamics in the same groups (eventprop_models.hpp), the loss, the gradient reduction and Adam
// as custom updates — and is compiled (eventprop_impl.hpp).
#include "train/eventprop_impl.hpp"

#include "spikeforge/errors.hpp"
#include "spikeforge/models.hpp"

#include "train/eventprop_models.hpp"

#include <algorithm>
#include <cmath>

namespace spikeforge::train {

using namespace detail;

namespace {

VarInit weightInit(const WeightInit& w) {
    if (w.sd == 0.0) return VarInit(w.mean);
    return init::Normal(w.mean, w.sd);
}

} // namespace

void EventPropCompiler::Impl::checkNetwork() {
    // The models count steps in 32-bit signed integers up to 2T (forward and backward).
    if (options.exampleTimesteps == 0 || options.exampleTimesteps > kMaxExampleTimesteps)
        throw ModelError("EventPropOptions::exampleTimesteps must be between 1 and " +
                         std::to_string(kMaxExampleTimesteps) + " (the step counters are " +
                         "32-bit), got " + std::to_string(options.exampleTimesteps));
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
                             (slot == &input ? "SpikeInput" : "readout") + " population ('" +
                             *slot + "' is the first)");
        *slot = p.name;
    }
    if (input.empty()) throw ModelError("the network has no SpikeInput population");
    if (readout.empty())
        throw ModelError("the network has no readout population (LeakyIntegrate or "
                         "FirstSpikeReadout) to train");
    const Population& out = network.population(readout);
    const bool varReadout =
        out.kind == PopulationKind::LeakyIntegrate && out.li.readout == Readout::Var;
    if (varReadout != (options.loss == Loss::MeanSquaredError))
        throw ModelError("readout '" + readout + "': " +
                         (varReadout
                              ? std::string("the Var readout takes the MeanSquaredError loss")
                              : std::string("the MeanSquaredError loss needs a "
                                            "LeakyIntegrate readout with Readout::Var")));
    if (!network.tauSynInto(readout))
        throw ModelError("readout '" + readout + "' has no incoming connection");
}

double EventPropCompiler::Impl::tauSynOf(const std::string& pop) const {
    return network.tauSynInto(pop).value_or(5.0); // no input: the value is never used
}

double EventPropCompiler::Impl::tauMemOf(const Population& p) const {
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

std::vector<TargetKind> EventPropCompiler::Impl::targetKinds(const std::string& pop) const {
    std::vector<TargetKind> kinds;
    for (const auto& c : network.connections()) {
        if (c.source != pop) continue;
        const TargetKind k = targetKindOf(c);
        if (std::find(kinds.begin(), kinds.end(), k) == kinds.end()) kinds.push_back(k);
    }
    return kinds;
}

TargetKind EventPropCompiler::Impl::targetKindOf(const Connection& c) const {
    return {tauMemOf(network.population(c.target)), c.params.tauSyn,
            c.params.synapse == Synapse::Delta};
}

ParamValues EventPropCompiler::Impl::lifParams(const std::string& name,
                                               const LifParams& lif) const {
    ParamValues p{{"T", double(options.exampleTimesteps)},
                  {"tauM", lif.tauMem},
                  {"tauS", tauSynOf(name)},
                  {"vThresh", lif.vThresh},
                  {"slots", double(lif.spikeBufferSize)},
                  {"regStrength", lif.regStrength},
                  {"regTarget", lif.regTarget},
                  {"batchSize", double(options.batchSize)}};
    const std::vector<TargetKind> kinds = targetKinds(name);
    for (size_t i = 0; i < kinds.size(); i++) {
        p["tgtTauM" + std::to_string(i)] = kinds[i].tauM;
        p["tgtTauS" + std::to_string(i)] = kinds[i].tauS;
    }
    return p;
}

VarInitMap EventPropCompiler::Impl::lifVars(const std::string& name) const {
    VarInitMap vars{{"V", 0.0},         {"I", 0.0},         {"F", 0.0},           {"InvD", 0.0},
                    {"LambdaV", 0.0},   {"LambdaI", 0.0},   {"LambdaINext", 0.0}, {"Step", 0.0},
                    {"BackSpike", 0.0}, {"NumSpikes", 0.0}, {"Dropped", 0.0},     {"SpikeSum", 0.0},
                    {"BackNext", -1.0}};
    for (const std::string& v : targetVarNames(targetKinds(name), backward))
        vars.insert({v, 0.0});
    return vars;
}

void EventPropCompiler::Impl::addPopulation(const Population& p) {
    const double T = options.exampleTimesteps;
    switch (p.kind) {
    case PopulationKind::SpikeInput:
        model->addNeuronGroup(p.name, p.size, detail::inputModel(backward),
                              {{"T", T},
                               {"numChannels", double(p.input.numChannels)},
                               {"delayStep", p.input.delayStep}},
                              {{"Example", -1.0},
                               {"Start", 0.0},
                               {"Cursor", 0.0},
                               {"End", 0.0},
                               {"Step", 0.0},
                               {"NextStep", 0.0},
                               {"Fired", -2.0},
                               {"Shift", 0.0}});
        return;
    case PopulationKind::Lif:
        model->addNeuronGroup(
            p.name, p.size,
            detail::lifModel(p.lif.spikeBufferSize, targetKinds(p.name), false, backward),
            lifParams(p.name, p.lif), lifVars(p.name));
        return;
    case PopulationKind::FirstSpikeReadout: {
        ParamValues params = lifParams(p.name, p.firstSpike.lif);
        params["tau0"] = p.firstSpike.tau0;
        VarInitMap vars = lifVars(p.name);
        vars.insert({{"TFirst", 1e30},
                     {"Logit", 0.0},
                     {"Prob", 0.0},
                     {"DLdt", 0.0},
                     {"Example", -1.0},
                     {"MaxV", -1e30},
                     {"MaxStep", 0.0},
                     {"SilentGrad", 0.0}});
        model->addNeuronGroup(
            p.name, p.size,
            detail::lifModel(p.firstSpike.lif.spikeBufferSize, targetKinds(p.name), true, backward),
            params, vars);
        return;
    }
    case PopulationKind::LeakyIntegrate: {
        VarInitMap vars{{"V", 0.0},
                        // MaxVar keeps the largest V: start below any
                        {"Sum", p.li.readout == Readout::MaxVar ? -1e30 : 0.0},
                        {"LambdaV", 0.0},
                        {"LambdaI", 0.0},
                        {"Grad", 0.0},
                        {"Prob", 0.0},
                        {"Step", 0.0},
                        {"Example", -1.0},
                        {"MaxStep", 0.0},
                        {"LambdaINext", 0.0},
                        {"LossDensity", 0.0}};
        if (p.li.readout == Readout::Var) vars.insert({{"SumSq", 0.0}, {"Target", 0.0}});
        model->addNeuronGroup(p.name, p.size,
                              detail::readoutModel(p.li.readout, options.exampleTimesteps, backward,
                                                   network.synapseInto(p.name) == Synapse::Delta),
                              {{"T", T}, {"tauM", p.li.tauMem}, {"tauS", tauSynOf(p.name)}}, vars);
        return;
    }
    }
}

void EventPropCompiler::Impl::addConnection(const Connection& c) {
    const Population& src = network.population(c.source);
    const double T = options.exampleTimesteps;
    VarInitMap vars{{"g", weightInit(c.params.weights)}};
    if (backward) vars.insert({{"Gradient", 0.0}, {"ReducedGradient", 0.0}});
    const bool delta = c.params.synapse == Synapse::Delta;
    const bool spiking = src.kind != PopulationKind::SpikeInput;
    const std::vector<TargetKind> kinds = targetKinds(c.source);
    const auto kind =
        static_cast<size_t>(std::find(kinds.begin(), kinds.end(), targetKindOf(c)) - kinds.begin());
    WeightUpdateInit wu{
        detail::synapseModel(spiking, kind, backward, delta), {{"T", T}}, vars, {}, {}};
    PostsynapticInit ps =
        delta ? PostsynapticInit{detail::deltaCurrModel(), {{"T", T}}, {}}
              : PostsynapticInit{detail::expCurrModel(), {{"T", T}, {"tauS", c.params.tauSyn}}, {}};
    std::optional<BlockSparseInit> blocks = c.params.blocks;
    if (blocks && c.params.pruning) blocks->prunedBy = "g"; // scored by the weights' norms
    SynapseGroup& sg =
        blocks ? model->addSynapseGroup(c.name, MatrixType::BlockSparse, 0, c.source, c.target, wu,
                                        ps, *blocks)
        : c.params.probability >= 1.0
            ? model->addSynapseGroup(c.name, MatrixType::Dense, 0, c.source, c.target, wu, ps)
            : model->addSynapseGroup(c.name, MatrixType::Sparse, 0, c.source, c.target, wu, ps,
                                     init::FixedProbability(c.params.probability));
    // A spiking source's second arrival into an exponential synapse comes one step later.
    if (spiking && !delta) sg.setMaxDendriticDelaySteps(2);
}

void EventPropCompiler::Impl::addTies(const std::string& var) {
    model->addCustomUpdate(
        kTies, kLoss, detail::tiesModel(), {}, {{"atMax", 0.0}},
        {{"output", {readout, var}}, {"maxValue", {kSoftmax + "Max", "maxValue"}}});
}

void EventPropCompiler::Impl::addCustomUpdates() {
    for (const std::string& pop : {input, readout}) {
        const std::string name = "EventPropSelect" + pop;
        const bool isInput = pop == input;
        ParamValues params{{"trialBase", 0.0}};
        VarReferenceMap refs{{"example", {pop, "Example"}}};
        if (isInput) {
            params.insert({{"shiftMax", 0.0}, {"shiftSeed", 0.0}});
            refs.insert({"shift", {pop, "Shift"}});
        }
        auto& cu = model->addCustomUpdate(name, kTrial, detail::selectExampleModel(isInput), params,
                                          {}, refs, {{"perm", {input, "perm"}}});
        cu.setParamDynamic("trialBase");
        if (isInput) {
            cu.setParamDynamic("shiftMax");
            cu.setParamDynamic("shiftSeed");
        }
        selectUpdates.push_back(name);
    }
    const Population& out = network.population(readout);
    if (out.kind == PopulationKind::FirstSpikeReadout) {
        models::addSoftmax(*model, kSoftmax, kLoss, {readout, "Logit"}, {readout, "Prob"});
        addTies("Logit");
        model->addCustomUpdate(kLossValue, kLoss, detail::firstSpikeLossModel(),
                               {{"tau0", out.firstSpike.tau0},
                                {"tau1", out.firstSpike.tau1},
                                {"alphaReg", out.firstSpike.alpha},
                                {"silentPush", out.firstSpike.silentPush},
                                {"vThresh", out.firstSpike.lif.vThresh}},
                               {{"lossSum", 0.0}, {"correct", 0.0}},
                               {{"logit", {readout, "Logit"}},
                                {"maxLogit", {kSoftmax + "Max", "maxValue"}},
                                {"atMax", {kTies, "atMax"}},
                                {"prob", {readout, "Prob"}},
                                {"sumExp", {kSoftmax + "Sum", "sumExp"}},
                                {"tFirst", {readout, "TFirst"}},
                                {"maxV", {readout, "MaxV"}},
                                {"silentGrad", {readout, "SilentGrad"}},
                                {"example", {readout, "Example"}},
                                {"dldt", {readout, "DLdt"}}},
                               {{"labels", {input, "labels"}}});
    } else if (options.loss == Loss::MeanSquaredError) {
        models::addSoftmax(*model, kSoftmax, kLoss, {readout, "Sum"}, {readout, "Prob"});
        addTies("Sum");
        model->addCustomUpdate(kLossValue, kLoss, detail::meanSquaredErrorModel(),
                               {{"T", double(options.exampleTimesteps)}},
                               {{"lossSum", 0.0}, {"correct", 0.0}},
                               {{"sum", {readout, "Sum"}},
                                {"sumSq", {readout, "SumSq"}},
                                {"maxSum", {kSoftmax + "Max", "maxValue"}},
                                {"atMax", {kTies, "atMax"}},
                                {"example", {readout, "Example"}},
                                {"target", {readout, "Target"}}},
                               {{"labels", {input, "labels"}}});
    } else {
        models::addSoftmax(*model, kSoftmax, kLoss, {readout, "Sum"}, {readout, "Prob"});
        addTies("Sum");
        model->addCustomUpdate(kLossValue, kLoss, detail::crossEntropyModel(), {},
                               {{"lossSum", 0.0}, {"correct", 0.0}},
                               {{"readout", {readout, "Sum"}},
                                {"maxReadout", {kSoftmax + "Max", "maxValue"}},
                                {"atMax", {kTies, "atMax"}},
                                {"prob", {readout, "Prob"}},
                                {"sumExp", {kSoftmax + "Sum", "sumExp"}},
                                {"example", {readout, "Example"}},
                                {"grad", {readout, "Grad"}}},
                               {{"labels", {input, "labels"}}});
    }
    if (!backward) return; // inference: no spike buffers, gradients or optimiser
    for (const auto& p : network.populations()) {
        if (p.kind != PopulationKind::Lif && p.kind != PopulationKind::FirstSpikeReadout) continue;
        model->addCustomUpdate("EventPropSpikeSum" + p.name, kLoss, detail::spikeSumModel(), {}, {},
                               {{"count", {p.name, "NumSpikes"}},
                                {"dropped", {p.name, "Dropped"}},
                                {"spikeSum", {p.name, "SpikeSum"}}});
        model->addCustomUpdate("EventPropDropped" + p.name, kLoss, detail::droppedModel(), {},
                               {{"total", 0.0}}, {{"dropped", {p.name, "Dropped"}}});
        // Spikes per neuron over the batches with a backward pass, for boostSilentNeurons.
        model->addCustomUpdate(kEpochSpikes + p.name, kReduce, detail::epochSpikesModel(), {},
                               {{"count", 0.0}}, {{"spikeSum", {p.name, "SpikeSum"}}});
        lifPopulations.push_back(p.name);
    }
    const AdamParams& a = options.adam;
    for (const auto& c : network.connections()) {
        model->addCustomUpdateWU(
            "EventPropReduce" + c.name, kReduce, models::BatchReduceAndZero(), {}, {},
            {{"gradient", {c.name, "Gradient"}}, {"reducedGradient", {c.name, "ReducedGradient"}}});
        model->addCustomUpdateWU(
            kCheck + c.name, kCheck, detail::finiteCheckModel(), {}, {{"bad", 0.0}},
            {{"gradient", {c.name, "ReducedGradient"}}, {"weight", {c.name, "g"}}});
        const bool warmup = a.warmupStart > 0.0;
        ParamValues adamParams{{"beta1", a.beta1},
                               {"beta2", a.beta2},
                               {"epsilon", a.epsilon},
                               {"alpha", a.learningRate}};
        if (warmup) {
            adamParams["warmupStart"] = a.warmupStart;
            adamParams["warmupFactor"] = a.warmupFactor;
        }
        auto& adam = model->addCustomUpdateWU(
            "EventPropAdam" + c.name, kAdam, warmup ? models::AdamWarmup() : models::Adam(),
            adamParams, {{"m", 0.0}, {"v", 0.0}},
            {{"gradient", {c.name, "ReducedGradient"}}, {"variable", {c.name, "g"}}});
        adam.setParamDynamic("alpha");
    }
}

void EventPropCompiler::Impl::build(const BackendPreferences& prefs) {
    checkNetwork();
    model = std::make_unique<Model>(backward ? "eventprop" : "inference");
    model->setDT(options.dt);
    model->setPrecision(options.precision);
    model->setBatchSize(options.batchSize);
    model->setSeed(options.seed);
    for (const auto& p : network.populations()) {
        addPopulation(p);
        if (recorded.count(p.name)) model->neuronGroup(p.name).setSpikeRecording(true);
    }
    for (const auto& c : network.connections())
        addConnection(c);
    addCustomUpdates();
    BackendPreferences p = prefs;
    p.keepInitialState = true; // every trial starts with resetState
    // Device errors are read at the end of each call and at its progress points, not every
    // errorCheckInterval steps: a batch is one stretch of device work (eventprop.hpp).
    p.errorCheckInterval = 0;
    sim = std::make_unique<Simulation>(*model, p);
}

} // namespace spikeforge::train
