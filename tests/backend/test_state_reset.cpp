// Trials: resetState() restores the trial state (neuron and synaptic-input state, spike queues)
// from the device copy kept at build, keeps weights, rewinds time, and lets every trial draw
// fresh random numbers; reset() by contrast re-initialises everything and repeats trial 1.
#include "backend_fixture.hpp"

#include "spikeforge/models.hpp"

#include <bit>
#include <cstdint>
#include <vector>

namespace {

using namespace spikeforge;
using sftest::BackendTest;
using sftest::errorOf;
using sftest::expectContains;

constexpr uint64_t kSteps = 100; // 10 ms

void buildNetwork(Model& m) {
    m.setDT(0.1);
    m.setSeed(77);
    m.addNeuronGroup("Input", 200, models::Poisson(), {{"rate", 50.0}}, {{"timeStepToSpike", 0.0}});
    m.addNeuronGroup("Cells", 50, models::LIF(),
                     {{"C", 1.0},
                      {"TauM", 20.0},
                      {"Vrest", -65.0},
                      {"Vreset", -65.0},
                      {"Vthresh", -50.0},
                      {"Ioffset", 0.0},
                      {"TauRefrac", 2.0}},
                     {{"V", init::Normal(-60.0, 5.0)}, {"RefracTime", 0.0}});
    m.addSynapseGroup("InputToCells", MatrixType::Sparse, 0, "Input", "Cells",
                      {models::StaticPulse(), {}, {{"g", 5.0}}, {}, {}},
                      {models::ExpCurr(), {{"tau", 5.0}}, {}}, init::FixedProbability(0.1));
}

// Every step's input spikes, in order: what the trial's random numbers produced.
std::vector<std::vector<uint32_t>> runTrial(Simulation& sim) {
    std::vector<std::vector<uint32_t>> spikes;
    for (uint64_t n = 0; n < kSteps; n++) {
        sim.step();
        spikes.push_back(sim.currentSpikes("Input")[0]);
    }
    return spikes;
}

template <typename T> std::vector<T> pulled(Simulation& sim, const char* group, const char* var) {
    sim.pull(group, var);
    const auto v = sim.view<T>(group, var);
    return {v.begin(), v.end()};
}

BackendPreferences keeping(BackendPreferences p) {
    p.keepInitialState = true;
    return p;
}

using StateResetTest = BackendTest;

TEST_P(StateResetTest, TrialsRestartFromTheInitialStateWithFreshRandomNumbers) {
    Model m("trials");
    buildNetwork(m);
    Simulation sim(m, keeping(prefs()));
    const auto v0 = pulled<float>(sim, "Cells", "V");
    const auto g0 = pulled<float>(sim, "InputToCells", "g");
    for (float& g : sim.view<float>("InputToCells", "g"))
        g = 3.0f;
    sim.push("InputToCells", "g");

    const auto trial1 = runTrial(sim);
    size_t inputSpikes = 0;
    for (const auto& s : trial1)
        inputSpikes += s.size();
    ASSERT_GT(inputSpikes, 50u) << "the test needs input spikes to compare";
    ASSERT_NE(pulled<float>(sim, "Cells", "V"), v0) << "the trial changed nothing";

    sim.resetState();
    EXPECT_EQ(sim.timestep(), 0u);
    EXPECT_EQ(sim.time(), 0.0);
    EXPECT_EQ(pulled<float>(sim, "Cells", "V"), v0); // bit for bit: a device copy
    EXPECT_EQ(pulled<float>(sim, "InputToCells", "inSyn"), std::vector<float>(50, 0.0f));
    for (float g : pulled<float>(sim, "InputToCells", "g"))
        ASSERT_EQ(g, 3.0f) << "resetState changed a weight";
    const auto trial2 = runTrial(sim);
    EXPECT_NE(trial2, trial1) << "trial 2 drew the same random numbers as trial 1";

    // reset() re-runs every initialiser and rewinds the random streams: trial 1 again.
    sim.reset();
    EXPECT_EQ(pulled<float>(sim, "InputToCells", "g"), g0);
    for (float& g : sim.view<float>("InputToCells", "g"))
        g = 3.0f;
    sim.push("InputToCells", "g");
    EXPECT_EQ(runTrial(sim), trial1);
}

TEST_P(StateResetTest, OnlyTheChosenStateIsRestored) {
    Model m("trials_chosen");
    buildNetwork(m);
    Simulation sim(m, keeping(prefs()));
    const auto v0 = pulled<float>(sim, "Cells", "V");
    runTrial(sim);
    const auto poissonState = pulled<float>(sim, "Input", "timeStepToSpike");
    const auto refrac = pulled<float>(sim, "Cells", "RefracTime");
    sim.resetState({"Cells.V"});
    EXPECT_EQ(pulled<float>(sim, "Cells", "V"), v0);
    EXPECT_EQ(pulled<float>(sim, "Cells", "RefracTime"), refrac);
    EXPECT_EQ(pulled<float>(sim, "Input", "timeStepToSpike"), poissonState);

    runTrial(sim);
    sim.resetState({"Input"});
    EXPECT_EQ(pulled<float>(sim, "Input", "timeStepToSpike"), std::vector<float>(200, 0.0f));
    EXPECT_NE(pulled<float>(sim, "Cells", "V"), v0) << "Cells was not chosen";
}

TEST_P(StateResetTest, RefusalsNameTheCauseAndChangeNothing) {
    {
        Model m("trials_off");
        buildNetwork(m);
        Simulation sim(m, prefs());
        sim.run(3);
        expectContains(errorOf<ModelError>([&] { sim.resetState(); }), {"keepInitialState"});
        EXPECT_EQ(sim.timestep(), 3u);
    }
    Model m("trials_bad");
    buildNetwork(m);
    Simulation sim(m, keeping(prefs()));
    sim.run(3);
    expectContains(errorOf<ModelError>([&] {
                       sim.resetState({"Cells", "Nope"});
                   }),
                   {"'Nope'", "no group or array"});
    expectContains(errorOf<ModelError>([&] { sim.resetState({"InputToCells.g"}); }),
                   {"'InputToCells.g'", "not trial state"});
    EXPECT_EQ(sim.timestep(), 3u);
}

SF_INSTANTIATE_BACKEND_TESTS(StateResetTest);

} // namespace
