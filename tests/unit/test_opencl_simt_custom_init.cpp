// Built only with the opencl backend (file name test_opencl_*: CMake leaves it out otherwise).
// The SIMT printers of custom updates and initialisation: the batch-reduction rule, the stages
// each body kind becomes (read from their structure) and, for every shape, a Program built for
// the OpenCL device on this machine (PoCL), which compiles every stage the printers wrote.
#include "backends/opencl/opencl_device.hpp"
#include "backends/opencl/opencl_dialect.hpp"
#include "backends/simt/simt_reduce.hpp"
#include "codegen/lower.hpp"
#include "spikeforge/models.hpp"
#include "support/reduction_models.hpp"

#include <gtest/gtest.h>

#include <string>

using namespace spikeforge;
using namespace spikeforge::simt;
using A = CustomUpdateVarAccess;

namespace {

constexpr unsigned kWG = 64;

// The OpenCL device here (PoCL) and its dialect, with a work-group of kWG work-items.
Dialect openclForTest() {
    const auto device = opencl::OpenClDevice::open("");
    Dialect d = opencl::openclDialect(device->info());
    d.workGroupSize = kWG;
    return d;
}

// Generates the custom-update and initialisation kernels of `plan` (the phases these printers
// write) and builds them for the device.
void buildOnDevice(codegen::Plan plan) {
    std::erase_if(plan.kernels, [](const codegen::Kernel& k) {
        return k.phase != codegen::KernelPhase::CustomUpdate &&
               k.phase != codegen::KernelPhase::Initialise;
    });
    const Program p = generate(plan, openclForTest());
    const auto device = opencl::OpenClDevice::open("");
    EXPECT_NO_THROW(device->buildProgram(p.source, "-cl-std=CL1.2"));
}

// The merged group of the plan whose table holds group `name`, with its context.
struct Found {
    const codegen::KernelGroup* group = nullptr;
    const codegen::MergedGroupTable* table = nullptr;
};
Found find(const codegen::Plan& plan, codegen::KernelPhase phase, const std::string& name) {
    for (const auto& k : plan.kernels) {
        if (k.phase != phase) continue;
        for (const auto& g : k.groups) {
            const auto& t = plan.mergedGroups.at(g.table);
            for (const auto& n : t.groupNames)
                if (n == name) return {&g, &t};
        }
    }
    ADD_FAILURE() << "no merged group holds " << name;
    return {};
}

// The plan of N neurons x batch with a batch reduction "BR" and a neuron reduction "NR".
codegen::Plan reductions(unsigned n, unsigned batch) {
    Model m("reductions");
    m.setBatchSize(batch);
    m.addNeuronGroup("Pop", n, sftest::holder({"x", "y"}), {}, {{"x", 0.0}, {"y", 0.0}});
    m.addCustomUpdate("BR", "Batch", sftest::reduce(A::ReduceBatchSum, A::ReduceBatchMax), {},
                      {{"sum", 0.0}, {"mx", 0.0}}, {{"x", {"Pop", "x"}}});
    m.addCustomUpdate("NR", "Neuron", sftest::reduce(A::ReduceNeuronSum, A::ReduceNeuronMax), {},
                      {{"sum", 0.0}, {"mx", 0.0}}, {{"x", {"Pop", "y"}}});
    m.finalise();
    return codegen::lowerModel(m);
}

} // namespace

TEST(SimtBatchReductionRule, GroupPerElementOnlyForFewElementsAndALargeBatch) {
    using S = BatchReductionStrategy;
    EXPECT_EQ(chooseBatchReduction(100, 1, kWG), S::ItemPerElement);
    EXPECT_EQ(chooseBatchReduction(100, 2, kWG), S::ItemPerElement);
    EXPECT_EQ(chooseBatchReduction(100, kWG / 2 - 1, kWG), S::ItemPerElement);
    EXPECT_EQ(chooseBatchReduction(100, kWG / 2, kWG), S::GroupPerElement);
    EXPECT_EQ(chooseBatchReduction(100, 512, kWG), S::GroupPerElement);
    EXPECT_EQ(chooseBatchReduction(kFewElements - 1, 33, kWG), S::GroupPerElement);
    EXPECT_EQ(chooseBatchReduction(kFewElements, 33, kWG), S::ItemPerElement);
    EXPECT_EQ(chooseBatchReduction(kFewElements, 512, kWG), S::ItemPerElement);
    // A device that fills up sooner (a CPU) lowers the bound; none raises it beyond kFewElements.
    EXPECT_EQ(chooseBatchReduction(255, 512, kWG, 256), S::GroupPerElement);
    EXPECT_EQ(chooseBatchReduction(256, 512, kWG, 256), S::ItemPerElement);
    EXPECT_EQ(chooseBatchReduction(kFewElements, 512, kWG, 10 * kFewElements), S::ItemPerElement);
}

class SimtReductionShapes : public ::testing::TestWithParam<unsigned> {};

// N = 100 is no multiple of the work-group size; each batch size gets the strategy of the rule,
// with the work-items that strategy needs, and the program builds.
TEST_P(SimtReductionShapes, StagesFollowTheRuleAndBuild) {
    constexpr unsigned kN = 100;
    const unsigned batch = GetParam();
    const codegen::Plan plan = reductions(kN, batch);

    const Found br = find(plan, codegen::KernelPhase::CustomUpdate, "BR");
    ASSERT_TRUE(br.group);
    const GroupContext bc{plan, *br.table, *br.group, kWG};
    const auto& bb = std::get<codegen::CustomUpdateBody>(br.group->body);
    const auto strategy = batchReductionStrategy(bc, bb);
    EXPECT_EQ(strategy, chooseBatchReduction(kN, batch, kWG));
    const auto bStages = customUpdateStages(bc, bb);
    ASSERT_EQ(bStages.size(), 1u);
    const bool perGroup = strategy == BatchReductionStrategy::GroupPerElement;
    EXPECT_EQ(bStages[0].items, std::vector<size_t>{perGroup ? size_t(kN) * kWG : kN});
    EXPECT_EQ(bStages[0].dim1, 1u);
    EXPECT_EQ(bStages[0].localWords, perGroup ? 2u * 2 * kWG : 0u); // two reductions

    const Found nr = find(plan, codegen::KernelPhase::CustomUpdate, "NR");
    ASSERT_TRUE(nr.group);
    const auto nStages = customUpdateStages({plan, *nr.table, *nr.group, kWG},
                                            std::get<codegen::CustomUpdateBody>(nr.group->body));
    ASSERT_EQ(nStages.size(), 1u);
    EXPECT_EQ(nStages[0].items, std::vector<size_t>{kWG}); // one work-group per batch element
    EXPECT_EQ(nStages[0].dim1, batch);

    buildOnDevice(plan);
}

INSTANTIATE_TEST_SUITE_P(Batches, SimtReductionShapes, ::testing::Values(1u, 2u, 33u, 512u));

// Adam reads the device-side update counter in every work-item and advances it in a stage of
// its own, one work-item per group.
TEST(SimtCustomUpdate, UpdateCounterAdvancesInItsOwnStage) {
    Model m("adam");
    m.setBatchSize(3);
    m.addNeuronGroup("Pop", 70, sftest::holder({"x", "y"}), {}, {{"x", 0.0}, {"y", 0.0}});
    m.addCustomUpdate("Opt", "Train", models::Adam(),
                      {{"beta1", 0.9}, {"beta2", 0.999}, {"epsilon", 1e-8}, {"alpha", 0.01}},
                      {{"m", 0.0}, {"v", 0.0}},
                      {{"gradient", {"Pop", "x"}}, {"variable", {"Pop", "y"}}});
    m.finalise();
    const codegen::Plan plan = codegen::lowerModel(m);
    const Found f = find(plan, codegen::KernelPhase::CustomUpdate, "Opt");
    ASSERT_TRUE(f.group);
    const auto& b = std::get<codegen::CustomUpdateBody>(f.group->body);
    ASSERT_FALSE(b.epilogue.empty());
    const auto stages = customUpdateStages({plan, *f.table, *f.group, kWG}, b);
    ASSERT_EQ(stages.size(), 2u);
    EXPECT_EQ(stages[0].items, std::vector<size_t>{70});
    EXPECT_EQ(stages[0].dim1, 3u);
    EXPECT_EQ(stages[1].items, std::vector<size_t>{1});
    EXPECT_EQ(stages[1].dim1, 1u);
    buildOnDevice(plan);
}

WeightUpdateModel weights() {
    WeightUpdateModel w;
    w.name = "Weights";
    w.vars = {{"g", "scalar", VarAccess::ReadOnly}};
    return w;
}

// A transpose is structure on the body, and the SIMT kernel covers the synapse matrix with
// 32 x 32 tiles, one work-group each (37 x 70: partial tiles on both edges).
TEST(SimtCustomUpdate, TransposeRunsAsTiles) {
    Model m("transpose");
    m.addNeuronGroup("A", 37, sftest::holder({"x", "y"}), {}, {{"x", 0.0}, {"y", 0.0}});
    m.addNeuronGroup("B", 70, sftest::holder({"x", "y"}), {}, {{"x", 0.0}, {"y", 0.0}});
    for (auto [name, src, tgt] : {std::tuple{"Fwd", "A", "B"}, std::tuple{"Back", "B", "A"}})
        m.addSynapseGroup(name, MatrixType::Dense, 0, src, tgt,
                          {weights(), {}, {{"g", 0.0}}, {}, {}}, {models::DeltaCurr(), {}, {}});
    m.addCustomUpdateWU("T", "Transpose", models::Transpose(), {}, {},
                        {{"variable", {"Fwd", "g", "Back", "g"}}});
    m.finalise();
    const codegen::Plan plan = codegen::lowerModel(m);
    const Found f = find(plan, codegen::KernelPhase::CustomUpdate, "T");
    ASSERT_TRUE(f.group);
    const auto& b = std::get<codegen::CustomUpdateBody>(f.group->body);
    ASSERT_EQ(b.transposes.size(), 1u);
    // Not batched: the mirror element has no batch offset; the layout gives both indices.
    EXPECT_EQ(b.transposes[0].target.find("batch"), std::string::npos) << b.transposes[0].target;
    EXPECT_NE(b.transposes[0].target.find("id_post"), std::string::npos);
    EXPECT_NE(b.elementId.find("id_pre"), std::string::npos) << b.elementId;
    const auto stages = customUpdateStages({plan, *f.table, *f.group, kWG}, b);
    ASSERT_EQ(stages.size(), 1u);
    EXPECT_EQ(stages[0].items, std::vector<size_t>{2 * 3 * kWG}); // ceil(37/32) x ceil(70/32)
    EXPECT_GE(stages[0].localWords, 32u * 32u);
    buildOnDevice(plan);
}

// Sparse connectivity with a column index (STDP reads it) and a random weight: rows, the four
// column-index stages and the variables, in that order; then the program builds.
TEST(SimtInit, SparseConnectivityColumnIndexThenVariables) {
    Model m("init");
    m.addNeuronGroup("A", 100, sftest::holder({"x", "y"}), {},
                     {{"x", init::Uniform(0.0, 1.0)}, {"y", 0.0}});
    m.addNeuronGroup("B", 77, sftest::holder({"x", "y"}), {},
                     {{"x", 0.0}, {"y", init::Normal(0.0, 1.0)}});
    WeightUpdateModel stdp = weights();
    stdp.vars = {{"g", "scalar", VarAccess::ReadWrite}};
    stdp.postSpikeSynCode = "g += 0.01;";
    m.addSynapseGroup("S", MatrixType::Sparse, 0, "A", "B",
                      {stdp, {}, {{"g", init::Uniform(-1.0, 1.0)}}, {}, {}},
                      {models::DeltaCurr(), {}, {}}, init::FixedProbability(0.1));
    m.finalise();
    const codegen::Plan plan = codegen::lowerModel(m);
    const Found f = find(plan, codegen::KernelPhase::Initialise, "S");
    ASSERT_TRUE(f.group);
    const auto& b = std::get<codegen::InitBody>(f.group->body);
    ASSERT_EQ(b.build.size(), 6u); // rows and the column index's five steps
    const auto stages = initStages({plan, *f.table, *f.group, kWG}, b);
    ASSERT_EQ(stages.size(), 7u); // rows, zero, count, scan, fill, sort, variables
    const auto& syn = f.group->synapses.at(0);
    EXPECT_EQ(stages[0].items, std::vector<size_t>{100}); // a work-item per row
    EXPECT_EQ(stages[1].items, std::vector<size_t>{78});  // colStart: post + 1
    EXPECT_EQ(stages[2].items, std::vector<size_t>{100 * syn.rowStride});
    EXPECT_EQ(stages[3].items, std::vector<size_t>{kWG}); // the scan: one work-group
    EXPECT_EQ(stages[5].items, std::vector<size_t>{77});  // a work-item per column
    EXPECT_EQ(stages[6].items, std::vector<size_t>{100 * syn.rowStride});
    buildOnDevice(plan);
}
