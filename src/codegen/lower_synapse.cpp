// Spike propagation, postsynaptic learning and synapse-group / current-source initialisation
// bodies. How synapses are iterated comes from the group's connectivity descriptor.
#include "codegen/arrays.hpp"
#include "codegen/connectivity.hpp"
#include "codegen/lowerer.hpp"
#include "model/analysis.hpp"
#include "model/contexts.hpp"

namespace spikeforge::codegen {

namespace {

// Substitutions shared by pre- and post-spike synapse code: synapse, pre/post and neighbour
// variables, spike times, params. Synapse index local: sfSyn; batch local: batch.
void bindSynapseNames(Lowerer& e, const SynapseGroup& sg, const snippet::Scanned& scanned) {
    const Model& m = e.model;
    const auto& wu = sg.wu();
    const std::string nSyn = e.env.number("numSyn", "uint64_t", synapseCount(sg));
    auto used = [&](const std::string& n) { return scanned.referencedNames.count(n) > 0; };
    for (const auto& v : wu.model.vars) {
        if (!used(v.name)) continue;
        const std::string arr = e.env.array("g_" + v.name, resolveType(v.type, m.precision()),
                                            sg.name() + "." + v.name, useOf(scanned, v.name));
        e.subs[v.name] =
            arr + "[" + (hasBatchDim(v.access) ? "(size_t)batch * " + nSyn + " + " : "") + "sfSyn]";
    }
    auto bindNeuronVars = [&](const std::vector<VarDecl>& vars, const std::string& owner,
                              const std::string& prefix, const std::string& suffix,
                              const std::string& idx, const std::string& n) {
        for (const auto& v : vars) {
            if (!used(v.name + suffix)) continue;
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
    if (used("st_pre"))
        e.subs["st_pre"] = e.env.array("stPre", e.scalar(), sg.source().name() + ".st", Use::Read) +
                           "[(size_t)batch * sfNpre + id_pre]";
    if (used("st_post"))
        e.subs["st_post"] =
            e.env.array("stPost", e.scalar(), sg.target().name() + ".st", Use::Read) +
            "[(size_t)batch * sfNpost + id_post]";
    e.bindParams(scanned, contexts::evaluateParams(wu.model, wu.params, m.dt()), wu.dynamicParams,
                 sg.name(), "wu_p_");
    e.bindEGPs(scanned, wu.model, sg.name(), "wu_e_");
    e.subs["t"] = "sf_t";
    e.subs["dt"] = e.lit(m.dt());
    e.subs["num_pre"] = "sfNpre";
    e.subs["num_post"] = "sfNpost";
}

std::string sizesSetup(Lowerer& e, const SynapseGroup& sg) {
    const std::string S = e.scalar();
    return "const uint32_t sfNpre = " + e.env.number("numPre", "uint32_t", sg.source().size()) +
           ";\nconst uint32_t sfNpost = " +
           e.env.number("numPost", "uint32_t", sg.target().size()) + ";\n" + "const " + S +
           " sf_t = (" + S + ")a->t; (void)sf_t;\n";
}

// The spike queue of `ng` read for spikes emitted `1 + delay` steps ago.
void spikeSource(Lowerer& e, PropagationBody& b, const NeuronGroup& ng, const std::string& prefix,
                 unsigned delay) {
    const std::string D = e.env.number(prefix + "DelaySlots", "uint32_t", ng.numDelaySlots());
    const std::string d = e.env.number(prefix + "Delay", "uint32_t", delay);
    b.slot = "(uint32_t)((a->step + " + D + " - (1u + " + d + ") % " + D + ") % " + D + ")";
    b.delaySlots = D;
    b.spkCnt = e.env.array(prefix + "SpkCnt", "uint32_t", ng.name() + ".spkCnt", Use::Read);
    b.spk = e.env.array(prefix + "Spk", "uint32_t", ng.name() + ".spk", Use::Read);
}

// Whether each target's updates are independent of the other targets': the code writes only
// synapse variables and variables of the postsynaptic side (and the target's input).
bool targetsIndependent(const SynapseGroup& sg, const snippet::Scanned& scanned) {
    std::set<std::string> own;
    for (const auto& v : sg.wu().model.vars)
        own.insert(v.name);
    for (const auto& v : sg.wu().model.postVars)
        own.insert(v.name);
    for (const auto& v : sg.target().model().vars)
        own.insert(v.name + "_post");
    for (const auto& n : scanned.assignedNames)
        if (!own.count(n)) return false;
    return true;
}

} // namespace

LoweredGroup lowerPresynapticUpdate(const Model& m, const SynapseGroup& sg) {
    Lowerer e(m);
    const std::string& n = sg.name();
    const auto& scanned = analysis::of(m, n, "preSpikeSynCode");
    PropagationBody b;
    b.presynaptic = true;
    b.setup = sizesSetup(e, sg);
    bindSynapseNames(e, sg, scanned);
    // addToPost adds to the target's input (SF_ADD_TO_POST).
    const std::string inSyn = e.env.array("inSyn", e.scalar(), n + ".inSyn", Use::ReadWrite);
    e.subs["addToPost"] = hookName(Hook::AddToPost);
    e.subs["addToPostDelay"] = hookName(Hook::AddToPostDelay);
    b.perSynapse = e.render(n, "preSpikeSynCode");
    b.perBatch = globalPointer(e.scalar()) + " sfInSyn = " + inSyn +
                 " + (size_t)batch * sfNpost; (void)sfInSyn;\n";
    if (usesDendriticDelay(m, sg)) {
        const std::string dd = e.env.number("dd", "uint32_t", sg.maxDendriticDelaySteps());
        b.perBatch += "const uint32_t sfDd = " + dd + ";\nconst uint64_t sfStep = a->step;\n" +
                      globalPointer(e.scalar()) + " sfDen = " +
                      e.env.array("denDelay", e.scalar(), n + ".denDelay", Use::ReadWrite) +
                      " + (size_t)batch * sfDd * sfNpost;\n" + globalPointer("uint32_t") +
                      " sfErr = " + e.errorWord(sg) + ";\n";
    }
    spikeSource(e, b, sg.source(), "src", sg.axonalDelaySteps());
    b.spikeStride = "sfNpre";
    b.spikeId = "id_pre";
    b.loop = connectivityOf(sg)->rowLoop(e.env);
    if (targetsIndependent(sg, scanned)) b.numTargets = "sfNpost";
    return e.finish(n, std::move(b), synapseCount(sg), synapseExtent(sg));
}

LoweredGroup lowerPostsynapticUpdate(const Model& m, const SynapseGroup& sg) {
    Lowerer e(m);
    const std::string& n = sg.name();
    PropagationBody b;
    b.presynaptic = false;
    b.setup = sizesSetup(e, sg);
    bindSynapseNames(e, sg, analysis::of(m, n, "postSpikeSynCode"));
    b.perSynapse = e.render(n, "postSpikeSynCode");
    spikeSource(e, b, sg.target(), "tgt", 0);
    b.spikeStride = "sfNpost";
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
    b.connectivity = conn->build(e);
    const auto& wu = sg.wu().model;
    const std::string nSyn = e.env.number("numSynInit", "uint64_t", synapseCount(sg));
    const std::string skip = conn->paddingSkip(e.env);
    for (const auto& v : wu.vars)
        b.vars.push_back(e.varInit(sg.name(), v, sg.wu().varInits.at(v.name), nSyn,
                                   hasBatchDim(v.access), skip));
    auto neuronShaped = [&](const std::vector<VarDecl>& vars, const VarInitMap& inits,
                            const std::string& count) {
        for (const auto& v : vars)
            b.vars.push_back(e.varInit(sg.name(), v, inits.at(v.name),
                                       hasElementDim(v.access) ? count : "1u",
                                       hasBatchDim(v.access)));
    };
    neuronShaped(wu.preVars, sg.wuPreVarInits(), "(size_t)sfNpre");
    neuronShaped(wu.postVars, sg.wuPostVarInits(), "(size_t)sfNpost");
    neuronShaped(sg.ps().model.vars, sg.ps().varInits, "(size_t)sfNpost");
    return e.finish(sg.name(), std::move(b), synapseCount(sg), synapseExtent(sg));
}

LoweredGroup lowerCurrentSourceInit(const Model& m, const CurrentSource& cs) {
    Lowerer e(m);
    const std::string N = e.env.number("numNeurons", "uint32_t", cs.target().size());
    InitBody b;
    for (const auto& v : cs.bound().model.vars)
        b.vars.push_back(e.varInit(cs.name(), v, cs.bound().varInits.at(v.name),
                                   hasElementDim(v.access) ? N : "1u", hasBatchDim(v.access)));
    return e.finish(cs.name(), std::move(b), cs.target().size());
}

} // namespace spikeforge::codegen
