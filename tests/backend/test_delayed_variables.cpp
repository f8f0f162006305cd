// Delayed neuron variables: with an axonal delay, synapse code reads V_pre, st_pre and
// prev_st_pre as they were when the delivered spike was emitted (spike code) or d + 1 steps ago
// (synapse dynamics); with a back-propagation delay, postsynaptic learning reads V_post and
// st_post as they were when the target spike it runs for was emitted. Every expected value is
// computed in the test from the closed form of the source's trajectory, on every backend at
// batch 1 and 3.
#include "backend_fixture.hpp"
#include "probe_models.hpp"

#include "spikeforge/models.hpp"

#include <cmath>

namespace {

using namespace spikeforge;

constexpr double kDt = 0.1;      // [ms]
constexpr unsigned kDelay = 3;   // axonal delay [steps]
constexpr unsigned kBack = 2;    // back-propagation delay [steps]
constexpr unsigned kSources = 3; // Ramp neurons
constexpr unsigned kSteps = 23;
constexpr double kNever = -1.0e29; // below it: no spike yet (spike times start at -1e30)

// After the update of step k (n = k + 1), V = n + id / 100 + batch / 1000; neuron id spikes where
// n is a multiple of id + 2, and its reset negates V, so a value read from the wrong step or
// from before the reset is off by at least 1.
NeuronModel ramp() {
    NeuronModel m;
    m.name = "Ramp";
    m.vars = {{"n", "uint32_t"}, {"V"}};
    m.simCode = "n += 1u;\nV = (scalar)n + 0.01 * (scalar)id + 0.001 * (scalar)batch;";
    m.thresholdConditionCode = "n % (id + 2u) == 0u";
    m.resetCode = "V = -V;";
    return m;
}

// The source's trajectory, as ramp() defines it.
struct Trajectory {
    double initialV[kSources];
    bool spikes(unsigned i, unsigned k) const { return (k + 1) % (i + 2) == 0; }
    // V after step k's update and reset; k < 0: the initial value.
    double v(unsigned batch, unsigned i, int k) const {
        if (k < 0) return initialV[i];
        const double x = (k + 1) + 0.01 * i + 0.001 * batch;
        return spikes(i, static_cast<unsigned>(k)) ? -x : x;
    }
    // The latest spike time at the end of step k (kNever before the first), and the one before.
    double st(unsigned i, int k, bool previous = false) const {
        double last = -1.0e30, before = -1.0e30;
        for (int s = 0; s <= k; s++)
            if (spikes(i, static_cast<unsigned>(s))) {
                before = last;
                last = s * kDt;
            }
        return previous ? before : last;
    }
    // Spikes of neuron i in steps 0 .. k.
    double count(unsigned i, int k) const {
        double n = 0;
        for (int s = 0; s <= k; s++)
            n += spikes(i, static_cast<unsigned>(s)) ? 1 : 0;
        return n;
    }
};

WeightUpdateModel code(const std::string& name, const std::string& pre,
                       const std::string& dynamics = "") {
    WeightUpdateModel w;
    w.name = name;
    w.preSpikeSynCode = pre;
    w.synapseDynamicsCode = dynamics;
    return w;
}

class DelayedVariables : public ::testing::TestWithParam<std::tuple<std::string, unsigned>> {
protected:
    unsigned batch() const { return std::get<1>(GetParam()); }
    BackendPreferences prefs() const { return sftest::preferencesFor(std::get<0>(GetParam())); }

    // Ramp with axonal-delayed readers into one target each, and a back-propagation-delayed
    // learner from Pre into Ramp.
    void build(Model& m, const VarInit& initialV) {
        m.setDT(kDt);
        m.setBatchSize(batch());
        m.setPrecision(Precision::Double);
        m.addNeuronGroup("Ramp", kSources, ramp(), {}, {{"n", 0.0}, {"V", initialV}});
        for (const char* t : {"SumV", "SumPrev", "DynV", "DynSt", "Now", "SumX"})
            m.addNeuronGroup(t, 2, sftest::accumulate(), {}, {{"acc", 0.0}});
        const auto delta = PostsynapticInit{models::DeltaCurr(), {}, {}};
        auto add = [&](const char* name, unsigned delay, const char* target,
                       const WeightUpdateModel& w) {
            m.addSynapseGroup(name, MatrixType::Dense, delay, "Ramp", target, {w, {}, {}, {}, {}},
                              delta);
        };
        add("SV", kDelay, "SumV", code("DelayedV", "addToPost(V_pre);"));
        add("SP", kDelay, "SumPrev",
            code("DelayedPrev", "if (prev_st_pre > -1.0) {\n    addToPost(prev_st_pre);\n}"));
        add("DV", kDelay, "DynV", code("DynamicsV", "", "addToPost(V_pre);"));
        add("DS", kDelay, "DynSt",
            code("DynamicsSt", "", "if (st_pre > -1.0) {\n    addToPost(st_pre);\n}"));
        add("NowV", 0, "Now", code("PresentV", "addToPost(V_pre);"));
        // A weight-update presynaptic variable (a spike count) is delayed like V_pre.
        WeightUpdateModel count = code("DelayedPreVar", "addToPost(x);");
        count.preVars = {{"x"}};
        count.preSpikeCode = "x += 1.0;";
        m.addSynapseGroup("SX", MatrixType::Dense, kDelay, "Ramp", "SumX",
                          {count, {}, {}, {{"x", 0.0}}, {}}, delta);

        m.addNeuronGroup("Pre", 2, sftest::accumulate(), {}, {{"acc", 0.0}});
        WeightUpdateModel learn;
        learn.name = "LearnDelayed";
        learn.vars = {{"a"}, {"b"}, {"c"}};
        learn.postVars = {{"y"}};
        learn.postSpikeCode = "y += 1.0;";
        learn.postSpikeSynCode = "a += V_post;\nb += st_post;\nc += y;";
        auto& back = m.addSynapseGroup(
            "Back", MatrixType::Dense, 0, "Pre", "Ramp",
            {learn, {}, {{"a", 0.0}, {"b", 0.0}, {"c", 0.0}}, {}, {{"y", 0.0}}}, delta);
        back.setBackPropDelaySteps(kBack);
    }

    // Sums over the source neurons of each reader's contributions in the steps run, by batch.
    static void expectReaders(Simulation& sim, const Trajectory& r, unsigned batches) {
        const int K = static_cast<int>(kSteps), d = static_cast<int>(kDelay);
        for (unsigned b = 0; b < batches; b++) {
            double sumV = 0, sumPrev = 0, dynV = 0, dynSt = 0, now = 0, sumX = 0;
            for (unsigned i = 0; i < kSources; i++) {
                for (int t = 0; t < K; t++) {
                    const int emitted = t - 1 - d; // the step whose spikes t delivers
                    if (emitted >= 0 && r.spikes(i, emitted)) {
                        sumV += r.v(b, i, emitted);
                        const double prev = r.st(i, emitted, true);
                        if (prev > -1.0) sumPrev += prev;
                        sumX += r.count(i, emitted);
                    }
                    dynV += r.v(b, i, emitted);
                    const double st = r.st(i, emitted);
                    if (st > -1.0) dynSt += st;
                    if (t >= 1 && r.spikes(i, t - 1)) now += r.v(b, i, t - 1);
                }
            }
            const std::pair<const char*, double> expected[] = {{"SumV", sumV}, {"SumPrev", sumPrev},
                                                               {"DynV", dynV}, {"DynSt", dynSt},
                                                               {"Now", now},   {"SumX", sumX}};
            for (const auto& [group, value] : expected) {
                sim.pull(group, "acc");
                const auto acc = sim.view<double>(group, "acc");
                for (unsigned j = 0; j < 2; j++)
                    EXPECT_NEAR(acc[b * 2 + j], value, 1e-9)
                        << group << ", batch " << b << ", target " << j;
            }
        }
    }

    // Back: every synapse (p, j) summed V and the time of each spike of Ramp neuron j delivered
    // kBack steps late: emitted in steps e with e + 1 + kBack < kSteps.
    static void expectLearner(Simulation& sim, const Trajectory& r, unsigned batches) {
        sim.pull("Back", "a");
        sim.pull("Back", "b");
        sim.pull("Back", "c");
        const auto a = sim.view<double>("Back", "a"), bv = sim.view<double>("Back", "b");
        const auto c = sim.view<double>("Back", "c");
        for (unsigned b = 0; b < batches; b++)
            for (unsigned j = 0; j < kSources; j++) {
                double sumV = 0, sumT = 0, sumY = 0;
                for (unsigned e = 0; e + 1 + kBack < kSteps; e++)
                    if (r.spikes(j, e)) {
                        sumV += r.v(b, j, static_cast<int>(e));
                        sumT += e * kDt;
                        sumY += r.count(j, static_cast<int>(e)); // y as the spike left it
                    }
                for (unsigned p = 0; p < 2; p++) {
                    const size_t syn = b * 2 * kSources + p * kSources + j;
                    EXPECT_NEAR(a[syn], sumV, 1e-9) << "batch " << b << ", synapse " << syn;
                    EXPECT_NEAR(bv[syn], sumT, 1e-9) << "batch " << b << ", synapse " << syn;
                    EXPECT_NEAR(c[syn], sumY, 1e-9) << "batch " << b << ", synapse " << syn;
                }
            }
    }
};

TEST_P(DelayedVariables, SynapseCodeReadsTheValuesOfTheEmittingStep) {
    Model m("delayed_variables");
    build(m, VarInit(std::vector<double>{0.5, 0.25, 0.125}));
    BackendPreferences p = prefs();
    p.keepInitialState = true;
    Simulation sim(m, p);
    const auto& ramp = m.neuronGroup("Ramp");
    EXPECT_EQ(ramp.delayedNames(), (std::set<std::string>{"V", "prev_st", "st"}));
    EXPECT_EQ(m.neuronGroup("SumV").delayedNames().size(), 0u);
    EXPECT_EQ(m.synapseGroup("SX").delayedNames(), (std::set<std::string>{"x"}));
    EXPECT_EQ(m.synapseGroup("Back").delayedNames(), (std::set<std::string>{"y"}));
    EXPECT_GE(ramp.numDelaySlots(), kDelay + 2);
    sim.run(kSteps);
    expectReaders(sim, {{0.5, 0.25, 0.125}}, batch());
    expectLearner(sim, {{0.5, 0.25, 0.125}}, batch());

    // After resetState (the targets' sums too) the run repeats exactly: the history is trial
    // state, restored with the rest.
    sim.resetState();
    sim.run(kSteps);
    expectReaders(sim, {{0.5, 0.25, 0.125}}, batch());
}

// Values pushed before the first step are the initial ones delayed code reads until the history
// fills (synapse dynamics reads them for the first kDelay + 1 steps).
TEST_P(DelayedVariables, PushBeforeTheFirstStepRefillsTheHistory) {
    Model m("delayed_push");
    build(m, 0.0);
    Simulation sim(m, prefs());
    sim.pull("Ramp", "V");
    const double pushed[kSources] = {2.0, -3.0, 7.0};
    auto v = sim.view<double>("Ramp", "V");
    for (unsigned b = 0; b < batch(); b++)
        for (unsigned i = 0; i < kSources; i++)
            v[b * kSources + i] = pushed[i];
    sim.push("Ramp", "V");
    sim.run(kSteps);
    expectReaders(sim, {{2.0, -3.0, 7.0}}, batch());
}

// st_post in postsynaptic learning with a back-propagation delay is the delivered spike's own
// time also where no code keeps a history of the target's spike times (here nothing else reads
// them): Ramp neuron 0 spikes every second step, so its latest spike is always a later one.
TEST_P(DelayedVariables, BackPropagatedStPostIsTheDeliveredSpikesTime) {
    Model m("st_post_delayed");
    m.setDT(kDt);
    m.setBatchSize(batch());
    m.setPrecision(Precision::Double);
    m.addNeuronGroup("Ramp", kSources, ramp(), {}, {{"n", 0.0}, {"V", 0.0}});
    m.addNeuronGroup("Pre", 2, sftest::accumulate(), {}, {{"acc", 0.0}});
    WeightUpdateModel learn;
    learn.name = "LearnTime";
    learn.vars = {{"b"}};
    learn.postSpikeSynCode = "b += st_post;";
    m.addSynapseGroup("Back", MatrixType::Dense, 0, "Pre", "Ramp",
                      {learn, {}, {{"b", 0.0}}, {}, {}}, {models::DeltaCurr(), {}, {}})
        .setBackPropDelaySteps(kBack);
    Simulation sim(m, prefs());
    EXPECT_TRUE(m.neuronGroup("Ramp").delayedNames().empty());
    sim.run(kSteps);
    const Trajectory r{{0.0, 0.0, 0.0}};
    for (unsigned b = 0; b < batch(); b++) {
        const auto bv = sim.synapseValues("Back", "b", b);
        for (unsigned p = 0; p < 2; p++)
            for (unsigned j = 0; j < kSources; j++) {
                double sumT = 0;
                for (unsigned e = 0; e + 1 + kBack < kSteps; e++)
                    if (r.spikes(j, e)) sumT += e * kDt;
                EXPECT_NEAR(bv[p * kSources + j], sumT, 1e-9) << "batch " << b << ", " << j;
            }
    }
}

TEST_P(DelayedVariables, ABackPropagationDelayTooLargeForTheQueueIsAModelError) {
    Model m("delayed_huge");
    build(m, 0.0);
    m.synapseGroup("Back").setBackPropDelaySteps(0xFFFFFFF0u);
    sftest::expectError<ModelError>([&] { Simulation sim(m, prefs()); },
                                    {"Back", "back-propagation delay"});
}

SF_INSTANTIATE_BACKEND_BATCH_TESTS(DelayedVariables, 1u, 3u);

} // namespace
