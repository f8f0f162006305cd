#include "runtime/recording.hpp"

#include "codegen/arrays.hpp"
#include "codegen/checked_size.hpp"

#include <algorithm>
#include <limits>
#include <new>

namespace spikeforge::runtime {

SpikeRecorder::SpikeRecorder(backends::Device& device, std::vector<Group> groups, unsigned batch,
                             double dt)
    : m_device(device), m_groups(std::move(groups)), m_events(m_groups.size()), m_batch(batch),
      m_dt(dt) {}

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
    uint64_t c =
        perStep == 0 ? windowSteps : std::max<uint64_t>(1, kRecordingBudgetBytes / perStep);
    if (m_chunkLimit > 0) c = std::min(c, m_chunkLimit);
    return std::min(c, windowSteps);
}

void SpikeRecorder::setWindow(uint64_t start, uint64_t steps, const Allocate& allocate) {
    const uint64_t end = codegen::checkedAdd(start, steps, "recording window (first step + steps)");
    const uint64_t capacity = chunkCapacity(steps);
    // Idle until every buffer is allocated, so a failed allocation leaves nothing recording.
    m_windowSteps = 0;
    m_windowEnd = m_chunkStart = start;
    m_chunkCapacity = capacity;
    for (auto& g : m_groups)
        allocate(*g.buffer,
                 codegen::checkedProduct({m_chunkCapacity, m_batch, codegen::bitWords(g.neurons)},
                                         "neuron group '" + g.name + "': recording buffer"));
    for (auto& e : m_events)
        e = {};
    m_windowSteps = steps;
    m_windowEnd = end;
    m_chunkStart = start;
}

void SpikeRecorder::rewind() {
    for (auto& e : m_events)
        e = {};
    m_windowEnd = m_windowSteps;
    m_chunkStart = 0;
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
    flush(step);
    return true;
}

// Group by group: copy the filled steps, clear them on the device, decode, then deliver (sink)
// or keep. Host memory is one group's chunk at a time. A sink that throws loses that group's
// chunk only: the groups before it were delivered and cleared, the ones after it stay on the
// device for the next flush (the chunk does not advance), so nothing is delivered twice.
void SpikeRecorder::flush(uint64_t step) {
    if (!active()) return;
    const uint64_t end = std::min(step, m_chunkStart + recordSteps());
    const uint64_t filled = end > m_chunkStart ? end - m_chunkStart : 0;
    if (filled > 0) m_device.synchronise();
    try {
        for (size_t i = 0; i < m_groups.size() && filled > 0; i++) {
            const Group& g = m_groups[i];
            // Fits: at most the chunk buffer, whose size was checked when it was allocated.
            const size_t words = filled * m_batch * codegen::bitWords(g.neurons);
            m_scratch.resize(words);
            m_device.copyFromDevice(m_scratch.data(), g.buffer->device, words * sizeof(uint32_t));
            m_device.zero(g.buffer->device, words * sizeof(uint32_t));
            if (!m_sink) {
                decode(m_scratch, filled, g, m_events[i]);
                continue;
            }
            m_decoded.clear();
            decode(m_scratch, filled, g, m_decoded);
            if (!m_decoded.empty()) m_sink(g.name, m_decoded);
            if (m_decoded.capacity() > (size_t(1) << 20)) m_decoded = {}; // after a burst
        }
    } catch (const std::bad_alloc&) {
        size_t kept = 0;
        for (const auto& e : m_events)
            kept += e.size();
        throw BackendError("out of host memory decoding recorded spikes (" + std::to_string(kept) +
                           " events kept); set a spike sink (Simulation::setSpikeSink) to stream "
                           "them, or record fewer groups or steps");
    }
    m_chunkStart = end;
}

void SpikeRecorder::decode(const std::vector<uint32_t>& words, uint64_t steps, const Group& g,
                           std::vector<SpikeEvent>& out) const {
    const unsigned W = codegen::bitWords(g.neurons);
    for (uint64_t t = 0; t < steps; t++) {
        const double time = static_cast<double>(m_chunkStart + t) * m_dt;
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
    size_t total =
        m_scratch.capacity() * sizeof(uint32_t) + m_decoded.capacity() * sizeof(SpikeEvent);
    for (const auto& e : m_events)
        total += e.capacity() * sizeof(SpikeEvent);
    return total;
}

} // namespace spikeforge::runtime
