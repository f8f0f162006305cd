// The spike queue (buffers.hpp): counts and ids per (batch element, delay slot).
#include "codegen/layouts/buffers.hpp"

namespace spikeforge::codegen {

EventStream spikesOf(const NeuronGroup& ng) {
    return {ng.name(),   "spkCnt",           "spk",     "spkBits",
            "recordSpk", ng.numDelaySlots(), ng.size(), ng.spikeRecording()};
}

EventStream eventsOf(const SynapseGroup& sg, bool pre) {
    const NeuronGroup& ng = pre ? sg.source() : sg.target();
    const std::string side = pre ? "pre" : "post";
    return {sg.name(),         side + "EvCnt",
            side + "Ev",       side + "EvBits",
            side + "RecordEv", ng.numDelaySlots(),
            ng.size(),         pre ? sg.preEventRecording() : sg.postEventRecording()};
}

std::vector<BufferArray> SpikeQueue::arrays(const EventStream& s, unsigned batch) {
    return {{s.count, "uint32_t", {batch, s.slots}},
            {s.ids, "uint32_t", {batch, s.slots, s.neurons}}};
}

SpikeQueue::SpikeQueue(Env& env, const EventStream& s, const std::string& prefix, Use use,
                       const std::string& neurons)
    : m_slots(env.number(prefix + "DelaySlots", "uint32_t", s.slots)),
      m_count(env.array(prefix + "SpkCnt", "uint32_t", s.owner + "." + s.count, use)),
      m_ids(env.array(prefix + "Spk", "uint32_t", s.owner + "." + s.ids, use)), m_neurons(neurons) {
}

std::string SpikeQueue::writeSlot() const {
    return "(uint32_t)(a->step % " + m_slots + ")";
}

std::string SpikeQueue::nextSlot() const {
    return "(uint32_t)((a->step + 1u) % " + m_slots + ")";
}

std::string delayedSlot(const std::string& slots, const std::string& delay) {
    // (t - 1 - d) mod slots without going below zero: slots > 1 + d (slotsForDelay).
    return "(uint32_t)((a->step + " + slots + " - (1u + " + delay + ") % " + slots + ") % " +
           slots + ")";
}

std::string SpikeQueue::readSlot(const std::string& axonalDelay) const {
    return delayedSlot(m_slots, axonalDelay);
}

std::string SpikeQueue::row(const std::string& slot) const {
    return "((size_t)batch * " + m_slots + " + (" + slot + "))";
}

std::string SpikeQueue::count(const std::string& row) const {
    return m_count + "[" + row + "]";
}

std::string SpikeQueue::ids(const std::string& row) const {
    return "(" + m_ids + " + (" + row + ") * " + m_neurons + ")";
}

} // namespace spikeforge::codegen
