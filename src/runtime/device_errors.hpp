#pragma once
// Device-side errors: kernels latch them in device memory (codegen::kErrorsArray: one word per
// synapse group, one slot per code field) and never clear them; the runtime reads them only at
// sync points (pull, recording flush, end of run, reset, every errorCheckInterval steps) with one
// copy, clears what it read and reports it with the steps it happened in, so nothing is reported
// twice or lost.
#include "backends/backend.hpp"
#include "model/analysis.hpp"
#include "runtime/host_array.hpp"
#include "spikeforge/model.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace spikeforge::runtime {

class DeviceErrors {
public:
    // `errors` is the codegen::kErrorsArray of the model's plan; it outlives this object.
    DeviceErrors(const Model& model, backends::Device& device, const HostArray& errors);

    // Reads and clears every flag, waiting for the device first; one message per error found.
    // `step` is the current step: errors found happened in the steps since the last collect.
    std::vector<std::string> collect(uint64_t step, bool initialising);
    // collect, then one ModelError with every message (joined by "; ") if there is any.
    void check(uint64_t step, bool initialising = false);
    // After a reset to step 0 (the flags were cleared with every array).
    void restart() {
        m_checkedStep = 0;
        m_resetsSinceCheck = 0;
    }
    // After a state reset that did not read the flags first (a schedule's resetState item): the
    // errors found at the next collect may come from earlier trials, and say so.
    void noteReset() {
        m_checkedStep = 0;
        m_resetsSinceCheck++;
    }
    // First step not yet covered by a check.
    uint64_t checkedStep() const { return m_checkedStep; }

private:
    std::string when(uint64_t step, bool initialising) const;
    static std::string checkFailure(const snippet::RuntimeCheck& check, bool overflow,
                                    const std::string& when);
    void snippetMessages(const std::vector<uint32_t>& words, const std::string& when,
                         std::vector<std::string>& out) const;
    void groupMessages(const std::vector<uint32_t>& words, const std::string& when,
                       std::vector<std::string>& out) const;

    const Model& m_model;
    // The snippet analysis the generated code was built from: kept, so an error is named right
    // even if the model changes after the simulation was built.
    std::shared_ptr<const analysis::Results> m_analysis;
    backends::Device& m_device;
    const HostArray& m_errors;
    size_t m_synapseGroups; // when built: the words before the snippet slots
    uint64_t m_checkedStep = 0;
    uint64_t m_resetsSinceCheck = 0;
};

// One ModelError from the messages of collect (and any from other sources).
[[noreturn]] void throwErrors(const std::vector<std::string>& messages);

} // namespace spikeforge::runtime
