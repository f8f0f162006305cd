// Placeholder until the SIMT printer of this body kind lands (issue #8).
#include "backends/simt/simt_print.hpp"

#include "spikeforge/errors.hpp"

namespace spikeforge::simt {

std::vector<Stage> customUpdateStages(const GroupContext&, const codegen::CustomUpdateBody&) {
    throw InternalError("SIMT: customUpdateStages is not implemented yet");
}

} // namespace spikeforge::simt
