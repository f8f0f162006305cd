// Busy time of the OpenCL device (Device::busySeconds): the queue has profiling enabled; the first
// command of the outermost timed call (a runSequence, runSteps, launch, copyBuffer or zero)
// carries an event, and a marker is enqueued after the call. On an in-order queue a marker ends
// when everything before it has ended, so the span from the first command's start to the
// marker's end is the device's time on that call, and the host's gaps between calls are not in
// it. One event and one marker per call (a marker costs about 2 µs on PoCL, an event on a command
// less), never one per kernel; pairs are read and released once finished (at the next timed call,
// at sync points). A platform that gives no timestamps turns the measurement off (nullopt), never
// into a silent zero.
#include "backends/opencl/opencl_device.hpp"

namespace spikeforge::opencl {

namespace {

// Pairs left pending before a timed call waits for the oldest: bounds the events a loop of
// step() calls without a sync point holds.
constexpr size_t kMaxPendingPairs = 64;

bool finished(cl_event event) {
    cl_int status = CL_QUEUED;
    if (clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) !=
        CL_SUCCESS)
        return true; // unreadable: take it as done, its timestamps decide
    return status == CL_COMPLETE || status < 0;
}

} // namespace

void OpenClDevice::runSteps(const std::vector<size_t>& kernels, const codegen::abi::StepArgs& first,
                            uint64_t steps, double dt) {
    timed([&] {
        // With kernel timing each kernel is a launch of its own: no multi-step kernel.
        if (kernelTiming() || !runStepsKernel(kernels, first, steps, dt))
            Device::runSteps(kernels, first, steps, dt);
    });
}

void OpenClDevice::runSequence(const std::vector<backends::SequenceItem>& items) {
    timed([&] { Device::runSequence(items); });
}

std::optional<double> OpenClDevice::busySeconds() {
    if (!m_profiling) return std::nullopt;
    synchronise();
    if (!m_profiling) return std::nullopt; // a pair without timestamps
    return m_busySeconds;
}

std::optional<std::vector<backends::Device::KernelCounter>> OpenClDevice::kernelCounters() {
    if (!m_profiling) return std::nullopt;
    auto counters = Device::kernelCounters(); // synchronises: every pair is read
    if (!m_profiling) return std::nullopt;    // a pair without timestamps
    return counters;
}

cl_event OpenClDevice::marker() {
    cl_event event = nullptr;
    check(clEnqueueMarkerWithWaitList(m_queue, 0, nullptr, &event), "clEnqueueMarkerWithWaitList",
          "busy-time marker");
    return event;
}

bool OpenClDevice::timestamp(cl_event event, cl_profiling_info what, cl_ulong& out) {
    if (clGetEventProfilingInfo(event, what, sizeof out, &out, nullptr) == CL_SUCCESS) return true;
    m_profiling = false;
    return false;
}

void OpenClDevice::collectBusy(bool wait) {
    while (!m_busyPending.empty()) {
        const EventPair pair = m_busyPending.front();
        const bool full = m_busyPending.size() >= kMaxPendingPairs;
        if (!finished(pair.end)) {
            if (!wait && !full) return;
            clWaitForEvents(1, &pair.end); // a failed command ends the wait too
        }
        cl_ulong start = 0, end = 0; // [ns]
        const bool kernel = pair.kernel != kNotAKernel;
        if (timestamp(pair.first, kernel ? CL_PROFILING_COMMAND_END : CL_PROFILING_COMMAND_START,
                      start) &&
            timestamp(pair.end, CL_PROFILING_COMMAND_END, end)) {
            const double seconds = end > start ? static_cast<double>(end - start) * 1e-9 : 0.0;
            if (kernel)
                addKernelTime(pair.kernel, seconds);
            else
                m_busySeconds += seconds;
        }
        clReleaseEvent(pair.first);
        clReleaseEvent(pair.end);
        m_busyPending.pop_front();
    }
}

void OpenClDevice::releasePending() {
    for (const EventPair& pair : m_busyPending) {
        clReleaseEvent(pair.first);
        clReleaseEvent(pair.end);
    }
    m_busyPending.clear();
}

} // namespace spikeforge::opencl
