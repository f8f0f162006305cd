// The spike queue (buffers.hpp): counts and ids per (batch element, delay slot).
#include "codegen/layouts/buffers.hpp"

namespace spikeforge::codegen {

std::vector<BufferArray> SpikeQueue::arrays(const NeuronGroup& ng, unsigned batch) {
    return {{"spkCnt", "uint32_t", {batch, ng.numDelaySlots()}},
            {"spk", "uint32_t", {batch, ng.numDelaySlots(), ng.size()}}};
}

SpikeQueue::SpikeQueue(Env& env, const NeuronGroup& ng, const std::string& prefix, Use use,
                       const std::string& neurons)
    : m_slots(env.number(prefix + "DelaySlots", "uint32_t", ng.numDelaySlots())),
      m_count(env.array(prefix + "SpkCnt", "uint32_t", ng.name() + ".spkCnt", use)),
      m_ids(env.array(prefix + "Spk", "uint32_t", ng.name() + ".spk", use)), m_neurons(neurons) {}

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
