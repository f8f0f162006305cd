#pragma once
#include "codegen/plan.hpp"
#include "spikeforge/model.hpp"

namespace spikeforge::cpu {

// The CPU backend's code generation pass: arrays, merged groups and one C++ translation unit.
codegen::Plan generate(const Model& model);

} // namespace spikeforge::cpu
