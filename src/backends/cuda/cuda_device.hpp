#pragma once
// The CUDA device: the primary context of one GPU, a stream for the steps' kernels and a second
// for host copies, buffers as device addresses, and the SIMT program of a model once loaded: its
// merged-group tables (laid out on the host and uploaded: on CUDA a buffer is a device address,
// so the Program's table-store kernel is not needed) and the launches of every plan kernel.
// runSequence can capture many steps, custom updates and copies into a CUDA graph and replay it.
#include "backends/cuda/cuda_driver.hpp"
#include "backends/device.hpp"
#include "backends/simt/simt.hpp"

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace spikeforge::cuda {

// What the backend reads of a GPU.
struct DeviceInfo {
    int ordinal = 0; // CUDA device index
    std::string name;
    int major = 0, minor = 0; // compute capability
    int multiprocessors = 0;
    int maxThreadsPerBlock = 0;
    int maxGridX = 0, maxGridY = 0;
};

// The device BackendPreferences::device `selector` names among `count` devices: empty = 0,
// else a decimal index. ModelError for text that is not an index; BackendError naming the count
// for an index out of range (or when there is no device at all).
int selectDevice(const std::string& selector, int count);

// CUDA graphs launched by every CudaDevice of this process so far (tests check that graphs were
// used, not silently replaced by plain launches).
uint64_t graphLaunches();

// Queries device `ordinal` (the driver must be initialised).
DeviceInfo queryDevice(const DriverApi& api, int ordinal);

class CudaDevice : public backends::Device {
public:
    // Retains the device's primary context and creates the streams. `graphSteps`: steps per
    // CUDA graph in runSteps (0: plain launches; BackendPreferences::cudaGraphSteps).
    CudaDevice(const DriverApi& api, DeviceInfo info, uint32_t graphSteps);
    ~CudaDevice() override;
    CudaDevice(const CudaDevice&) = delete;
    CudaDevice& operator=(const CudaDevice&) = delete;

    std::string name() const override { return "cuda"; }
    const DeviceInfo& info() const { return m_info; }

    // Buffers are device addresses (CUdeviceptr) cast to a pointer; the device remembers each
    // one's size to check copies against it.
    backends::Buffer allocate(size_t bytes) override; // zero-filled; nullptr for 0 bytes
    // [B] free device memory now plus what this device holds (cuMemGetInfo).
    size_t memoryCapacity() const override;
    void release(backends::Buffer buffer) override;
    void zero(backends::Buffer buffer, size_t bytes) override;
    // On the step stream, ordered with the kernels (not a host transfer: not counted).
    void copyBuffer(backends::Buffer dst, backends::Buffer src, size_t bytes) override;
    void synchronise() override;
    // The sum of cuEventElapsedTime over the event pairs recorded on the step stream around each
    // timed call (nullopt when the driver lacks event timing). Waits for both streams.
    std::optional<double> busySeconds() override;
    // Per-kernel counters from event pairs around each launch (nullopt without event timing).
    std::optional<std::vector<KernelCounter>> kernelCounters() override;

    // Loads `cubin` (compiled from `program`, generated for `plan`) and resolves every launch's
    // kernel function; tables are allocated on first bind.
    void load(const codegen::Plan& plan, const simt::Program& program, const std::string& cubin);
    void bindTable(size_t table, const std::vector<std::vector<backends::FieldValue>>&) override;
    void launch(size_t kernel, const codegen::abi::StepArgs& args) override;
    // runSequence of one Steps item.
    void runSteps(const std::vector<size_t>& kernels, const codegen::abi::StepArgs& first,
                  uint64_t steps, double dt) override;
    // With graphSteps > 0 and a driver with graphs: the sequence is cut into pieces of at most
    // graphSteps steps (the launches and copies after a piece's last step stay in it), and each
    // piece that holds a step and more work than that one step is captured into a graph (kernel
    // nodes with each launch's arguments baked in, memcpy nodes for copies) and replayed with one
    // cuGraphLaunch; other pieces run as plain launches. Falls back to plain launches for good
    // when capture fails.
    void runSequence(const std::vector<backends::SequenceItem>& items) override;
    // Whether runSequence still uses graphs (false after a failed capture): for tests and probes.
    bool graphsEnabled() const { return m_graphSteps > 0 && m_graphsUsable; }
    // Event pairs of timed calls not yet read (bounded): for tests.
    size_t pendingBusyEvents() const { return m_busyPending.size(); }

protected:
    void writeBuffer(backends::Buffer dst, const void* src, size_t bytes) override;
    void readBuffer(void* dst, backends::Buffer src, size_t bytes) override;

private:
    struct LoadedLaunch {
        CUfunction function;
        simt::Launch launch;
    };
    struct Table {
        codegen::StructLayout layout;
        std::vector<codegen::CType> types; // per field
        size_t groups = 0;
        backends::Buffer buffer = nullptr; // device copy; nullptr until bound
    };
    // The shape of a captured sequence: what a graph of the same key can be updated from.
    using GraphKey = std::vector<uint64_t>;
    struct EventPair {
        CUevent start, end;
        size_t kernel = kNotAKernel; // a kernel-timing pair: around plan kernel `kernel`
    };
    static constexpr size_t kNotAKernel = static_cast<size_t>(-1);

    // Busy time (cuda_busy.cpp): the outermost timed call (runSequence, launch, copyBuffer,
    // zero) is bracketed by an event pair on the step stream, outside any graph capture.
    template <typename F> void timed(F&& work);
    CUevent takeEvent(); // from the pool, else a new timing event
    void giveBack(const EventPair& pair);
    // Reads and recycles the finished pairs, oldest first; with `wait`, waits for all of them.
    void collectBusy(bool wait);
    void destroyEvents();

    void makeCurrent() const;
    void checkRange(backends::Buffer buffer, size_t bytes, const char* what) const;
    void fill(CUdeviceptr pointer, size_t bytes);
    // Makes the copy stream wait for everything enqueued on the step stream so far.
    void copyAfterSteps();
    void upload(backends::Buffer dst, const void* src, size_t bytes); // uncounted copy
    void enqueueLaunches(size_t kernel, const codegen::abi::StepArgs& args);
    // enqueueLaunches, between two timing events when kernel timing is on (never in a capture:
    // sequences then run as plain launches).
    void enqueueKernel(size_t kernel, const codegen::abi::StepArgs& args);
    // runSequence's work: the items in graphs where that pays, else as plain launches.
    void submitSequence(const std::vector<backends::SequenceItem>& items);
    // Enqueues the items on the step stream (plain launches and copies, or captured).
    void enqueue(const std::vector<backends::SequenceItem>& items);
    // Captures `items` into the cached graph of their shape and launches it; false (nothing ran)
    // when capture or instantiation failed.
    bool replayGraph(const std::vector<backends::SequenceItem>& items);
    void destroyGraphs();
    void* staging(size_t bytes); // pinned host buffer of at least `bytes` (capped)

    const DriverApi& m_api;
    DeviceInfo m_info;
    CUdevice m_device = 0;
    CUcontext m_context = nullptr;
    CUstream m_step = nullptr; // kernels, zero-fills
    CUstream m_copy = nullptr; // host <-> device copies
    CUevent m_stepsDone = nullptr;
    std::unordered_map<backends::Buffer, size_t> m_sizes; // [B] of every live buffer
    size_t m_heldBytes = 0;                               // [B] sum of m_sizes
    void* m_staging = nullptr;                            // pinned, cuMemHostAlloc
    size_t m_stagingBytes = 0;

    CUmodule m_module = nullptr;
    std::vector<std::vector<LoadedLaunch>> m_launches; // per plan kernel
    std::vector<Table> m_tables;                       // per merged-group table

    uint32_t m_graphSteps = 0;
    bool m_graphsUsable = false;
    std::map<GraphKey, CUgraphExec> m_graphs;

    bool m_eventTiming = false;          // the driver times events and every read so far worked
    int m_timedDepth = 0;                // nesting of timed calls (only the outermost is measured)
    std::deque<EventPair> m_busyPending; // recorded, not yet read; in stream order
    std::vector<CUevent> m_freeEvents;   // read pairs' events, reused
    double m_busySeconds = 0.0;          // [s] read so far
};

// Runs `work`; the outermost timed call is bracketed by an event pair (busySeconds). Finished
// pairs are read first, so at most a few stay pending.
template <typename F> void CudaDevice::timed(F&& work) {
    if (!m_eventTiming || m_timedDepth > 0) return work();
    makeCurrent();
    collectBusy(false);
    const CUevent start = takeEvent();
    CUevent end = nullptr;
    try {
        end = takeEvent();
    } catch (...) {
        m_freeEvents.push_back(start);
        throw;
    }
    const EventPair pair{start, end};
    m_timedDepth++;
    try {
        check(m_api, m_api.cuEventRecord(pair.start, m_step), "cuEventRecord", "busy time");
        work();
        check(m_api, m_api.cuEventRecord(pair.end, m_step), "cuEventRecord", "busy time");
    } catch (...) {
        m_timedDepth--;
        giveBack(pair);
        throw;
    }
    m_timedDepth--;
    m_busyPending.push_back(pair);
}

} // namespace spikeforge::cuda
