// Simulation::Impl's initialisation, trial state and reset: the initialisation run, host-built
// layout arrays, the initial-state copies and resetState's work.
#include "codegen/connectivity.hpp"
#include "codegen/ctype.hpp"
#include "codegen/layouts/buffers.hpp"
#include "runtime/simulation_impl.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace spikeforge {

std::vector<std::string> Simulation::Impl::resetTrial(const std::vector<std::string>& chosen,
                                                      bool readErrors) {
    std::vector<std::string> pending;
    if (readErrors) {
        submit();
        pending = errors->collect(step, false);
    }
    for (const auto& name : chosen) {
        auto& a = arrays.at(name);
        if (a.bytes() > 0)
            queue.push_back(
                backends::SequenceItem::ofCopy(a.device, initialState.at(name), a.bytes()));
    }
    recorder->rewind();
    step = 0;
    if (readErrors)
        errors->restart();
    else
        errors->noteReset();
    return pending;
}

void Simulation::Impl::initialise(bool clear) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::string> pending;
    if (clear) {
        pending = errors->collect(step, false);
        for (auto& [name, a] : arrays)
            device->zero(a.device, a.bytes());
    }
    step = 0;
    rngStep = 0;
    errors->restart();
    refreshTables();
    uploadHostBuiltLayouts();
    // As one step of the initialisation kernels (Device::runSteps with the same arguments as
    // their launches): a device may run them as one launch (simt::Program::init).
    queue.push_back(backends::SequenceItem::ofSteps(initKernels, args(), 1, model.dt()));
    submit();
    uploadGivenValues();
    if (prefs.keepInitialState) keepInitialState();
    auto found = errors->collect(step, true);
    pending.insert(pending.end(), found.begin(), found.end());
    info.initSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!pending.empty()) runtime::throwErrors(pending);
}

void Simulation::Impl::uploadHostBuiltLayouts() {
    for (const auto& sg : model.synapseGroups())
        for (const auto& [name, values] : codegen::connectivityOf(*sg)->hostBuiltArrays()) {
            runtime::HostArray& a = array(sg->name(), name);
            if (values.size() != a.decl.count)
                throw InternalError("synapse group '" + sg->name() +
                                    "': " + std::to_string(values.size()) + " values for '" + name +
                                    "' of " + std::to_string(a.decl.count) + " elements");
            unsigned char* host = mirror(a);
            for (size_t i = 0; i < values.size(); i++)
                codegen::storeNumber(host + i * a.elementSize(), a.type(), double(values[i]));
            device->copyToDevice(a.device, host, a.bytes());
        }
}

void Simulation::Impl::keepInitialState() {
    for (auto& [name, a] : arrays) {
        if (!a.decl.state || a.bytes() == 0) continue;
        backends::Buffer& copy = initialState[name];
        if (!copy) {
            copy = device->allocate(a.bytes());
            if (!copy)
                throw allocationError(name, a.bytes(), device->name() + " device",
                                      "out of memory (BackendPreferences::keepInitialState)");
            deviceBytes += a.bytes();
        }
        device->copyBuffer(copy, a.device, a.bytes());
    }
}

std::vector<std::string>
Simulation::Impl::stateArrays(const std::vector<std::string>& selection) const {
    if (!prefs.keepInitialState)
        throw ModelError("resetState needs BackendPreferences::keepInitialState = true (a "
                         "device copy of the initial state, made when the simulation is "
                         "built)");
    std::vector<std::string> out;
    auto isState = [&](const std::string& name) { return arrays.at(name).decl.state; };
    if (selection.empty()) {
        for (const auto& [name, a] : arrays)
            if (a.decl.state) out.push_back(name);
        return out;
    }
    for (const auto& entry : selection) {
        if (arrays.count(entry)) {
            if (!isState(entry))
                throw ModelError("resetState: '" + entry +
                                 "' is not trial state (weights, connectivity, custom-update "
                                 "state, extra global parameters and scratch neuron arrays "
                                 "keep their values)");
            out.push_back(entry);
            // A variable's history goes with it (VariableHistory): its past is the trial's.
            const size_t dot = entry.find('.');
            const std::string history =
                entry.substr(0, dot + 1) +
                codegen::VariableHistory::arrayVarOfStored(entry.substr(dot + 1));
            if (dot != std::string::npos && arrays.count(history)) out.push_back(history);
            continue;
        }
        size_t before = out.size();
        bool known = false;
        for (const auto& [name, a] : arrays)
            if (name.rfind(entry + ".", 0) == 0) {
                known = true;
                if (a.decl.state) out.push_back(name);
            }
        if (!known)
            throw ModelError("resetState: model '" + model.name() + "' has no group or array '" +
                             entry + "' (name a group, or an array as \"group.var\")");
        if (out.size() == before)
            throw ModelError("resetState: group '" + entry + "' has no trial state");
    }
    return out;
}

} // namespace spikeforge
