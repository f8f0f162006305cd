#include "model/contexts.hpp"

#include "model/names.hpp"
#include "model/var_refs.hpp"

namespace spikeforge::contexts {

using snippet::NameKind;
using snippet::Symbol;
using snippet::Type;
using Names = std::map<std::string, Symbol>;

namespace {

snippet::Context makeContext(const Model& m, const std::string& group, const std::string& field) {
    snippet::Context c;
    c.group = group;
    c.field = field;
    c.precision = m.precision();
    c.builtinsElsewhere = &names::builtinNames();
    return c;
}

// The snippet type of a declared variable or EGP ("scalar", "unsigned int", …).
Type declaredType(const std::string& type, const std::string& owner, const std::string& name) {
    return snippet::parseTypeName(type, owner + "." + name);
}

void addRandom(Names& n) {
    for (const auto& f : snippet::randomFunctions())
        n[f] = NameKind::Function;
}

// withEGPs: initialiser snippets have no device arrays for extra global parameters, so there
// an EGP is not a name at all (rather than a name code generation could not bind).
void addParams(Names& n, const SnippetBase& s, const std::string& owner, bool withEGPs = true) {
    for (const auto& p : s.params)
        n[p] = NameKind::ReadOnly;
    for (const auto& d : s.derivedParams)
        n[d.name] = NameKind::ReadOnly;
    if (!withEGPs) return;
    // Extra global parameters are read-only arrays whose length is known only at run time.
    for (const auto& e : s.egps)
        n[e.name] = Symbol(NameKind::ReadOnly, declaredType(e.type, owner, e.name), true);
}

// forceWritable: a connectivity update's own variables, whose access mode is not used.
void addVars(Names& n, const std::vector<VarDecl>& vars, const std::string& owner,
             const std::string& suffix = "", bool forceReadOnly = false,
             bool forceWritable = false) {
    for (const auto& v : vars)
        n[v.name + suffix] = Symbol((forceReadOnly || (isReadOnly(v.access) && !forceWritable))
                                        ? NameKind::ReadOnly
                                        : NameKind::ReadWrite,
                                    declaredType(v.type, owner, v.name));
}

void addBuiltins(Names& n, std::initializer_list<const char*> names, Type type) {
    for (const char* b : names)
        n[b] = Symbol(NameKind::ReadOnly, type);
}

// The names of every code field that runs in a step: the time, the batch element this code
// runs for and the batch size.
void addTime(Names& n) {
    addBuiltins(n, {"t", "dt"}, Type::Scalar);
    addBuiltins(n, {"batch", "num_batch"}, Type::U32);
}

// The target neuron group's variables, read-only, as `V_post` and as `V`; added first, so the
// model's own names (added after) shadow them (src/model/names.cpp, seeTargetVars).
void addTargetVars(Names& n, const NeuronGroup& target) {
    addVars(n, target.model().vars, target.name(), "_post", true);
    addVars(n, target.model().vars, target.name(), "", true);
}

} // namespace

snippet::Context neuronContext(const Model& m, const NeuronGroup& ng, const std::string& field) {
    auto c = makeContext(m, ng.name(), field);
    addParams(c.names, ng.model(), ng.name());
    addVars(c.names, ng.model().vars, ng.name());
    for (const auto& a : ng.model().arrays)
        c.names[a.name] =
            Symbol(NameKind::ReadWrite, declaredType(a.type, ng.name(), a.name), true);
    addTime(c.names);
    addRandom(c.names);
    addBuiltins(c.names, {"id", "num_neurons"}, Type::U32);
    addBuiltins(c.names, {"Isyn", "st", "prev_st"}, Type::Scalar);
    c.expression = field == "thresholdConditionCode"; // a condition, not statements
    return c;
}

snippet::Context thresholdContext(const Model& m, const NeuronGroup& ng) {
    auto c = neuronContext(m, ng, "thresholdConditionCode");
    // A threshold condition is an expression: it must not change state.
    for (auto& [name, symbol] : c.names)
        if (symbol.kind == NameKind::ReadWrite) symbol.kind = NameKind::ReadOnly;
    return c;
}

snippet::Context postsynapticContext(const Model& m, const SynapseGroup& sg) {
    auto c = makeContext(m, sg.name(), "ps.simCode");
    addTargetVars(c.names, sg.target());
    addParams(c.names, sg.ps().model, sg.name());
    addVars(c.names, sg.ps().model.vars, sg.name());
    addTime(c.names);
    addRandom(c.names);
    addBuiltins(c.names, {"id", "num_neurons"}, Type::U32);
    c.names["inSyn"] = NameKind::ReadWrite;
    c.names["injectCurrent"] = NameKind::Function;
    return c;
}

snippet::Context currentSourceContext(const Model& m, const CurrentSource& cs) {
    auto c = makeContext(m, cs.name(), "injectionCode");
    addTargetVars(c.names, cs.target());
    addParams(c.names, cs.bound().model, cs.name());
    addVars(c.names, cs.bound().model.vars, cs.name());
    addTime(c.names);
    addRandom(c.names);
    addBuiltins(c.names, {"id", "num_neurons"}, Type::U32);
    c.names["injectCurrent"] = NameKind::Function;
    return c;
}

snippet::Context synapseContext(const Model& m, const SynapseGroup& sg, const std::string& kind) {
    auto c = makeContext(m, sg.name(), kind);
    const auto& wu = sg.wu().model;
    addParams(c.names, wu, sg.name());
    addVars(c.names, wu.vars, sg.name());
    addVars(c.names, wu.preVars, sg.name(), "", true);
    addVars(c.names, wu.postVars, sg.name(), "", true);
    addVars(c.names, sg.source().model().vars, sg.source().name(), "_pre", true);
    addVars(c.names, sg.target().model().vars, sg.target().name(), "_post", true);
    addTime(c.names);
    addBuiltins(c.names, {"id_pre", "id_post", "num_pre", "num_post"}, Type::U32);
    addBuiltins(c.names,
                {"st_pre", "st_post", "prev_st_pre", "prev_st_post", "set_pre", "set_post"},
                Type::Scalar);
    if (kind == "preSpikeSynCode" || kind == "preEventSynCode" || kind == "synapseDynamicsCode") {
        c.names["addToPost"] = NameKind::Function;
        c.names["addToPostDelay"] = NameKind::Function;
    }
    // Input to the presynaptic neuron (its Isyn in its next update): the backward pass of
    // EventProp propagates adjoints from targets to sources this way.
    // Synapse dynamics: gap junctions add to both sides.
    c.names["addToPre"] = NameKind::Function;
    return c;
}

snippet::Context eventConditionContext(const Model& m, const SynapseGroup& sg, bool pre) {
    auto c = makeContext(
        m, sg.name(), pre ? "preEventThresholdConditionCode" : "postEventThresholdConditionCode");
    const auto& wu = sg.wu().model;
    const NeuronGroup& ng = pre ? sg.source() : sg.target();
    addParams(c.names, wu, sg.name());
    addVars(c.names, pre ? wu.preVars : wu.postVars, sg.name(), "", true);
    addVars(c.names, ng.model().vars, ng.name(), pre ? "_pre" : "_post", true);
    addTime(c.names);
    if (pre)
        addBuiltins(c.names, {"id_pre", "num_pre"}, Type::U32);
    else
        addBuiltins(c.names, {"id_post", "num_post"}, Type::U32);
    c.expression = true; // a condition: it changes nothing
    return c;
}

snippet::Context wuNeuronContext(const Model& m, const SynapseGroup& sg, bool pre,
                                 const std::string& field) {
    auto c = makeContext(m, sg.name(), field);
    const auto& wu = sg.wu().model;
    addParams(c.names, wu, sg.name());
    addVars(c.names, pre ? wu.preVars : wu.postVars, sg.name());
    addTime(c.names);
    addBuiltins(c.names, {"id", "num_neurons"}, Type::U32);
    return c;
}

snippet::Context varInitContext(const Model& m, const std::string& group, const std::string& var,
                                const VarInit& init, InitShape shape) {
    auto c = makeContext(m, group, "init." + var);
    addParams(c.names, init.snippet(), group, false);
    addRandom(c.names);
    c.names["value"] = NameKind::ReadWrite; // a scalar local, converted to the variable's type
    addBuiltins(c.names, {"id", "batch", "num_batch"}, Type::U32);
    addBuiltins(c.names, {"dt"}, Type::Scalar);
    switch (shape) {
    case InitShape::Neuron:
        addBuiltins(c.names, {"num_neurons"}, Type::U32);
        break;
    case InitShape::Synapse:
        addBuiltins(c.names, {"id_pre", "id_post", "num_pre", "num_post"}, Type::U32);
        break;
    case InitShape::Kernel:
        addBuiltins(c.names, {"num_pre", "num_post"}, Type::U32);
        break;
    case InitShape::Other:
        break;
    }
    return c;
}

snippet::Context customUpdateContext(const Model& m, const CustomUpdate& cu) {
    auto c = makeContext(m, cu.name(), "updateCode");
    const auto& model = cu.model();
    addParams(c.names, model, cu.name());
    auto kind = [](CustomUpdateVarAccess a) {
        const bool ro = a == CustomUpdateVarAccess::ReadOnly ||
                        a == CustomUpdateVarAccess::ReadOnlyShared ||
                        a == CustomUpdateVarAccess::ReadOnlySharedNeuron;
        if (a == CustomUpdateVarAccess::Broadcast) return NameKind::WriteOnly;
        return ro ? NameKind::ReadOnly : NameKind::ReadWrite;
    };
    for (const auto& v : model.vars)
        c.names[v.name] = Symbol(kind(v.access), declaredType(v.type, cu.name(), v.name));
    for (const auto& r : model.varRefs)
        c.names[r.name] = Symbol(kind(r.access), declaredType(r.type, cu.name(), r.name));
    for (const auto& e : model.egpRefs)
        c.names[e.name] =
            Symbol(NameKind::ReadWrite, declaredType(e.type, cu.name(), e.name), true);
    addBuiltins(c.names, {"dt", "t"}, Type::Scalar);
    addBuiltins(c.names, {"batch", "id", "updateCount", "num_batch"}, Type::U32);
    if (cu.isWUShaped())
        addBuiltins(c.names, {"id_pre", "id_post", "num_pre", "num_post"}, Type::U32);
    else
        addBuiltins(c.names, {"num_neurons"}, Type::U32);
    return c;
}

snippet::Context connectivityUpdateContext(const Model& m, const CustomConnectivityUpdate& cc) {
    auto c = makeContext(m, cc.name(), "rowUpdateCode");
    const auto& model = cc.model();
    addParams(c.names, model, cc.name());
    addRandom(c.names);
    addBuiltins(c.names, {"dt", "t"}, Type::Scalar);
    addBuiltins(c.names, {"id_pre", "num_pre", "num_post", "num_batch"}, Type::U32);
    auto refKind = [](CustomUpdateVarAccess a) {
        return a == CustomUpdateVarAccess::ReadOnly ? NameKind::ReadOnly : NameKind::ReadWrite;
    };
    for (const auto& r : model.preVarRefs)
        c.names[r.name] = Symbol(refKind(r.access), declaredType(r.type, cc.name(), r.name));
    addVars(c.names, model.preVars, cc.name(), "", false, true);
    c.names["add_synapse"] = NameKind::Function;
    c.arities["add_synapse"] = 1 + static_cast<int>(model.vars.size() + model.varRefs.size());
    // The synapse being visited by for_each_synapse.
    auto& loop = c.synapseLoopNames;
    addBuiltins(loop, {"id_post"}, Type::U32);
    addVars(loop, model.vars, cc.name(), "", false, true);
    addVars(loop, model.postVars, cc.name(), "", true);
    for (const auto& r : model.varRefs)
        loop[r.name] = Symbol(refKind(r.access), declaredType(r.type, cc.name(), r.name));
    for (const auto& r : model.postVarRefs)
        loop[r.name] = Symbol(NameKind::ReadOnly, declaredType(r.type, cc.name(), r.name));
    loop["remove_synapse"] = NameKind::Function;
    return c;
}

snippet::Context columnUpdateContext(const Model& m, const CustomConnectivityUpdate& cc) {
    auto c = makeContext(m, cc.name(), "columnUpdateCode");
    const auto& model = cc.model();
    addParams(c.names, model, cc.name());
    addRandom(c.names);
    addBuiltins(c.names, {"dt", "t"}, Type::Scalar);
    addBuiltins(c.names, {"id_post", "num_pre", "num_post", "num_batch"}, Type::U32);
    for (const auto& r : model.postVarRefs)
        c.names[r.name] = Symbol(r.access == CustomUpdateVarAccess::ReadOnly ? NameKind::ReadOnly
                                                                             : NameKind::ReadWrite,
                                 declaredType(r.type, cc.name(), r.name));
    addVars(c.names, model.postVars, cc.name(), "", false, true);
    c.names["add_synapse"] = NameKind::Function;
    c.arities["add_synapse"] = 1 + static_cast<int>(model.vars.size() + model.varRefs.size());
    // The synapse being visited by for_each_synapse: its source's references and variables are
    // shared by the columns, so read-only.
    auto& loop = c.synapseLoopNames;
    addBuiltins(loop, {"id_pre"}, Type::U32);
    addVars(loop, model.vars, cc.name(), "", false, true);
    addVars(loop, model.preVars, cc.name(), "", true);
    for (const auto& r : model.varRefs)
        loop[r.name] = Symbol(r.access == CustomUpdateVarAccess::ReadOnly ? NameKind::ReadOnly
                                                                          : NameKind::ReadWrite,
                              declaredType(r.type, cc.name(), r.name));
    for (const auto& r : model.preVarRefs)
        loop[r.name] = Symbol(NameKind::ReadOnly, declaredType(r.type, cc.name(), r.name));
    loop["remove_synapse"] = NameKind::Function;
    return c;
}

snippet::Context rowBuildContext(const Model& m, const SynapseGroup& sg) {
    auto c = makeContext(m, sg.name(), "connectivity.rowBuildCode");
    addParams(c.names, sg.connectivity()->snippet, sg.name(), false);
    addRandom(c.names);
    addBuiltins(c.names, {"id_pre", "num_pre", "num_post"}, Type::U32);
    // Row lengths drawn by preCalcRowLengthCode: num_pre elements, read-only here.
    if (!sg.connectivity()->snippet.preCalcRowLengthCode.empty())
        c.names["preCalcRowLength"] = Symbol(NameKind::ReadOnly, Type::U32, true);
    c.names["addSynapse"] = NameKind::Function;
    return c;
}

snippet::Context preCalcRowLengthContext(const Model& m, const SynapseGroup& sg) {
    auto c = makeContext(m, sg.name(), "connectivity.preCalcRowLengthCode");
    addParams(c.names, sg.connectivity()->snippet, sg.name(), false);
    addRandom(c.names);
    addBuiltins(c.names, {"num_pre", "num_post"}, Type::U32);
    c.names["preCalcRowLength"] = Symbol(NameKind::ReadWrite, Type::U32, true);
    return c;
}

namespace {

// Lists the code fields in a fixed order; contexts are built only when asked for (slot lookups
// need the names alone).
class FieldLister {
public:
    FieldLister(const Model& m, bool withContexts) : m_model(m), m_contexts(withContexts) {}

    template <class MakeContext>
    void add(const std::string& group, const std::string& field, const std::string* code,
             MakeContext make) {
        out.push_back({group, field, code, m_contexts ? make() : snippet::Context{}});
    }

    void addInits(const std::string& group, const VarInitMap& inits, InitShape shape) {
        for (const auto& [var, init] : inits)
            addInit(group, var, init, shape);
    }

    void addInit(const std::string& group, const std::string& var, const VarInit& init,
                 InitShape shape) {
        if (init.hasSnippet())
            add(group, "init." + var, &init.snippet().code,
                [&] { return varInitContext(m_model, group, var, init, shape); });
    }

    std::vector<CodeField> out;

private:
    const Model& m_model;
    bool m_contexts;
};

void addSynapseFields(FieldLister& l, const Model& m, const SynapseGroup& sg) {
    const auto& wu = sg.wu().model;
    const std::string& g = sg.name();
    l.add(g, "ps.simCode", &sg.ps().model.simCode, [&] { return postsynapticContext(m, sg); });
    l.add(g, "preSpikeSynCode", &wu.preSpikeSynCode,
          [&] { return synapseContext(m, sg, "preSpikeSynCode"); });
    l.add(g, "postSpikeSynCode", &wu.postSpikeSynCode,
          [&] { return synapseContext(m, sg, "postSpikeSynCode"); });
    l.add(g, "synapseDynamicsCode", &wu.synapseDynamicsCode,
          [&] { return synapseContext(m, sg, "synapseDynamicsCode"); });
    l.add(g, "preEventThresholdConditionCode", &wu.preEventThresholdConditionCode,
          [&] { return eventConditionContext(m, sg, true); });
    l.add(g, "preEventSynCode", &wu.preEventSynCode,
          [&] { return synapseContext(m, sg, "preEventSynCode"); });
    l.add(g, "postEventThresholdConditionCode", &wu.postEventThresholdConditionCode,
          [&] { return eventConditionContext(m, sg, false); });
    l.add(g, "postEventSynCode", &wu.postEventSynCode,
          [&] { return synapseContext(m, sg, "postEventSynCode"); });
    for (const char* f : {"preSpikeCode", "preDynamicsCode", "postSpikeCode", "postDynamicsCode"}) {
        const std::string field = f;
        const bool pre = field.rfind("pre", 0) == 0;
        const std::string* code = field == "preSpikeCode"      ? &wu.preSpikeCode
                                  : field == "preDynamicsCode" ? &wu.preDynamicsCode
                                  : field == "postSpikeCode"   ? &wu.postSpikeCode
                                                               : &wu.postDynamicsCode;
        l.add(g, field, code, [&] { return wuNeuronContext(m, sg, pre, field); });
    }
    l.addInits(g, sg.wu().varInits,
               matrixTraits(sg.matrixType()).kernelShaped ? InitShape::Kernel : InitShape::Synapse);
    l.addInits(g, sg.wuPreVarInits(), InitShape::Neuron);
    l.addInits(g, sg.wuPostVarInits(), InitShape::Neuron);
    l.addInits(g, sg.ps().varInits, InitShape::Neuron);
    if (sg.connectivity()) {
        const auto& cs = sg.connectivity()->snippet;
        l.add(g, "connectivity.rowBuildCode", &cs.rowBuildCode,
              [&] { return rowBuildContext(m, sg); });
        l.add(g, "connectivity.preCalcRowLengthCode", &cs.preCalcRowLengthCode,
              [&] { return preCalcRowLengthContext(m, sg); });
    }
}

std::vector<CodeField> listCodeFields(const Model& m, bool withContexts) {
    FieldLister l(m, withContexts);
    for (const auto& ng : m.neuronGroups()) {
        const auto& nm = ng->model();
        const NeuronGroup& n = *ng;
        l.add(n.name(), "simCode", &nm.simCode, [&] { return neuronContext(m, n, "simCode"); });
        l.add(n.name(), "thresholdConditionCode", &nm.thresholdConditionCode,
              [&] { return thresholdContext(m, n); });
        l.add(n.name(), "resetCode", &nm.resetCode,
              [&] { return neuronContext(m, n, "resetCode"); });
        l.addInits(n.name(), n.bound().varInits, InitShape::Neuron);
    }
    for (const auto& sg : m.synapseGroups())
        addSynapseFields(l, m, *sg);
    for (const auto& cu : m.customUpdates()) {
        const CustomUpdate& c = *cu;
        l.add(c.name(), "updateCode", &c.model().updateCode,
              [&] { return customUpdateContext(m, c); });
        // A variable with elements sees the names of the update's shape (GeNN's: num_neurons,
        // or id_pre, id_post, num_pre and num_post); one without (a reduction's target, a
        // shared-neuron variable) only the element index and the batch.
        for (const auto& v : c.model().vars) {
            const auto init = c.varInits().find(v.name);
            if (init == c.varInits().end()) continue;
            const InitShape shape = !refs::ownVar(c, v, m.batchSize()).elementDim ? InitShape::Other
                                    : c.isWUShaped() ? InitShape::Synapse
                                                     : InitShape::Neuron;
            l.addInit(c.name(), v.name, init->second, shape);
        }
    }
    for (const auto& cc : m.customConnectivityUpdates()) {
        const CustomConnectivityUpdate& c = *cc;
        l.add(c.name(), "rowUpdateCode", &c.model().rowUpdateCode,
              [&] { return connectivityUpdateContext(m, c); });
        l.add(c.name(), "columnUpdateCode", &c.model().columnUpdateCode,
              [&] { return columnUpdateContext(m, c); });
        l.addInits(c.name(), c.varInits(), InitShape::Synapse);
        l.addInits(c.name(), c.preVarInits(), InitShape::Neuron);
        l.addInits(c.name(), c.postVarInits(), InitShape::Neuron);
    }
    for (const auto& cs : m.currentSources()) {
        const CurrentSource& c = *cs;
        l.add(c.name(), "injectionCode", &c.bound().model.injectionCode,
              [&] { return currentSourceContext(m, c); });
        l.addInits(c.name(), c.bound().varInits, InitShape::Neuron);
    }
    return std::move(l.out);
}

} // namespace

std::vector<CodeField> allCodeFields(const Model& m) {
    return listCodeFields(m, true);
}

size_t codeFieldCount(const Model& m) {
    return listCodeFields(m, false).size();
}

size_t codeFieldSlot(const Model& m, const std::string& group, const std::string& field) {
    const auto fields = listCodeFields(m, false);
    for (size_t i = 0; i < fields.size(); i++)
        if (fields[i].group == group && fields[i].field == field) return i;
    throw InternalError("no code field " + group + "." + field);
}

CodeField codeFieldAt(const Model& m, size_t slot) {
    auto fields = listCodeFields(m, true);
    if (slot >= fields.size()) throw InternalError("code field slot out of range");
    return std::move(fields[slot]);
}

ParamValues evaluateParams(const SnippetBase& snippet, const ParamValues& params, double dt) {
    ParamValues all = params;
    for (const auto& d : snippet.derivedParams)
        all[d.name] = d.func(params, dt);
    return all;
}

} // namespace spikeforge::contexts
