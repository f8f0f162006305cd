// Spike-like events (GeNN's): a condition on the presynaptic (postsynaptic) neuron, tested after
// its simCode and before its reset; preEventSynCode (postEventSynCode) runs once per event and
// synapse, through the same propagation as spikes, with axonal and back-propagation delays, and
// beside spike code of the same group; events are recorded and counted like spikes, and set_pre
// is the event's time (the last event's elsewhere, -1e30 before the first). Every expected
// value comes from the closed form of the source's trajectory, on every backend at batch 1 and 3.
#include "backend_fixture.hpp"
#include "probe_models.hpp"

#include "spikeforge/models.hpp"

#include <tuple>

namespace {

using namespace spikeforge;

constexpr double kDt = 0.5;   // [ms]
constexpr unsigned kWave = 4; // neurons
constexpr unsigned kSteps = 17;
constexpr unsigned kDelay = 2; // axonal delay of ED [steps]

// After step k's update V = (k + 1 + id + batch) mod 5; a spike at 4, whose reset sets V to 0.
// The event condition V > 2.5 holds at 3 and 4: at 4 only if tested before the reset.
NeuronModel wave() {
    NeuronModel m;
    m.name = "Wave";
    m.vars = {{"n", "uint32_t"}, {"V"}};
    m.simCode = "n += 1u;\nV = (scalar)((n + id + batch) % 5u);";
    m.thresholdConditionCode = "V > 3.5";
    m.resetCode = "V = 0.0;";
    return m;
}

bool event(unsigned batch, unsigned i, unsigned k) {
    return (k + 1 + i + batch) % 5 >= 3;
}

bool spike(unsigned batch, unsigned i, unsigned k) {
    return (k + 1 + i + batch) % 5 == 4;
}

constexpr unsigned kBack = 1; // back-propagation delay of P [steps]

class SpikeEvents : public ::testing::TestWithParam<std::tuple<std::string, unsigned>> {
protected:
    unsigned batch() const { return std::get<1>(GetParam()); }
    BackendPreferences prefs() const { return sftest::preferencesFor(std::get<0>(GetParam())); }

    static WeightUpdateModel preEvents(const std::string& name, const std::string& code) {
        WeightUpdateModel w;
        w.name = name;
        w.params = {"theta"};
        w.preEventThresholdConditionCode = "V_pre > theta";
        w.preEventSynCode = code;
        return w;
    }

    void build(Model& m, MatrixType learner) {
        m.setDT(kDt);
        m.setBatchSize(batch());
        m.setPrecision(Precision::Double);
        m.addNeuronGroup("Wave", kWave, wave(), {}, {{"n", 0.0}, {"V", 0.0}});
        for (const char* t : {"Count", "Times", "TimesNow", "Before", "Both"})
            m.addNeuronGroup(t, 2, sftest::accumulate(), {}, {{"acc", 0.0}});
        const auto delta = PostsynapticInit{models::DeltaCurr(), {}, {}};
        auto& e = m.addSynapseGroup(
            "E", MatrixType::Dense, 0, "Wave", "Count",
            {preEvents("CountEvents", "addToPost(1.0);"), {{"theta", 2.5}}, {}, {}, {}}, delta);
        e.setPreEventRecording(true);
        m.addSynapseGroup(
            "ED", MatrixType::Dense, kDelay, "Wave", "Times",
            {preEvents("EventTimes", "addToPost(set_pre);"), {{"theta", 2.5}}, {}, {}, {}}, delta);
        m.addSynapseGroup(
            "ES", MatrixType::Dense, 0, "Wave", "TimesNow",
            {preEvents("EventTimesNow", "addToPost(set_pre);"), {{"theta", 2.5}}, {}, {}, {}},
            delta);
        // set_pre outside event code: the last event's time, -1e30 before the first.
        WeightUpdateModel before = preEvents("BeforeFirst", "");
        before.synapseDynamicsCode = "if (set_pre < -1.0e29) {\n    addToPost(1.0);\n}";
        m.addSynapseGroup("B", MatrixType::Dense, 0, "Wave", "Before",
                          {before, {{"theta", 2.5}}, {}, {}, {}}, delta);
        // Spike and event code of one group: both add to the targets and count per synapse.
        WeightUpdateModel both = preEvents("Both", "addToPost(1.0);\nc += 1.0;");
        both.vars = {{"c"}};
        both.preSpikeSynCode = "addToPost(10.0);\nc += 1.0;";
        m.addSynapseGroup("SE", MatrixType::Dense, 0, "Wave", "Both",
                          {both, {{"theta", 2.5}}, {{"c", 0.0}}, {}, {}}, delta);
        // Postsynaptic events on Wave: every synapse from Src counts its target's events, kBack
        // steps late.
        m.addNeuronGroup("Src", 2, sftest::accumulate(), {}, {{"acc", 0.0}});
        WeightUpdateModel post;
        post.name = "PostEvents";
        post.params = {"theta"};
        post.vars = {{"w"}};
        post.postEventThresholdConditionCode = "V_post > theta";
        post.postEventSynCode = "w += 1.0;";
        if (learner == MatrixType::Sparse)
            m.addSynapseGroup("P", learner, 0, "Src", "Wave",
                              {post, {{"theta", 2.5}}, {{"w", 0.0}}, {}, {}}, delta,
                              init::FixedProbability(1.0));
        else
            m.addSynapseGroup("P", learner, 0, "Src", "Wave",
                              {post, {{"theta", 2.5}}, {{"w", 0.0}}, {}, {}}, delta);
        m.synapseGroup("P").setPostEventRecording(true);
        m.synapseGroup("P").setBackPropDelaySteps(kBack);
    }

    void checkRun(Simulation& sim) {
        const unsigned B = batch();
        for (unsigned b = 0; b < B; b++) {
            double count = 0, times = 0, timesNow = 0, before = 0, both = 0;
            std::vector<double> bothPerSource(kWave, 0.0);
            for (unsigned i = 0; i < kWave; i++) {
                for (unsigned k = 0; k + 1 < kSteps; k++) { // delivered at k + 1
                    bothPerSource[i] += (event(b, i, k) ? 1 : 0) + (spike(b, i, k) ? 1 : 0);
                    both += (event(b, i, k) ? 1 : 0) + (spike(b, i, k) ? 10 : 0);
                    count += event(b, i, k) ? 1 : 0;
                    timesNow += event(b, i, k) ? k * kDt : 0.0;
                }
                for (unsigned k = 0; k + 1 + kDelay < kSteps; k++) // delivered at k + 3
                    times += event(b, i, k) ? k * kDt : 0.0;
                for (unsigned t = 0; t < kSteps; t++) { // no event in the steps before t
                    bool any = false;
                    for (unsigned k = 0; k < t; k++)
                        any = any || event(b, i, k);
                    before += any ? 0 : 1;
                }
            }
            const std::pair<const char*, double> expected[] = {{"Count", count},
                                                               {"Times", times},
                                                               {"TimesNow", timesNow},
                                                               {"Before", before},
                                                               {"Both", both}};
            for (const auto& [group, value] : expected) {
                sim.pull(group, "acc");
                for (unsigned j = 0; j < 2; j++)
                    EXPECT_NEAR(sim.view<double>(group, "acc")[b * 2 + j], value, 1e-9)
                        << group << ", batch " << b;
            }
            const auto c = sim.synapseValues("SE", "c", b);
            const auto pairs = sim.synapses("SE");
            for (size_t x = 0; x < pairs.size(); x++)
                EXPECT_NEAR(c[x], bothPerSource[pairs[x].pre], 1e-9) << "batch " << b;
        }
        // Recording: every event of the run, in time, batch, neuron order; the pre and post
        // streams of Wave hold the same events.
        std::vector<std::tuple<double, unsigned, unsigned>> want;
        for (unsigned k = 0; k < kSteps; k++)
            for (unsigned b = 0; b < B; b++)
                for (unsigned i = 0; i < kWave; i++)
                    if (event(b, i, k)) want.emplace_back(k * kDt, b, i);
        for (const bool pre : {true, false}) {
            const auto got = sim.spikeEvents(pre ? "E" : "P", pre);
            ASSERT_EQ(got.size(), want.size()) << (pre ? "pre" : "post");
            for (size_t x = 0; x < want.size(); x++) {
                EXPECT_NEAR(got[x].time, std::get<0>(want[x]), 1e-9);
                EXPECT_EQ(got[x].batch, std::get<1>(want[x]));
                EXPECT_EQ(got[x].neuron, std::get<2>(want[x]));
            }
        }
        // The last step's events, and the learner's per-synapse counts (every synapse of target
        // i counted i's events delivered by the end).
        const auto last = sim.currentSpikeEvents("E");
        ASSERT_EQ(last.size(), B);
        const auto synapses = sim.synapses("P");
        ASSERT_EQ(synapses.size(), 2u * kWave);
        for (unsigned b = 0; b < B; b++) {
            const auto w = sim.synapseValues("P", "w", b);
            std::vector<uint32_t> expected;
            for (unsigned i = 0; i < kWave; i++)
                if (event(b, i, kSteps - 1)) expected.push_back(i);
            EXPECT_EQ(last[b], expected) << "batch " << b;
            for (size_t s = 0; s < synapses.size(); s++) {
                double n = 0;
                for (unsigned k = 0; k + 1 + kBack < kSteps; k++)
                    n += event(b, synapses[s].post, k) ? 1 : 0;
                EXPECT_NEAR(w[s], n, 1e-9) << "batch " << b << ", synapse " << s;
            }
        }
    }
};

TEST_P(SpikeEvents, FireWhereTheConditionHoldsAndRunOncePerEventAndSynapse) {
    for (const MatrixType learner : {MatrixType::Dense, MatrixType::Sparse}) {
        Model m("spike_events");
        build(m, learner);
        Simulation sim(m, prefs());
        sim.setRecordingWindow(kSteps);
        sim.run(kSteps);
        checkRun(sim);
    }
}

TEST_P(SpikeEvents, EventCodeWithoutAConditionIsAModelError) {
    Model m("events_without_condition");
    build(m, MatrixType::Dense);
    WeightUpdateModel w;
    w.name = "NoCondition";
    w.preEventSynCode = "addToPost(1.0);";
    m.addSynapseGroup("Bad", MatrixType::Dense, 0, "Wave", "Count", {w, {}, {}, {}, {}},
                      {models::DeltaCurr(), {}, {}});
    sftest::expectError<ModelError>([&] { Simulation sim(m, prefs()); },
                                    {"Bad", "preEventSynCode", "preEventThresholdConditionCode"});
}

TEST_P(SpikeEvents, AConditionThatAssignsIsRefusedAtItsPosition) {
    Model m("events_assigning");
    build(m, MatrixType::Dense);
    WeightUpdateModel w;
    w.name = "Assigning";
    w.preEventThresholdConditionCode = "(V_pre = 1.0) > 0.0";
    m.addSynapseGroup("Bad", MatrixType::Dense, 0, "Wave", "Count", {w, {}, {}, {}, {}},
                      {models::DeltaCurr(), {}, {}});
    sftest::expectError<ModelError>([&] { Simulation sim(m, prefs()); },
                                    {"Bad.preEventThresholdConditionCode line 1, column"});
}

TEST_P(SpikeEvents, SetPreWithoutAConditionIsAModelError) {
    Model m("set_pre_without_condition");
    build(m, MatrixType::Dense);
    WeightUpdateModel w;
    w.name = "ReadsSetPre";
    w.preSpikeSynCode = "addToPost(set_pre);";
    m.addSynapseGroup("Bad", MatrixType::Dense, 0, "Wave", "Count", {w, {}, {}, {}, {}},
                      {models::DeltaCurr(), {}, {}});
    sftest::expectError<ModelError>(
        [&] { Simulation sim(m, prefs()); },
        {"Bad", "preSpikeSynCode", "set_pre", "preEventThresholdConditionCode"});
}

TEST_P(SpikeEvents, UnrecordedEventsAreAModelErrorToRead) {
    Model m("events_unrecorded");
    build(m, MatrixType::Dense);
    Simulation sim(m, prefs());
    sim.run(2);
    sftest::expectError<ModelError>([&] { (void)sim.spikeEvents("ED"); },
                                    {"'ED'", "setPreEventRecording"});
    sftest::expectError<ModelError>([&] { (void)sim.currentSpikeEvents("ED", false); },
                                    {"'ED'", "postEventThresholdConditionCode"});
}

SF_INSTANTIATE_BACKEND_BATCH_TESTS(SpikeEvents, 1u, 3u);

// Event propagation runs each layout's own row loop: every event of a source adds g of each of
// its synapses to the synapse's target, one step later.
class SpikeEventLayouts : public ::testing::TestWithParam<std::tuple<std::string, MatrixType>> {};

TEST_P(SpikeEventLayouts, EveryLayoutDeliversEachEventToEachSynapse) {
    const auto& [backend, type] = GetParam();
    const bool kernel = type == MatrixType::Toeplitz;
    const unsigned pre = kernel ? 16 : 20, post = kernel ? 8 : 24;
    Model m("event_layouts");
    m.setDT(kDt);
    m.setBatchSize(2);
    m.setPrecision(Precision::Double);
    m.addNeuronGroup("Wave", pre, wave(), {}, {{"n", 0.0}, {"V", 0.0}});
    m.addNeuronGroup("Post", post, sftest::accumulate(), {}, {{"acc", 0.0}});
    WeightUpdateModel w;
    w.name = "EventWeights";
    w.vars = {{"g", "scalar", VarAccess::ReadOnly}};
    w.preEventThresholdConditionCode = "V_pre > 2.5";
    w.preEventSynCode = "addToPost(g);";
    InitSnippet weights;
    weights.name = kernel ? "KernelWeights" : "PairWeights";
    weights.code = kernel ? "value = 0.1 * (1 + id % 7);"
                          : "value = 0.1 * (1 + (id_pre * 7 + id_post * 3) % 11);";
    const WeightUpdateInit wu{w, {}, {{"g", VarInit(weights, {})}}, {}, {}};
    const PostsynapticInit ps{models::DeltaCurr(), {}, {}};
    switch (type) {
    case MatrixType::Dense:
        m.addSynapseGroup("Syn", type, 0, "Wave", "Post", wu, ps);
        break;
    case MatrixType::Sparse:
    case MatrixType::Procedural:
        m.addSynapseGroup("Syn", type, 0, "Wave", "Post", wu, ps, init::FixedProbability(0.5));
        break;
    case MatrixType::BlockSparse: {
        BlockSparseInit b;
        b.blockSize = 8;
        b.density = 0.5;
        m.addSynapseGroup("Syn", type, 0, "Wave", "Post", wu, ps, b);
        break;
    }
    case MatrixType::Toeplitz:
        m.addSynapseGroup("Syn", type, 0, "Wave", "Post", wu, ps, sftest::conv4x4());
        break;
    }
    Simulation sim(m, sftest::preferencesFor(backend));
    const auto synapses = sim.synapses("Syn");
    ASSERT_FALSE(synapses.empty());
    const auto g = sim.synapseValues("Syn", "g");
    sim.run(kSteps);
    sim.pull("Post", "acc");
    const auto acc = sim.view<double>("Post", "acc");
    for (unsigned b = 0; b < 2; b++) {
        std::vector<double> expected(post, 0.0);
        for (size_t x = 0; x < synapses.size(); x++)
            for (unsigned k = 0; k + 1 < kSteps; k++)
                if (event(b, synapses[x].pre, k)) expected[synapses[x].post] += g[x];
        for (unsigned j = 0; j < post; j++)
            EXPECT_NEAR(acc[b * post + j], expected[j], 1e-9) << "batch " << b << ", target " << j;
    }
}

INSTANTIATE_TEST_SUITE_P(Backends, SpikeEventLayouts,
                         ::testing::Combine(::testing::ValuesIn(sftest::suiteBackends()),
                                            ::testing::Values(MatrixType::Dense, MatrixType::Sparse,
                                                              MatrixType::Procedural,
                                                              MatrixType::BlockSparse,
                                                              MatrixType::Toeplitz)),
                         [](const auto& info) {
                             return std::get<0>(info.param) + "_" +
                                    std::string(matrixTypeName(std::get<1>(info.param)));
                         });

} // namespace
