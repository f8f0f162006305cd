// Placeholder until the SIMT printer of this body kind lands (issue #8).
#include "backends/simt/simt_print.hpp"

#include "spikeforge/errors.hpp"

namespace spikeforge::simt {

std::vector<Stage> propagationStages(const GroupContext&, const codegen::PropagationBody&) {
    throw InternalError("SIMT: propagationStages is not implemented yet");
}

} // namespace spikeforge::simt
