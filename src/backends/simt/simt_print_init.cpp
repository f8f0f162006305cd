// Initialisation as SIMT kernels, with the CPU backend's semantics (cpu_print_init.cpp) and its
// random streams (the fragments key sf_rng_init by stream, row or element, batch), so one seed
// gives the same connectivity and values on every backend. Stages of a group, in order:
//   preCalc      one work-item (the row lengths it precomputes are read by every row)
//   rows         one work-item per row: the row body appends with SF_ADD_SYNAPSE, the length is
//                stored, an overflow sets SF_ERROR_ROW_OVERFLOW in the group's error word
//   column index a counting sort over colStart (numPost + 1 words), in four stages:
//                zero; count (column j counted in colStart[j + 2]); an inclusive scan (one
//                work-group), leaving colStart[j + 1] = start of column j; fill (each synapse
//                takes colStart[ind + 1]++ as its slot, which leaves colStart[j + 1] = start
//                of column j + 1, the final index); then each column's segment is sorted
//                ascending, so colSyn equals the CPU's (its fill runs rows in order).
//   variables    one work-item per element x batch element, after the connectivity (the skip of
//                sparse padding reads the row lengths)
#include "backends/simt/simt_print.hpp"

#include "codegen/kernel_plan.hpp"

#include <algorithm>

namespace spikeforge::simt {

namespace {

using codegen::ConnectivityBuild;
using codegen::InitBody;
using codegen::VarInitLoop;

// One work-item per group.
std::vector<size_t> once(const GroupContext& c) {
    return std::vector<size_t>(c.group.elements.size(), 1);
}
std::vector<size_t> perPre(const GroupContext& c, size_t extra = 0) {
    std::vector<size_t> v;
    for (const auto& s : c.group.synapses)
        v.push_back(s.pre + extra);
    return v;
}
std::vector<size_t> perPost(const GroupContext& c, size_t extra = 0) {
    std::vector<size_t> v;
    for (const auto& s : c.group.synapses)
        v.push_back(s.post + extra);
    return v;
}

Stage rows(const GroupContext& c, const InitBody& b, const ConnectivityBuild& k) {
    return {b.setup + "const uint32_t id_pre = (uint32_t)sfLid;\nif (sfLid < " + k.numPre +
                ") {\nconst uint32_t sfStride = " + k.stride + ";\n" +
                codegen::globalPointer(k.indType) + " sfRow = " + k.ind +
                " + (size_t)id_pre * sfStride;\nuint32_t sfLen = 0;\n" + k.rowBody +
                "if (sfLen > sfStride) {\n"
                "sf_atomic_or_u32(" +
                k.error +
                ", SF_ERROR_ROW_OVERFLOW);\n"
                "sfLen = sfStride;\n}\n" +
                k.rowLength + "[id_pre] = sfLen;\n}\n",
            perPre(c), 1, 0};
}

// An inclusive scan of colStart in one work-group: chunks of SF_WG words, each a Hillis-Steele
// scan in local memory plus the sum of the chunks before it. Its loop bounds are uniform.
std::string scan(const ConnectivityBuild& k) {
    return "const uint32_t sfCount = " + k.numPost +
           " + 1u;\nuint32_t sfCarry = 0;\n"
           "for (uint32_t sfBase = 0; sfBase < sfCount; sfBase += SF_WG) {\n"
           "const uint32_t j = sfBase + sfLocalId;\n"
           "sfLocal[sfLocalId] = j < sfCount ? sfCs[j] : 0u;\nSF_BARRIER();\n"
           "for (uint32_t d = 1u; d < SF_WG; d <<= 1) {\n"
           "const uint32_t sfAdd = sfLocalId >= d ? sfLocal[sfLocalId - d] : 0u;\n"
           "SF_BARRIER();\nsfLocal[sfLocalId] += sfAdd;\nSF_BARRIER();\n}\n"
           "if (j < sfCount) sfCs[j] = sfCarry + sfLocal[sfLocalId];\n"
           "sfCarry += sfLocal[SF_WG - 1u];\nSF_BARRIER();\n}\n";
}

// Shell sort (Knuth's gaps) of one column's synapse ids: in place, O(n^1.5) for a column of n.
std::string sortColumn(const ConnectivityBuild& k) {
    return "if (sfLid < " + k.numPost + ") {\n" + codegen::globalPointer("uint32_t") +
           " sfSeg = " + k.colSyn +
           " + sfCs[sfLid];\n"
           "const uint32_t sfLen = sfCs[sfLid + 1u] - sfCs[sfLid];\n"
           "uint32_t sfGap = 1u;\nwhile (sfGap < sfLen / 3u) sfGap = 3u * sfGap + 1u;\n"
           "for (; sfGap > 0u; sfGap /= 3u) {\n"
           "for (uint32_t x = sfGap; x < sfLen; x++) {\n"
           "const uint32_t v = sfSeg[x];\nuint32_t y = x;\n"
           "while (y >= sfGap && sfSeg[y - sfGap] > v) {\n"
           "sfSeg[y] = sfSeg[y - sfGap];\ny -= sfGap;\n}\nsfSeg[y] = v;\n}\n}\n}\n";
}

std::vector<Stage> columnIndex(const GroupContext& c, const InitBody& b,
                               const ConnectivityBuild& k) {
    const std::string cs = codegen::globalPointer("uint32_t") + " sfCs = " + k.colStart + ";\n";
    const std::string pre = b.setup + cs;
    std::vector<Stage> s;
    s.push_back({pre + "if (sfLid <= (uint64_t)" + k.numPost + ") sfCs[sfLid] = 0u;\n",
                 perPost(c, 1), 1, 0});
    std::vector<size_t> synapses;
    for (const auto& e : c.group.synapses)
        synapses.push_back(e.pre * e.rowStride);
    // Synapse s = row * stride + k of the padded rows.
    const std::string synapse = "const uint32_t sfStride = " + k.stride +
                                ";\nconst uint32_t sfI = (uint32_t)(sfLid / sfStride);\n"
                                "if (sfI < " +
                                k.numPre + " && sfLid % sfStride < " + k.rowLength + "[sfI]) {\n";
    s.push_back({pre + synapse + "const uint32_t j = (uint32_t)" + k.ind +
                     "[sfLid];\nif (j + 2u <= " + k.numPost +
                     ") sf_atomic_add_u32(&sfCs[j + 2u], 1u);\n}\n",
                 synapses, 1, 0});
    s.push_back({pre + scan(k), std::vector<size_t>(c.group.elements.size(), c.workGroupSize), 1,
                 c.workGroupSize});
    s.push_back({pre + synapse + "const uint32_t sfSlot = sf_atomic_add_u32(&sfCs[" + k.ind +
                     "[sfLid] + 1u], 1u);\n" + k.colSyn + "[sfSlot] = (uint32_t)sfLid;\n}\n",
                 synapses, 1, 0});
    s.push_back({pre + sortColumn(k), perPost(c), 1, 0});
    return s;
}

// All variables in one stage: each guards its own count and batch.
Stage variables(const GroupContext& c, const InitBody& b) {
    std::string s = b.setup + "const size_t i = sfLid;\n";
    unsigned dim1 = 1;
    for (const VarInitLoop& v : b.vars) {
        s += "{\n" + codegen::globalPointer(v.ctype) + " arr = " + v.array +
             ";\nconst size_t n = " + v.count + ";\nif (batch < " + std::to_string(v.batch) +
             "u && i < n) do {\n" + v.skip + v.body + "} while (0);\n}\n";
        dim1 = std::max(dim1, v.batch);
    }
    // The counts are expressions of the group's sizes: its elements, or (synapse groups) the
    // neurons of either side.
    std::vector<size_t> items;
    for (size_t g = 0; g < c.group.elements.size(); g++) {
        size_t n = std::max<size_t>(c.group.elements[g], 1);
        if (g < c.group.synapses.size())
            n = std::max({n, c.group.synapses[g].pre, c.group.synapses[g].post});
        items.push_back(n);
    }
    return {s, items, dim1, 0};
}

} // namespace

std::vector<Stage> initStages(const GroupContext& c, const InitBody& b) {
    std::vector<Stage> stages;
    if (b.connectivity) {
        const ConnectivityBuild& k = *b.connectivity;
        if (!k.preCalc.empty())
            stages.push_back({b.setup + "if (sfLid == 0u) {\n" + k.preCalc + "}\n", once(c), 1, 0});
        stages.push_back(rows(c, b, k));
        if (k.columnIndex)
            for (auto& s : columnIndex(c, b, k))
                stages.push_back(std::move(s));
    }
    if (!b.vars.empty()) stages.push_back(variables(c, b));
    return stages;
}

} // namespace spikeforge::simt
