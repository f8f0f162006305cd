#pragma once
// Simulation::Impl, the runtime's state and host logic over the backend's Device; shared by
// simulation.cpp (the public methods) and schedule.cpp (Simulation::run of a Schedule). Work
// for the device is queued (Impl::queue) and submitted in one Device::runSequence before every
// sync point and at the end of each public call, so a queue never outlives a call.
#include "spikeforge/simulation.hpp"

#include "backends/backend.hpp"
#include "codegen/abi.hpp"
#include "codegen/arrays.hpp"
#include "codegen/connectivity.hpp"
#include "codegen/ctype.hpp"
#include "codegen/layouts/buffers.hpp"
#include "codegen/lower.hpp"
#include "model/validate.hpp"
#include "runtime/device_errors.hpp"
#include "runtime/host_array.hpp"
#include "runtime/procedural_twin.hpp"
#include "runtime/recording.hpp"
#include "snippet/suggest.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <map>
#include <new>
#include <set>
#include <string>
#include <vector>

namespace spikeforge {

struct Simulation::Impl {
    Model& model;
    BackendPreferences prefs;
    std::unique_ptr<backends::Backend> backend;
    codegen::Plan plan;
    std::unique_ptr<backends::Device> device;
    std::map<std::string, runtime::HostArray> arrays;
    std::map<std::string, double> dynamicValues; // "owner/param" → value
    BuildInfo info;
    std::unique_ptr<runtime::SpikeRecorder> recorder;
    std::unique_ptr<runtime::DeviceErrors> errors;
    // Kernels (indices into plan.kernels) in launch order: initialisation, one step, and the
    // custom updates of each update group.
    std::vector<size_t> initKernels, stepKernels;
    std::map<std::string, std::vector<size_t>> customKernels;
    std::map<std::string, size_t> pruneKernels; // by synapse group (Simulation::pruneBlocks)
    uint64_t step = 0;
    uint64_t rngStep = 0; // codegen::abi::StepArgs::rngStep: steps since build or reset()
    // prefs.keepInitialState: a copy of each trial-state array as initialised (resetState).
    std::map<std::string, backends::Buffer> initialState;
    // Procedural groups read so far: each one's Sparse twin (runtime/procedural_twin.hpp).
    std::map<std::string, runtime::ProceduralTwin> proceduralTwins;
    // Device work not yet submitted (submit); empty between public calls.
    std::vector<backends::SequenceItem> queue;
    size_t capacity = 0; // [B] device memory the arrays may use in all, read once at start
    // [B] bytes() of every array with a device buffer plus every initial-state copy: kept as
    // they change, so that checking one allocation does not walk every array (set-up of a
    // model with thousands of groups was quadratic in them).
    size_t deviceBytes = 0;
    bool ready = false; // constructed: every array is allocated and bound in the tables

    Impl(Model& m, const BackendPreferences& p) : model(m), prefs(p) {}
    ~Impl() {
        if (recorder) recorder->settle(); // it may be decoding a chunk in place
        if (!device) return;
        for (auto& [name, a] : arrays)
            device->release(a.device);
        for (auto& [name, copy] : initialState)
            device->release(copy);
    }

    runtime::HostArray& array(const std::string& group, const std::string& var) {
        auto it = arrays.find(group + "." + var);
        if (it == arrays.end()) {
            std::vector<std::string> names;
            for (const auto& [n, a] : arrays)
                if (n.rfind(group + ".", 0) == 0) names.push_back(n.substr(group.size() + 1));
            if (names.empty())
                throw ModelError("no group '" + group + "' in model '" + model.name() + "'");
            if (var == "st")
                throw ModelError("neuron group '" + group +
                                 "' keeps no spike times: no code reads st, st_pre or st_post "
                                 "(call NeuronGroup::setSpikeTimeRequired(true) to keep them)");
            throw ModelError("group '" + group + "' has no variable '" + var + "'");
        }
        return it->second;
    }

    // The extra global parameter `egp` of `group`; a ModelError for any other array (a state
    // variable's size is fixed by the model: resizing it would let kernels index past its end).
    runtime::HostArray& egpArray(const std::string& group, const std::string& egp) {
        runtime::HostArray& a = array(group, egp);
        if (a.decl.egp) return a;
        std::string names;
        for (const auto& [n, other] : arrays)
            if (other.decl.egp && n.rfind(group + ".", 0) == 0)
                names += (names.empty() ? "" : ", ") + n.substr(group.size() + 1);
        throw ModelError("'" + egp + "' of group '" + group +
                         "' is not an extra global parameter (setEGP sets only those" +
                         (names.empty() ? "; the group has none)" : ": " + names + ")"));
    }

    // An EGP about to receive `count` elements: reallocated (and the tables rebound to the new
    // buffer) only when its size changes, so uploads of the same size reuse device memory.
    void resizeEGP(runtime::HostArray& a, size_t count) {
        if (a.device && a.decl.count == count) return;
        allocate(a, count);
        refreshTables();
    }

    // (Re)allocates the device array; a host mirror is dropped and made again on demand.
    void allocate(runtime::HostArray& a, size_t count) {
        // Checked first: an overflowing size leaves the array as it was.
        const size_t bytes = runtime::HostArray{
            {a.decl.name, a.decl.ctype, count, a.decl.egp, a.decl.state},
            nullptr,
            {}}.bytes();
        checkGrowth(a, bytes);
        if (a.device) {
            deviceBytes -= a.bytes();
            device->release(a.device);
        }
        a.device = nullptr;
        a.host = {};
        a.decl.count = 0;
        std::string why;
        try {
            // At least one element of storage: a bounds-checked snippet index into an empty
            // EGP falls back to element 0, which must be memory.
            a.device = device->allocate(std::max(bytes, a.elementSize()));
        } catch (const std::bad_alloc&) {
            why = "out of memory";
        } catch (const BackendError& e) {
            why = e.what();
        }
        if (why.empty() && !a.device && bytes > 0) why = "out of memory";
        if (!why.empty()) {
            // Tables must not keep the released pointer; the array is now empty.
            if (ready) refreshTables();
            throw allocationError(a.decl.name, bytes, device->name() + " device", why);
        }
        a.decl.count = count;
        deviceBytes += bytes;
    }

    // An array growing to `bytes` keeps every array together within the capacity; otherwise
    // the array is left as it was.
    void checkGrowth(const runtime::HostArray& a, size_t bytes) const {
        const size_t others = deviceBytes - (a.device ? a.bytes() : 0); // [B]
        if (others <= capacity && bytes <= capacity - others) return;
        throw allocationError(a.decl.name, bytes, device->name() + " device",
                              "the other arrays use " + codegen::humanBytes(others) + " of the " +
                                  codegen::humanBytes(capacity) + " available");
    }

    // What is recorded: each recording neuron group's spikes (named as the group) and each
    // recording synapse group's spike-like events ("<group>.preEvents", "<group>.postEvents":
    // no group name holds a dot), with the array of its recording buffer.
    struct RecordedStream {
        std::string name;
        unsigned neurons = 0;
        std::string buffer;
    };
    std::vector<RecordedStream> recordedStreams() const {
        std::vector<RecordedStream> out;
        for (const auto& ng : model.neuronGroups())
            if (ng->spikeRecording())
                out.push_back({ng->name(), ng->size(), ng->name() + ".recordSpk"});
        for (const auto& sg : model.synapseGroups())
            for (const bool pre : {true, false})
                if (pre ? sg->preEventRecording() : sg->postEventRecording()) {
                    const auto events = codegen::eventsOf(*sg, pre);
                    out.push_back({eventStreamName(sg->name(), pre), events.neurons,
                                   sg->name() + "." + events.record});
                }
        return out;
    }
    static std::string eventStreamName(const std::string& synapseGroup, bool pre) {
        return synapseGroup + (pre ? ".preEvents" : ".postEvents");
    }

    // Refuses, before anything is allocated, a model whose arrays together with the largest
    // recording chunk need more device memory than the device has.
    void checkCapacity() const {
        std::vector<std::pair<size_t, std::string>> needs; // bytes, what
        for (const auto& d : plan.arrays) {
            needs.emplace_back(runtime::HostArray{d, nullptr, {}}.bytes(), d.name);
            if (prefs.keepInitialState && d.state)
                needs.emplace_back(needs.back().first, d.name + " (initial state copy)");
        }
        size_t perStep = 0; // [B] recording buffers of one step, all groups
        for (const RecordedStream& r : recordedStreams())
            perStep = codegen::checkedAdd(
                perStep,
                codegen::checkedProduct(
                    {model.batchSize(), codegen::bitWords(r.neurons), sizeof(uint32_t)},
                    "'" + r.name + "': recording buffer per step"),
                "recording buffers per step");
        if (perStep > 0) // a chunk holds as many steps as fit the budget, at least one
            needs.emplace_back(std::max<size_t>(1, runtime::kRecordingBudgetBytes / perStep) *
                                   perStep,
                               "spike recording chunk");
        size_t total = 0;
        for (const auto& [bytes, what] : needs)
            total =
                codegen::checkedAdd(total, bytes, "model '" + model.name() + "': device memory");
        if (total <= capacity) return;
        const size_t top = std::min<size_t>(3, needs.size());
        std::partial_sort(needs.begin(), needs.begin() + top, needs.end(),
                          [](const auto& x, const auto& y) { return x.first > y.first; });
        std::string largest;
        for (size_t i = 0; i < top; i++)
            largest +=
                (i ? ", " : "") + needs[i].second + " " + codegen::humanBytes(needs[i].first);
        throw BackendError("model '" + model.name() + "' needs " + codegen::humanBytes(total) +
                           " of " + device->name() + " device memory, more than the " +
                           codegen::humanBytes(capacity) + " available (largest arrays: " +
                           largest + "); nothing was allocated; use a smaller model or batch size");
    }

    // A new value of a dynamic parameter passes the checks Model::finalise made on the built
    // value (finite, representable in the precision, the snippet's paramDomain), with the
    // other dynamic parameters of the snippet at their current values.
    void checkDynamicValue(const std::string& owner, const std::string& param, double v) const {
        const Numerics num{model.dt(), model.precision()};
        auto check = [&](const std::string& field, const SnippetBase& snippet,
                         const ParamValues& built, const std::set<std::string>& dynamic) {
            if (!dynamic.count(param)) return;
            ParamValues values = built;
            for (const auto& p : dynamic)
                values[p] = dynamicValues.at(owner + "/" + p);
            values[param] = v;
            checkValues(owner, field, snippet, values, num);
        };
        for (const auto& ng : model.neuronGroups())
            if (ng->name() == owner)
                check("params", ng->model(), ng->bound().params, ng->bound().dynamicParams);
        for (const auto& sg : model.synapseGroups())
            if (sg->name() == owner) {
                check("weight update params", sg->wu().model, sg->wu().params,
                      sg->wu().dynamicParams);
                check("postsynaptic params", sg->ps().model, sg->ps().params,
                      sg->ps().dynamicParams);
            }
        for (const auto& cs : model.currentSources())
            if (cs->name() == owner)
                check("params", cs->bound().model, cs->bound().params, cs->bound().dynamicParams);
        for (const auto& cu : model.customUpdates())
            if (cu->name() == owner)
                check("params", cu->model(), cu->params(), cu->dynamicParams());
    }

    // The host mirror of an array, made (zero-filled) on first use.
    unsigned char* mirror(runtime::HostArray& a) {
        const size_t bytes = a.bytes();
        if (a.host.size() != bytes) {
            try {
                a.host.assign(bytes, 0);
            } catch (const std::bad_alloc&) {
                throw allocationError(a.decl.name, bytes, "host mirror", "out of memory");
            } catch (const std::length_error&) {
                throw allocationError(a.decl.name, bytes, "host mirror", "too large");
            }
        }
        return a.host.data();
    }

    BackendError allocationError(const std::string& array, size_t bytes, const std::string& where,
                                 const std::string& why) const {
        return BackendError("cannot allocate " + array + " (" + codegen::humanBytes(bytes) +
                            " of " + where + " memory): " + why +
                            "; use a smaller model or batch size");
    }

    // Steps that may run before the next interval check of device errors.
    uint64_t stepsUntilCheck() const {
        const uint64_t interval = prefs.errorCheckInterval;
        const uint64_t never = std::numeric_limits<uint64_t>::max();
        // 0 and intervals reaching past the last step mean "only at sync points"; a sum that
        // wrapped would schedule a check at every step instead.
        if (interval == 0 || interval > never - errors->checkedStep()) return never;
        const uint64_t due = errors->checkedStep() + interval;
        return due > step ? due - step : 1;
    }

    // Hands the queued work to the device (one runSequence). Called before every sync point and
    // at the end of each public call; the queue is emptied even when the device throws.
    void submit() {
        if (queue.empty()) return;
        std::vector<backends::SequenceItem> items;
        items.swap(queue);
        device->runSequence(items);
    }

    // Flushes the recording chunk if the steps so far filled it (then true: a sync point).
    bool flushRecordingIfFull() {
        const uint64_t chunk = recorder->recordSteps(); // 0 when not recording
        if (chunk == 0 || step < recorder->recordStart() + chunk) return false;
        submit();
        return recorder->afterRun(step);
    }

    // Queues `n` steps, stopping at the end of each recording chunk so it can be streamed out and
    // at each error-check interval (the queue is submitted there). A chunk flush is a sync point
    // anyway: errors are read there.
    void advance(uint64_t n) {
        while (n > 0) {
            flushRecordingIfFull(); // a chunk left full (its sink threw) is flushed first
            const uint64_t piece =
                std::min({n, recorder->stepsUntilFlush(step), stepsUntilCheck()});
            queue.push_back(
                backends::SequenceItem::ofSteps(stepKernels, args(), piece, model.dt()));
            step += piece;
            rngStep += piece;
            n -= piece;
            const bool flushed = flushRecordingIfFull();
            if (flushed || (prefs.errorCheckInterval > 0 &&
                            step - errors->checkedStep() >= prefs.errorCheckInterval)) {
                submit();
                errors->check(step);
            }
        }
    }

    // Queues the launches of `kernels` at the current step.
    void queueLaunches(const std::vector<size_t>& kernels) {
        const auto a = args();
        for (size_t k : kernels)
            queue.push_back(backends::SequenceItem::ofLaunch(k, a));
    }

    // The kernels of an update group; ModelError naming it (with `where` before) if unknown.
    const std::vector<size_t>& updateKernels(const std::string& updateGroup,
                                             const std::string& where = "") const {
        auto it = customKernels.find(updateGroup);
        if (it != customKernels.end()) return it->second;
        std::vector<std::string> groups;
        for (const auto& cu : model.customUpdates())
            groups.push_back(cu->updateGroup());
        for (const auto& cc : model.customConnectivityUpdates())
            groups.push_back(cc->updateGroup());
        throw ModelError(where + "model '" + model.name() + "' has no custom update group '" +
                         updateGroup + "'" + didYouMean(updateGroup, groups));
    }

    // resetState's work on the arrays `chosen` (stateArrays): reads the errors latched before
    // (a sync point; returned, for the caller to throw once the reset is done), queues the copies
    // from the initial state and rewinds time and recording. A schedule's resetState item passes
    // readErrors = false: nothing waits for the device, and errors latched before are reported
    // at the next check, saying that they may come from an earlier trial.
    std::vector<std::string> resetTrial(const std::vector<std::string>& chosen,
                                        bool readErrors = true) {
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

    void launchAll(const std::vector<size_t>& kernels) {
        queueLaunches(kernels);
        submit();
    }

    // Binds every merged-group table from the plan's bindings and the current arrays and values.
    void refreshTables() {
        for (size_t t = 0; t < plan.mergedGroups.size(); t++) {
            const auto& table = plan.mergedGroups[t];
            std::vector<std::vector<backends::FieldValue>> values(table.groupNames.size());
            for (size_t g = 0; g < values.size(); g++)
                for (const auto& b : table.bindings[g])
                    values[g].push_back(fieldValue(b));
            device->bindTable(t, values);
        }
    }

    backends::FieldValue fieldValue(const codegen::FieldBinding& b) const {
        using K = codegen::FieldBinding::Kind;
        switch (b.kind) {
        case K::Array:
            return backends::FieldValue::ofBuffer(arrays.at(b.array).device);
        case K::ArraySize:
            return backends::FieldValue::ofNumber(
                static_cast<double>(arrays.at(b.array).decl.count));
        case K::Dynamic:
            return backends::FieldValue::ofNumber(dynamicValues.at(b.owner + "/" + b.param));
        case K::Number:
            return backends::FieldValue::ofNumber(b.number);
        }
        throw InternalError("unknown field binding");
    }

    codegen::abi::StepArgs args() const {
        codegen::abi::StepArgs a;
        a.t = static_cast<double>(step) * model.dt();
        a.step = step;
        a.recordStart = recorder->kernelRecordStart();
        a.recordSteps = recorder->kernelRecordSteps();
        a.seed = model.seed();
        a.rngStep = rngStep;
        return a;
    }

    // Fresh arrays come zero-filled from Device::allocate; only a reset clears them again. Errors
    // latched before a reset are reported by it, after the reset, with the initialisation's own.
    void initialise(bool clear) {
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
        launchAll(initKernels);
        uploadGivenValues();
        if (prefs.keepInitialState) keepInitialState();
        auto found = errors->collect(step, true);
        pending.insert(pending.end(), found.begin(), found.end());
        info.initSeconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (!pending.empty()) runtime::throwErrors(pending);
    }

    // Values given in the model (VarInit(values)), copied in after the initialisation kernels
    // (runtime/synapses.cpp: per-synapse values go through the connectivity's codec).
    void uploadGivenValues();

    // A neuron variable whose past values are kept for delayed synapse code (VariableHistory)
    // was given new values before the first step (values in the model, a push): every slot of
    // its history becomes its host mirror's values, as initialisation fills it, so delayed code
    // never reads values these replaced. Nothing for a variable without a history.
    void refillHistory(const std::string& group, const std::string& var);

    // Layout arrays the host builds from the model (a given block mask), uploaded before the
    // initialisation kernels that read them (Connectivity::hostBuiltArrays).
    void uploadHostBuiltLayouts() {
        for (const auto& sg : model.synapseGroups())
            for (const auto& [name, values] : codegen::connectivityOf(*sg)->hostBuiltArrays()) {
                runtime::HostArray& a = array(sg->name(), name);
                if (values.size() != a.decl.count)
                    throw InternalError("synapse group '" + sg->name() + "': " +
                                        std::to_string(values.size()) + " values for '" + name +
                                        "' of " + std::to_string(a.decl.count) + " elements");
                unsigned char* host = mirror(a);
                for (size_t i = 0; i < values.size(); i++)
                    codegen::storeNumber(host + i * a.elementSize(), a.type(), double(values[i]));
                device->copyToDevice(a.device, host, a.bytes());
            }
    }

    // A device copy of every trial-state array as it is now (just initialised).
    void keepInitialState() {
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

    // The trial-state arrays `selection` names (resetState): groups or "group.var"; all if empty.
    // ModelError without BackendPreferences::keepInitialState.
    std::vector<std::string> stateArrays(const std::vector<std::string>& selection) const {
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
                throw ModelError("resetState: model '" + model.name() +
                                 "' has no group or array '" + entry +
                                 "' (name a group, or an array as \"group.var\")");
            if (out.size() == before)
                throw ModelError("resetState: group '" + entry + "' has no trial state");
        }
        return out;
    }

    // Copies the device array into its host mirror (no error check).
    void pullArray(runtime::HostArray& a) {
        device->copyFromDevice(mirror(a), a.device, a.bytes());
    }

    // Assigns the plan's kernels to the runtime's launch points.
    void sortKernels() {
        using P = codegen::KernelPhase;
        for (size_t k = 0; k < plan.kernels.size(); k++) {
            const auto& kernel = plan.kernels[k];
            switch (kernel.phase) {
            case P::Initialise:
                initKernels.push_back(k);
                break;
            case P::SynapseDynamics:
            case P::PresynapticEventUpdate:
            case P::PresynapticUpdate:
            case P::PostsynapticEventUpdate:
            case P::PostsynapticUpdate:
            case P::NeuronUpdate:
            case P::EventDetection:
                break; // codegen::stepKernels orders them
            case P::CustomUpdate:
                customKernels[kernel.updateGroup].push_back(k);
                break;
            case P::BlockPrune:
                pruneKernels[kernel.updateGroup] = k;
                break;
            case P::ConnectivityUpdate: // after the group's custom updates (plan order)
                customKernels[kernel.updateGroup].push_back(k);
                break;
            }
        }
        stepKernels = codegen::stepKernels(plan);
    }
};

} // namespace spikeforge
