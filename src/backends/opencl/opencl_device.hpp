#pragma once
// The OpenCL device: a context and an in-order command queue on one device, buffers as cl_mem,
// program builds, and the SIMT program of a model once loaded: its merged-group tables (written
// by the host, their buffer addresses stored by the program's address-store kernel) and the
// launches of every plan kernel.
#include "backends/device.hpp"
#include "backends/opencl/platforms.hpp"
#include "backends/simt/simt.hpp"

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace spikeforge::opencl {

// A kernel of a built Program. Owns its cl_kernel.
class Kernel {
public:
    Kernel(cl_kernel kernel, std::string name) : m_kernel(kernel), m_name(std::move(name)) {}
    Kernel(Kernel&& other) noexcept;
    Kernel& operator=(Kernel&&) = delete;
    Kernel(const Kernel&) = delete;
    ~Kernel();

    // A buffer argument: a handle from OpenClDevice::allocate (nullptr: a null buffer).
    void setBuffer(unsigned index, backends::Buffer buffer);
    // A scalar argument, passed by value (its size must match the kernel's parameter).
    template <typename T> void setValue(unsigned index, const T& value) {
        setRaw(index, sizeof value, &value);
    }
    // A scalar argument of `size` bytes at `value`.
    void setRawValue(unsigned index, size_t size, const void* value) { setRaw(index, size, value); }
    cl_kernel handle() const { return m_kernel; }
    const std::string& name() const { return m_name; }

private:
    void setRaw(unsigned index, size_t size, const void* value);
    cl_kernel m_kernel;
    std::string m_name;
};

// A program built for one device. Owns its cl_program.
class Program {
public:
    explicit Program(cl_program program) : m_program(program) {}
    Program(Program&& other) noexcept;
    Program& operator=(Program&&) = delete;
    Program(const Program&) = delete;
    ~Program();

    // The kernel function `name`; BackendError naming it if the program has none.
    Kernel kernel(const std::string& name) const;
    cl_program handle() const { return m_program; }

private:
    cl_program m_program;
};

class OpenClDevice : public backends::Device {
public:
    // Opens the device BackendPreferences::device `selector` names (platforms.hpp).
    static std::unique_ptr<OpenClDevice> open(const std::string& selector);
    explicit OpenClDevice(const DeviceInfo& device);
    ~OpenClDevice() override;
    OpenClDevice(const OpenClDevice&) = delete;
    OpenClDevice& operator=(const OpenClDevice&) = delete;

    std::string name() const override { return "opencl"; }
    const DeviceInfo& info() const { return m_info; }

    // Buffers are the cl_mem handles themselves (a cl_mem is a pointer, so it fits
    // backends::Buffer); the device remembers each one's size to check copies against it.
    backends::Buffer allocate(size_t bytes) override; // zero-filled; nullptr for 0 bytes
    size_t memoryCapacity() const override;           // [B] CL_DEVICE_GLOBAL_MEM_SIZE
    void release(backends::Buffer buffer) override;
    void zero(backends::Buffer buffer, size_t bytes) override;
    void copyBuffer(backends::Buffer dst, backends::Buffer src, size_t bytes) override;
    void synchronise() override;
    // The sum over timed calls of their profiled spans on the device (opencl_busy.cpp; a queue
    // without profiling: nullopt). Waits for the queue.
    std::optional<double> busySeconds() override;
    // Per-kernel counters from marker pairs around each timed launch; nullopt without profiling.
    std::optional<std::vector<KernelCounter>> kernelCounters() override;

    // Makes `built` (the source of `program`, generated for `plan`) the device's program: its
    // kernels are created here; tables are allocated on first bind (opencl_program.cpp).
    void load(const codegen::Plan& plan, const simt::Program& program, Program built);
    // InternalError before load.
    void bindTable(size_t table, const std::vector<std::vector<backends::FieldValue>>&) override;
    void launch(size_t kernel, const codegen::abi::StepArgs&) override;
    // Runs the steps as one launch of the program's steps kernel when it has one for exactly
    // `kernels` (simt::Program::steps or ::init); false when not.
    bool runStepsKernel(const std::vector<size_t>& kernels, const codegen::abi::StepArgs& first,
                        uint64_t steps, double dt);
    void runSteps(const std::vector<size_t>& kernels, const codegen::abi::StepArgs& first,
                  uint64_t steps, double dt) override;
    void runSequence(const std::vector<backends::SequenceItem>& items) override;
    // The buffer holding table `table`'s structs (nullptr until bound): for tests and probes.
    backends::Buffer tableBuffer(size_t table) const { return m_tables.at(table); }

    // Builds OpenCL C `source` for this device with compiler `options` ("-cl-std=CL1.2 …").
    // A program that does not build is a BackendError with the compiler's build log.
    Program buildProgram(const std::string& source, const std::string& options) const;
    // Enqueues `kernel` over `global` work-items (1-D) in work-groups of `local` work-items
    // (0: the platform chooses); returns without waiting (synchronise waits).
    void enqueue(const Kernel& kernel, size_t global, size_t local = 0);
    // The same over global0 x global1 work-items in work-groups of local0 x 1.
    void enqueue2d(const Kernel& kernel, size_t global0, size_t global1, size_t local0);

    cl_context context() const { return m_context; }
    cl_command_queue queue() const { return m_queue; }
    // The cl_mem behind a handle from allocate; InternalError for a handle it did not make.
    cl_mem memOf(backends::Buffer buffer) const;

protected:
    void writeBuffer(backends::Buffer dst, const void* src, size_t bytes) override;
    void readBuffer(void* dst, backends::Buffer src, size_t bytes) override;

private:
    // Busy time (busySeconds, opencl_busy.cpp): the first command of the outermost timed call
    // carries an event and a marker follows the call; pairs are read and released once done.
    struct EventPair {
        cl_event first, end; // profiled start of the first command, end of the marker
        // A kernel-timing pair (kernelCounters): `first` is a marker enqueued before plan
        // kernel `kernel`'s launches, whose end (everything before it done) starts the span.
        size_t kernel = kNotAKernel;
    };
    static constexpr size_t kNotAKernel = static_cast<size_t>(-1);
    template <typename F> void timed(F&& work);
    // The event argument for the command about to be enqueued: the first of a timed call gets
    // one, every other command none (nullptr).
    cl_event* firstEvent() {
        if (!m_wantFirst) return nullptr;
        m_wantFirst = false;
        return &m_first;
    }
    cl_event marker();
    // Reads and releases the finished pairs, oldest first; with `wait`, waits for all of them.
    void collectBusy(bool wait);
    void releasePending();
    // Timestamp `what` of `event`; false (and measuring off for good) when the platform gives none.
    bool timestamp(cl_event event, cl_profiling_info what, cl_ulong& out);

    void fill(cl_mem mem, size_t bytes);
    void checkRange(backends::Buffer buffer, size_t bytes, const char* what) const;

    DeviceInfo m_info;
    cl_context m_context = nullptr; // the process's context for the device (sharedContext)
    cl_command_queue m_queue = nullptr;
    std::unordered_map<backends::Buffer, size_t> m_sizes; // [B] of every live buffer
    // A serial per allocation: a released buffer's handle may come back for a new buffer at
    // another device address, so a table compares serials, not handles (bindTable).
    std::unordered_map<backends::Buffer, uint64_t> m_serials;
    uint64_t m_lastSerial = 0;
    bool m_profiling = false;            // the queue has profiling and its reads work
    int m_timedDepth = 0;                // nesting of timed calls (only the outermost is measured)
    bool m_wantFirst = false;            // a timed call has enqueued no command yet
    cl_event m_first = nullptr;          // the event of its first command
    std::deque<EventPair> m_busyPending; // submitted, not yet read; in queue order
    double m_busySeconds = 0.0;          // [s] read so far

    // The loaded SIMT program (load).
    struct LoadedLaunch {
        Kernel kernel;
        simt::Launch launch;
        // The table buffers last set as its arguments: set again only when they change (an
        // argument keeps its value between launches; PoCL pays for every clSetKernelArg).
        std::vector<backends::Buffer> boundTables;
    };
    std::optional<Program> m_program;
    std::vector<std::vector<LoadedLaunch>> m_launches; // per plan kernel
    std::optional<Kernel> m_tableStore;                // simt::Program::tableStore
    // simt::Program::steps and ::init where the program has them: stretches of steps, the
    // initialisation, in one launch.
    struct StepsKernel {
        Kernel kernel;
        simt::Program::Steps steps;
    };
    std::vector<StepsKernel> m_steps;
    // A merged-group table as last bound: its bytes as the host wrote them (pointer fields
    // zero: their device addresses are stored on the device) and the buffer of every pointer
    // field, so that a rebind (a dynamic parameter) stores only the words that changed.
    struct Table {
        codegen::StructLayout layout;
        std::vector<codegen::CType> types; // per field
        size_t groups = 0;
        std::vector<unsigned char> bytes; // whole words; empty until bound
        std::vector<uint64_t> pointers;   // allocation serial (0: none) per (group, pointer field)
    };
    // One store of simt::Program::tableStore: an 8-byte word at byte `slot`, or with
    // simt::kStoreAddress in `slot` the device address of `address`.
    struct TableStore {
        uint32_t slot;
        uint64_t word;
        backends::Buffer address;
    };
    void runTableStores(backends::Buffer table, const std::vector<TableStore>& stores);
    std::vector<Table> m_tableInfo;
    std::vector<backends::Buffer> m_tables; // per table; nullptr until bound
};

// Runs `work`; the outermost timed call's first command gets an event and a marker follows it
// (busySeconds). Finished pairs are read first, so at most a few stay pending.
template <typename F> void OpenClDevice::timed(F&& work) {
    if (!m_profiling || m_timedDepth > 0) return work();
    collectBusy(false);
    m_first = nullptr;
    m_wantFirst = true;
    m_timedDepth++;
    try {
        work();
    } catch (...) {
        m_timedDepth--;
        m_wantFirst = false;
        if (m_first) clReleaseEvent(std::exchange(m_first, nullptr));
        throw;
    }
    m_timedDepth--;
    m_wantFirst = false;
    const cl_event first = std::exchange(m_first, nullptr);
    if (!first) return; // nothing was enqueued: nothing ran
    cl_event end = nullptr;
    try {
        end = marker();
    } catch (...) {
        clReleaseEvent(first);
        throw;
    }
    m_busyPending.push_back({first, end});
}

} // namespace spikeforge::opencl
