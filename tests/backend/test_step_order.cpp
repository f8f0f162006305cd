// The cpu backend's step orders (BackendPreferences::cpuStepOrder): running each batch element
// through a whole stretch of steps gives the same spikes and variables, bit for bit, as running
// every element's step k before any step k+1; and the choice is refused where it would change
// results or means nothing. Also: a variable no code assigns is not stored back, so values the
// user pushed per batch element survive the steps.
#include "backend_fixture.hpp"

#include "spikeforge/models.hpp"

#include <cstring>
#include <set>
#include <vector>

namespace {

using namespace spikeforge;
using StepOrder = BackendPreferences::StepOrder;

constexpr unsigned kBatch = 5, kSteps = 300;

// Leaky integrator with a per-neuron, per-element bias that no code assigns (pushed by the test).
NeuronModel biasedLeak() {
    NeuronModel m;
    m.name = "BiasedLeak";
    m.vars = {{"v"}, {"bias"}};
    m.simCode = "v = 0.9 * v + Isyn + bias;";
    m.thresholdConditionCode = "v >= 1.0";
    m.resetCode = "v = 0.0;";
    return m;
}

// Poisson input (a different stream per batch element) onto X through STDP (weights per element,
// written by synapse code), X onto Y through sparse synapses with dendritic and axonal delays.
void buildNetwork(Model& m) {
    m.setDT(1.0);
    m.setBatchSize(kBatch);
    m.setSeed(99);
    m.addNeuronGroup("P", 50, models::Poisson(), {{"rate", 40.0}}, {{"timeStepToSpike", 0.0}});
    m.addNeuronGroup("X", 40, biasedLeak(), {}, {{"v", 0.0}, {"bias", 0.0}})
        .setSpikeRecording(true);
    m.addNeuronGroup("Y", 30, biasedLeak(), {}, {{"v", 0.0}, {"bias", 0.0}})
        .setSpikeRecording(true);
    m.addSynapseGroup("PX", MatrixType::Dense, 0, "P", "X",
                      {models::STDPAllToAll(),
                       {{"tauPlus", 20.0},
                        {"tauMinus", 20.0},
                        {"Aplus", 0.01},
                        {"Aminus", 0.012},
                        {"Wmin", 0.0},
                        {"Wmax", 0.5}},
                       {{"g", init::Uniform(0.0, 0.25)}},
                       {{"preTrace", 0.0}, {"preTraceT", -1.0e9}},
                       {{"postTrace", 0.0}, {"postTraceT", -1.0e9}}},
                      {models::ExpCurr(), {{"tau", 5.0}}, {}});
    auto& xy = m.addSynapseGroup("XY", MatrixType::Sparse, 2, "X", "Y",
                                 {models::StaticPulseDendriticDelay(),
                                  {},
                                  {{"g", 0.3}, {"d", init::Uniform(0.0, 3.99)}},
                                  {},
                                  {}},
                                 {models::DeltaCurr(), {}, {}}, init::FixedProbability(0.3));
    xy.setMaxDendriticDelaySteps(4);
}

struct Outcome {
    std::vector<SpikeEvent> x, y;
    std::vector<uint32_t> v, g, bias; // bit patterns
};

std::vector<uint32_t> bits(Simulation& sim, const std::string& group, const std::string& var) {
    sim.pull(group, var);
    const auto values = sim.view<float>(group, var);
    std::vector<uint32_t> out(values.size());
    std::memcpy(out.data(), values.data(), values.size() * sizeof(float));
    return out;
}

Outcome run(StepOrder order, int threads) {
    Model m("step_order");
    buildNetwork(m);
    BackendPreferences prefs;
    prefs.threads = threads;
    prefs.cpuStepOrder = order;
    Simulation sim(m, prefs);
    // Each element's bias differs, so a step that read another element's state would show.
    sim.pull("X", "bias");
    auto bias = sim.view<float>("X", "bias");
    for (size_t i = 0; i < bias.size(); i++)
        bias[i] = 0.01f * float(i / 40) + 0.002f * float(i % 7);
    sim.push("X", "bias");
    sim.setRecordingWindow(kSteps);
    sim.run(kSteps / 3); // several stretches, so a stretch's start step is honoured
    sim.run(kSteps - kSteps / 3);
    sim.pullRecording();
    return {sim.spikes("X"), sim.spikes("Y"), bits(sim, "X", "v"), bits(sim, "PX", "g"),
            bits(sim, "X", "bias")};
}

bool cpuUsable() {
    for (const auto& b : sftest::usableBackends())
        if (b == "cpu") return true;
    return false;
}

TEST(CpuStepOrder, ByBatchEqualsByStepBitForBit) {
    if (!cpuUsable()) GTEST_SKIP() << "the cpu backend is not usable on this machine";
    const Outcome byStep = run(StepOrder::ByStep, 2);
    // The network is busy in every batch element and the elements differ.
    std::set<uint32_t> active;
    for (const auto& s : byStep.y)
        active.insert(s.batch);
    ASSERT_EQ(active.size(), kBatch) << "every batch element must reach Y";
    ASSERT_GT(byStep.x.size(), 200u);
    for (const auto& [order, threads] :
         std::vector<std::pair<StepOrder, int>>{{StepOrder::ByBatch, 2},
                                                {StepOrder::ByBatch, 1},
                                                {StepOrder::ByBatch, 3},
                                                {StepOrder::Auto, 2}}) {
        SCOPED_TRACE("threads " + std::to_string(threads));
        const Outcome o = run(order, threads);
        EXPECT_EQ(o.x, byStep.x);
        EXPECT_EQ(o.y, byStep.y);
        EXPECT_EQ(o.v, byStep.v);
        EXPECT_EQ(o.g, byStep.g);
        EXPECT_EQ(o.bias, byStep.bias);
    }
}

TEST(CpuStepOrder, UnassignedVariableKeepsItsPushedValuePerElement) {
    if (!cpuUsable()) GTEST_SKIP() << "the cpu backend is not usable on this machine";
    const Outcome o = run(StepOrder::ByBatch, 2);
    ASSERT_EQ(o.bias.size(), size_t(kBatch) * 40);
    for (size_t i = 0; i < o.bias.size(); i++) {
        const float want = 0.01f * float(i / 40) + 0.002f * float(i % 7);
        float got;
        std::memcpy(&got, &o.bias[i], sizeof got);
        ASSERT_EQ(got, want) << "element " << i;
    }
}

TEST(CpuStepOrder, ByBatchIsRefusedWhereItWouldChangeResults) {
    if (!cpuUsable()) GTEST_SKIP() << "the cpu backend is not usable on this machine";
    BackendPreferences prefs;
    prefs.cpuStepOrder = StepOrder::ByBatch;
    {
        // Batch 1: nothing to order.
        Model m("step_order_one");
        m.addNeuronGroup("X", 4, biasedLeak(), {}, {{"v", 0.0}, {"bias", 0.0}});
        sftest::expectError<ModelError>([&] { Simulation sim(m, prefs); },
                                        {"cpuStepOrder", "batch size above 1"});
    }
    {
        Model m("step_order_other");
        m.setBatchSize(2);
        m.addNeuronGroup("X", 4, biasedLeak(), {}, {{"v", 0.0}, {"bias", 0.0}});
        BackendPreferences other = prefs;
        other.backend = "opencl";
        sftest::expectError<ModelError>([&] { Simulation sim(m, other); },
                                        {"cpuStepOrder", "opencl"});
    }
}

} // namespace
