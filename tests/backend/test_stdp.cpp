// STDP: a scripted pre/post spike pair (and a triplet) through one synapse, compared with the
// additive STDP formula evaluated on the recorded spike times.
#include "backend_fixture.hpp"
#include "spikeforge/models.hpp"

#include <cmath>

using namespace spikeforge;

namespace {

constexpr double kTauPlus = 20.0, kTauMinus = 15.0, kAplus = 0.1, kAminus = 0.12; // ms, -
constexpr double kG0 = 0.5, kDt = 1.0;

struct Scenario {
    const char* name;
    std::vector<double> pre, post; // spike times [ms]
};

class STDPTest : public sftest::BackendTest {
protected:
    // Runs the scenario and returns (final weight, recorded pre times, recorded post times).
    // Sparse runs go through the column index (postsynaptic learning over a CSC of synapses).
    std::tuple<double, std::vector<double>, std::vector<double>>
    run(const WeightUpdateModel& wu, const Scenario& s, MatrixType matrix = MatrixType::Dense) {
        Model m("stdp");
        m.setDT(kDt);
        m.setPrecision(Precision::Double);
        for (const char* g : {"Pre", "Post"})
            m.addNeuronGroup(g, 1, models::SpikeSourceArray(), {},
                             {{"startSpike", 0.0}, {"endSpike", 0.0}})
                .setSpikeRecording(true);
        WeightUpdateInit w{wu,
                           {{"tauPlus", kTauPlus},
                            {"tauMinus", kTauMinus},
                            {"Aplus", kAplus},
                            {"Aminus", kAminus},
                            {"Wmin", 0.0},
                            {"Wmax", 1.0}},
                           {{"g", kG0}},
                           {},
                           {}};
        if (!wu.preVars.empty()) {
            w.preVarInits = {{"preTrace", 0.0}, {"preTraceT", -1e30}};
            w.postVarInits = {{"postTrace", 0.0}, {"postTraceT", -1e30}};
        }
        std::optional<SparseConnectivityInit> conn;
        if (matrix == MatrixType::Sparse) conn = init::OneToOne();
        m.addSynapseGroup("Syn", matrix, 0, "Pre", "Post", w, {models::DeltaCurr(), {}, {}}, conn);
        Simulation sim(m, prefs());
        auto script = [&](const char* g, const std::vector<double>& times) {
            std::vector<double> shifted;
            for (double t : times)
                shifted.push_back(t - 0.5 * kDt); // emitted at step t/dt
            sim.setEGP(g, "spikeTimes", shifted);
            sim.pull(g, "endSpike");
            sim.view<uint32_t>(g, "endSpike")[0] = static_cast<uint32_t>(times.size());
            sim.push(g, "endSpike");
        };
        script("Pre", s.pre);
        script("Post", s.post);
        sim.setRecordingWindow(100);
        sim.run(100);
        sim.pullRecording();
        sim.pull("Syn", "g");
        std::vector<double> pre, post;
        for (const auto& e : sim.spikes("Pre"))
            pre.push_back(e.time);
        for (const auto& e : sim.spikes("Post"))
            post.push_back(e.time);
        return {sim.view<double>("Syn", "g")[0], pre, post};
    }
};

// Additive STDP on spike times. Nearest: each spike pairs with the latest earlier-or-equal
// partner only. All-to-all: every ordered pair counts.
double expectedWeight(const std::vector<double>& pre, const std::vector<double>& post,
                      bool nearest) {
    double g = kG0;
    // Events in time order; at equal times the pre spike's depression and the post spike's
    // potentiation both pair with the other.
    struct Ev {
        double t;
        bool isPre;
    };
    std::vector<Ev> ev;
    for (double t : pre)
        ev.push_back({t, true});
    for (double t : post)
        ev.push_back({t, false});
    std::stable_sort(ev.begin(), ev.end(), [](auto& a, auto& b) { return a.t < b.t; });
    for (const auto& e : ev) {
        const auto& partners = e.isPre ? post : pre;
        double sum = 0.0;
        double latest = -1e30;
        for (double p : partners)
            if (p < e.t || (p == e.t)) {
                sum += std::exp(-(e.t - p) / (e.isPre ? kTauMinus : kTauPlus));
                latest = std::max(latest, p);
            }
        if (nearest)
            sum =
                latest > -1e29 ? std::exp(-(e.t - latest) / (e.isPre ? kTauMinus : kTauPlus)) : 0.0;
        g = e.isPre ? std::max(0.0, g - kAminus * sum) : std::min(1.0, g + kAplus * sum);
    }
    return g;
}

const Scenario kScenarios[] = {
    {"pre_then_post", {10.0}, {15.0}},
    {"post_then_pre", {15.0}, {10.0}},
    {"two_pre_then_post", {10.0, 12.0}, {15.0}},
    {"post_pre_post", {20.0}, {12.0, 30.0}},
};

TEST_P(STDPTest, NearestNeighbourMatchesFormula) {
    for (const auto& s : kScenarios) {
        const auto [g, pre, post] = run(models::STDPNearest(), s);
        ASSERT_EQ(pre, s.pre) << s.name;
        ASSERT_EQ(post, s.post) << s.name;
        EXPECT_NEAR(g, expectedWeight(pre, post, true), 1e-12) << s.name;
        EXPECT_NE(g, kG0) << s.name; // the pair changed the weight
    }
}

TEST_P(STDPTest, AllToAllMatchesFormula) {
    for (const auto& s : kScenarios) {
        const auto [g, pre, post] = run(models::STDPAllToAll(), s);
        EXPECT_NEAR(g, expectedWeight(pre, post, false), 1e-12) << s.name;
    }
    // The two pairings differ when a spike has two earlier partners.
    EXPECT_NE(expectedWeight({10, 12}, {15}, true), expectedWeight({10, 12}, {15}, false));
}

TEST_P(STDPTest, SparseConnectivityLearnsLikeDense) {
    for (const auto& s : kScenarios) {
        const auto [g, pre, post] = run(models::STDPNearest(), s, MatrixType::Sparse);
        EXPECT_NEAR(g, expectedWeight(pre, post, true), 1e-12) << s.name;
        const auto [g2, pre2, post2] = run(models::STDPAllToAll(), s, MatrixType::Sparse);
        EXPECT_NEAR(g2, expectedWeight(pre2, post2, false), 1e-12) << s.name;
    }
}

// Many synapses per column: sparse all-to-all connectivity (FixedProbability 1) must learn
// exactly what Dense learns from the same Poisson spike trains.
TEST_P(STDPTest, SparseColumnIndexMatchesDenseUnderRandomSpikes) {
    constexpr unsigned kPre = 20, kPost = 12;
    auto build = [&](Model& m, MatrixType matrix) {
        m.setDT(kDt);
        m.setPrecision(Precision::Double);
        m.addNeuronGroup("Pre", kPre, models::Poisson(), {{"rate", 40.0}},
                         {{"timeStepToSpike", 0.0}});
        m.addNeuronGroup("Post", kPost, models::Poisson(), {{"rate", 30.0}},
                         {{"timeStepToSpike", 0.0}});
        std::optional<SparseConnectivityInit> conn;
        if (matrix == MatrixType::Sparse) conn = init::FixedProbability(1.0);
        m.addSynapseGroup("Syn", matrix, 0, "Pre", "Post",
                          {models::STDPNearest(),
                           {{"tauPlus", kTauPlus},
                            {"tauMinus", kTauMinus},
                            {"Aplus", 0.01},
                            {"Aminus", 0.012},
                            {"Wmin", 0.0},
                            {"Wmax", 1.0}},
                           {{"g", kG0}},
                           {},
                           {}},
                          {models::DeltaCurr(), {}, {}}, conn);
    };
    Model dense("stdp_dense"), sparse("stdp_sparse");
    build(dense, MatrixType::Dense);
    build(sparse, MatrixType::Sparse);
    Simulation ds(dense, prefs()), ss(sparse, prefs());
    ds.run(500);
    ss.run(500);
    ds.pull("Syn", "g");
    ss.pull("Syn", "g");
    ss.pullConnectivity("Syn");
    const auto len = ss.rowLengths("Syn");
    const auto ind = ss.columnIndices("Syn");
    const unsigned stride = ss.rowStride("Syn");
    const auto gd = ds.view<double>("Syn", "g");
    const auto gs = ss.view<double>("Syn", "g");
    unsigned changed = 0;
    for (unsigned i = 0; i < kPre; i++) {
        ASSERT_EQ(len[i], kPost);
        for (unsigned k = 0; k < len[i]; k++) {
            const unsigned j = ind[i * stride + k];
            EXPECT_DOUBLE_EQ(gs[i * stride + k], gd[i * kPost + j]) << i << "->" << j;
            changed += gd[i * kPost + j] != kG0;
        }
    }
    EXPECT_GT(changed, kPre * kPost / 2); // learning happened on most synapses
}

SF_INSTANTIATE_BACKEND_TESTS(STDPTest);

} // namespace
