// Custom updates whose shape and reduction dimension come from their references, as in GeNN
// (docs/custom_updates.md "Worked out from the references"): addCustomUpdate over synapse
// variables runs per synapse; ReduceSum / ReduceMax reduce over the dimension the referenced
// variable lacks (the batch, or the elements). Every backend, batch 3.
#include "backend_fixture.hpp"

#include "spikeforge/models.hpp"

#include <cmath>
#include <string>
#include <vector>

using namespace spikeforge;
using A = CustomUpdateVarAccess;

namespace {

constexpr unsigned kBatch = 3, kN = 5;

NeuronModel holder() {
    NeuronModel n;
    n.name = "Holder";
    n.vars = {{"x"},
              {"shared", "scalar", VarAccess::ReadOnly},
              {"perBatch", "scalar", VarAccess::ReadOnlySharedNeuron}};
    return n;
}

CustomUpdateModel reducer(A access) {
    CustomUpdateModel m;
    m.name = std::string("Reduce") + toString(access);
    m.varRefs = {{"x", "scalar", A::ReadOnly}, {"out", "scalar", access}};
    m.updateCode = "out = x;";
    return m;
}

class CustomUpdateInference : public sftest::BackendTest {};

TEST_P(CustomUpdateInference, GenericReductionsReduceOverTheDimensionTheTargetLacks) {
    Model m("cu_infer_reduce");
    m.setBatchSize(kBatch);
    m.setPrecision(Precision::Double);
    m.addNeuronGroup("Pop", kN, holder(), {}, {{"x", 0.0}, {"shared", 0.0}, {"perBatch", 0.0}});
    // `shared` has no batch dimension: a batch sum; `perBatch` has no element dimension: a sum
    // over the neurons; `Pop.x` (every dimension) under ReduceMax is refused below.
    auto& overBatch = m.addCustomUpdate("OverBatch", "Batch", reducer(A::ReduceSum), {}, {},
                                        {{"x", {"Pop", "x"}}, {"out", {"Pop", "shared"}}});
    auto& overNeurons = m.addCustomUpdate("OverNeurons", "Neurons", reducer(A::ReduceMax), {}, {},
                                          {{"x", {"Pop", "x"}}, {"out", {"Pop", "perBatch"}}});
    Simulation sim(m, prefs());
    EXPECT_EQ(overBatch.model().varRefs[1].access, A::ReduceBatchSum);
    EXPECT_EQ(overNeurons.model().varRefs[1].access, A::ReduceNeuronMax);
    // A view's batch copies come from the declaration: ReadOnly is shared by the batch.
    EXPECT_EQ(sim.batchCopies("Pop", "x"), kBatch);
    EXPECT_EQ(sim.batchCopies("Pop", "shared"), 1u);
    EXPECT_EQ(sim.batchCopies("Pop", "perBatch"), kBatch);
    auto x = sim.view<double>("Pop", "x");
    for (unsigned b = 0; b < kBatch; b++)
        for (unsigned i = 0; i < kN; i++)
            x[b * kN + i] = (b + 1) * 10.0 + i * (b == 1 ? -1.0 : 1.0);
    sim.push("Pop", "x");
    sim.customUpdate("Batch");
    sim.customUpdate("Neurons");
    sim.pull("Pop", "shared");
    sim.pull("Pop", "perBatch");
    for (unsigned i = 0; i < kN; i++) // 10 + i + 20 - i + 30 + i
        EXPECT_EQ(sim.view<double>("Pop", "shared")[i], 60.0 + i) << i;
    const std::vector<double> peaks = {14.0, 20.0, 34.0};
    for (unsigned b = 0; b < kBatch; b++)
        EXPECT_EQ(sim.view<double>("Pop", "perBatch")[b], peaks[b]) << b;
}

// The same model at batch size 1 (GeNN builds it too): `shared` (elements, no batch dimension)
// is the batch reduction over the one batch element, a copy; `perBatch` stays a neuron
// reduction; a reference with every dimension is still refused.
TEST_P(CustomUpdateInference, AtBatchSizeOneASharedTargetTakesTheCopyAsInGeNN) {
    Model m("cu_infer_batch_one");
    m.setPrecision(Precision::Double);
    m.addNeuronGroup("Pop", kN, holder(), {}, {{"x", 0.0}, {"shared", 0.0}, {"perBatch", 0.0}});
    auto& overBatch = m.addCustomUpdate("OverBatch", "Batch", reducer(A::ReduceSum), {}, {},
                                        {{"x", {"Pop", "x"}}, {"out", {"Pop", "shared"}}});
    auto& overNeurons = m.addCustomUpdate("OverNeurons", "Neurons", reducer(A::ReduceSum), {}, {},
                                          {{"x", {"Pop", "x"}}, {"out", {"Pop", "perBatch"}}});
    Simulation sim(m, prefs());
    EXPECT_EQ(overBatch.model().varRefs[1].access, A::ReduceBatchSum);
    EXPECT_EQ(overNeurons.model().varRefs[1].access, A::ReduceNeuronSum);
    auto x = sim.view<double>("Pop", "x");
    for (unsigned i = 0; i < kN; i++)
        x[i] = 3.0 * i - 2.5;
    sim.push("Pop", "x");
    sim.customUpdate("Batch");
    sim.customUpdate("Neurons");
    sim.pull("Pop", "shared");
    sim.pull("Pop", "perBatch");
    for (unsigned i = 0; i < kN; i++)
        EXPECT_EQ(sim.view<double>("Pop", "shared")[i], 3.0 * i - 2.5) << i;
    EXPECT_EQ(sim.view<double>("Pop", "perBatch")[0], 17.5); // 3 * (0 + .. + 4) - 5 * 2.5

    Model every("cu_infer_batch_one_every");
    every.addNeuronGroup("Pop", kN, holder(), {}, {{"x", 0.0}, {"shared", 0.0}, {"perBatch", 0.0}});
    every.addCustomUpdate("Every", "A", reducer(A::ReduceSum), {}, {},
                          {{"x", {"Pop", "x"}}, {"out", {"Pop", "x"}}});
    sftest::expectError<ModelError>(
        [&] { every.finalise(); },
        {"custom update 'Every'", "reference 'out' (", "has every dimension of the update"});
}

// Initialisers of a custom update's variables see the update's shape, as GeNN's: num_neurons
// over neurons; id_pre, id_post, num_pre and num_post over a synapse group's synapses (Sparse:
// each element's pair comes from the rows the group's own initialisation built).
TEST_P(CustomUpdateInference, VariableInitialisersSeeTheUpdatesShape) {
    Model m("cu_init_names");
    m.setBatchSize(kBatch);
    m.setPrecision(Precision::Double);
    m.addNeuronGroup("Pre", 4, holder(), {}, {{"x", 0.0}, {"shared", 0.0}, {"perBatch", 0.0}});
    m.addNeuronGroup("Post", 6, holder(), {}, {{"x", 0.0}, {"shared", 0.0}, {"perBatch", 0.0}});
    WeightUpdateModel w;
    w.name = "Weight";
    w.vars = {{"g", "scalar", VarAccess::ReadOnly}};
    m.addSynapseGroup("Syn", MatrixType::Sparse, 0, "Pre", "Post", {w, {}, {{"g", 0.0}}, {}, {}},
                      {models::DeltaCurr(), {}, {}}, init::FixedProbability(0.5));
    InitSnippet pairCode;
    pairCode.name = "PairCode";
    pairCode.code = "value = id_pre * 100.0 + id_post + num_pre * 1000.0 + num_post * 10000.0;";
    InitSnippet sizeCode;
    sizeCode.name = "SizeCode";
    sizeCode.code = "value = id + num_neurons * 10.0 + batch * 0.5;";
    CustomUpdateModel tag;
    tag.name = "Tag";
    tag.vars = {{"tag"}};
    tag.varRefs = {{"g", "scalar", A::ReadOnly}};
    tag.updateCode = "tag += g;";
    m.addCustomUpdate("TagSyn", "T", tag, {}, {{"tag", VarInit(pairCode, {})}},
                      {{"g", {"Syn", "g"}}});
    CustomUpdateModel count;
    count.name = "Count";
    count.vars = {{"c"}};
    count.varRefs = {{"x", "scalar", A::ReadOnly}};
    count.updateCode = "c += x;";
    m.addCustomUpdate("CountPre", "T", count, {}, {{"c", VarInit(sizeCode, {})}},
                      {{"x", {"Pre", "x"}}});
    Simulation sim(m, prefs());
    sim.pullConnectivity("Syn");
    sim.pull("TagSyn", "tag");
    const auto rowLength = sim.view<uint32_t>("Syn", "rowLength");
    const auto ind = sim.view<uint8_t>("Syn", "ind");
    const auto tags = sim.view<double>("TagSyn", "tag");
    const unsigned stride = m.synapseGroup("Syn").maxRowLength();
    ASSERT_EQ(sim.batchCopies("TagSyn", "tag"), 1u) << "g is shared: the update is not batched";
    size_t checked = 0;
    for (unsigned i = 0; i < 4; i++)
        for (unsigned k = 0; k < rowLength[i]; k++, checked++)
            EXPECT_EQ(tags[i * stride + k], i * 100.0 + ind[i * stride + k] + 4000.0 + 60000.0)
                << "row " << i << ", synapse " << k;
    EXPECT_GT(checked, 0u);
    sim.pull("CountPre", "c");
    const auto c = sim.view<double>("CountPre", "c");
    ASSERT_EQ(c.size(), kBatch * 4u);
    for (unsigned b = 0; b < kBatch; b++)
        for (unsigned i = 0; i < 4; i++)
            EXPECT_EQ(c[b * 4 + i], i + 40.0 + b * 0.5) << "batch " << b << ", neuron " << i;
}

TEST_P(CustomUpdateInference, AddCustomUpdateOverSynapseVariablesRunsPerSynapse) {
    Model m("cu_infer_shape");
    m.setBatchSize(kBatch);
    m.setPrecision(Precision::Double);
    m.addNeuronGroup("Pre", 4, holder(), {}, {{"x", 0.0}, {"shared", 0.0}, {"perBatch", 0.0}});
    m.addNeuronGroup("Post", 6, holder(), {}, {{"x", 0.0}, {"shared", 0.0}, {"perBatch", 0.0}});
    WeightUpdateModel w;
    w.name = "Grad";
    w.vars = {{"g", "scalar", VarAccess::ReadOnly}, {"grad", "scalar", VarAccess::ReadWrite}};
    m.addSynapseGroup("Syn", MatrixType::Sparse, 0, "Pre", "Post",
                      {w, {}, {{"g", 0.0}, {"grad", 1.0}}, {}, {}}, {models::DeltaCurr(), {}, {}},
                      init::FixedProbability(0.5));
    CustomUpdateModel red = reducer(A::ReduceSum);
    red.varRefs[0].access = A::ReadWrite;
    red.updateCode = "out = x * (batch + 1);\nx = 0.0;";
    // Not addCustomUpdateWU: the references name synapse variables, so it runs per synapse.
    auto& cu = m.addCustomUpdate("Sum", "Reduce", red, {}, {},
                                 {{"x", {"Syn", "grad"}}, {"out", {"Syn", "g"}}});
    Simulation sim(m, prefs());
    EXPECT_TRUE(cu.isWUShaped());
    EXPECT_EQ(cu.model().varRefs[1].access, A::ReduceBatchSum);
    sim.customUpdate("Reduce");
    const auto g = sim.synapseValues("Syn", "g", 0);
    ASSERT_FALSE(g.empty());
    for (double v : g)
        EXPECT_EQ(v, 6.0); // 1 * (1 + 2 + 3)
    for (unsigned b = 0; b < kBatch; b++)
        for (double v : sim.synapseValues("Syn", "grad", b))
            EXPECT_EQ(v, 0.0);
}

TEST_P(CustomUpdateInference, AmbiguousOrMixedShapesAreRefusedNamingTheReference) {
    Model m("cu_infer_errors");
    m.setBatchSize(kBatch);
    m.addNeuronGroup("Pop", kN, holder(), {}, {{"x", 0.0}, {"shared", 0.0}, {"perBatch", 0.0}});
    m.addCustomUpdate("Every", "A", reducer(A::ReduceSum), {}, {},
                      {{"x", {"Pop", "x"}}, {"out", {"Pop", "x"}}});
    sftest::expectError<ModelError>([&] { m.finalise(); },
                                    {"custom update 'Every'", "reference 'out' (", "ReduceSum",
                                     "has every dimension of the update", "ReduceBatchSum"});
    CustomUpdateModel own = reducer(A::ReadOnly);
    own.vars = {{"acc", "scalar", A::ReduceMax}};
    Model m2("cu_infer_own");
    m2.addNeuronGroup("Pop", kN, holder(), {}, {{"x", 0.0}, {"shared", 0.0}, {"perBatch", 0.0}});
    m2.addCustomUpdate("Own", "A", own, {}, {{"acc", 0.0}},
                       {{"x", {"Pop", "x"}}, {"out", {"Pop", "x"}}});
    sftest::expectError<ModelError>([&] { m2.finalise(); },
                                    {"custom update 'Own'", "variable 'acc'", "for references"});
}

} // namespace

SF_INSTANTIATE_BACKEND_TESTS(CustomUpdateInference);
