// Bounded memory: host mirrors only for what the host touches, overflow-checked sizes, and
// allocation failures that name the array and its size (docs/memory.md).
#include "backend_fixture.hpp"
#include "codegen/arrays.hpp"
#include "spikeforge/models.hpp"

#include <fstream>
#include <map>
#include <string>

using namespace spikeforge;

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

template <typename E, typename F> std::string errorOf(F&& f) {
    try {
        f();
    } catch (const E& e) {
        return e.what();
    }
    ADD_FAILURE() << "no exception of the expected type";
    return {};
}

void expectContains(const std::string& msg, std::initializer_list<std::string> fragments) {
    for (const auto& f : fragments)
        EXPECT_NE(msg.find(f), std::string::npos) << "'" << f << "' not in: " << msg;
}

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

// 2^20 x 2^20 Dense synapses: 4 TiB of float weights. The allocation fails and says which array
// and how much, instead of a bare std::bad_alloc.
TEST_P(MemoryTest, ModelTooBigNamesTheAllocation) {
    // ASan aborts on an allocation this size instead of failing it (allocator_may_return_null).
    if (kAddressSanitizer) GTEST_SKIP() << "AddressSanitizer build";
    // With overcommit "always" a 4 TiB allocation may succeed and then be killed when touched.
    std::ifstream overcommit("/proc/sys/vm/overcommit_memory");
    int mode = 0;
    if (overcommit >> mode && mode == 1) GTEST_SKIP() << "vm.overcommit_memory = 1";
    Model m("memory_huge_dense");
    m.addNeuronGroup("Pre", 1u << 20, accumulator(), {}, {{"x", 0.0}});
    m.addNeuronGroup("Post", 1u << 20, accumulator(), {}, {{"x", 0.0}});
    m.addSynapseGroup("Syn", MatrixType::Dense, 0, "Pre", "Post",
                      {models::StaticPulse(), {}, {{"g", 1.0}}, {}, {}},
                      {models::DeltaCurr(), {}, {}});
    const std::string msg = errorOf<BackendError>([&] { Simulation sim(m, prefs(1)); });
    expectContains(msg, {"Syn.g", "4.0 TiB", "smaller model"});
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
    // The largest groups the model accepts: their Dense product still overflows a byte count.
    m.addNeuronGroup("Pre", 0xFFFFFFE0u, accumulator(), {}, {{"x", 0.0}});
    m.addNeuronGroup("Post", 0xFFFFFFE0u, accumulator(), {}, {{"x", 0.0}});
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
    EXPECT_EQ(counts.at("Cell.spk"), 300u);
    EXPECT_EQ(counts.at("Cell.spkBits"), 3u * 4u); // ceil(100 / 32) words per batch element
    EXPECT_EQ(counts.at("Cell.recordSpk"), 0u);    // sized by the recording window
}

} // namespace
