#pragma once
// BackendPreferences::optimisation resolved: the one place that reads SPIKEFORGE_QUICK_BUILD.
#include "spikeforge/simulation.hpp"

namespace spikeforge::backends {

// True when generated code is to be compiled with the quick flags (Quick, or Auto with
// SPIKEFORGE_QUICK_BUILD=1). A value of the variable other than empty, 0 or 1 is a ModelError
// naming it: a typo must not silently time a release build as a quick one or the reverse.
bool quickBuild(const BackendPreferences& prefs);

} // namespace spikeforge::backends
