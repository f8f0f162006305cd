// Streamed spike recording: spikes are exact against a known per-batch pattern, whatever the
// chunk size, however run() is split, with or without a sink, and a window far longer than
// memory would allow recorded up front costs one bounded chunk.
#include "backend_fixture.hpp"
#include "runtime/recording.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <vector>

using namespace spikeforge;

namespace {

constexpr double kDt = 1.0;       // [ms] so that an event's time is its step
constexpr unsigned kNeurons = 70; // three 32-bit words, the last one partly used

// Neuron i of batch element b fires at step n when this holds: a pattern that differs between
// batch elements, so a batch-major/time-major mix-up of the recording buffer is visible.
bool fires(unsigned b, unsigned i, uint64_t n) {
    return ((n + 1) * (i + 2) + 3 * b) % 11 < 2;
}

// k counts steps (k = n + 1 in the threshold test of step n); the threshold is the pattern.
NeuronModel pattern() {
    NeuronModel m;
    m.name = "Pattern";
    m.vars = {{"k", "int"}};
    m.simCode = "k += 1;";
    m.thresholdConditionCode = "(k * (id + 2) + 3 * batch) % 11 < 2";
    return m;
}

void buildModel(Model& m, unsigned batch, bool twoGroups = false) {
    m.setDT(kDt);
    m.setBatchSize(batch);
    m.addNeuronGroup("A", kNeurons, pattern(), {}, {{"k", 0.0}}).setSpikeRecording(true);
    if (twoGroups) m.addNeuronGroup("B", 33, pattern(), {}, {{"k", 0.0}}).setSpikeRecording(true);
}

// Expected events of steps [from, to), sorted by time, batch, neuron.
std::vector<SpikeEvent> expected(unsigned batch, uint64_t from, uint64_t to,
                                 unsigned neurons = kNeurons) {
    std::vector<SpikeEvent> out;
    for (uint64_t n = from; n < to; n++)
        for (unsigned b = 0; b < batch; b++)
            for (unsigned i = 0; i < neurons; i++)
                if (fires(b, i, n)) out.push_back({double(n) * kDt, i, b});
    return out;
}

class RecordingTest : public sftest::BackendTest {};

TEST_P(RecordingTest, KnownPatternPerBatchElement) {
    Model m("recording_pattern");
    buildModel(m, 3);
    Simulation sim(m, prefs(1));
    sim.setRecordingWindow(60);
    sim.run(60);
    sim.pullRecording();
    const auto want = expected(3, 0, 60);
    ASSERT_GT(want.size(), 100u);
    EXPECT_EQ(sim.spikes("A"), want);
}

TEST_P(RecordingTest, WindowStartsNowAndStopsWhenFull) {
    Model m("recording_pattern");
    buildModel(m, 3);
    Simulation sim(m, prefs(1));
    sim.run(7);
    sim.setRecordingChunkSteps(4);
    sim.setRecordingWindow(21);
    sim.run(40);
    sim.pullRecording();
    EXPECT_EQ(sim.spikes("A"), expected(3, 7, 28));
}

// The same run, recorded in one chunk and in chunks of 1, 3 and 7 steps, with run() split at
// points that do not line up with the chunks and a pullRecording in the middle.
TEST_P(RecordingTest, ChunkedRecordingEqualsSingleChunk) {
    for (unsigned batch : {1u, 3u}) {
        Model m("recording_pattern");
        buildModel(m, batch, true);
        Simulation sim(m, prefs(1));
        sim.setRecordingWindow(100);
        sim.run(100);
        sim.pullRecording();
        EXPECT_EQ(sim.memoryUsage().recordingChunkSteps, 100u);
        const auto singleA = sim.spikes("A"), singleB = sim.spikes("B");
        ASSERT_EQ(singleA, expected(batch, 0, 100));
        ASSERT_EQ(singleB, expected(batch, 0, 100, 33));
        for (uint64_t chunk : {1u, 3u, 7u}) {
            SCOPED_TRACE("batch " + std::to_string(batch) + ", chunk " + std::to_string(chunk));
            sim.reset();
            sim.setRecordingChunkSteps(chunk);
            sim.setRecordingWindow(100);
            EXPECT_EQ(sim.memoryUsage().recordingChunkSteps, chunk);
            sim.run(5);
            sim.step();
            sim.run(13);
            sim.pullRecording();
            EXPECT_EQ(sim.spikes("A"), expected(batch, 0, 19));
            sim.run(50);
            sim.pullRecording();
            sim.pullRecording(); // nothing new: no duplicates
            sim.run(31);
            sim.pullRecording();
            EXPECT_EQ(sim.spikes("A"), singleA);
            EXPECT_EQ(sim.spikes("B"), singleB);
        }
    }
}

// Where the host reads device memory in place the buffer holds two chunks and consecutive
// chunks alternate between them (one is decoded while the kernels fill the other); otherwise
// each chunk is copied out and the next one reuses the same steps of the buffer.
TEST_P(RecordingTest, ConsecutiveChunksAlternateHalvesWhereDecodedInPlace) {
    Model m("recording_pattern");
    buildModel(m, 2);
    Simulation sim(m, prefs(1));
    sim.setRecordingChunkSteps(4);
    sim.setRecordingWindow(40);
    sim.run(8); // chunks [0, 4) and [4, 8)
    const unsigned halves = sim.memoryUsage().recordingChunksPerBuffer;
    ASSERT_EQ(halves, GetParam() == "cpu" ? 2u : 1u);
    sim.pull("A", "recordSpk");
    const auto words = sim.view<uint32_t>("A", "recordSpk");
    ASSERT_EQ(words.size(), size_t(4) * halves * 2 * 3);
    const uint64_t firstStep = halves == 2 ? 0 : 4; // of the buffer's first word
    for (uint64_t t = 0; t < 4 * halves; t++)
        for (unsigned b = 0; b < 2; b++)
            for (unsigned i = 0; i < kNeurons; i++) {
                const bool bit = (words[(t * 2 + b) * 3 + i / 32] >> (i % 32)) & 1u;
                ASSERT_EQ(bit, fires(b, i, firstStep + t)) << "step " << firstStep + t;
            }
    sim.run(32);
    sim.pullRecording();
    EXPECT_EQ(sim.spikes("A"), expected(2, 0, 40));
}

TEST_P(RecordingTest, SinkReceivesEverySpikeOnceInOrder) {
    Model m("recording_pattern");
    buildModel(m, 3, true);
    Simulation sim(m, prefs(1));
    std::map<std::string, std::vector<SpikeEvent>> got;
    unsigned calls = 0, elsewhere = 0;
    const auto caller = std::this_thread::get_id();
    sim.setSpikeSink([&](const std::string& group, std::span<const SpikeEvent> events) {
        calls++;
        elsewhere += std::this_thread::get_id() != caller; // chunks are decoded on another
        auto& v = got[group];
        v.insert(v.end(), events.begin(), events.end());
    });
    sim.setRecordingChunkSteps(4);
    sim.setRecordingWindow(50);
    sim.run(23);
    EXPECT_EQ(got["A"], expected(3, 0, 20)); // five full chunks streamed during run()
    sim.run(27);
    sim.pullRecording();
    EXPECT_EQ(got["A"], expected(3, 0, 50));
    EXPECT_EQ(got["B"], expected(3, 0, 50, 33));
    EXPECT_GE(calls, 2u * 12u); // one call per group per chunk with spikes: streamed, not batched
    EXPECT_EQ(elsewhere, 0u);   // but the sink runs on the thread that runs the simulation
    // What went to the sink is not kept as well.
    EXPECT_TRUE(sim.spikes("A").empty());
    EXPECT_TRUE(sim.spikes("B").empty());
    // Host memory is at most one chunk of the two groups (A: 70 neurons, 3 words; B: 33, 2
    // words), every bit as an event, plus their raw words: the chunk being decoded.
    const size_t oneChunk =
        4 * 3 * (kNeurons + 33) * sizeof(SpikeEvent) + 4 * 3 * (3 + 2) * sizeof(uint32_t);
    EXPECT_LE(sim.memoryUsage().recordingHostBytes, oneChunk);
    const size_t keeping =
        (expected(3, 0, 50).size() + expected(3, 0, 50, 33).size()) * sizeof(SpikeEvent);
    EXPECT_LT(oneChunk, keeping); // less than keeping
}

TEST_P(RecordingTest, RemovingTheSinkKeepsSpikesAgain) {
    Model m("recording_pattern");
    buildModel(m, 1);
    Simulation sim(m, prefs(1));
    size_t streamed = 0;
    sim.setSpikeSink(
        [&](const std::string&, std::span<const SpikeEvent> e) { streamed += e.size(); });
    sim.setRecordingChunkSteps(5);
    sim.setRecordingWindow(30);
    sim.run(10);
    sim.setSpikeSink({});
    sim.run(20);
    sim.pullRecording();
    EXPECT_EQ(streamed, expected(1, 0, 10).size());
    EXPECT_EQ(sim.spikes("A"), expected(1, 10, 30));
}

// A sink that throws stops run() at a chunk end; that group's chunk is lost, every other spike
// still arrives exactly once and the simulation goes on. A chunk is delivered while the next one
// is recorded (decoding is off the critical path), so the sink sees chunk [0, 4) at step 8.
TEST_P(RecordingTest, SinkThatThrowsLosesOnlyItsChunk) {
    Model m("recording_pattern");
    buildModel(m, 3, true);
    Simulation sim(m, prefs(1));
    std::map<std::string, std::vector<SpikeEvent>> got;
    bool fail = true;
    sim.setSpikeSink([&](const std::string& group, std::span<const SpikeEvent> events) {
        if (fail && group == "A") {
            fail = false;
            throw std::runtime_error("disk full");
        }
        auto& v = got[group];
        v.insert(v.end(), events.begin(), events.end());
    });
    sim.setRecordingChunkSteps(4);
    sim.setRecordingWindow(40);
    EXPECT_THROW(sim.run(10), std::runtime_error);
    EXPECT_EQ(sim.timestep(), 8u);
    sim.run(36);
    sim.pullRecording();
    EXPECT_EQ(got["A"], expected(3, 4, 40));
    EXPECT_EQ(got["B"], expected(3, 0, 40, 33));
}

// 10^12 steps x 70 neurons would be 8.75 TB of bits up front; streamed it is one chunk.
TEST_P(RecordingTest, HugeWindowUsesOneBoundedChunk) {
    Model m("recording_pattern");
    buildModel(m, 1);
    Simulation sim(m, prefs(1));
    sim.setRecordingWindow(1'000'000'000'000ull);
    const auto mem = sim.memoryUsage();
    EXPECT_LE(mem.recordingBufferBytes, runtime::kRecordingBudgetBytes);
    EXPECT_GE(mem.recordingChunkSteps, 1u);
    sim.run(1000);
    sim.pullRecording();
    EXPECT_EQ(sim.spikes("A"), expected(1, 0, 1000));
}

// A chunk is sized to stay in cache (about 1 MiB) unless that would make it shorter than the
// minimum number of steps between sync points, and never beyond the device budget.
TEST_P(RecordingTest, ChunksAreCacheSizedButNotTooShort) {
    {
        Model m("recording_pattern");
        buildModel(m, 1); // 3 words = 12 bytes per step
        Simulation sim(m, prefs(1));
        sim.setRecordingWindow(100'000'000);
        const auto mem = sim.memoryUsage();
        EXPECT_EQ(mem.recordingChunkSteps, runtime::kRecordingChunkTargetBytes / 12);
        // Two chunks where the host reads device memory in place (one is decoded while the
        // kernels fill the other), one where each chunk is copied out.
        const unsigned halves = GetParam() == "cpu" ? 2u : 1u;
        EXPECT_EQ(mem.recordingChunksPerBuffer, halves);
        EXPECT_EQ(mem.recordingBufferBytes, mem.recordingChunkSteps * 12 * halves);
    }
    Model m("recording_wide");
    m.setDT(kDt);
    m.setBatchSize(4); // 4 x 32768 words = 512 KiB per step: 128 steps fit the budget
    m.addNeuronGroup("A", 32 * 32768, pattern(), {}, {{"k", 0.0}}).setSpikeRecording(true);
    Simulation sim(m, prefs(1));
    sim.setRecordingWindow(100'000'000);
    const auto wide = sim.memoryUsage(); // both chunks of a buffer within the budget
    EXPECT_EQ(wide.recordingChunkSteps, 128u / wide.recordingChunksPerBuffer);
    EXPECT_LE(wide.recordingBufferBytes, runtime::kRecordingBudgetBytes);
    Model narrow("recording_narrow");
    narrow.setDT(kDt);
    narrow.addNeuronGroup("A", 32 * 4096, pattern(), {}, {{"k", 0.0}}).setSpikeRecording(true);
    Simulation simNarrow(narrow, prefs(1)); // 16 KiB per step: the minimum steps win over 1 MiB
    simNarrow.setRecordingWindow(100'000'000);
    EXPECT_EQ(simNarrow.memoryUsage().recordingChunkSteps, runtime::kRecordingMinChunkSteps);
}

TEST_P(RecordingTest, WindowEndThatOverflowsIsAnError) {
    Model m("recording_pattern");
    buildModel(m, 1);
    Simulation sim(m, prefs(1));
    sim.run(5);
    try {
        sim.setRecordingWindow(std::numeric_limits<uint64_t>::max());
        FAIL() << "no exception";
    } catch (const ModelError& e) {
        EXPECT_NE(std::string(e.what()).find("recording window"), std::string::npos) << e.what();
    }
    // Nothing is recorded, and the simulation still runs.
    sim.run(5);
    sim.pullRecording();
    EXPECT_TRUE(sim.spikes("A").empty());
}

SF_INSTANTIATE_BACKEND_TESTS(RecordingTest);

} // namespace
