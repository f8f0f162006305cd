#pragma once
// Memory layout pass: every device array of a model, its element type and size. Names are
// "<group>.<var>"; the runtime resolves views and struct fields through these names.
#include "codegen/plan.hpp"
#include "spikeforge/model.hpp"

namespace spikeforge::codegen {

std::vector<ArrayDecl> planArrays(const Model& m);

// Narrowest unsigned type holding every postsynaptic index of a sparse group.
std::string indexType(unsigned numPost);
// Elements of a synapse-shaped variable (without the batch dimension).
size_t synapseCount(const SynapseGroup& sg);
// The group's shape as the plan states it (KernelGroup::synapses).
SynapseExtent synapseExtent(const SynapseGroup& sg);
unsigned bitWords(unsigned n); // 32-bit words to hold one bit per neuron
// Elements of a variable of `count` elements per batch element, under an access mode.
size_t varCount(VarAccess access, size_t elements, unsigned batch);

bool usesDendriticDelay(const Model& m, const SynapseGroup& sg);
// Whether the group's pre- or postsynaptic code or synapse dynamics calls addToPre (it then has an
// outPre array).
bool usesAddToPre(const Model& m, const SynapseGroup& sg);
bool needsColumnIndex(const SynapseGroup& sg);
// Index of `sg` in m.synapseGroups() (its word in kErrorsArray: synapseErrorWord).
size_t synapseGroupIndex(const Model& m, const SynapseGroup& sg);
// Spike-like events: whether the weight update tests an event condition on the presynaptic
// (postsynaptic) neurons, and the names (within the synapse group) of the arrays of that side's
// per-neuron event flags of the step [batch][neuron] and last event times (set_pre, set_post).
bool hasEventCondition(const SynapseGroup& sg, bool pre);
std::string eventFlagArray(bool pre);
std::string eventTimeArray(bool pre);

// Stable 32-bit stream id for the random numbers of one group and purpose (FNV-1a).
uint32_t streamId(const std::string& group, const std::string& purpose);

} // namespace spikeforge::codegen
