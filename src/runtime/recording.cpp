#include "runtime/recording.hpp"

#include "codegen/arrays.hpp"
#include "codegen/checked_size.hpp"

#include <algorithm>
#include <limits>
#include <new>
#include <system_error>
#include <utility>

namespace spikeforge::runtime {

SpikeRecorder::SpikeRecorder(backends::Device& device, std::vector<Group> groups, unsigned batch,
                             double dt)
    : m_device(device), m_groups(std::move(groups)), m_events(m_groups.size()), m_batch(batch),
      m_dt(dt) {
    m_copied.words.resize(m_groups.size());
    m_copied.inPlace.resize(m_groups.size(), nullptr);
    m_copied.events.resize(m_groups.size());
}

SpikeRecorder::Worker::~Worker() {
    if (!m_thread.joinable()) return;
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_cv.notify_all();
    m_thread.join();
}

void SpikeRecorder::Worker::loop() {
    std::unique_lock lock(m_mutex);
    for (;;) {
        m_cv.wait(lock, [&] { return m_stop || m_job; });
        if (!m_job) return; // stopping, nothing left to do
        auto job = std::move(m_job);
        m_job = nullptr;
        lock.unlock();
        std::exception_ptr error;
        try {
            job();
        } catch (...) {
            error = std::current_exception();
        }
        lock.lock();
        m_error = error;
        m_busy = false;
        m_cv.notify_all();
    }
}

void SpikeRecorder::Worker::start(std::function<void()> job) {
    wait();
    if (!m_thread.joinable()) {
        try {
            m_thread = std::thread([this] { loop(); });
        } catch (const std::system_error&) { // no thread to be had: decode here
            try {
                job();
            } catch (...) {
                m_error = std::current_exception();
            }
            return;
        }
    }
    {
        std::lock_guard lock(m_mutex);
        m_job = std::move(job);
        m_busy = true;
    }
    m_cv.notify_all();
}

void SpikeRecorder::Worker::wait() {
    std::unique_lock lock(m_mutex);
    m_cv.wait(lock, [&] { return !m_busy; });
    if (std::exception_ptr e = std::exchange(m_error, nullptr)) std::rethrow_exception(e);
}

size_t SpikeRecorder::bytesPerStep() const {
    size_t total = 0;
    for (const auto& g : m_groups)
        total = codegen::checkedAdd(
            total,
            codegen::checkedProduct({m_batch, codegen::bitWords(g.neurons), sizeof(uint32_t)},
                                    "neuron group '" + g.name + "': recording buffer per step"),
            "recording buffers per step");
    return total;
}

uint64_t SpikeRecorder::chunkCapacity(uint64_t windowSteps) const {
    const size_t perStep = bytesPerStep();
    uint64_t c = windowSteps;
    if (perStep > 0) { // both halves within the budget
        const uint64_t fit = std::max<uint64_t>(1, kRecordingBudgetBytes / perStep / m_halves);
        c = std::min(fit, std::max(kRecordingMinChunkSteps, kRecordingChunkTargetBytes / perStep));
    }
    if (m_chunkLimit > 0) c = std::min(c, m_chunkLimit);
    return std::min(c, windowSteps);
}

void SpikeRecorder::setWindow(uint64_t start, uint64_t steps, const Allocate& allocate) {
    const uint64_t end = codegen::checkedAdd(start, steps, "recording window (first step + steps)");
    deliver(); // what was recorded before goes where it always went; then it is not kept
    const size_t perStep = bytesPerStep();
    m_halves =
        m_device.buffersAreHostMemory() && perStep > 0 && kRecordingBudgetBytes / perStep >= 2 ? 2
                                                                                               : 1;
    m_half = 0;
    const uint64_t capacity = chunkCapacity(steps);
    // Idle until every buffer is allocated, so a failed allocation leaves nothing recording.
    m_windowSteps = 0;
    m_windowEnd = m_chunkStart = start;
    m_chunkCapacity = capacity;
    for (auto& g : m_groups)
        allocate(*g.buffer, codegen::checkedProduct(
                                {m_chunkCapacity, m_halves, m_batch, codegen::bitWords(g.neurons)},
                                "neuron group '" + g.name + "': recording buffer"));
    for (auto& e : m_events)
        e = {};
    m_windowSteps = steps;
    m_windowEnd = end;
    m_chunkStart = start;
}

void SpikeRecorder::rewind() {
    settle(); // a chunk decoded in place is read before a reset clears the buffer
    m_windowEnd = m_windowSteps;
    m_chunkStart = 0;
    m_half = 0;
    for (auto& e : m_events)
        e = {};
    if (!m_sink) { // kept events from before the rewind are discarded, the copied chunk's too
        m_copied.error = nullptr;
        m_copied.decoded = false;
    } // else the copied chunk goes to the sink at the next deliver()
}

uint64_t SpikeRecorder::recordSteps() const {
    return active() ? std::min(m_chunkCapacity, m_windowEnd - m_chunkStart) : 0;
}

uint64_t SpikeRecorder::stepsUntilFlush(uint64_t step) const {
    if (!active()) return std::numeric_limits<uint64_t>::max();
    const uint64_t end = m_chunkStart + recordSteps();
    if (step >= end) throw InternalError("simulation ran past the end of a recording chunk");
    return end - step;
}

bool SpikeRecorder::afterRun(uint64_t step) {
    if (!active() || step < m_chunkStart + recordSteps()) return false;
    deliver(); // may throw (the sink): then this chunk stays full on the device, as it was
    handOff(step);
    return true;
}

void SpikeRecorder::flush(uint64_t step) {
    deliver();
    if (!active()) return;
    const uint64_t end = std::min(step, m_chunkStart + recordSteps());
    if (end > m_chunkStart) handOff(end);
    deliver();
}

// Copies every group's filled steps (one sync point), or points at them where the kernels go on
// in the other half, and decodes them on the worker while the caller goes on recording. Nothing
// is cleared: the kernels store every word of every recorded step whole
// (SpikeRecording::recordWords), so the next chunk in this half overwrites this one.
void SpikeRecorder::handOff(uint64_t end) {
    const uint64_t filled = end - m_chunkStart;
    m_device.synchronise();
    for (size_t i = 0; i < m_groups.size(); i++) {
        const Group& g = m_groups[i];
        // Fits: at most the chunk buffer, whose size was checked when it was allocated.
        const size_t chunkWords = m_chunkCapacity * m_batch * codegen::bitWords(g.neurons);
        const size_t words = filled * m_batch * codegen::bitWords(g.neurons);
        m_copied.inPlace[i] = nullptr;
        if (m_halves == 2) {
            m_copied.inPlace[i] =
                static_cast<const uint32_t*>(g.buffer->device) + m_half * chunkWords;
            continue;
        }
        try {
            m_copied.words[i].resize(words);
        } catch (const std::bad_alloc&) {
            throw BackendError("out of host memory copying recorded spikes of neuron group '" +
                               g.name + "'");
        }
        m_device.copyFromDevice(m_copied.words[i].data(), g.buffer->device,
                                words * sizeof(uint32_t));
    }
    m_copied.start = m_chunkStart;
    m_copied.steps = filled;
    m_copied.half = m_half;
    m_copied.undelivered = 0;
    m_copied.decoded = false;
    m_copied.decoding = true;
    m_chunkStart = end;
    m_worker.start([this] { decodeCopied(); });
    m_half = halfFor(end);
}

unsigned SpikeRecorder::halfFor(uint64_t start) {
    if (m_halves == 1 || !m_copied.decoding || m_copied.half == 1) return 0;
    if (start >= m_chunkCapacity) return 1;
    settle(); // half 0 is free once read (start < one chunk happens only after a flush)
    return 0;
}

// On the worker: touches only m_copied, which the caller leaves alone until waitDecoded().
void SpikeRecorder::decodeCopied() {
    for (size_t i = 0; i < m_groups.size(); i++) {
        auto& out = m_copied.events[i];
        out.clear();
        const uint32_t* words =
            m_copied.inPlace[i] ? m_copied.inPlace[i] : m_copied.words[i].data();
        decode(words, m_copied.start, m_copied.steps, m_groups[i], out);
    }
}

void SpikeRecorder::settle() {
    if (!m_copied.decoding) return;
    m_copied.decoding = false;
    try {
        m_worker.wait();
        m_copied.decoded = true;
    } catch (...) {
        m_copied.error = std::current_exception();
    }
}

bool SpikeRecorder::waitDecoded() {
    settle();
    if (std::exception_ptr e = std::exchange(m_copied.error, nullptr)) {
        m_copied.decoded = false; // lost: nothing of it is delivered
        try {
            std::rethrow_exception(e);
        } catch (const std::bad_alloc&) {
            size_t kept = 0;
            for (const auto& events : m_events)
                kept += events.size();
            throw BackendError(
                "out of host memory decoding recorded spikes (" + std::to_string(kept) +
                " events kept); set a spike sink (Simulation::setSpikeSink) to stream them, or "
                "record fewer groups or steps");
        }
    }
    return m_copied.decoded;
}

// Group by group, in order, on the caller's thread. A sink that throws loses that group's part
// of the chunk only: the groups before it were delivered, the ones after it are delivered by the
// next call, so nothing is delivered twice.
void SpikeRecorder::deliver() {
    if (!waitDecoded()) return;
    while (m_copied.undelivered < m_groups.size()) {
        const size_t i = m_copied.undelivered++;
        auto& events = m_copied.events[i];
        if (!m_sink) {
            auto& kept = m_events[i];
            if (kept.empty())
                kept.swap(events);
            else
                kept.insert(kept.end(), events.begin(), events.end());
        } else if (!events.empty()) {
            m_sink(m_groups[i].name, events);
        }
        if (events.capacity() > (size_t(1) << 20)) events = {}; // after a burst
        events.clear();
    }
    m_copied.decoded = false;
}

void SpikeRecorder::decode(const uint32_t* words, uint64_t start, uint64_t steps, const Group& g,
                           std::vector<SpikeEvent>& out) const {
    const unsigned W = codegen::bitWords(g.neurons);
    for (uint64_t t = 0; t < steps; t++) {
        const double time = static_cast<double>(start + t) * m_dt;
        for (unsigned b = 0; b < m_batch; b++)
            for (unsigned w = 0; w < W; w++) {
                uint32_t x = words[(t * m_batch + b) * W + w];
                while (x) {
                    const uint32_t n = w * 32 + static_cast<uint32_t>(__builtin_ctz(x));
                    out.push_back({time, n, b});
                    x &= x - 1;
                }
            }
    }
}

bool SpikeRecorder::records(const std::string& group) const {
    return std::any_of(m_groups.begin(), m_groups.end(),
                       [&](const Group& g) { return g.name == group; });
}

const std::vector<SpikeEvent>& SpikeRecorder::events(const std::string& group) const {
    for (size_t i = 0; i < m_groups.size(); i++)
        if (m_groups[i].name == group) return m_events[i];
    throw InternalError("no recorded group " + group);
}

size_t SpikeRecorder::hostBytes() const {
    size_t total = 0;
    for (const auto& w : m_copied.words)
        total += w.capacity() * sizeof(uint32_t);
    for (const auto& e : m_copied.events)
        total += e.capacity() * sizeof(SpikeEvent);
    for (const auto& e : m_events)
        total += e.capacity() * sizeof(SpikeEvent);
    return total;
}

} // namespace spikeforge::runtime
