// Extra global parameters set from the host: typed uploads (one copy, no conversion, no host
// mirror), device memory reused for same-size uploads, and only EGPs accepted by setEGP.
#include "backend_fixture.hpp"

#include "spikeforge/model.hpp"
#include "spikeforge/models.hpp"

#include <map>
#include <span>
#include <vector>

namespace {

using namespace spikeforge;
using sftest::BackendTest;
using sftest::errorOf;
using sftest::expectContains;

constexpr double kDt = 1.0; // [ms]

// Two spike sources: source i emits its spikeTimes[start[i], end[i]).
void addSources(Model& m) {
    m.setDT(kDt);
    m.addNeuronGroup("Src", 2, models::SpikeSourceArray(), {},
                     {{"startSpike", 0.0}, {"endSpike", 0.0}});
}

// Source i replays element i of spikeTimes (one spike each).
void pointAtOneTimeEach(Simulation& sim) {
    auto start = sim.view<uint32_t>("Src", "startSpike");
    auto end = sim.view<uint32_t>("Src", "endSpike");
    for (uint32_t i = 0; i < 2; i++) {
        start[i] = i;
        end[i] = i + 1;
    }
    sim.push("Src", "startSpike");
    sim.push("Src", "endSpike");
}

// Spike time that a source emits at step n (as the propagation tests place them).
float emittedAt(unsigned n) {
    return static_cast<float>((n - 0.5) * kDt);
}

// The step at which each source spiked, over `steps` steps.
std::map<uint32_t, uint64_t> spikeSteps(Simulation& sim, unsigned steps) {
    std::map<uint32_t, uint64_t> at;
    for (unsigned n = 0; n < steps; n++) {
        const uint64_t step = sim.timestep();
        sim.step();
        const auto spikes = sim.currentSpikes("Src");
        for (uint32_t i : spikes[0])
            at[i] = step;
    }
    return at;
}

using EgpUploadTest = BackendTest;

TEST_P(EgpUploadTest, TypedUploadIsOneCopyWithoutMirrorAndSameSizeReusesTheBuffer) {
    Model m("egp_typed");
    addSources(m);
    Simulation sim(m, prefs());
    pointAtOneTimeEach(sim);

    const std::vector<float> first{emittedAt(2), emittedAt(4)};
    const DeviceTransfers before = sim.transfers();
    const size_t mirrors = sim.memoryUsage().hostMirrorBytes;
    sim.setEGP<float>("Src", "spikeTimes", std::span<const float>(first));
    const DeviceTransfers after = sim.transfers();
    EXPECT_EQ(after.toDevice, before.toDevice + 1);
    EXPECT_EQ(after.bytesToDevice, before.bytesToDevice + first.size() * sizeof(float));
    EXPECT_EQ(sim.memoryUsage().hostMirrorBytes, mirrors) << "a typed upload made a host mirror";
    EXPECT_EQ(spikeSteps(sim, 6), (std::map<uint32_t, uint64_t>{{0, 2}, {1, 4}}));

    // Same size again, mid-run: the buffer is rewritten in place and the new times are used.
    const size_t deviceBytes = sim.memoryUsage().deviceBytes;
    pointAtOneTimeEach(sim);
    const std::vector<float> second{emittedAt(9), emittedAt(8)};
    sim.setEGP<float>("Src", "spikeTimes", std::span<const float>(second));
    EXPECT_EQ(sim.memoryUsage().deviceBytes, deviceBytes);
    EXPECT_EQ(spikeSteps(sim, 5), (std::map<uint32_t, uint64_t>{{0, 9}, {1, 8}}));

    // A different size reallocates, and the kernels see the new buffer.
    pointAtOneTimeEach(sim);
    const std::vector<float> third{emittedAt(13), emittedAt(12), 1e9f};
    sim.setEGP<float>("Src", "spikeTimes", std::span<const float>(third));
    EXPECT_EQ(sim.memoryUsage().deviceBytes, deviceBytes + sizeof(float));
    EXPECT_EQ(spikeSteps(sim, 4), (std::map<uint32_t, uint64_t>{{0, 13}, {1, 12}}));
}

TEST_P(EgpUploadTest, TypedUploadOfTheWrongTypeIsRefusedAndKeepsTheValues) {
    Model m("egp_wrong_type");
    addSources(m);
    Simulation sim(m, prefs());
    pointAtOneTimeEach(sim);
    const std::vector<float> times{emittedAt(1), emittedAt(3)};
    sim.setEGP<float>("Src", "spikeTimes", std::span<const float>(times));
    const std::vector<double> asDouble{0.5, 0.5};
    const std::string msg = errorOf<ModelError>(
        [&] { sim.setEGP<double>("Src", "spikeTimes", std::span<const double>(asDouble)); });
    expectContains(msg, {"spikeTimes", "Src", "element type float"});
    EXPECT_EQ(spikeSteps(sim, 4), (std::map<uint32_t, uint64_t>{{0, 1}, {1, 3}}));
}

TEST_P(EgpUploadTest, SetEgpRefusesStateVariablesAndNamesTheEgps) {
    Model m("egp_state_var");
    addSources(m);
    Simulation sim(m, prefs());
    const std::vector<double> one{1.0};
    const std::string msg =
        errorOf<ModelError>([&] { sim.setEGP("Src", "startSpike", std::span<const double>(one)); });
    expectContains(msg, {"'startSpike'", "'Src'", "not an extra global parameter", "spikeTimes"});
    const std::vector<uint32_t> typed{1};
    expectContains(errorOf<ModelError>([&] {
                       sim.setEGP<uint32_t>("Src", "endSpike", std::span<const uint32_t>(typed));
                   }),
                   {"'endSpike'", "not an extra global parameter"});
    sim.pull("Src", "startSpike");
    EXPECT_EQ(sim.view<uint32_t>("Src", "startSpike").size(), 2u) << "the variable was resized";
}

SF_INSTANTIATE_BACKEND_TESTS(EgpUploadTest);

} // namespace
