// Schedules: Simulation::run(schedule, repeats) gives bit for bit the results of the host calls it
// stands for (state, custom-update output, recorded spikes, time), across recording-chunk
// flushes and error-check intervals inside it; on cuda the schedule runs as CUDA graphs and the
// host calls as plain launches. Unknown names are refused, naming the item, before anything runs.
#include "backend_fixture.hpp"

#include "spikeforge/models.hpp"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace spikeforge;
using A = CustomUpdateVarAccess;
using sftest::BackendTest;
using sftest::errorOf;
using sftest::expectContains;

// Poisson input onto LIF cells, batch of 2, both recorded; "Nudge" pushes V up (it changes the
// steps after it), "Learn" accumulates V per batch element and sums it over the batch.
void buildNetwork(Model& m) {
    m.setDT(0.1);
    m.setSeed(1234);
    m.setBatchSize(2);
    m.addNeuronGroup("Input", 100, models::Poisson(), {{"rate", 80.0}}, {{"timeStepToSpike", 0.0}})
        .setSpikeRecording(true);
    m.addNeuronGroup("Cells", 40, models::LIF(),
                     {{"C", 1.0},
                      {"TauM", 20.0},
                      {"Vrest", -65.0},
                      {"Vreset", -65.0},
                      {"Vthresh", -52.0},
                      {"Ioffset", 0.0},
                      {"TauRefrac", 2.0}},
                     {{"V", init::Normal(-60.0, 4.0)}, {"RefracTime", 0.0}})
        .setSpikeRecording(true);
    m.addSynapseGroup("InputToCells", MatrixType::Sparse, 0, "Input", "Cells",
                      {models::StaticPulse(), {}, {{"g", 4.0}}, {}, {}},
                      {models::ExpCurr(), {{"tau", 5.0}}, {}}, init::FixedProbability(0.2));
    CustomUpdateModel nudge;
    nudge.name = "Nudge";
    nudge.varRefs = {{"V", "scalar", A::ReadWrite}};
    nudge.updateCode = "V += 0.5;";
    m.addCustomUpdate("NudgeCells", "Nudge", nudge, {}, {}, {{"V", {"Cells", "V"}}});
    CustomUpdateModel acc;
    acc.name = "Accumulate";
    acc.vars = {{"acc", "scalar", A::ReadWrite}};
    acc.varRefs = {{"V", "scalar", A::ReadOnly}};
    acc.updateCode = "acc += V;";
    m.addCustomUpdate("Acc", "Learn", acc, {}, {{"acc", 0.0}}, {{"V", {"Cells", "V"}}});
    CustomUpdateModel red;
    red.name = "BatchSum";
    red.vars = {{"vsum", "scalar", A::ReduceBatchSum}};
    red.varRefs = {{"V", "scalar", A::ReadOnly}};
    red.updateCode = "vsum = V;";
    m.addCustomUpdate("Red", "Learn", red, {}, {{"vsum", 0.0}}, {{"V", {"Cells", "V"}}});
}

// Everything the two ways of running are compared on.
struct Outcome {
    std::vector<std::pair<std::string, std::vector<float>>> arrays;
    std::vector<std::pair<std::string, std::vector<SpikeEvent>>> spikes; // as the sink got them
    uint64_t timestep = 0;
    double time = 0.0;
};

struct Runner {
    Model model{"schedule"};
    std::unique_ptr<Simulation> sim;
    Outcome out;

    // `graphSteps`: BackendPreferences::cudaGraphSteps on cuda (ignored elsewhere).
    Runner(BackendPreferences p, uint32_t graphSteps) {
        buildNetwork(model);
        p.keepInitialState = true;
        p.errorCheckInterval = 25; // inside a trial: the runtime splits the steps there
        if (p.backend == "cuda") p.cudaGraphSteps = graphSteps;
        sim = std::make_unique<Simulation>(model, p);
        sim->setRecordingChunkSteps(16); // flushes inside a trial too
        sim->setRecordingWindow(60);
        sim->setSpikeSink([this](const std::string& group, std::span<const SpikeEvent> events) {
            out.spikes.emplace_back(group, std::vector<SpikeEvent>(events.begin(), events.end()));
        });
    }

    Outcome finish() {
        for (const auto& [group, var] :
             std::vector<std::pair<std::string, std::string>>{{"Cells", "V"},
                                                              {"Cells", "RefracTime"},
                                                              {"Input", "timeStepToSpike"},
                                                              {"InputToCells", "inSyn"},
                                                              {"Acc", "acc"},
                                                              {"Red", "vsum"}}) {
            sim->pull(group, var);
            const auto v = sim->view<float>(group, var);
            out.arrays.emplace_back(group + "." + var, std::vector<float>(v.begin(), v.end()));
        }
        out.timestep = sim->timestep();
        out.time = sim->time();
        return out;
    }
};

void expectSame(const Outcome& got, const Outcome& want) {
    ASSERT_EQ(got.arrays.size(), want.arrays.size());
    for (size_t i = 0; i < got.arrays.size(); i++)
        EXPECT_EQ(got.arrays[i].second, want.arrays[i].second) << got.arrays[i].first;
    EXPECT_EQ(got.spikes, want.spikes);
    EXPECT_EQ(got.timestep, want.timestep);
    EXPECT_EQ(got.time, want.time);
}

using ScheduleTest = BackendTest;

TEST_P(ScheduleTest, TrialsAsAScheduleEqualTheHostCallsBitForBit) {
    constexpr uint64_t kRepeats = 3;
    Runner host(prefs(), 0);
    for (uint64_t r = 0; r < kRepeats; r++) {
        host.sim->resetState();
        host.sim->run(37);
        host.sim->customUpdate("Nudge");
        host.sim->run(23);
        host.sim->customUpdate("Learn");
    }
    const Outcome want = host.finish();

    Runner scheduled(prefs(), 8); // graphs of 8 steps on cuda: pieces cut inside the trial too
    scheduled.sim->run(
        Schedule().resetState().steps(37).customUpdate("Nudge").steps(23).customUpdate("Learn"),
        kRepeats);
    const Outcome got = scheduled.finish();

    // The comparison means something: spikes were recorded and the updates wrote values.
    size_t events = 0;
    for (const auto& [group, e] : want.spikes)
        events += e.size();
    ASSERT_GT(events, 100u);
    EXPECT_EQ(want.timestep, 60u);
    for (const auto& [name, values] : want.arrays) {
        if (name != "Acc.acc") continue;
        ASSERT_LT(values.at(0), -100.0f) << "three trials of V near -60";
    }
    expectSame(got, want);
}

TEST_P(ScheduleTest, RepeatsWithoutResetContinueTimeAsHostCallsDo) {
    Runner host(prefs(), 0);
    for (int r = 0; r < 9; r++) {
        host.sim->run(7);
        host.sim->customUpdate("Learn");
    }
    host.sim->run(2);
    const Outcome want = host.finish();

    Runner scheduled(prefs(), 20); // one graph holds several repeats on cuda
    scheduled.sim->run(Schedule().steps(7).customUpdate("Learn"), 9);
    scheduled.sim->run(Schedule().steps(2));
    const Outcome got = scheduled.finish();
    EXPECT_EQ(want.timestep, 65u);
    expectSame(got, want);
}

TEST_P(ScheduleTest, UnknownNamesAreRefusedNamingTheItemBeforeAnythingRuns) {
    Runner run(prefs(), 0);
    Simulation& sim = *run.sim;
    auto msg = errorOf<ModelError>(
        [&] { sim.run(Schedule().steps(5).customUpdate("Learn").customUpdate("Lern")); });
    expectContains(msg, {"schedule item 2", "'Lern'", "Learn"});
    msg = errorOf<ModelError>([&] { sim.run(Schedule().steps(5).resetState({"Cells.W"})); });
    expectContains(msg, {"schedule item 1", "Cells.W"});
    msg = errorOf<ModelError>([&] { sim.run(Schedule().resetState({"InputToCells.g"})); });
    expectContains(msg, {"schedule item 0", "InputToCells.g", "not trial state"});
    EXPECT_EQ(sim.timestep(), 0u) << "a refused schedule ran its first steps";
    sim.pull("Acc", "acc");
    for (float a : sim.view<float>("Acc", "acc"))
        ASSERT_EQ(a, 0.0f) << "a refused schedule ran a custom update";

    Model plain("schedule_plain");
    buildNetwork(plain);
    Simulation noCopy(plain, prefs()); // keepInitialState off
    expectContains(errorOf<ModelError>([&] { noCopy.run(Schedule().steps(1).resetState()); }),
                   {"schedule item 1", "keepInitialState"});
    EXPECT_EQ(noCopy.timestep(), 0u);
}

// Writes past the end of a local array when its step counter k reaches 4 (k is trial state:
// every trial faults in its fifth step).
NeuronModel faultyAtFour() {
    NeuronModel nm;
    nm.name = "FaultyAtFour";
    nm.vars = {VarDecl{"V"}, VarDecl{"k", "unsigned int"}};
    nm.simCode = "scalar h[4];\nunsigned int i = 0u;\nif (k == 4u) i = 4u;\nh[i] = 1.0;\n"
                 "V += h[i];\nk++;";
    return nm;
}

TEST_P(ScheduleTest, DeviceErrorsAreReportedAtTheEndNamingTheResetsBetween) {
    Model m("schedule_errors");
    m.addNeuronGroup("Cell", 2, faultyAtFour(), {}, {{"V", 0.0}, {"k", 0.0}});
    BackendPreferences p = prefs();
    p.keepInitialState = true;
    p.errorCheckInterval = 0; // sync points only
    Simulation sim(m, p);
    // A resetState item does not wait for the device (a batch of trials stays one stretch of
    // device work): every trial runs, and the end of run() reports the errors, saying that they
    // may come from trials before the last reset.
    const std::string err =
        errorOf<ModelError>([&] { sim.run(Schedule().resetState().steps(10), 3); });
    expectContains(err, {"Cell.simCode", "index out of range for 'h'", "across 3 state resets",
                         "now at step 10"});
    EXPECT_EQ(sim.timestep(), 10u) << "every trial ran";
    sim.pull("Cell", "k");
    EXPECT_EQ(sim.view<uint32_t>("Cell", "k")[0], 10u) << "the last trial's state";
    EXPECT_NO_THROW(sim.checkErrors()); // reported once
    // Without a reset in between, the steps are named: the host call resetState (which reads
    // the errors first: none are left), then a schedule of steps faulting at step 4.
    EXPECT_NO_THROW(sim.resetState());
    expectContains(errorOf<ModelError>([&] { sim.run(Schedule().steps(3).steps(7)); }),
                   {"Cell.simCode", "in steps 0 to 9"});
    EXPECT_EQ(sim.timestep(), 10u);
    EXPECT_NO_THROW(sim.checkErrors()); // reported once
}

SF_INSTANTIATE_BACKEND_TESTS(ScheduleTest);

} // namespace
