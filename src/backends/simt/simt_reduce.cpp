// Reductions in SIMT kernels. A tree is the classic halving in local memory: every work-item
// stores its accumulator, then at each level the lower half folds in the upper half, with a
// barrier between levels. Each reduction has its own slice of SF_WG 8-byte slots, so reductions
// of any C type up to 8 bytes share one tree.
#include "backends/simt/simt_reduce.hpp"

#include <algorithm>

namespace spikeforge::simt {

namespace {

using codegen::ReduceOp;
using codegen::Reduction;

std::string identity(const Reduction& r) {
    switch (r.op) {
    case ReduceOp::Sum:
        return "0";
    case ReduceOp::Max:
        return "-INFINITY"; // as on the CPU backend
    }
    return "";
}

std::string combine(const Reduction& r, const std::string& acc, const std::string& x) {
    switch (r.op) {
    case ReduceOp::Sum:
        return acc + " += " + x + ";\n";
    case ReduceOp::Max:
        return acc + " = " + x + " > " + acc + " ? " + x + " : " + acc + ";\n";
    }
    return "";
}

} // namespace

BatchReductionStrategy chooseBatchReduction(size_t elements, unsigned batch, unsigned workGroupSize,
                                            size_t fewElements) {
    return 2u * batch >= workGroupSize && elements < std::min(fewElements, kFewElements)
               ? BatchReductionStrategy::GroupPerElement
               : BatchReductionStrategy::ItemPerElement;
}

std::string declareAccumulators(const std::vector<Reduction>& rs) {
    std::string c;
    for (const auto& r : rs)
        c += r.ctype + " sfAcc_" + r.name + " = " + identity(r) + ";\n";
    return c;
}

std::string foldAccumulators(const std::vector<Reduction>& rs) {
    std::string c;
    for (const auto& r : rs)
        c += combine(r, "sfAcc_" + r.name, r.local);
    return c;
}

size_t treeWords(const std::vector<Reduction>& rs, unsigned workGroupSize) {
    return 2 * size_t(workGroupSize) * rs.size();
}

std::string treeReduce(const std::vector<Reduction>& rs) {
    std::string c;
    for (size_t k = 0; k < rs.size(); k++) {
        const auto& r = rs[k];
        c += "SF_LOCAL " + r.ctype + "* const sfRed_" + r.name + " = (SF_LOCAL " + r.ctype +
             "*)(sfLocal + " + std::to_string(2 * k) + "u * SF_WG);\nsfRed_" + r.name +
             "[sfLocalId] = sfAcc_" + r.name + ";\n";
    }
    c += "SF_BARRIER();\n"
         "for (uint32_t sfHalf = SF_WG / 2u; sfHalf > 0u; sfHalf >>= 1) {\n"
         "if (sfLocalId < sfHalf) {\n";
    for (const auto& r : rs)
        c += combine(r, "sfRed_" + r.name + "[sfLocalId]",
                     "sfRed_" + r.name + "[sfLocalId + sfHalf]");
    c += "}\nSF_BARRIER();\n}\n";
    return c;
}

std::string writeResults(const std::vector<Reduction>& rs, bool fromTree) {
    std::string c;
    for (const auto& r : rs)
        c += r.array + "[" + r.index +
             "] = " + (fromTree ? "sfRed_" + r.name + "[0]" : "sfAcc_" + r.name) + ";\n";
    return c;
}

} // namespace spikeforge::simt
