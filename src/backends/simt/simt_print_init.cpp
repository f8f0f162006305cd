// Initialisation as SIMT kernels, with the CPU backend's semantics (cpu_print_init.cpp) and its
// random streams (the fragments key sf_rng_init by stream, row or element, batch), so one seed
// gives the same connectivity and values on every backend. Stages of a group, in order:
//   build steps  the layout's (codegen::BuildStep, e.g. Sparse's rows and column index), a stage
//                each: serial on one work-item, for-each a work-item per iteration, an inclusive
//                scan in one work-group, a work-item per sorted segment
//   variables    one work-item per element x batch element, after the connectivity (the skip of
//                sparse padding reads the row lengths)
#include "backends/simt/simt_print.hpp"

#include "codegen/kernel_plan.hpp"
#include "spikeforge/errors.hpp"

#include <algorithm>

namespace spikeforge::simt {

namespace {

using codegen::BuildStep;
using codegen::InitBody;
using codegen::VarInitLoop;

// Work-items of a build step, per group of the table, from its extent.
std::vector<size_t> extentItems(const GroupContext& c, BuildStep::Extent extent) {
    std::vector<size_t> v;
    for (size_t g = 0; g < c.group.elements.size(); g++) {
        const codegen::SynapseExtent e =
            g < c.group.synapses.size() ? c.group.synapses[g] : codegen::SynapseExtent{};
        switch (extent) {
        case BuildStep::Extent::One:
            v.push_back(1);
            break;
        case BuildStep::Extent::Pre:
            v.push_back(e.pre);
            break;
        case BuildStep::Extent::Post:
            v.push_back(e.post);
            break;
        case BuildStep::Extent::PostPlusOne:
            v.push_back(e.post + 1);
            break;
        case BuildStep::Extent::RowSlots:
            v.push_back(e.pre * e.rowStride);
            break;
        }
    }
    return v;
}

// An inclusive scan in one work-group: chunks of SF_WG words, each a Hillis-Steele scan in
// local memory plus the sum of the chunks before it. Its loop bounds are uniform.
std::string scan(const BuildStep& s) {
    return codegen::globalPointer("uint32_t") + " sfA = " + s.array +
           ";\nconst uint64_t sfCount = " + s.count +
           ";\nuint32_t sfCarry = 0;\n"
           "for (uint64_t sfBase = 0; sfBase < sfCount; sfBase += SF_WG) {\n"
           "const uint64_t j = sfBase + sfLocalId;\n"
           "sfLocal[sfLocalId] = j < sfCount ? sfA[j] : 0u;\nSF_BARRIER();\n"
           "for (uint32_t d = 1u; d < SF_WG; d <<= 1) {\n"
           "const uint32_t sfAdd = sfLocalId >= d ? sfLocal[sfLocalId - d] : 0u;\n"
           "SF_BARRIER();\nsfLocal[sfLocalId] += sfAdd;\nSF_BARRIER();\n}\n"
           "if (j < sfCount) sfA[j] = sfCarry + sfLocal[sfLocalId];\n"
           "sfCarry += sfLocal[SF_WG - 1u];\nSF_BARRIER();\n}\n";
}

// Shell sort (Knuth's gaps) of one segment: in place, O(n^1.5) for a segment of n.
std::string sortSegment(const BuildStep& s) {
    return "if (sfLid < (uint64_t)(" + s.count + ")) {\n" + codegen::globalPointer("uint32_t") +
           " sfSeg = " + s.array + " + " + s.bounds +
           "[sfLid];\n"
           "const uint32_t sfLen = " +
           s.bounds + "[sfLid + 1u] - " + s.bounds +
           "[sfLid];\n"
           "uint32_t sfGap = 1u;\nwhile (sfGap < sfLen / 3u) sfGap = 3u * sfGap + 1u;\n"
           "for (; sfGap > 0u; sfGap /= 3u) {\n"
           "for (uint32_t x = sfGap; x < sfLen; x++) {\n"
           "const uint32_t v = sfSeg[x];\nuint32_t y = x;\n"
           "while (y >= sfGap && sfSeg[y - sfGap] > v) {\n"
           "sfSeg[y] = sfSeg[y - sfGap];\ny -= sfGap;\n}\nsfSeg[y] = v;\n}\n}\n}\n";
}

// One stage per build step: Serial on one work-item, ForEach a work-item per iteration, a scan
// in one work-group, a work-item per sorted segment.
Stage buildStage(const GroupContext& c, const InitBody& b, const BuildStep& s) {
    switch (s.kind) {
    case BuildStep::Kind::Serial:
        return {b.setup + "if (sfLid == 0u) {\n" + s.body + "}\n", extentItems(c, s.extent), 1, 0};
    case BuildStep::Kind::ForEach:
        return {b.setup + "const uint64_t sfI = sfLid;\nif (sfI < (uint64_t)(" + s.count +
                    ")) {\n" + s.body + "}\n",
                extentItems(c, s.extent), 1, 0};
    case BuildStep::Kind::InclusiveScan:
        return {b.setup + scan(s), std::vector<size_t>(c.group.elements.size(), c.workGroupSize), 1,
                c.workGroupSize};
    case BuildStep::Kind::SortSegments:
        return {b.setup + sortSegment(s), extentItems(c, s.extent), 1, 0};
    }
    throw InternalError("unknown build step");
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
    for (const auto& step : b.build)
        stages.push_back(buildStage(c, b, step));
    if (!b.vars.empty()) stages.push_back(variables(c, b));
    return stages;
}

} // namespace spikeforge::simt
