// Kernel timing (BackendPreferences::kernelTiming, Simulation::kernelTimes): a counter per
// kernel, non-zero with the right launch count for kernels that ran, zero for those that did not,
// their sum within the wall time; and the timed run (each kernel a launch of its own) gives the
// same state bit for bit as the untimed one. On every backend, batch 1 and 3.
#include "backend_fixture.hpp"

#include "spikeforge/models.hpp"

#include <chrono>
#include <tuple>
#include <vector>

namespace {

using namespace spikeforge;
using sftest::expectError;

constexpr unsigned kSteps = 60;

// Every kernel kind a step can have: synapse dynamics, spike propagation, postsynaptic learning,
// the neuron update; and two custom-update groups, of which only one is run.
void build(Model& m, unsigned batch) {
    m.setBatchSize(batch);
    m.setPrecision(Precision::Double);
    m.setSeed(11);
    m.addNeuronGroup("In", 30, models::Poisson(), {{"rate", 200.0}}, {{"timeStepToSpike", 0.0}});
    const ParamValues lif = {{"C", 1.0},        {"TauM", 10.0},     {"Vrest", -65.0},
                             {"Vreset", -65.0}, {"Vthresh", -60.0}, {"Ioffset", 0.0},
                             {"TauRefrac", 1.0}};
    m.addNeuronGroup("Out", 20, models::LIF(), lif, {{"V", -65.0}, {"RefracTime", 0.0}});
    const ParamValues stdp = {{"tauPlus", 20.0}, {"tauMinus", 20.0}, {"Aplus", 0.01},
                              {"Aminus", 0.012}, {"Wmin", 0.0},      {"Wmax", 2.0}};
    WeightUpdateModel learn = models::STDPNearest();
    learn.synapseDynamicsCode = "addToPost(0.001 * g * (V_post + 65.0));";
    m.addSynapseGroup("Syn", MatrixType::Sparse, 0, "In", "Out",
                      {learn, stdp, {{"g", 1.0}}, {}, {}}, {models::DeltaCurr(), {}, {}},
                      init::FixedProbability(0.3));
    CustomUpdateModel scale;
    scale.name = "Scale";
    scale.varRefs = {{"x", "scalar", CustomUpdateVarAccess::ReadWrite}};
    scale.updateCode = "x *= 0.999;";
    m.addCustomUpdate("Decay", "Used", scale, {}, {}, {{"x", {"Syn", "g"}}});
    m.addCustomUpdate("Never", "Unused", scale, {}, {}, {{"x", {"Out", "V"}}});
}

class KernelTimingTest : public ::testing::TestWithParam<std::tuple<std::string, unsigned>> {
protected:
    BackendPreferences prefs(bool timing) const {
        BackendPreferences p = sftest::preferencesFor(std::get<0>(GetParam()));
        p.kernelTiming = timing;
        return p;
    }
    unsigned batch() const { return std::get<1>(GetParam()); }

    // The run both simulations make; returns Out.V and Syn.g afterwards.
    static std::vector<double> runOn(Simulation& sim) {
        sim.run(kSteps / 2);
        sim.customUpdate("Used");
        sim.run(kSteps / 2);
        sim.customUpdate("Used");
        sim.pull("Out", "V");
        sim.pull("Syn", "g");
        const auto v = sim.view<double>("Out", "V");
        const auto g = sim.view<double>("Syn", "g");
        std::vector<double> out(v.begin(), v.end());
        out.insert(out.end(), g.begin(), g.end());
        return out;
    }
};

TEST_P(KernelTimingTest, EveryKernelHasACounterThatCountsWhatRan) {
    using Clock = std::chrono::steady_clock;
    Model m("kernel_timing");
    build(m, batch());
    const Clock::time_point start = Clock::now();
    Simulation sim(m, prefs(true));
    const auto state = runOn(sim);
    const auto times = sim.kernelTimes();
    const double wall = std::chrono::duration<double>(Clock::now() - start).count();

    const std::vector<std::pair<std::string, uint64_t>> expected = {{"initialise", 1},
                                                                    {"synapse_dynamics", kSteps},
                                                                    {"presynaptic_update", kSteps},
                                                                    {"postsynaptic_update", kSteps},
                                                                    {"neuron_update", kSteps},
                                                                    {"custom_update.Used", 2},
                                                                    {"custom_update.Unused", 0}};
    ASSERT_EQ(times.size(), expected.size());
    double sum = 0.0;
    for (size_t k = 0; k < times.size(); k++) {
        SCOPED_TRACE(times[k].name);
        EXPECT_EQ(times[k].name, expected[k].first);
        EXPECT_EQ(times[k].launches, expected[k].second);
        if (expected[k].second > 0)
            EXPECT_GT(times[k].seconds, 0.0);
        else
            EXPECT_EQ(times[k].seconds, 0.0);
        sum += times[k].seconds;
    }
    EXPECT_LE(sum, wall);

    // Timing runs each kernel as a launch of its own: the same state as the untimed run.
    Model plain("kernel_timing");
    build(plain, batch());
    Simulation untimed(plain, prefs(false));
    EXPECT_EQ(runOn(untimed), state);
    expectError<ModelError>([&] { (void)untimed.kernelTimes(); },
                            {"kernelTimes", "kernel_timing", "BackendPreferences::kernelTiming"});
}

} // namespace

SF_INSTANTIATE_BACKEND_BATCH_TESTS(KernelTimingTest, 1u, 3u);
