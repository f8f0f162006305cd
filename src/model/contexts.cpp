#include "model/contexts.hpp"

namespace spikeforge::contexts {

using snippet::NameKind;
using Names = std::map<std::string, NameKind>;

namespace {

snippet::Context makeContext(const Model& m, const std::string& group, const std::string& field) {
    snippet::Context c;
    c.group = group;
    c.field = field;
    c.precision = m.precision();
    return c;
}

void addRandom(Names& n) {
    for (const char* f :
         {"rand_uniform", "rand_normal", "rand_exponential", "rand_gamma", "rand_binomial"})
        n[f] = NameKind::Function;
}

void addParams(Names& n, const SnippetBase& s) {
    for (const auto& p : s.params)
        n[p] = NameKind::ReadOnly;
    for (const auto& d : s.derivedParams)
        n[d.name] = NameKind::ReadOnly;
    for (const auto& e : s.egps)
        n[e.name] = NameKind::ReadOnly;
}

void addVars(Names& n, const std::vector<VarDecl>& vars, const std::string& suffix = "",
             bool forceReadOnly = false) {
    for (const auto& v : vars)
        n[v.name + suffix] =
            (forceReadOnly || isReadOnly(v.access)) ? NameKind::ReadOnly : NameKind::ReadWrite;
}

void addTime(Names& n) {
    n["t"] = NameKind::ReadOnly;
    n["dt"] = NameKind::ReadOnly;
    n["batch"] = NameKind::ReadOnly;
}

} // namespace

snippet::Context neuronContext(const Model& m, const NeuronGroup& ng, const std::string& field) {
    auto c = makeContext(m, ng.name(), field);
    addParams(c.names, ng.model());
    addVars(c.names, ng.model().vars);
    addTime(c.names);
    addRandom(c.names);
    for (const char* b : {"id", "Isyn", "st", "num_neurons"})
        c.names[b] = NameKind::ReadOnly;
    return c;
}

snippet::Context thresholdContext(const Model& m, const NeuronGroup& ng) {
    auto c = neuronContext(m, ng, "thresholdConditionCode");
    // A threshold condition is an expression: it must not change state.
    for (auto& [name, kind] : c.names)
        if (kind == NameKind::ReadWrite) kind = NameKind::ReadOnly;
    return c;
}

snippet::Context postsynapticContext(const Model& m, const SynapseGroup& sg) {
    auto c = makeContext(m, sg.name(), "ps.simCode");
    addVars(c.names, sg.target().model().vars, "", true);
    addParams(c.names, sg.ps().model);
    addVars(c.names, sg.ps().model.vars);
    addTime(c.names);
    addRandom(c.names);
    c.names["id"] = NameKind::ReadOnly;
    c.names["inSyn"] = NameKind::ReadWrite;
    c.names["injectCurrent"] = NameKind::Function;
    return c;
}

snippet::Context currentSourceContext(const Model& m, const CurrentSource& cs) {
    auto c = makeContext(m, cs.name(), "injectionCode");
    addVars(c.names, cs.target().model().vars, "", true);
    addParams(c.names, cs.bound().model);
    addVars(c.names, cs.bound().model.vars);
    addTime(c.names);
    addRandom(c.names);
    c.names["id"] = NameKind::ReadOnly;
    c.names["injectCurrent"] = NameKind::Function;
    return c;
}

snippet::Context synapseContext(const Model& m, const SynapseGroup& sg, const std::string& kind) {
    auto c = makeContext(m, sg.name(), kind);
    const auto& wu = sg.wu().model;
    addParams(c.names, wu);
    addVars(c.names, wu.vars);
    addVars(c.names, wu.preVars, "", true);
    addVars(c.names, wu.postVars, "", true);
    addVars(c.names, sg.source().model().vars, "_pre", true);
    addVars(c.names, sg.target().model().vars, "_post", true);
    addTime(c.names);
    for (const char* b : {"id_pre", "id_post", "st_pre", "st_post", "num_pre", "num_post"})
        c.names[b] = NameKind::ReadOnly;
    if (kind == "preSpikeSynCode") {
        c.names["addToPost"] = NameKind::Function;
        c.names["addToPostDelay"] = NameKind::Function;
    }
    return c;
}

snippet::Context wuNeuronContext(const Model& m, const SynapseGroup& sg, bool pre,
                                 const std::string& field) {
    auto c = makeContext(m, sg.name(), field);
    const auto& wu = sg.wu().model;
    addParams(c.names, wu);
    addVars(c.names, pre ? wu.preVars : wu.postVars);
    addTime(c.names);
    c.names["id"] = NameKind::ReadOnly;
    return c;
}

snippet::Context varInitContext(const Model& m, const std::string& group, const std::string& var,
                                const VarInit& init) {
    auto c = makeContext(m, group, "init." + var);
    addParams(c.names, init.snippet());
    addRandom(c.names);
    c.names["value"] = NameKind::ReadWrite;
    c.names["id"] = NameKind::ReadOnly;
    c.names["batch"] = NameKind::ReadOnly;
    c.names["num_batch"] = NameKind::ReadOnly;
    return c;
}

snippet::Context customUpdateContext(const Model& m, const CustomUpdate& cu) {
    auto c = makeContext(m, cu.name(), "updateCode");
    const auto& model = cu.model();
    addParams(c.names, model);
    auto kind = [](CustomUpdateVarAccess a) {
        const bool ro = a == CustomUpdateVarAccess::ReadOnly ||
                        a == CustomUpdateVarAccess::ReadOnlyShared ||
                        a == CustomUpdateVarAccess::ReadOnlySharedNeuron;
        return ro ? NameKind::ReadOnly : NameKind::ReadWrite;
    };
    for (const auto& v : model.vars) c.names[v.name] = kind(v.access);
    for (const auto& r : model.varRefs) c.names[r.name] = kind(r.access);
    for (const auto& e : model.egpRefs) c.names[e.name] = NameKind::ReadWrite;
    c.names["dt"] = NameKind::ReadOnly;
    c.names["batch"] = NameKind::ReadOnly;
    c.names["id"] = NameKind::ReadOnly;
    c.names["updateCount"] = NameKind::ReadOnly;
    if (cu.isWUShaped()) {
        c.names["id_pre"] = NameKind::ReadOnly;
        c.names["id_post"] = NameKind::ReadOnly;
    }
    return c;
}

snippet::Context rowBuildContext(const Model& m, const SynapseGroup& sg) {
    auto c = makeContext(m, sg.name(), "connectivity.rowBuildCode");
    addParams(c.names, sg.connectivity()->snippet);
    addRandom(c.names);
    for (const char* b : {"id_pre", "num_pre", "num_post", "preCalcRowLength"})
        c.names[b] = NameKind::ReadOnly;
    c.names["addSynapse"] = NameKind::Function;
    return c;
}

snippet::Context preCalcRowLengthContext(const Model& m, const SynapseGroup& sg) {
    auto c = makeContext(m, sg.name(), "connectivity.preCalcRowLengthCode");
    addParams(c.names, sg.connectivity()->snippet);
    addRandom(c.names);
    c.names["num_pre"] = NameKind::ReadOnly;
    c.names["num_post"] = NameKind::ReadOnly;
    c.names["preCalcRowLength"] = NameKind::ReadWrite;
    return c;
}

namespace {

void addInitFields(std::vector<CodeField>& out, const Model& m, const std::string& group,
                   const VarInitMap& inits) {
    for (const auto& [var, init] : inits)
        if (!init.isConstant())
            out.push_back(
                {group, "init." + var, &init.snippet().code, varInitContext(m, group, var, init)});
}

} // namespace

std::vector<CodeField> allCodeFields(const Model& m) {
    std::vector<CodeField> out;
    for (const auto& ng : m.neuronGroups()) {
        const auto& nm = ng->model();
        out.push_back({ng->name(), "simCode", &nm.simCode, neuronContext(m, *ng, "simCode")});
        out.push_back({ng->name(), "thresholdConditionCode", &nm.thresholdConditionCode,
                       thresholdContext(m, *ng)});
        out.push_back({ng->name(), "resetCode", &nm.resetCode, neuronContext(m, *ng, "resetCode")});
        addInitFields(out, m, ng->name(), ng->bound().varInits);
    }
    for (const auto& sg : m.synapseGroups()) {
        const auto& wu = sg->wu().model;
        out.push_back(
            {sg->name(), "ps.simCode", &sg->ps().model.simCode, postsynapticContext(m, *sg)});
        for (const char* k : {"preSpikeSynCode", "postSpikeSynCode"})
            out.push_back(
                {sg->name(), k,
                 std::string(k) == "preSpikeSynCode" ? &wu.preSpikeSynCode : &wu.postSpikeSynCode,
                 synapseContext(m, *sg, k)});
        out.push_back({sg->name(), "preSpikeCode", &wu.preSpikeCode,
                       wuNeuronContext(m, *sg, true, "preSpikeCode")});
        out.push_back({sg->name(), "preDynamicsCode", &wu.preDynamicsCode,
                       wuNeuronContext(m, *sg, true, "preDynamicsCode")});
        out.push_back({sg->name(), "postSpikeCode", &wu.postSpikeCode,
                       wuNeuronContext(m, *sg, false, "postSpikeCode")});
        out.push_back({sg->name(), "postDynamicsCode", &wu.postDynamicsCode,
                       wuNeuronContext(m, *sg, false, "postDynamicsCode")});
        addInitFields(out, m, sg->name(), sg->wu().varInits);
        addInitFields(out, m, sg->name(), sg->wuPreVarInits());
        addInitFields(out, m, sg->name(), sg->wuPostVarInits());
        addInitFields(out, m, sg->name(), sg->ps().varInits);
        if (sg->connectivity()) {
            const auto& cs = sg->connectivity()->snippet;
            out.push_back({sg->name(), "connectivity.rowBuildCode", &cs.rowBuildCode,
                           rowBuildContext(m, *sg)});
            out.push_back({sg->name(), "connectivity.preCalcRowLengthCode",
                           &cs.preCalcRowLengthCode, preCalcRowLengthContext(m, *sg)});
        }
    }
    for (const auto& cu : m.customUpdates()) {
        out.push_back({cu->name(), "updateCode", &cu->model().updateCode,
                       customUpdateContext(m, *cu)});
        addInitFields(out, m, cu->name(), cu->varInits());
    }
    for (const auto& cs : m.currentSources()) {
        out.push_back({cs->name(), "injectionCode", &cs->bound().model.injectionCode,
                       currentSourceContext(m, *cs)});
        addInitFields(out, m, cs->name(), cs->bound().varInits);
    }
    return out;
}

ParamValues evaluateParams(const SnippetBase& snippet, const ParamValues& params, double dt) {
    ParamValues all = params;
    for (const auto& d : snippet.derivedParams)
        all[d.name] = d.func(params, dt);
    return all;
}

} // namespace spikeforge::contexts
