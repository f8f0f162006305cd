#pragma once
// Streamed spike recording. Generated code writes one bit per neuron, batch element and step into
// "<group>.recordSpk" (layout [step][batch][word]) for steps in [recordStart, recordStart +
// recordSteps). The recorder makes that buffer a chunk of at most a few steps: the runtime never
// runs past the end of the chunk; there the recorder copies the filled steps, clears them and
// starts the next chunk at the current step. Host memory then grows with the number of spikes,
// never with steps x neurons.
//
// Decoding is off the critical path: a full chunk is decoded on the recorder's own thread while
// the simulation records the next one, and delivered (to the sink, or kept) on the caller's thread
// at the next chunk end or when the public call ends (deliver()). Sinks therefore run where they
// always did, in time order, and everything recorded is delivered when run() returns.
//
// Where device buffers are host memory (Device::buffersAreHostMemory, the cpu device) the buffer
// holds two chunks and the kernels fill one half while the other is decoded in place: no copy
// per chunk (a 1 MiB copy at each of COBA's 48 chunk ends was a third of recording's cost).
// The kernels still see one chunk, [recordStart, recordStart + recordSteps) of StepArgs: for
// the second half the recorder reports a start one chunk earlier (kernelRecordStart), so the
// generated index (step - recordStart) lands in it.
#include "backends/backend.hpp"
#include "runtime/host_array.hpp"
#include "spikeforge/simulation.hpp"

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace spikeforge::runtime {

// Device bytes the recording buffers of all recorded groups together may use (docs/memory.md).
inline constexpr size_t kRecordingBudgetBytes = size_t(64) << 20; // 64 MiB
// A chunk is sized to about this many bytes, so that the buffer the kernels write, its host copy
// and the decoded events stay in cache and are reused chunk after chunk (a 64 MiB chunk made
// every step's bits a new cache line in memory and every chunk new pages: ×1.2 on COBA) ...
inline constexpr size_t kRecordingChunkTargetBytes = size_t(1) << 20; // 1 MiB
// ... but holds at least this many steps where the budget allows, as each chunk end is a sync
// point (a GPU waits there for the host).
inline constexpr uint64_t kRecordingMinChunkSteps = 1024;

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

    // Record steps [start, start + steps): delivers the chunk being decoded, discards kept events
    // and allocates the chunk buffers.
    void setWindow(uint64_t start, uint64_t steps, const Allocate& allocate);
    // Time went back to step 0 (Simulation::reset, resetState): discards kept events (and the
    // chunk being decoded, unless a sink is to receive it at the next deliver()) and records
    // the same number of steps again from step 0.
    void rewind();

    // The first step of the chunk and the number of steps it takes.
    uint64_t recordStart() const { return m_chunkStart; }
    uint64_t recordSteps() const;
    // For StepArgs: the step of the buffer's bit 0 and the steps the kernels may record from it
    // (the chunk, after the first half when the kernels fill the second one).
    uint64_t kernelRecordStart() const { return m_chunkStart - m_half * m_chunkCapacity; }
    uint64_t kernelRecordSteps() const {
        return active() ? m_half * m_chunkCapacity + recordSteps() : 0;
    }
    // Steps that may run from `step` before the chunk must be flushed (UINT64_MAX when idle).
    uint64_t stepsUntilFlush(uint64_t step) const;
    // After running up to `step`: if the chunk is full, delivers the one decoded meanwhile and
    // hands this one to the decoding thread (then true: a sync point).
    bool afterRun(uint64_t step);
    // Delivers the chunk being decoded, if any (the end of a public call that ran steps).
    void deliver();
    // Waits for the decoding thread without delivering (before reading hostBytes()).
    void settle();
    // Decodes and delivers the steps recorded before `step` and starts a new chunk there
    // (pullRecording).
    void flush(uint64_t step);

    bool records(const std::string& group) const;
    const std::vector<SpikeEvent>& events(const std::string& group) const;
    uint64_t chunkSteps() const { return m_chunkCapacity; }
    unsigned chunksPerBuffer() const { return m_halves; }
    size_t hostBytes() const; // kept events and the decoding buffers; settle() first

private:
    // One thread that runs one job at a time; the job's exception is rethrown by wait().
    class Worker {
    public:
        ~Worker();
        // Runs `job` on the thread (started on first use), or here if no thread can be started.
        void start(std::function<void()> job);
        void wait();

    private:
        void loop();
        std::thread m_thread;
        std::mutex m_mutex;
        std::condition_variable m_cv;
        std::function<void()> m_job;
        bool m_busy = false, m_stop = false;
        std::exception_ptr m_error;
    };

    // A full chunk, copied from the device or read in place: decoded on the worker, then
    // delivered group by group.
    struct Copied {
        uint64_t start = 0, steps = 0;               // first step, steps it holds
        unsigned half = 0;                           // the buffer half read in place
        std::vector<std::vector<uint32_t>> words;    // per group: [step][batch][word] (a copy)
        std::vector<const uint32_t*> inPlace;        // per group: the half, or nullptr: words
        std::vector<std::vector<SpikeEvent>> events; // per group, once decoded
        size_t undelivered = 0;                      // first group not yet delivered
        bool decoding = false, decoded = false;
        std::exception_ptr error; // the decode's, rethrown when it is to be delivered
    };

    bool active() const { return m_chunkStart < m_windowEnd; }
    size_t bytesPerStep() const; // all groups, all batch elements
    uint64_t chunkCapacity(uint64_t windowSteps) const;
    // Copies and clears the steps [m_chunkStart, end) and starts decoding them.
    void handOff(uint64_t end);
    void decodeCopied();
    // Waits for the copied chunk; false if there is none.
    bool waitDecoded();
    void decode(const uint32_t* words, uint64_t start, uint64_t steps, const Group& g,
                std::vector<SpikeEvent>& out) const;
    // The half the chunk starting at `start` fills: not the one being decoded (waits for the
    // decode where the second half cannot take that chunk, as the kernels' start would be < 0).
    unsigned halfFor(uint64_t start);

    backends::Device& m_device;
    std::vector<Group> m_groups;
    std::vector<std::vector<SpikeEvent>> m_events; // per group, kept when there is no sink
    unsigned m_batch;
    double m_dt; // [ms]
    SpikeSink m_sink;
    uint64_t m_chunkLimit = 0;
    uint64_t m_chunkCapacity = 0; // steps each chunk holds
    unsigned m_halves = 1;        // chunks each buffer holds: 2 when decoded in place
    unsigned m_half = 0;          // the half the current chunk fills
    uint64_t m_windowSteps = 0;
    uint64_t m_windowEnd = 0;  // first step not recorded
    uint64_t m_chunkStart = 0; // first step of the current chunk
    Copied m_copied;
    Worker m_worker; // last: stopped before the chunk it decodes is destroyed
};

} // namespace spikeforge::runtime
