#pragma once
// The lowering: a finalised model to a backend-neutral kernel plan (see docs/internals.md, "The
// pipeline"). The runtime includes this; backends never do: they see only the plan types
// (codegen/plan.hpp and the spikeforge_codegen_abi layer, CMakeLists.txt).
#include "codegen/plan.hpp"
#include "spikeforge/model.hpp"

namespace spikeforge::codegen {

// The whole pipeline: arrays, lowered and merged groups, kernels.
Plan lowerModel(const Model& model);

} // namespace spikeforge::codegen
