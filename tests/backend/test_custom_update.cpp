// Custom updates: batch and neuron reductions against sums and maxima computed in the test on
// random data, write-back of read-write references, WU-shaped updates over Dense and Sparse
// weights, and the validation errors.
#include "backend_fixture.hpp"
#include "codegen/lower.hpp"
#include "spikeforge/models.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <random>
#include <set>

using namespace spikeforge;
using A = CustomUpdateVarAccess;

namespace {

NeuronModel holder() {
    NeuronModel n;
    n.name = "Holder";
    n.vars = {{"x"},
              {"shared", "scalar", VarAccess::ReadOnly},
              {"perBatch", "scalar", VarAccess::ReadOnlySharedNeuron}};
    return n;
}

// Reduces x over the batch into sum/max and zeroes x afterwards when `zero` is set.
CustomUpdateModel batchReduce() {
    CustomUpdateModel m;
    m.name = "BatchReduce";
    m.vars = {{"sum", "scalar", A::ReduceBatchSum}, {"mx", "scalar", A::ReduceBatchMax}};
    m.varRefs = {{"x", "scalar", A::ReadWrite}};
    m.updateCode = "sum = x;\nmx = x;\nx = 0.0;";
    return m;
}

using Shape = std::tuple<unsigned /*batch*/, unsigned /*neurons*/>;
class BatchReductionTest : public ::testing::TestWithParam<std::tuple<std::string, Shape>> {};

TEST_P(BatchReductionTest, NeuronShapedSumAndMaxMatchReference) {
    const auto& [backend, shape] = GetParam();
    const auto& [batch, n] = shape;
    Model m("batch_reduce");
    m.setBatchSize(batch);
    m.addNeuronGroup("Pop", n, holder(), {}, {{"x", 0.0}, {"shared", 0.0}, {"perBatch", 0.0}});
    m.addCustomUpdate("Red", "Reduce", batchReduce(), {}, {{"sum", 0.0}, {"mx", 0.0}},
                      {{"x", {"Pop", "x"}}});
    BackendPreferences prefs;
    prefs.backend = backend;
    Simulation sim(m, prefs);
    const auto values = sftest::randomValues(size_t(batch) * n, batch * 1000 + n);
    sim.pull("Pop", "x");
    std::copy(values.begin(), values.end(), sim.view<float>("Pop", "x").begin());
    sim.push("Pop", "x");
    sim.customUpdate("Reduce");
    sim.pull("Red", "sum");
    sim.pull("Red", "mx");
    sim.pull("Pop", "x");
    ASSERT_EQ(sim.view<float>("Red", "sum").size(), n); // no batch dimension
    for (unsigned i = 0; i < n; i++) {
        double sum = 0.0;
        float mx = -INFINITY;
        for (unsigned b = 0; b < batch; b++) {
            sum += values[size_t(b) * n + i];
            mx = std::max(mx, values[size_t(b) * n + i]);
        }
        // float accumulation of up to 32 values in [-3, 3]: rounding well below 1e-5
        EXPECT_NEAR(sim.view<float>("Red", "sum")[i], sum, 1e-5 * (1.0 + std::abs(sum))) << i;
        EXPECT_EQ(sim.view<float>("Red", "mx")[i], mx) << i;
    }
    for (float x : sim.view<float>("Pop", "x"))
        ASSERT_EQ(x, 0.0f); // written back
}

std::string shapeName(const ::testing::TestParamInfo<BatchReductionTest::ParamType>& info) {
    const auto& [backend, shape] = info.param;
    return backend + "_batch" + std::to_string(std::get<0>(shape)) + "_n" +
           std::to_string(std::get<1>(shape));
}

INSTANTIATE_TEST_SUITE_P(Backends, BatchReductionTest,
                         ::testing::Combine(::testing::ValuesIn(sftest::usableBackends()),
                                            ::testing::Combine(::testing::Values(1u, 2u, 5u, 32u),
                                                               ::testing::Values(1u, 31u, 33u,
                                                                                 1000u))),
                         shapeName);

template <typename F> void expectModelError(F&& f, std::initializer_list<std::string> parts) {
    try {
        f();
        FAIL() << "no exception";
    } catch (const ModelError& e) {
        for (const auto& p : parts)
            EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
    }
}

class CustomUpdateTest : public sftest::BackendTest {};

// Neuron reductions: one value per batch element, summed / maximised over the population.
TEST_P(CustomUpdateTest, NeuronReductionsMatchReference) {
    for (unsigned n : {1u, 31u, 33u, 1000u}) {
        constexpr unsigned kBatch = 3;
        Model m("neuron_reduce");
        m.setBatchSize(kBatch);
        m.addNeuronGroup("Pop", n, holder(), {}, {{"x", 0.0}, {"shared", 0.0}, {"perBatch", 0.0}});
        CustomUpdateModel red;
        red.name = "NeuronReduce";
        red.varRefs = {{"x", "scalar", A::ReadOnly}, {"total", "scalar", A::ReduceNeuronSum}};
        red.vars = {{"peak", "scalar", A::ReduceNeuronMax}};
        red.updateCode = "total = x;\npeak = x;";
        m.addCustomUpdate("Red", "Reduce", red, {}, {{"peak", 0.0}},
                          {{"x", {"Pop", "x"}}, {"total", {"Pop", "perBatch"}}});
        Simulation sim(m, prefs());
        const auto values = sftest::randomValues(size_t(kBatch) * n, n);
        sim.pull("Pop", "x");
        std::copy(values.begin(), values.end(), sim.view<float>("Pop", "x").begin());
        sim.push("Pop", "x");
        sim.customUpdate("Reduce");
        sim.pull("Pop", "perBatch");
        sim.pull("Red", "peak");
        for (unsigned b = 0; b < kBatch; b++) {
            double sum = 0.0;
            float mx = -INFINITY;
            for (unsigned i = 0; i < n; i++) {
                sum += values[size_t(b) * n + i];
                mx = std::max(mx, values[size_t(b) * n + i]);
            }
            // float sum of up to 1000 terms of magnitude ≤ 3: error ≤ ~1000·3·6e-8
            EXPECT_NEAR(sim.view<float>("Pop", "perBatch")[b], sum, 1e-6 * n * 3 + 1e-6)
                << "n " << n << " batch " << b;
            EXPECT_EQ(sim.view<float>("Red", "peak")[b], mx) << "n " << n << " batch " << b;
        }
    }
}

WeightUpdateModel gradientHolder() {
    WeightUpdateModel w;
    w.name = "GradientHolder";
    w.vars = {{"g", "scalar", VarAccess::ReadOnly}, {"grad", "scalar", VarAccess::ReadWrite}};
    return w;
}

// WU-shaped: per-batch gradients summed and maximised over the batch into shared weight-shaped
// variables, for Dense and Sparse weights, B in {1, 2, 5, 32} and 1, 31, 33 and 1000 synapses
// (pre x post = 1x1, 1x31, 33x1, 40x25). The gradients are zeroed in the same update.
// Every matrix type and shape side by side in one model per batch size, each with its own
// groups and reduction (one build serves eight networks; a build is most of a backend test's
// time), each checked on its own.
TEST_P(CustomUpdateTest, WeightShapedBatchSumAndMax) {
    const std::pair<unsigned, unsigned> shapes[] = {{1, 1}, {1, 31}, {33, 1}, {40, 25}};
    struct Case {
        std::string tag;
        MatrixType matrix;
        unsigned pre, post;
    };
    std::vector<Case> cases;
    for (MatrixType matrix : {MatrixType::Dense, MatrixType::Sparse})
        for (const auto& [pre, post] : shapes)
            cases.push_back({std::string(matrix == MatrixType::Dense ? "Dense" : "Sparse") +
                                 std::to_string(pre) + "x" + std::to_string(post),
                             matrix, pre, post});
    CustomUpdateModel red;
    red.name = "ReduceAndZero";
    red.vars = {{"peak", "scalar", A::ReduceBatchMax}};
    red.varRefs = {{"grad", "scalar", A::ReadWrite}, {"g", "scalar", A::ReduceBatchSum}};
    red.updateCode = "g = grad;\npeak = grad;\ngrad = 0.0;";
    for (unsigned batch : {1u, 2u, 5u, 32u}) {
        Model m("wu_reduce");
        m.setBatchSize(batch);
        const VarInitMap none = {{"x", 0.0}, {"shared", 0.0}, {"perBatch", 0.0}};
        for (const Case& c : cases) {
            m.addNeuronGroup("Pre" + c.tag, c.pre, holder(), {}, none);
            m.addNeuronGroup("Post" + c.tag, c.post, holder(), {}, none);
            std::optional<SparseConnectivityInit> conn;
            if (c.matrix == MatrixType::Sparse) conn = init::FixedProbability(0.5);
            m.addSynapseGroup("Syn" + c.tag, c.matrix, 0, "Pre" + c.tag, "Post" + c.tag,
                              {gradientHolder(), {}, {{"g", 0.0}, {"grad", 0.0}}, {}, {}},
                              {models::DeltaCurr(), {}, {}}, conn);
            m.addCustomUpdateWU("Red" + c.tag, "Reduce", red, {}, {{"peak", 0.0}},
                                {{"grad", {"Syn" + c.tag, "grad"}}, {"g", {"Syn" + c.tag, "g"}}});
        }
        Simulation sim(m, prefs());
        std::vector<std::vector<float>> given;
        for (const Case& c : cases) {
            const std::string syn = "Syn" + c.tag;
            const size_t stride = c.matrix == MatrixType::Sparse ? sim.rowStride(syn) : c.post;
            given.push_back(sftest::randomValues(size_t(c.pre) * stride * batch, 99 + batch));
            sim.pull(syn, "grad");
            std::copy(given.back().begin(), given.back().end(),
                      sim.view<float>(syn, "grad").begin());
            sim.push(syn, "grad");
        }
        sim.customUpdate("Reduce");
        for (size_t n = 0; n < cases.size(); n++) {
            const Case& c = cases[n];
            SCOPED_TRACE(c.tag + " batch " + std::to_string(batch));
            const std::string syn = "Syn" + c.tag;
            unsigned stride = c.post;
            std::vector<uint32_t> rowLength(c.pre, c.post);
            if (c.matrix == MatrixType::Sparse) {
                sim.pullConnectivity(syn);
                rowLength = sim.rowLengths(syn);
                stride = sim.rowStride(syn);
            }
            const size_t perBatch = size_t(c.pre) * stride;
            const std::vector<float>& values = given[n];
            for (const char* v : {"g", "grad"})
                sim.pull(syn, v);
            sim.pull("Red" + c.tag, "peak");
            const auto g = sim.view<float>(syn, "g");
            const auto peak = sim.view<float>("Red" + c.tag, "peak");
            const auto grad = sim.view<float>(syn, "grad");
            for (unsigned i = 0; i < c.pre; i++)
                for (unsigned k = 0; k < rowLength[i]; k++) {
                    const size_t at = size_t(i) * stride + k;
                    double sum = 0.0;
                    float mx = -INFINITY;
                    for (unsigned b = 0; b < batch; b++) {
                        sum += values[b * perBatch + at];
                        mx = std::max(mx, values[b * perBatch + at]);
                    }
                    ASSERT_NEAR(g[at], sum, 1e-5 * (1.0 + std::abs(sum))) << at;
                    ASSERT_EQ(peak[at], mx) << at;
                    for (unsigned b = 0; b < batch; b++)
                        ASSERT_EQ(grad[b * perBatch + at], 0.0f);
                }
        }
    }
}

TEST_P(CustomUpdateTest, ExtraGlobalParameterReference) {
    NeuronModel withTable = holder();
    withTable.egps = {{"table", "scalar"}};
    Model m("egp_ref");
    m.addNeuronGroup("Pop", 5, withTable, {}, {{"x", 0.0}, {"shared", 0.0}, {"perBatch", 0.0}});
    CustomUpdateModel lookup;
    lookup.name = "Lookup";
    lookup.varRefs = {{"x", "scalar", A::ReadWrite}};
    lookup.egpRefs = {{"values", "scalar"}};
    lookup.updateCode = "x = values[4 - id];";
    m.addCustomUpdate("L", "Lookup", lookup, {}, {}, {{"x", {"Pop", "x"}}},
                      {{"values", {"Pop", "table"}}});
    Simulation sim(m, prefs());
    sim.setEGP("Pop", "table", std::vector<double>{1, 2, 3, 4, 5});
    sim.customUpdate("Lookup");
    sim.pull("Pop", "x");
    for (unsigned i = 0; i < 5; i++)
        EXPECT_EQ(sim.view<float>("Pop", "x")[i], float(5 - i));

    Model bad("egp_ref_bad");
    bad.addNeuronGroup("Pop", 5, withTable, {}, {{"x", 0.0}, {"shared", 0.0}, {"perBatch", 0.0}});
    bad.addCustomUpdate("L", "Lookup", lookup, {}, {}, {{"x", {"Pop", "x"}}},
                        {{"values", {"Pop", "tabel"}}});
    expectModelError([&] { bad.finalise(); },
                     {"'L'", "'values'", "no extra global parameter 'tabel'"});
}

TEST_P(CustomUpdateTest, ValidationErrors) {
    auto base = [](Model& m) {
        m.setBatchSize(4);
        const VarInitMap none = {{"x", 0.0}, {"shared", 0.0}, {"perBatch", 0.0}};
        m.addNeuronGroup("A", 10, holder(), {}, none);
        m.addNeuronGroup("B", 12, holder(), {}, none);
        for (const char* s : {"S1", "S2"})
            m.addSynapseGroup(s, MatrixType::Dense, 0, "A", "B",
                              {gradientHolder(), {}, {{"g", 0.0}, {"grad", 0.0}}, {}, {}},
                              {models::DeltaCurr(), {}, {}});
    };
    CustomUpdateModel mixed;
    mixed.name = "Mixed";
    mixed.varRefs = {{"x", "scalar", A::ReadOnly}};
    mixed.vars = {{"s", "scalar", A::ReduceBatchSum}, {"n", "scalar", A::ReduceNeuronSum}};
    mixed.updateCode = "s = x;\nn = x;";
    {
        Model m;
        base(m);
        m.addCustomUpdate("Cu", "G", mixed, {}, {{"s", 0.0}, {"n", 0.0}}, {{"x", {"A", "x"}}});
        expectModelError([&] { m.finalise(); }, {"'Cu'", "batch and neuron reductions"});
    }
    CustomUpdateModel two;
    two.name = "Two";
    two.varRefs = {{"a", "scalar", A::ReadOnly}, {"b", "scalar", A::ReadOnly}};
    {
        Model m;
        base(m);
        m.addCustomUpdateWU("Cu", "G", two, {}, {}, {{"a", {"S1", "grad"}}, {"b", {"S2", "grad"}}});
        expectModelError([&] { m.finalise(); }, {"'Cu'", "different synapse groups", "S1", "S2"});
    }
    {
        Model m;
        base(m);
        m.addCustomUpdate("Cu", "G", two, {}, {}, {{"a", {"A", "x"}}, {"b", {"B", "x"}}});
        expectModelError([&] { m.finalise(); }, {"'Cu'", "shape mismatch", "10", "12"});
    }
    CustomUpdateModel intoBatched;
    intoBatched.name = "IntoBatched";
    intoBatched.varRefs = {{"x", "scalar", A::ReadOnly}, {"y", "scalar", A::ReduceBatchSum}};
    intoBatched.updateCode = "y = x;";
    {
        Model m;
        base(m);
        m.addCustomUpdate("Cu", "G", intoBatched, {}, {}, {{"x", {"A", "x"}}, {"y", {"A", "x"}}});
        expectModelError([&] { m.finalise(); }, {"'Cu'", "'y'", "batch dimension"});
    }
    CustomUpdateModel writeShared;
    writeShared.name = "WriteShared";
    writeShared.varRefs = {{"x", "scalar", A::ReadOnly}, {"w", "scalar", A::ReadWrite}};
    writeShared.updateCode = "w = x;";
    {
        Model m;
        base(m);
        m.addCustomUpdate("Cu", "G", writeShared, {}, {},
                          {{"x", {"A", "x"}}, {"w", {"A", "shared"}}});
        expectModelError([&] { m.finalise(); }, {"'Cu'", "'w'", "shared by the batch"});
    }
    CustomUpdateModel writeRO;
    writeRO.name = "WriteRO";
    writeRO.varRefs = {{"x", "scalar", A::ReadOnly}};
    writeRO.updateCode = "x = 1.0;";
    {
        Model m;
        base(m);
        m.addCustomUpdate("Cu", "G", writeRO, {}, {}, {{"x", {"A", "x"}}});
        expectModelError([&] { m.finalise(); }, {"Cu.updateCode", "x"});
    }
    {
        Model m;
        base(m);
        m.addCustomUpdate("Cu", "G", writeRO, {}, {}, {{"x", {"A", "nope"}}});
        expectModelError([&] { m.finalise(); }, {"'Cu'", "'x'", "no variable 'nope'"});
    }
    {
        Model m;
        base(m);
        writeRO.updateCode = "";
        m.addCustomUpdate("Cu", "Grad", writeRO, {}, {}, {{"x", {"A", "x"}}});
        Simulation sim(m, prefs());
        expectModelError([&] { sim.customUpdate("Gard"); }, {"'Gard'", "did you mean 'Grad'"});
    }
}

// Element-wise updates of one group share one pass; a later one sees what an earlier one wrote
// to the same element, exactly as if they ran one after the other.
TEST_P(CustomUpdateTest, CompatibleUpdatesRunFused) {
    Model m("fused");
    m.setBatchSize(3);
    m.addNeuronGroup("Pop", 50, holder(), {}, {{"x", 0.0}, {"shared", 0.0}, {"perBatch", 0.0}});
    CustomUpdateModel twice;
    twice.name = "Twice";
    twice.vars = {{"y", "scalar", A::ReadWrite}};
    twice.varRefs = {{"x", "scalar", A::ReadOnly}};
    twice.updateCode = "y = 2.0 * x;";
    CustomUpdateModel plusOne;
    plusOne.name = "PlusOne";
    plusOne.varRefs = {{"y", "scalar", A::ReadOnly}, {"x", "scalar", A::ReadWrite}};
    plusOne.updateCode = "x = y + 1.0;";
    m.addCustomUpdate("First", "Step", twice, {}, {{"y", 0.0}}, {{"x", {"Pop", "x"}}});
    m.addCustomUpdate("Second", "Step", plusOne, {}, {},
                      {{"y", {"First", "y"}}, {"x", {"Pop", "x"}}});
    Simulation sim(m, prefs());
    const auto values = sftest::randomValues(150, 4);
    sim.pull("Pop", "x");
    std::copy(values.begin(), values.end(), sim.view<float>("Pop", "x").begin());
    sim.push("Pop", "x");
    sim.customUpdate("Step");
    sim.pull("Pop", "x");
    for (size_t i = 0; i < values.size(); i++)
        EXPECT_FLOAT_EQ(sim.view<float>("Pop", "x")[i], 2.0f * values[i] + 1.0f) << i;
    // One pass: the update group's kernel runs one merged group whose struct carries both
    // updates' fields.
    const auto plan = codegen::lowerModel(m);
    const auto kernel = std::find_if(plan.kernels.begin(), plan.kernels.end(),
                                     [](const auto& k) { return k.updateGroup == "Step"; });
    ASSERT_NE(kernel, plan.kernels.end());
    ASSERT_EQ(kernel->tables.size(), 1u);
    std::set<std::string> fields;
    for (const auto& f : plan.mergedGroups.at(kernel->tables[0]).fields)
        fields.insert(f.name);
    EXPECT_TRUE(fields.count("c0_r_y"));
    EXPECT_TRUE(fields.count("c1_r_x"));
}

// A batched and a non-batched element-wise update of one group are never fused: the fused loop
// would run the non-batched body once per batch element (here adding 3 instead of 1).
TEST_P(CustomUpdateTest, BatchedAndUnbatchedUpdatesAreNotFused) {
    Model m("unfused");
    m.setBatchSize(3);
    m.addNeuronGroup("Pop", 50, holder(), {}, {{"x", 0.0}, {"shared", 0.0}, {"perBatch", 0.0}});
    CustomUpdateModel increment;
    increment.name = "Increment";
    increment.varRefs = {{"x", "scalar", A::ReadWrite}};
    increment.updateCode = "x += 1.0;";
    CustomUpdateModel count;
    count.name = "Count";
    count.vars = {{"c", "scalar", A::ReadWrite}};
    count.varRefs = {{"s", "scalar", A::ReadOnly}};
    count.updateCode = "c += s + 1.0;";
    m.addCustomUpdate("Batched", "Step", increment, {}, {}, {{"x", {"Pop", "x"}}});
    m.addCustomUpdate("Unbatched", "Step", count, {}, {{"c", 0.0}}, {{"s", {"Pop", "shared"}}});
    Simulation sim(m, prefs());
    ASSERT_TRUE(m.customUpdates()[0]->isBatched());
    ASSERT_FALSE(m.customUpdates()[1]->isBatched());
    sim.customUpdate("Step");
    sim.pull("Pop", "x");
    sim.pull("Unbatched", "c");
    const auto x = sim.view<float>("Pop", "x");
    const auto c = sim.view<float>("Unbatched", "c");
    ASSERT_EQ(x.size(), 150u);
    ASSERT_EQ(c.size(), 50u);
    for (size_t i = 0; i < x.size(); i++)
        EXPECT_EQ(x[i], 1.0f) << i;
    for (size_t i = 0; i < c.size(); i++)
        EXPECT_EQ(c[i], 1.0f) << i;
    const auto plan = codegen::lowerModel(m);
    const auto kernel = std::find_if(plan.kernels.begin(), plan.kernels.end(),
                                     [](const auto& k) { return k.updateGroup == "Step"; });
    ASSERT_NE(kernel, plan.kernels.end());
    EXPECT_EQ(kernel->tables.size(), 2u);
}

// References reach postsynaptic-model and current-source variables too (neuron-shaped, sized by
// the target group), and pre/post variables of weight update models.
TEST_P(CustomUpdateTest, ReferencesToPostsynapticAndCurrentSourceVariables) {
    PostsynapticModel psWithVar;
    psWithVar.name = "PsWithVar";
    psWithVar.vars = {{"trace"}};
    psWithVar.simCode = "injectCurrent(inSyn); inSyn = 0.0;";
    CurrentSourceModel csWithVar;
    csWithVar.name = "CsWithVar";
    csWithVar.vars = {{"level"}};
    csWithVar.injectionCode = "injectCurrent(level);";
    Model m("ref_kinds");
    const VarInitMap none = {{"x", 0.0}, {"shared", 0.0}, {"perBatch", 0.0}};
    m.addNeuronGroup("Pre", 4, holder(), {}, none);
    m.addNeuronGroup("Post", 6, holder(), {}, none);
    m.addSynapseGroup("Syn", MatrixType::Dense, 0, "Pre", "Post",
                      {models::StaticPulse(), {}, {{"g", 1.0}}, {}, {}},
                      {psWithVar, {}, {{"trace", init::Uniform(0.0, 1.0)}}});
    m.addCurrentSource("Drive", csWithVar, "Post", {}, {{"level", init::Uniform(0.0, 1.0)}});
    CustomUpdateModel add;
    add.name = "Add";
    add.varRefs = {{"trace", "scalar", A::ReadOnly}, {"level", "scalar", A::ReadWrite}};
    add.updateCode = "level += trace;";
    m.addCustomUpdate("Sum", "Sum", add, {}, {},
                      {{"trace", {"Syn", "trace"}}, {"level", {"Drive", "level"}}});
    Simulation sim(m, prefs());
    sim.pull("Syn", "trace");
    sim.pull("Drive", "level");
    const std::vector<float> trace(sim.view<float>("Syn", "trace").begin(),
                                   sim.view<float>("Syn", "trace").end());
    const std::vector<float> level(sim.view<float>("Drive", "level").begin(),
                                   sim.view<float>("Drive", "level").end());
    ASSERT_EQ(trace.size(), 6u);
    sim.customUpdate("Sum");
    sim.pull("Drive", "level");
    for (unsigned i = 0; i < 6; i++)
        EXPECT_FLOAT_EQ(sim.view<float>("Drive", "level")[i], level[i] + trace[i]) << i;
}

SF_INSTANTIATE_BACKEND_TESTS(CustomUpdateTest);

} // namespace
