#pragma once
// The lowering: a finalised model to a backend-neutral kernel plan (see docs/internals.md, "The
// pipeline"). Backends include only this and the plan types.
#include "codegen/plan.hpp"
#include "spikeforge/model.hpp"

namespace spikeforge::codegen {

// The whole pipeline: arrays, lowered and merged groups, kernels.
Plan lowerModel(const Model& model);

} // namespace spikeforge::codegen
