// Spike propagation and postsynaptic learning on the CPU. The team's work items are pairs (batch
// element, part of the targets): each batch element owns its input buffers, and within one a
// thread walks every spike in order and applies only the synapses onto its own range of targets,
// so no atomics are needed and each target sums its inputs in spike order: the result never
// depends on the thread count. With at least as many batch elements as threads there is one part.
#include "backends/cpu/cpu_print.hpp"

namespace spikeforge::cpu {

namespace {

// Around a run of consecutive targets (SynapseLoop::runs): SF_ADD_TO_POST adds to element sfC of
// the run's first target's input (the plan's postInput is an array element, consecutive targets
// consecutive), so GCC sees an affine access and vectorises the run; through id_post, a 32-bit
// sum that may wrap, it does not. `end` puts the plan's hook back.
// sfRunIn: the input element of the run's first target (sfRunPost).
std::string runInput(const codegen::PropagationBody& b) {
    return "scalar* sfRunIn;\n{\nconst uint32_t id_post = sfRunPost;\nsfRunIn = &(" + b.postInput +
           ");\n}\n";
}
std::string runHookBegin(const codegen::PropagationBody& b) {
    if (b.postInput.empty()) return "";
    const std::string hook = codegen::hookName(codegen::Hook::AddToPost);
    return runInput(b) + "#undef " + hook + "\n#define " + hook + "(x) (sfRunIn[sfC] += (x))\n";
}
std::string runHookEnd(const codegen::PropagationBody& b) {
    if (b.postInput.empty()) return "";
    const std::string hook = codegen::hookName(codegen::Hook::AddToPost);
    return "#undef " + hook + "\n#define " + hook + "(x) (" + b.postInput + " += (x))\n";
}

// The neuron of spike `index` (every neuron in order when the body lists no ids: synapse dynamics).
std::string spikeAt(const codegen::PropagationBody& b, const std::string& index) {
    return b.spikeIds.empty() ? index : "sfSpk[" + index + "]";
}

// The loops over spikes and synapses of batch element `batch`; with `partitioned`, only the
// synapses onto targets in [sfLo, sfHi).
std::string spikeLoops(const codegen::PropagationBody& b, bool partitioned) {
    const auto& l = b.loop;
    std::string begin = l.begin, end = l.end, filter;
    if (partitioned && l.indexIsTarget) {
        begin = "sfLo";
        end = "sfHi";
    } else if (partitioned) {
        filter = "if (" + l.target + " < sfLo || " + l.target + " >= sfHi) continue;\n";
    }
    // addToPre (SF_ADD_TO_PRE adds to sfPreAcc): a presynaptic spike's row sums into a
    // register, added to its source's slot once after the row (the slot is zero before it: the
    // source's update cleared it and a neuron spikes once per step, so the sum is the same bit
    // for bit, without a store and a reload per synapse); postsynaptic learning, whose rows run
    // over sources, adds to each source's slot directly.
    std::string rowBegin, rowEnd, synapseBegin, simd;
    if (b.addsToPre && b.presynaptic) {
        rowBegin = "scalar sfPreAcc = 0;\n";
        rowEnd = b.preOutput + " += sfPreAcc;\n";
    } else if (b.addsToPre) {
        synapseBegin = "scalar& sfPreAcc = " + b.preOutput + ";\n";
    }
    // A dense row of a presynaptic spike: every synapse has its own target, and code that
    // writes no state of the spike's side (addToPre aside, a sum) or shared state leaves the
    // synapses independent, so the row may run as SIMD lanes (the row's addToPre sum then adds
    // in lanes, a fixed order for a given build: results still do not depend on threads or
    // step order).
    if (b.presynaptic && l.indexIsTarget && !partitioned && !b.writesSpikeVars && !b.writesShared)
        simd = std::string("#pragma omp simd") + (b.addsToPre ? " reduction(+ : sfPreAcc)" : "") +
               "\n";
    std::string row = simd + "for (uint32_t sfK = " + begin + "; sfK < " + end + "; sfK++) {\n" +
                      l.perIter + filter + synapseBegin + b.perSynapse + "}\n";
    // Runs of consecutive targets (tiles): each a contiguous loop, vectorised when the synapses
    // are independent (distinct targets within a run); the threads' target ranges clip a run.
    if (b.presynaptic && !l.runs.empty()) {
        const std::string clip =
            partitioned ? "if (sfRunPost + sfCe > sfHi) sfCe = sfHi > sfRunPost ? sfHi - sfRunPost "
                          ": 0u;\nif (sfRunPost < sfLo) sfCb = sfLo - sfRunPost < sfCe ? sfLo - "
                          "sfRunPost : sfCe;\n"
                        : "";
        const std::string runSimd = !b.writesSpikeVars && !b.writesShared
                                        ? std::string("#pragma omp simd") +
                                              (b.addsToPre ? " reduction(+ : sfPreAcc)" : "") + "\n"
                                        : "";
        const std::string run =
            "const uint32_t id_post = sfRunPost + sfC;\nconst size_t sfSyn = sfRunSyn + sfC;\n" +
            synapseBegin + b.perSynapse + "}\n";
        // A whole run (every one but those at the group's end or a thread's range's ends) as a
        // loop of constant trip count: whole vectors, no remainder.
        const std::string whole = "if (sfCb == 0u && sfCe == " + std::to_string(l.runLength) +
                                  "u) {\n" + runSimd + "for (uint32_t sfC = 0u; sfC < " +
                                  std::to_string(l.runLength) + "u; sfC++) {\n" + run + "} else\n";
        row = "for (uint32_t sfR = 0; sfR < " + l.runs + "; sfR++) {\n" + l.runSetup +
              runHookBegin(b) + "uint32_t sfCb = 0u, sfCe = sfRunLen;\n" + clip + whole + "{\n" +
              runSimd + "for (uint32_t sfC = sfCb; sfC < sfCe; sfC++) {\n" + run + "}\n" +
              runHookEnd(b) + "}\n";
    }
    // The row two spikes ahead is fetched while this one runs (a row in memory costs a miss per
    // line otherwise, one row after the other).
    const std::string prefetch =
        b.presynaptic && !l.prefetch.empty()
            ? "if (sfS + 2u < sfCnt) {\nconst uint32_t sfNextPre = " + spikeAt(b, "sfS + 2u") +
                  ";\n" + l.prefetch + "}\n"
            : "";
    const std::string ids =
        b.spikeIds.empty() ? "" : "const uint32_t* sfSpk = " + b.spikeIds + ";\n";
    return "const uint32_t sfCnt = " + b.spikeCount + ";\n" + ids + b.perBatch +
           "for (uint32_t sfS = 0; sfS < sfCnt; sfS++) {\n"
           "const uint32_t " +
           b.spikeId + " = " + spikeAt(b, "sfS") + ";\n" + prefetch + l.setup + rowBegin + row +
           rowEnd + "}\n";
}

// The matrix form (codegen::TileProduct): tile-major, each tile applied to every batch element
// of a chunk of up to 64 whose sources in its block-row spiked. Threads take whole chunks of the
// batch elements (each owns its elements' inputs), so a batch of one runs on one thread; each
// target sums its inputs by ascending source (a tile's rows first, then into the target: the
// event-driven form's sums up to float rounding, exactly for exact sums). The loops are
// printed twice, in and outside a parallel region: inside one, GCC reads the arrays' pointers
// from the region's shared block and vectorises no tile row.
void printMatrixPropagation(Writer& w, const codegen::PropagationBody& b) {
    const auto& l = b.loop;
    const auto& x = b.matrix;
    const std::string bs = std::to_string(x.blockSize) + "u";
    const std::string bits =
        x.blockSize == 32
            ? "sfWords[sfFirst >> 5]"
            : "(sfWords[sfFirst >> 5] >> (sfFirst & 31u)) & ((1u << " + bs + ") - 1u)";
    const std::string row = "const uint32_t id_post = sfRunPost + sfC;\n"
                            "const size_t sfSyn = sfRowSyn + sfC;\n" +
                            b.perSynapse + "}\n";
    // Batch elements of chunk sfCk in blocks of 64: the active rows of each block-row per
    // element, then the block-row's tiles, each over the elements with active rows.
    const std::string active = "for (uint32_t sfQ = 0; sfQ < sfBn; sfQ++) {\n"
                               "const uint32_t batch = sfBb + sfQ;\n"
                               "const uint32_t* sfWords = " +
                               x.sourceWords + ";\nsfAct[sfQ] = " + bits +
                               ";\nsfAny |= sfAct[sfQ];\n}\n";
    // The active rows of the tile: for a whole tile (all but the group's last block-column) as
    // loops of constant trip count, whole vectors, with nothing else writing sfAcc, so it stays
    // in registers (a loop that indexes it by a run-time count puts it on the stack: 2.5x
    // slower); the last block-column's tiles, sfRunLen columns.
    auto rows = [&](const std::string& columns, const std::string& simd) {
        return "for (uint32_t sfBits = sfAct[sfQ]; sfBits != 0u; sfBits &= sfBits - 1u) {\n"
               "const uint32_t sfRow = (uint32_t)__builtin_ctz(sfBits);\n"
               "if (sfFirst + sfRow >= sfNpre) break;\n"
               "const size_t sfRowSyn = sfRunSyn + (size_t)sfRow * " +
               l.runRowStride + ";\nconst uint32_t id_pre = sfFirst + sfRow;\n" + simd +
               "for (uint32_t sfC = 0u; sfC < " + columns + "; sfC++) {\n" + row + "}\n";
    };
    const std::string tileRows = "if (sfRunLen == " + bs + ") {\n" +
                                 rows(bs, "#pragma omp simd\n") + "} else {\n" +
                                 rows("sfRunLen", "") + "}\n";
    // Per (tile, batch element): the active rows summed into sfAcc (registers: SF_ADD_TO_POST
    // adds there), then sfAcc added to the run's targets once; a row of inputs added row by
    // row instead loads and stores the targets per row (1.7x slower on a 4,096-neuron layer).
    const std::string hook = codegen::hookName(codegen::Hook::AddToPost);
    const std::string sum =
        b.postInput.empty()
            ? ""
            : "{\n" + runInput(b) + "if (sfRunLen == " + bs +
                  ") {\n#pragma omp simd\nfor (uint32_t sfC = 0u; sfC < " + bs +
                  "; sfC++) sfRunIn[sfC] += sfAcc[sfC];\n} else {\nfor (uint32_t sfC = 0u; sfC < "
                  "sfRunLen; sfC++) sfRunIn[sfC] += sfAcc[sfC];\n}\n}\n";
    const std::string tiles =
        "const uint32_t id_pre = sfFirst;\n" + l.setup + "for (uint32_t sfR = 0; sfR < " + l.runs +
        "; sfR++) {\n" + l.runSetup +
        "for (uint32_t sfQ = 0; sfQ < sfBn; sfQ++) {\n"
        "if (sfAct[sfQ] == 0u) continue;\n"
        "const uint32_t batch = sfBb + sfQ;\n" +
        b.perBatch + "scalar sfAcc[" + bs + "];\n#pragma omp simd\nfor (uint32_t sfC = 0u; sfC < " +
        bs + "; sfC++) sfAcc[sfC] = 0;\n#undef " + hook + "\n#define " + hook +
        "(x) (sfAcc[sfC] += (x))\n" + tileRows + runHookEnd(b) + sum + "}\n}\n";
    const std::string loops =
        "for (uint32_t sfCk = 0; sfCk < sfChunks; sfCk++) {\n"
        "const uint32_t sfCb1 = sfB0 + (uint32_t)((uint64_t)sfNb * (sfCk + 1u) / sfChunks);\n"
        "for (uint32_t sfBb = sfB0 + (uint32_t)((uint64_t)sfNb * sfCk / sfChunks); sfBb < sfCb1; "
        "sfBb += 64u) {\n"
        "const uint32_t sfBn = sfCb1 - sfBb < 64u ? sfCb1 - sfBb : 64u;\n"
        "for (uint32_t sfMBr = 0; sfMBr < sfBlockRows; sfMBr++) {\n"
        "uint32_t sfAct[64], sfAny = 0u;\n"
        "const uint32_t sfFirst = sfMBr * " +
        bs + ";\n" + active + "if (sfAny == 0u) continue;\n" + tiles + "}\n}\n}\n";
    w << b.setup
      << "const uint32_t sfBlockRows = " + x.blockRows +
             ";\n"
             "const uint32_t sfNb = sfB1 - sfB0;\n"
             "const unsigned sfT = sf_team(sfThreads, (uint64_t)sfNb * sfNpre * "
             "(uint64_t)(" +
             l.bound +
             "), 8192u);\n"
             "const uint32_t sfChunks = sfT < sfNb ? sfT : sfNb;\n"
             "if (sfT > 1u) {\n"
             "#pragma omp parallel for schedule(static) num_threads(sfT)\n" +
             loops + "} else {\n" + loops + "}\n";
}

// The event-driven form: every spike's row, in queue order.
void printEventDriven(Writer& w, const codegen::PropagationBody& b) {
    w << b.setup << "const uint32_t sfSlot = " + b.slot + "; (void)sfSlot;\n";
    // The work of this step: its spikes times the synapses of one spike (a bound).
    w << "uint64_t sfSpikes = 0;\n"
         "for (uint32_t batch = sfB0; batch < sfB1; batch++) sfSpikes += " +
             b.spikeCount +
             ";\n"
             "const unsigned sfT = sf_team(sfThreads, sfSpikes * (uint64_t)(" +
             b.loop.bound + "), 8192u);\n";
    const bool partitionable = !b.numTargets.empty();
    if (partitionable) {
        // One team: (batch element, part of the targets) pairs, as many parts per batch element
        // as there are threads for it, so batch 1 and batch < threads use every thread.
        w << "if (sfT > 1u) {\n"
             "const uint32_t sfParts = sfT > sfB1 - sfB0 ? sfT / (sfB1 - sfB0) : 1u;\n"
             "#pragma omp parallel for collapse(2) schedule(static) num_threads(sfT)\n"
             "for (uint32_t batch = sfB0; batch < sfB1; batch++)\n"
             "for (uint32_t sfPart = 0; sfPart < sfParts; sfPart++) {\n"
             "const uint32_t sfLo = (uint32_t)((uint64_t)" +
                 b.numTargets +
                 " * sfPart / sfParts);\n"
                 "const uint32_t sfHi = (uint32_t)((uint64_t)" +
                 b.numTargets + " * (sfPart + 1u) / sfParts);\n"
          << spikeLoops(b, true) << "}\n}";
    } else {
        // Synapse code that writes presynaptic state: batch elements are the only safe split.
        w << "if (sfT > 1u && sfB1 - sfB0 > 1u) {\n"
             "#pragma omp parallel for schedule(static) num_threads(sfT)\n"
             "for (uint32_t batch = sfB0; batch < sfB1; batch++) {\n"
          << spikeLoops(b, false) << "}\n}";
    }
    w << " else {\nfor (uint32_t batch = sfB0; batch < sfB1; batch++) {\n"
      << spikeLoops(b, false) << "}\n}\n";
}

} // namespace

void printPropagation(Writer& w, const codegen::PropagationBody& b) {
    // Input d steps late (dendritic delay): the ring's element as the plan spells it; each
    // thread owns its targets, so a plain addition.
    // Each thread owns the targets it updates: plain additions into the plan's input element.
    const std::string postHook = codegen::hookName(codegen::Hook::AddToPost);
    if (!b.postInput.empty()) w << "#define " + postHook + "(x) (" + b.postInput + " += (x))\n";
    const std::string delayHook = codegen::hookName(codegen::Hook::AddToPostDelay);
    if (!b.delayedInput.empty())
        w << "#define " + delayHook +
                 "(x, d) do { const uint32_t sfD_ = (uint32_t)(d); if (sfD_ >= " + b.delayLimit +
                 ") " + codegen::hookName(codegen::Hook::ReportError) + "(" + b.delayError +
                 ", SF_ERROR_DENDRITIC_DELAY); else " + b.delayedInput + " += (x); } while (0)\n";
    if (b.matrix.blockSize != 0) {
        printMatrixPropagation(w, b);
    } else {
        printEventDriven(w, b);
    }
    if (!b.postInput.empty()) w << "#undef " + postHook + "\n";
    if (!b.delayedInput.empty()) w << "#undef " + delayHook + "\n";
}

} // namespace spikeforge::cpu
