// Custom updates as SIMT kernels, with the CPU backend's semantics (cpu_print_custom.cpp):
//   element-wise    one work-item per element x batch element;
//   transposes      one work-group per tile of kTile x kTile (pre, post) pairs: it runs the
//                   tile's elements (reads coalesced along post), keeps the transposed values in
//                   local memory and writes them coalesced along pre;
//   batch reduction a work-item per element looping over the batch, or a work-group per element
//                   sharing the batch and reducing through a tree (simt_reduce.hpp: the rule);
//   neuron reduction one work-group per batch element, sharing the elements, then a tree.
// Each element's decode and body run inside `do { … } while (0)`, so a decode's `continue`
// (padding of sparse rows) skips the element. The prologue runs in every work-item (it only
// reads); the epilogue (Adam's update counter) runs in a stage of its own, one work-item, so it
// cannot race with the reads of the prologue.
#include "backends/simt/simt_print.hpp"
#include "backends/simt/simt_reduce.hpp"

#include "spikeforge/errors.hpp"

#include <algorithm>

namespace spikeforge::simt {

namespace {

using codegen::CustomUpdateBody;
using codegen::CustomUpdateKind;

constexpr unsigned kTile = 32; // transpose tile edge [elements]

std::string header(const CustomUpdateBody& b) {
    return "const size_t sfN = " + b.numElements + "; (void)sfN;\n" + b.prologue;
}

std::string element(const CustomUpdateBody& b, const std::string& tail) {
    return "do {\n" + b.decode + b.perElement + tail + "} while (0);\n";
}

size_t largest(const std::vector<size_t>& v) {
    return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

// Without transposes, or with transposes stored element by element (a layout with no
// (pre, post) -> element formula, CustomUpdateBody::elementId empty: BlockSparse).
Stage elementwise(const GroupContext& c, const CustomUpdateBody& b) {
    std::string stores;
    for (const auto& t : b.transposes)
        stores += t.target + " = " + t.value + ";\n";
    return {header(b) + "const size_t id = sfLid;\nif (id < sfN) " + element(b, stores),
            c.group.elements, b.batch, 0};
}

// Tile t of a group is (pre block t / tilesPost, post block t % tilesPost). Local memory holds
// one kTile x (kTile + 1) tile per transpose (the padding column spreads a tile column over the
// banks), 8-byte slots so that any value type fits.
Stage transposed(const GroupContext& c, const CustomUpdateBody& b) {
    const std::string T = std::to_string(kTile) + "u", T1 = std::to_string(kTile + 1) + "u";
    const auto& first = b.transposes.front();
    const size_t tileWords = 2 * size_t(kTile) * (kTile + 1);
    std::string s = header(b) + "const uint32_t sfTNpre = " + first.numPre +
                    ", sfTNpost = " + first.numPost + ";\n" +
                    "const uint64_t sfTilesPost = (sfTNpost + " + T + " - 1u) / " + T +
                    ";\nconst uint64_t sfTileIx = sfLid / SF_WG;\n"
                    "const uint32_t sfPre0 = (uint32_t)(sfTileIx / sfTilesPost) * " +
                    T + ", sfPost0 = (uint32_t)(sfTileIx % sfTilesPost) * " + T + ";\n";
    std::string toTile, fromTile;
    for (size_t k = 0; k < b.transposes.size(); k++) {
        const auto& t = b.transposes[k];
        const std::string tile = "sfTile" + std::to_string(k);
        s += "SF_LOCAL " + t.ctype + "* const " + tile + " = (SF_LOCAL " + t.ctype +
             "*)(sfLocal + " + std::to_string(k * tileWords) + "u);\n";
        toTile += tile + "[sfR * " + T1 + " + sfC] = " + t.value + ";\n";
        fromTile += t.target + " = " + tile + "[sfC * " + T1 + " + sfR];\n";
    }
    const std::string loop = "for (uint32_t sfT = sfLocalId; sfT < " + T + " * " + T +
                             "; sfT += SF_WG) {\nconst uint32_t sfR = sfT / " + T +
                             ", sfC = sfT % " + T + ";\n";
    // Loading: sfR is the pre offset, sfC the post offset (consecutive work-items, consecutive
    // synapses); storing: sfR is the post offset, sfC the pre offset.
    s += "if (sfPre0 < sfTNpre) {\n" + loop +
         "if (sfPre0 + sfR < sfTNpre && sfPost0 + sfC < sfTNpost) {\n"
         "size_t sfId;\n{\nconst uint32_t id_pre = sfPre0 + sfR, id_post = sfPost0 + sfC;\n"
         "sfId = " +
         b.elementId + ";\n}\nconst size_t id = sfId;\n" + element(b, toTile) +
         "}\n}\nSF_BARRIER();\n" + loop +
         "if (sfPost0 + sfR < sfTNpost && sfPre0 + sfC < sfTNpre) {\n"
         "const uint32_t id_pre = sfPre0 + sfC, id_post = sfPost0 + sfR;\n" +
         fromTile + "}\n}\n}\n";
    std::vector<size_t> items;
    for (const auto& e : c.group.synapses)
        items.push_back((e.pre + kTile - 1) / kTile * ((e.post + kTile - 1) / kTile) *
                        c.workGroupSize);
    return {s, items, b.batch, tileWords * b.transposes.size()};
}

Stage batchReductionPerItem(const GroupContext& c, const CustomUpdateBody& b) {
    const std::string B = std::to_string(b.batch) + "u";
    return {header(b) + "const size_t id = sfLid;\nif (id < sfN) {\n" +
                declareAccumulators(b.reductions) + "for (uint32_t batch = 0; batch < " + B +
                "; batch++) {\n" + element(b, foldAccumulators(b.reductions)) + "}\ndo {\n" +
                b.decode + writeResults(b.reductions, false) + "} while (0);\n}\n",
            c.group.elements, 1, 0};
}

// The element is uniform in a work-group, so the guard keeps the barriers uniform.
Stage batchReductionPerGroup(const GroupContext& c, const CustomUpdateBody& b) {
    const std::string B = std::to_string(b.batch) + "u";
    std::vector<size_t> items;
    for (size_t n : c.group.elements)
        items.push_back(n * c.workGroupSize);
    return {header(b) + "const size_t id = sfLid / SF_WG;\nif (id < sfN) {\n" +
                declareAccumulators(b.reductions) + "for (uint32_t batch = sfLocalId; batch < " +
                B + "; batch += SF_WG) {\n" + element(b, foldAccumulators(b.reductions)) + "}\n" +
                treeReduce(c, b.reductions) + "if (sfLocalId == 0u) do {\n" + b.decode +
                writeResults(b.reductions, true) + "} while (0);\n}\n",
            items, 1, treeWords(b.reductions, c.workGroupSize)};
}

Stage neuronReduction(const GroupContext& c, const CustomUpdateBody& b) {
    return {header(b) + declareAccumulators(b.reductions) +
                "for (size_t id = sfLocalId; id < sfN; id += SF_WG) {\n" +
                element(b, foldAccumulators(b.reductions)) + "}\n" + treeReduce(c, b.reductions) +
                "if (sfLocalId == 0u) {\n" + writeResults(b.reductions, true) + "}\n",
            std::vector<size_t>(c.group.elements.size(), c.workGroupSize), b.batch,
            treeWords(b.reductions, c.workGroupSize)};
}

Stage epilogue(const GroupContext& c, const CustomUpdateBody& b) {
    return {"if (sfLid == 0u) {\n" + header(b) + b.epilogue + "}\n",
            std::vector<size_t>(c.group.elements.size(), 1), 1, 0};
}

} // namespace

BatchReductionStrategy batchReductionStrategy(const GroupContext& c, const CustomUpdateBody& b) {
    return chooseBatchReduction(largest(c.group.elements), b.batch, c.workGroupSize, c.fewElements);
}

std::vector<Stage> customUpdateStages(const GroupContext& c, const CustomUpdateBody& b) {
    if (!b.transposes.empty() && b.kind != CustomUpdateKind::Elementwise)
        throw InternalError("SIMT: a transpose in a reduction");
    std::vector<Stage> stages;
    switch (b.kind) {
    case CustomUpdateKind::Elementwise:
        stages.push_back(b.transposes.empty() || b.elementId.empty() ? elementwise(c, b)
                                                                     : transposed(c, b));
        break;
    case CustomUpdateKind::BatchReduction:
        switch (batchReductionStrategy(c, b)) {
        case BatchReductionStrategy::ItemPerElement:
            stages.push_back(batchReductionPerItem(c, b));
            break;
        case BatchReductionStrategy::GroupPerElement:
            stages.push_back(batchReductionPerGroup(c, b));
            break;
        }
        break;
    case CustomUpdateKind::NeuronReduction:
        stages.push_back(neuronReduction(c, b));
        break;
    }
    if (!b.epilogue.empty()) stages.push_back(epilogue(c, b));
    return stages;
}

} // namespace spikeforge::simt
