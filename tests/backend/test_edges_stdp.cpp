// STDP with a presynaptic and a postsynaptic spike in the SAME step, for both built-in pairings
// and for Dense and Sparse connectivity. The rule (docs/models.md, "STDP: spikes in the same
// step"): both spikes carry the same time, so each pairs with the other (Δt = 0) in both
// directions, and the presynaptic (depression) update is applied before the postsynaptic
// (potentiation) update, which is observable where the weight clips at Wmin or Wmax.
//
// Three presynaptic and three postsynaptic trains meet in nine synapses (all-to-all
// connectivity), each with its own initial weight; several pairs share a step, some with earlier
// history, some starting next to a bound.
#include "backend_fixture.hpp"
#include "spikeforge/models.hpp"
#include "test_edges_common.hpp"

#include <algorithm>
#include <cmath>

using namespace spikeforge;

namespace {

constexpr double kTauPlus = 20.0, kTauMinus = 15.0, kAplus = 0.1, kAminus = 0.12; // [ms], -
constexpr double kWmin = 0.0, kWmax = 1.0, kDt = 1.0;                             // -, [ms]
constexpr unsigned kPre = 3, kPost = 3, kSteps = 60;

// Spike steps (= times [ms] at dt = 1).
const std::vector<unsigned> kPreTrains[kPre] = {{20}, {10, 25}, {30, 41}};
const std::vector<unsigned> kPostTrains[kPost] = {{20}, {18, 25}, {22, 30, 41}};
// Initial weight of synapse pre i → post j: next to Wmax or Wmin on the same-step diagonal.
constexpr double kG0[kPre][kPost] = {{0.95, 0.5, 0.05}, {0.5, 0.02, 0.5}, {0.05, 0.5, 0.97}};

struct Rule {
    bool nearest;         // nearest-spike (else all-to-all) pairing
    bool equalTimesPair;  // a partner at the same time counts
    bool depressionFirst; // at a shared step the presynaptic update runs first
};

// The documented rule, evaluated on spike times in the order the engine must apply it.
double referenceWeight(const std::vector<unsigned>& pre, const std::vector<unsigned>& post,
                       double g, const Rule& r) {
    struct Ev {
        double t;
        bool isPre;
    };
    std::vector<Ev> ev;
    for (unsigned t : pre)
        ev.push_back({t * kDt, true});
    for (unsigned t : post)
        ev.push_back({t * kDt, false});
    std::stable_sort(ev.begin(), ev.end(), [&](const Ev& a, const Ev& b) {
        if (a.t != b.t) return a.t < b.t;
        return r.depressionFirst ? a.isPre && !b.isPre : !a.isPre && b.isPre;
    });
    for (const auto& e : ev) {
        const auto& partners = e.isPre ? post : pre;
        const double tau = e.isPre ? kTauMinus : kTauPlus;
        double sum = 0.0, latest = -1.0;
        for (unsigned p : partners) {
            const double tp = p * kDt;
            if (tp < e.t || (r.equalTimesPair && tp == e.t)) {
                sum += std::exp(-(e.t - tp) / tau);
                latest = std::max(latest, tp);
            }
        }
        if (r.nearest) sum = latest >= 0.0 ? std::exp(-(e.t - latest) / tau) : 0.0;
        g = e.isPre ? std::max(kWmin, g - kAminus * sum) : std::min(kWmax, g + kAplus * sum);
    }
    return g;
}

class SameStepSTDPTest : public ::testing::TestWithParam<std::tuple<std::string, MatrixType>> {
protected:
    // Final weights [pre][post] after kSteps steps.
    std::vector<std::vector<double>> run(const WeightUpdateModel& wu) {
        const auto& [backend, matrix] = GetParam();
        Model m("stdp_same_step");
        m.setDT(kDt);
        m.setPrecision(Precision::Double);
        m.addNeuronGroup("Pre", kPre, models::SpikeSourceArray(), {},
                         {{"startSpike", 0.0}, {"endSpike", 0.0}})
            .setSpikeRecording(true);
        m.addNeuronGroup("Post", kPost, models::SpikeSourceArray(), {},
                         {{"startSpike", 0.0}, {"endSpike", 0.0}})
            .setSpikeRecording(true);
        WeightUpdateInit w{wu,
                           {{"tauPlus", kTauPlus},
                            {"tauMinus", kTauMinus},
                            {"Aplus", kAplus},
                            {"Aminus", kAminus},
                            {"Wmin", kWmin},
                            {"Wmax", kWmax}},
                           {{"g", 0.5}},
                           {},
                           {}};
        if (!wu.preVars.empty()) {
            w.preVarInits = {{"preTrace", 0.0}, {"preTraceT", -1e30}};
            w.postVarInits = {{"postTrace", 0.0}, {"postTraceT", -1e30}};
        }
        std::optional<SparseConnectivityInit> conn;
        if (matrix == MatrixType::Sparse) conn = init::FixedProbability(1.0);
        m.addSynapseGroup("Syn", matrix, 0, "Pre", "Post", w, {models::DeltaCurr(), {}, {}}, conn);
        BackendPreferences prefs;
        prefs.backend = backend;
        Simulation sim(m, prefs);
        sftest::scriptSpikeSteps(sim, "Pre", 1, kPre, kDt,
                                 [](unsigned, unsigned i) { return kPreTrains[i]; });
        sftest::scriptSpikeSteps(sim, "Post", 1, kPost, kDt,
                                 [](unsigned, unsigned j) { return kPostTrains[j]; });

        // Synapse slots: row i, position k → post j (Dense: k = j).
        std::vector<std::vector<int>> slot(kPre, std::vector<int>(kPost, -1));
        if (matrix == MatrixType::Sparse) {
            sim.pullConnectivity("Syn");
            const auto len = sim.rowLengths("Syn");
            const auto ind = sim.columnIndices("Syn");
            const unsigned stride = sim.rowStride("Syn");
            for (unsigned i = 0; i < kPre; i++)
                for (unsigned k = 0; k < len[i]; k++)
                    slot[i][ind[i * stride + k]] = static_cast<int>(i * stride + k);
        } else {
            for (unsigned i = 0; i < kPre; i++)
                for (unsigned j = 0; j < kPost; j++)
                    slot[i][j] = static_cast<int>(i * kPost + j);
        }
        sim.pull("Syn", "g");
        for (unsigned i = 0; i < kPre; i++)
            for (unsigned j = 0; j < kPost; j++) {
                EXPECT_GE(slot[i][j], 0) << "synapse " << i << "->" << j << " missing";
                if (slot[i][j] >= 0) sim.view<double>("Syn", "g")[slot[i][j]] = kG0[i][j];
            }
        sim.push("Syn", "g");

        sim.setRecordingWindow(kSteps);
        sim.run(kSteps);
        sim.pullRecording();
        // The scripted steps are the recorded spike times, so the reference sees the real times.
        for (const auto& [group, trains, n] :
             {std::tuple{"Pre", kPreTrains, kPre}, std::tuple{"Post", kPostTrains, kPost}}) {
            std::vector<std::vector<unsigned>> got(n);
            for (const auto& e : sim.spikes(group))
                got[e.neuron].push_back(static_cast<unsigned>(e.time / kDt));
            for (unsigned i = 0; i < n; i++)
                EXPECT_EQ(got[i], trains[i]) << group << " neuron " << i;
        }
        sim.pull("Syn", "g");
        std::vector<std::vector<double>> g(kPre, std::vector<double>(kPost, 0.0));
        for (unsigned i = 0; i < kPre; i++)
            for (unsigned j = 0; j < kPost; j++)
                if (slot[i][j] >= 0) g[i][j] = sim.view<double>("Syn", "g")[slot[i][j]];
        return g;
    }

    void check(const WeightUpdateModel& wu, bool nearest) {
        const auto g = run(wu);
        const Rule rule{nearest, true, true};
        unsigned sensitiveToPairing = 0, sensitiveToOrder = 0;
        for (unsigned i = 0; i < kPre; i++)
            for (unsigned j = 0; j < kPost; j++) {
                const auto& pre = kPreTrains[i];
                const auto& post = kPostTrains[j];
                const double expected = referenceWeight(pre, post, kG0[i][j], rule);
                EXPECT_NEAR(g[i][j], expected, 1e-12) << "synapse " << i << "->" << j;
                // How the neighbouring rules would differ, so the test is known to be able to
                // tell them apart.
                const Rule strict{nearest, false, true}, potentiationFirst{nearest, true, false};
                sensitiveToPairing +=
                    std::abs(referenceWeight(pre, post, kG0[i][j], strict) - expected) > 1e-6;
                sensitiveToOrder +=
                    std::abs(referenceWeight(pre, post, kG0[i][j], potentiationFirst) - expected) >
                    1e-6;
            }
        EXPECT_GE(sensitiveToPairing, 3u);
        EXPECT_GE(sensitiveToOrder, 2u);
    }
};

TEST_P(SameStepSTDPTest, NearestPairsEqualTimesBothWaysDepressionFirst) {
    check(models::STDPNearest(), true);
}

TEST_P(SameStepSTDPTest, AllToAllPairsEqualTimesBothWaysDepressionFirst) {
    check(models::STDPAllToAll(), false);
}

std::string paramName(const ::testing::TestParamInfo<SameStepSTDPTest::ParamType>& info) {
    const auto& [backend, matrix] = info.param;
    return backend + (matrix == MatrixType::Dense ? "_Dense" : "_Sparse");
}

INSTANTIATE_TEST_SUITE_P(Backends, SameStepSTDPTest,
                         ::testing::Combine(::testing::ValuesIn(sftest::usableBackends()),
                                            ::testing::Values(MatrixType::Dense,
                                                              MatrixType::Sparse)),
                         paramName);

} // namespace
