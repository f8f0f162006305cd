// Event propagation: source i has weight 2^i onto every target it reaches, so the input a target
// receives in a step names exactly which sources' spikes arrived (sums of distinct powers of two
// are exact in float). Checked for Dense and Sparse connectivity, with and without axonal and
// dendritic delays, for batch 1 and batch 5 with a different spike pattern per batch element.
#include "backend_fixture.hpp"
#include "spikeforge/models.hpp"

#include <cmath>
#include <tuple>

using namespace spikeforge;

namespace {

constexpr unsigned kSources = 7, kTargets = 5, kSteps = 40, kMaxDendritic = 4;
constexpr double kDt = 1.0;

// Does source i of batch element b spike at step n? A deterministic, batch-dependent pattern.
bool spikes(unsigned b, unsigned i, unsigned n) {
    return n >= 2 && (n * (i + 2) + 3 * b) % 11 < 2;
}

NeuronModel accumulator() {
    NeuronModel a;
    a.name = "Accumulator";
    a.vars = {{"x"}};
    a.simCode = "x += Isyn;";
    return a;
}

using Params = std::tuple<MatrixType, unsigned /*axonal*/, bool /*dendritic*/, unsigned /*batch*/>;

class PropagationTest : public ::testing::TestWithParam<std::tuple<std::string, Params>> {};

TEST_P(PropagationTest, TargetInputIdentifiesSources) {
    const auto& [backend, params] = GetParam();
    const auto& [matrix, axonal, dendritic, batch] = params;
    Model m("propagation");
    m.setDT(kDt);
    m.setBatchSize(batch);
    m.addNeuronGroup("Src", kSources, models::SpikeSourceArray(), {},
                     {{"startSpike", 0.0}, {"endSpike", 0.0}});
    m.addNeuronGroup("Tgt", kTargets, accumulator(), {}, {{"x", 0.0}});
    WeightUpdateInit wu{dendritic ? models::StaticPulseDendriticDelay() : models::StaticPulse(),
                        {},
                        {{"g", 0.0}},
                        {},
                        {}};
    if (dendritic) wu.varInits["d"] = 0.0;
    std::optional<SparseConnectivityInit> conn;
    if (matrix == MatrixType::Sparse) conn = init::FixedProbability(0.5);
    auto& sg = m.addSynapseGroup("Syn", matrix, axonal, "Src", "Tgt", wu,
                                 {models::DeltaCurr(), {}, {}}, conn);
    if (dendritic) sg.setMaxDendriticDelaySteps(kMaxDendritic);

    BackendPreferences prefs;
    prefs.backend = backend;
    Simulation sim(m, prefs);

    // Spike times: per batch element b and source i a contiguous segment of spikeTimes.
    std::vector<double> times;
    sim.pull("Src", "startSpike");
    sim.pull("Src", "endSpike");
    auto start = sim.view<uint32_t>("Src", "startSpike");
    auto end = sim.view<uint32_t>("Src", "endSpike");
    for (unsigned b = 0; b < batch; b++)
        for (unsigned i = 0; i < kSources; i++) {
            start[b * kSources + i] = static_cast<uint32_t>(times.size());
            for (unsigned n = 0; n < kSteps; n++)
                if (spikes(b, i, n)) times.push_back((n - 0.5) * kDt); // emitted at step n
            end[b * kSources + i] = static_cast<uint32_t>(times.size());
        }
    sim.push("Src", "startSpike");
    sim.push("Src", "endSpike");
    sim.setEGP("Src", "spikeTimes", times);

    // Weights 2^i and (optionally) dendritic delays (i + j) mod kMaxDendritic.
    std::vector<std::pair<unsigned, unsigned>> synapses; // (pre, post) per synapse slot
    unsigned stride = kTargets;
    std::vector<uint32_t> rowLength(kSources, kTargets), ind;
    if (matrix == MatrixType::Sparse) {
        sim.pullConnectivity("Syn");
        rowLength = sim.rowLengths("Syn");
        ind = sim.columnIndices("Syn");
        stride = sim.rowStride("Syn");
    }
    sim.pull("Syn", "g");
    auto g = sim.view<float>("Syn", "g");
    std::vector<std::vector<int>> delayOf(kSources, std::vector<int>(kTargets, -1));
    for (unsigned i = 0; i < kSources; i++)
        for (unsigned k = 0; k < rowLength[i]; k++) {
            const unsigned j = matrix == MatrixType::Sparse ? ind[i * stride + k] : k;
            g[i * stride + k] = std::ldexp(1.0f, static_cast<int>(i));
            delayOf[i][j] = dendritic ? static_cast<int>((i + j) % kMaxDendritic) : 0;
        }
    sim.push("Syn", "g");
    if (dendritic) {
        sim.pull("Syn", "d");
        auto d = sim.view<uint8_t>("Syn", "d");
        for (unsigned i = 0; i < kSources; i++)
            for (unsigned k = 0; k < rowLength[i]; k++) {
                const unsigned j = matrix == MatrixType::Sparse ? ind[i * stride + k] : k;
                d[i * stride + k] = static_cast<uint8_t>(delayOf[i][j]);
            }
        sim.push("Syn", "d");
    }
    if (matrix == MatrixType::Sparse) {
        size_t total = 0;
        for (auto r : rowLength)
            total += r;
        ASSERT_GT(total, 0u);
        ASSERT_LT(total, size_t(kSources) * kTargets); // a genuinely sparse pattern
    }

    // A spike emitted at step n arrives in the target's update at step n + 1 + axonal + d.
    std::vector<double> expected(batch * kTargets, 0.0);
    for (unsigned n = 0; n < kSteps; n++) {
        sim.step();
        for (unsigned b = 0; b < batch; b++)
            for (unsigned i = 0; i < kSources; i++)
                for (unsigned j = 0; j < kTargets; j++) {
                    if (delayOf[i][j] < 0) continue;
                    const int emitted = int(n) - 1 - int(axonal) - delayOf[i][j];
                    if (emitted >= 0 && spikes(b, i, unsigned(emitted)))
                        expected[b * kTargets + j] += std::ldexp(1.0, int(i));
                }
        sim.pull("Tgt", "x");
        const auto x = sim.view<float>("Tgt", "x");
        for (unsigned k = 0; k < batch * kTargets; k++)
            ASSERT_EQ(x[k], expected[k])
                << "step " << n << " batch " << k / kTargets << " target " << k % kTargets;
    }
    double total = 0;
    for (double e : expected)
        total += e;
    EXPECT_GT(total, 0.0); // the pattern delivered something
}

std::string paramName(const ::testing::TestParamInfo<PropagationTest::ParamType>& info) {
    const auto& [backend, p] = info.param;
    const auto& [matrix, axonal, dendritic, batch] = p;
    return backend + (matrix == MatrixType::Dense ? "_Dense" : "_Sparse") + "_axonal" +
           std::to_string(axonal) + (dendritic ? "_dendritic" : "") + "_batch" +
           std::to_string(batch);
}

INSTANTIATE_TEST_SUITE_P(
    Backends, PropagationTest,
    ::testing::Combine(::testing::ValuesIn(sftest::usableBackends()),
                       ::testing::Combine(::testing::Values(MatrixType::Dense, MatrixType::Sparse),
                                          ::testing::Values(0u, 3u), ::testing::Bool(),
                                          ::testing::Values(1u, 5u))),
    paramName);

} // namespace

namespace {

class ConstantWeightTest : public sftest::BackendTest {};

// StaticPulseConstantWeight stores no weights: every delivered spike adds the parameter g.
TEST_P(ConstantWeightTest, EverySpikeDeliversTheGroupWeight) {
    Model m("constant_weight");
    m.setDT(kDt);
    m.addNeuronGroup("Src", kSources, models::SpikeSourceArray(), {},
                     {{"startSpike", 0.0}, {"endSpike", 0.0}});
    m.addNeuronGroup("Tgt", kSources, accumulator(), {}, {{"x", 0.0}});
    m.addSynapseGroup("Syn", MatrixType::Sparse, 0, "Src", "Tgt",
                      {models::StaticPulseConstantWeight(), {{"g", 0.75}}, {}, {}, {}},
                      {models::DeltaCurr(), {}, {}}, init::OneToOne());
    Simulation sim(m, prefs());
    std::vector<double> times;
    sim.pull("Src", "startSpike");
    sim.pull("Src", "endSpike");
    for (unsigned i = 0; i < kSources; i++) {
        sim.view<uint32_t>("Src", "startSpike")[i] = static_cast<uint32_t>(times.size());
        for (unsigned n = 0; n < kSteps; n++)
            if (spikes(0, i, n)) times.push_back((n - 0.5) * kDt);
        sim.view<uint32_t>("Src", "endSpike")[i] = static_cast<uint32_t>(times.size());
    }
    sim.push("Src", "startSpike");
    sim.push("Src", "endSpike");
    sim.setEGP("Src", "spikeTimes", times);
    sim.run(kSteps + 1);
    sim.pull("Tgt", "x");
    for (unsigned i = 0; i < kSources; i++) {
        unsigned count = 0;
        for (unsigned n = 0; n < kSteps; n++)
            count += spikes(0, i, n);
        EXPECT_FLOAT_EQ(sim.view<float>("Tgt", "x")[i], 0.75f * count) << "target " << i;
    }
}

SF_INSTANTIATE_BACKEND_TESTS(ConstantWeightTest);

} // namespace
