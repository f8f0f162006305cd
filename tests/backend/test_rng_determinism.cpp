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

// Big enough that every kernel takes its parallel path (neuron update from 2048 neurons × batch,
// variable initialisation from 4096 values, connectivity from 256 rows).
constexpr unsigned kInputs = 2000, kCells = 2500, kBatch = 2;
constexpr uint64_t kSteps = 500; // 50 ms
// Each cell receives from ~100 inputs at 20 Hz, 0.2 spikes per step on average; with weight 5 nA
// for one step the mean drive puts V∞ = Vrest + R · 0.2 · 5 = -45 mV above threshold (-50 mV),
// so cells fire within 50 ms and the output depends on all four sources of randomness.
// Only the thread-count test runs more than one thread: on a loaded machine an OpenMP team with a
// descheduled member makes every barrier slow, and the other properties do not involve threads.
constexpr double kWeight = 5.0;

void buildNetwork(Model& m, uint64_t seed) {
    m.setDT(0.1);
    m.setBatchSize(kBatch);
    m.setSeed(seed);
    m.addNeuronGroup("Input", kInputs, models::Poisson(), {{"rate", 20.0}},
                     {{"timeStepToSpike", 0.0}})
        .setSpikeRecording(true);
    m.addNeuronGroup("Cells", kCells, models::LIF(),
                     {{"C", 1.0}, {"TauM", 20.0}, {"Vrest", -65.0}, {"Vreset", -65.0},
                      {"Vthresh", -50.0}, {"Ioffset", 0.0}, {"TauRefrac", 2.0}},
                     {{"V", init::Normal(-60.0, 5.0)}, {"RefracTime", 0.0}})
        .setSpikeRecording(true);
    m.addSynapseGroup("InputToCells", MatrixType::Sparse, 0, "Input", "Cells",
                      {models::StaticPulse(), {}, {{"g", kWeight}}, {}, {}},
                      {models::DeltaCurr(), {}, {}}, init::FixedProbability(0.05));
    m.addCurrentSource("Noise", models::GaussianNoise(), "Cells", {{"mean", 0.0}, {"sd", 1.0}},
                       {});
}

struct Outcome {
    std::vector<SpikeEvent> input, cells;
    std::vector<uint32_t> v; // bit patterns of Cells.V, both batch elements
    std::vector<uint32_t> rowLength, ind;
};

Outcome observe(Simulation& sim) {
    Outcome o;
    sim.pullRecording();
    o.input = sim.spikes("Input");
    o.cells = sim.spikes("Cells");
    sim.pull("Cells", "V");
    for (float x : sim.view<float>("Cells", "V")) o.v.push_back(std::bit_cast<uint32_t>(x));
    sim.pullConnectivity("InputToCells");
    o.rowLength = sim.rowLengths("InputToCells");
    o.ind = sim.columnIndices("InputToCells");
    return o;
}

Outcome runNetwork(uint64_t seed, const BackendPreferences& prefs) {
    Model m("rng_determinism");
    buildNetwork(m, seed);
    Simulation sim(m, prefs);
    sim.setRecordingWindow(kSteps);
    sim.run(kSteps);
    return observe(sim);
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
    EXPECT_EQ(firstDifference(a.v, b.v), -1) << "V differs";
    EXPECT_EQ(firstDifference(a.rowLength, b.rowLength), -1) << "row lengths differ";
    EXPECT_EQ(firstDifference(a.ind, b.ind), -1) << "column indices differ";
}

void expectAllDifferent(const Outcome& a, const Outcome& b) {
    EXPECT_NE(firstDifference(a.input, b.input), -1) << "input spikes identical";
    EXPECT_NE(firstDifference(a.cells, b.cells), -1) << "cell spikes identical";
    EXPECT_NE(firstDifference(a.v, b.v), -1) << "V identical";
    EXPECT_NE(firstDifference(a.ind, b.ind), -1) << "connectivity identical";
}

std::vector<SpikeEvent> ofBatch(const std::vector<SpikeEvent>& s, uint32_t b, uint32_t asBatch) {
    std::vector<SpikeEvent> out;
    for (const auto& e : s)
        if (e.batch == b) out.push_back({e.time, e.neuron, asBatch});
    return out;
}

// The network is not degenerate: both groups spike in both batch elements, and the two batch
// elements draw different numbers (their spike trains differ).
void expectNonTrivial(const Outcome& o) {
    for (uint32_t b = 0; b < kBatch; b++) {
        EXPECT_GT(ofBatch(o.input, b, 0).size(), 1000u) << "input, batch " << b;
        EXPECT_GT(ofBatch(o.cells, b, 0).size(), 1000u) << "cells, batch " << b;
    }
    EXPECT_NE(firstDifference(ofBatch(o.input, 0, 0), ofBatch(o.input, 1, 0)), -1)
        << "batch elements share the input's random stream";
    EXPECT_NE(firstDifference(ofBatch(o.cells, 0, 0), ofBatch(o.cells, 1, 0)), -1)
        << "batch elements produce the same output";
    // V: the two batch copies differ element by element (Normal initialisation and noise).
    size_t same = 0;
    for (size_t i = 0; i < kCells; i++) same += o.v[i] == o.v[kCells + i];
    EXPECT_LT(same, size_t(kCells / 10)) << "V equal in both batch elements";
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
    sim.setRecordingWindow(kSteps);
    sim.run(kSteps);
    const auto first = observe(sim);
    expectNonTrivial(first);
    // reset() rewinds time and the recording window and re-runs every initialiser.
    sim.reset();
    EXPECT_EQ(sim.timestep(), 0u);
    sim.run(kSteps);
    expectIdentical(first, observe(sim));
}

TEST_P(RngDeterminismTest, ThreadCountDoesNotChangeResults) {
    // Each simulation is built and run before the next is built: the CPU backend applies the
    // thread count process-wide when a simulation is built (omp_set_num_threads).
    const auto one = runNetwork(42, prefs(1));
    const auto two = runNetwork(42, prefs(2));
    expectNonTrivial(one);
    expectIdentical(one, two);
}

SF_INSTANTIATE_BACKEND_TESTS(RngDeterminismTest);

} // namespace
