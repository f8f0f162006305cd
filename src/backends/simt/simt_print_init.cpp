// Placeholder until the SIMT printer of this body kind lands (issue #8).
#include "backends/simt/simt_print.hpp"

#include "spikeforge/errors.hpp"

namespace spikeforge::simt {

std::vector<Stage> initStages(const GroupContext&, const codegen::InitBody&) {
    throw InternalError("SIMT: initStages is not implemented yet");
}

} // namespace spikeforge::simt
