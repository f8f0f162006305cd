// Spike propagation and postsynaptic learning on the CPU. Work is split over batch elements when
// there are enough of them: each batch element owns its input buffers, so no atomics are needed.
// Otherwise (batch 1 included) the targets are split: each thread walks every spike in order and
// applies only the synapses onto its own range of targets. Either way each target sums its
// inputs in spike order, so the result never depends on the thread count.
#include "backends/cpu/cpu_print.hpp"

namespace spikeforge::cpu {

namespace {

// The loops over batch elements, spikes and synapses; with `partitioned`, only the synapses
// onto targets in [sfLo, sfHi).
std::string spikeLoops(const codegen::PropagationBody& b, bool partitioned) {
    const auto& l = b.loop;
    std::string begin = l.begin, end = l.end, filter;
    if (partitioned && l.indexIsTarget) {
        begin = "sfLo";
        end = "sfHi";
    } else if (partitioned) {
        filter = "if (" + l.target + " < sfLo || " + l.target + " >= sfHi) continue;\n";
    }
    return "for (uint32_t batch = 0; batch < SF_BATCH; batch++) {\n"
           "const uint32_t sfCnt = " +
           b.spkCnt + "[(size_t)batch * " + b.delaySlots +
           " + sfSlot];\n"
           "const uint32_t* sfSpk = " +
           b.spk + " + ((size_t)batch * " + b.delaySlots + " + sfSlot) * " + b.spikeStride + ";\n" +
           b.perBatch +
           "for (uint32_t sfS = 0; sfS < sfCnt; sfS++) {\n"
           "const uint32_t " +
           b.spikeId + " = sfSpk[sfS];\n" + l.setup + "for (uint32_t sfK = " + begin + "; sfK < " +
           end + "; sfK++) {\n" + l.perIter + filter + b.perSynapse + "}\n}\n}\n";
}

} // namespace

void printPropagation(Writer& w, const codegen::PropagationBody& b) {
    w << b.setup << "const uint32_t sfSlot = " + b.slot + ";\n";
    // The work of this step: its spikes times the synapses of one spike (a bound).
    w << "uint64_t sfSpikes = 0;\n"
         "for (uint32_t batch = 0; batch < SF_BATCH; batch++) sfSpikes += " +
             b.spkCnt + "[(size_t)batch * " + b.delaySlots +
             " + sfSlot];\n"
             "const unsigned sfT = sf_team(sfThreads, sfSpikes * (uint64_t)(" +
             b.loop.bound + "), 8192u);\n";
    const std::string serial = spikeLoops(b, false);
    const bool partitionable = !b.numTargets.empty();
    w << std::string("if (sfT > 1u && SF_BATCH > 1u") +
             (partitionable ? " && SF_BATCH >= sfT" : "") +
             ") {\n#pragma omp parallel for schedule(static) num_threads(sfT < SF_BATCH ? sfT : "
             "SF_BATCH)\n"
      << serial << "}";
    if (partitionable)
        w << " else if (sfT > 1u) {\n#pragma omp parallel num_threads(sfT)\n{\n"
             "const uint64_t sfParts = sf_num_threads(), sfPart = sf_thread_num();\n"
             "const uint32_t sfLo = (uint32_t)((uint64_t)" +
                 b.numTargets +
                 " * sfPart / sfParts);\n"
                 "const uint32_t sfHi = (uint32_t)((uint64_t)" +
                 b.numTargets + " * (sfPart + 1u) / sfParts);\n"
          << spikeLoops(b, true) << "}\n}";
    w << " else {\n" << serial << "}\n";
}

} // namespace spikeforge::cpu
