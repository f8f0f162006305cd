// addToPre: synapse code adds to its source neuron's input (Isyn of the source's next update),
// from presynaptic code (spikes of the source) and from postsynaptic learning (spikes of the
// target), exactly (integer weights) on every backend, batch 1 and 3.
#include "backend_fixture.hpp"

#include "spikeforge/models.hpp"

#include <vector>

namespace {

using namespace spikeforge;
using sftest::BackendTest;

constexpr unsigned kPre = 3, kPost = 4, kBatch = 3;

// Sums its input into x; spikes once, in step 2 (when n reaches 3).
NeuronModel clock() {
    NeuronModel m;
    m.name = "Clock";
    m.vars = {{"x"}, {"n", "uint32_t"}};
    m.simCode = "x += Isyn;\nn += 1u;";
    m.thresholdConditionCode = "n == 3u";
    return m;
}

WeightUpdateModel backward(const char* field) {
    WeightUpdateModel m;
    m.name = "Backward";
    m.vars = {{"g"}};
    (std::string(field) == "pre" ? m.preSpikeSynCode : m.postSpikeSynCode) =
        "addToPre(g * (batch + 1.0));";
    return m;
}

class AddToPreTest : public ::testing::TestWithParam<std::tuple<std::string, unsigned>> {};

TEST_P(AddToPreTest, SourcesReceiveTheSumOfTheirSynapsesContributions) {
    const auto& [backend, batch] = GetParam();
    Model m("add_to_pre");
    m.setBatchSize(batch);
    m.setPrecision(Precision::Double);
    m.addNeuronGroup("Pre", kPre, clock(), {}, {{"x", 0.0}, {"n", 0.0}});
    m.addNeuronGroup("Post", kPost, clock(), {}, {{"x", 0.0}, {"n", 0.0}});
    // Pre spikes in step 2: ByPre adds in step 3's presynaptic update. Post spikes in step 2:
    // ByPost adds in step 3's postsynaptic learning. Pre's update in step 3 reads both.
    m.addSynapseGroup("ByPre", MatrixType::Dense, 0, "Pre", "Post",
                      {backward("pre"), {}, {{"g", 0.0}}, {}, {}}, {models::DeltaCurr(), {}, {}});
    m.addSynapseGroup("ByPost", MatrixType::Sparse, 0, "Pre", "Post",
                      {backward("post"), {}, {{"g", 0.0}}, {}, {}}, {models::DeltaCurr(), {}, {}},
                      init::FixedProbability(1.0));
    BackendPreferences prefs;
    prefs.backend = backend;
    Simulation sim(m, prefs);
    // ByPre: g_ij = (i + 1) * 2^j; ByPost: g_ij = 2^(8 + j): exact sums of distinct powers.
    sim.pull("ByPre", "g");
    auto g1 = sim.view<double>("ByPre", "g");
    // Weights are per batch element (read-write variables): every copy gets the same values.
    for (unsigned b = 0; b < batch; b++)
        for (unsigned i = 0; i < kPre; i++)
            for (unsigned j = 0; j < kPost; j++)
                g1[(b * kPre + i) * kPost + j] = (i + 1.0) * double(1u << j);
    sim.push("ByPre", "g");
    sim.pullConnectivity("ByPost");
    const auto len = sim.rowLengths("ByPost");
    const auto ind = sim.columnIndices("ByPost");
    const unsigned stride = sim.rowStride("ByPost");
    sim.pull("ByPost", "g");
    auto g2 = sim.view<double>("ByPost", "g");
    for (unsigned i = 0; i < kPre; i++) {
        ASSERT_EQ(len[i], kPost) << "FixedProbability(1) must connect every pair";
        for (unsigned b = 0; b < batch; b++)
            for (unsigned k = 0; k < len[i]; k++)
                g2[(size_t(b) * kPre + i) * stride + k] = double(1u << (8 + ind[i * stride + k]));
    }
    sim.push("ByPost", "g");

    sim.run(3); // steps 0..2: spikes in step 2, nothing added yet
    sim.pull("Pre", "x");
    for (double x : sim.view<double>("Pre", "x"))
        ASSERT_EQ(x, 0.0);
    sim.run(2); // step 3 adds, step 4 must add nothing more (the accumulator was cleared)
    sim.pull("Pre", "x");
    const auto x = sim.view<double>("Pre", "x");
    for (unsigned b = 0; b < batch; b++)
        for (unsigned i = 0; i < kPre; i++)
            EXPECT_EQ(x[b * kPre + i], (b + 1.0) * ((i + 1.0) * 15.0 + 15.0 * 256.0))
                << "batch " << b << " pre " << i;
}

std::vector<std::tuple<std::string, unsigned>> params() {
    std::vector<std::tuple<std::string, unsigned>> out;
    for (const auto& b : sftest::usableBackends())
        for (unsigned batch : {1u, kBatch})
            out.emplace_back(b, batch);
    return out;
}

INSTANTIATE_TEST_SUITE_P(Backends, AddToPreTest, ::testing::ValuesIn(params()),
                         [](const auto& info) {
                             return std::get<0>(info.param) + "_batch" +
                                    std::to_string(std::get<1>(info.param));
                         });

TEST(AddToPre, OnlySynapseSpikeCodeMayCallIt) {
    Model m("add_to_pre_where");
    NeuronModel n = clock();
    n.simCode = "addToPre(1.0);";
    m.addNeuronGroup("Pre", kPre, n, {}, {{"x", 0.0}, {"n", 0.0}});
    sftest::expectError<ModelError>([&] { m.finalise(); }, {"addToPre", "simCode"});
}

} // namespace
