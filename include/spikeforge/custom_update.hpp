#pragma once
// Custom updates (as GeNN's): code run on demand, by update-group name, over the elements of a
// neuron group (neuron-shaped) or the synapses of a synapse group (WU-shaped), reading and
// writing the update's own variables and references to variables of other groups. Reductions
// are written as plain assignments (`ReducedGradient = Gradient;`); the generator turns them
// into a sum or maximum over the batch or over the neurons.
#include "spikeforge/snippets.hpp"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace spikeforge {

enum class CustomUpdateVarAccess {
    ReadWrite,            // one copy per batch element when the update is batched
    ReadOnly,             // read-only, one copy per batch element when batched
    ReadOnlyShared,       // read-only, one copy shared by the batch
    ReadOnlySharedNeuron, // read-only, one value per batch element shared by all elements
    ReduceBatchSum,       // written as the sum over the batch (target has no batch dimension)
    ReduceBatchMax,       // ... the maximum over the batch
    ReduceNeuronSum,      // written as the sum over the elements (target: one value per batch)
    ReduceNeuronMax,      // ... the maximum over the elements
    // References only: a sum (maximum) over the dimension the referenced variable lacks, worked
    // out by Model::finalise as GeNN does: the batch (a variable shared by a batched update's
    // batch) or the elements (one value per batch element). model() holds the resolved access.
    ReduceSum,
    ReduceMax,
    // References only (GeNN's BROADCAST): write-only, assigned with a plain `=`; the value an
    // element assigns goes to every copy of the referenced element — each batch element's and
    // each delay slot's (a dendritic-delay buffer) — so an update that resets batched state, such
    // as a synapse group's inSyn between trials, need not be batched itself. An update whose
    // other references are batched cannot have one.
    Broadcast,
};
inline constexpr CustomUpdateVarAccess kCustomUpdateVarAccesses[] = {
    CustomUpdateVarAccess::ReadWrite,       CustomUpdateVarAccess::ReadOnly,
    CustomUpdateVarAccess::ReadOnlyShared,  CustomUpdateVarAccess::ReadOnlySharedNeuron,
    CustomUpdateVarAccess::ReduceBatchSum,  CustomUpdateVarAccess::ReduceBatchMax,
    CustomUpdateVarAccess::ReduceNeuronSum, CustomUpdateVarAccess::ReduceNeuronMax,
    CustomUpdateVarAccess::ReduceSum,       CustomUpdateVarAccess::ReduceMax,
    CustomUpdateVarAccess::Broadcast};

const char* toString(CustomUpdateVarAccess a);
inline bool isBatchReduction(CustomUpdateVarAccess a) {
    return a == CustomUpdateVarAccess::ReduceBatchSum || a == CustomUpdateVarAccess::ReduceBatchMax;
}
inline bool isNeuronReduction(CustomUpdateVarAccess a) {
    return a == CustomUpdateVarAccess::ReduceNeuronSum ||
           a == CustomUpdateVarAccess::ReduceNeuronMax;
}
inline bool isReduction(CustomUpdateVarAccess a) {
    return isBatchReduction(a) || isNeuronReduction(a);
}

struct CustomUpdateVarDecl {
    std::string name;
    std::string type = "scalar";
    CustomUpdateVarAccess access = CustomUpdateVarAccess::ReadWrite;
};

// A named slot for a reference to another group's variable.
struct VarRefDecl {
    std::string name;
    std::string type = "scalar";
    CustomUpdateVarAccess access = CustomUpdateVarAccess::ReadWrite;
};

// updateCode sees its variables and references by name, the parameters, `id`, `batch`, `dt`,
// `updateCount` (how many times this update ran before: kept on the device, e.g. for Adam's bias
// correction) and, when WU-shaped, `id_pre` and `id_post`.
struct CustomUpdateModel : SnippetBase {
    std::vector<CustomUpdateVarDecl> vars;
    std::vector<VarRefDecl> varRefs;
    std::vector<EGPDecl> egpRefs; // arrays of other groups, read (and written) by name
    std::string updateCode;
};

// A reference to variable `var` of group `group`: a neuron group, a synapse group (weight-update,
// pre/post or postsynaptic variables), a current source or another custom update. Besides the
// models' variables: a neuron group's "st" (spike times) and "spikeCount" (the spikes of the
// last step, one uint32_t per batch element, read-only), a synapse group's "inSyn" (its input to
// the targets) and "denDelay" (its dendritic-delay buffer: Broadcast access only, which writes
// every delay slot).
// With transposeGroup/transposeVar set (WU-shaped updates over Dense weights only), the value the
// update leaves in this reference is also written, transposed, into that variable of another
// Dense synapse group whose shape is the transpose (its source is this group's target and vice
// versa).
struct VarReference {
    std::string group;
    std::string var;
    std::string transposeGroup = {};
    std::string transposeVar = {};
};
using VarReferenceMap = std::map<std::string, VarReference>;

// A reference to extra global parameter `egp` of group `group`.
struct EGPReference {
    std::string group;
    std::string egp;
};
using EGPReferenceMap = std::map<std::string, EGPReference>;

class SynapseGroup;

class CustomUpdate {
public:
    CustomUpdate(std::string name, std::string updateGroup, CustomUpdateModel model,
                 ParamValues params, VarInitMap varInits, VarReferenceMap varRefs,
                 EGPReferenceMap egpRefs, bool wuShaped);

    const std::string& name() const { return m_name; }
    const std::string& updateGroup() const { return m_updateGroup; }
    const CustomUpdateModel& model() const { return m_model; }
    const ParamValues& params() const { return m_params; }
    const VarInitMap& varInits() const { return m_varInits; }
    const VarReferenceMap& varRefs() const { return m_varRefs; }
    const EGPReferenceMap& egpRefs() const { return m_egpRefs; }
    // Over the synapses of a synapse group (else over the elements of a neuron-shaped group).
    // addCustomUpdate works it out from the references at finalise (every element-shaped one
    // names a synapse variable, or none does); addCustomUpdateWU insists on it.
    bool isWUShaped() const { return m_wuShaped; }
    // Mark a parameter as dynamic (Simulation::setDynamicParam), e.g. Adam's learning rate.
    void setParamDynamic(const std::string& param, bool dynamic = true);
    const std::set<std::string>& dynamicParams() const { return m_dynamicParams; }

    // Filled in by Model::finalise.
    size_t numElements() const { return m_numElements; } // per batch element
    bool isBatched() const { return m_batched; }         // some reference is per batch
    const SynapseGroup* synapseGroup() const { return m_synapseGroup; } // WU-shaped only

private:
    friend class Model;
    std::string m_name, m_updateGroup;
    CustomUpdateModel m_model;
    ParamValues m_params;
    VarInitMap m_varInits;
    VarReferenceMap m_varRefs;
    EGPReferenceMap m_egpRefs;
    std::set<std::string> m_dynamicParams;
    CustomUpdateModel m_declared; // as given: m_model is it with generic reductions resolved
    bool m_wuShaped;
    bool m_shapeInferred = false; // added by addCustomUpdate: the references decide
    size_t m_numElements = 0;
    bool m_batched = false;
    const SynapseGroup* m_synapseGroup = nullptr;
};

// A custom connectivity update (structural plasticity, GeNN's CustomConnectivityUpdate): code run
// by Simulation::customUpdate(updateGroup), after the group's custom updates, once per row (source
// neuron `id_pre`) of a Sparse synapse group, all rows at once, once for every batch element (the
// connectivity is shared by the batch). rowUpdateCode may:
//  - walk the row: `for_each_synapse { … }` runs its body once per synapse, in order, with
//    `id_post` (the target) and the per-synapse references (varRefs) and postVarRefs of that
//    synapse; `remove_synapse();` removes the current synapse when the body ends (its iteration
//    still sees it); `continue` ends the iteration, `break` the loop;
//  - add synapses after the loop: `add_synapse(j, v1, v2, …)` appends target j with the values of
//    the update's own per-synapse vars, then of the varRefs, in declaration order; every other
//    per-synapse variable of the group and of the updates over it starts at 0 in every batch copy
//    (as in GeNN). A row that would
//    outgrow the group's maximum row length (SynapseGroup::setMaxConnections) keeps its length
//    and the update reports a row-overflow error naming the group.
// Any number of synapses per row may be added and removed in one call. Every per-synapse variable
// (all batch copies), the custom updates' per-synapse variables and the column index move with
// their synapses; Simulation::synapses and friends read the new connectivity afterwards.
// Also in scope: the parameters, dt, t, id_pre, num_pre, num_post, num_batch, the preVarRefs
// (id_pre's element) and the random functions (a stream per row and call).
// columnUpdateCode (on request, after the row code) runs the same way once per column (target
// neuron `id_post`, all columns at once): for_each_synapse walks the column's synapses by
// source (`id_pre` inside, the preVarRefs read-only), remove_synapse removes one, and
// add_synapse(i, v1, …) adds a synapse from source i onto id_post. The rows keep their kept
// synapses in order and take the added ones after them, by ascending target (a column's own
// adds in the order it made them), so the result is the same on every backend.
struct CustomConnectivityUpdateModel : SnippetBase {
    // The update's own variables, one value per synapse (per source, per target neuron) shared
    // by the batch: per-synapse ones move with their synapses (as the group's variables do) and
    // are read inside for_each_synapse; preVars are id_pre's (read-only in column code),
    // postVars id_post's (read-only in row code). Their access mode is not used.
    std::vector<VarDecl> vars, preVars, postVars;
    std::vector<VarRefDecl> varRefs;     // per synapse: a weight-update variable of the group or
                                         // a variable of a WU-shaped custom update over it
    std::vector<VarRefDecl> preVarRefs;  // a variable of the source neuron group (id_pre's);
                                         // ReadOnly where there is column code
    std::vector<VarRefDecl> postVarRefs; // of the target neuron group (id_post's); ReadOnly
                                         // where there is row code
    std::string rowUpdateCode;
    std::string columnUpdateCode;
};

class CustomConnectivityUpdate {
public:
    CustomConnectivityUpdate(std::string name, std::string updateGroup, std::string synapseGroup,
                             CustomConnectivityUpdateModel model, ParamValues params,
                             VarInitMap varInits, VarInitMap preVarInits, VarInitMap postVarInits,
                             VarReferenceMap varRefs, VarReferenceMap preVarRefs,
                             VarReferenceMap postVarRefs);

    const std::string& name() const { return m_name; }
    const std::string& updateGroup() const { return m_updateGroup; }
    const std::string& synapseGroupName() const { return m_synapseGroupName; }
    const CustomConnectivityUpdateModel& model() const { return m_model; }
    const ParamValues& params() const { return m_params; }
    const VarInitMap& varInits() const { return m_varInits; }
    const VarInitMap& preVarInits() const { return m_preVarInits; }
    const VarInitMap& postVarInits() const { return m_postVarInits; }
    const VarReferenceMap& varRefs() const { return m_varRefs; }
    const VarReferenceMap& preVarRefs() const { return m_preVarRefs; }
    const VarReferenceMap& postVarRefs() const { return m_postVarRefs; }
    // Filled in by Model::finalise.
    const SynapseGroup* synapseGroup() const { return m_synapseGroup; }

private:
    friend class Model;
    std::string m_name, m_updateGroup, m_synapseGroupName;
    CustomConnectivityUpdateModel m_model;
    ParamValues m_params;
    VarInitMap m_varInits, m_preVarInits, m_postVarInits;
    VarReferenceMap m_varRefs, m_preVarRefs, m_postVarRefs;
    const SynapseGroup* m_synapseGroup = nullptr;
};

} // namespace spikeforge
