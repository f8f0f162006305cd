// Synapses of any matrix type through the host codec (Simulation::synapses, synapseValues,
// setSynapseValues, synapseMatrix, setSynapseMatrix, connectivityMatrix): round trips for Dense
// and Sparse at sizes that are not multiples of any vector or work-group width, batch 1 and 3,
// on every backend; the Sparse decoding checked against the raw row arrays.
#include "backend_fixture.hpp"

#include "spikeforge/models.hpp"

#include <algorithm>
#include <numeric>
#include <random>
#include <tuple>
#include <vector>

namespace {

using namespace spikeforge;
using sftest::expectError;

struct Shape {
    unsigned pre, post;
};

// Src (pre neurons) -> Tgt (post) with a plain weight g and an integer counter n.
WeightUpdateModel weightAndCounter() {
    WeightUpdateModel m;
    m.name = "WeightAndCounter";
    m.vars = {{"g"}, {"n", "int32_t"}};
    m.preSpikeSynCode = "addToPost(g);";
    return m;
}

void twoGroups(Model& m, Shape s, unsigned batch, MatrixType type,
               std::optional<SparseConnectivityInit> conn = {}) {
    m.setBatchSize(batch);
    m.setPrecision(Precision::Double);
    const ParamValues lif = {{"C", 1.0},        {"TauM", 20.0},     {"Vrest", -70.0},
                             {"Vreset", -70.0}, {"Vthresh", -50.0}, {"Ioffset", 0.0},
                             {"TauRefrac", 2.0}};
    m.addNeuronGroup("Src", s.pre, models::LIF(), lif, {{"V", -70.0}, {"RefracTime", 0.0}});
    m.addNeuronGroup("Tgt", s.post, models::LIF(), lif, {{"V", -70.0}, {"RefracTime", 0.0}});
    m.addSynapseGroup("Syn", type, 0, "Src", "Tgt",
                      {weightAndCounter(), {}, {{"g", 0.0}, {"n", 0.0}}, {}, {}},
                      {models::DeltaCurr(), {}, {}}, std::move(conn));
}

std::vector<double> distinctValues(size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> d(-100000, 100000);
    std::vector<double> v(n);
    for (size_t i = 0; i < n; i++)
        v[i] = d(rng) / 64.0 + double(i) * 1e-3; // exact in double
    return v;
}

class SynapseCodecTest : public ::testing::TestWithParam<std::tuple<std::string, unsigned>> {
protected:
    BackendPreferences prefs() const { return sftest::preferencesFor(std::get<0>(GetParam())); }
    unsigned batch() const { return std::get<1>(GetParam()); }
};

TEST_P(SynapseCodecTest, DenseListsEveryPairRowByRowAndRoundTrips) {
    for (const Shape s : {Shape{5, 7}, Shape{33, 65}}) {
        Model m("dense_codec");
        twoGroups(m, s, batch(), MatrixType::Dense);
        Simulation sim(m, prefs());
        const std::vector<SynapsePair> syn = sim.synapses("Syn");
        ASSERT_EQ(syn.size(), size_t(s.pre) * s.post);
        for (size_t i = 0; i < syn.size(); i++)
            ASSERT_EQ(syn[i], (SynapsePair{uint32_t(i / s.post), uint32_t(i % s.post)})) << i;
        EXPECT_EQ(sim.connectivityMatrix("Syn"), std::vector<uint32_t>(syn.size(), 1u));
        EXPECT_EQ(sim.synapseCount("Syn"), syn.size());
        // list -> layout -> list, and the same values as a matrix, for each batch element
        std::vector<std::vector<double>> set;
        for (unsigned b = 0; b < batch(); b++) {
            set.push_back(distinctValues(syn.size(), 11 + b));
            sim.setSynapseValues("Syn", "g", set.back(), b);
        }
        for (unsigned b = 0; b < batch(); b++) {
            EXPECT_EQ(sim.synapseValues("Syn", "g", b), set[b]) << "batch " << b;
            EXPECT_EQ(sim.synapseMatrix("Syn", "g", b), set[b]) << "batch " << b;
        }
        // dense -> layout -> dense
        const std::vector<double> matrix = distinctValues(syn.size(), 99);
        sim.setSynapseMatrix("Syn", "g", matrix, batch() - 1);
        EXPECT_EQ(sim.synapseMatrix("Syn", "g", batch() - 1), matrix);
        if (batch() > 1) {
            EXPECT_EQ(sim.synapseValues("Syn", "g", 0), set[0]) << "others kept";
        }
    }
}

TEST_P(SynapseCodecTest, SparseDecodesItsRowsAndRoundTrips) {
    for (const Shape s : {Shape{37, 53}, Shape{9, 130}}) {
        Model m("sparse_codec");
        twoGroups(m, s, batch(), MatrixType::Sparse, init::FixedProbability(0.3));
        Simulation sim(m, prefs());
        // The reference: the raw storage, decoded here.
        sim.pullConnectivity("Syn");
        const auto lengths = sim.rowLengths("Syn");
        const auto columns = sim.columnIndices("Syn");
        const unsigned stride = sim.rowStride("Syn");
        std::vector<SynapsePair> expected;
        std::vector<uint32_t> mask(size_t(s.pre) * s.post, 0);
        for (uint32_t i = 0; i < s.pre; i++)
            for (uint32_t k = 0; k < lengths[i]; k++) {
                expected.push_back({i, columns[size_t(i) * stride + k]});
                mask[size_t(i) * s.post + expected.back().post]++;
            }
        ASSERT_GT(expected.size(), 20u);
        ASSERT_LT(expected.size(), size_t(s.pre) * s.post);
        EXPECT_EQ(sim.synapses("Syn"), expected);
        EXPECT_EQ(sim.synapseCount("Syn"), expected.size());
        EXPECT_EQ(sim.connectivityMatrix("Syn"), mask);

        const std::vector<double> values = distinctValues(expected.size(), 5);
        sim.setSynapseValues("Syn", "g", values, batch() - 1);
        EXPECT_EQ(sim.synapseValues("Syn", "g", batch() - 1), values);
        const std::vector<double> dense = sim.synapseMatrix("Syn", "g", batch() - 1, -1.0);
        for (size_t k = 0; k < expected.size(); k++)
            EXPECT_EQ(dense[size_t(expected[k].pre) * s.post + expected[k].post], values[k]);
        for (size_t p = 0; p < dense.size(); p++)
            if (!mask[p]) {
                EXPECT_EQ(dense[p], -1.0) << "absent pair " << p;
            }
        // dense -> layout -> dense
        std::vector<double> matrix(dense.size(), 0.0);
        const std::vector<double> fresh = distinctValues(dense.size(), 6);
        for (size_t p = 0; p < matrix.size(); p++)
            if (mask[p]) matrix[p] = fresh[p];
        sim.setSynapseMatrix("Syn", "g", matrix, 0);
        EXPECT_EQ(sim.synapseMatrix("Syn", "g", 0), matrix);
        // A value where there is no synapse is refused, naming the pair; nothing changes.
        size_t hole = 0;
        while (mask[hole])
            hole++;
        matrix[hole] = 2.5;
        expectError<ModelError>([&] { sim.setSynapseMatrix("Syn", "g", matrix, 0); },
                                {"'Syn'", "source " + std::to_string(hole / s.post),
                                 "target " + std::to_string(hole % s.post), "no synapse"});
        matrix[hole] = 0.0;
        EXPECT_EQ(sim.synapseMatrix("Syn", "g", 0), matrix);
    }
}

// Drawn with replacement, a row may name one target twice: the matrix counts and sums them.
TEST_P(SynapseCodecTest, RepeatedPairsAreCountedAndSummed) {
    Model m("repeats");
    twoGroups(m, {20, 3}, batch(), MatrixType::Sparse, init::FixedNumberPostWithReplacement(6));
    Simulation sim(m, prefs());
    const std::vector<SynapsePair> syn = sim.synapses("Syn");
    ASSERT_EQ(syn.size(), 20u * 6u);
    std::vector<double> values(syn.size());
    std::vector<double> sums(20 * 3, 0.0);
    std::vector<uint32_t> counts(20 * 3, 0);
    for (size_t k = 0; k < syn.size(); k++) {
        values[k] = double(k + 1);
        sums[syn[k].pre * 3 + syn[k].post] += values[k];
        counts[syn[k].pre * 3 + syn[k].post]++;
    }
    ASSERT_NE(*std::max_element(counts.begin(), counts.end()), 1u) << "the test needs repeats";
    sim.setSynapseValues("Syn", "g", values);
    EXPECT_EQ(sim.connectivityMatrix("Syn"), counts);
    EXPECT_EQ(sim.synapseMatrix("Syn", "g"), sums);
    std::vector<double> matrix(sums.size(), 0.0);
    for (size_t p = 0; p < matrix.size(); p++)
        if (counts[p] > 1) {
            matrix[p] = 1.0;
            expectError<ModelError>([&] { sim.setSynapseMatrix("Syn", "g", matrix); },
                                    {"'Syn'", std::to_string(counts[p]) + " synapses"});
            break;
        }
}

TEST_P(SynapseCodecTest, BadRequestsNameTheGroupAndWhatIsWrong) {
    Model m("codec_errors");
    twoGroups(m, {4, 6}, batch(), MatrixType::Dense);
    Simulation sim(m, prefs());
    expectError<ModelError>([&] { sim.synapses("Syx"); }, {"'Syx'", "'Syn'"});
    expectError<ModelError>([&] { sim.synapseValues("Syn", "V"); },
                            {"'Syn'", "'V'", "weight-update variable", "g, n"});
    expectError<ModelError>([&] { sim.synapseValues("Syn", "g", batch()); },
                            {"'Syn'", "batch element " + std::to_string(batch())});
    expectError<ModelError>([&] { sim.setSynapseValues("Syn", "g", std::vector<double>(23, 0.0)); },
                            {"'Syn'", "'g'", "23 values for 24 synapses"});
    std::vector<double> counts(24, 3.0);
    counts[7] = 2.5;
    expectError<ModelError>([&] { sim.setSynapseValues("Syn", "n", counts); },
                            {"'Syn'", "'n'", "synapse 7", "int32_t"});
    counts[7] = 4.0;
    sim.setSynapseValues("Syn", "n", counts);
    EXPECT_EQ(sim.synapseValues("Syn", "n"), counts);
    expectError<ModelError>([&] { sim.setSynapseMatrix("Syn", "g", std::vector<double>(5)); },
                            {"'Syn'", "4 x 6", "got 5"});
}

// Spikes once, in step 0.
NeuronModel once() {
    NeuronModel m;
    m.name = "Once";
    m.vars = {{"n", "uint32_t"}};
    m.simCode = "n += 1u;";
    m.thresholdConditionCode = "n == 1u";
    return m;
}

// Sums its input into x; spikes once, in step 3, if the sum is positive by then.
NeuronModel sumAndJudge() {
    NeuronModel m;
    m.name = "SumAndJudge";
    m.vars = {{"x"}, {"n", "uint32_t"}};
    m.simCode = "x += Isyn;\nn += 1u;";
    m.thresholdConditionCode = "n == 4u && x > 0.0";
    return m;
}

// Adds g to its target's input at the source's spike; counts its target's spikes in n.
WeightUpdateModel deliverAndCount() {
    WeightUpdateModel m;
    m.name = "DeliverAndCount";
    m.vars = {{"g"}, {"n", "int32_t"}};
    m.preSpikeSynCode = "addToPost(g);";
    m.postSpikeSynCode = "n += 1;";
    return m;
}

// The host gives the synapses in shuffled order with their weights: storage, the
// (pre, post) list, propagation (each target sums exactly its synapses' weights) and the
// column index of postsynaptic learning (exactly the synapses onto targets that spiked count
// one) all follow it, in every batch element.
TEST_P(SynapseCodecTest, HostGivenSynapsesAreStoredPropagatedAndLearnedOn) {
    const unsigned numPre = 13, numPost = 29;
    Model m("host_given");
    m.setBatchSize(batch());
    m.setPrecision(Precision::Double);
    m.addNeuronGroup("Src", numPre, once(), {}, {{"n", 0.0}});
    m.addNeuronGroup("Tgt", numPost, sumAndJudge(), {}, {{"x", 0.0}, {"n", 0.0}});
    auto& sg =
        m.addSynapseGroup("Syn", MatrixType::Sparse, 0, "Src", "Tgt",
                          {deliverAndCount(), {}, {{"g", 0.0}, {"n", 0.0}}, {}, {}},
                          {models::DeltaCurr(), {}, {}}, init::FixedNumberTotalWithReplacement(0));
    sg.setMaxConnections(5);
    Simulation sim(m, prefs());
    std::mt19937 rng(3);
    std::vector<SynapsePair> list;
    for (uint32_t i = 0; i < numPre; i++)
        for (uint32_t k = 0; k < i % 6; k++) // rows of 0 to 5, repeats allowed
            list.push_back({i, uint32_t(rng() % numPost)});
    std::shuffle(list.begin(), list.end(), rng);
    std::vector<double> g(list.size());
    for (size_t k = 0; k < g.size(); k++)
        g[k] = double(int(rng() % 9) - 3); // whole numbers: exact sums
    sim.setSynapses("Syn", list, {{"g", g}});

    std::vector<size_t> order(list.size()); // the list sorted by source, stably
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return list[a].pre < list[b].pre; });
    std::vector<SynapsePair> sorted;
    std::vector<double> sortedG, sum(numPost, 0.0);
    for (size_t k : order) {
        sorted.push_back(list[k]);
        sortedG.push_back(g[k]);
        sum[list[k].post] += g[k];
    }
    EXPECT_EQ(sim.synapses("Syn"), sorted);
    for (unsigned b = 0; b < batch(); b++) {
        EXPECT_EQ(sim.synapseValues("Syn", "g", b), sortedG) << "batch " << b;
        EXPECT_EQ(sim.synapseValues("Syn", "n", b), std::vector<double>(list.size(), 0.0));
    }

    sim.run(8);
    sim.pull("Tgt", "x");
    const auto x = sim.view<double>("Tgt", "x");
    for (unsigned b = 0; b < batch(); b++) {
        for (uint32_t j = 0; j < numPost; j++)
            EXPECT_EQ(x[size_t(b) * numPost + j], sum[j]) << "batch " << b << " target " << j;
        const std::vector<double> n = sim.synapseValues("Syn", "n", b);
        for (size_t k = 0; k < sorted.size(); k++)
            EXPECT_EQ(n[k], sum[sorted[k].post] > 0.0 ? 1.0 : 0.0)
                << "batch " << b << " synapse " << k;
    }
    ASSERT_NE(std::count_if(sum.begin(), sum.end(), [](double v) { return v > 0.0; }), 0);
    ASSERT_NE(std::count_if(sum.begin(), sum.end(), [](double v) { return v <= 0.0; }), 0);
}

TEST_P(SynapseCodecTest, HostGivenSynapsesAreCheckedBeforeAnythingChanges) {
    Model m("host_given_errors");
    twoGroups(m, {4, 6}, batch(), MatrixType::Sparse, init::FixedNumberPostWithReplacement(2));
    m.synapseGroup("Syn").setMaxConnections(3);
    Simulation sim(m, prefs());
    const std::vector<SynapsePair> before = sim.synapses("Syn");
    const std::vector<SynapsePair> good = {{0, 1}, {3, 5}, {0, 2}};
    expectError<ModelError>(
        [&] {
            sim.setSynapses("Syn", std::vector<SynapsePair>{{4, 0}});
        },
        {"'Syn'", "synapse 0", "(4, 0)", "out of range"});
    expectError<ModelError>(
        [&] {
            sim.setSynapses("Syn", std::vector<SynapsePair>{{1, 6}});
        },
        {"'Syn'", "(1, 6)", "out of range"});
    expectError<ModelError>(
        [&] {
            sim.setSynapses("Syn", std::vector<SynapsePair>{{2, 0}, {2, 1}, {2, 2}, {2, 0}});
        },
        {"'Syn'", "row 2", "more than 3", "setMaxConnections"});
    expectError<ModelError>(
        [&] {
            sim.setSynapses("Syn", good, {{"g", {1.0, 2.0}}});
        },
        {"'Syn'", "'g'", "2 values for 3 synapses"});
    expectError<ModelError>(
        [&] {
            sim.setSynapses("Syn", good, {{"V", {1.0, 2.0, 3.0}}});
        },
        {"'Syn'", "'V'", "not a weight-update variable"});
    expectError<ModelError>(
        [&] {
            sim.setSynapses("Syn", good, {{"n", {1.0, 2.5, 3.0}}});
        },
        {"'Syn'", "'n'", "synapse 1", "int32_t"});
    EXPECT_EQ(sim.synapses("Syn"), before) << "a refused list changes nothing";
    sim.setSynapses("Syn", good, {{"g", {1.0, 2.0, 3.0}}});
    EXPECT_EQ(sim.synapses("Syn"), (std::vector<SynapsePair>{{0, 1}, {0, 2}, {3, 5}}));
    EXPECT_EQ(sim.synapseValues("Syn", "g"), (std::vector<double>{1.0, 3.0, 2.0}));
    sim.step();
    expectError<ModelError>([&] { sim.setSynapses("Syn", good); },
                            {"'Syn'", "before the first step", "step 1"});

    Model d("host_given_dense");
    twoGroups(d, {4, 6}, batch(), MatrixType::Dense);
    Simulation dense(d, prefs());
    expectError<ModelError>([&] { dense.setSynapses("Syn", good); }, {"'Syn'", "Dense"});
}

SF_INSTANTIATE_BACKEND_BATCH_TESTS(SynapseCodecTest, 1u, 3u);

} // namespace
