#pragma once
// A test seam: a function shown every plan lowerModel produces (no-op unless one is set). The
// CUDA compile check (tests/backend/cuda_compile_check.cpp) installs one for a whole run of the
// backend suite, so every model of the suite has its generated CUDA compiled with NVRTC.
#include "codegen/plan.hpp"

#include <functional>

namespace spikeforge::codegen {

using PlanObserver = std::function<void(const Plan&)>;
// Replaces the observer (an empty function removes it). Not for concurrent use with lowerModel.
void setPlanObserver(PlanObserver observer);
// Calls the observer, if any, with `plan`.
void notifyPlanObserver(const Plan& plan);

} // namespace spikeforge::codegen
