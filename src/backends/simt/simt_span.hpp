#pragma once
// How the SIMT generator shares out a propagation body among work-items: the strategy of one
// merged group and the rule choosing it (docs/internals.md, "SIMT kernels: neuron update and
// propagation").
#include "backends/simt/simt_print.hpp"

namespace spikeforge::simt {

enum class Strategy {
    PostSpan, // presynaptic update: one work-item per target (dense) or row slot (sparse) and
              // batch element, the step's spikes staged through local memory
    PreSpan,  // one or more work-items per spike and batch element, each walking a share of the
              // spike's row (presynaptic update) or column (postsynaptic learning)
    Serial,   // one work-item per batch element walks every spike in queue order: the code
              // writes state that no parallel split owns (EGPs, both sides of the synapse)
};

struct SpanChoice {
    Strategy strategy = Strategy::Serial;
    unsigned threadsPerSpike = 1; // PreSpan: work-items per spike
};

// The strategy of a merged group (uniform over its groups: the rule reads their largest row).
SpanChoice chooseSpan(const GroupContext& c, const codegen::PropagationBody& b);

// "post-span", "pre-span", "serial": for generated comments and messages.
const char* strategyName(Strategy s);

} // namespace spikeforge::simt
