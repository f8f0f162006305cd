// prev_st, the spike time before the last (GeNN's prev_st): in neuron code, as prev_st_pre in
// synapse code and through a custom-update reference, after three spikes; and st_pre in the
// spike code of a delayed group: the time of the spike being delivered, not the source's latest.
// On every backend, batch 2.
#include "backend_fixture.hpp"
#include "probe_models.hpp"

#include "spikeforge/models.hpp"

#include <limits>
#include <string>

namespace {

using namespace spikeforge;

constexpr double kDt = 0.1; // [ms]
constexpr double kNever = -1.0e29;

// Spikes in steps 2, 5 and 9 (t = 0.2, 0.5, 0.9 ms); `seen` is prev_st as the step's code saw it,
// before the step's own spike.
NeuronModel tick() {
    NeuronModel m;
    m.name = "Tick";
    m.vars = {{"n", "uint32_t"}, {"seen"}};
    m.simCode = "n += 1u;\nseen = prev_st;";
    m.thresholdConditionCode = "n == 3u || n == 6u || n == 10u";
    return m;
}

class PrevSpikeTime : public sftest::BackendTest {};

TEST_P(PrevSpikeTime, IsTheSpikeBeforeTheLastEverywhere) {
    Model m("prev_spike_time");
    m.setDT(kDt);
    m.setBatchSize(2);
    m.setPrecision(Precision::Double);
    m.addNeuronGroup("Tick", 3, tick(), {}, {{"n", 0.0}, {"seen", 0.0}});
    m.addNeuronGroup("Post", 2, sftest::accumulate(), {}, {{"acc", 0.0}});
    WeightUpdateModel prev;
    prev.name = "Prev";
    prev.preSpikeSynCode = "if (prev_st_pre > -1.0) {\n    addToPost(prev_st_pre);\n}";
    m.addSynapseGroup("S", MatrixType::Dense, 0, "Tick", "Post", {prev, {}, {}, {}, {}},
                      {models::DeltaCurr(), {}, {}});
    CustomUpdateModel copy;
    copy.name = "Copy";
    copy.vars = {{"p"}};
    copy.varRefs = {{"r", "scalar", CustomUpdateVarAccess::ReadOnly}};
    copy.updateCode = "p = r;";
    m.addCustomUpdate("Read", "Read", copy, {}, {{"p", 0.0}}, {{"r", {"Tick", "prev_st"}}});
    Simulation sim(m, prefs());
    EXPECT_TRUE(m.neuronGroup("Tick").prevSpikeTimeRequired());
    EXPECT_FALSE(m.neuronGroup("Post").prevSpikeTimeRequired());

    sim.run(5); // one spike (step 2): no spike before it
    sim.pull("Tick", "seen");
    for (double v : sim.view<double>("Tick", "seen"))
        EXPECT_LT(v, kNever);
    sim.run(7); // steps 5..11: spikes in steps 5 and 9
    sim.customUpdate("Read");
    sim.pull("Tick", "seen");
    for (double v : sim.view<double>("Tick", "seen"))
        EXPECT_NEAR(v, 0.5, 1e-12); // at step 11: the spike before the last (0.9) was at 0.5
    sim.pull("Read", "p");
    for (double v : sim.view<double>("Read", "p"))
        EXPECT_NEAR(v, 0.5, 1e-12);
    // Deliveries in steps 3, 6 and 10 saw prev_st_pre -1e30 (not added), 0.2 and 0.5; three
    // sources per target.
    sim.pull("Post", "acc");
    for (double v : sim.view<double>("Post", "acc"))
        EXPECT_NEAR(v, 3 * (0.2 + 0.5), 1e-12);
}

// Spikes in steps 2 and 4 with an axonal delay of 3: delivered in steps 6 and 8, when the
// source's latest spike is already the one of step 4. st_pre is each delivered spike's own time.
TEST_P(PrevSpikeTime, DelayedSpikeCodeSeesTheDeliveredSpikesTime) {
    NeuronModel twice;
    twice.name = "Twice";
    twice.vars = {{"n", "uint32_t"}};
    twice.simCode = "n += 1u;";
    twice.thresholdConditionCode = "n == 3u || n == 5u";
    Model m("st_pre_delayed");
    m.setDT(kDt);
    m.setBatchSize(2);
    m.setPrecision(Precision::Double);
    m.addNeuronGroup("Src", 2, twice, {}, {{"n", 0.0}});
    NeuronModel acc;
    acc.name = "Acc";
    acc.vars = {{"acc"}, {"deliveries", "uint32_t"}};
    acc.simCode = "acc += Isyn;\nif (Isyn != 0.0) {\n    deliveries += 1u;\n}";
    m.addNeuronGroup("Post", 3, acc, {}, {{"acc", 0.0}, {"deliveries", 0.0}});
    WeightUpdateModel when;
    when.name = "When";
    when.preSpikeSynCode = "addToPost(st_pre);";
    m.addSynapseGroup("S", MatrixType::Dense, 3, "Src", "Post", {when, {}, {}, {}, {}},
                      {models::DeltaCurr(), {}, {}});
    Simulation sim(m, prefs());
    sim.run(10);
    sim.pull("Post", "acc");
    sim.pull("Post", "deliveries");
    const auto got = sim.view<double>("Post", "acc");
    const auto deliveries = sim.view<uint32_t>("Post", "deliveries");
    for (size_t i = 0; i < got.size(); i++) {
        EXPECT_EQ(deliveries[i], 2u);
        EXPECT_NEAR(got[i], 2 * (0.2 + 0.4), 1e-12) << "element " << i; // two sources
    }
}

// Before a neuron's first spike its st and prev_st are GeNN's "never", the lowest finite value
// of the model's precision (-FLT_MAX, -DBL_MAX), and so are st_pre and prev_st_pre in synapse
// code; after one spike prev_st is still "never".
TEST_P(PrevSpikeTime, NeverIsTheLowestValueOfThePrecision) {
    for (const Precision precision : {Precision::Float, Precision::Double}) {
        NeuronModel once;
        once.name = "Once";
        once.vars = {{"n", "uint32_t"}, {"st0"}, {"prev0"}};
        once.simCode = "n += 1u;\nst0 = st;\nprev0 = prev_st;";
        once.thresholdConditionCode = "n == 2u";
        Model m(std::string("spike_time_never_") + toString(precision));
        m.setDT(kDt);
        m.setPrecision(precision);
        m.addNeuronGroup("Once", 2, once, {}, {{"n", 0.0}, {"st0", 0.0}, {"prev0", 0.0}});
        m.addNeuronGroup("Post", 2, sftest::accumulate(), {}, {{"acc", 0.0}});
        WeightUpdateModel read;
        read.name = "ReadTimes";
        read.vars = {{"stPre"}, {"prevPre"}};
        read.synapseDynamicsCode = "stPre = st_pre;\nprevPre = prev_st_pre;";
        m.addSynapseGroup("S", MatrixType::Dense, 0, "Once", "Post",
                          {read, {}, {{"stPre", 0.0}, {"prevPre", 0.0}}, {}, {}},
                          {models::DeltaCurr(), {}, {}});
        Simulation sim(m, prefs());
        const double never = precision == Precision::Float
                                 ? static_cast<double>(std::numeric_limits<float>::lowest())
                                 : std::numeric_limits<double>::lowest();
        auto value = [&](const std::string& group, const std::string& var, size_t i) {
            sim.pull(group, var);
            return precision == Precision::Float
                       ? static_cast<double>(sim.view<float>(group, var)[i])
                       : sim.view<double>(group, var)[i];
        };
        sim.run(1); // step 0: no spike yet
        EXPECT_EQ(value("Once", "st0", 0), never) << toString(precision);
        EXPECT_EQ(value("Once", "prev0", 0), never) << toString(precision);
        EXPECT_EQ(value("S", "stPre", 0), never) << toString(precision);
        EXPECT_EQ(value("S", "prevPre", 0), never) << toString(precision);
        sim.run(2); // step 1 spikes; step 2 sees st = 0.1 ms and no spike before it
        EXPECT_NEAR(value("Once", "st0", 0), 0.1, 1e-6) << toString(precision);
        EXPECT_EQ(value("Once", "prev0", 0), never) << toString(precision);
    }
}

} // namespace

SF_INSTANTIATE_BACKEND_TESTS(PrevSpikeTime);
