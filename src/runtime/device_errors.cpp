#include "runtime/device_errors.hpp"

#include "codegen/abi.hpp"

namespace spikeforge::runtime {

namespace abi = codegen::abi;

DeviceErrors::DeviceErrors(const Model& model, backends::Device& device,
                           const HostArray& snippetErrors, std::vector<const HostArray*> errorWords)
    : m_model(model), m_analysis(analysis::share(model)), m_device(device),
      m_snippetErrors(snippetErrors), m_errorWords(std::move(errorWords)) {
    if (m_errorWords.size() != model.synapseGroups().size())
        throw InternalError("one error word per synapse group expected");
}

std::string DeviceErrors::when(uint64_t step, bool initialising) const {
    if (initialising) return "during initialisation";
    const uint64_t from = m_checkedStep;
    if (step <= from + 1) return "in step " + std::to_string(from);
    return "in steps " + std::to_string(from) + " to " + std::to_string(step - 1);
}

std::vector<std::string> DeviceErrors::collect(uint64_t step, bool initialising) {
    m_device.synchronise();
    const std::string range = when(step, initialising);
    m_checkedStep = step;
    std::vector<std::string> out;
    snippetMessages(range, out);
    groupMessages(range, out);
    return out;
}

void DeviceErrors::check(uint64_t step, bool initialising) {
    const auto messages = collect(step, initialising);
    if (!messages.empty()) throwErrors(messages);
}

// Out-of-range snippet indices: slot i (contexts::allCodeFields order) holds 0 or the ordinal of
// the array the index was used on (the field's analysis lists them).
void DeviceErrors::snippetMessages(const std::string& when, std::vector<std::string>& out) {
    const HostArray& a = m_snippetErrors;
    std::vector<uint32_t> flags(a.decl.count);
    m_device.copyFromDevice(flags.data(), a.device, a.bytes());
    bool any = false;
    for (size_t slot = 0; slot < flags.size(); slot++) {
        const uint32_t ordinal = flags[slot];
        if (ordinal == 0) continue;
        any = true;
        if (slot >= m_analysis->names.size())
            throw InternalError("snippet error slot " + std::to_string(slot) + " out of range");
        const auto& field = m_analysis->names[slot];
        const auto& arrays = m_analysis->fields[slot].checkedArrays;
        const std::string array =
            ordinal <= arrays.size() ? "'" + arrays[ordinal - 1] + "'" : "an array";
        out.push_back(field.group + "." + field.field + ": index out of range for " + array + " " +
                      when + " (the out-of-range access was replaced by element 0)");
    }
    if (any) m_device.zero(a.device, a.bytes());
}

// The bound and the remedy of an error bit, for one synapse group.
static std::string detail(abi::ErrorBit bit, const SynapseGroup& sg) {
    switch (bit) {
    case abi::ErrorBit::RowOverflow:
        return " " + std::to_string(sg.maxRowLength()) +
               " (calcMaxRowLength is too small for these parameters)";
    case abi::ErrorBit::DendriticDelay:
        return " " + std::to_string(sg.maxDendriticDelaySteps()) +
               " steps (SynapseGroup::setMaxDendriticDelaySteps)";
    }
    return "";
}

void DeviceErrors::groupMessages(const std::string& when, std::vector<std::string>& out) {
    const auto& groups = m_model.synapseGroups();
    for (size_t i = 0; i < groups.size(); i++) {
        const HostArray& a = *m_errorWords[i];
        uint32_t word = 0;
        m_device.copyFromDevice(&word, a.device, sizeof word);
        if (word == 0) continue;
        m_device.zero(a.device, sizeof word);
        uint32_t known = 0;
        for (abi::ErrorBit bit : abi::kErrorBits) {
            known |= static_cast<uint32_t>(bit);
            if (word & static_cast<uint32_t>(bit))
                out.push_back("synapse group '" + groups[i]->name() + "', " + when + ": " +
                              abi::errorDescription(bit) + detail(bit, *groups[i]));
        }
        if (word & ~known)
            throw InternalError("synapse group '" + groups[i]->name() +
                                "': unknown device error bits " + std::to_string(word & ~known));
    }
}

void throwErrors(const std::vector<std::string>& messages) {
    std::string text;
    for (const auto& m : messages)
        text += (text.empty() ? "" : "; ") + m; // one line: the CLI prints one line per error
    throw ModelError(text);
}

} // namespace spikeforge::runtime
