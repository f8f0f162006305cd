// The past values of delayed neuron and weight-update pre/post variables (buffers.hpp,
// VariableHistory).
#include "codegen/layout.hpp"
#include "codegen/layouts/buffers.hpp"
#include "spikeforge/errors.hpp"

namespace spikeforge::codegen {

HistoryOf historyOf(const NeuronGroup& ng, Precision precision) {
    HistoryOf h{ng.name(), {}, ng.numDelaySlots(), ng.size()};
    for (const auto& name : ng.delayedNames())
        h.types[name] = resolveType("scalar", precision); // st, prev_st
    for (const auto& v : ng.model().vars)
        if (h.types.count(v.name)) h.types[v.name] = resolveType(v.type, precision);
    return h;
}

HistoryOf wuHistoryOf(const SynapseGroup& sg, bool pre, Precision precision) {
    const NeuronGroup& ng = pre ? sg.source() : sg.target();
    HistoryOf h{sg.name(), {}, ng.numDelaySlots(), ng.size()};
    for (const auto& v : pre ? sg.wu().model.preVars : sg.wu().model.postVars)
        if (sg.delayedNames().count(v.name)) h.types[v.name] = resolveType(v.type, precision);
    return h;
}

std::string VariableHistory::arrayVar(const std::string& name) {
    return "delayed." + name;
}

std::string VariableHistory::arrayVarOfStored(const std::string& var) {
    return arrayVar(var == "prevSt" ? "prev_st" : var); // the array holding prev_st is "prevSt"
}

std::vector<BufferArray> VariableHistory::arrays(const HistoryOf& h, unsigned batch) {
    std::vector<BufferArray> out;
    for (const auto& [name, type] : h.types)
        out.push_back({arrayVar(name), type, {batch, h.slots, h.neurons}, true});
    return out;
}

VariableHistory::VariableHistory(Env& env, HistoryOf h, const std::string& prefix,
                                 const std::string& slotsField, Use use, const std::string& neurons)
    : m_env(env), m_h(std::move(h)), m_prefix(prefix),
      m_slots(m_h.types.empty() ? "" : env.number(slotsField, "uint32_t", m_h.slots)),
      m_neurons(neurons), m_use(use) {}

std::string VariableHistory::readSlot(const std::string& delay) const {
    return delayedSlot(m_slots, delay);
}

std::string VariableHistory::array(const std::string& name) const {
    const auto found = m_h.types.find(name);
    if (found == m_h.types.end())
        throw InternalError("'" + m_h.owner + "' keeps no history of '" + name + "'");
    return m_env.array(m_prefix + name, found->second, m_h.owner + "." + arrayVar(name), m_use);
}

std::string VariableHistory::element(const std::string& name, const std::string& slot,
                                     const std::string& id) const {
    return array(name) + "[((size_t)batch * " + m_slots + " + (" + slot + ")) * " + m_neurons +
           " + " + id + "]";
}

std::string VariableHistory::fillSlots(const std::string& initial) const {
    return "for (uint32_t sfS = 0; sfS < " + m_slots + "; sfS++) arr[((size_t)batch * " + m_slots +
           " + sfS) * n + i] = " + initial + ";\n";
}

} // namespace spikeforge::codegen
