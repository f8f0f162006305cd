// Spike propagation and postsynaptic learning as SIMT kernels, in the strategy simt_span.cpp
// chooses: post-span (a work-item per target or row slot, spikes staged in local memory),
// pre-span (work-items per spike) or serial (a work-item per batch element, the CPU's loops).
// Each computes what cpu_print_synapse.cpp computes; only the order in which inputs are summed
// into a target may differ (the queue order of spikes, and atomics).
#include "backends/simt/simt_print.hpp"
#include "backends/simt/simt_span.hpp"

namespace spikeforge::simt {

namespace {

using codegen::Hook;
using codegen::hookName;

// The input hooks of the synapse code. `owned`: the work-item is the only one adding into its
// target (of its batch element), so plain additions; otherwise atomic ones.
std::string defineHooks(const codegen::PropagationBody& b, bool owned) {
    auto addTo = [&](const std::string& place, const std::string& x) {
        return owned ? "(void)(" + place + " += (" + x + "))"
                     : "(void)sf_atomic_add_scalar(&" + place + ", (" + x + "))";
    };
    return (b.postInput.empty() ? std::string()
                                : "#define " + std::string(hookName(Hook::AddToPost)) + "(x) " +
                                      addTo(b.postInput, "x") + "\n") +
           (b.delayedInput.empty()
                ? std::string()
                : "#define " + std::string(hookName(Hook::AddToPostDelay)) +
                      "(x, d) do { const uint32_t sfD_ = (uint32_t)(d); if (sfD_ >= " +
                      b.delayLimit + ") " + hookName(Hook::ReportError) + "(" + b.delayError +
                      ", SF_ERROR_DENDRITIC_DELAY); else " + addTo(b.delayedInput, "x") +
                      "; } while (0)\n") +
           // The span rule gives the source's slot one owner (codegen bindAddToPre): plain.
           (b.preOutput.empty() ? std::string()
                                : "#define " + std::string(hookName(Hook::AddToPre)) +
                                      "(x) (void)(" + b.preOutput + " += (x))\n");
}

std::string undefineHooks() {
    return "#undef " + std::string(hookName(Hook::AddToPost)) + "\n#undef " +
           hookName(Hook::AddToPostDelay) + "\n#undef " + hookName(Hook::AddToPre) + "\n";
}

// The step's spikes of batch element `batch`: sfCnt of them at sfSpk (none when every neuron
// is one, in order: synapse dynamics), then perBatch.
std::string spikeSource(const codegen::PropagationBody& b) {
    const std::string ids =
        b.spikeIds.empty() ? "" : "const SF_GLOBAL uint32_t* sfSpk = " + b.spikeIds + ";\n";
    return b.setup + "const uint32_t sfSlot = " + b.slot +
           "; (void)sfSlot;\nconst uint32_t sfCnt = " + b.spikeCount + ";\n" + ids + b.perBatch;
}

// The neuron of spike `index`.
std::string spikeAt(const codegen::PropagationBody& b, const std::string& index) {
    return b.spikeIds.empty() ? "(" + index + ")" : "sfSpk[" + index + "]";
}

// One synapse sfK of the spike being processed; a `continue` in the fragments skips it.
std::string synapse(const codegen::PropagationBody& b) {
    return "do {\n" + b.loop.perIter + b.perSynapse + "} while (0);\n";
}

// Work-item sfLid is slot sfJ of every spike's row (the target itself when dense). The spikes
// are staged through local memory SF_WG at a time; every work-item of the work-group reaches
// the barriers (the count is uniform: `batch` is).
std::string postSpan(const codegen::PropagationBody& b) {
    return "SF_LOCAL uint32_t* sfSpkL = sfLocal;\n"
           "const uint32_t sfJ = (uint32_t)sfLid;\n"
           "const bool sfActive = sfLid < (uint64_t)(" +
           b.loop.bound +
           ");\n"
           "for (uint32_t sfC = 0; sfC < sfCnt; sfC += SF_WG) {\n"
           "const uint32_t sfNc = sfCnt - sfC < SF_WG ? sfCnt - sfC : SF_WG;\n"
           "SF_BARRIER();\n"
           "if (sfLocalId < sfNc) sfSpkL[sfLocalId] = " +
           spikeAt(b, "sfC + sfLocalId") +
           ";\n"
           "SF_BARRIER();\n"
           "if (sfActive) {\n"
           "for (uint32_t sfS = 0; sfS < sfNc; sfS++) {\n"
           "const uint32_t " +
           b.spikeId + " = sfSpkL[sfS];\n" + b.loop.setup + "const uint32_t sfK = " + b.loop.begin +
           " + sfJ;\nif (sfK < " + b.loop.end + ") {\n" + synapse(b) +
           "}\n}\n}\n}\n"
           // PoCL needs a function's barriers closed (simt_print_neuron.cpp, emit).
           "SF_BARRIER();\n";
}

// Work-items [s * tps, (s + 1) * tps) share spike s: work-item p walks synapses p, p + tps, …
std::string preSpan(const codegen::PropagationBody& b, unsigned threadsPerSpike) {
    const std::string tps = std::to_string(threadsPerSpike) + "u";
    return "const uint64_t sfS = sfLid / " + tps + ";\nif (sfS < sfCnt) {\nconst uint32_t " +
           b.spikeId + " = (uint32_t)" + spikeAt(b, "sfS") + ";\n" + b.loop.setup +
           "for (uint32_t sfK = " + b.loop.begin + " + (uint32_t)(sfLid % " + tps + "); sfK < " +
           b.loop.end + "; sfK += " + tps + ") {\n" + synapse(b) + "}\n}\n";
}

// The CPU's loops over every spike and synapse, in queue order, by one work-item.
std::string serial(const codegen::PropagationBody& b) {
    return "if (sfLid == 0u) {\nfor (uint32_t sfS = 0; sfS < sfCnt; sfS++) {\nconst uint32_t " +
           b.spikeId + " = " + spikeAt(b, "sfS") + ";\n" + b.loop.setup +
           "for (uint32_t sfK = " + b.loop.begin + "; sfK < " + b.loop.end + "; sfK++) {\n" +
           synapse(b) + "}\n}\n}\n";
}

// The matrix form (codegen::TileProduct) as a gather: work-item sfLid is target sfLid of batch
// element `batch` and the only one adding into it; it walks the target's block-column tile by
// tile, row by row (ascending source, the order of the CPU's forms) and runs the synapse code
// where the source spiked. Every tile is read by the batch's work-items for it together.
Stage matrixStage(const GroupContext& c, const codegen::PropagationBody& b) {
    const auto& col = b.matrix.columns;
    Stage s;
    s.dim1 = c.plan.batchSize;
    for (const auto& e : c.group.synapses)
        s.items.push_back(e.post);
    s.body = "// presynaptic update: matrix form, a work-item per target\n" + defineHooks(b, true) +
             b.setup + b.perBatch +
             "if (sfLid < (uint64_t)sfNpost) {\nconst uint32_t id_post = (uint32_t)sfLid;\n"
             "const SF_GLOBAL uint32_t* sfWords = " +
             b.matrix.sourceWords + ";\n" + col.setup + "for (uint32_t sfK = " + col.begin +
             "; sfK < " + col.end + "; sfK++) {\ndo {\n" + col.perIter +
             "if (((sfWords[id_pre >> 5] >> (id_pre & 31u)) & 1u) == 0u) continue;\n" +
             b.perSynapse + "} while (0);\n}\n}\n" + undefineHooks();
    return s;
}

} // namespace

std::vector<Stage> propagationStages(const GroupContext& c, const codegen::PropagationBody& b) {
    if (b.matrix.blockSize != 0) return {matrixStage(c, b)};
    const SpanChoice span = chooseSpan(c, b);
    Stage s;
    s.dim1 = c.plan.batchSize;
    std::string loops;
    // Only a dense post-span work-item owns its target; a serial one owns every target.
    bool owned = false;
    switch (span.strategy) {
    case Strategy::PostSpan:
        for (const auto& e : c.group.synapses)
            s.items.push_back(e.rowStride);
        s.localWords = c.workGroupSize;
        loops = postSpan(b);
        owned = b.loop.indexIsTarget;
        break;
    case Strategy::PreSpan:
        for (const auto& e : c.group.synapses)
            s.items.push_back((b.presynaptic ? e.pre : e.post) * span.threadsPerSpike);
        loops = preSpan(b, span.threadsPerSpike);
        break;
    case Strategy::Serial:
        s.items.assign(c.group.synapses.size(), 1);
        loops = serial(b);
        owned = true;
        break;
    }
    std::string comment = std::string("// ") +
                          (b.spikeIds.empty() ? "synapse dynamics"
                           : b.presynaptic    ? "presynaptic update"
                                              : "postsynaptic learning") +
                          ": " + strategyName(span.strategy);
    if (span.strategy == Strategy::PreSpan)
        comment += ", " + std::to_string(span.threadsPerSpike) + " work-item(s) per spike";
    s.body = comment + "\n" + defineHooks(b, owned) + spikeSource(b) + loops + undefineHooks();
    return {s};
}

} // namespace spikeforge::simt
