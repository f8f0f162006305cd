// Built only with the cuda backend (file name test_cuda_*: CMake leaves it out otherwise).
// CudaDevice::runSequence without a GPU, on the mock driver of cuda_mock_driver.hpp (whose
// stream capture records device-to-device copies as memcpy nodes that a graph launch performs):
// a schedule-shaped sequence (reset copy, steps, custom update) is captured, instantiated once
// and updated in place on every later replay; the graph-steps cap cuts it into pieces; a failed
// capture falls back to plain launches.
#include "backends/cuda/cuda_device.hpp"
#include "cuda_mock_driver.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

using namespace spikeforge;

namespace {

using cuda_mock::mock;

using Item = backends::SequenceItem;
constexpr double kDt = 0.5; // [ms]

// A device with the program {kernel 0 "step": one launch; kernel 1 "update": one launch}, its
// table bound, and two 64-byte buffers: `state` and `initial` (the reset copy's source).
struct MockSetup {
    codegen::Plan plan;
    simt::Program program;
    cuda::CudaDevice dev;
    backends::Buffer state = nullptr, initial = nullptr;

    explicit MockSetup(uint32_t graphSteps)
        : dev(*mock().api, cuda::queryDevice(*mock().api, 0), graphSteps) {
        codegen::MergedGroupTable t;
        t.fields = {{"n", "uint32_t"}};
        t.groupNames = {"A"};
        plan.mergedGroups.push_back(t);
        program.kernels = {{simt::Launch{"step", {0}, 128, 1, 128}},
                           {simt::Launch{"update", {0}, 128, 1, 128}}};
        dev.load(plan, program, "CUBIN");
        dev.bindTable(0, {{backends::FieldValue::ofNumber(1)}});
        state = dev.allocate(64);
        initial = dev.allocate(64);
    }

    // A trial as Simulation::run of a schedule queues it: the reset copy, `steps` steps from
    // step 0 (random draws keyed from `rng`), then the custom update at the last step.
    std::vector<Item> trial(uint64_t steps, uint64_t rng) const {
        codegen::abi::StepArgs first;
        first.rngStep = rng;
        codegen::abi::StepArgs end = first;
        end.step = steps;
        end.rngStep = rng + steps;
        return {Item::ofCopy(state, initial, 64), Item::ofSteps({0}, first, steps, kDt),
                Item::ofLaunch(1, end)};
    }

    void setInitial(unsigned char value) {
        const std::vector<unsigned char> bytes(64, value);
        dev.copyToDevice(initial, bytes.data(), bytes.size());
    }
    unsigned char stateByte() {
        unsigned char out[64];
        dev.copyFromDevice(out, state, sizeof out);
        return out[17];
    }
};

// The ops from `from` are one trial of `steps` steps with random draws from `rng`, each from a
// graph (1) or not (0) as `graph` says.
void expectTrial(size_t from, uint64_t steps, uint64_t rng, int graph) {
    ASSERT_GE(mock().ops(), from + steps + 2);
    EXPECT_EQ(mock().name(from), "copy");
    EXPECT_EQ(mock().graph(from), graph);
    for (uint64_t i = 0; i < steps; i++) {
        EXPECT_EQ(mock().name(from + 1 + i), "step") << i;
        EXPECT_EQ(mock().step(from + 1 + i), i) << i;
        EXPECT_EQ(mock().rng(from + 1 + i), rng + i) << i;
        EXPECT_EQ(mock().graph(from + 1 + i), graph) << i;
    }
    EXPECT_EQ(mock().name(from + 1 + steps), "update");
    EXPECT_EQ(mock().step(from + 1 + steps), steps);
    EXPECT_EQ(mock().graph(from + 1 + steps), graph);
}

TEST(CudaScheduleMock, ATrialIsCapturedOnceAndReplayedByUpdatingTheGraph) {
    SKIP_WITHOUT_MOCK();
    MockSetup s(100);
    ASSERT_TRUE(s.dev.graphsEnabled());
    const int inst = mock().count("mock_instantiations"), upd = mock().count("mock_updates");
    const int nodes = mock().count("mock_memcpy_nodes");
    const uint64_t graphs = cuda::graphLaunches();
    constexpr uint64_t kSteps = 6;
    for (uint64_t r = 0; r < 3; r++) {
        s.setInitial(static_cast<unsigned char>(10 + r)); // the copy runs at replay time
        const size_t before = mock().ops();
        s.dev.runSequence(s.trial(kSteps, r * kSteps));
        ASSERT_EQ(mock().ops(), before + kSteps + 2);
        expectTrial(before, kSteps, r * kSteps, 1);
        EXPECT_EQ(s.stateByte(), 10 + r) << "replay " << r;
    }
    EXPECT_EQ(cuda::graphLaunches() - graphs, 3u); // one launch per trial
    EXPECT_EQ(mock().count("mock_instantiations") - inst, 1);
    EXPECT_EQ(mock().count("mock_updates") - upd, 2);
    EXPECT_EQ(mock().count("mock_memcpy_nodes") - nodes, 3); // captured anew, one per trial
}

TEST(CudaScheduleMock, TheGraphStepsCapCutsTheSequenceAfterAPiecesLastItems) {
    SKIP_WITHOUT_MOCK();
    MockSetup s(4);
    const int inst = mock().count("mock_instantiations");
    const uint64_t graphs = cuda::graphLaunches();
    const size_t before = mock().ops();
    s.dev.runSequence(s.trial(6, 40));
    // [copy, steps 0-3] and [steps 4-5, update]: two graphs, every launch with its own step.
    EXPECT_EQ(cuda::graphLaunches() - graphs, 2u);
    EXPECT_EQ(mock().count("mock_instantiations") - inst, 2);
    expectTrial(before, 6, 40, 1);
}

TEST(CudaScheduleMock, AFailedCaptureFallsBackToPlainLaunchesForGood) {
    SKIP_WITHOUT_MOCK();
    MockSetup s(100);
    mock().failCapture(true);
    const uint64_t graphs = cuda::graphLaunches();
    s.setInitial(7);
    size_t before = mock().ops();
    s.dev.runSequence(s.trial(5, 0));
    mock().failCapture(false);
    EXPECT_FALSE(s.dev.graphsEnabled());
    expectTrial(before, 5, 0, 0);
    EXPECT_EQ(s.stateByte(), 7);
    before = mock().ops();
    s.dev.runSequence(s.trial(5, 5)); // capture would work now: the device no longer tries
    expectTrial(before, 5, 5, 0);
    EXPECT_EQ(cuda::graphLaunches(), graphs);
}

// Busy time: a replayed graph is timed as a whole by the event pair around the sequence (events
// are recorded outside the capture), plain launches the same way; host gaps between sequences are
// not counted. Mock launches run 1 ms and copies 0.5 ms on the mock clock.
TEST(CudaScheduleMock, BusyTimeCoversGraphsAndPlainLaunchesButNotHostGaps) {
    SKIP_WITHOUT_MOCK();
    const int events = mock().count("mock_events");
    {
        MockSetup graphs(100), plain(0);
        for (MockSetup* s : {&graphs, &plain}) {
            const double before = s->dev.busySeconds().value(); // [s]
            const uint64_t launches = cuda::graphLaunches();
            for (uint64_t r = 0; r < 3; r++) {
                s->dev.runSequence(s->trial(6, 6 * r)); // a copy, 6 steps, an update
                mock().hostGap(250.0);                  // [ms] host work between trials
            }
            EXPECT_EQ(cuda::graphLaunches() - launches, s == &graphs ? 3u : 0u);
            const double expected = 3 * (0.5 + 6 + 1) * 1e-3; // [s]
            EXPECT_NEAR(s->dev.busySeconds().value() - before, expected, 1e-6)
                << (s == &graphs ? "graphs" : "plain launches");
        }
    }
    EXPECT_EQ(mock().count("mock_events"), events); // every event destroyed with its device
}

} // namespace
