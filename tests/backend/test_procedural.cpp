// Procedural connectivity on every backend: rows regenerated at each spike from the Sparse
// build's random streams, so a Procedural group delivers exactly what the Sparse group with the
// same initialiser, name and seed delivers (weights evaluated from their initialiser too), and
// the same on every backend; its row lengths, counted at the spikes, are within binomial bounds.
#include "backend_fixture.hpp"
#include "probe_models.hpp"

#include "spikeforge/models.hpp"

#include <cmath>
#include <random>
#include <tuple>
#include <vector>

namespace {

using namespace spikeforge;
using sftest::expectError;

constexpr unsigned kPre = 300, kPost = 257;
constexpr double kProb = 0.1;

using sftest::accumulate;

// Adds g to the target and 1 to the source: the source counts its row.
WeightUpdateModel pulseCountingRows() {
    WeightUpdateModel m;
    m.name = "PulseCountingRows";
    m.vars = {{"g", "scalar", VarAccess::ReadOnly}};
    m.preSpikeSynCode = "addToPost(g); addToPre(1.0);";
    return m;
}

void network(Model& m, MatrixType type, unsigned batch, const VarInit& weight,
             const WeightUpdateModel& wu = pulseCountingRows(),
             const SparseConnectivityInit& conn = init::FixedProbability(kProb)) {
    m.setBatchSize(batch);
    m.setPrecision(Precision::Double);
    m.setSeed(2024);
    m.addNeuronGroup("In", kPre, sftest::spikeOnce(), {}, {{"fire", 0.0}, {"count", 0.0}});
    m.addNeuronGroup("Out", kPost, accumulate(), {}, {{"acc", 0.0}});
    m.addSynapseGroup("Syn", type, 0, "In", "Out", {wu, {}, {{"g", weight}}, {}, {}},
                      {models::DeltaCurr(), {}, {}}, conn);
}

struct Delivered {
    std::vector<double> acc, count; // [batch][target], [batch][source]
};

// Each batch element fires its own pattern (half the sources, drawn from the seed) in step 0.
Delivered deliver(Simulation& sim, unsigned batch) {
    auto fire = sim.view<double>("In", "fire");
    std::mt19937 rng(5);
    for (unsigned b = 0; b < batch; b++)
        for (unsigned i = 0; i < kPre; i++)
            fire[size_t(b) * kPre + i] = (rng() % 2 == 0 || b == 0) ? 1.0 : 0.0;
    sim.push("In", "fire");
    sim.run(3);
    sim.pull("Out", "acc");
    sim.pull("In", "count");
    const auto acc = sim.view<double>("Out", "acc");
    const auto count = sim.view<double>("In", "count");
    return {{acc.begin(), acc.end()}, {count.begin(), count.end()}};
}

class ProceduralTest : public ::testing::TestWithParam<std::tuple<std::string, unsigned>> {
protected:
    BackendPreferences prefs() const { return sftest::preferencesFor(std::get<0>(GetParam())); }
    unsigned batch() const { return std::get<1>(GetParam()); }
};

TEST_P(ProceduralTest, DeliversWhatTheSparseGroupWithTheSameInitialiserDelivers) {
    for (const VarInit& weight : {VarInit(1.0), init::Uniform(-1.0, 2.0)}) {
        Model pm("procedural"), sm("procedural");
        network(pm, MatrixType::Procedural, batch(), weight);
        network(sm, MatrixType::Sparse, batch(), weight);
        Simulation psim(pm, prefs()), ssim(sm, prefs());
        const Delivered p = deliver(psim, batch()), s = deliver(ssim, batch());
        // Rows are identical (counts are whole numbers); sums of the same weights in another
        // order (atomics) agree to rounding.
        EXPECT_EQ(p.count, s.count);
        ASSERT_EQ(p.acc.size(), s.acc.size());
        for (size_t j = 0; j < p.acc.size(); j++)
            ASSERT_NEAR(p.acc[j], s.acc[j], 1e-9 * (1.0 + std::fabs(s.acc[j]))) << j;
        // The same on the cpu backend (the streams are defined once, like the Philox ones).
        if (std::get<0>(GetParam()) != "cpu") {
            Model cm("procedural");
            network(cm, MatrixType::Procedural, batch(), weight);
            BackendPreferences cpu;
            cpu.backend = "cpu";
            Simulation csim(cm, cpu);
            const Delivered c = deliver(csim, batch());
            EXPECT_EQ(p.count, c.count);
            for (size_t j = 0; j < p.acc.size(); j++)
                ASSERT_NEAR(p.acc[j], c.acc[j], 1e-9 * (1.0 + std::fabs(c.acc[j]))) << j;
        }
    }
}

TEST_P(ProceduralTest, RowLengthsAreBinomial) {
    Model m("procedural_rows");
    network(m, MatrixType::Procedural, batch(), 1.0);
    Simulation sim(m, prefs());
    const Delivered d = deliver(sim, batch());
    // Batch element 0 fires every source: its counts are the row lengths, Binomial(kPost, p).
    const double mean = kPost * kProb, sd = std::sqrt(kPost * kProb * (1.0 - kProb));
    double sum = 0.0, squares = 0.0;
    for (unsigned i = 0; i < kPre; i++) {
        const double n = d.count[i];
        ASSERT_EQ(n, std::floor(n));
        ASSERT_LE(std::fabs(n - mean), 6.0 * sd) << "row " << i; // p < 2e-9 per row
        sum += n;
        squares += n * n;
    }
    const double sampleMean = sum / kPre;
    const double sampleVar = squares / kPre - sampleMean * sampleMean;
    EXPECT_LE(std::fabs(sampleMean - mean), 5.0 * sd / std::sqrt(double(kPre)));
    EXPECT_GT(sampleVar, 0.6 * sd * sd); // a constant row length would fail these
    EXPECT_LT(sampleVar, 1.5 * sd * sd);
    // With weight 1 every target received one input per synapse onto it: the sum over targets
    // is the sum over rows.
    double delivered = 0.0;
    for (unsigned j = 0; j < kPost; j++)
        delivered += d.acc[j];
    EXPECT_EQ(delivered, sum);
}

// The host codec of a Procedural group (its Sparse twin, regenerated on the cpu backend): the
// synapses and weights read are those the group delivered on this backend — each source's row
// length is what it counted, each target's input the sum of the weights read onto it — and the
// same as the Sparse group's.
TEST_P(ProceduralTest, ReadsTheSynapsesAndWeightsItDelivers) {
    Model pm("procedural_read"), sm("procedural_read");
    network(pm, MatrixType::Procedural, batch(), init::Uniform(-1.0, 2.0));
    network(sm, MatrixType::Sparse, batch(), init::Uniform(-1.0, 2.0));
    Simulation psim(pm, prefs()), ssim(sm, prefs());
    const Delivered d = deliver(psim, batch());
    const std::vector<SynapsePair> pairs = psim.synapses("Syn");
    EXPECT_EQ(pairs, ssim.synapses("Syn"));
    EXPECT_EQ(psim.synapseCount("Syn"), pairs.size());
    EXPECT_EQ(psim.connectivityMatrix("Syn"), ssim.connectivityMatrix("Syn"));
    std::vector<double> rowLength(kPre, 0.0), input(kPost, 0.0);
    const std::vector<double> g = psim.synapseValues("Syn", "g", 0);
    ASSERT_EQ(g.size(), pairs.size());
    for (size_t k = 0; k < pairs.size(); k++) {
        rowLength[pairs[k].pre] += 1.0;
        input[pairs[k].post] += g[k];
    }
    for (unsigned i = 0; i < kPre; i++) // batch element 0 fired every source once
        ASSERT_EQ(rowLength[i], d.count[i]) << "row " << i;
    for (unsigned j = 0; j < kPost; j++)
        ASSERT_NEAR(input[j], d.acc[j], 1e-9 * (1.0 + std::fabs(d.acc[j]))) << "target " << j;
    for (unsigned b = 0; b < batch(); b++)
        EXPECT_EQ(psim.synapseValues("Syn", "g", b), ssim.synapseValues("Syn", "g", b)) << b;
    EXPECT_EQ(psim.synapseMatrix("Syn", "g", 0), ssim.synapseMatrix("Syn", "g", 0));
}

INSTANTIATE_TEST_SUITE_P(Backends, ProceduralTest,
                         ::testing::Combine(::testing::ValuesIn(sftest::suiteBackends()),
                                            ::testing::Values(1u, 3u)),
                         [](const auto& info) {
                             return std::get<0>(info.param) + "_batch" +
                                    std::to_string(std::get<1>(info.param));
                         });

TEST(ProceduralModel, StoresNothingAndRefusesToBeGivenSynapses) {
    Model m("procedural_uses");
    network(m, MatrixType::Procedural, 1, 1.0);
    BackendPreferences cpu;
    cpu.backend = "cpu";
    {
        Simulation sim(m, cpu);
        expectError<ModelError>([&] { sim.setSynapses("Syn", {}); },
                                {"'Syn' is Procedural", "cannot be given"});
        const std::vector<double> ones(sim.synapseCount("Syn"), 1.0);
        expectError<ModelError>([&] { sim.setSynapseValues("Syn", "g", ones); },
                                {"'Syn' is Procedural", "cannot be given"});
        expectError<ModelError>([&] { sim.view<double>("Syn", "g"); }, {"g"});
    }
    auto refused = [&](const WeightUpdateModel& wu, const SparseConnectivityInit& conn,
                       std::initializer_list<std::string> fragments) {
        Model bad("procedural_bad");
        network(bad, MatrixType::Procedural, 1, 1.0, wu, conn);
        expectError<ModelError>([&] { bad.finalise(); }, fragments);
    };
    WeightUpdateModel writes = pulseCountingRows();
    writes.vars = {{"g"}};
    writes.preSpikeSynCode = "addToPost(g); g *= 0.5;";
    refused(writes, init::FixedProbability(kProb), {"'Syn'", "assigns 'g'", "Procedural"});
    WeightUpdateModel learns = pulseCountingRows();
    learns.postSpikeSynCode = "addToPre(g);";
    refused(learns, init::FixedProbability(kProb), {"'Syn'", "no postsynaptic learning"});
    refused(pulseCountingRows(), init::FixedNumberTotalWithReplacement(1000),
            {"'Syn'", "preCalcRowLengthCode", "use Sparse"});
    Model withUpdate("procedural_custom");
    network(withUpdate, MatrixType::Procedural, 1, 1.0);
    CustomUpdateModel scale;
    scale.name = "Scale";
    scale.varRefs = {{"w", "scalar", CustomUpdateVarAccess::ReadWrite}};
    scale.updateCode = "w *= 2.0;";
    withUpdate.addCustomUpdateWU("ScaleW", "Learn", scale, {}, {}, {{"w", {"Syn", "g"}}});
    expectError<ModelError>([&] { withUpdate.finalise(); }, {"'ScaleW'", "'Syn' is Procedural"});
}

TEST(ProceduralModel, RowsTooLongForOneThreadAreRefused) {
    Model m("procedural_huge");
    m.addNeuronGroup("In", 10, sftest::spikeOnce(), {}, {{"fire", 0.0}, {"count", 0.0}});
    m.addNeuronGroup("Out", 200000, accumulate(), {}, {{"acc", 0.0}});
    m.addSynapseGroup("Syn", MatrixType::Procedural, 0, "In", "Out",
                      {pulseCountingRows(), {}, {{"g", 1.0}}, {}, {}},
                      {models::DeltaCurr(), {}, {}}, init::FixedProbability(0.5));
    expectError<ModelError>([&] { m.finalise(); },
                            {"'Syn'", "a Procedural group generates at most 16384", "use Sparse"});
    m.synapseGroup("Syn").setMaxConnections(SynapseGroup::kMaxProceduralRowLength);
    EXPECT_NO_THROW(m.finalise());
}

TEST(ProceduralModel, RowsLongerThanTheBoundAreReported) {
    Model m("procedural_overflow");
    network(m, MatrixType::Procedural, 1, 1.0);
    m.synapseGroup("Syn").setMaxConnections(3); // rows of ~26 targets
    BackendPreferences cpu;
    cpu.backend = "cpu";
    Simulation sim(m, cpu);
    auto fire = sim.view<double>("In", "fire");
    std::fill(fire.begin(), fire.end(), 1.0);
    sim.push("In", "fire");
    expectError<ModelError>([&] { sim.run(3); }, {"Syn", "row longer than its maximum row length"});
}

} // namespace
