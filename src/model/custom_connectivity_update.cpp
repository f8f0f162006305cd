// Custom connectivity updates (structural plasticity): construction and validation. Each failure
// is a ModelError naming the update and the reference or parameter at fault.
#include "model/names.hpp"
#include "model/validate.hpp"
#include "model/var_refs.hpp"
#include "snippet/suggest.hpp"

#include <algorithm>

namespace spikeforge {

CustomConnectivityUpdate::CustomConnectivityUpdate(
    std::string name, std::string updateGroup, std::string synapseGroup,
    CustomConnectivityUpdateModel model, ParamValues params, VarInitMap varInits,
    VarInitMap preVarInits, VarInitMap postVarInits, VarReferenceMap varRefs,
    VarReferenceMap preVarRefs, VarReferenceMap postVarRefs)
    : m_name(std::move(name)), m_updateGroup(std::move(updateGroup)),
      m_synapseGroupName(std::move(synapseGroup)), m_model(std::move(model)),
      m_params(std::move(params)), m_varInits(std::move(varInits)),
      m_preVarInits(std::move(preVarInits)), m_postVarInits(std::move(postVarInits)),
      m_varRefs(std::move(varRefs)), m_preVarRefs(std::move(preVarRefs)),
      m_postVarRefs(std::move(postVarRefs)) {}

CustomConnectivityUpdate& Model::addCustomConnectivityUpdate(
    const std::string& name, const std::string& updateGroup, const std::string& synapseGroup,
    const CustomConnectivityUpdateModel& model, const ParamValues& params,
    const VarInitMap& varInits, const VarInitMap& preVarInits, const VarInitMap& postVarInits,
    const VarReferenceMap& varRefs, const VarReferenceMap& preVarRefs,
    const VarReferenceMap& postVarRefs) {
    checkNameFree(name, "custom connectivity update");
    names::checkIdentifier(updateGroup,
                           "custom connectivity update '" + name + "': update group name");
    m_finalised = false;
    m_connectivityUpdates.push_back(std::make_unique<CustomConnectivityUpdate>(
        name, updateGroup, synapseGroup, model, params, varInits, preVarInits, postVarInits,
        varRefs, preVarRefs, postVarRefs));
    m_groupsByName[name] = {};
    return *m_connectivityUpdates.back();
}

namespace {

using A = CustomUpdateVarAccess;

std::string where(const CustomConnectivityUpdate& cc) {
    return "custom connectivity update '" + cc.name() + "': ";
}

// What one kind of reference must name: a per-synapse variable of the group, or a variable of
// its source or target neuron group.
enum class RefKind { Synapse, Pre, Post };

const char* kindField(RefKind k) {
    switch (k) {
    case RefKind::Synapse:
        return "varRefs";
    case RefKind::Pre:
        return "preVarRefs";
    case RefKind::Post:
        return "postVarRefs";
    }
    return "";
}

void checkRefs(const Model& m, const CustomConnectivityUpdate& cc, const SynapseGroup& sg,
               RefKind kind) {
    const auto& decls = kind == RefKind::Synapse ? cc.model().varRefs
                        : kind == RefKind::Pre   ? cc.model().preVarRefs
                                                 : cc.model().postVarRefs;
    const auto& given = kind == RefKind::Synapse ? cc.varRefs()
                        : kind == RefKind::Pre   ? cc.preVarRefs()
                                                 : cc.postVarRefs();
    const std::string field = kindField(kind);
    std::vector<std::string> declared;
    for (const auto& d : decls)
        declared.push_back(d.name);
    for (const auto& [name, ref] : given)
        if (std::find(declared.begin(), declared.end(), name) == declared.end())
            throw ModelError(where(cc) + field + ": model '" + cc.model().name +
                             "' has no reference '" + name + "'" + didYouMean(name, declared));
    for (const auto& d : decls) {
        const std::string at = where(cc) + field + " '" + d.name + "': ";
        if (d.access != A::ReadWrite && d.access != A::ReadOnly)
            throw ModelError(at + "access " + toString(d.access) +
                             " is not available here; use ReadWrite or ReadOnly");
        if (kind == RefKind::Post && d.access != A::ReadOnly && !cc.model().rowUpdateCode.empty())
            throw ModelError(at + "a postsynaptic reference of an update with row code is "
                                  "read-only (ReadOnly): the rows run at once and share their "
                                  "targets");
        if (kind == RefKind::Pre && d.access != A::ReadOnly && !cc.model().columnUpdateCode.empty())
            throw ModelError(at + "a presynaptic reference of an update with column code is "
                                  "read-only (ReadOnly): the columns run at once and share their "
                                  "sources");
        const auto it = given.find(d.name);
        if (it == given.end()) throw ModelError(at + "not bound to a variable");
        const auto target = refs::resolve(m, it->second, cc.name(), d.name);
        if (target.type != d.type)
            throw ModelError(at + "has type '" + d.type + "' but " + target.array + " is '" +
                             target.type + "'");
        if (!target.readOnly.empty() || target.slots != 1 || !target.elementDim)
            throw ModelError(at + target.array +
                             " cannot be referenced here (it is not one "
                             "value per element)");
        const bool ok =
            kind == RefKind::Synapse ? target.synapseGroup == &sg
            : kind == RefKind::Pre
                ? it->second.group == sg.source().name() && target.elements == sg.source().size()
                : it->second.group == sg.target().name() && target.elements == sg.target().size();
        if (!ok)
            throw ModelError(at + target.array + " is not " +
                             (kind == RefKind::Synapse
                                  ? "a per-synapse variable of synapse group '" + sg.name() + "'"
                              : kind == RefKind::Pre
                                  ? "a variable of the source group '" + sg.source().name() + "'"
                                  : "a variable of the target group '" + sg.target().name() + "'"));
        // The update runs once for the whole batch: it cannot pick one batch element's copy.
        if (target.batchDim && m.batchSize() > 1)
            throw ModelError(at + target.array + " has a copy per batch element (batch size " +
                             std::to_string(m.batchSize()) +
                             "); a connectivity update runs once for the batch and can only "
                             "reference variables the batch shares (ReadOnly access)");
    }
}

} // namespace

void Model::finaliseConnectivityUpdates() {
    for (auto& sg : m_synapseGroups)
        sg->m_columnEdited = false;
    for (auto& ccPtr : m_connectivityUpdates) {
        CustomConnectivityUpdate& cc = *ccPtr;
        const auto found = m_groupsByName.find(cc.synapseGroupName());
        if (found == m_groupsByName.end() || !found->second.synapseGroup)
            throw ModelError(where(cc) + "no synapse group '" + cc.synapseGroupName() + "'");
        const SynapseGroup& sg = *found->second.synapseGroup;
        if (!matrixTraits(sg.matrixType()).editableRows)
            throw ModelError(where(cc) + "synapse group '" + sg.name() + "' is " +
                             matrixTypeName(sg.matrixType()) +
                             "; a connectivity update edits the rows of a Sparse group");
        cc.m_synapseGroup = &sg;
        if (!cc.model().columnUpdateCode.empty()) found->second.synapseGroup->m_columnEdited = true;
        const Numerics num{m_dt, m_precision};
        checkParams(cc.name(), "params", cc.model(), cc.params(), num);
        const auto& model = cc.model();
        checkVars(cc.name(), "vars", model.vars, cc.varInits(), model.name, true, num);
        checkVars(cc.name(), "preVars", model.preVars, cc.preVarInits(), model.name, false, num);
        checkVars(cc.name(), "postVars", model.postVars, cc.postVarInits(), model.name, false, num);
        for (const RefKind k : {RefKind::Synapse, RefKind::Pre, RefKind::Post})
            checkRefs(*this, cc, sg, k);
    }
}

} // namespace spikeforge
