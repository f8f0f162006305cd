// cpu against each GPU backend (opencl, cuda) on whole networks, batch 1 and 7 (issues #8, #9).
// Every backend draws every
// random number from the same Philox streams, so one seed gives the same connectivity, initial
// values and Poisson spikes on both. Where no result can depend on summation order — every
// value a small dyadic rational (integer and power-of-two weights, a leak of 1/2), so every sum
// is exact in float whatever its order — spike recordings and variables must be bit-identical.
// Elsewhere (COBA's conductances; STDP weights, which go through exp()) they agree within the
// tolerances stated at each test. Every test skips, saying why, when its GPU backend is not
// usable here (cuda needs a GPU and its driver: tools/device-check --cuda runs these there).
#include "backend_fixture.hpp"
#include "example_runner.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

using namespace spikeforge;

namespace {

bool usable(const std::string& backend) {
    const auto b = sftest::suiteBackends();
    return std::find(b.begin(), b.end(), backend) != b.end();
}

#define SKIP_UNLESS_CPU_AND(gpu)                                                                   \
    do {                                                                                           \
        if (!usable("cpu")) GTEST_SKIP() << "the cpu backend is not usable on this machine";       \
        if (!usable(gpu))                                                                          \
            GTEST_SKIP() << "the " << (gpu) << " backend is not usable on this machine "           \
                         << "(spikeforge info says why)";                                          \
    } while (0)

// (GPU backend, batch size) pairs: every test compares cpu with each GPU backend.
using GpuBatch = std::tuple<std::string, unsigned>;
const auto kGpuBatches = ::testing::Combine(
    ::testing::Values(std::string("opencl"), std::string(sftest::kOpenClGpuKernels),
                      std::string("cuda")),
    ::testing::Values(1u, 7u));
std::string gpuBatchName(const ::testing::TestParamInfo<GpuBatch>& info) {
    return std::get<0>(info.param) + "_batch" + std::to_string(std::get<1>(info.param));
}

BackendPreferences on(const std::string& backend) {
    return sftest::preferencesFor(backend);
}

// Bit patterns, so that -0.0 vs 0.0 or a NaN would count as a difference too.
std::vector<uint32_t> bitsOf(std::span<const float> values) {
    std::vector<uint32_t> out(values.size());
    std::memcpy(out.data(), values.data(), values.size() * sizeof(float));
    return out;
}

std::vector<uint32_t> pulledBits(Simulation& sim, const std::string& group,
                                 const std::string& var) {
    sim.pull(group, var);
    return bitsOf(sim.view<float>(group, var));
}

// The synapses of a sparse group as (row, column) pairs in row order, for comparing
// connectivity independently of the row stride.
std::vector<std::pair<uint32_t, uint32_t>> synapsesOf(Simulation& sim, const std::string& group) {
    sim.pullConnectivity(group);
    const auto lengths = sim.rowLengths(group);
    const auto columns = sim.columnIndices(group);
    const unsigned stride = sim.rowStride(group);
    std::vector<std::pair<uint32_t, uint32_t>> out;
    for (uint32_t i = 0; i < lengths.size(); ++i)
        for (uint32_t k = 0; k < lengths[i]; ++k)
            out.emplace_back(i, columns[size_t(i) * stride + k]);
    return out;
}

// A sparse group's per-synapse variable in the same order as synapsesOf, per batch element.
std::vector<float> sparseValues(Simulation& sim, const std::string& group, const std::string& var,
                                unsigned batch) {
    sim.pullConnectivity(group);
    sim.pull(group, var);
    const auto lengths = sim.rowLengths(group);
    const unsigned stride = sim.rowStride(group);
    const auto all = sim.view<float>(group, var);
    const size_t perBatch = all.size() / batch;
    std::vector<float> out;
    for (unsigned b = 0; b < batch; ++b)
        for (uint32_t i = 0; i < lengths.size(); ++i)
            for (uint32_t k = 0; k < lengths[i]; ++k)
                out.push_back(all[b * perBatch + size_t(i) * stride + k]);
    return out;
}

// ---- an exact network ---------------------------------------------------------------------------

// Integrate-and-fire on dyadic rationals: v halves every step and adds its input; a spike
// subtracts the threshold. Poisson sources (P) and a spike-time array (S) drive X; X drives Y
// through axonal plus dendritic delays, Y inhibits X. Every weight is a multiple of 1/4 and
// every |v| stays far below 2^20, so every sum is exact in any order. P -> Y is an STDP
// projection whose input Y ignores (postsynaptic model Ignore), so Y's spikes stay exact
// while its weights learn from exact spike times.
const char* kExactNetwork = R"(
[model]
name = "exact"
dt = 1.0
seed = 4321
duration_ms = 400.0

[neuron_models.HalfLeak]
params = ["th"]
vars = ["v"]
sim_code = "v = 0.5 * v + Isyn;"
threshold_condition_code = "v >= th"
reset_code = "v -= th;"

[postsynaptic_models.Ignore]
sim_code = "inSyn = 0.0;"

[[populations]]
name = "P"
size = 60
model = "Poisson"
params = { rate = 40.0 }
vars = { timeStepToSpike = 0.0 }

[[populations]]
name = "S"
size = 3
model = "SpikeSourceArray"
spike_times = [[5.5, 50.5, 120.5], [7.5, 8.5, 9.5, 200.5], []]

[[populations]]
name = "X"
size = 45
model = "HalfLeak"
params = { th = 2.0 }
vars = { v = { init = "Binomial", n = 4, p = 0.25 } }

[[populations]]
name = "Y"
size = 37
model = "HalfLeak"
params = { th = 1.5 }
vars = { v = 0.0 }

[[projections]]
name = "PX"
source = "P"
target = "X"
matrix = "sparse"
connectivity = { init = "FixedProbability", prob = 0.2 }
weight_update = { model = "StaticPulse", vars = { g = 0.75 } }
postsynaptic = { model = "DeltaCurr" }

[[projections]]
name = "SX"
source = "S"
target = "X"
matrix = "dense"
delay_steps = 3
weight_update = { model = "StaticPulseConstantWeight", params = { g = 2.0 } }
postsynaptic = { model = "DeltaCurr" }

[[projections]]
name = "XY"
source = "X"
target = "Y"
matrix = "sparse"
delay_steps = 2
max_dendritic_delay_steps = 6
connectivity = { init = "FixedProbability", prob = 0.3 }
weight_update = { model = "StaticPulseDendriticDelay", vars = { g = 0.5, d = { init = "Uniform", min = 0.0, max = 4.5 } } }
postsynaptic = { model = "DeltaCurr" }

[[projections]]
name = "YX"
source = "Y"
target = "X"
matrix = "dense"
weight_update = { model = "StaticPulse", vars = { g = -0.25 } }
postsynaptic = { model = "DeltaCurr" }

[[projections]]
name = "PY"
source = "P"
target = "Y"
matrix = "sparse"
connectivity = { init = "FixedProbability", prob = 0.25 }
postsynaptic = { model = "Ignore" }
[projections.weight_update]
model = "STDPNearest"
params = { tauPlus = 20.0, tauMinus = 20.0, Aplus = 0.01, Aminus = 0.012, Wmin = 0.0, Wmax = 1.0 }
vars = { g = 0.5 }
)";

struct ExactResult {
    std::map<std::string, std::vector<SpikeEvent>> spikes;
    std::map<std::string, std::vector<uint32_t>> vBits; // X, Y after the run
    std::map<std::string, std::vector<std::pair<uint32_t, uint32_t>>> synapses;
    std::vector<float> learned; // PY g, synapse order
};

ExactResult runExact(const std::string& backend, unsigned batch) {
    auto run = sftest::ExampleRun::fromText(kExactNetwork, on(backend), batch);
    ExactResult r;
    for (const char* g : {"PX", "XY", "PY"})
        r.synapses[g] = synapsesOf(*run.sim, g);
    r.spikes = run.run();
    for (const char* g : {"X", "Y"})
        r.vBits[g] = pulledBits(*run.sim, g, "v");
    r.learned = sparseValues(*run.sim, "PY", "g", batch);
    return r;
}

class CrossBackendExact : public ::testing::TestWithParam<GpuBatch> {};

// Same connectivity, same spikes of every population (Poisson sources included), same membrane
// potentials to the bit. STDP weights: each is a sum of terms A·exp(-Δt/tau) over the same
// spike pairs, but exp() may differ in the last place between the C library and the OpenCL
// device, so they agree to 1e-5 (about 100 float ulps of Wmax, far below one update, 1e-2).
TEST_P(CrossBackendExact, SpikesAndVariablesAreBitIdentical) {
    const auto& [gpu, batch] = GetParam();
    SKIP_UNLESS_CPU_AND(gpu);
    const ExactResult cpu = runExact("cpu", batch);
    const ExactResult ocl = runExact(gpu, batch);
    for (const auto& [g, s] : cpu.synapses) {
        EXPECT_FALSE(s.empty()) << g;
        EXPECT_EQ(s, ocl.synapses.at(g)) << g;
    }
    for (const auto& [pop, spikes] : cpu.spikes) {
        SCOPED_TRACE(pop);
        if (pop == "S")
            EXPECT_EQ(spikes.size(), 7u * batch); // the spike-time array, every batch element
        else
            EXPECT_GT(spikes.size(), 100u * batch); // active (cpu: 35-50 Hz)
        EXPECT_TRUE(spikes == ocl.spikes.at(pop))
            << spikes.size() << " vs " << ocl.spikes.at(pop).size();
    }
    for (const auto& [pop, bits] : cpu.vBits)
        EXPECT_TRUE(bits == ocl.vBits.at(pop)) << pop;
    ASSERT_EQ(cpu.learned.size(), ocl.learned.size());
    size_t changed = 0;
    for (size_t i = 0; i < cpu.learned.size(); ++i) {
        EXPECT_NEAR(cpu.learned[i], ocl.learned[i], 1e-5) << "synapse " << i;
        changed += cpu.learned[i] != 0.5f;
    }
    EXPECT_GT(changed, cpu.learned.size() / 2); // STDP did act
}

INSTANTIATE_TEST_SUITE_P(Batch, CrossBackendExact, kGpuBatches, gpuBatchName);

// ---- COBA ---------------------------------------------------------------------------------------

// examples/coba.toml at N = 1000 with p = 0.08 (the same 80 inputs per neuron as N = 4000,
// p = 0.02), 1 s. Initial values and connectivity are bit-identical; the conductances are
// float sums in different orders, so spike trains part after a few ms and only the population
// rates are compared: within 10 % of their mean plus 5 standard errors of the spike counts
// (Poisson: sqrt(count)), per population over all batch elements.
class CrossBackendCoba : public ::testing::TestWithParam<GpuBatch> {};

TEST_P(CrossBackendCoba, InitialStateIsIdenticalAndRatesAgree) {
    const auto& [gpu, batch] = GetParam();
    SKIP_UNLESS_CPU_AND(gpu);
    const std::vector<std::string> sets = {"N=1000", "p=0.08"};
    sftest::ExampleRun cpu("coba.toml", sets, on("cpu"), batch);
    sftest::ExampleRun ocl("coba.toml", sets, sftest::releaseBuild(on(gpu)), batch);
    for (const char* pop : {"E", "I"})
        EXPECT_TRUE(pulledBits(*cpu.sim, pop, "v") == pulledBits(*ocl.sim, pop, "v")) << pop;
    for (const char* g : {"EE", "EI", "IE", "II"})
        EXPECT_EQ(synapsesOf(*cpu.sim, g), synapsesOf(*ocl.sim, g)) << g;
    const auto a = cpu.run();
    const auto b = ocl.run();
    for (const auto& [pop, spikes] : a) {
        SCOPED_TRACE(pop);
        const double na = double(spikes.size()), nb = double(b.at(pop).size());
        EXPECT_GT(na, 100.0 * batch);
        EXPECT_NEAR(nb, na, 0.1 * 0.5 * (na + nb) + 5.0 * std::sqrt(na + nb));
    }
}

INSTANTIATE_TEST_SUITE_P(Batch, CrossBackendCoba, kGpuBatches, gpuBatchName);

} // namespace
