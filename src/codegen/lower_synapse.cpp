// Spike propagation, postsynaptic learning and synapse-group / current-source initialisation
// bodies. How synapses are iterated comes from the group's connectivity descriptor.
#include "codegen/arrays.hpp"
#include "codegen/connectivity.hpp"
#include "codegen/layouts/buffers.hpp"
#include "codegen/lowerer.hpp"
#include "model/analysis.hpp"
#include "model/contexts.hpp"
#include "model/var_refs.hpp"

namespace spikeforge::codegen {

namespace {

// Substitutions shared by pre- and post-spike synapse code: synapse, pre/post and neighbour
// variables, spike times, params. Synapse index local: sfSyn; batch local: batch. Returns the
// statements evaluating the per-synapse variables the code uses where the layout stores none
// (for the loop's per-synapse part, after sfSyn), else "".
// Binds the names synapse code may use; with `prefetch`, appends to it the prefetch of each
// stored per-synapse variable the code reads (SynapseLoop::prefetch).
std::string bindSynapseNames(Lowerer& e, const SynapseGroup& sg, const snippet::Scanned& scanned,
                             std::string* prefetch = nullptr) {
    const Model& m = e.model;
    const auto& wu = sg.wu();
    const std::string nSyn = e.env.number("numSyn", "uint64_t", synapseCount(sg));
    auto used = [&](const std::string& n) { return scanned.referencedNames.count(n) > 0; };
    std::string evaluated;
    const bool stored = connectivityOf(sg)->storesSynapseVars();
    for (const auto& v : wu.model.vars) {
        if (!used(v.name)) continue;
        if (!stored) { // read-only (finalise): its initialiser's value at this element
            const std::string local = "sfVal_" + v.name;
            // id_pre and id_post are the loop's own here.
            e.initNames = {{"num_pre", "sfNpre"}, {"num_post", "sfNpost"}};
            evaluated += e.varValue(sg.name(), v, wu.varInits.at(v.name), "a->seed", "sfSyn",
                                    hasBatchDim(v.access) ? "batch" : "0u", local);
            e.subs[v.name] = local;
            continue;
        }
        const std::string type = resolveType(v.type, m.precision());
        const std::string arr =
            e.env.array("g_" + v.name, type, sg.name() + "." + v.name, useOf(scanned, v.name));
        const std::string batchOffset = hasBatchDim(v.access) ? "(size_t)batch * " + nSyn : "";
        e.subs[v.name] = arr + "[" + (batchOffset.empty() ? "" : batchOffset + " + ") + "sfSyn]";
        if (prefetch)
            *prefetch += prefetchRange(
                batchOffset.empty() ? arr : "(" + arr + " + " + batchOffset + ")", type);
    }
    // With an axonal (back-propagation) delay, the source's (target's) names it keeps a history
    // of, and the weight update's pre (post) variables, read the slot of the spikes delivered
    // this step: the values of the step that emitted them (VariableHistory). Bound first; the
    // present values are bound for the rest.
    std::set<std::string> fromHistory;
    for (const bool pre : {true, false}) {
        const unsigned delay = pre ? sg.axonalDelaySteps() : sg.backPropDelaySteps();
        if (delay == 0) continue;
        const std::string side = pre ? "src" : "tgt", suffix = pre ? "_pre" : "_post";
        const std::string n = pre ? "sfNpre" : "sfNpost", id = pre ? "id_pre" : "id_post";
        // Bound on first use: a body reading nothing delayed gains no field.
        std::string delayField;
        auto slotOf = [&](const VariableHistory& h) {
            if (delayField.empty()) delayField = e.env.number(side + "Delay", "uint32_t", delay);
            return h.readSlot(delayField);
        };
        const VariableHistory neuron(e.env,
                                     historyOf(pre ? sg.source() : sg.target(), m.precision()),
                                     side + "Hist_", side + "DelaySlots", Use::Read, n);
        for (const auto& [name, type] : neuron.keeps().types)
            if (used(name + suffix) && fromHistory.insert(name + suffix).second)
                e.subs[name + suffix] = neuron.element(name, slotOf(neuron), id);
        const VariableHistory wuVars(e.env, wuHistoryOf(sg, pre, m.precision()),
                                     pre ? "preHist_" : "postHist_", side + "DelaySlots", Use::Read,
                                     n);
        for (const auto& [name, type] : wuVars.keeps().types)
            if (used(name) && fromHistory.insert(name).second)
                e.subs[name] = wuVars.element(name, slotOf(wuVars), id);
    }
    auto delayed = [&](const std::string& name) { return fromHistory.count(name) > 0; };
    auto bindNeuronVars = [&](const std::vector<VarDecl>& vars, const std::string& owner,
                              const std::string& prefix, const std::string& suffix,
                              const std::string& idx, const std::string& n) {
        for (const auto& v : vars) {
            if (!used(v.name + suffix) || delayed(v.name + suffix)) continue;
            const std::string arr =
                e.env.array(prefix + v.name, resolveType(v.type, m.precision()),
                            owner + "." + v.name, useOf(scanned, v.name + suffix));
            e.subs[v.name + suffix] = arr + "[" + neuronVarIndex(v.access, idx, n) + "]";
        }
    };
    bindNeuronVars(wu.model.preVars, sg.name(), "pre_", "", "id_pre", "sfNpre");
    bindNeuronVars(wu.model.postVars, sg.name(), "post_", "", "id_post", "sfNpost");
    bindNeuronVars(sg.source().model().vars, sg.source().name(), "src_", "_pre", "id_pre",
                   "sfNpre");
    bindNeuronVars(sg.target().model().vars, sg.target().name(), "tgt_", "_post", "id_post",
                   "sfNpost");
    if (used("st_pre") && !delayed("st_pre"))
        e.subs["st_pre"] = e.env.array("stPre", e.scalar(), sg.source().name() + ".st", Use::Read) +
                           "[(size_t)batch * sfNpre + id_pre]";
    if (used("st_post") && !delayed("st_post"))
        e.subs["st_post"] =
            e.env.array("stPost", e.scalar(), sg.target().name() + ".st", Use::Read) +
            "[(size_t)batch * sfNpost + id_post]";
    if (used("prev_st_pre") && !delayed("prev_st_pre"))
        e.subs["prev_st_pre"] =
            e.env.array("prevStPre", e.scalar(), sg.source().name() + ".prevSt", Use::Read) +
            "[(size_t)batch * sfNpre + id_pre]";
    for (const bool pre : {true, false}) // the last spike-like event of this group's stream
        if (used(pre ? "set_pre" : "set_post"))
            e.subs[pre ? "set_pre" : "set_post"] =
                e.env.array(pre ? "seTPre" : "seTPost", e.scalar(),
                            sg.name() + "." + eventTimeArray(pre), Use::Read) +
                (pre ? "[(size_t)batch * sfNpre + id_pre]" : "[(size_t)batch * sfNpost + id_post]");
    if (used("prev_st_post") && !delayed("prev_st_post"))
        e.subs["prev_st_post"] =
            e.env.array("prevStPost", e.scalar(), sg.target().name() + ".prevSt", Use::Read) +
            "[(size_t)batch * sfNpost + id_post]";
    e.bindParams(scanned, contexts::evaluateParams(wu.model, wu.params, m.dt()), wu.dynamicParams,
                 sg.name(), "wu_p_");
    e.bindEGPs(scanned, wu.model, sg.name(), "wu_e_");
    e.subs["t"] = "sf_t";
    e.subs["dt"] = e.lit(m.dt());
    e.subs["num_pre"] = "sfNpre";
    e.subs["num_post"] = "sfNpost";
    e.subs["num_batch"] = std::to_string(m.batchSize()) + "u";
    return evaluated;
}

// The queue of `stream` (a neuron group's spikes or a synapse group's spike-like events;
// `neurons` its size in the body) read for what was emitted `1 + delay` steps ago.
void spikeSource(Lowerer& e, PropagationBody& b, const EventStream& stream,
                 const std::string& prefix, unsigned delay, const std::string& neurons) {
    const SpikeQueue queue(e.env, stream, prefix, Use::Read, neurons);
    b.slot = queue.readSlot(e.env.number(prefix + "Delay", "uint32_t", delay));
    b.spikeCount = queue.count(queue.row("sfSlot"));
    b.spikeIds = queue.ids(queue.row("sfSlot"));
}

// With a delay of d steps the spike delivered now was emitted d + 1 steps ago: st_pre (st_post)
// in the code run for it is its time, as the neuron update stamped it ((scalar)(step * dt), the
// runtime's formula), not the neuron's latest spike, which may be a later one.
std::string emissionTime(Lowerer& e, unsigned delay) {
    return "((" + e.scalar() + ")((double)(a->step - " +
           e.env.number("emitLag", "uint32_t", delay + 1.0) + ") * " +
           literal(e.model.dt(), "double") + "))";
}

// What the code assigns beyond synapse variables, by owner: the spiking neuron's side (pre for
// the presynaptic update, post for postsynaptic learning), the other side, or neither (EGPs).
// Each set holds the names assigned.
struct Writes {
    std::set<std::string> spikeSide, otherSide, shared;
};

Writes writesOf(const SynapseGroup& sg, const snippet::Scanned& scanned, bool presynaptic) {
    std::set<std::string> synapse, pre, post;
    for (const auto& v : sg.wu().model.vars)
        synapse.insert(v.name);
    for (const auto& v : sg.wu().model.preVars)
        pre.insert(v.name);
    for (const auto& v : sg.source().model().vars)
        pre.insert(v.name + "_pre");
    for (const auto& v : sg.wu().model.postVars)
        post.insert(v.name);
    for (const auto& v : sg.target().model().vars)
        post.insert(v.name + "_post");
    Writes w;
    // addToPre writes the source neuron's input: the spike's side in presynaptic code.
    if (scanned.calledFunctions.count("addToPre"))
        (presynaptic ? w.spikeSide : w.otherSide).insert("addToPre");
    for (const auto& n : scanned.assignedNames) {
        if (synapse.count(n)) continue;
        if (pre.count(n))
            (presynaptic ? w.spikeSide : w.otherSide).insert(n);
        else if (post.count(n))
            (presynaptic ? w.otherSide : w.spikeSide).insert(n);
        else
            w.shared.insert(n);
    }
    return w;
}

// addToPre(x) adds to the source's outPre row of this batch element (SF_ADD_TO_PRE, preOutput).
// The span rule gives one work-item sole use of each source's slot: the spike's own (presynaptic
// code: the write is to the spike side) or a serial one (postsynaptic learning: the other side).
void bindAddToPre(Lowerer& e, const SynapseGroup& sg, const snippet::Scanned& scanned,
                  PropagationBody& b) {
    if (!scanned.calledFunctions.count("addToPre")) return;
    b.addsToPre = true;
    e.subs["addToPre"] = hookName(Hook::AddToPre);
    const std::string outPre =
        e.env.array("outPre", e.scalar(), sg.name() + ".outPre", Use::ReadWrite);
    b.perBatch += globalPointer(e.scalar()) + " sfOutPre = " + outPre +
                  " + (size_t)batch * sfNpre; (void)sfOutPre;\n";
    b.preOutput = "sfOutPre[id_pre]";
}

void setWrites(PropagationBody& b, const Writes& w) {
    b.writesSpikeSide = !w.spikeSide.empty();
    b.writesSpikeVars = w.spikeSide.size() > w.spikeSide.count("addToPre");
    b.writesOtherSide = !w.otherSide.empty();
    b.writesShared = !w.shared.empty();
}

// The user's span override (SynapseGroup::setSpanType) and why the code cannot run under it:
// a postsynaptic span runs one spike's synapses in parallel threads (and, when sparse, one
// target's synapses too); a presynaptic span runs spikes in parallel, and with more than one
// thread per spike also one spike's synapses.
void setSpan(PropagationBody& b, const SynapseGroup& sg, const Writes& w) {
    b.threadsPerSpike = sg.numThreadsPerSpike();
    const char* problem = nullptr;
    const std::set<std::string>* names = nullptr;
    switch (sg.spanType()) {
    case SpanType::Auto:
        b.span = b.threadsPerSpike > 0 ? PropagationBody::Span::Presynaptic
                                       : PropagationBody::Span::Auto;
        break;
    case SpanType::Postsynaptic:
        b.span = PropagationBody::Span::Postsynaptic;
        break;
    case SpanType::Presynaptic:
        b.span = PropagationBody::Span::Presynaptic;
        break;
    }
    if (!w.shared.empty() && b.span != PropagationBody::Span::Auto) {
        problem = "variables shared by every spike";
        names = &w.shared;
    } else if (b.span == PropagationBody::Span::Postsynaptic && !w.spikeSide.empty()) {
        problem = "presynaptic variables";
        names = &w.spikeSide;
    } else if (b.span == PropagationBody::Span::Postsynaptic && !w.otherSide.empty() &&
               !b.loop.indexIsTarget) {
        problem = "postsynaptic variables (only a dense postsynaptic span owns its targets)";
        names = &w.otherSide;
    } else if (b.span == PropagationBody::Span::Presynaptic && !w.otherSide.empty()) {
        problem = "postsynaptic variables";
        names = &w.otherSide;
    } else if (b.span == PropagationBody::Span::Presynaptic && b.threadsPerSpike > 1 &&
               !w.spikeSide.empty()) {
        problem = "presynaptic variables (one thread per spike needed)";
        names = &w.spikeSide;
    }
    if (problem)
        throw ModelError("synapse group '" + sg.name() + "', span type: the synapse code assigns " +
                         problem + " ('" + *names->begin() +
                         "'), which threads of this span would write concurrently");
}

// The inputs of code that adds to the targets (presynaptic spike code, synapse dynamics):
// addToPost (SF_ADD_TO_POST), addToPostDelay into the dendritic ring, addToPre; then renders
// `field` as the per-synapse code.
void bindTargetInputs(Lowerer& e, const SynapseGroup& sg, const snippet::Scanned& scanned,
                      PropagationBody& b, const std::string& field) {
    const std::string& n = sg.name();
    const std::string inSyn = e.env.array("inSyn", e.scalar(), n + ".inSyn", Use::ReadWrite);
    e.subs["addToPost"] = hookName(Hook::AddToPost);
    e.subs["addToPostDelay"] = hookName(Hook::AddToPostDelay);
    bindAddToPre(e, sg, scanned, b);
    b.perSynapse = e.render(n, field);
    b.perBatch += globalPointer(e.scalar()) + " sfInSyn = " + inSyn +
                  " + (size_t)batch * sfNpost; (void)sfInSyn;\n";
    b.postInput = "sfInSyn[id_post]";
    if (usesDendriticDelay(e.model, sg)) {
        const DendriticRing ring(e.env, sg, "", Use::ReadWrite, e.scalar());
        b.perBatch +=
            ring.writerSetup() + globalPointer("uint32_t") + " sfErr = " + e.errorWord(sg) + ";\n";
        b.delayedInput = ring.writerElement();
        b.delayLimit = ring.writerLimit();
        b.delayError = "sfErr";
    }
}

} // namespace

std::string sizesSetup(Lowerer& e, const SynapseGroup& sg) {
    const std::string S = e.scalar();
    return "const uint32_t sfNpre = " + e.env.number("numPre", "uint32_t", sg.source().size()) +
           ";\nconst uint32_t sfNpost = " +
           e.env.number("numPost", "uint32_t", sg.target().size()) + ";\n" + "const " + S +
           " sf_t = (" + S + ")a->t; (void)sf_t;\n";
}

LoweredGroup lowerPresynapticUpdate(const Model& m, const SynapseGroup& sg, bool events) {
    Lowerer e(m);
    const std::string& n = sg.name();
    const std::string field = events ? "preEventSynCode" : "preSpikeSynCode";
    const auto& scanned = analysis::of(m, n, field);
    PropagationBody b;
    b.presynaptic = true;
    b.setup = sizesSetup(e, sg);
    std::string varPrefetch;
    const std::string synapseValues = bindSynapseNames(e, sg, scanned, &varPrefetch);
    // The delivered spike's (event's) own time.
    const std::string own = events ? "set_pre" : "st_pre";
    if (sg.axonalDelaySteps() > 0 && scanned.referencedNames.count(own))
        e.subs[own] = emissionTime(e, sg.axonalDelaySteps());
    bindTargetInputs(e, sg, scanned, b, field);
    spikeSource(e, b, events ? eventsOf(sg, true) : spikesOf(sg.source()), "src",
                sg.axonalDelaySteps(), "sfNpre");
    b.spikeId = "id_pre";
    const auto conn = connectivityOf(sg);
    b.loop = conn->rowLoop(e);
    b.loop.perIter += synapseValues;
    if (sg.matrixPropagation() && !events) { // model/matrix.cpp chose it for the spike code
        const std::string& source = sg.source().name();
        b.matrix.blockSize = sg.blockSparse()->blockSize;
        b.matrix.blockRows = e.env.number("blockRows", "uint32_t", sg.numBlockRows());
        b.matrix.sourceWords =
            "(" + e.env.array("srcBits", "uint32_t", source + ".spkBits", Use::Read) +
            " + (size_t)batch * " +
            e.env.number("srcWords", "uint32_t", bitWords(sg.source().size())) + ")";
        b.matrix.columns = conn->columnLoop(e.env);
        b.matrix.columns.perIter += synapseValues;
    }
    if (!b.loop.prefetch.empty()) b.loop.prefetch += varPrefetch;
    const Writes writes = writesOf(sg, scanned, true);
    setWrites(b, writes);
    setSpan(b, sg, writes);
    // Each target's updates are independent when nothing but the synapses and the postsynaptic
    // side is written.
    if (!b.writesSpikeSide && !b.writesShared) b.numTargets = "sfNpost";
    return e.finish(n, std::move(b), synapseCount(sg), synapseExtent(sg));
}

// Synapse dynamics: the presynaptic update's row loop run for every source, in order, every step
// (spikeIds empty: PropagationBody), spikes or not. It reads the neurons' variables as the
// previous step left them, like spike code; the user's span override is for spikes, so the
// backend's own rule shares out the rows.
LoweredGroup lowerSynapseDynamics(const Model& m, const SynapseGroup& sg) {
    Lowerer e(m);
    const std::string& n = sg.name();
    const auto& scanned = analysis::of(m, n, "synapseDynamicsCode");
    PropagationBody b;
    b.presynaptic = true;
    b.setup = sizesSetup(e, sg);
    const std::string synapseValues = bindSynapseNames(e, sg, scanned);
    bindTargetInputs(e, sg, scanned, b, "synapseDynamicsCode");
    b.slot = "0u";
    b.spikeCount = "sfNpre";
    b.spikeId = "id_pre";
    b.loop = connectivityOf(sg)->rowLoop(e);
    b.loop.perIter += synapseValues;
    b.loop.prefetch.clear(); // rows in order: the hardware prefetcher follows them
    const Writes writes = writesOf(sg, scanned, true);
    setWrites(b, writes);
    if (!b.writesSpikeSide && !b.writesShared) b.numTargets = "sfNpost";
    return e.finish(n, std::move(b), synapseCount(sg), synapseExtent(sg));
}

LoweredGroup lowerPostsynapticUpdate(const Model& m, const SynapseGroup& sg, bool events) {
    Lowerer e(m);
    const std::string& n = sg.name();
    const std::string field = events ? "postEventSynCode" : "postSpikeSynCode";
    PropagationBody b;
    b.presynaptic = false;
    b.setup = sizesSetup(e, sg);
    const auto& scanned = analysis::of(m, n, field);
    if (!bindSynapseNames(e, sg, scanned).empty())
        throw InternalError("synapse group '" + n + "': postsynaptic learning without storage");
    // The delivered spike's (event's) own time, bound before the code is rendered.
    const std::string own = events ? "set_post" : "st_post";
    if (sg.backPropDelaySteps() > 0 && scanned.referencedNames.count(own))
        e.subs[own] = emissionTime(e, sg.backPropDelaySteps());
    bindAddToPre(e, sg, scanned, b);
    b.perSynapse = e.render(n, field);
    setWrites(b, writesOf(sg, scanned, false));
    spikeSource(e, b, events ? eventsOf(sg, false) : spikesOf(sg.target()), "tgt",
                sg.backPropDelaySteps(), "sfNpost");
    b.spikeId = "id_post";
    b.loop = connectivityOf(sg)->columnLoop(e.env);
    return e.finish(n, std::move(b), synapseCount(sg), synapseExtent(sg));
}

LoweredGroup lowerSynapseInit(const Model& m, const SynapseGroup& sg) {
    Lowerer e(m);
    const auto conn = connectivityOf(sg);
    InitBody b;
    b.setup = sizesSetup(e, sg) +
              "const uint32_t num_pre = sfNpre, num_post = sfNpost; (void)num_pre; "
              "(void)num_post;\n";
    b.build = conn->build(e);
    b.readsEarlierGroups = conn->buildReadsEarlierGroups();
    const auto& wu = sg.wu().model;
    const std::string nSyn = e.env.number("numSynInit", "uint64_t", synapseCount(sg));
    const std::string skip = conn->paddingSkip(e.env);
    e.initNames = {{"num_pre", "sfNpre"}, {"num_post", "sfNpost"}};
    if (conn->storesSynapseVars()) e.initPairDecode = conn->decode(e.env);
    for (const auto& v : conn->storesSynapseVars() ? wu.vars : std::vector<VarDecl>{})
        b.vars.push_back(e.varInit(sg.name(), v, sg.wu().varInits.at(v.name), nSyn,
                                   hasBatchDim(v.access), skip));
    e.initPairDecode.clear();
    auto neuronShaped = [&](const std::vector<VarDecl>& vars, const VarInitMap& inits,
                            const std::string& count) {
        e.initNames = {{"num_neurons", count}};
        for (const auto& v : vars)
            b.vars.push_back(e.varInit(sg.name(), v, inits.at(v.name),
                                       hasElementDim(v.access) ? count : "1u",
                                       hasBatchDim(v.access)));
    };
    neuronShaped(wu.preVars, sg.wuPreVarInits(), "(size_t)sfNpre");
    neuronShaped(wu.postVars, sg.wuPostVarInits(), "(size_t)sfNpost");
    neuronShaped(sg.ps().model.vars, sg.ps().varInits, "(size_t)sfNpost");
    // The last spike-like event times start before any event (set_pre, set_post).
    for (const bool pre : {true, false}) {
        if (!sg.eventTimeRequired(pre)) continue;
        VarInitLoop loop;
        loop.ctype = e.scalar();
        loop.array = e.env.array(pre ? "seTPre" : "seTPost", e.scalar(),
                                 sg.name() + "." + eventTimeArray(pre), Use::Write);
        loop.count = pre ? "(size_t)sfNpre" : "(size_t)sfNpost";
        loop.batch = m.batchSize();
        loop.body = std::string("arr[(size_t)batch * n + i] = ") + hookName(Hook::TimeMin) + ";\n";
        b.vars.push_back(loop);
    }
    // Every slot of a delayed pre (post) variable's history starts at its initial value
    // (VariableHistory), which the same work-item just stored.
    for (const bool pre : {true, false}) {
        const VariableHistory history(
            e.env, wuHistoryOf(sg, pre, m.precision()), pre ? "preHist_" : "postHist_",
            pre ? "srcDelaySlots" : "tgtDelaySlots", Use::Write, pre ? "sfNpre" : "sfNpost");
        for (const auto& [name, type] : history.keeps().types) {
            VarInitLoop loop;
            loop.ctype = type;
            loop.array = history.array(name);
            loop.count = pre ? "(size_t)sfNpre" : "(size_t)sfNpost";
            loop.batch = m.batchSize();
            loop.body = history.fillSlots(e.env.array(e.initFieldPrefix + "i_" + name, type,
                                                      sg.name() + "." + name, Use::Read) +
                                          "[(size_t)batch * n + i]");
            b.vars.push_back(loop);
        }
    }
    return e.finish(sg.name(), std::move(b), synapseCount(sg), synapseExtent(sg));
}

LoweredGroup lowerBlockPrune(const Model& m, const SynapseGroup& sg) {
    Lowerer e(m);
    auto program = connectivityOf(sg)->pruning(e);
    if (!program) throw InternalError("synapse group '" + sg.name() + "' cannot be pruned");
    InitBody b;
    b.setup = sizesSetup(e, sg) +
              "const uint32_t num_pre = sfNpre, num_post = sfNpost; (void)num_pre; "
              "(void)num_post;\n";
    b.build = std::move(program->steps);
    const std::string nSyn = e.env.number("numSynInit", "uint64_t", synapseCount(sg));
    e.initNames = {{"num_pre", "sfNpre"}, {"num_post", "sfNpost"}};
    e.initPairDecode = connectivityOf(sg)->decode(e.env);
    for (const auto& v : sg.wu().model.vars)
        b.vars.push_back(e.varInit(sg.name(), v, sg.wu().varInits.at(v.name), nSyn,
                                   hasBatchDim(v.access), program->movedOnly, program->round));
    e.initNames.clear();
    e.initPairDecode.clear();
    // A regrown tile's optimiser state starts afresh: every per-synapse variable of the custom
    // updates over the group (an Adam's moments), each update's fields apart.
    for (size_t k = 0; k < m.customUpdates().size(); k++) {
        const CustomUpdate& cu = *m.customUpdates()[k];
        if (!cu.isWUShaped() || cu.synapseGroup() != &sg) continue;
        e.initFieldPrefix = "cu" + std::to_string(k) + "_";
        for (const auto& v : cu.model().vars) {
            const auto r = refs::ownVar(cu, v, m.batchSize());
            if (!r.elementDim) continue;
            b.vars.push_back(e.varInit(cu.name(), {v.name, v.type, VarAccess::ReadWrite},
                                       cu.varInits().at(v.name), nSyn, r.batchDim,
                                       program->movedOnly, program->round));
        }
    }
    return e.finish(sg.name(), std::move(b), synapseCount(sg), synapseExtent(sg));
}

LoweredGroup lowerCurrentSourceInit(const Model& m, const CurrentSource& cs) {
    Lowerer e(m);
    const std::string N = e.env.number("numNeurons", "uint32_t", cs.target().size());
    InitBody b;
    e.initNames = {{"num_neurons", N}};
    for (const auto& v : cs.bound().model.vars)
        b.vars.push_back(e.varInit(cs.name(), v, cs.bound().varInits.at(v.name),
                                   hasElementDim(v.access) ? N : "1u", hasBatchDim(v.access)));
    return e.finish(cs.name(), std::move(b), cs.target().size());
}

} // namespace spikeforge::codegen
