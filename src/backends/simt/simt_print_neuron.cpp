// Placeholder until the SIMT printer of this body kind lands (issue #8).
#include "backends/simt/simt_print.hpp"

#include "spikeforge/errors.hpp"

namespace spikeforge::simt {

std::vector<Stage> neuronUpdateStages(const GroupContext&, const codegen::NeuronUpdateBody&) {
    throw InternalError("SIMT: neuronUpdateStages is not implemented yet");
}

} // namespace spikeforge::simt
