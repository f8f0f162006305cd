// Neuron update and neuron-group initialisation bodies: the neuron model's code with its
// incoming synapse groups' postsynaptic models, current sources and weight-update pre/post code.
#include "codegen/arrays.hpp"
#include "codegen/layouts/buffers.hpp"
#include "codegen/lowerer.hpp"
#include "model/analysis.hpp"
#include "model/contexts.hpp"

namespace spikeforge::codegen {

namespace {

// Load/store of a block of variables into locals named prefix+name. The stores are known only
// once the code using the locals is rendered (VarBlock::stores).
struct VarBlock {
    struct Store {
        std::string name, statement;
    };
    std::string loads;
    std::vector<Store> writable;
    // Stores back the writable variables that code rendered through `e` so far assigns where
    // no store could follow (Lowerer::writtenBack). Every other assignment was followed by its
    // store (write-through), so a step that leaves a variable alone (a backward-pass variable
    // in the forward pass, an input's cursor between events) stores nothing for it, and one
    // no code assigns is never stored.
    std::string stores(const Lowerer& e) const {
        std::string s;
        for (const Store& w : writable)
            if (e.writtenBack.count(w.name)) s += w.statement;
        return s;
    }
};

VarBlock loadVars(Lowerer& e, const std::vector<VarDecl>& vars, const std::string& owner,
                  const std::string& fieldPrefix, const std::string& localPrefix,
                  const std::string& nExpr, Subs& subs) {
    VarBlock b;
    for (const auto& v : vars) {
        const std::string type = resolveType(v.type, e.model.precision());
        // Every variable is loaded; only writable ones are stored back.
        const std::string arr = e.env.array(fieldPrefix + v.name, type, owner + "." + v.name,
                                            isReadOnly(v.access) ? Use::Read : Use::ReadWrite);
        const std::string idx = neuronVarIndex(v.access, "sfId", nExpr);
        const std::string local = localPrefix + v.name;
        b.loads += type + " " + local + " = " + arr + "[" + idx + "];\n";
        const std::string store = "if (sfWrite) " + arr + "[" + idx + "] = " + local + ";";
        e.writeThrough.erase(v.name); // a name it shadows is not stored through it
        if (!isReadOnly(v.access)) {
            b.writable.push_back({v.name, store + "\n"});
            if (e.storeWhereAssigned) e.writeThrough[v.name] = store;
        }
        subs[v.name] = local;
    }
    return b;
}

// The neuron model's per-neuron arrays that `scanned` uses: name[k] indexes this neuron's row of
// `slots` values (the EGP index check bounds k). A write by a SIMT work-item past the group's end
// would land in neuron 0's row, so writing code keeps those work-items out
// (NeuronUpdateBody::unguardedWrites).
void bindNeuronArrays(Lowerer& e, const snippet::Scanned& scanned, const NeuronModel& nm,
                      const std::string& group, NeuronUpdateBody& b) {
    for (const auto& a : nm.arrays) {
        if (!scanned.referencedNames.count(a.name)) continue;
        const std::string arr = e.env.array("a_" + a.name, resolveType(a.type, e.model.precision()),
                                            group + "." + a.name, useOf(scanned, a.name));
        const std::string slots = std::to_string(a.slots) + "u";
        e.subs[a.name] = "(" + arr + " + ((size_t)batch * sfN + sfId) * " + slots + ")";
        e.subs["#size:" + a.name] = slots;
        if (scanned.assignedNames.count(a.name)) b.unguardedWrites = true;
    }
}

// One snippet run per neuron in its own scope: its variables loaded into locals, its parameters
// and EGPs bound under `fieldPrefix`, the code rendered (with `extra` substitutions), the
// variables stored back. The lowerer's substitutions are restored afterwards.
struct SnippetBlock {
    std::string loads, code, stores;
};

struct SnippetRef {
    const SnippetBase& model;
    const std::vector<VarDecl>& vars;
    const ParamValues& params;
    const std::set<std::string>& dynamic;
    const std::string& owner;
    std::string field; // code field of `owner`
};

SnippetBlock snippetBlock(Lowerer& e, const SnippetRef& s, const std::string& localPrefix,
                          const std::string& fieldPrefix, const Subs& extra = {}) {
    const auto& scanned = analysis::of(e.model, s.owner, s.field);
    Subs saved = e.subs;
    const auto savedWriteThrough = e.writeThrough;
    const auto v =
        loadVars(e, s.vars, s.owner, localPrefix + "v_", "l_" + localPrefix, "sfN", e.subs);
    e.bindParams(scanned, contexts::evaluateParams(s.model, s.params, e.model.dt()), s.dynamic,
                 s.owner, fieldPrefix + "p_");
    e.bindEGPs(scanned, s.model, s.owner, fieldPrefix + "e_");
    // Only this field sees the block's locals, and its assignments are written through; names
    // written back for fields before it count too (a conservative over-approximation: storing
    // an unchanged value is harmless).
    SnippetBlock b{v.loads, e.render(s.owner, s.field, extra), ""};
    b.stores = v.stores(e);
    e.subs = saved;
    e.writeThrough = savedWriteThrough;
    return b;
}

// The neuron's variables as `V_post` for a postsynaptic model or current source on it (the
// neuron's locals, which its own variables named `V` may shadow).
Subs targetVarNames(const Lowerer& e, const NeuronGroup& target) {
    Subs out;
    for (const auto& v : target.model().vars)
        out[v.name + "_post"] = e.subs.at(v.name);
    return out;
}

// Incoming synapse group k: accumulate its input (and dendritic delay ring) into Isyn.
std::string postsynapticBlock(Lowerer& e, const SynapseGroup& sg, size_t k) {
    const std::string p = "ps" + std::to_string(k) + "_";
    const auto& ps = sg.ps();
    Subs extra = targetVarNames(e, sg.target());
    extra["inSyn"] = "l_" + p + "inSyn";
    const auto b = snippetBlock(
        e, {ps.model, ps.model.vars, ps.params, ps.dynamicParams, sg.name(), "ps.simCode"}, p, p,
        extra);
    const std::string inSyn =
        e.env.array(p + "inSyn", e.scalar(), sg.name() + ".inSyn", Use::ReadWrite);
    std::string s =
        "{\n" + e.scalar() + " l_" + p + "inSyn = " + inSyn + "[(size_t)batch * sfN + sfId];\n";
    if (usesDendriticDelay(e.model, sg)) {
        const std::string slot =
            DendriticRing(e.env, sg, p, Use::ReadWrite, e.scalar()).readerElement();
        s += "l_" + p + "inSyn += " + slot + ";\nif (sfWrite) " + slot + " = 0;\n";
    }
    s += b.loads + b.code + b.stores;
    s += "if (sfWrite) " + inSyn + "[(size_t)batch * sfN + sfId] = l_" + p + "inSyn;\n}\n";
    return s;
}

// Outgoing synapse group whose code calls addToPre: what it added last step joins Isyn and the
// accumulator starts again from zero.
std::string presynapticOutputBlock(Lowerer& e, const SynapseGroup& sg) {
    if (!usesAddToPre(e.model, sg)) return "";
    const std::string out = e.env.array("out_" + std::to_string(synapseGroupIndex(e.model, sg)),
                                        e.scalar(), sg.name() + ".outPre", Use::ReadWrite);
    return "sfIsyn += " + out + "[(size_t)batch * sfN + sfId];\nif (sfWrite) " + out +
           "[(size_t)batch * sfN + sfId] = 0;\n";
}

std::string currentSourceBlock(Lowerer& e, const CurrentSource& cs, size_t k) {
    const std::string p = "cs" + std::to_string(k) + "_";
    const auto& bound = cs.bound();
    const auto b = snippetBlock(e,
                                {bound.model, bound.model.vars, bound.params, bound.dynamicParams,
                                 cs.name(), "injectionCode"},
                                p, p, targetVarNames(e, cs.target()));
    return "{\n" + b.loads + b.code + b.stores + "}\n";
}

// Weight-update pre (or post) variable code of synapse group k run by this neuron.
std::string wuNeuronBlock(Lowerer& e, const SynapseGroup& sg, size_t k, bool pre,
                          const std::string& field) {
    const auto& wu = sg.wu();
    const std::string& code = field == "preSpikeCode"      ? wu.model.preSpikeCode
                              : field == "preDynamicsCode" ? wu.model.preDynamicsCode
                              : field == "postSpikeCode"   ? wu.model.postSpikeCode
                                                           : wu.model.postDynamicsCode;
    if (code.empty()) return "";
    const std::string p = std::string(pre ? "wpre" : "wpost") + std::to_string(k) + "_";
    const auto b = snippetBlock(e,
                                {wu.model, pre ? wu.model.preVars : wu.model.postVars, wu.params,
                                 wu.dynamicParams, sg.name(), field},
                                p, "wu_" + p);
    return "{\n" + b.loads + b.code + b.stores + "}\n";
}

// Where a neuron-shaped body emits: the size, the queue slot, row and count of `stream` this
// step, and its bits and recording (SpikeQueue, SpikeRecording).
void bindEmission(Lowerer& e, NeuronUpdateBody& b, const EventStream& stream) {
    b.numNeurons = e.env.number("numNeurons", "uint32_t", stream.neurons);
    const SpikeQueue queue(e.env, stream, "", Use::Write, "sfN");
    b.slot = queue.writeSlot();
    b.queueRow = queue.row("sfSlot");
    b.queueCount = queue.count("sfRow");
    b.queueIds = queue.ids("sfRow");
    b.nextQueueCount = queue.count(queue.row(queue.nextSlot()));
    const SpikeRecording bits(e.env, stream);
    b.stepWords = bits.stepWords();
    b.recording = bits.recording();
    b.recordWords = bits.recordWords();
}

// The values this step leaves, kept at the slot its spikes go to for synapse code that reads
// them delayed (VariableHistory): the neuron's locals after its update and reset.
std::string historyStores(Lowerer& e, const NeuronGroup& ng) {
    const VariableHistory history(e.env, historyOf(ng, e.model.precision()), "hist_", "DelaySlots",
                                  Use::Write, "sfN");
    std::string s;
    for (const auto& [name, type] : history.keeps().types) {
        const std::string local = name == "st"        ? "l_st"
                                  : name == "prev_st" ? "l_prevSt"
                                                      : "l_" + name;
        s += "if (sfWrite) " + history.element(name, "sfSlot", "sfId") + " = " + local + ";\n";
    }
    return s;
}

// The same for the weight-update pre (post) variables of synapse group k (wuNeuronBlock's
// numbering) that delayed synapse code reads, as the step leaves them: read back after the
// blocks that may assign them stored them.
std::string wuHistoryStores(Lowerer& e, const SynapseGroup& sg, size_t k, bool pre) {
    const std::string p = std::string(pre ? "wpre" : "wpost") + std::to_string(k) + "_";
    const VariableHistory history(e.env, wuHistoryOf(sg, pre, e.model.precision()), p + "hist_",
                                  "DelaySlots", Use::Write, "sfN");
    std::string s;
    for (const auto& v : pre ? sg.wu().model.preVars : sg.wu().model.postVars) {
        const auto kept = history.keeps().types.find(v.name);
        if (kept == history.keeps().types.end()) continue;
        const std::string arr =
            e.env.array(p + "v_" + v.name, kept->second, sg.name() + "." + v.name, Use::Read);
        s += "if (sfWrite) " + history.element(v.name, "sfSlot", "sfId") + " = " + arr + "[" +
             neuronVarIndex(v.access, "sfId", "sfN") + "];\n";
    }
    return s;
}

// The spike-like event condition of synapse group k (wuNeuronBlock's numbering) on this neuron,
// tested after its simCode and before its reset, as GeNN does: `test` declares the flag
// sfEv<pre|post><k>, `store` writes it for the event detection kernel (lowerEventDetection).
struct EventTest {
    std::string test, store;
};

EventTest eventTest(Lowerer& e, const SynapseGroup& sg, size_t k, bool pre) {
    if (!hasEventCondition(sg, pre)) return {};
    const std::string field =
        pre ? "preEventThresholdConditionCode" : "postEventThresholdConditionCode";
    const std::string p = std::string(pre ? "wpre" : "wpost") + std::to_string(k) + "_";
    const std::string suffix = pre ? "_pre" : "_post";
    const auto& wu = sg.wu().model;
    const auto& scanned = analysis::of(e.model, sg.name(), field);
    const NeuronGroup& ng = pre ? sg.source() : sg.target();
    Subs saved = e.subs;
    for (const auto& v : ng.model().vars)
        e.subs[v.name + suffix] = saved.at(v.name); // the neuron's locals
    for (const auto& v : pre ? wu.preVars : wu.postVars)
        e.subs[v.name] = e.env.array(p + "v_" + v.name, resolveType(v.type, e.model.precision()),
                                     sg.name() + "." + v.name, Use::Read) +
                         "[" + neuronVarIndex(v.access, "sfId", "sfN") + "]";
    e.bindParams(scanned, contexts::evaluateParams(wu, sg.wu().params, e.model.dt()),
                 sg.wu().dynamicParams, sg.name(), "wu_" + p + "p_");
    e.bindEGPs(scanned, wu, sg.name(), "wu_" + p + "e_");
    e.subs[pre ? "id_pre" : "id_post"] = "id";
    e.subs[pre ? "num_pre" : "num_post"] = "sfN";
    const std::string flag = "sfEv" + std::string(pre ? "Pre" : "Post") + std::to_string(k);
    EventTest t;
    t.test = "const bool " + flag + " = (\n" + e.render(sg.name(), field) + ");\n";
    e.subs = saved;
    const std::string flags =
        e.env.array(p + "evFlag", "uint32_t", sg.name() + "." + eventFlagArray(pre), Use::Write);
    t.store = "if (sfWrite) " + flags + "[(size_t)batch * sfN + sfId] = " + flag + " ? 1u : 0u;\n";
    return t;
}

// Every slot of each history starts at the initial value (VariableHistory), after the
// variables' own initialisation, which the same work-item ran for the same element.
void historyInits(Lowerer& e, const NeuronGroup& ng, const std::string& N, InitBody& b) {
    const VariableHistory history(e.env, historyOf(ng, e.model.precision()), "hist_", "DelaySlots",
                                  Use::Write, N);
    for (const auto& [name, type] : history.keeps().types) {
        const bool time = name == "st" || name == "prev_st";
        const std::string initial = time ? std::string(hookName(Hook::TimeMin))
                                         : e.env.array(e.initFieldPrefix + "i_" + name, type,
                                                       ng.name() + "." + name, Use::Read) +
                                               "[(size_t)batch * n + i]";
        VarInitLoop loop;
        loop.ctype = type;
        loop.array = history.array(name);
        loop.count = N;
        loop.batch = e.model.batchSize();
        loop.body = history.fillSlots(initial);
        b.vars.push_back(loop);
    }
}

} // namespace

std::map<const NeuronGroup*, NeuronNeighbours> neuronNeighbours(const Model& m) {
    std::map<const NeuronGroup*, NeuronNeighbours> out;
    for (const auto& sg : m.synapseGroups()) {
        out[&sg->source()].synapseGroups.push_back(sg.get());
        if (&sg->target() != &sg->source()) out[&sg->target()].synapseGroups.push_back(sg.get());
    }
    for (const auto& cs : m.currentSources())
        out[&cs->target()].currentSources.push_back(cs.get());
    return out;
}

LoweredGroup lowerNeuronUpdate(const Model& m, const NeuronGroup& ng) {
    const auto all = neuronNeighbours(m);
    const auto found = all.find(&ng);
    return lowerNeuronUpdate(m, ng, found == all.end() ? NeuronNeighbours{} : found->second);
}

LoweredGroup lowerNeuronUpdate(const Model& m, const NeuronGroup& ng,
                               const NeuronNeighbours& neighbours) {
    Lowerer e(m);
    const auto& bound = ng.bound();
    const auto& nm = bound.model;
    const std::string& name = ng.name();
    const std::string S = e.scalar();
    NeuronUpdateBody b;
    // The fixed code stores the spike count and queue, loads and stores spike times, and
    // compacts the spike bits it stored into the queue (NeuronUpdateBody).
    bindEmission(e, b, spikesOf(ng));
    // The last spike time only where it is kept (NeuronGroup::spikeTimeRequired).
    const bool keepsSt = ng.spikeTimeRequired(), keepsPrev = ng.prevSpikeTimeRequired();
    const std::string st = keepsSt ? e.env.array("st", S, name + ".st", Use::ReadWrite) : "";
    const std::string prevSt =
        keepsPrev ? e.env.array("prevSt", S, name + ".prevSt", Use::ReadWrite) : "";
    const std::string stream = e.env.number("stream", "uint32_t", streamId(name, "sim"));

    e.subs = {{"t", "sf_t"},
              {"dt", e.lit(m.dt())},
              {"Isyn", "sfIsyn"},
              {"st", "l_st"},
              {"prev_st", "l_prevSt"},
              {"num_neurons", "sfN"},
              {"num_batch", std::to_string(m.batchSize()) + "u"},
              {"injectCurrent", "sfIsyn += "}};
    // Where the neuron's code has loops (an event cursor, a root finder), no compiler
    // vectorises the neuron loop, and unconditional stores at the end would only cost: each
    // variable is then stored where it is assigned, so a step that leaves it alone (an input
    // between events, a backward variable in the forward pass) stores nothing. Loop-free code
    // keeps one unconditional store per variable, which vectorised loops need.
    for (const char* f : {"simCode", "thresholdConditionCode", "resetCode"})
        e.storeWhereAssigned =
            e.storeWhereAssigned || snippet::containsLoop(analysis::of(m, name, f));
    b.loopFree = !e.storeWhereAssigned;
    const auto vars = loadVars(e, nm.vars, name, "v_", "l_", "sfN", e.subs);
    for (const char* f : {"simCode", "thresholdConditionCode", "resetCode"}) {
        const auto& scanned = analysis::of(m, name, f);
        e.bindParams(scanned, contexts::evaluateParams(nm, bound.params, m.dt()),
                     bound.dynamicParams, name, "p_");
        e.bindEGPs(scanned, nm, name, "e_");
        bindNeuronArrays(e, scanned, nm, name, b);
    }
    std::string inputs, dynamics, spikeCode, wuHistory;
    std::vector<std::pair<const SynapseGroup*, std::pair<size_t, bool>>> events;
    size_t k = 0, kPre = 0, kPost = 0;
    for (const SynapseGroup* sg : neighbours.synapseGroups) {
        if (&sg->target() == &ng) {
            inputs += postsynapticBlock(e, *sg, k++);
            dynamics += wuNeuronBlock(e, *sg, kPost, false, "postDynamicsCode");
            spikeCode += wuNeuronBlock(e, *sg, kPost, false, "postSpikeCode");
            events.push_back({sg, {kPost, false}});
            wuHistory += wuHistoryStores(e, *sg, kPost++, false);
        }
        if (&sg->source() == &ng) {
            inputs += presynapticOutputBlock(e, *sg);
            dynamics += wuNeuronBlock(e, *sg, kPre, true, "preDynamicsCode");
            spikeCode += wuNeuronBlock(e, *sg, kPre, true, "preSpikeCode");
            events.push_back({sg, {kPre, true}});
            wuHistory += wuHistoryStores(e, *sg, kPre++, true);
        }
    }
    k = 0;
    for (const CurrentSource* cs : neighbours.currentSources)
        inputs += currentSourceBlock(e, *cs, k++);

    const std::string sim = e.render(name, "simCode");
    const std::string reset = e.render(name, "resetCode");
    b.threshold = "false";
    if (!nm.thresholdConditionCode.empty())
        b.threshold = "(\n" + e.render(name, "thresholdConditionCode") + ")";
    // Every snippet of this body was rendered through `e`, which recorded whether one draws
    // random numbers; only then does each neuron seed a generator.
    b.usesRng = e.usesRng;
    b.independentNeurons = !e.writesEGP;
    b.perNeuron = S + " sfIsyn = 0; (void)sfIsyn;\n";
    if (keepsSt) b.perNeuron += S + " l_st = " + st + "[(size_t)batch * sfN + sfId];\n";
    if (keepsPrev) b.perNeuron += S + " l_prevSt = " + prevSt + "[(size_t)batch * sfN + sfId];\n";
    if (b.usesRng)
        b.perNeuron += std::string(hookName(Hook::RngState)) + " sfRng; " +
                       hookName(Hook::RngInit) + "(&sfRng, a->seed, " + stream +
                       ", id, batch, a->rngStep);\n";
    b.perNeuron += vars.loads + inputs + dynamics + sim;
    std::string eventFlags;
    for (const auto& [sg, at] : events) {
        const EventTest t = eventTest(e, *sg, at.first, at.second);
        b.perNeuron += t.test;
        eventFlags += t.store;
    }
    // The spike before this one becomes prev_st (GeNN's order: reset code sees the old times).
    b.onSpike = reset + (keepsPrev ? "l_prevSt = l_st;\n" : "") +
                (keepsSt ? "l_st = sf_t;\n" : "") + spikeCode;
    // Every snippet that sees the neuron's locals is rendered by now (its own fields and the
    // input, dynamics and spike blocks above, which may name its variables).
    b.store =
        (keepsSt ? "if (sfWrite) " + st + "[(size_t)batch * sfN + sfId] = l_st;\n" : "") +
        (keepsPrev ? "if (sfWrite) " + prevSt + "[(size_t)batch * sfN + sfId] = l_prevSt;\n" : "") +
        vars.stores(e) + historyStores(e, ng) + wuHistory + eventFlags;
    return e.finish(name, std::move(b), ng.size());
}

LoweredGroup lowerEventDetection(const Model& m, const SynapseGroup& sg, bool pre) {
    Lowerer e(m);
    const std::string S = e.scalar();
    const EventStream stream = eventsOf(sg, pre);
    NeuronUpdateBody b;
    bindEmission(e, b, stream);
    const std::string flags =
        e.env.array("evFlag", "uint32_t", sg.name() + "." + eventFlagArray(pre), Use::Read);
    b.threshold = "(" + flags + "[(size_t)batch * sfN + sfId] != 0u)";
    if (sg.eventTimeRequired(pre)) {
        const std::string times =
            e.env.array("seT", S, sg.name() + "." + eventTimeArray(pre), Use::Write);
        b.onSpike = "if (sfWrite) " + times + "[(size_t)batch * sfN + sfId] = sf_t;\n";
    }
    return e.finish(sg.name(), std::move(b), stream.neurons);
}

LoweredGroup lowerNeuronInit(const Model& m, const NeuronGroup& ng) {
    Lowerer e(m);
    const std::string N = e.env.number("numNeurons", "uint32_t", ng.size());
    InitBody b;
    for (const bool prev : {false, true}) {
        if (!(prev ? ng.prevSpikeTimeRequired() : ng.spikeTimeRequired())) continue;
        const std::string array = prev ? "prevSt" : "st";
        VarInitLoop st;
        st.ctype = e.scalar();
        st.array = e.env.array(array, e.scalar(), ng.name() + "." + array, Use::Write);
        st.count = N;
        st.batch = m.batchSize();
        st.body = std::string("arr[(size_t)batch * n + i] = ") + hookName(Hook::TimeMin) + ";\n";
        b.vars.push_back(st);
    }
    e.initNames = {{"num_neurons", N}};
    for (const auto& v : ng.model().vars)
        b.vars.push_back(e.varInit(ng.name(), v, ng.bound().varInits.at(v.name),
                                   hasElementDim(v.access) ? N : "1u", hasBatchDim(v.access)));
    historyInits(e, ng, N, b);
    return e.finish(ng.name(), std::move(b), ng.size());
}

} // namespace spikeforge::codegen
