// Custom updates: construction, reference resolution and validation.
#include "model/names.hpp"
#include "model/var_refs.hpp"
#include "snippet/scanner.hpp"

#include <algorithm>

namespace spikeforge {

const char* toString(CustomUpdateVarAccess a) {
    switch (a) {
    case CustomUpdateVarAccess::ReadWrite:
        return "ReadWrite";
    case CustomUpdateVarAccess::ReadOnly:
        return "ReadOnly";
    case CustomUpdateVarAccess::ReadOnlyShared:
        return "ReadOnlyShared";
    case CustomUpdateVarAccess::ReadOnlySharedNeuron:
        return "ReadOnlySharedNeuron";
    case CustomUpdateVarAccess::ReduceBatchSum:
        return "ReduceBatchSum";
    case CustomUpdateVarAccess::ReduceBatchMax:
        return "ReduceBatchMax";
    case CustomUpdateVarAccess::ReduceNeuronSum:
        return "ReduceNeuronSum";
    case CustomUpdateVarAccess::ReduceNeuronMax:
        return "ReduceNeuronMax";
    case CustomUpdateVarAccess::ReduceSum:
        return "ReduceSum";
    case CustomUpdateVarAccess::ReduceMax:
        return "ReduceMax";
    case CustomUpdateVarAccess::Broadcast:
        return "Broadcast";
    }
    return "?";
}

CustomUpdate::CustomUpdate(std::string name, std::string updateGroup, CustomUpdateModel model,
                           ParamValues params, VarInitMap varInits, VarReferenceMap varRefs,
                           EGPReferenceMap egpRefs, bool wuShaped)
    : m_name(std::move(name)), m_updateGroup(std::move(updateGroup)), m_model(model),
      m_params(std::move(params)), m_varInits(std::move(varInits)), m_varRefs(std::move(varRefs)),
      m_egpRefs(std::move(egpRefs)), m_declared(std::move(model)), m_wuShaped(wuShaped) {}

void CustomUpdate::setParamDynamic(const std::string& param, bool dynamic) {
    if (dynamic)
        m_dynamicParams.insert(param);
    else
        m_dynamicParams.erase(param);
}

namespace refs {

namespace {

Resolved fromVar(const std::string& group, const VarDecl& v, size_t elements,
                 const SynapseGroup* sg = nullptr) {
    Resolved r;
    r.array = group + "." + v.name;
    r.type = v.type;
    r.elementDim = hasElementDim(v.access);
    r.batchDim = hasBatchDim(v.access);
    r.elements = r.elementDim ? elements : 1;
    r.synapseGroup = sg;
    return r;
}

const VarDecl* findVar(const std::vector<VarDecl>& vars, const std::string& name) {
    for (const auto& v : vars)
        if (v.name == name) return &v;
    return nullptr;
}

size_t synapseElements(const SynapseGroup& sg) {
    return sg.synapseVarElements();
}

} // namespace

Resolved ownVar(const CustomUpdate& cu, const CustomUpdateVarDecl& v, unsigned) {
    using A = CustomUpdateVarAccess;
    Resolved r;
    r.array = cu.name() + "." + v.name;
    r.type = v.type;
    r.elementDim = !(v.access == A::ReadOnlySharedNeuron || isNeuronReduction(v.access));
    r.batchDim = cu.isBatched() && v.access != A::ReadOnlyShared && !isBatchReduction(v.access);
    r.elements = r.elementDim ? cu.numElements() : 1;
    r.synapseGroup = cu.synapseGroup();
    return r;
}

Resolved resolve(const Model& m, const VarReference& ref, const std::string& owner,
                 const std::string& refName) {
    const std::string where = "custom update '" + owner + "', reference '" + refName + "': ";
    for (const auto& ng : m.neuronGroups())
        if (ng->name() == ref.group) {
            if (auto v = findVar(ng->model().vars, ref.var))
                return fromVar(ng->name(), *v, ng->size());
            // The time of each neuron's last spike [ms] (kept once referenced: finalise marks
            // the group, Model::markSpikeTimeReaders).
            if (ref.var == "st") return fromVar(ng->name(), {"st", "scalar"}, ng->size());
            if (ref.var == "prev_st") return fromVar(ng->name(), {"prevSt", "scalar"}, ng->size());
            // The spikes of the last step per batch element: its slot of the spike queue.
            if (ref.var == "spikeCount") {
                Resolved r = fromVar(ng->name(), {"spkCnt", "uint32_t"}, 1);
                r.elementDim = false;
                r.slots = ng->numDelaySlots();
                r.slot = "(size_t)((a->step + " + std::to_string(r.slots - 1) + "u) % " +
                         std::to_string(r.slots) + "u)";
                r.readOnly = "a spike count";
                return r;
            }
            throw ModelError(where + "neuron group '" + ref.group + "' has no variable '" +
                             ref.var + "'");
        }
    for (const auto& sg : m.synapseGroups())
        if (sg->name() == ref.group) {
            const auto& wu = sg->wu().model;
            if (auto v = findVar(wu.vars, ref.var))
                return fromVar(sg->name(), *v, synapseElements(*sg), sg.get());
            if (auto v = findVar(wu.preVars, ref.var))
                return fromVar(sg->name(), *v, sg->source().size());
            if (auto v = findVar(wu.postVars, ref.var))
                return fromVar(sg->name(), *v, sg->target().size());
            if (auto v = findVar(sg->ps().model.vars, ref.var))
                return fromVar(sg->name(), *v, sg->target().size());
            // The postsynaptic input the synapses accumulated, one per target neuron.
            if (ref.var == "inSyn")
                return fromVar(sg->name(), {"inSyn", "scalar"}, sg->target().size());
            // The dendritic-delay ring, [batch][slot][target]: written whole (Broadcast). Whether
            // the group has one is known once its code is analysed (checkBufferReferences).
            if (ref.var == "denDelay") {
                Resolved r = fromVar(sg->name(), {"denDelay", "scalar"}, sg->target().size());
                r.slots = sg->maxDendriticDelaySteps();
                r.slot.clear();
                return r;
            }
            throw ModelError(where + "synapse group '" + ref.group + "' has no variable '" +
                             ref.var + "'");
        }
    for (const auto& cs : m.currentSources())
        if (cs->name() == ref.group) {
            if (auto v = findVar(cs->bound().model.vars, ref.var))
                return fromVar(cs->name(), *v, cs->target().size());
            throw ModelError(where + "current source '" + ref.group + "' has no variable '" +
                             ref.var + "'");
        }
    for (const auto& cu : m.customUpdates()) {
        if (cu->name() == owner) break; // only earlier custom updates are resolved yet
        if (cu->name() == ref.group) {
            for (const auto& v : cu->model().vars)
                if (v.name == ref.var) return ownVar(*cu, v, m.batchSize());
            throw ModelError(where + "custom update '" + ref.group + "' has no variable '" +
                             ref.var + "'");
        }
    }
    throw ModelError(where + "no group '" + ref.group +
                     "' (references may name neuron groups, synapse groups, current sources "
                     "and custom updates added before this one)");
}

std::string resolveEGP(const Model& m, const CustomUpdate& cu, const EGPDecl& decl) {
    const std::string where =
        "custom update '" + cu.name() + "', EGP reference '" + decl.name + "': ";
    auto it = cu.egpRefs().find(decl.name);
    if (it == cu.egpRefs().end())
        throw ModelError(where + "not bound to an extra global parameter");
    const auto& [group, egp] = it->second;
    auto check = [&](const SnippetBase& s) -> std::string {
        for (const auto& e : s.egps)
            if (e.name == egp) {
                if (e.type != decl.type)
                    throw ModelError(where + group + "." + egp + " has type '" + e.type +
                                     "', the reference '" + decl.type + "'");
                return group + "." + egp;
            }
        throw ModelError(where + "group '" + group + "' has no extra global parameter '" + egp +
                         "'");
    };
    for (const auto& ng : m.neuronGroups())
        if (ng->name() == group) return check(ng->model());
    for (const auto& sg : m.synapseGroups())
        if (sg->name() == group) {
            for (const auto& e : sg->ps().model.egps)
                if (e.name == egp) return check(sg->ps().model);
            return check(sg->wu().model);
        }
    for (const auto& cs : m.currentSources())
        if (cs->name() == group) return check(cs->bound().model);
    for (const auto& other : m.customUpdates())
        if (other->name() == group) return check(other->model());
    throw ModelError(where + "no group '" + group + "'");
}

} // namespace refs

CustomUpdate& Model::addCustomUpdate(const std::string& name, const std::string& updateGroup,
                                     const CustomUpdateModel& model, const ParamValues& params,
                                     const VarInitMap& varInits, const VarReferenceMap& varRefs,
                                     const EGPReferenceMap& egpRefs) {
    checkNameFree(name, "custom update");
    names::checkIdentifier(updateGroup, "custom update '" + name + "': update group name");
    m_finalised = false;
    m_customUpdates.push_back(std::make_unique<CustomUpdate>(name, updateGroup, model, params,
                                                             varInits, varRefs, egpRefs, false));
    m_customUpdates.back()->m_shapeInferred = true;
    m_groupsByName[name] = {};
    return *m_customUpdates.back();
}

CustomUpdate& Model::addCustomUpdateWU(const std::string& name, const std::string& updateGroup,
                                       const CustomUpdateModel& model, const ParamValues& params,
                                       const VarInitMap& varInits, const VarReferenceMap& varRefs,
                                       const EGPReferenceMap& egpRefs) {
    auto& cu = addCustomUpdate(name, updateGroup, model, params, varInits, varRefs, egpRefs);
    cu.m_wuShaped = true;
    cu.m_shapeInferred = false;
    return cu;
}

} // namespace spikeforge
