// The SIMT custom-update and initialisation kernels against references computed here, on every
// usable backend (the cpu backend's printers are the reference semantics): batch reductions in
// both SIMT strategies with edge shapes (N = 100, no multiple of a work-group; N just above the
// rule's element threshold; batch 1, 2, 33, 512), neuron reductions, batched transposes across
// partial tiles, and initialisation giving the same connectivity and values on cpu and opencl.
#include "backend_fixture.hpp"
#include "backends/simt/simt_reduce.hpp"
#include "spikeforge/models.hpp"
#include "support/reduction_models.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <tuple>

using namespace spikeforge;
using A = CustomUpdateVarAccess;

namespace {

// Runs `kind` reductions of x (batch x n, random) and returns the simulation for inspection.
struct Reduced {
    std::vector<float> values, sum, mx, x;
};
Reduced runReduction(const std::string& backend, unsigned batch, unsigned n, bool neuron) {
    Model m("simt_reduce");
    m.setBatchSize(batch);
    m.addNeuronGroup("Pop", n, sftest::holder(), {}, {{"x", 0.0}});
    m.addCustomUpdate("Red", "Reduce",
                      neuron
                          ? sftest::reduce(A::ReduceNeuronSum, A::ReduceNeuronMax, "x = 2.0 * x;")
                          : sftest::reduce(A::ReduceBatchSum, A::ReduceBatchMax, "x = 2.0 * x;"),
                      {}, {{"sum", 0.0}, {"mx", 0.0}}, {{"x", {"Pop", "x"}}});
    BackendPreferences prefs;
    prefs.backend = backend;
    Simulation sim(m, prefs);
    Reduced r;
    r.values = sftest::randomValues(size_t(batch) * n, batch * 7919 + n);
    sim.pull("Pop", "x");
    std::copy(r.values.begin(), r.values.end(), sim.view<float>("Pop", "x").begin());
    sim.push("Pop", "x");
    sim.customUpdate("Reduce");
    for (const char* v : {"sum", "mx"})
        sim.pull("Red", v);
    sim.pull("Pop", "x");
    auto copy = [&](const char* g, const char* v) {
        const auto s = sim.view<float>(g, v);
        return std::vector<float>(s.begin(), s.end());
    };
    r.sum = copy("Red", "sum");
    r.mx = copy("Red", "mx");
    r.x = copy("Pop", "x");
    return r;
}

// Sums of k values in [-3, 3] in float, in any order: each partial sum rounds by at most
// 2^-24 of its magnitude (< 3k), so |error| < k * 3k * 2^-24; k <= 512 gives < 0.05, and the
// bound below is that, computed per sum.
double sumTolerance(unsigned k) {
    return 3.0 * k * k * std::ldexp(1.0, -24) + 1e-6;
}

using Shape = std::tuple<unsigned /*batch*/, unsigned /*n*/>;
class SimtBatchReduction : public ::testing::TestWithParam<std::tuple<std::string, Shape>> {};

TEST_P(SimtBatchReduction, SumAndMaxMatchReference) {
    const auto& [backend, shape] = GetParam();
    const auto& [batch, n] = shape;
    const Reduced r = runReduction(backend, batch, n, false);
    ASSERT_EQ(r.sum.size(), n);
    for (unsigned i = 0; i < n; i++) {
        double sum = 0.0;
        float mx = -INFINITY;
        for (unsigned b = 0; b < batch; b++) {
            sum += r.values[size_t(b) * n + i];
            mx = std::max(mx, r.values[size_t(b) * n + i]);
        }
        ASSERT_NEAR(r.sum[i], sum, sumTolerance(batch)) << i;
        ASSERT_EQ(r.mx[i], mx) << i;
    }
    for (size_t k = 0; k < r.x.size(); k++)
        ASSERT_EQ(r.x[k], 2.0f * r.values[k]) << k; // every (element, batch) ran exactly once
}

std::string shapeName(const ::testing::TestParamInfo<SimtBatchReduction::ParamType>& info) {
    const auto& [backend, shape] = info.param;
    return backend + "_batch" + std::to_string(std::get<0>(shape)) + "_n" +
           std::to_string(std::get<1>(shape));
}

// N = 100: a work-group per element from batch 32 on (for a work-group of 64); N just above
// the rule's threshold: a work-item per element at every batch size.
constexpr unsigned kManyElements = simt::kFewElements + 37;
INSTANTIATE_TEST_SUITE_P(
    Backends, SimtBatchReduction,
    ::testing::Combine(::testing::ValuesIn(sftest::usableBackends()),
                       ::testing::Values(Shape{1, 100}, Shape{2, 100}, Shape{33, 100},
                                         Shape{512, 100}, Shape{2, kManyElements},
                                         Shape{33, kManyElements}, Shape{512, kManyElements})),
    shapeName);

class SimtNeuronReduction : public ::testing::TestWithParam<std::tuple<std::string, Shape>> {};

TEST_P(SimtNeuronReduction, SumAndMaxMatchReference) {
    const auto& [backend, shape] = GetParam();
    const auto& [batch, n] = shape;
    const Reduced r = runReduction(backend, batch, n, true);
    ASSERT_EQ(r.sum.size(), batch);
    for (unsigned b = 0; b < batch; b++) {
        double sum = 0.0;
        float mx = -INFINITY;
        for (unsigned i = 0; i < n; i++) {
            sum += r.values[size_t(b) * n + i];
            mx = std::max(mx, r.values[size_t(b) * n + i]);
        }
        ASSERT_NEAR(r.sum[b], sum, sumTolerance(n)) << b;
        ASSERT_EQ(r.mx[b], mx) << b;
    }
}

INSTANTIATE_TEST_SUITE_P(Backends, SimtNeuronReduction,
                         ::testing::Combine(::testing::ValuesIn(sftest::usableBackends()),
                                            ::testing::Values(Shape{1, 1}, Shape{2, 100},
                                                              Shape{33, 63}, Shape{3, 1000})),
                         [](const auto& info) {
                             return std::get<0>(info.param) + "_batch" +
                                    std::to_string(std::get<0>(std::get<1>(info.param))) + "_n" +
                                    std::to_string(std::get<1>(std::get<1>(info.param)));
                         });

class SimtCustomInit : public sftest::BackendTest {};

WeightUpdateModel batchedWeights() {
    WeightUpdateModel w;
    w.name = "Weights";
    w.vars = {{"g", "scalar", VarAccess::ReadWrite}}; // one copy per batch element
    return w;
}

// A batched transpose over 37 x 70 (partial tiles along both edges): Back[b][j][i] receives
// the updated Fwd[b][i][j].
TEST_P(SimtCustomInit, BatchedTransposeAcrossPartialTiles) {
    constexpr unsigned kA = 37, kB = 70, kBatch = 3;
    Model m("simt_transpose");
    m.setBatchSize(kBatch);
    m.addNeuronGroup("A", kA, sftest::holder(), {}, {{"x", 0.0}});
    m.addNeuronGroup("B", kB, sftest::holder(), {}, {{"x", 0.0}});
    for (auto [name, src, tgt] : {std::tuple{"Fwd", "A", "B"}, std::tuple{"Back", "B", "A"}})
        m.addSynapseGroup(name, MatrixType::Dense, 0, src, tgt,
                          {batchedWeights(), {}, {{"g", 0.0}}, {}, {}},
                          {models::DeltaCurr(), {}, {}});
    CustomUpdateModel scale;
    scale.name = "ScaleTranspose";
    scale.varRefs = {{"variable", "scalar", A::ReadWrite}};
    scale.updateCode = "variable = 2.0 * variable + 1.0;";
    m.addCustomUpdateWU("T", "Transpose", scale, {}, {}, {{"variable", {"Fwd", "g", "Back", "g"}}});
    Simulation sim(m, prefs());
    const auto values = sftest::randomValues(size_t(kBatch) * kA * kB, 17);
    sim.pull("Fwd", "g");
    std::copy(values.begin(), values.end(), sim.view<float>("Fwd", "g").begin());
    sim.push("Fwd", "g");
    sim.customUpdate("Transpose");
    sim.pull("Fwd", "g");
    sim.pull("Back", "g");
    const auto fwd = sim.view<float>("Fwd", "g");
    const auto back = sim.view<float>("Back", "g");
    for (unsigned b = 0; b < kBatch; b++)
        for (unsigned i = 0; i < kA; i++)
            for (unsigned j = 0; j < kB; j++) {
                const size_t f = (size_t(b) * kA + i) * kB + j;
                ASSERT_EQ(fwd[f], 2.0f * values[f] + 1.0f) << b << "," << i << "," << j;
                ASSERT_EQ(back[(size_t(b) * kB + j) * kA + i], fwd[f]) << b << "," << i << "," << j;
            }
}

// The column index of a sparse STDP group (built on the device by a counting sort) against
// one computed here from the rows the backend built: colStart[j] = synapses of columns < j, and
// each column's synapse ids (row * stride + k) ascending.
TEST_P(SimtCustomInit, ColumnIndexIsTheCountingSortOfTheRows) {
    constexpr unsigned kPre = 3000, kPost = 1300;
    Model m("simt_colind");
    m.setSeed(99);
    m.addNeuronGroup("A", kPre, sftest::holder(), {}, {{"x", 0.0}});
    m.addNeuronGroup("B", kPost, sftest::holder(), {}, {{"x", 0.0}});
    WeightUpdateModel stdp = batchedWeights();
    stdp.postSpikeSynCode = "g += 0.01;";
    m.addSynapseGroup("S", MatrixType::Sparse, 0, "A", "B", {stdp, {}, {{"g", 0.0}}, {}, {}},
                      {models::DeltaCurr(), {}, {}}, init::FixedProbability(0.1));
    Simulation sim(m, prefs());
    sim.pullConnectivity("S");
    const auto rl = sim.rowLengths("S"), ind = sim.columnIndices("S");
    const unsigned stride = sim.rowStride("S");
    std::vector<uint32_t> start(kPost + 1, 0), syn;
    for (unsigned i = 0; i < kPre; i++)
        for (unsigned k = 0; k < rl[i]; k++)
            start[ind[size_t(i) * stride + k] + 1]++;
    for (unsigned j = 0; j < kPost; j++)
        start[j + 1] += start[j];
    syn.resize(start[kPost]);
    std::vector<uint32_t> cursor(start.begin(), start.end() - 1);
    for (unsigned i = 0; i < kPre; i++)
        for (unsigned k = 0; k < rl[i]; k++)
            syn[cursor[ind[size_t(i) * stride + k]]++] = i * stride + k;
    // p = 0.1 of 3.9 million pairs: enough work-groups that the fill's atomics interleave
    // (PoCL included), so an unsorted column would show.
    ASSERT_GT(syn.size(), 300000u);
    sim.pull("S", "colStart");
    sim.pull("S", "colSyn");
    const auto cs = sim.view<uint32_t>("S", "colStart");
    const auto cy = sim.view<uint32_t>("S", "colSyn");
    ASSERT_EQ(std::vector<uint32_t>(cs.begin(), cs.end()), start);
    ASSERT_EQ(std::vector<uint32_t>(cy.begin(), cy.begin() + syn.size()), syn);
}

// Double precision: the trees' 8-byte slots hold doubles (batch 33 over N = 100 takes a
// work-group per element; the neuron reduction a work-group per batch element).
TEST_P(SimtCustomInit, DoublePrecisionReductions) {
    constexpr unsigned kBatch = 33, kN = 100;
    Model m("simt_double");
    m.setPrecision(Precision::Double);
    m.setBatchSize(kBatch);
    m.addNeuronGroup("Pop", kN, sftest::holder(), {}, {{"x", 0.0}});
    m.addCustomUpdate("BR", "Reduce",
                      sftest::reduce(A::ReduceBatchSum, A::ReduceBatchMax, "x = 2.0 * x;"), {},
                      {{"sum", 0.0}, {"mx", 0.0}}, {{"x", {"Pop", "x"}}});
    CustomUpdateModel total;
    total.name = "Total";
    total.vars = {{"sum", "scalar", A::ReduceNeuronSum}};
    total.varRefs = {{"x", "scalar", A::ReadOnly}};
    total.updateCode = "sum = x;";
    m.addCustomUpdate("NR", "Total", total, {}, {{"sum", 0.0}}, {{"x", {"Pop", "x"}}});
    Simulation sim(m, prefs());
    const auto values = sftest::randomValues(size_t(kBatch) * kN, 5);
    sim.pull("Pop", "x");
    std::copy(values.begin(), values.end(), sim.view<double>("Pop", "x").begin());
    sim.push("Pop", "x");
    sim.customUpdate("Total"); // before "Reduce" doubles x
    sim.customUpdate("Reduce");
    sim.pull("BR", "sum");
    sim.pull("BR", "mx");
    sim.pull("NR", "sum");
    // Sums of at most 100 doubles of magnitude <= 3: rounding below 1e-12.
    for (unsigned i = 0; i < kN; i++) {
        double sum = 0.0, mx = -INFINITY;
        for (unsigned b = 0; b < kBatch; b++) {
            sum += values[size_t(b) * kN + i];
            mx = std::max(mx, double(values[size_t(b) * kN + i]));
        }
        ASSERT_NEAR(sim.view<double>("BR", "sum")[i], sum, 1e-12) << i;
        ASSERT_EQ(sim.view<double>("BR", "mx")[i], mx) << i;
    }
    for (unsigned b = 0; b < kBatch; b++) {
        double sum = 0.0;
        for (unsigned i = 0; i < kN; i++)
            sum += values[size_t(b) * kN + i];
        ASSERT_NEAR(sim.view<double>("NR", "sum")[b], sum, 1e-12) << b;
    }
}

SF_INSTANTIATE_BACKEND_TESTS(SimtCustomInit);

// ---- initialisation: the same on cpu and opencl ------------------------------------------------

struct InitState {
    std::vector<uint32_t> rowLengths, ind;
    std::vector<float> g, a, b;
};

// A sparse group with a column index (STDP), fixed-probability and fixed-total (row lengths drawn
// once, before the rows) connectivity, uniform and normal values, batched and not.
InitState initialState(const std::string& backend) {
    Model m("simt_init");
    m.setBatchSize(2);
    m.setSeed(1234);
    NeuronModel n = sftest::holder();
    m.addNeuronGroup("A", 300, n, {}, {{"x", init::Uniform(-1.0, 1.0)}});
    m.addNeuronGroup("B", 130, n, {}, {{"x", init::Normal(0.0, 2.0)}});
    WeightUpdateModel stdp = batchedWeights();
    stdp.postSpikeSynCode = "g += 0.01;";
    m.addSynapseGroup("S", MatrixType::Sparse, 0, "A", "B",
                      {stdp, {}, {{"g", init::Uniform(-1.0, 1.0)}}, {}, {}},
                      {models::DeltaCurr(), {}, {}}, init::FixedProbability(0.1));
    m.addSynapseGroup("R", MatrixType::Sparse, 0, "B", "A",
                      {batchedWeights(), {}, {{"g", init::Normal(0.5, 0.1)}}, {}, {}},
                      {models::DeltaCurr(), {}, {}}, init::FixedNumberTotalWithReplacement(1000));
    BackendPreferences prefs;
    prefs.backend = backend;
    Simulation sim(m, prefs);
    InitState s;
    for (const char* sg : {"S", "R"}) {
        sim.pullConnectivity(sg);
        const auto rl = sim.rowLengths(sg), ind = sim.columnIndices(sg);
        s.rowLengths.insert(s.rowLengths.end(), rl.begin(), rl.end());
        // Padding slots are unspecified: only the first rowLength entries of a row count.
        const unsigned stride = sim.rowStride(sg);
        for (size_t r = 0; r < rl.size(); r++)
            s.ind.insert(s.ind.end(), ind.begin() + r * stride, ind.begin() + r * stride + rl[r]);
        sim.pull(sg, "g");
        const auto g = sim.view<float>(sg, "g");
        for (unsigned bt = 0; bt < 2; bt++)
            for (size_t r = 0; r < rl.size(); r++)
                for (unsigned k = 0; k < rl[r]; k++)
                    s.g.push_back(g[(bt * rl.size() + r) * stride + k]);
    }
    sim.pull("A", "x");
    sim.pull("B", "x");
    s.a.assign(sim.view<float>("A", "x").begin(), sim.view<float>("A", "x").end());
    s.b.assign(sim.view<float>("B", "x").begin(), sim.view<float>("B", "x").end());
    return s;
}

bool usable(const std::string& backend) {
    const auto u = sftest::usableBackends();
    return std::find(u.begin(), u.end(), backend) != u.end();
}

TEST(SimtInitAcrossBackends, SameSeedSameConnectivityAndValues) {
    if (!usable("opencl")) GTEST_SKIP() << "the opencl backend is not usable on this machine";
    const InitState cpu = initialState("cpu"), ocl = initialState("opencl");
    ASSERT_EQ(cpu.rowLengths, ocl.rowLengths);
    ASSERT_EQ(cpu.ind, ocl.ind);
    EXPECT_EQ(cpu.a, ocl.a); // uniform: bit-identical
    ASSERT_EQ(cpu.b.size(), ocl.b.size());
    ASSERT_EQ(cpu.g.size(), ocl.g.size());
    // Normal draws go through log and cos, whose last bits may differ between the C library
    // and OpenCL: a relative 1e-5 (a few float ulp after the scale) allowed.
    for (size_t i = 0; i < cpu.b.size(); i++)
        EXPECT_NEAR(cpu.b[i], ocl.b[i], 1e-5 * (1.0 + std::abs(cpu.b[i]))) << i;
    for (size_t i = 0; i < cpu.g.size(); i++)
        EXPECT_NEAR(cpu.g[i], ocl.g[i], 1e-5 * (1.0 + std::abs(cpu.g[i]))) << i;
}

} // namespace
