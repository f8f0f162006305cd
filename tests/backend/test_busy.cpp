// Device busy time (Simulation::deviceBusySeconds) on every backend: it is measured, grows with the
// work, never exceeds the wall time of the calls that did the work, and a host sleep between two
// runs is not in it. Timing on a shared machine is noisy, so each comparison takes the smallest of
// a few repeats and the bounds are loose; what they catch is a clock that counts host time (the
// sleep), counts nothing, or is not tied to the work (no growth with the steps).
#include "backend_fixture.hpp"

#include "spikeforge/models.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <thread>

namespace {

using namespace spikeforge;
using sftest::BackendTest;
using Clock = std::chrono::steady_clock;

// Poisson input onto LIF cells through sparse synapses, batch 2: a few kernels per step, each
// with enough work that a step takes tens of microseconds on any backend.
void buildNetwork(Model& m) {
    m.setDT(0.1);
    m.setSeed(77);
    m.setBatchSize(2);
    m.addNeuronGroup("Input", 1000, models::Poisson(), {{"rate", 20.0}},
                     {{"timeStepToSpike", 0.0}});
    m.addNeuronGroup("Cells", 4000, models::LIF(),
                     {{"C", 1.0},
                      {"TauM", 20.0},
                      {"Vrest", -65.0},
                      {"Vreset", -65.0},
                      {"Vthresh", -52.0},
                      {"Ioffset", 0.0},
                      {"TauRefrac", 2.0}},
                     {{"V", init::Uniform(-65.0, -52.0)}, {"RefracTime", 0.0}});
    m.addSynapseGroup("InputToCells", MatrixType::Sparse, 0, "Input", "Cells",
                      {models::StaticPulse(), {}, {{"g", 0.5}}, {}, {}},
                      {models::ExpCurr(), {{"tau", 5.0}}, {}}, init::FixedProbability(0.05));
}

double seconds(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
}

// Busy time now; fails the test (and returns 0) when the backend does not measure it.
double busy(const Simulation& sim) {
    const std::optional<double> b = sim.deviceBusySeconds();
    EXPECT_TRUE(b.has_value()) << sim.backendName() << " does not measure busy time";
    return b.value_or(0.0);
}

struct Span {
    double busy = 0.0; // [s]
    double wall = 0.0; // [s]
};

// Busy and wall time of `work` (busy read before and after it).
template <typename F> Span measure(Simulation& sim, F&& work) {
    const double b0 = busy(sim);
    const auto t0 = Clock::now();
    work();
    const auto t1 = Clock::now();
    return {busy(sim) - b0, seconds(t0, t1)};
}

// Device and host timestamps may come from different clocks: slack for comparing them [s].
constexpr double kClockSlack = 2e-3;

class BusyTime : public BackendTest {};

TEST_P(BusyTime, IsMeasuredFromTheStartAndNeverExceedsTheWallTime) {
    Model m("busy_build");
    buildNetwork(m);
    const auto t0 = Clock::now();
    Simulation sim(m, prefs());
    const double built = seconds(t0, Clock::now());
    const double init = busy(sim);
    EXPECT_GT(init, 0.0) << "initialisation kernels ran";
    EXPECT_LE(init, built + kClockSlack);
    const Span run = measure(sim, [&] { sim.run(200); });
    EXPECT_GT(run.busy, 0.0);
    EXPECT_LE(run.busy, run.wall + kClockSlack);
}

TEST_P(BusyTime, GrowsWithTheSteps) {
    Model m("busy_steps");
    buildNetwork(m);
    Simulation sim(m, prefs());
    sim.run(100); // warm-up: first launches may compile (PoCL specialises kernels on first use)
    constexpr uint64_t kSteps = 500;
    // The smallest of three repeats: interference from other processes only ever adds time.
    double one = 1e300, two = 1e300;
    for (int r = 0; r < 3; r++) {
        const Span a = measure(sim, [&] { sim.run(kSteps); });
        const Span b = measure(sim, [&] { sim.run(2 * kSteps); });
        EXPECT_LE(a.busy, a.wall + kClockSlack);
        EXPECT_LE(b.busy, b.wall + kClockSlack);
        one = std::min(one, a.busy);
        two = std::min(two, b.busy);
    }
    ASSERT_GT(one, 0.0);
    // Twice the steps, twice the busy time; loose bounds for a shared machine.
    EXPECT_GT(two / one, 1.4) << "busy " << one << " s for " << kSteps << " steps, " << two
                              << " s for twice as many";
    EXPECT_LT(two / one, 2.9) << "busy " << one << " s for " << kSteps << " steps, " << two
                              << " s for twice as many";
}

TEST_P(BusyTime, HostSleepBetweenRunsIsNotCounted) {
    Model m("busy_sleep");
    buildNetwork(m);
    Simulation sim(m, prefs());
    sim.run(100);             // warm-up
    const double sleep = 0.3; // [s]
    const Span plain = measure(sim, [&] {
        sim.run(300);
        sim.run(300);
    });
    const Span slept = measure(sim, [&] {
        sim.run(300);
        std::this_thread::sleep_for(std::chrono::duration<double>(sleep));
        sim.run(300);
    });
    EXPECT_GE(slept.wall, sleep);
    // The sleep is in the wall time, not in the busy time.
    EXPECT_LE(slept.busy, slept.wall - 0.9 * sleep + kClockSlack)
        << "busy " << slept.busy << " s of " << slept.wall << " s wall with a " << sleep
        << " s sleep";
    // The same work was done either way: busy time barely changes (a loose bound; the sleep
    // alone would add 0.3 s, several times the work of these runs).
    EXPECT_LT(slept.busy, plain.busy + 0.5 * sleep)
        << "busy " << slept.busy << " s with the sleep, " << plain.busy << " s without";
}

TEST_P(BusyTime, CustomUpdatesAndResetsCount) {
    Model m("busy_custom");
    buildNetwork(m);
    CustomUpdateModel nudge;
    nudge.name = "Nudge";
    nudge.varRefs = {{"V", "scalar", CustomUpdateVarAccess::ReadWrite}};
    nudge.updateCode = "V += 0.001;";
    m.addCustomUpdate("NudgeCells", "Nudge", nudge, {}, {}, {{"V", {"Cells", "V"}}});
    Simulation sim(m, prefs());
    const Span update = measure(sim, [&] {
        for (int i = 0; i < 20; i++)
            sim.customUpdate("Nudge");
    });
    EXPECT_GT(update.busy, 0.0);
    EXPECT_LE(update.busy, update.wall + kClockSlack);
    const Span reset = measure(sim, [&] { sim.reset(); }); // zero-fills and initialisers
    EXPECT_GT(reset.busy, 0.0);
    EXPECT_LE(reset.busy, reset.wall + kClockSlack);
}

} // namespace

SF_INSTANTIATE_BACKEND_TESTS(BusyTime);
