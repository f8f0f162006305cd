// Custom updates on the CPU: element-wise updates and batch reductions over tiles of elements in
// parallel (within a tile the batch is the outer loop, so every batch row is read contiguously
// while batch reductions stay in a small per-tile array); neuron reductions with one accumulator
// per batch element.
#include "backends/cpu/cpu_print.hpp"

namespace spikeforge::cpu {

namespace {

using codegen::CustomUpdateKind;
using codegen::ReduceOp;
using codegen::Reduction;

constexpr unsigned kTile = 256; // elements per tile

std::string accumulator(const Reduction& r, bool perElement) {
    return perElement ? "sfAcc_" + r.name + "[id - sfTile]" : "sfAcc_" + r.name;
}

std::string declareAccumulators(const std::vector<Reduction>& rs, bool perElement) {
    std::string c;
    for (const auto& r : rs) {
        const std::string init = r.op == ReduceOp::Sum ? "0" : "-INFINITY";
        if (perElement)
            c += r.ctype + " sfAcc_" + r.name + "[" + std::to_string(kTile) +
                 "];\nfor (unsigned k = 0; k < " + std::to_string(kTile) + "; k++) sfAcc_" +
                 r.name + "[k] = " + init + ";\n";
        else
            c += r.ctype + " sfAcc_" + r.name + " = " + init + ";\n";
    }
    return c;
}

std::string fold(const std::vector<Reduction>& rs, bool perElement) {
    std::string c;
    for (const auto& r : rs) {
        const std::string acc = accumulator(r, perElement);
        c += r.op == ReduceOp::Sum
                 ? acc + " += " + r.local + ";\n"
                 : acc + " = " + r.local + " > " + acc + " ? " + r.local + " : " + acc + ";\n";
    }
    return c;
}

std::string writeAccumulators(const std::vector<Reduction>& rs, bool perElement) {
    std::string c;
    for (const auto& r : rs)
        c += r.array + "[" + r.index + "] = " + accumulator(r, perElement) + ";\n";
    return c;
}

// The transposed stores, in place after each element's body.
std::string transposedStores(const std::vector<codegen::Transpose>& ts) {
    std::string c;
    for (const auto& t : ts)
        c += t.target + " = " + t.value + ";\n";
    return c;
}

} // namespace

void printCustomUpdate(Writer& w, const codegen::CustomUpdateBody& b) {
    const std::string B = std::to_string(b.batch) + "u";
    w << "const size_t sfN = " + b.numElements + ";\n" << b.prologue;
    switch (b.kind) {
    case CustomUpdateKind::NeuronReduction: {
        const std::string loop = "for (uint32_t batch = 0; batch < " + B + "; batch++) {\n" +
                                 declareAccumulators(b.reductions, false) +
                                 "for (size_t id = 0; id < sfN; id++) {\n" + b.decode +
                                 b.perElement + fold(b.reductions, false) + "}\n" +
                                 writeAccumulators(b.reductions, false) + "}\n";
        // Parallel over batch elements only: at batch 1 there is nothing to share.
        parallelFor(w, "(" + B + " > 1u ? sfN * " + B + " : 0u)", 16384, "schedule(static)", loop);
        break;
    }
    case CustomUpdateKind::Elementwise:
    case CustomUpdateKind::BatchReduction: {
        const bool batchReduction = b.kind == CustomUpdateKind::BatchReduction;
        const std::string tile = std::to_string(kTile);
        std::string loop = "for (size_t sfTile = 0; sfTile < sfN; sfTile += " + tile +
                           ") {\n"
                           "const size_t sfEnd = sfTile + " +
                           tile + " < sfN ? sfTile + " + tile + " : sfN;\n" +
                           (batchReduction ? declareAccumulators(b.reductions, true) : "") +
                           "for (uint32_t batch = 0; batch < " + B +
                           "; batch++) {\n"
                           "for (size_t id = sfTile; id < sfEnd; id++) {\n" +
                           b.decode + b.perElement + transposedStores(b.transposes) +
                           (batchReduction ? fold(b.reductions, true) : "") + "}\n}\n";
        if (batchReduction)
            loop += "for (size_t id = sfTile; id < sfEnd; id++) {\n" + b.decode +
                    writeAccumulators(b.reductions, true) + "}\n";
        loop += "}\n";
        parallelFor(w, "sfN * " + B, 16384, "schedule(static)", loop);
        break;
    }
    }
    w << b.epilogue;
}

} // namespace spikeforge::cpu
