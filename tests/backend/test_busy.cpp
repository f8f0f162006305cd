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
#include <string>
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

// Busy and wall time of `work`. Device work may still run when a call returns (a custom update
// on opencl or cuda), so the wall time ends after the second busy read, which waits for it.
template <typename F> Span measure(Simulation& sim, F&& work) {
    const double b0 = busy(sim);
    const auto t0 = Clock::now();
    work();
    const double b1 = busy(sim);
    return {b1 - b0, seconds(t0, Clock::now())};
}

// Device and host timestamps may come from different clocks: slack for comparing them [s].
constexpr double kClockSlack = 2e-3;

class BusyTime : public BackendTest {};

TEST_P(BusyTime, IsMeasuredFromTheStartAndNeverExceedsTheWallTime) {
    Model m("busy_build");
    buildNetwork(m);
    const auto t0 = Clock::now();
    Simulation sim(m, sftest::releaseBuild(prefs()));
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
    // One cpu thread: a team of threads on a shared machine waits for its slowest member, which
    // makes short runs far noisier than the measurement itself.
    Simulation sim(m, sftest::releaseBuild(prefs(1)));
    // Warm-up: first launches may compile (PoCL specialises kernels on first use), and the cells
    // start anywhere between rest and threshold; after 200 ms [2000 steps] they have settled, so
    // every later step has about the same work.
    sim.run(2000);
    constexpr uint64_t kSteps = 1000;
    // The smallest of five repeats: interference from other processes only ever adds time.
    double one = 1e300, two = 1e300;
    std::string log; // every measurement, for the failure message
    for (int r = 0; r < 5; r++) {
        const Span a = measure(sim, [&] { sim.run(kSteps); });
        const Span b = measure(sim, [&] { sim.run(2 * kSteps); });
        EXPECT_LE(a.busy, a.wall + kClockSlack);
        EXPECT_LE(b.busy, b.wall + kClockSlack);
        one = std::min(one, a.busy);
        two = std::min(two, b.busy);
        log += " [" + std::to_string(a.busy) + " s, " + std::to_string(b.busy) + " s busy; " +
               std::to_string(a.wall) + " s, " + std::to_string(b.wall) + " s wall]";
    }
    ASSERT_GT(one, 0.0);
    // Twice the steps, twice the busy time; loose bounds for a shared machine.
    EXPECT_GT(two / one, 1.3) << kSteps << " and twice as many steps:" << log;
    EXPECT_LT(two / one, 3.2) << kSteps << " and twice as many steps:" << log;
}

TEST_P(BusyTime, HostSleepBetweenRunsIsNotCounted) {
    Model m("busy_sleep");
    buildNetwork(m);
    Simulation sim(m, sftest::releaseBuild(prefs()));
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
    Simulation sim(m, sftest::releaseBuild(prefs()));
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
