#pragma once
// The lowering's internals (lower.hpp has the entry point). Passes, one per file:
//   planArrays (arrays.cpp)        the device arrays and their sizes
//   lower_neuron.cpp               neuron update bodies and the neuron groups' initialisation
//   lower_synapse.cpp              spike propagation and postsynaptic learning bodies
//   lower_custom.cpp               custom update bodies (fusing compatible updates) and theirs
//   lower_connectivity.cpp         connectivity and synapse-variable initialisation bodies
//   merge.cpp                      merging structurally identical groups, folding values
//   kernels.cpp                    the kernel list (lowerModel)
// Every snippet is read through analysis::of (its checked tree and facts), never scanned again.
#include "codegen/env.hpp"
#include "codegen/lower.hpp"
#include "snippet/scanner.hpp"
#include "spikeforge/model.hpp"

#include <map>
#include <set>
#include <string>

namespace spikeforge::codegen {

using Subs = std::map<std::string, std::string>;

// How snippet code uses the array bound to context name `name`, from its facts.
inline Use useOf(const snippet::Scanned& scanned, const std::string& name) {
    return useOf(scanned.readNames.count(name) > 0, scanned.assignedNames.count(name) > 0);
}

// Shared state while lowering one group.
class Lowerer {
public:
    explicit Lowerer(const Model& m) : model(m) {}

    const Model& model;
    Env env;
    // Context name → generated expression. A key "#size:<name>" holds the element count of the
    // context array <name> (an EGP) for the bounds checks of its indices; keeping it in `subs`
    // saves and restores it with the substitutions.
    Subs subs;
    bool usesRng = false; // some code rendered so far draws random numbers (Scanned::usesRng)
    // Some code bound so far assigns an EGP: memory shared by every element, so elements of one
    // loop may depend on each other (bindEGPs).
    bool writesEGP = false;
    // Variables stored where code assigns them (snippet::RenderOptions::writeThrough): name →
    // store statement, for the locals in `subs` that hold writable variables, when
    // storeWhereAssigned is set (neuron code with loops, see lower_neuron.cpp).
    bool storeWhereAssigned = false;
    std::map<std::string, std::string> writeThrough;
    // Names some code rendered so far assigns with no store after the assignment (not written
    // through, or assigned inside an expression): such a variable is stored once at the end.
    std::set<std::string> writtenBack;
    // How for_each_synapse is printed (custom connectivity updates' row code).
    snippet::SynapseLoopText synapseLoop;

    std::string scalar() const {
        return model.precision() == Precision::Float ? "float" : "double";
    }
    std::string lit(double v) const { return literal(v, scalar()); }

    // Render code field `field` of `group` with the current substitutions (plus `extra`); the
    // output starts with a #line label placeholder and ends with a #line resync.
    std::string render(const std::string& group, const std::string& field, const Subs& extra = {});
    // Pointer to synapse group sg's word in the model-wide error array (kErrorsArray): the array
    // plus a number, so groups with different words still merge.
    std::string errorWord(const SynapseGroup& sg);
    // Bind the params (and derived params) and EGPs of a snippet that `scanned` references.
    void bindParams(const snippet::Scanned& scanned, const ParamValues& values,
                    const std::set<std::string>& dynamic, const std::string& owner,
                    const std::string& prefix);
    void bindEGPs(const snippet::Scanned& scanned, const SnippetBase& s, const std::string& owner,
                  const std::string& prefix);
    // Prepended to the names of the fields varInit and varValue declare, so that one body may
    // initialise variables of several groups (block pruning: a synapse group's and its custom
    // updates') without two of them sharing a field.
    std::string initFieldPrefix;
    // What a variable initialiser may name beyond its own parameters (contexts::InitShape):
    // substitutions for sizes (num_neurons, num_pre, …), and statements defining id_pre and
    // id_post from the element `id` (printed only where the initialiser names them).
    Subs initNames;
    std::string initPairDecode;
    // A loop initialising one variable (count elements per batch element); `step` keys its
    // random draws as varValue's.
    VarInitLoop varInit(const std::string& group, const VarDecl& var, const VarInit& init,
                        const std::string& count, bool batched, const std::string& skip = "",
                        const std::string& step = "0u");
    // Statements declaring `local` (the variable's C type) as the initialiser's value for
    // element `element` of batch element `batch`, drawn from its own random stream keyed by
    // `seed` (an expression: `seed` in init kernels, `a->seed` in update kernels) and `step`
    // (0 at initialisation; block pruning's round when a regrown tile is initialised again, so
    // it draws fresh values).
    std::string varValue(const std::string& group, const VarDecl& var, const VarInit& init,
                         const std::string& seed, const std::string& element,
                         const std::string& batch, const std::string& local,
                         const std::string& step = "0u");
    // The finished group.
    LoweredGroup finish(const std::string& groupName, KernelBody body, size_t elements,
                        SynapseExtent synapses = {});

private:
    std::string errorsArrayAt(const std::string& offsetField, size_t word);
    int m_errorSlots = 0; // fields of run-time index-error slots requested so far
    std::vector<std::string> m_labels;
};

// Index expression of a variable of a neuron-shaped group with N elements.
std::string neuronVarIndex(VarAccess access, const std::string& idExpr, const std::string& nExpr);

// The synapse groups that start or end at a neuron group and the current sources into it, each
// in model order: found once per model, so lowering N groups is not N passes over all groups.
struct NeuronNeighbours {
    std::vector<const SynapseGroup*> synapseGroups; // source or target (once if both)
    std::vector<const CurrentSource*> currentSources;
};
std::map<const NeuronGroup*, NeuronNeighbours> neuronNeighbours(const Model& m);

// The passes (each group's body for one kernel kind).
LoweredGroup lowerNeuronUpdate(const Model& m, const NeuronGroup& ng,
                               const NeuronNeighbours& neighbours);
LoweredGroup lowerNeuronUpdate(const Model& m, const NeuronGroup& ng); // finds the neighbours
LoweredGroup lowerNeuronInit(const Model& m, const NeuronGroup& ng);
// Spike-like events of one side of a synapse group: the flags the neuron update set become the
// event queue, bits and recording (the spike path's compaction, reused: a NeuronUpdateBody
// whose threshold is the flag), and the last event time where read.
LoweredGroup lowerEventDetection(const Model& m, const SynapseGroup& sg, bool pre);
// Spike propagation (preSpikeSynCode) or, with `events`, spike-like event propagation
// (preEventSynCode) of a group.
LoweredGroup lowerPresynapticUpdate(const Model& m, const SynapseGroup& sg, bool events = false);
// Postsynaptic learning (postSpikeSynCode) or, with `events`, postsynaptic event code
// (postEventSynCode).
LoweredGroup lowerPostsynapticUpdate(const Model& m, const SynapseGroup& sg, bool events = false);
// Synapse dynamics (synapseDynamicsCode): every synapse, every step.
LoweredGroup lowerSynapseDynamics(const Model& m, const SynapseGroup& sg);
LoweredGroup lowerSynapseInit(const Model& m, const SynapseGroup& sg);
// Block pruning of a prunable group (BlockSparseInit::prunedBy): the layout's steps, then the
// moved tiles' per-synapse variables and its custom updates' per-synapse state initialised again.
LoweredGroup lowerBlockPrune(const Model& m, const SynapseGroup& sg);
LoweredGroup lowerCurrentSourceInit(const Model& m, const CurrentSource& cs);
// A custom connectivity update: its row code over every row, moving the synapses it removes and
// adds with all their per-synapse values, then the layout's derived index rebuilt.
LoweredGroup lowerConnectivityUpdate(const Model& m, const CustomConnectivityUpdate& cc);
// Its own variables' initialisers (after the groups' connectivity is built).
LoweredGroup lowerConnectivityUpdateInit(const Model& m, const CustomConnectivityUpdate& cc);
// sfNpre, sfNpost and sf_t of a synapse group's body.
std::string sizesSetup(Lowerer& e, const SynapseGroup& sg);
// Custom updates of one update group that can share one pass over the elements (same shape, no
// reductions or transposes) are fused: one loop runs all their bodies.
bool fusable(const CustomUpdate& a, const CustomUpdate& b);
LoweredGroup lowerCustomUpdate(const Model& m, const std::vector<const CustomUpdate*>& cus);
LoweredGroup lowerCustomUpdateInit(const Model& m, const CustomUpdate& cu);

} // namespace spikeforge::codegen
