#pragma once
// The plan: what the runtime needs to run generated code, independent of the backend.
//  - arrays: every device array, by name ("Exc.V"), element type and count;
//  - merged groups: for each kernel phase, a table of structs (one per group in the merge set),
//    whose fields are bound to arrays, numbers or dynamic parameters;
//  - kernels: for each entry point, its merged groups with their typed bodies (kernel_plan.hpp).
// The plan holds no backend text: each backend prints its own source from it.
#include "codegen/kernel_plan.hpp"
#include "codegen/layout.hpp"
#include "spikeforge/types.hpp"

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace spikeforge::codegen {

struct ArrayDecl {
    std::string name;  // "<group>.<var>"
    std::string ctype; // C element type after precision is applied ("float", "uint32_t", …)
    size_t count = 0;  // elements; 0 = allocated later (EGPs, recording)
    bool egp = false;  // an extra global parameter: sized and set by the user at run time
    // State of one trial (Simulation::resetState restores it): neuron, postsynaptic,
    // pre/post and current-source variables, spike queues, spike times and synaptic input;
    // not weights, connectivity, custom-update state, EGPs or recording buffers.
    bool state = false;
    // One copy per batch element, the batch the leading dimension ([batch][…]): what a host view
    // is shaped by. Set from the declaration (access mode, custom-update batching), not guessed
    // from the count.
    bool batched = false;
};

// What one struct field holds for one group.
struct FieldBinding {
    // ArraySize: the element count of `array`, refreshed whenever the array is reallocated (EGPs
    // are sized at run time; snippets index them through a bounds check).
    enum class Kind { Number, Array, Dynamic, ArraySize } kind = Kind::Number;
    double number = 0.0; // Number: the value; Dynamic: the build-time value
    std::string array;   // Array, ArraySize: array name
    std::string owner;   // Dynamic: owning group
    std::string param;   // Dynamic: parameter name
};

struct FieldDecl {
    std::string name;
    std::string ctype; // C type as declared in the struct ("float*", "unsigned int", …)
};

struct MergedGroupTable {
    std::string symbol; // name of the struct array in generated code
    std::string structName;
    std::vector<FieldDecl> fields;
    std::vector<std::string> groupNames;             // one per struct, in order
    std::vector<std::vector<FieldBinding>> bindings; // [group][field]
};

// The model-wide device error array, one uint32 word each: first one word per synapse group
// (model order; abi::ErrorBit bits), then one slot per code field (contexts::allCodeFields order;
// 0 or the ordinal of the array an out-of-range index was used on). One array, so a sync point
// reads every error with one copy. Kernels address their word as (array + offset).
inline constexpr const char* kErrorsArray = "<model>.errors";
// Word of synapse group `group` (its index in Model::synapseGroups).
inline size_t synapseErrorWord(size_t group) {
    return group;
}
// Word of the code field in slot `fieldSlot` of a model with `synapseGroups` synapse groups.
inline size_t snippetErrorWord(size_t synapseGroups, size_t fieldSlot) {
    return synapseGroups + fieldSlot;
}

// When a kernel runs: the runtime launches the kernels of a phase in plan order.
// A step runs SynapseDynamics, PresynapticEventUpdate (spike-like event propagation, as GeNN
// before spikes), PresynapticUpdate (spike propagation), PostsynapticEventUpdate (postsynaptic
// event code), PostsynapticUpdate (postsynaptic learning), NeuronUpdate, then EventDetection (the
// spike-like events the neuron update flagged, into their queues). Event and spike code are
// separate kernels: a group's two codes may write the same synapses and targets, which a SIMT
// device would otherwise run at once. BlockPrune: one kernel per prunable synapse group, run by
// Simulation::pruneBlocks. ConnectivityUpdate: the custom connectivity updates of one update
// group, run by Simulation::customUpdate after the group's CustomUpdate kernel.
enum class KernelPhase {
    Initialise,
    SynapseDynamics,
    PresynapticEventUpdate,
    PresynapticUpdate,
    PostsynapticEventUpdate,
    PostsynapticUpdate,
    NeuronUpdate,
    EventDetection,
    CustomUpdate,
    BlockPrune,
    ConnectivityUpdate
};

// The shape of a synapse group, for backends that size their launches by it (the SIMT
// generator: threads per target, per row slot or per spike). Zero for groups without synapses.
struct SynapseExtent {
    size_t pre = 0, post = 0; // neurons of the source and the target
    size_t rowStride = 0;     // synapses of one row: post (dense) or maxRowLength (sparse)
};

// One merged group run by a kernel: its table, its body and each group's element count.
struct KernelGroup {
    size_t table = 0; // index into Plan::mergedGroups
    KernelBody body;
    std::vector<size_t> elements;        // per group of the table: neurons, synapses or elements
    std::vector<SynapseExtent> synapses; // per group of the table (zero: not synapse-shaped)
};

// One kernel entry point of generated code.
struct Kernel {
    std::string entry; // entry point (codegen/abi.hpp names)
    KernelPhase phase = KernelPhase::NeuronUpdate;
    std::string updateGroup;         // CustomUpdate, ConnectivityUpdate: the update group it
                                     // runs; BlockPrune: the
                                     // synapse group it prunes
    std::vector<size_t> tables;      // merged groups it runs, in order (indices into mergedGroups)
    std::vector<KernelGroup> groups; // the same, with bodies
    unsigned batchSize = 1;
    // Largest work of one group: elements x batch (propagation: the bound targets x batch).
    size_t workSize = 0;
    // Arrays (Plan::arrays names, sorted, unique) the kernel's code may read, may write: each
    // use as the lowering passes state it (Env::array), not every array bound.
    std::vector<std::string> reads, writes;
};

struct Plan {
    Precision precision = Precision::Float;
    unsigned batchSize = 1;
    std::vector<ArrayDecl> arrays;
    std::vector<MergedGroupTable> mergedGroups;
    std::vector<Kernel> kernels;
};

// The kernels of one time step in the order they run (indices into Plan::kernels): the phases
// in KernelPhase's step order, each in plan order. One definition for
// the runtime and for a device that runs many steps at once (backends::Device::runSteps).
std::vector<size_t> stepKernels(const Plan& plan);

// The initialisation kernels in the order they run (plan order; indices into Plan::kernels): one
// definition for the runtime and for a device that runs them as one launch (simt::Program::init).
std::vector<size_t> initKernels(const Plan& plan);

// Whether the step kernels may run one batch element at a time through a whole stretch of steps
// (batch element b's steps 0..n, then b+1's...) with the same result as step by step: batch
// size above one and no step kernel writes state shared by the batch elements. Writable
// variables always have a batch dimension; extra global parameters never do (snippets may not
// assign them today; the check keeps the order safe should that change). Not when a group
// propagates in the matrix form (TileProduct): its point is to read each tile once for the whole
// batch, which one element at a time would undo (same result, a tile stream per element).
bool stepsAreBatchLocal(const Plan& plan);

} // namespace spikeforge::codegen
