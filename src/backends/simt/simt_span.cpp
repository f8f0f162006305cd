// The rule choosing a propagation strategy. Safety first (what the synapse code writes decides
// which work-items may run at once), then the user's override, then the shape.
#include "backends/simt/simt_span.hpp"

#include <algorithm>

namespace spikeforge::simt {

namespace {

// Threads per spike when the override asks for a presynaptic span without a count: about 64
// synapses each, at most 32 work-items per spike.
unsigned defaultThreadsPerSpike(const codegen::PropagationBody& b, size_t rowStride) {
    if (b.writesSpikeSide) return 1; // the spike's own state: one work-item owns it
    return static_cast<unsigned>(std::clamp<size_t>((rowStride + 63) / 64, 1, 32));
}

} // namespace

const char* strategyName(Strategy s) {
    switch (s) {
    case Strategy::PostSpan:
        return "post-span";
    case Strategy::PreSpan:
        return "pre-span";
    case Strategy::Serial:
        return "serial";
    }
    return "";
}

SpanChoice chooseSpan(const GroupContext& c, const codegen::PropagationBody& b) {
    size_t rowStride = 0; // the largest row of the merged groups [synapses]
    for (const auto& e : c.group.synapses)
        rowStride = std::max(rowStride, e.rowStride);
    // Postsynaptic learning: a work-item per spike of the target owns the target's state and
    // the column's synapses; state of the presynaptic side is shared by the spikes.
    if (!b.presynaptic) {
        if (b.writesOtherSide || b.writesShared) return {Strategy::Serial, 1};
        return {Strategy::PreSpan, 1};
    }
    // Overrides were checked against what the code writes when the model was lowered.
    switch (b.span) {
    case codegen::PropagationBody::Span::Postsynaptic:
        return {Strategy::PostSpan, 1};
    case codegen::PropagationBody::Span::Presynaptic:
        return {Strategy::PreSpan,
                b.threadsPerSpike > 0 ? b.threadsPerSpike : defaultThreadsPerSpike(b, rowStride)};
    case codegen::PropagationBody::Span::Auto:
        break;
    }
    if (b.writesShared || (b.writesSpikeSide && b.writesOtherSide)) return {Strategy::Serial, 1};
    // A CPU device: one core per work-group, plain additions instead of compare-and-swap loops.
    if (c.cpuDevice) return {Strategy::Serial, 1};
    // Presynaptic state: the spike's work-item owns it.
    if (b.writesSpikeSide) return {Strategy::PreSpan, 1};
    // Postsynaptic state: only a dense post-span work-item owns its target.
    if (b.writesOtherSide) return {b.loop.indexIsTarget ? Strategy::PostSpan : Strategy::Serial, 1};
    if (b.loop.indexIsTarget) return {Strategy::PostSpan, 1};
    // A row generated per spike (procedural): a work-item per spike generates it once; a
    // post-span work-item per row slot would each generate the whole row for every spike.
    if (b.loop.setupGeneratesRow) return {Strategy::PreSpan, 1};
    // Sparse rows shorter than a work-group would leave most of a post-span work-group idle for
    // every spike it stages; a work-item per spike walks such a row itself.
    if (rowStride < c.workGroupSize) return {Strategy::PreSpan, 1};
    return {Strategy::PostSpan, 1};
}

} // namespace spikeforge::simt
