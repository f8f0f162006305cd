// Edges of spike delivery and recording that the broader tests pass over:
//  - a dendritic delay equal to the group's maximum is an error (docs/snippets.md), never a
//    wrap-around to zero delay, and the largest legal delay arrives exactly that many steps after
//    an undelayed addToPost;
//  - recorded spikes at batch > 1 come back as exactly the (time, neuron, batch) triples emitted,
//    with a different pattern per batch element and more than one 32-bit word per step.
#include "backend_fixture.hpp"
#include "spikeforge/models.hpp"
#include "test_edges_common.hpp"

#include <algorithm>
#include <cmath>

using namespace spikeforge;

namespace {

constexpr double kDt = 1.0; // [ms]

// x holds this step's input only, so the step in which an input arrives is visible.
NeuronModel lastInput() {
    NeuronModel n;
    n.name = "LastInput";
    n.vars = {{"x"}};
    n.simCode = "x = Isyn;";
    return n;
}

// ---- dendritic delay at and below the maximum ----

class DendriticDelayEdgeTest : public sftest::BackendTest {
protected:
    static constexpr unsigned kSpikeStep = 2;
    static constexpr float kWeight = 0.75f;

    // One source spike (at kSpikeStep) reaches "Direct" through StaticPulse and "Delayed"
    // through StaticPulseDendriticDelay with delay d.
    static void build(Model& m, unsigned maxDelay) {
        m.setDT(kDt);
        m.addNeuronGroup("Src", 1, models::SpikeSourceArray(), {},
                         {{"startSpike", 0.0}, {"endSpike", 0.0}});
        m.addNeuronGroup("Direct", 1, lastInput(), {}, {{"x", 0.0}});
        m.addNeuronGroup("Delayed", 1, lastInput(), {}, {{"x", 0.0}});
        m.addSynapseGroup("Now", MatrixType::Dense, 0, "Src", "Direct",
                          {models::StaticPulse(), {}, {{"g", kWeight}}, {}, {}},
                          {models::DeltaCurr(), {}, {}});
        m.addSynapseGroup(
             "Later", MatrixType::Dense, 0, "Src", "Delayed",
             {models::StaticPulseDendriticDelay(), {}, {{"g", kWeight}, {"d", 0.0}}, {}, {}},
             {models::DeltaCurr(), {}, {}})
            .setMaxDendriticDelaySteps(maxDelay);
    }

    static void prepare(Simulation& sim, unsigned d) {
        sftest::scriptSpikeSteps(sim, "Src", 1, 1, kDt, [](unsigned, unsigned) {
            return std::vector<unsigned>{kSpikeStep};
        });
        sim.pull("Later", "d");
        sim.view<uint8_t>("Later", "d")[0] = static_cast<uint8_t>(d);
        sim.push("Later", "d");
    }
};

TEST_P(DendriticDelayEdgeTest, DelayEqualToMaximumIsAnError) {
    for (unsigned maxDelay : {1u, 5u}) {
        Model m("dendritic_edge_max");
        build(m, maxDelay);
        Simulation sim(m, prefs());
        prepare(sim, maxDelay);
        // The spike emitted at kSpikeStep is delivered by the synapse update of the next step.
        // Device-side errors are read at sync points: a pull after each step.
        for (unsigned n = 0; n <= kSpikeStep; n++)
            ASSERT_NO_THROW({
                sim.step();
                sim.pull("Delayed", "x");
            }) << "max "
               << maxDelay << " step " << n;
        try {
            sim.step();
            sim.pull("Delayed", "x");
            ADD_FAILURE() << "a delay of " << maxDelay << " = the maximum was accepted";
        } catch (const ModelError& e) {
            const std::string what = e.what();
            EXPECT_NE(what.find("'Later'"), std::string::npos) << what;
            EXPECT_NE(what.find("addToPostDelay"), std::string::npos) << what;
            EXPECT_NE(what.find(std::to_string(maxDelay)), std::string::npos) << what;
        }
        // Nothing was delivered in the meantime: a wrapped ring slot would show up as input now.
        sim.pull("Delayed", "x");
        EXPECT_EQ(sim.view<float>("Delayed", "x")[0], 0.0f) << "max " << maxDelay;
    }
}

TEST_P(DendriticDelayEdgeTest, LargestLegalDelayArrivesThatManyStepsLater) {
    for (unsigned maxDelay : {1u, 5u}) {
        Model m("dendritic_edge_largest");
        build(m, maxDelay);
        Simulation sim(m, prefs());
        const unsigned d = maxDelay - 1;
        prepare(sim, d);
        std::vector<unsigned> directAt, delayedAt;
        for (unsigned n = 0; n < kSpikeStep + 2 * maxDelay + 4; n++) {
            sim.step();
            sim.pull("Direct", "x");
            sim.pull("Delayed", "x");
            const float direct = sim.view<float>("Direct", "x")[0];
            const float delayed = sim.view<float>("Delayed", "x")[0];
            if (direct != 0.0f) {
                EXPECT_EQ(direct, kWeight) << "step " << n;
                directAt.push_back(n);
            }
            if (delayed != 0.0f) {
                EXPECT_EQ(delayed, kWeight) << "step " << n;
                delayedAt.push_back(n);
            }
        }
        ASSERT_EQ(directAt.size(), 1u) << "max " << maxDelay;
        ASSERT_EQ(delayedAt.size(), 1u) << "max " << maxDelay;
        EXPECT_EQ(directAt[0], kSpikeStep + 1); // the next step's synapse update delivers it
        EXPECT_EQ(delayedAt[0], directAt[0] + d) << "max " << maxDelay;
    }
}

SF_INSTANTIATE_BACKEND_TESTS(DendriticDelayEdgeTest);

// ---- recording at batch > 1 ----

class BatchRecordingTest : public sftest::BackendTest {};

// 40 neurons (two 32-bit words per step), batch 3: neuron i of batch element b spikes at step n
// when the pattern says so; every batch element differs, and neurons past 31 spike too.
bool batchPattern(unsigned b, unsigned i, unsigned n) {
    return (n * (i + 3) + 5 * b * (i + 1) + 7 * b) % 13 < 2 + b;
}

TEST_P(BatchRecordingTest, RecordedTriplesMatchThePerBatchPattern) {
    constexpr unsigned kN = 40, kBatch = 3, kBefore = 3, kWindow = 24;
    Model m("batch_recording");
    m.setDT(kDt);
    m.setBatchSize(kBatch);
    m.addNeuronGroup("Src", kN, models::SpikeSourceArray(), {},
                     {{"startSpike", 0.0}, {"endSpike", 0.0}})
        .setSpikeRecording(true);
    Simulation sim(m, prefs());
    sftest::scriptSpikeSteps(sim, "Src", kBatch, kN, kDt, [](unsigned b, unsigned i) {
        std::vector<unsigned> steps;
        for (unsigned n = 1; n < kBefore + kWindow; n++)
            if (batchPattern(b, i, n)) steps.push_back(n);
        return steps;
    });
    // The window starts after a few unrecorded steps, so a recorded step's time is offset.
    sim.run(kBefore);
    sim.setRecordingWindow(kWindow);
    sim.run(kWindow);
    sim.pullRecording();

    // Expected order: by time, then batch element, then neuron.
    std::vector<SpikeEvent> expected;
    std::vector<unsigned> perBatch(kBatch, 0);
    for (unsigned n = kBefore; n < kBefore + kWindow; n++)
        for (unsigned b = 0; b < kBatch; b++)
            for (unsigned i = 0; i < kN; i++)
                if (batchPattern(b, i, n)) {
                    expected.push_back({n * kDt, i, b});
                    perBatch[b]++;
                }
    // The pattern is genuinely per batch element and reaches the second word.
    for (unsigned b = 0; b + 1 < kBatch; b++)
        ASSERT_NE(perBatch[b], perBatch[b + 1]);
    ASSERT_TRUE(std::any_of(expected.begin(), expected.end(),
                            [](const SpikeEvent& e) { return e.neuron >= 32; }));

    const auto got = sim.spikes("Src");
    ASSERT_EQ(got.size(), expected.size());
    for (size_t k = 0; k < got.size(); k++)
        ASSERT_EQ(got[k], expected[k])
            << "event " << k << ": got (" << got[k].time << ", " << got[k].neuron << ", "
            << got[k].batch << "), expected (" << expected[k].time << ", " << expected[k].neuron
            << ", " << expected[k].batch << ")";
}

SF_INSTANTIATE_BACKEND_TESTS(BatchRecordingTest);

} // namespace
