// The spike bits and their recording (buffers.hpp).
#include "codegen/layouts/buffers.hpp"

#include "codegen/arrays.hpp"

namespace spikeforge::codegen {

std::vector<BufferArray> SpikeRecording::arrays(const EventStream& s, unsigned batch) {
    return {{s.bits, "uint32_t", {batch, bitWords(s.neurons)}, true},
            {s.record, "uint32_t", {0}, false, false}}; // sized by the recording window
}

SpikeRecording::SpikeRecording(Env& env, const EventStream& s)
    : m_bits(env.array("spkBits", "uint32_t", s.owner + "." + s.bits, Use::ReadWrite)) {
    if (s.recorded)
        m_record = env.array("recordSpk", "uint32_t", s.owner + "." + s.record, Use::Write);
}

std::string SpikeRecording::stepWords() const {
    return "(" + m_bits + " + (size_t)batch * sfWords)";
}

std::string SpikeRecording::recording() const {
    if (m_record.empty()) return "";
    return "(" + m_record +
           " && a->step >= a->recordStart && a->step - a->recordStart < a->recordSteps)";
}

std::string SpikeRecording::recordWords() const {
    if (m_record.empty()) return "";
    return "(" + m_record + " + ((size_t)(a->step - a->recordStart) * SF_BATCH + batch) * sfWords)";
}

} // namespace spikeforge::codegen
