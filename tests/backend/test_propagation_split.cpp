// Spike propagation at batch 1 with more than one thread splits the postsynaptic targets among
// the threads (see docs/internals.md, "Threads"): each target still sums its inputs in spike
// order, so the inputs are bit-identical to a single thread's, for dense and sparse rows.
// Random weights make the sums depend on their order.
#include "backend_fixture.hpp"
#include "spikeforge/models.hpp"

#include <bit>
#include <cstdint>
#include <vector>

using namespace spikeforge;

namespace {

class PropagationSplitTest : public sftest::BackendTest {};

// 2000 inputs at 200 Hz: ~40 spikes a step, each reaching hundreds of targets, enough work for
// a team of threads in every step after the first.
void build(Model& m, MatrixType matrix) {
    m.setDT(0.1);
    m.setSeed(7);
    m.addNeuronGroup("Input", 2000, models::Poisson(), {{"rate", 200.0}},
                     {{"timeStepToSpike", 0.0}});
    m.addNeuronGroup("Cells", 1000, models::LeakyIntegrate(),
                     {{"C", 1.0}, {"TauM", 20.0}, {"Vrest", 0.0}}, {{"V", 0.0}});
    std::optional<SparseConnectivityInit> conn;
    if (matrix == MatrixType::Sparse) conn = init::FixedProbability(0.6);
    m.addSynapseGroup("Syn", matrix, 0, "Input", "Cells",
                      {models::StaticPulse(), {}, {{"g", init::Uniform(0.0, 1.0)}}, {}, {}},
                      {models::ExpCurr(), {{"tau", 5.0}}, {}}, conn);
}

std::vector<uint32_t> run(MatrixType matrix, const BackendPreferences& prefs) {
    Model m("split");
    build(m, matrix);
    Simulation sim(m, prefs);
    sim.run(30);
    std::vector<uint32_t> out;
    sim.pull("Syn", "inSyn");
    for (float x : sim.view<float>("Syn", "inSyn"))
        out.push_back(std::bit_cast<uint32_t>(x));
    sim.pull("Cells", "V");
    for (float x : sim.view<float>("Cells", "V"))
        out.push_back(std::bit_cast<uint32_t>(x));
    return out;
}

TEST_P(PropagationSplitTest, BatchOneSplitsTargetsWithoutChangingSums) {
    if (GetParam() != "cpu")
        GTEST_SKIP() << "thread counts are the cpu backend's; the SIMT strategies are compared "
                        "with cpu in test_simt_propagation.cpp";
    for (MatrixType matrix : {MatrixType::Dense, MatrixType::Sparse}) {
        const auto one = run(matrix, prefs(1));
        const auto two = run(matrix, prefs(2));
        const auto three = run(matrix, prefs(3));
        ASSERT_EQ(one.size(), 2000u);
        size_t nonZero = 0;
        for (uint32_t x : one)
            nonZero += x != 0;
        EXPECT_GT(nonZero, 1900u); // every cell received input
        EXPECT_EQ(one, two);
        EXPECT_EQ(one, three);
    }
}

} // namespace

SF_INSTANTIATE_BACKEND_TESTS(PropagationSplitTest);
