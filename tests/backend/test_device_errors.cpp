// Device-side errors are latched on the device and read only at sync points (pull, recording
// flush, end of run, reset, checkErrors, every errorCheckInterval steps): step() alone copies
// nothing back, and an error is reported once, never lost, with the steps it happened in.
#include "backend_fixture.hpp"

#include "spikeforge/models.hpp"

#include <string>
#include <vector>

using namespace spikeforge;
using sftest::errorOf;
using sftest::expectContains;

namespace {

// Writes past the end of a local array in step `badStep` only (k counts the steps).
NeuronModel faultyAt(unsigned badStep) {
    NeuronModel nm;
    nm.name = "FaultyAt";
    nm.vars = {VarDecl{"V"}, VarDecl{"k", "unsigned int"}};
    nm.simCode = "scalar h[4];\nunsigned int i = 0u;\nif (k == " + std::to_string(badStep) +
                 "u) i = 4u;\nh[i] = 1.0;\nV += h[i];\nk++;";
    return nm;
}

void addFaulty(Model& m, const std::string& name, unsigned badStep) {
    m.addNeuronGroup(name, 2, faultyAt(badStep), {}, {{"V", 0.0}, {"k", 0.0}});
}

class DeviceErrors : public sftest::BackendTest {
protected:
    BackendPreferences prefsEvery(uint64_t interval) const {
        BackendPreferences p = prefs(1);
        p.errorCheckInterval = interval;
        return p;
    }
};

TEST_P(DeviceErrors, ErrorInAStepIsReportedAtTheNextPullWithItsStepRange) {
    Model m("err_pull");
    addFaulty(m, "Cell", 4);
    Simulation sim(m, prefs(1));
    for (int i = 0; i < 10; i++)
        ASSERT_NO_THROW(sim.step()) << "step " << i;
    const std::string err = errorOf<ModelError>([&] { sim.pull("Cell", "V"); });
    expectContains(err, {"Cell.simCode", "index out of range for 'h'", "in steps 0 to 9"});
    // The pull itself was done: the mirror holds the device values of step 9.
    EXPECT_FLOAT_EQ(sim.view<float>("Cell", "V")[0], 10.0f);
    // Reported once: the flags were cleared.
    EXPECT_NO_THROW(sim.pull("Cell", "V"));
    EXPECT_NO_THROW(sim.checkErrors());
}

TEST_P(DeviceErrors, StepAloneCopiesNothingBack) {
    Model m("err_nocopy");
    addFaulty(m, "Cell", 1000000);
    m.addNeuronGroup("Other", 3, models::LIF(),
                     {{"C", 1.0},
                      {"TauM", 20.0},
                      {"Vrest", -70.0},
                      {"Vreset", -70.0},
                      {"Vthresh", -50.0},
                      {"Ioffset", 0.0},
                      {"TauRefrac", 2.0}},
                     {{"V", -70.0}, {"RefracTime", 0.0}});
    for (const char* name : {"S", "T", "U"})
        m.addSynapseGroup(name, MatrixType::Dense, 0, "Other", "Cell",
                          {models::StaticPulse(), {}, {{"g", 1.0}}, {}, {}},
                          {models::DeltaCurr(), {}, {}});
    Simulation sim(m, prefs(1));
    const DeviceTransfers before = sim.transfers();
    for (int i = 0; i < 200; i++)
        sim.step();
    const DeviceTransfers after = sim.transfers();
    EXPECT_EQ(after.fromDevice, before.fromDevice);
    EXPECT_EQ(after.toDevice, before.toDevice);
    // A sync point reads every latched word (the snippet slots and one word per synapse group)
    // with one copy, however many synapse groups there are.
    sim.checkErrors();
    EXPECT_EQ(sim.transfers().fromDevice, after.fromDevice + 1);
}

TEST_P(DeviceErrors, IntervalChecksEveryNStepsWithTheRangeSinceTheLastCheck) {
    Model m("err_interval");
    addFaulty(m, "Cell", 7);
    Simulation sim(m, prefsEvery(5));
    const uint64_t start = sim.transfers().fromDevice;
    for (int i = 0; i < 5; i++)
        ASSERT_NO_THROW(sim.step()) << "step " << i;
    EXPECT_EQ(sim.transfers().fromDevice, start + 1) << "one check after 5 steps";
    for (int i = 5; i < 9; i++)
        ASSERT_NO_THROW(sim.step()) << "step " << i;
    // The 10th step completes the interval: steps 5 to 9, the error was in step 7.
    expectContains(errorOf<ModelError>([&] { sim.step(); }),
                   {"Cell.simCode", "'h'", "in steps 5 to 9"});
    EXPECT_EQ(sim.timestep(), 10u);
}

TEST_P(DeviceErrors, DefaultIntervalStillReportsDuringLongStepLoops) {
    Model m("err_default");
    addFaulty(m, "Cell", 3);
    Simulation sim(m, prefs(1));
    ASSERT_EQ(BackendPreferences{}.errorCheckInterval, 1000u);
    for (int i = 0; i < 999; i++)
        ASSERT_NO_THROW(sim.step()) << "step " << i;
    expectContains(errorOf<ModelError>([&] { sim.step(); }), {"in steps 0 to 999"});
}

TEST_P(DeviceErrors, ZeroIntervalWaitsForASyncPoint) {
    Model m("err_zero");
    addFaulty(m, "Cell", 2);
    Simulation sim(m, prefsEvery(0));
    for (int i = 0; i < 1500; i++)
        ASSERT_NO_THROW(sim.step()) << "step " << i;
    expectContains(errorOf<ModelError>([&] { sim.checkErrors(); }), {"in steps 0 to 1499"});
}

// A model with a recorded group and a cell that errs in step `badStep`.
void recordedModel(Model& m, unsigned badStep) {
    addFaulty(m, "Cell", badStep);
    m.addNeuronGroup("Rec", 1, models::SpikeSourceArray(), {},
                     {{"startSpike", 0.0}, {"endSpike", 0.0}})
        .setSpikeRecording(true);
}

TEST_P(DeviceErrors, PullRecordingIsASyncPoint) {
    Model m("err_pullrec");
    recordedModel(m, 5);
    Simulation sim(m, prefsEvery(0));
    EXPECT_NO_THROW(sim.run(3));
    sim.setRecordingWindow(100);
    for (int i = 3; i < 8; i++)
        ASSERT_NO_THROW(sim.step()) << "step " << i;
    expectContains(errorOf<ModelError>([&] { sim.pullRecording(); }),
                   {"Cell.simCode", "in steps 3 to 7"});
}

TEST_P(DeviceErrors, AFullRecordingChunkIsASyncPoint) {
    Model m("err_chunk");
    recordedModel(m, 12);
    Simulation sim(m, prefsEvery(0));
    EXPECT_NO_THROW(sim.run(3));
    sim.setRecordingChunkSteps(5);
    sim.setRecordingWindow(100); // chunks end after steps 7, 12, 17, …
    for (int i = 3; i < 12; i++)
        ASSERT_NO_THROW(sim.step()) << "step " << i;
    expectContains(errorOf<ModelError>([&] { sim.step(); }), {"Cell.simCode", "in steps 8 to 12"});
}

TEST_P(DeviceErrors, EveryGroupIsReportedInOneError) {
    Model m("err_two");
    addFaulty(m, "A", 1);
    addFaulty(m, "B", 2);
    Simulation sim(m, prefs(1));
    const std::string err = errorOf<ModelError>([&] { sim.run(3); });
    expectContains(err, {"A.simCode line 5, column 8: index out of range for 'h' in steps 0 to 2",
                         "B.simCode line 5, column 8: index out of range for 'h' in steps 0 to 2"});
    EXPECT_NO_THROW(sim.run(2));
}

// Synapse-group words and snippet slots share one array: one copy reads both kinds, each word is
// reported for its own group, and the whole array is cleared.
TEST_P(DeviceErrors, GroupWordsAndSnippetSlotsAreReadWithOneCopy) {
    Model m("err_words");
    m.setDT(1.0);
    addFaulty(m, "Cell", 2);
    m.addNeuronGroup("Src", 1, models::SpikeSourceArray(), {},
                     {{"startSpike", 0.0}, {"endSpike", 1.0}});
    // "Fine" comes first, so the failing group's word is not word 0.
    m.addSynapseGroup("Fine", MatrixType::Dense, 0, "Src", "Cell",
                      {models::StaticPulse(), {}, {{"g", 1.0}}, {}, {}},
                      {models::DeltaCurr(), {}, {}});
    m.addSynapseGroup("Late", MatrixType::Dense, 0, "Src", "Cell",
                      {models::StaticPulseDendriticDelay(), {}, {{"g", 1.0}, {"d", 5.0}}, {}, {}},
                      {models::DeltaCurr(), {}, {}})
        .setMaxDendriticDelaySteps(3);
    Simulation sim(m, prefsEvery(0));
    sim.setEGP("Src", "spikeTimes", std::vector<double>{0.5});
    for (int i = 0; i < 5; i++)
        ASSERT_NO_THROW(sim.step()) << "step " << i;
    const uint64_t before = sim.transfers().fromDevice;
    const std::string err = errorOf<ModelError>([&] { sim.checkErrors(); });
    EXPECT_EQ(sim.transfers().fromDevice, before + 1);
    expectContains(err,
                   {"Cell.simCode line 5, column 8: index out of range for 'h' in steps 0 to 4",
                    "synapse group 'Late', in steps 0 to 4: addToPostDelay", "3 steps"});
    EXPECT_EQ(err.find("'Fine'"), std::string::npos) << err;
    EXPECT_NO_THROW(sim.checkErrors()) << "cleared when read";
}

TEST_P(DeviceErrors, ResetReportsErrorsLatchedBeforeItAfterResetting) {
    Model m("err_reset");
    addFaulty(m, "Cell", 1);
    Simulation sim(m, prefsEvery(0));
    for (int i = 0; i < 3; i++)
        sim.step();
    expectContains(errorOf<ModelError>([&] { sim.reset(); }), {"Cell.simCode", "in steps 0 to 2"});
    EXPECT_EQ(sim.timestep(), 0u);
    sim.pull("Cell", "k");
    EXPECT_EQ(sim.view<uint32_t>("Cell", "k")[0], 0u);
}

TEST_P(DeviceErrors, NegativeThreadCountIsRefused) {
    Model m("err_threads");
    addFaulty(m, "Cell", 1);
    BackendPreferences p = prefs();
    p.threads = -1; // set directly: prefs() passes threads to the cpu backend only
    // The cpu backend refuses the value; the others refuse any thread count at all.
    expectContains(errorOf<ModelError>([&] { Simulation sim(m, p); }),
                   {GetParam() == "cpu" ? "threads must be 0 (all cores) or positive"
                                        : "BackendPreferences::threads (-1)"});
}

SF_INSTANTIATE_BACKEND_TESTS(DeviceErrors);

} // namespace
