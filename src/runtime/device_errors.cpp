#include "runtime/device_errors.hpp"

#include "codegen/abi.hpp"
#include "codegen/plan.hpp"

#include <algorithm>

namespace spikeforge::runtime {

namespace abi = codegen::abi;

DeviceErrors::DeviceErrors(const Model& model, backends::Device& device, const HostArray& errors)
    : m_model(model), m_analysis(analysis::share(model)), m_device(device), m_errors(errors),
      m_synapseGroups(model.synapseGroups().size()) {
    const size_t words = codegen::snippetErrorWord(m_synapseGroups, m_analysis->names.size());
    if (errors.decl.count != std::max<size_t>(1, words))
        throw InternalError("device error array has " + std::to_string(errors.decl.count) +
                            " words, expected " + std::to_string(words));
}

std::string DeviceErrors::when(uint64_t step, bool initialising) const {
    if (initialising) return "during initialisation";
    if (m_resetsSinceCheck > 0)
        return "in the steps since the last check, across " + std::to_string(m_resetsSinceCheck) +
               " state reset" + (m_resetsSinceCheck > 1 ? "s" : "") +
               " of a schedule (now at step " + std::to_string(step) + ")";
    const uint64_t from = m_checkedStep;
    if (step <= from + 1) return "in step " + std::to_string(from);
    return "in steps " + std::to_string(from) + " to " + std::to_string(step - 1);
}

std::vector<std::string> DeviceErrors::collect(uint64_t step, bool initialising) {
    m_device.synchronise();
    const std::string range = when(step, initialising);
    m_checkedStep = step;
    m_resetsSinceCheck = 0;
    // One copy for every word, one zero-fill if any is set.
    std::vector<uint32_t> words(m_errors.decl.count);
    m_device.copyFromDevice(words.data(), m_errors.device, m_errors.bytes());
    if (std::all_of(words.begin(), words.end(), [](uint32_t w) { return w == 0; })) return {};
    m_device.zero(m_errors.device, m_errors.bytes());
    std::vector<std::string> out;
    snippetMessages(words, range, out);
    groupMessages(words, range, out);
    return out;
}

void DeviceErrors::check(uint64_t step, bool initialising) {
    const auto messages = collect(step, initialising);
    if (!messages.empty()) throwErrors(messages);
}

// Failed snippet run-time checks: the slot of code field i (contexts::allCodeFields order)
// holds 0 or the ordinal of the check that failed last (the field's analysis lists the checks,
// with their positions); a division also sets kDivisionOverflowBit for the minimum / -1.
void DeviceErrors::snippetMessages(const std::vector<uint32_t>& words, const std::string& when,
                                   std::vector<std::string>& out) const {
    for (size_t word = m_synapseGroups; word < words.size(); word++) {
        if (words[word] == 0) continue;
        const size_t slot = word - m_synapseGroups;
        if (slot >= m_analysis->names.size())
            throw InternalError("snippet error slot " + std::to_string(slot) + " out of range");
        const bool overflow = (words[word] & abi::kDivisionOverflowBit) != 0;
        const uint32_t ordinal = words[word] & ~abi::kDivisionOverflowBit;
        const auto& field = m_analysis->names[slot];
        const auto& checks = m_analysis->fields[slot].checks;
        if (ordinal == 0 || ordinal > checks.size())
            throw InternalError(field.group + "." + field.field + ": unknown run-time check " +
                                std::to_string(words[word]));
        const snippet::RuntimeCheck& c = checks[ordinal - 1];
        const std::string at = field.group + "." + field.field + " line " + std::to_string(c.line) +
                               ", column " + std::to_string(c.column) + ": ";
        out.push_back(at + checkFailure(c, overflow, when));
    }
}

// What failed, when, and what the generated code did instead.
std::string DeviceErrors::checkFailure(const snippet::RuntimeCheck& c, bool overflow,
                                       const std::string& when) {
    switch (c.kind) {
    case snippet::CheckKind::Index:
        return "index out of range for '" + c.array + "' " + when +
               " (the out-of-range access was replaced by element 0)";
    case snippet::CheckKind::Division: {
        const std::string what = c.op == "/" ? "division" : "modulo";
        if (overflow)
            return "integer " + what + " of the minimum '" + c.typeName + "' by -1 " + when +
                   " (it overflows; the result was replaced by 0)";
        return "integer " + what + " by zero " + when + " (the result was replaced by 0)";
    }
    }
    throw InternalError("unknown run-time check kind");
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
    case abi::ErrorBit::RowFull:
        return " " + std::to_string(sg.maxRowLength()) + " (SynapseGroup::setMaxConnections)";
    case abi::ErrorBit::TargetRange:
        return " sources are below " + std::to_string(sg.source().size()) + ", targets below " +
               std::to_string(sg.target().size());
    }
    return "";
}

void DeviceErrors::groupMessages(const std::vector<uint32_t>& words, const std::string& when,
                                 std::vector<std::string>& out) const {
    const auto& groups = m_model.synapseGroups();
    for (size_t i = 0; i < m_synapseGroups; i++) {
        const uint32_t word = words[codegen::synapseErrorWord(i)];
        if (word == 0) continue;
        if (i >= groups.size()) throw InternalError("synapse group " + std::to_string(i) + " gone");
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
