#pragma once
// Streamed spike recording. Generated code writes one bit per neuron, batch element and step into
// "<group>.recordSpk" (layout [step][batch][word]) for steps in [recordStart, recordStart +
// recordSteps). The recorder makes that buffer a chunk of at most a few steps: the runtime never
// runs past the end of the chunk; there the recorder copies the filled steps, decodes them into
// events, clears them and starts the next chunk at the current step. Host memory then grows with
// the number of spikes, never with steps x neurons.
#include "backends/backend.hpp"
#include "runtime/host_array.hpp"
#include "spikeforge/simulation.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace spikeforge::runtime {

// Device bytes the recording buffers of all recorded groups together may use (docs/memory.md).
// A chunk holds as many steps as fit, and at least one.
inline constexpr size_t kRecordingBudgetBytes = size_t(64) << 20; // 64 MiB

class SpikeRecorder {
public:
    struct Group {
        std::string name;
        unsigned neurons = 0;
        HostArray* buffer = nullptr; // the group's "recordSpk" array, owned by the runtime
    };
    // (Re)allocates a device array to `count` elements; the runtime also rebinds its tables.
    using Allocate = std::function<void(HostArray&, size_t count)>;

    SpikeRecorder(backends::Device& device, std::vector<Group> groups, unsigned batch, double dt);

    // Largest chunk in steps (0 = as many as kRecordingBudgetBytes allows); from the next window.
    void setChunkLimit(uint64_t steps) { m_chunkLimit = steps; }
    void setSink(SpikeSink sink) { m_sink = std::move(sink); }

    // Record steps [start, start + steps): discards kept events and allocates the chunk buffers.
    void setWindow(uint64_t start, uint64_t steps, const Allocate& allocate);
    // Time went back to step 0 and every device array was cleared (Simulation::reset): record
    // the same number of steps again from step 0.
    void rewind();

    // For StepArgs: the step of bit 0 of the chunk and the number of steps it takes.
    uint64_t recordStart() const { return m_chunkStart; }
    uint64_t recordSteps() const;
    // Steps that may run from `step` before the chunk must be flushed (UINT64_MAX when idle).
    uint64_t stepsUntilFlush(uint64_t step) const;
    // After running up to `step`: flushes the chunk if it is full (then true: a sync point).
    bool afterRun(uint64_t step);
    // Decodes the steps recorded before `step` and starts a new chunk there (pullRecording).
    void flush(uint64_t step);

    bool records(const std::string& group) const;
    const std::vector<SpikeEvent>& events(const std::string& group) const;
    uint64_t chunkSteps() const { return m_chunkCapacity; }
    size_t hostBytes() const; // kept events and the decoding buffer

private:
    bool active() const { return m_chunkStart < m_windowEnd; }
    size_t bytesPerStep() const; // all groups, all batch elements
    uint64_t chunkCapacity(uint64_t windowSteps) const;
    void decode(const std::vector<uint32_t>& words, uint64_t steps, const Group& g,
                std::vector<SpikeEvent>& out) const;

    backends::Device& m_device;
    std::vector<Group> m_groups;
    std::vector<std::vector<SpikeEvent>> m_events; // per group, kept when there is no sink
    unsigned m_batch;
    double m_dt; // [ms]
    SpikeSink m_sink;
    uint64_t m_chunkLimit = 0;
    uint64_t m_chunkCapacity = 0; // steps each chunk buffer holds
    uint64_t m_windowSteps = 0;
    uint64_t m_windowEnd = 0;          // first step not recorded
    uint64_t m_chunkStart = 0;         // first step of the current chunk
    std::vector<uint32_t> m_scratch;   // one group's filled chunk, copied from the device
    std::vector<SpikeEvent> m_decoded; // one group's events of a chunk, for the sink
};

} // namespace spikeforge::runtime
