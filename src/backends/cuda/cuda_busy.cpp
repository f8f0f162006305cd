// Busy time of the CUDA device (Device::busySeconds): the outermost timed call is bracketed by two
// timing events recorded on the step stream, outside any graph capture, so a replayed graph is
// timed as a whole. Pairs are read with cuEventElapsedTime once finished (at the next timed call
// and at sync points: synchronise, the end of a copy) and their events go back to a small pool;
// a loop that never syncs waits for its oldest pair once kMaxPendingPairs are pending. A read
// that fails turns the measurement off (nullopt), never into a silent zero. Kernel timing
// (Device::enableKernelTiming) records a pair around each plan kernel's launches the same way.
#include "backends/cuda/cuda_device.hpp"

namespace spikeforge::cuda {

namespace {

// Pairs left pending before a timed call waits for the oldest.
constexpr size_t kMaxPendingPairs = 64;

} // namespace

std::optional<double> CudaDevice::busySeconds() {
    if (!m_eventTiming) return std::nullopt;
    synchronise();
    if (!m_eventTiming) return std::nullopt; // a pair could not be read
    return m_busySeconds;
}

std::optional<std::vector<backends::Device::KernelCounter>> CudaDevice::kernelCounters() {
    if (!m_eventTiming) return std::nullopt;
    auto counters = Device::kernelCounters(); // synchronises: every pair is read
    if (!m_eventTiming) return std::nullopt;  // a pair could not be read
    return counters;
}

void CudaDevice::enqueueKernel(size_t kernel, const codegen::abi::StepArgs& args) {
    if (!kernelTiming() || !m_eventTiming) return enqueueLaunches(kernel, args);
    collectBusy(false);
    EventPair pair{takeEvent(), nullptr, kernel};
    try {
        pair.end = takeEvent();
        check(m_api, m_api.cuEventRecord(pair.start, m_step), "cuEventRecord", "kernel time");
        enqueueLaunches(kernel, args);
        check(m_api, m_api.cuEventRecord(pair.end, m_step), "cuEventRecord", "kernel time");
    } catch (...) {
        m_freeEvents.push_back(pair.start);
        if (pair.end) m_freeEvents.push_back(pair.end);
        throw;
    }
    m_busyPending.push_back(pair);
}

CUevent CudaDevice::takeEvent() {
    if (!m_freeEvents.empty()) {
        const CUevent e = m_freeEvents.back();
        m_freeEvents.pop_back();
        return e;
    }
    CUevent e = nullptr;
    check(m_api, m_api.cuEventCreate(&e, kEventDefault), "cuEventCreate", "busy-time event");
    return e;
}

void CudaDevice::giveBack(const EventPair& pair) {
    m_freeEvents.push_back(pair.start);
    m_freeEvents.push_back(pair.end);
}

void CudaDevice::collectBusy(bool wait) {
    while (!m_busyPending.empty()) {
        const EventPair pair = m_busyPending.front();
        CUresult r = m_api.cuEventQuery(pair.end);
        if (r == kErrorNotReady) {
            if (!wait && m_busyPending.size() < kMaxPendingPairs) return;
            r = m_api.cuEventSynchronize(pair.end);
        }
        float ms = 0.0f; // [ms]
        if (r == kSuccess && m_api.cuEventElapsedTime_v2(&ms, pair.start, pair.end) == kSuccess) {
            const double seconds = ms > 0.0f ? static_cast<double>(ms) * 1e-3 : 0.0;
            if (pair.kernel == kNotAKernel)
                m_busySeconds += seconds;
            else
                addKernelTime(pair.kernel, seconds);
        } else
            m_eventTiming = false; // a failed stream or read: the sum would be short
        m_busyPending.pop_front();
        giveBack(pair);
    }
}

void CudaDevice::destroyEvents() {
    for (const EventPair& pair : m_busyPending)
        giveBack(pair);
    m_busyPending.clear();
    for (CUevent e : m_freeEvents)
        m_api.cuEventDestroy_v2(e);
    m_freeEvents.clear();
}

} // namespace spikeforge::cuda
