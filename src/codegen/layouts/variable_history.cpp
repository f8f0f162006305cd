// The past values of delayed neuron variables (buffers.hpp, VariableHistory).
#include "codegen/layout.hpp"
#include "codegen/layouts/buffers.hpp"
#include "spikeforge/errors.hpp"

namespace spikeforge::codegen {

std::string VariableHistory::arrayVar(const std::string& name) {
    return "delayed." + name;
}

std::string VariableHistory::elementType(const NeuronGroup& ng, const std::string& name,
                                         Precision precision) {
    if (name == "st" || name == "prev_st") return resolveType("scalar", precision);
    for (const auto& v : ng.model().vars)
        if (v.name == name) return resolveType(v.type, precision);
    throw InternalError("neuron group '" + ng.name() + "' keeps no history of '" + name + "'");
}

std::vector<BufferArray> VariableHistory::arrays(const NeuronGroup& ng, unsigned batch,
                                                 Precision precision) {
    std::vector<BufferArray> out;
    for (const auto& name : ng.delayedNames())
        out.push_back({arrayVar(name),
                       elementType(ng, name, precision),
                       {batch, ng.numDelaySlots(), ng.size()},
                       true});
    return out;
}

VariableHistory::VariableHistory(Env& env, const NeuronGroup& ng, const std::string& prefix,
                                 Use use, Precision precision, const std::string& neurons)
    : m_env(env), m_ng(ng), m_prefix(prefix),
      m_slots(env.number(prefix + "DelaySlots", "uint32_t", ng.numDelaySlots())),
      m_neurons(neurons), m_use(use), m_precision(precision) {}

std::string VariableHistory::readSlot(const std::string& delay) const {
    return delayedSlot(m_slots, delay);
}

std::string VariableHistory::element(const std::string& name, const std::string& slot,
                                     const std::string& id) const {
    if (!m_ng.delayedNames().count(name))
        throw InternalError("neuron group '" + m_ng.name() + "' keeps no history of '" + name +
                            "'");
    const std::string array =
        m_env.array(m_prefix + "Hist_" + name, elementType(m_ng, name, m_precision),
                    m_ng.name() + "." + arrayVar(name), m_use);
    return array + "[((size_t)batch * " + m_slots + " + (" + slot + ")) * " + m_neurons + " + " +
           id + "]";
}

} // namespace spikeforge::codegen
