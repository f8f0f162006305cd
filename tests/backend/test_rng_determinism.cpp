// Reproducibility of random numbers: a network with randomness in every place the engine draws
// (Poisson input neurons, FixedProbability sparse connectivity, Normal-initialised membrane
// potentials and a GaussianNoise current source) in a batch of 2. Every random number is fixed by
// (seed, stream, element, batch, step) (src/backends/common/rng.h), so the results must be
// bit-identical across simulations, across reset() and across thread counts, and must change with
// the seed. Comparisons are exact (floats by bit pattern), never within a tolerance.
#include "backend_fixture.hpp"
#include "spikeforge/models.hpp"

#include <bit>
#include <cstdint>
#include <vector>

using namespace spikeforge;

namespace {

class RngDeterminismTest : public sftest::BackendTest {};

// Each cell receives from ~100 inputs at 20 Hz, 0.2 spikes per step on average; with weight 5 nA
// for one step the mean drive puts V∞ = Vrest + R · 0.2 · 5 = -45 mV above threshold (-50 mV),
// so cells starting above ~-55 mV (16%) fire within 20 ms and the output depends on all four
// sources of randomness.
struct Size {
    unsigned inputs, cells;
    double prob; // connection probability: inputs · prob = 100 inputs per cell
};
constexpr Size kSmall{2000, 2500, 0.05};
// Big enough that with more than one thread every CPU kernel takes its parallel path (the
// thresholds in src/backends/cpu are at most 32768 neurons × batch). Only the thread-count test
// uses it and runs more than one thread: the other properties do not involve threads, and on a
// loaded machine an OpenMP team with a descheduled member makes every parallel step slow.
constexpr Size kLarge{20000, 20000, 0.005};
constexpr unsigned kBatch = 2;
constexpr uint64_t kSteps = 200; // 20 ms
constexpr double kWeight = 5.0;

void buildNetwork(Model& m, uint64_t seed, Size size = kSmall) {
    m.setDT(0.1);
    m.setBatchSize(kBatch);
    m.setSeed(seed);
    m.addNeuronGroup("Input", size.inputs, models::Poisson(), {{"rate", 20.0}},
                     {{"timeStepToSpike", 0.0}})
        .setSpikeRecording(true);
    m.addNeuronGroup("Cells", size.cells, models::LIF(),
                     {{"C", 1.0},
                      {"TauM", 20.0},
                      {"Vrest", -65.0},
                      {"Vreset", -65.0},
                      {"Vthresh", -50.0},
                      {"Ioffset", 0.0},
                      {"TauRefrac", 2.0}},
                     {{"V", init::Normal(-60.0, 5.0)}, {"RefracTime", 0.0}})
        .setSpikeRecording(true);
    m.addSynapseGroup("InputToCells", MatrixType::Sparse, 0, "Input", "Cells",
                      {models::StaticPulse(), {}, {{"g", kWeight}}, {}, {}},
                      {models::DeltaCurr(), {}, {}}, init::FixedProbability(size.prob));
    m.addCurrentSource("Noise", models::GaussianNoise(), "Cells", {{"mean", 0.0}, {"sd", 1.0}}, {});
}

struct Outcome {
    Size size;
    std::vector<SpikeEvent> input, cells;
    std::vector<uint32_t> v0, v; // bit patterns of Cells.V, both batch elements, initial and final
    std::vector<uint32_t> rowLength, ind;
};

std::vector<uint32_t> pullV(Simulation& sim) {
    sim.pull("Cells", "V");
    std::vector<uint32_t> out;
    for (float x : sim.view<float>("Cells", "V"))
        out.push_back(std::bit_cast<uint32_t>(x));
    return out;
}

// Record from the initial state: the initial V, then `steps` steps.
Outcome runFromInitialState(Simulation& sim, Size size, uint64_t steps) {
    Outcome o;
    o.size = size;
    o.v0 = pullV(sim);
    sim.setRecordingWindow(steps);
    sim.run(steps);
    sim.pullRecording();
    o.input = sim.spikes("Input");
    o.cells = sim.spikes("Cells");
    o.v = pullV(sim);
    sim.pullConnectivity("InputToCells");
    o.rowLength = sim.rowLengths("InputToCells");
    o.ind = sim.columnIndices("InputToCells");
    return o;
}

Outcome runNetwork(uint64_t seed, const BackendPreferences& prefs, Size size = kSmall) {
    Model m("rng_determinism");
    buildNetwork(m, seed, size);
    Simulation sim(m, prefs);
    return runFromInitialState(sim, size, kSteps);
}

// Index of the first difference, or -1; a failure names it rather than printing every spike.
template <typename T> long firstDifference(const std::vector<T>& a, const std::vector<T>& b) {
    for (size_t i = 0; i < std::min(a.size(), b.size()); i++)
        if (!(a[i] == b[i])) return long(i);
    return a.size() == b.size() ? -1 : long(std::min(a.size(), b.size()));
}

void expectIdentical(const Outcome& a, const Outcome& b) {
    EXPECT_EQ(firstDifference(a.input, b.input), -1)
        << "input spikes differ (" << a.input.size() << " vs " << b.input.size() << ")";
    EXPECT_EQ(firstDifference(a.cells, b.cells), -1)
        << "cell spikes differ (" << a.cells.size() << " vs " << b.cells.size() << ")";
    EXPECT_EQ(firstDifference(a.v0, b.v0), -1) << "initial V differs";
    EXPECT_EQ(firstDifference(a.v, b.v), -1) << "V differs";
    EXPECT_EQ(firstDifference(a.rowLength, b.rowLength), -1) << "row lengths differ";
    EXPECT_EQ(firstDifference(a.ind, b.ind), -1) << "column indices differ";
}

void expectAllDifferent(const Outcome& a, const Outcome& b) {
    EXPECT_NE(firstDifference(a.input, b.input), -1) << "input spikes identical";
    EXPECT_NE(firstDifference(a.cells, b.cells), -1) << "cell spikes identical";
    EXPECT_NE(firstDifference(a.v0, b.v0), -1) << "initial V identical";
    EXPECT_NE(firstDifference(a.v, b.v), -1) << "V identical";
    EXPECT_NE(firstDifference(a.ind, b.ind), -1) << "connectivity identical";
}

std::vector<SpikeEvent> ofBatch(const std::vector<SpikeEvent>& s, uint32_t b, uint32_t asBatch) {
    std::vector<SpikeEvent> out;
    for (const auto& e : s)
        if (e.batch == b) out.push_back({e.time, e.neuron, asBatch});
    return out;
}

// The network is not degenerate: both groups spike in both batch elements (the input at least
// at half its expected rate, the cells at least once per 20 cells), and the two batch elements
// draw different numbers (their spike trains differ).
void expectNonTrivial(const Outcome& o) {
    const unsigned cells = o.size.cells;
    const double expectedInput = o.size.inputs * 20.0 * (kSteps * 0.1 / 1000.0);
    for (uint32_t b = 0; b < kBatch; b++) {
        EXPECT_GT(double(ofBatch(o.input, b, 0).size()), expectedInput / 2) << "input, batch " << b;
        EXPECT_GT(ofBatch(o.cells, b, 0).size(), size_t(cells / 20)) << "cells, batch " << b;
    }
    EXPECT_NE(firstDifference(ofBatch(o.input, 0, 0), ofBatch(o.input, 1, 0)), -1)
        << "batch elements share the input's random stream";
    EXPECT_NE(firstDifference(ofBatch(o.cells, 0, 0), ofBatch(o.cells, 1, 0)), -1)
        << "batch elements produce the same output";
    // V: the two batch copies differ element by element, initially (Normal initialisation, one
    // stream per batch element) and at the end.
    for (const auto* v : {&o.v0, &o.v}) {
        size_t same = 0;
        for (size_t i = 0; i < cells; i++)
            same += (*v)[i] == (*v)[cells + i];
        EXPECT_LT(same, size_t(cells / 10))
            << (v == &o.v0 ? "initial " : "") << "V equal in both batch elements";
    }
}

TEST_P(RngDeterminismTest, SameSeedGivesBitIdenticalResults) {
    const auto a = runNetwork(42, prefs(1));
    expectNonTrivial(a);
    const auto b = runNetwork(42, prefs(1)); // a second model and simulation
    expectIdentical(a, b);
}

TEST_P(RngDeterminismTest, DifferentSeedGivesDifferentResults) {
    const auto a = runNetwork(42, prefs(1));
    {
        SCOPED_TRACE("seed 43");
        expectAllDifferent(a, runNetwork(43, prefs(1)));
    }
    {
        // Only the high 32 bits differ: the whole 64-bit seed keys the generator.
        SCOPED_TRACE("seed 42 + 2^32");
        expectAllDifferent(a, runNetwork(42 + (uint64_t(1) << 32), prefs(1)));
    }
}

TEST_P(RngDeterminismTest, ResetReproducesTheFirstRun) {
    Model m("rng_determinism");
    buildNetwork(m, 42);
    Simulation sim(m, prefs(1));
    const auto first = runFromInitialState(sim, kSmall, kSteps);
    expectNonTrivial(first);
    // reset() rewinds time and re-runs every initialiser; the recording window is set again.
    sim.reset();
    EXPECT_EQ(sim.timestep(), 0u);
    expectIdentical(first, runFromInitialState(sim, kSmall, kSteps));
}

TEST_P(RngDeterminismTest, ThreadCountDoesNotChangeResults) {
    const auto one = runNetwork(42, sftest::releaseBuild(prefs(1)), kLarge);
    const auto two = runNetwork(42, sftest::releaseBuild(prefs(2)), kLarge);
    expectNonTrivial(one);
    expectIdentical(one, two);
}

SF_INSTANTIATE_BACKEND_TESTS(RngDeterminismTest);

} // namespace
