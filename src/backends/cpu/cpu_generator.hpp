#pragma once
#include "codegen/plan.hpp"

namespace spikeforge::cpu {

// The CPU backend's translation unit for a plan: prelude (hooks, RNG), merged-group structs, one
// function per merged group and the exported entry points
// `extern "C" void <entry>(const SFStepArgs* a, void* const* sfTables, unsigned sfThreads)`.
std::string generateSource(const codegen::Plan& plan);
// The lines of that translation unit that include standard headers, and nothing else: what the
// backend precompiles (precompiled_prelude.hpp).
std::string standardIncludes(const codegen::Plan& plan);

} // namespace spikeforge::cpu
