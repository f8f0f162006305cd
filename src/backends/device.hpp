#pragma once
// The device contract: the small interface a backend implements below the runtime — memory,
// binding the merged-group tables of generated code, and launching the plan's kernels. All host
// logic is written once, in runtime/, over this interface; a backend sees the plan and this
// header, never runtime/.
#include "codegen/abi.hpp"
#include "codegen/plan.hpp"
#include "spikeforge/simulation.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace spikeforge::backends {

// A device buffer as allocate returns it: a handle the device understands (the CPU's is a host
// address; an OpenCL one would name a cl_mem). The runtime only passes it back.
using Buffer = void*;

// The value of one merged-group struct field for one group (Device::bindTable).
struct FieldValue {
    enum class Kind { Number, Buffer } kind = Kind::Number;
    double number = 0.0;     // Number: converted to the field's C type by the device
    Buffer buffer = nullptr; // Buffer: a handle from allocate (nullptr: no storage)

    static FieldValue ofNumber(double v) { return {Kind::Number, v, nullptr}; }
    static FieldValue ofBuffer(Buffer b) { return {Kind::Buffer, 0.0, b}; }
};

// Host-device copies made through a device (Device::transfers; the public DeviceTransfers): a
// loop that copies on every step shows up here. Zero-fills and table binding are not counted.
using TransferCounts = DeviceTransfers;

// One piece of work of Device::runSequence: `steps` time steps (as runSteps runs them), one
// kernel launch with its own arguments, or a copy between two device buffers (as copyBuffer).
struct SequenceItem {
    enum class Kind { Steps, Launch, Copy } kind = Kind::Launch;
    std::vector<size_t> kernels;         // Steps: every step's kernels in order; Launch: the kernel
    codegen::abi::StepArgs args{};       // Steps: of the first step; Launch: of the launch
    uint64_t steps = 0;                  // Steps
    double dt = 0.0;                     // Steps [ms]
    Buffer dst = nullptr, src = nullptr; // Copy
    size_t bytes = 0;                    // Copy [B]

    static SequenceItem ofSteps(std::vector<size_t> kernels, const codegen::abi::StepArgs& first,
                                uint64_t steps, double dt) {
        return {Kind::Steps, std::move(kernels), first, steps, dt, nullptr, nullptr, 0};
    }
    static SequenceItem ofLaunch(size_t kernel, const codegen::abi::StepArgs& args) {
        return {Kind::Launch, {kernel}, args, 0, 0.0, nullptr, nullptr, 0};
    }
    static SequenceItem ofCopy(Buffer dst, Buffer src, size_t bytes) {
        return {Kind::Copy, {}, {}, 0, 0.0, dst, src, bytes};
    }
};

class Device {
public:
    virtual ~Device() = default;
    virtual std::string name() const = 0;
    virtual Buffer allocate(size_t bytes) = 0; // zero-filled; nullptr for 0 bytes
    // Bytes of memory the device can give this process in all [B]. The runtime refuses a model
    // whose arrays need more before allocating anything: on an overcommitting OS an allocation
    // beyond it may succeed and the process is killed only when its zero-fill touches the pages.
    virtual size_t memoryCapacity() const = 0;
    virtual void release(Buffer buffer) = 0;
    virtual void zero(Buffer buffer, size_t bytes) = 0;
    // Copies `bytes` from the start of `src` to the start of `dst`, both on the device (not a
    // host transfer: not counted). The default stages through host memory; a device overrides
    // it with a copy on the device.
    virtual void copyBuffer(Buffer dst, Buffer src, size_t bytes) {
        std::vector<unsigned char> staging(bytes);
        readBuffer(staging.data(), src, bytes);
        writeBuffer(dst, staging.data(), bytes);
    }

    // Copies between host memory and a buffer (from its start), counted in transfers().
    void copyToDevice(Buffer dst, const void* src, size_t bytes) {
        m_transfers.toDevice++;
        m_transfers.bytesToDevice += bytes;
        writeBuffer(dst, src, bytes);
    }
    void copyFromDevice(void* dst, Buffer src, size_t bytes) {
        m_transfers.fromDevice++;
        m_transfers.bytesFromDevice += bytes;
        readBuffer(dst, src, bytes);
    }
    const TransferCounts& transfers() const { return m_transfers; }

    // Sets every struct of merged-group table `table` (index into Plan::mergedGroups of the plan
    // the device was built for): values[group][field], in the plan's group and field order. The
    // device lays the structs out (codegen::layoutOf) and stores buffers its own way.
    virtual void bindTable(size_t table, const std::vector<std::vector<FieldValue>>& values) = 0;
    // Runs kernel `kernel` (index into Plan::kernels of the plan the device was built for).
    virtual void launch(size_t kernel, const codegen::abi::StepArgs& args) = 0;
    // Runs `steps` consecutive time steps from `first`: per step every kernel of `kernels` in
    // order, with step = first.step + i, rngStep = first.rngStep + i and t = (double)step * dt
    // (the runtime's own formula, so every device sees the same t bit for bit). The default
    // launches them one by one; a device may run many steps as fewer launches (a multi-step kernel,
    // a replayed CUDA graph).
    virtual void runSteps(const std::vector<size_t>& kernels, const codegen::abi::StepArgs& first,
                          uint64_t steps, double dt) {
        codegen::abi::StepArgs a = first;
        for (uint64_t i = 0; i < steps; i++) {
            a.step = first.step + i;
            a.rngStep = first.rngStep + i;
            a.t = static_cast<double>(a.step) * dt;
            for (size_t k : kernels)
                launch(k, a);
        }
    }
    // Runs `items` in order, with nothing from the host between them (Simulation::run of a
    // Schedule). The default runs each through runSteps, launch and copyBuffer; a device may
    // submit the whole sequence at once (the cuda device replays it as one CUDA graph).
    virtual void runSequence(const std::vector<SequenceItem>& items) {
        for (const SequenceItem& item : items)
            switch (item.kind) {
            case SequenceItem::Kind::Steps:
                runSteps(item.kernels, item.args, item.steps, item.dt);
                break;
            case SequenceItem::Kind::Launch:
                launch(item.kernels.at(0), item.args);
                break;
            case SequenceItem::Kind::Copy:
                copyBuffer(item.dst, item.src, item.bytes);
                break;
            }
    }
    // Returns when every launch and copy so far has finished.
    virtual void synchronise() = 0;
    // True when every Buffer is the host address of its bytes, which the host may read after
    // synchronise() (the cpu device); false where only copyFromDevice reads device memory. The
    // recorder then decodes a chunk in place instead of copying it (runtime/recording.hpp).
    virtual bool buffersAreHostMemory() const { return false; }
    // Seconds the device has spent executing work since it was made [s]: every runSequence,
    // runSteps, launch, copyBuffer and zero (the outermost call only: a sequence's launches are
    // inside its own time), not host transfers or allocation. How each backend measures it is in
    // docs/backends.md ("Device busy time"). nullopt when the device cannot measure it (never a
    // silent zero). Waits for the work submitted so far, so the sum is complete.
    virtual std::optional<double> busySeconds() { return std::nullopt; }

    // Per-kernel timing (BackendPreferences::kernelTiming), turned on before the first launch
    // for a plan of `kernels` kernels: every launch of plan kernel k is timed on the device and
    // added to counter k. A device then runs each kernel as a launch of its own (no stretch of
    // steps in one call, no CUDA graph), so every launch is seen.
    void enableKernelTiming(size_t kernels) {
        m_kernelTiming = true;
        m_kernelCounters.assign(kernels, {});
    }
    bool kernelTiming() const { return m_kernelTiming; }
    struct KernelCounter {
        double seconds = 0.0; // [s]
        uint64_t launches = 0;
    };
    // The counters, per plan kernel, once the work submitted so far has finished; nullopt when
    // the device cannot time its kernels (never a silent zero). Empty when timing is off.
    virtual std::optional<std::vector<KernelCounter>> kernelCounters() {
        synchronise();
        return m_kernelCounters;
    }

protected:
    // Adds one timed launch of plan kernel `kernel` [s].
    void addKernelTime(size_t kernel, double seconds) {
        KernelCounter& c = m_kernelCounters.at(kernel);
        c.seconds += seconds;
        c.launches++;
    }
    virtual void writeBuffer(Buffer dst, const void* src, size_t bytes) = 0;
    virtual void readBuffer(void* dst, Buffer src, size_t bytes) = 0;

private:
    TransferCounts m_transfers;
    bool m_kernelTiming = false;
    std::vector<KernelCounter> m_kernelCounters; // per plan kernel
};

} // namespace spikeforge::backends
