// Reductions in SIMT kernels. A tree is the classic halving in local memory: every work-item
// stores its accumulator, then at each level the lower half folds in the upper half, with a
// barrier between levels. With sub-group reductions (Dialect::subGroupSize) each sub-group
// reduces in registers first and only the sub-group results pass through local memory. Each
// reduction has its own slice of SF_WG 8-byte slots, so reductions
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

namespace {

// The sub-group function reducing x, or "" where the type has none.
std::string subGroupFunction(const Reduction& r) {
    const std::string op = r.op == ReduceOp::Sum ? "add" : "max";
    if (r.ctype == "float") return "sf_subgroup_" + op + "_f32";
    if (r.ctype == "double") return "sf_subgroup_" + op + "_f64";
    return "";
}

bool subGroupsReduce(const GroupContext& c, const std::vector<Reduction>& rs) {
    const unsigned s = c.subGroupSize;
    if (s == 0 || c.workGroupSize % s != 0 || c.workGroupSize > s * s) return false;
    return std::all_of(rs.begin(), rs.end(),
                       [](const Reduction& r) { return !subGroupFunction(r).empty(); });
}

// Each sub-group reduces its work-items' accumulators; sub-group j's result goes to slot j; the
// first sub-group reduces the slots and stores the result in slot 0. Two barriers, whatever the
// work-group size, instead of one per halving.
std::string subGroupTree(const GroupContext& c, const std::vector<Reduction>& rs) {
    const std::string S = std::to_string(c.subGroupSize) + "u";
    const bool one = c.workGroupSize == c.subGroupSize;
    std::string c1, c2;
    for (size_t k = 0; k < rs.size(); k++) {
        const auto& r = rs[k];
        const std::string acc = "sfAcc_" + r.name, red = "sfRed_" + r.name,
                          fn = subGroupFunction(r);
        c1 += "SF_LOCAL " + r.ctype + "* const " + red + " = (SF_LOCAL " + r.ctype +
              "*)(sfLocal + " + std::to_string(2 * k) + "u * SF_WG);\n" + acc + " = " + fn + "(" +
              acc + ");\n";
        if (one) {
            c1 += "if (sfLocalId == 0u) " + red + "[0] = " + acc + ";\n";
            continue;
        }
        c1 +=
            "if (sfLocalId % " + S + " == 0u) " + red + "[sfLocalId / " + S + "] = " + acc + ";\n";
        const std::string part = "sfPart_" + r.name;
        c2 += r.ctype + " " + part + " = sfLocalId < SF_WG / " + S + " ? " + red +
              "[sfLocalId] : " + identity(r) + ";\n" + part + " = " + fn + "(" + part +
              ");\nif (sfLocalId == 0u) " + red + "[0] = " + part + ";\n";
    }
    if (one) return c1 + "SF_BARRIER();\n";
    return c1 + "SF_BARRIER();\nif (sfLocalId < " + S + ") {\n" + c2 + "}\nSF_BARRIER();\n";
}

} // namespace

std::string treeReduce(const GroupContext& ctx, const std::vector<Reduction>& rs) {
    if (subGroupsReduce(ctx, rs)) return subGroupTree(ctx, rs);
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
