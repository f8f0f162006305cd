#include "codegen/arrays.hpp"

#include "codegen/checked_size.hpp"
#include "codegen/connectivity.hpp"
#include "codegen/layouts/buffers.hpp"
#include "model/analysis.hpp"
#include "model/contexts.hpp"
#include "model/var_refs.hpp"

#include <algorithm>

namespace spikeforge::codegen {

std::string indexType(unsigned numPost) {
    if (numPost <= 0x100u) return "uint8_t";
    if (numPost <= 0x10000u) return "uint16_t";
    return "uint32_t";
}

size_t synapseCount(const SynapseGroup& sg) {
    return connectivityOf(sg)->synapseCount();
}

SynapseExtent synapseExtent(const SynapseGroup& sg) {
    return {sg.source().size(), sg.target().size(), sg.rowStride()};
}

unsigned bitWords(unsigned n) {
    return (n + 31) / 32;
}

size_t varCount(VarAccess access, size_t elements, unsigned batch) {
    return checkedMul(hasElementDim(access) ? elements : 1, hasBatchDim(access) ? batch : 1,
                      "variable elements x batch");
}

bool usesDendriticDelay(const Model& m, const SynapseGroup& sg) {
    // A fact the checker records: a call on the checked tree, not a text match.
    const auto& wu = sg.wu().model;
    for (const auto& [field, code] : {std::pair{"preSpikeSynCode", &wu.preSpikeSynCode},
                                      std::pair{"synapseDynamicsCode", &wu.synapseDynamicsCode},
                                      std::pair{"preEventSynCode", &wu.preEventSynCode}})
        if (!code->empty() && analysis::of(m, sg.name(), field).usesAddToPostDelay) return true;
    return false;
}

bool usesAddToPre(const Model& m, const SynapseGroup& sg) {
    const auto& wu = sg.wu().model;
    for (const auto& [field, code] : {std::pair{"preSpikeSynCode", &wu.preSpikeSynCode},
                                      std::pair{"postSpikeSynCode", &wu.postSpikeSynCode},
                                      std::pair{"synapseDynamicsCode", &wu.synapseDynamicsCode},
                                      std::pair{"preEventSynCode", &wu.preEventSynCode},
                                      std::pair{"postEventSynCode", &wu.postEventSynCode}})
        if (!code->empty() && analysis::of(m, sg.name(), field).calledFunctions.count("addToPre"))
            return true;
    return false;
}

bool hasEventCondition(const SynapseGroup& sg, bool pre) {
    const auto& wu = sg.wu().model;
    return !(pre ? wu.preEventThresholdConditionCode : wu.postEventThresholdConditionCode).empty();
}

std::string eventFlagArray(bool pre) {
    return pre ? "preEvFlag" : "postEvFlag";
}

std::string eventTimeArray(bool pre) {
    return pre ? "preSeT" : "postSeT";
}

size_t synapseGroupIndex(const Model& m, const SynapseGroup& sg) {
    const auto& groups = m.synapseGroups();
    for (size_t i = 0; i < groups.size(); i++)
        if (groups[i].get() == &sg) return i;
    throw InternalError("synapse group '" + sg.name() + "' is not in the model");
}

bool needsColumnIndex(const SynapseGroup& sg) {
    return connectivityOf(sg)->needsColumnIndex();
}

uint32_t streamId(const std::string& group, const std::string& purpose) {
    uint32_t h = 2166136261u;
    for (char c : group + "/" + purpose) {
        h ^= static_cast<unsigned char>(c);
        h *= 16777619u;
    }
    return h;
}

namespace {

// Collects array declarations; every count is checked, and so is its byte count, so that no
// later size computation (runtime, backends) can wrap.
struct ArrayList {
    std::vector<ArrayDecl> out;
    void add(const std::string& owner, const std::string& var, const std::string& ctype,
             std::initializer_list<size_t> dims, bool state = false, bool batched = false) {
        add(owner, var, ctype, std::vector<size_t>(dims), state, batched);
    }
    void add(const std::string& owner, const std::string& var, const std::string& ctype,
             const std::vector<size_t>& dims, bool state = false, bool batched = false) {
        const std::string name = owner + "." + var;
        size_t count = 1;
        if (std::find(dims.begin(), dims.end(), size_t(0)) != dims.end()) count = 0;
        for (size_t d : dims)
            if (count) count = checkedMul(count, d, "array " + name);
        checkedMul(count, fieldSize(ctype), "array " + name + " (bytes)");
        out.push_back({name, ctype, count, false, state, batched});
    }
    void addBuffer(const std::string& owner, const BufferArray& a) {
        add(owner, a.var, a.ctype, a.dims, a.state, a.batched);
    }
    void addVars(const std::string& group, const std::vector<VarDecl>& vars, size_t elements,
                 unsigned batch, Precision p, bool state) {
        for (const auto& v : vars)
            add(group, v.name, resolveType(v.type, p),
                {hasElementDim(v.access) ? elements : 1, hasBatchDim(v.access) ? batch : 1u}, state,
                hasBatchDim(v.access));
    }
    void addEGPs(const std::string& group, const SnippetBase& s, Precision p) {
        for (const auto& e : s.egps)
            out.push_back({group + "." + e.name, resolveType(e.type, p), 0, true});
    }
};

void addNeuronArrays(ArrayList& l, const NeuronGroup& ng, unsigned B, Precision p) {
    const std::string& n = ng.name();
    const std::string scalar = resolveType("scalar", p);
    const size_t N = ng.size();
    for (const auto& a : SpikeQueue::arrays(spikesOf(ng), B))
        l.addBuffer(n, a);
    if (ng.spikeTimeRequired()) l.add(n, "st", scalar, {B, N}, true, true);
    if (ng.prevSpikeTimeRequired()) l.add(n, "prevSt", scalar, {B, N}, true, true);
    for (const auto& a : VariableHistory::arrays(historyOf(ng, p), B))
        l.addBuffer(n, a);
    for (const auto& a : SpikeRecording::arrays(spikesOf(ng), B))
        l.addBuffer(n, a);
    l.addVars(n, ng.model().vars, N, B, p, true);
    for (const auto& a : ng.model().arrays)
        l.add(n, a.name, resolveType(a.type, p), {B, N, a.slots}, a.trialState, true);
    l.addEGPs(n, ng.model(), p);
}

void addSynapseArrays(ArrayList& l, const Model& m, const SynapseGroup& sg) {
    const std::string& n = sg.name();
    const Precision p = m.precision();
    const unsigned B = m.batchSize();
    const std::string scalar = resolveType("scalar", p);
    const size_t pre = sg.source().size(), post = sg.target().size();
    l.add(n, "inSyn", scalar, {B, post}, true, true);
    if (usesDendriticDelay(m, sg))
        for (const auto& a : DendriticRing::arrays(sg, B, scalar))
            l.addBuffer(n, a);
    if (usesAddToPre(m, sg)) l.add(n, "outPre", scalar, {B, pre}, true, true);
    const auto& wu = sg.wu().model;
    if (connectivityOf(sg)->storesSynapseVars()) // weights: kept across trials
        l.addVars(n, wu.vars, synapseCount(sg), B, p, false);
    l.addVars(n, wu.preVars, pre, B, p, true);
    l.addVars(n, wu.postVars, post, B, p, true);
    for (const bool side : {true, false})
        for (const auto& a : VariableHistory::arrays(wuHistoryOf(sg, side, p), B))
            l.addBuffer(n, a);
    // Spike-like events: each neuron's flag of the step (set by the neuron update), the event
    // queue and bits (the event detection kernel), the last event time where read.
    for (const bool side : {true, false}) {
        if (!hasEventCondition(sg, side)) continue;
        const EventStream events = eventsOf(sg, side);
        const size_t neurons = side ? pre : post;
        l.add(n, eventFlagArray(side), "uint32_t", {B, neurons}, true, true);
        for (const auto& a : SpikeQueue::arrays(events, B))
            l.add(n, a.var, a.ctype, a.dims, true, a.batched);
        for (const auto& a : SpikeRecording::arrays(events, B))
            l.addBuffer(n, a);
    }
    for (const bool side : {true, false})
        if (sg.eventTimeRequired(side))
            l.add(n, eventTimeArray(side), scalar, {B, side ? pre : post}, true, true);
    l.addVars(n, sg.ps().model.vars, post, B, p, true);
    l.addEGPs(n, wu, p);
    l.addEGPs(n, sg.ps().model, p);
    for (const auto& a : connectivityOf(sg)->arrays())
        l.add(n, a.var, a.ctype, a.dims);
}

} // namespace

std::vector<ArrayDecl> planArrays(const Model& m) {
    ArrayList l;
    // At least one word, so every kernel that reports an error has storage to write.
    const size_t errorWords = snippetErrorWord(m.synapseGroups().size(), analysis::count(m));
    l.out.push_back({kErrorsArray, "uint32_t", std::max<size_t>(1, errorWords)});
    const Precision p = m.precision();
    const unsigned B = m.batchSize();
    for (const auto& ng : m.neuronGroups())
        addNeuronArrays(l, *ng, B, p);
    for (const auto& sg : m.synapseGroups())
        addSynapseArrays(l, m, *sg);
    for (const auto& cu : m.customUpdates()) {
        l.add(cu->name(), "updateCount", "uint32_t", {1});
        l.addEGPs(cu->name(), cu->model(), p); // bound by the custom-update emitter
        for (const auto& v : cu->model().vars) {
            const auto r = refs::ownVar(*cu, v, B);
            l.add(cu->name(), v.name, resolveType(v.type, p), {r.elements, r.batchDim ? B : 1u},
                  false, r.batchDim);
        }
    }
    for (const auto& cc : m.customConnectivityUpdates()) {
        l.add(cc->name(), "updateCount", "uint32_t", {1}); // keys the rows' random streams
        l.addEGPs(cc->name(), cc->model(), p);
        // Its own variables: one copy, shared by the batch (the update runs once for it).
        const SynapseGroup& sg = *cc->synapseGroup();
        for (const auto& [vars, count] :
             {std::pair{&cc->model().vars, synapseCount(sg)},
              std::pair{&cc->model().preVars, size_t(sg.source().size())},
              std::pair{&cc->model().postVars, size_t(sg.target().size())}})
            for (const auto& v : *vars)
                l.add(cc->name(), v.name, resolveType(v.type, p), {count});
        if (cc->model().columnUpdateCode.empty()) continue;
        // Column code: the synapses it removes (marks, per element) and each row's length
        // before its adds.
        l.add(cc->name(), "ccMark", "uint32_t", {sg.source().size(), sg.maxRowLength()});
        l.add(cc->name(), "ccOldLen", "uint32_t", {sg.source().size()});
    }
    for (const auto& cs : m.currentSources()) {
        l.addVars(cs->name(), cs->bound().model.vars, cs->target().size(), B, p, true);
        l.addEGPs(cs->name(), cs->bound().model, p);
    }
    return std::move(l.out);
}

} // namespace spikeforge::codegen
