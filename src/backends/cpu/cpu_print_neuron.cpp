// Neuron update on the CPU: neurons in words of 32 (one spike bit each), then the spike bits
// compacted into the spike queue in neuron order and copied to the recording buffer.
#include "backends/cpu/cpu_print.hpp"

namespace spikeforge::cpu {

void printNeuronUpdate(Writer& w, const codegen::NeuronUpdateBody& b) {
    w << "const uint32_t sfN = " + b.numNeurons +
             ";\nconst uint32_t sfWords = (sfN + 31u) / 32u;\n"
             "const uint32_t sfSlot = " +
             b.slot +
             ";\n"
             "const scalar sf_t = (scalar)a->t; (void)sf_t;\n";
    // Stores are unconditional and the spike bit is data, not control flow, so that a loop
    // without per-spike synapse code can be if-converted and vectorised.
    const std::string neuron = "const size_t sfId = id;\nconst bool sfWrite = true;\n" +
                               b.perNeuron + "const bool sfSpike = " + b.threshold +
                               ";\nif (sfSpike) {\n" + b.onSpike +
                               "}\nsfBits |= (uint32_t)sfSpike << (id & 31u);\n" + b.store;
    // A full word of loop-free code is a loop of exactly 32 neurons, which the compiler
    // vectorises without a remainder or masks (COBA, 4000 neurons: the step 18 % faster than
    // one loop of a variable trip count for every word); only the last, partial word takes the
    // general loop. Code with loops of its own is not vectorised, and there the constant trip
    // count only invited unrolling a large body (EventProp's neurons: an epoch ×1.4 slower).
    const std::string general =
        "const uint32_t sfEnd = (sfW + 1u) * 32u < sfN ? (sfW + 1u) * 32u : sfN;\n"
        "for (uint32_t id = sfW * 32u; id < sfEnd; id++) {\n" +
        neuron + "}\n";
    // Where neurons are independent the compiler is told so: it cannot prove that the group's
    // arrays do not alias, and would otherwise test their addresses at every word.
    const std::string independent = b.independentNeurons
                                        ? "#if defined(__clang__)\n"
                                          "#pragma clang loop vectorize(assume_safety)\n"
                                          "#elif defined(__GNUC__)\n"
                                          "#pragma GCC ivdep\n"
                                          "#endif\n"
                                        : "";
    const std::string word = b.loopFree ? "if ((sfW + 1u) * 32u <= sfN) {\n" + independent +
                                              "for (uint32_t sfK = 0; sfK < 32u; sfK++) {\n"
                                              "const uint32_t id = sfW * 32u + sfK;\n" +
                                              neuron + "}\n} else {\n" + general + "}\n"
                                        : general;
    const std::string update = "for (uint32_t batch = sfB0; batch < sfB1; batch++)\n"
                               "for (uint32_t sfW = 0; sfW < sfWords; sfW++) {\n"
                               "uint32_t sfBits = 0;\n" +
                               word + b.stepWords + "[sfW] = sfBits;\n}\n";
    // Small groups run serially: one step of a few thousand neurons takes microseconds, less
    // than a fork/join of threads costs on a busy machine.
    parallelFor(w, "(uint64_t)(sfB1 - sfB0) * sfN", 16384, "collapse(2) schedule(static)", update);
    // Compaction keeps spikes in neuron order whatever the thread count, so summation order
    // downstream (and hence the result) never depends on scheduling.
    std::string compact = "for (uint32_t batch = sfB0; batch < sfB1; batch++) {\n"
                          "const uint32_t* sfB = " +
                          b.stepWords +
                          ";\n"
                          "const size_t sfRow = " +
                          b.queueRow +
                          ";\n"
                          "uint32_t* sfSpk = " +
                          b.queueIds +
                          ";\n"
                          "uint32_t sfCnt = 0;\n"
                          "for (uint32_t w = 0; w < sfWords; w++) {\n"
                          "uint32_t x = sfB[w];\n"
                          "while (x) { sfSpk[sfCnt++] = w * 32u + (uint32_t)__builtin_ctz(x); "
                          "x &= x - 1u; }\n}\n" +
                          b.queueCount + " = sfCnt;\n";
    // A word loop, not memcpy: the call into the C library's memcpy for a few hundred bytes cost
    // COBA (4000 neurons) a tenth of its step time; storing each word inside the update loop
    // instead cost as much again (it spoils the vectorised loop).
    if (!b.recording.empty())
        compact += "if " + b.recording + " {\nuint32_t* __restrict sfRec = " + b.recordWords +
                   ";\nfor (uint32_t w = 0; w < sfWords; w++) sfRec[w] = sfB[w];\n}\n";
    compact += "}\n";
    // Parallel over batch elements only: at batch 1 there is nothing to share.
    parallelFor(w, "(sfB1 - sfB0 > 1u ? (uint64_t)(sfB1 - sfB0) * sfN : 0u)", 16384,
                "schedule(static)", compact);
}

} // namespace spikeforge::cpu
