// Connectivity descriptors: what each matrix type owns (synapse count, arrays and their sizes)
// and how the lowering iterates it, read through the descriptors and the plan.
#include "codegen/arrays.hpp"
#include "codegen/connectivity.hpp"
#include "codegen/lowerer.hpp"
#include "spikeforge/models.hpp"

#include <gtest/gtest.h>

#include <algorithm>

using namespace spikeforge;
using namespace spikeforge::codegen;

namespace {

void network(Model& m, MatrixType matrix, const WeightUpdateModel& wu, unsigned nPost = 30) {
    m.addNeuronGroup("Pre", 20, models::Poisson(), {{"rate", 10.0}}, {{"timeStepToSpike", 0.0}});
    m.addNeuronGroup("Post", nPost, models::Poisson(), {{"rate", 10.0}},
                     {{"timeStepToSpike", 0.0}});
    std::optional<SparseConnectivityInit> conn;
    if (matrix == MatrixType::Sparse) conn = init::FixedNumberPostWithReplacement(4);
    ParamValues params;
    for (const auto& p : wu.params)
        params[p] = 1.0;
    m.addSynapseGroup("Syn", matrix, 0, "Pre", "Post", {wu, params, {{"g", 0.5}}, {}, {}},
                      {models::DeltaCurr(), {}, {}}, conn);
    m.finalise();
}

const ArrayDecl* arrayNamed(const std::vector<ArrayDecl>& arrays, const std::string& name) {
    for (const auto& a : arrays)
        if (a.name == name) return &a;
    return nullptr;
}

TEST(PlanConnectivity, DenseOwnsNoArraysAndEveryPair) {
    Model m("dense");
    network(m, MatrixType::Dense, models::StaticPulse());
    const auto c = connectivityOf(m.synapseGroup("Syn"));
    EXPECT_EQ(c->synapseCount(), 20u * 30u);
    EXPECT_TRUE(c->arrays().empty());
    EXPECT_FALSE(c->needsColumnIndex());
    const auto arrays = planArrays(m);
    ASSERT_NE(arrayNamed(arrays, "Syn.g"), nullptr);
    EXPECT_EQ(arrayNamed(arrays, "Syn.g")->count, 20u * 30u);
    EXPECT_EQ(arrayNamed(arrays, "Syn.ind"), nullptr);
    Lowerer e(m);
    EXPECT_TRUE(c->rowLoop(e).indexIsTarget); // a backend may split the targets directly
    EXPECT_EQ(c->paddingSkip(e.env), "");
}

TEST(PlanConnectivity, SparseOwnsRowsPaddedToTheirStride) {
    Model m("sparse");
    network(m, MatrixType::Sparse, models::StaticPulse());
    const auto& sg = m.synapseGroup("Syn");
    const auto c = connectivityOf(sg);
    EXPECT_EQ(c->synapseCount(), 20u * sg.maxRowLength());
    const auto arrays = planArrays(m);
    ASSERT_NE(arrayNamed(arrays, "Syn.rowLength"), nullptr);
    EXPECT_EQ(arrayNamed(arrays, "Syn.rowLength")->count, 20u);
    ASSERT_NE(arrayNamed(arrays, "Syn.ind"), nullptr);
    EXPECT_EQ(arrayNamed(arrays, "Syn.ind")->count, 20u * sg.maxRowLength());
    EXPECT_EQ(arrayNamed(arrays, "Syn.ind")->ctype, "uint8_t"); // 30 targets fit a byte
    EXPECT_EQ(arrayNamed(arrays, "Syn.colStart"), nullptr);     // no postsynaptic learning
    EXPECT_EQ(arrayNamed(arrays, "Syn.g")->count, 20u * sg.maxRowLength());
    Lowerer e(m);
    EXPECT_FALSE(c->rowLoop(e).indexIsTarget);
    EXPECT_NE(c->paddingSkip(e.env), "");
    // The build fills the row arrays and reports overflows.
    const Plan p = lowerModel(m);
    const auto& init = p.kernels.at(0);
    EXPECT_TRUE(std::find(init.writes.begin(), init.writes.end(), "Syn.ind") != init.writes.end());
    EXPECT_TRUE(std::find(init.writes.begin(), init.writes.end(), kErrorsArray) !=
                init.writes.end());
}

TEST(PlanConnectivity, SparseLearningNeedsAColumnIndex) {
    Model m("learning");
    network(m, MatrixType::Sparse, models::STDPNearest(), 300);
    const auto c = connectivityOf(m.synapseGroup("Syn"));
    EXPECT_TRUE(c->needsColumnIndex());
    const auto arrays = planArrays(m);
    ASSERT_NE(arrayNamed(arrays, "Syn.colStart"), nullptr);
    EXPECT_EQ(arrayNamed(arrays, "Syn.colStart")->count, 301u);
    EXPECT_EQ(arrayNamed(arrays, "Syn.ind")->ctype, "uint16_t");
    const Plan p = lowerModel(m);
    // The rows, then the column index's counting sort: zero, count, scan, fill, sort.
    std::vector<BuildStep::Kind> kinds;
    for (const auto& g : p.kernels.at(0).groups)
        if (const auto* b = std::get_if<InitBody>(&g.body); b && !b->build.empty())
            for (const auto& step : b->build)
                kinds.push_back(step.kind);
    using K = BuildStep::Kind;
    EXPECT_EQ(kinds, (std::vector<K>{K::ForEach, K::ForEach, K::ForEach, K::InclusiveScan,
                                     K::ForEach, K::SortSegments}));
}

// Propagation may split the targets among threads when the synapse code writes nothing of the
// presynaptic side (snippets can write only synapse variables there); postsynaptic learning,
// which walks the spikes of the targets, is never split by target.
TEST(PlanConnectivity, TargetsAreSplitOnlyInPropagation) {
    auto numTargets = [](const Model& m, bool presynaptic) {
        const Plan p = lowerModel(m);
        for (const auto& k : p.kernels)
            for (const auto& g : k.groups)
                if (const auto* b = std::get_if<PropagationBody>(&g.body);
                    b && b->presynaptic == presynaptic)
                    return b->numTargets;
        return std::string("none");
    };
    Model sparse("sparse"), learning("learning");
    network(sparse, MatrixType::Sparse, models::StaticPulse());
    network(learning, MatrixType::Dense, models::STDPNearest());
    EXPECT_EQ(numTargets(sparse, true), "sfNpost");
    EXPECT_EQ(numTargets(learning, true), "sfNpost"); // it writes only weights
    EXPECT_EQ(numTargets(learning, false), "");
    EXPECT_EQ(numTargets(sparse, false), "none"); // no postsynaptic learning kernel
}

} // namespace
