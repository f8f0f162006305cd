// Bounded memory: host mirrors only for what the host touches, overflow-checked sizes, and
// allocation failures that name the array and its size (docs/memory.md).
#include "backend_fixture.hpp"
#include "codegen/arrays.hpp"
#include "spikeforge/models.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <unistd.h>

using namespace spikeforge;
using sftest::errorOf;
using sftest::expectContains;

namespace {

NeuronModel accumulator() {
    NeuronModel a;
    a.name = "Accumulator";
    a.vars = {{"x"}};
    a.simCode = "x += Isyn;";
    return a;
}

void addLif(Model& m, const std::string& name, unsigned n) {
    m.addNeuronGroup(name, n, models::LIF(),
                     {{"C", 1.0},
                      {"TauM", 20.0},
                      {"Vrest", -65.0},
                      {"Vreset", -65.0},
                      {"Vthresh", -50.0},
                      {"Ioffset", 0.0},
                      {"TauRefrac", 2.0}},
                     {{"V", -60.0}, {"RefracTime", 0.0}});
}

class MemoryTest : public sftest::BackendTest {};

TEST_P(MemoryTest, HostMirrorsOnlyForWhatTheHostTouches) {
    Model m("memory_mirrors");
    m.setBatchSize(2);
    addLif(m, "Cell", 10000);
    Simulation sim(m, prefs(1));
    const auto before = sim.memoryUsage();
    EXPECT_EQ(before.hostMirrorBytes, 0u);
    EXPECT_GT(before.deviceBytes, 10000u * 2 * 4 * 3); // V, RefracTime, st at least

    sim.pull("Cell", "V");
    const auto afterPull = sim.memoryUsage();
    EXPECT_EQ(afterPull.hostMirrorBytes, 10000u * 2 * sizeof(float));
    EXPECT_EQ(afterPull.deviceBytes, before.deviceBytes);
    for (float v : sim.view<float>("Cell", "V"))
        ASSERT_EQ(v, -60.0f);

    // A view without a pull is a zero-filled mirror; pushing it writes the device.
    auto refrac = sim.view<float>("Cell", "RefracTime");
    EXPECT_EQ(sim.memoryUsage().hostMirrorBytes, 2 * 10000u * 2 * sizeof(float));
    refrac[3] = 1.5f;
    sim.push("Cell", "RefracTime");
    sim.view<float>("Cell", "RefracTime")[3] = 0.0f;
    sim.pull("Cell", "RefracTime");
    EXPECT_EQ(sim.view<float>("Cell", "RefracTime")[3], 1.5f);

    // Reading the current spikes copies through temporaries: no new mirror.
    sim.run(1);
    (void)sim.currentSpikes("Cell");
    EXPECT_EQ(sim.memoryUsage().hostMirrorBytes, 2 * 10000u * 2 * sizeof(float));
}

// 2^20 x 2^20 Dense synapses: 4 TiB of float weights, more than any machine running this has.
// The model passes every size check; the runtime refuses it against the device's capacity before
// allocating anything (no zero-fill that the OOM killer would end), naming the largest arrays.
TEST_P(MemoryTest, ModelTooBigIsRefusedBeforeAllocating) {
    auto refusal = [&] {
        Model m("memory_huge_dense");
        m.addNeuronGroup("Pre", 1u << 20, accumulator(), {}, {{"x", 0.0}});
        m.addNeuronGroup("Post", 1u << 20, accumulator(), {}, {{"x", 0.0}});
        m.addSynapseGroup("Syn", MatrixType::Dense, 0, "Pre", "Post",
                          {models::StaticPulse(), {}, {{"g", 1.0}}, {}, {}},
                          {models::DeltaCurr(), {}, {}});
        return errorOf<BackendError>([&] { Simulation sim(m, prefs(1)); });
    };
    const std::string first = refusal(); // compiles (or finds the build in the cache)
    const auto t0 = std::chrono::steady_clock::now();
    const std::string msg = refusal();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(msg, first);
    // Largest first: the weights, then Post.inSyn / the 4 MiB neuron arrays.
    expectContains(msg,
                   {"model 'memory_huge_dense' needs 4.0 TiB", "largest arrays: Syn.g 4.0 TiB, ",
                    "MiB", "available", "nothing was allocated", "smaller model"});
    EXPECT_EQ(msg.find("Syn.g", msg.find("Syn.g") + 1), std::string::npos) << msg;
    // Zero-filling even a tenth of 4 TiB takes minutes; a refusal takes milliseconds.
    EXPECT_LT(seconds, 5.0);
}

// The capacity is physical memory lowered to what is available and the cgroup limit: between 1
// MiB and the machine's RAM.
TEST_P(MemoryTest, CapacityIsAtMostPhysicalMemory) {
    Model m("memory_capacity");
    // 2^31 float weights (8 GiB) in 2^16 x 2^15: small enough to plan, and a capacity of more
    // than the machine's RAM would let a model of several times RAM through.
    const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
    ASSERT_GT(pages, 0);
    const double ram = double(pages) * double(pageSize); // [B]
    // Post sized so that the weights alone are twice the RAM.
    const unsigned post = static_cast<unsigned>(std::min(2.0 * ram / 4.0 / 65536.0, 4.0e9));
    m.addNeuronGroup("Pre", 65536, accumulator(), {}, {{"x", 0.0}});
    m.addNeuronGroup("Post", post, accumulator(), {}, {{"x", 0.0}});
    m.addSynapseGroup("Syn", MatrixType::Dense, 0, "Pre", "Post",
                      {models::StaticPulse(), {}, {{"g", 1.0}}, {}, {}},
                      {models::DeltaCurr(), {}, {}});
    const std::string msg = errorOf<BackendError>([&] { Simulation sim(m, prefs(1)); });
    expectContains(msg, {"memory_capacity", "largest arrays: Syn.g"});
}

// With keepInitialState the copy of the trial state counts against the capacity before anything
// is allocated: state of 3/4 of the RAM needs 3/2 of it, and the refusal names the copy.
TEST_P(MemoryTest, InitialStateCopyCountsAgainstTheCapacity) {
    const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
    ASSERT_GT(pages, 0);
    const double ram = double(pages) * double(pageSize); // [B]
    NeuronModel ring = accumulator();
    ring.name = "Ring";
    const auto slots = static_cast<uint32_t>(0.75 * ram / 4.0 / double(1u << 20));
    ring.arrays = {{"ring", "float", slots}};
    Model m("memory_state_copy");
    m.addNeuronGroup("Pop", 1u << 20, ring, {}, {{"x", 0.0}});
    auto p = prefs(1);
    p.keepInitialState = true;
    const std::string msg = errorOf<BackendError>([&] { Simulation sim(m, p); });
    expectContains(msg,
                   {"memory_state_copy", "Pop.ring (initial state copy)", "nothing was allocated"});
}

// A model that fits is not refused, and its recording chunk counts: a setEGP beyond the capacity
// is refused before anything is released, so the EGP keeps its values.
TEST_P(MemoryTest, EgpBeyondCapacityIsRefusedAndKeepsTheEgp) {
    Model m("memory_egp_capacity");
    m.setDT(1.0);
    m.addNeuronGroup("Src", 4, models::SpikeSourceArray(), {},
                     {{"startSpike", 0.0}, {"endSpike", 0.0}})
        .setSpikeRecording(true);
    Simulation sim(m, prefs(1));
    sim.view<uint32_t>("Src", "endSpike")[1] = 1;
    sim.push("Src", "endSpike");
    sim.setEGP("Src", "spikeTimes", std::vector<double>{2.5});
    // 2^60 values: 4 EiB of floats, which fits a 64-bit count but no machine. The span is never
    // read: its size is checked first.
    const double one = 1.0;
    const std::span<const double> huge(&one, size_t(1) << 60);
    const std::string msg = errorOf<BackendError>([&] { sim.setEGP("Src", "spikeTimes", huge); });
    expectContains(msg, {"Src.spikeTimes", "4.0 EiB", "available", "smaller model"});
    sim.setRecordingWindow(5);
    sim.run(5);
    sim.pullRecording();
    const auto spikes = sim.spikes("Src");
    ASSERT_EQ(spikes.size(), 1u);
    EXPECT_EQ(spikes[0].neuron, 1u);
    EXPECT_EQ(spikes[0].time, 3.0); // the first step with t >= 2.5 [ms]
}

TEST_P(MemoryTest, EgpSizeOverflowIsNamedAndLeavesTheEgpAsItWas) {
    Model m("memory_egp");
    m.setDT(1.0);
    m.addNeuronGroup("Src", 4, models::SpikeSourceArray(), {},
                     {{"startSpike", 0.0}, {"endSpike", 0.0}})
        .setSpikeRecording(true);
    Simulation sim(m, prefs(1));
    sim.view<uint32_t>("Src", "endSpike")[2] = 1; // neuron 2 fires spikeTimes[0]
    sim.push("Src", "endSpike");
    sim.setEGP("Src", "spikeTimes", std::vector<double>{1.5});
    // A span that claims more values than 64-bit byte counts can hold is never read: its size
    // is checked before anything is released or allocated.
    const double one = 1.0;
    const std::span<const double> huge(&one, (size_t(1) << 62) + 1);
    const std::string msg = errorOf<ModelError>([&] { sim.setEGP("Src", "spikeTimes", huge); });
    expectContains(msg, {"Src.spikeTimes", "overflows"});
    sim.setRecordingWindow(5);
    sim.run(5);
    sim.pullRecording();
    const auto spikes = sim.spikes("Src");
    ASSERT_EQ(spikes.size(), 1u);
    EXPECT_EQ(spikes[0].neuron, 2u);
}

SF_INSTANTIATE_BACKEND_TESTS(MemoryTest);

// Element and byte counts that do not fit in 64 bits are refused when the arrays are planned.
TEST(MemoryPlan, OverflowingSizesAreModelErrors) {
    Model m("memory_overflow");
    m.setBatchSize(2);
    // Groups whose spike queues (two slots) still index with 32 bits: their Dense product
    // overflows a byte count.
    m.addNeuronGroup("Pre", 0x7FFFFFF0u, accumulator(), {}, {{"x", 0.0}});
    m.addNeuronGroup("Post", 0x7FFFFFF0u, accumulator(), {}, {{"x", 0.0}});
    m.addSynapseGroup("Syn", MatrixType::Dense, 0, "Pre", "Post",
                      {models::StaticPulse(), {}, {{"g", 1.0}}, {}, {}},
                      {models::DeltaCurr(), {}, {}});
    // Model::finalise checks sizes too; whichever layer sees it first must name the group.
    const std::string msg = errorOf<ModelError>([&] {
        m.finalise();
        (void)codegen::planArrays(m);
    });
    expectContains(msg, {"Syn", "overflow"});
}

TEST(MemoryPlan, SizesAreExact) {
    Model m("memory_sizes");
    m.setBatchSize(3);
    addLif(m, "Cell", 100);
    m.finalise();
    std::map<std::string, size_t> counts;
    for (const auto& a : codegen::planArrays(m))
        counts[a.name] = a.count;
    EXPECT_EQ(counts.at("Cell.V"), 300u);
    EXPECT_EQ(counts.at("Cell.spk"), 600u);        // two queue slots (the current and the next)
    EXPECT_EQ(counts.at("Cell.spkBits"), 3u * 4u); // ceil(100 / 32) words per batch element
    EXPECT_EQ(counts.at("Cell.recordSpk"), 0u);    // sized by the recording window
}

} // namespace
