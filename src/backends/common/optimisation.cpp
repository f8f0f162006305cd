#include "backends/common/optimisation.hpp"

#include "spikeforge/errors.hpp"

#include <cstdlib>
#include <string>

namespace spikeforge::backends {

bool quickBuild(const BackendPreferences& prefs) {
    using O = BackendPreferences::Optimisation;
    switch (prefs.optimisation) {
    case O::Release:
        return false;
    case O::Quick:
        return true;
    case O::Auto:
        break;
    }
    const char* env = std::getenv("SPIKEFORGE_QUICK_BUILD");
    const std::string value = env ? env : "";
    if (value.empty() || value == "0") return false;
    if (value == "1") return true;
    throw ModelError("SPIKEFORGE_QUICK_BUILD is '" + value +
                     "'; it must be 1 (quick builds of generated code), 0 or unset (release "
                     "builds)");
}

} // namespace spikeforge::backends
