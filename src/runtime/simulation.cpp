// Simulation: all host logic over the backend's Device. Arrays are named "<group>.<var>"; the
// merged-group tables of generated code are bound again from the plan whenever an array moves or
// a dynamic parameter changes (a few hundred bytes, never a per-step cost). Device-side errors
// are read only at sync points (runtime/device_errors.hpp).
#include "spikeforge/simulation.hpp"
#include "snippet/suggest.hpp"

#include "backends/backend.hpp"
#include "codegen/abi.hpp"
#include "codegen/arrays.hpp"
#include "codegen/lower.hpp"
#include "model/validate.hpp"
#include "runtime/device_errors.hpp"
#include "runtime/host_array.hpp"
#include "runtime/recording.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <new>
#include <set>

namespace spikeforge {

using runtime::HostArray;
namespace abi = codegen::abi;

struct Simulation::Impl {
    Model& model;
    BackendPreferences prefs;
    std::unique_ptr<backends::Backend> backend;
    codegen::Plan plan;
    std::unique_ptr<backends::Device> device;
    std::map<std::string, HostArray> arrays;
    std::map<std::string, double> dynamicValues; // "owner/param" → value
    BuildInfo info;
    std::unique_ptr<runtime::SpikeRecorder> recorder;
    std::unique_ptr<runtime::DeviceErrors> errors;
    // Kernels (indices into plan.kernels) in launch order: initialisation, one step, and the
    // custom updates of each update group.
    std::vector<size_t> initKernels, stepKernels;
    std::map<std::string, std::vector<size_t>> customKernels;
    uint64_t step = 0;
    uint64_t rngStep = 0; // abi::StepArgs::rngStep: steps since build or reset()
    // prefs.keepInitialState: a copy of each trial-state array as initialised (resetState).
    std::map<std::string, backends::Buffer> initialState;
    size_t capacity = 0; // [B] device memory the arrays may use in all, read once at start
    bool ready = false;  // constructed: every array is allocated and bound in the tables

    Impl(Model& m, const BackendPreferences& p) : model(m), prefs(p) {}
    ~Impl() {
        if (!device) return;
        for (auto& [name, a] : arrays)
            device->release(a.device);
        for (auto& [name, copy] : initialState)
            device->release(copy);
    }

    HostArray& array(const std::string& group, const std::string& var) {
        auto it = arrays.find(group + "." + var);
        if (it == arrays.end()) {
            std::vector<std::string> names;
            for (const auto& [n, a] : arrays)
                if (n.rfind(group + ".", 0) == 0) names.push_back(n.substr(group.size() + 1));
            if (names.empty())
                throw ModelError("no group '" + group + "' in model '" + model.name() + "'");
            throw ModelError("group '" + group + "' has no variable '" + var + "'");
        }
        return it->second;
    }

    // The extra global parameter `egp` of `group`; a ModelError for any other array (a state
    // variable's size is fixed by the model: resizing it would let kernels index past its end).
    HostArray& egpArray(const std::string& group, const std::string& egp) {
        HostArray& a = array(group, egp);
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
    void resizeEGP(HostArray& a, size_t count) {
        if (a.device && a.decl.count == count) return;
        allocate(a, count);
        refreshTables();
    }

    // (Re)allocates the device array; a host mirror is dropped and made again on demand.
    void allocate(HostArray& a, size_t count) {
        // Checked first: an overflowing size leaves the array as it was.
        const size_t bytes = HostArray{
            {a.decl.name, a.decl.ctype, count, a.decl.egp, a.decl.state},
            nullptr,
            {}}.bytes();
        checkGrowth(a, bytes);
        if (a.device) device->release(a.device);
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
    }

    // An array growing to `bytes` keeps every array together within the capacity; otherwise
    // the array is left as it was.
    void checkGrowth(const HostArray& a, size_t bytes) const {
        size_t others = 0; // [B] allocated, so their sum fits
        for (const auto& [name, b] : arrays)
            if (&b != &a && b.device) others += b.bytes();
        for (const auto& [name, copy] : initialState)
            others += arrays.at(name).bytes();
        if (others <= capacity && bytes <= capacity - others) return;
        throw allocationError(a.decl.name, bytes, device->name() + " device",
                              "the other arrays use " + codegen::humanBytes(others) + " of the " +
                                  codegen::humanBytes(capacity) + " available");
    }

    // Refuses, before anything is allocated, a model whose arrays together with the largest
    // recording chunk need more device memory than the device has.
    void checkCapacity() const {
        std::vector<std::pair<size_t, std::string>> needs; // bytes, what
        for (const auto& d : plan.arrays) {
            needs.emplace_back(HostArray{d, nullptr, {}}.bytes(), d.name);
            if (prefs.keepInitialState && d.state)
                needs.emplace_back(needs.back().first, d.name + " (initial state copy)");
        }
        size_t perStep = 0; // [B] recording buffers of one step, all groups
        for (const auto& ng : model.neuronGroups())
            if (ng->spikeRecording())
                perStep = codegen::checkedAdd(
                    perStep,
                    codegen::checkedProduct(
                        {model.batchSize(), codegen::bitWords(ng->size()), sizeof(uint32_t)},
                        "neuron group '" + ng->name() + "': recording buffer per step"),
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
    unsigned char* mirror(HostArray& a) {
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

    // Runs `n` steps, stopping at the end of each recording chunk so it can be streamed out and
    // at each error-check interval. A chunk flush is a sync point anyway: errors are read there.
    void advance(uint64_t n) {
        while (n > 0) {
            recorder->afterRun(step); // a chunk left full (its sink threw) is flushed first
            const uint64_t piece =
                std::min({n, recorder->stepsUntilFlush(step), stepsUntilCheck()});
            device->runSteps(stepKernels, args(), piece, model.dt());
            step += piece;
            rngStep += piece;
            n -= piece;
            const bool flushed = recorder->afterRun(step);
            if (flushed || (prefs.errorCheckInterval > 0 &&
                            step - errors->checkedStep() >= prefs.errorCheckInterval))
                errors->check(step);
        }
    }

    void launchAll(const std::vector<size_t>& kernels) {
        const auto a = args();
        for (size_t k : kernels)
            device->launch(k, a);
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

    abi::StepArgs args() const {
        abi::StepArgs a;
        a.t = static_cast<double>(step) * model.dt();
        a.step = step;
        a.recordStart = recorder->recordStart();
        a.recordSteps = recorder->recordSteps();
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
        launchAll(initKernels);
        if (prefs.keepInitialState) keepInitialState();
        auto found = errors->collect(step, true);
        pending.insert(pending.end(), found.begin(), found.end());
        info.initSeconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (!pending.empty()) runtime::throwErrors(pending);
    }

    // A device copy of every trial-state array as it is now (just initialised).
    void keepInitialState() {
        for (auto& [name, a] : arrays) {
            if (!a.decl.state || a.bytes() == 0) continue;
            backends::Buffer& copy = initialState[name];
            if (!copy) copy = device->allocate(a.bytes());
            if (!copy)
                throw allocationError(name, a.bytes(), device->name() + " device",
                                      "out of memory (BackendPreferences::keepInitialState)");
            device->copyBuffer(copy, a.device, a.bytes());
        }
    }

    // The trial-state arrays `selection` names (resetState): groups or "group.var"; all if empty.
    std::vector<std::string> stateArrays(const std::vector<std::string>& selection) const {
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
                                     "state and extra global parameters keep their values)");
                out.push_back(entry);
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
    void pullArray(HostArray& a) { device->copyFromDevice(mirror(a), a.device, a.bytes()); }

    // Assigns the plan's kernels to the runtime's launch points.
    void sortKernels() {
        using P = codegen::KernelPhase;
        for (size_t k = 0; k < plan.kernels.size(); k++) {
            const auto& kernel = plan.kernels[k];
            switch (kernel.phase) {
            case P::Initialise:
                initKernels.push_back(k);
                break;
            case P::SynapseUpdate:
            case P::NeuronUpdate:
                break; // codegen::stepKernels orders them
            case P::CustomUpdate:
                customKernels[kernel.updateGroup].push_back(k);
                break;
            }
        }
        stepKernels = codegen::stepKernels(plan);
    }
};

Simulation::Simulation(Model& model, const BackendPreferences& prefs)
    : m_impl(std::make_unique<Impl>(model, prefs)) {
    auto& s = *m_impl;
    model.finalise();
    s.backend = backends::makeBackend(prefs);
    const auto t0 = std::chrono::steady_clock::now();
    s.plan = codegen::lowerModel(model);
    s.sortKernels();
    s.info.generateSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    s.device = s.backend->build(s.plan, s.info);
    s.capacity = s.device->memoryCapacity();
    s.checkCapacity();
    for (const auto& d : s.plan.arrays) {
        HostArray a{d, nullptr, {}};
        s.arrays.emplace(d.name, std::move(a));
        s.allocate(s.arrays.at(d.name), d.count);
    }
    std::vector<runtime::SpikeRecorder::Group> recorded;
    for (const auto& ng : model.neuronGroups())
        if (ng->spikeRecording())
            recorded.push_back({ng->name(), ng->size(), &s.arrays.at(ng->name() + ".recordSpk")});
    s.recorder = std::make_unique<runtime::SpikeRecorder>(*s.device, std::move(recorded),
                                                          model.batchSize(), model.dt());
    s.errors = std::make_unique<runtime::DeviceErrors>(model, *s.device,
                                                       s.arrays.at(codegen::kErrorsArray));
    auto addDynamic = [&](const std::string& owner, const auto& bound) {
        for (const auto& p : bound.dynamicParams)
            s.dynamicValues[owner + "/" + p] = bound.params.at(p);
    };
    for (const auto& ng : model.neuronGroups())
        addDynamic(ng->name(), ng->bound());
    for (const auto& sg : model.synapseGroups()) {
        addDynamic(sg->name(), sg->wu());
        addDynamic(sg->name(), sg->ps());
    }
    for (const auto& cs : model.currentSources())
        addDynamic(cs->name(), cs->bound());
    for (const auto& cu : model.customUpdates())
        for (const auto& p : cu->dynamicParams())
            s.dynamicValues[cu->name() + "/" + p] = cu->params().at(p);
    s.initialise(false);
    s.ready = true;
}

Simulation::~Simulation() = default;

void Simulation::step() {
    m_impl->advance(1);
}

void Simulation::run(uint64_t steps) {
    auto& s = *m_impl;
    s.advance(steps);
    s.errors->check(s.step);
}

void Simulation::checkErrors() {
    m_impl->errors->check(m_impl->step);
}

void Simulation::customUpdate(const std::string& updateGroup) {
    auto& s = *m_impl;
    std::vector<std::string> groups;
    auto it = s.customKernels.find(updateGroup);
    if (it != s.customKernels.end()) {
        s.launchAll(it->second);
        return;
    }
    for (const auto& cu : s.model.customUpdates())
        groups.push_back(cu->updateGroup());
    throw ModelError("model '" + s.model.name() + "' has no custom update group '" + updateGroup +
                     "'" + didYouMean(updateGroup, groups));
}

double Simulation::time() const {
    return static_cast<double>(m_impl->step) * m_impl->model.dt();
}
uint64_t Simulation::timestep() const {
    return m_impl->step;
}

void Simulation::reset() {
    m_impl->recorder->rewind();
    m_impl->initialise(true);
}

void Simulation::resetState(const std::vector<std::string>& state) {
    auto& s = *m_impl;
    if (!s.prefs.keepInitialState)
        throw ModelError("resetState needs BackendPreferences::keepInitialState = true (a device "
                         "copy of the initial state, made when the simulation is built)");
    const std::vector<std::string> chosen = s.stateArrays(state); // checked before any change
    std::vector<std::string> pending = s.errors->collect(s.step, false);
    for (const auto& name : chosen) {
        auto& a = s.arrays.at(name);
        if (a.bytes() > 0) s.device->copyBuffer(a.device, s.initialState.at(name), a.bytes());
    }
    s.recorder->rewind();
    s.step = 0;
    s.errors->restart();
    if (!pending.empty()) runtime::throwErrors(pending);
}

void Simulation::pull(const std::string& group, const std::string& var) {
    auto& s = *m_impl;
    s.pullArray(s.array(group, var));
    s.errors->check(s.step);
}

void Simulation::push(const std::string& group, const std::string& var) {
    auto& a = m_impl->array(group, var);
    m_impl->device->copyToDevice(a.device, m_impl->mirror(a), a.bytes());
}

template <typename T>
std::span<T> Simulation::view(const std::string& group, const std::string& var) {
    auto& a = m_impl->array(group, var);
    if (!runtime::typeMatches<T>(a.type()))
        throw ModelError("variable '" + var + "' of group '" + group + "' has element type " +
                         a.decl.ctype + "; view<T> must use that type");
    return {reinterpret_cast<T*>(m_impl->mirror(a)), a.decl.count};
}

template std::span<float> Simulation::view<float>(const std::string&, const std::string&);
template std::span<double> Simulation::view<double>(const std::string&, const std::string&);
template std::span<int32_t> Simulation::view<int32_t>(const std::string&, const std::string&);
template std::span<uint32_t> Simulation::view<uint32_t>(const std::string&, const std::string&);
template std::span<int16_t> Simulation::view<int16_t>(const std::string&, const std::string&);
template std::span<uint16_t> Simulation::view<uint16_t>(const std::string&, const std::string&);
template std::span<int8_t> Simulation::view<int8_t>(const std::string&, const std::string&);
template std::span<uint8_t> Simulation::view<uint8_t>(const std::string&, const std::string&);

void Simulation::pullConnectivity(const std::string& sg) {
    switch (m_impl->model.synapseGroup(sg).matrixType()) {
    case MatrixType::Sparse:
        break;
    case MatrixType::Dense:
        throw ModelError("synapse group '" + sg + "' is Dense: it has no sparse connectivity");
    }
    auto& s = *m_impl;
    s.pullArray(s.array(sg, "rowLength"));
    s.pullArray(s.array(sg, "ind"));
    s.errors->check(s.step);
}

std::vector<uint32_t> Simulation::rowLengths(const std::string& sg) const {
    auto& a = m_impl->array(sg, "rowLength");
    std::vector<uint32_t> out(a.decl.count);
    std::memcpy(out.data(), m_impl->mirror(a), a.bytes());
    return out;
}

std::vector<uint32_t> Simulation::columnIndices(const std::string& sg) const {
    auto& a = m_impl->array(sg, "ind");
    const unsigned char* host = m_impl->mirror(a);
    const codegen::CType type = a.type();
    const size_t size = a.elementSize();
    std::vector<uint32_t> out(a.decl.count);
    for (size_t i = 0; i < out.size(); i++)
        out[i] = static_cast<uint32_t>(codegen::loadNumber(host + i * size, type));
    return out;
}

unsigned Simulation::rowStride(const std::string& sg) const {
    return m_impl->model.synapseGroup(sg).maxRowLength();
}

void Simulation::setDynamicParam(const std::string& group, const std::string& param, double v) {
    auto& s = *m_impl;
    auto it = s.dynamicValues.find(group + "/" + param);
    if (it == s.dynamicValues.end())
        throw ModelError("group '" + group + "': parameter '" + param +
                         "' is not dynamic (mark it with setParamDynamic before building)");
    try {
        s.checkDynamicValue(group, param, v);
    } catch (const ModelError& e) {
        char old[32];
        std::snprintf(old, sizeof old, "%.9g", it->second);
        throw ModelError(std::string("setDynamicParam: ") + e.what() + "; '" + group + "." + param +
                         "' keeps its value " + old);
    }
    it->second = v;
    s.refreshTables();
}

void Simulation::setEGP(const std::string& group, const std::string& egp,
                        std::span<const double> values) {
    auto& s = *m_impl;
    auto& a = s.egpArray(group, egp);
    s.resizeEGP(a, values.size());
    unsigned char* host = s.mirror(a);
    const codegen::CType type = a.type();
    const size_t size = a.elementSize();
    for (size_t i = 0; i < values.size(); i++)
        codegen::storeNumber(host + i * size, type, values[i]);
    s.device->copyToDevice(a.device, host, a.bytes());
}

template <typename T>
void Simulation::setEGP(const std::string& group, const std::string& egp,
                        std::span<const T> values) {
    auto& s = *m_impl;
    auto& a = s.egpArray(group, egp);
    if (!runtime::typeMatches<T>(a.type()))
        throw ModelError("extra global parameter '" + egp + "' of group '" + group +
                         "' has element type " + a.decl.ctype +
                         "; setEGP<T> must use that type (or pass doubles to convert)");
    s.resizeEGP(a, values.size());
    // Straight from the caller's memory; a host mirror already made is kept in step.
    if (!a.host.empty()) std::memcpy(a.host.data(), values.data(), a.bytes());
    if (!values.empty()) s.device->copyToDevice(a.device, values.data(), a.bytes());
}

template void Simulation::setEGP<float>(const std::string&, const std::string&,
                                        std::span<const float>);
template void Simulation::setEGP<double>(const std::string&, const std::string&,
                                         std::span<const double>);
template void Simulation::setEGP<int32_t>(const std::string&, const std::string&,
                                          std::span<const int32_t>);
template void Simulation::setEGP<uint32_t>(const std::string&, const std::string&,
                                           std::span<const uint32_t>);
template void Simulation::setEGP<int16_t>(const std::string&, const std::string&,
                                          std::span<const int16_t>);
template void Simulation::setEGP<uint16_t>(const std::string&, const std::string&,
                                           std::span<const uint16_t>);
template void Simulation::setEGP<int8_t>(const std::string&, const std::string&,
                                         std::span<const int8_t>);
template void Simulation::setEGP<uint8_t>(const std::string&, const std::string&,
                                          std::span<const uint8_t>);

std::vector<std::vector<uint32_t>> Simulation::currentSpikes(const std::string& group) {
    auto& s = *m_impl;
    const auto& ng = s.model.neuronGroup(group);
    // Copied into temporaries: reading spikes does not keep host mirrors of the spike queue.
    auto copy = [&](const std::string& var) {
        const auto& a = s.array(group, var);
        std::vector<uint32_t> out(a.decl.count);
        s.device->copyFromDevice(out.data(), a.device, a.bytes());
        return out;
    };
    const auto cnt = copy("spkCnt");
    const auto spk = copy("spk");
    const unsigned D = ng.numDelaySlots();
    const size_t slot = s.step == 0 ? 0 : (s.step - 1) % D;
    std::vector<std::vector<uint32_t>> out(s.model.batchSize());
    for (unsigned b = 0; b < s.model.batchSize(); b++) {
        const size_t base = (size_t(b) * D + slot) * ng.size();
        out[b].assign(spk.begin() + base, spk.begin() + base + cnt[size_t(b) * D + slot]);
        // GPU kernels emit spikes in the order work-groups finish; the API's order is one.
        std::sort(out[b].begin(), out[b].end());
    }
    s.errors->check(s.step);
    return out;
}

void Simulation::setRecordingWindow(uint64_t steps) {
    auto& s = *m_impl;
    s.recorder->setWindow(s.step, steps, [&](HostArray& a, size_t count) { s.allocate(a, count); });
    s.refreshTables();
}

void Simulation::setRecordingChunkSteps(uint64_t steps) {
    m_impl->recorder->setChunkLimit(steps);
}

void Simulation::setSpikeSink(SpikeSink sink) {
    m_impl->recorder->setSink(std::move(sink));
}

void Simulation::pullRecording() {
    auto& s = *m_impl;
    s.recorder->flush(s.step);
    s.errors->check(s.step);
}

std::vector<SpikeEvent> Simulation::spikes(const std::string& group) const {
    auto& s = *m_impl;
    const auto& ng = s.model.neuronGroup(group);
    if (!ng.spikeRecording() || !s.recorder->records(group))
        throw ModelError("neuron group '" + group +
                         "' does not record spikes "
                         "(NeuronGroup::setSpikeRecording(true) before building)");
    return s.recorder->events(group);
}

MemoryUsage Simulation::memoryUsage() const {
    const auto& s = *m_impl;
    MemoryUsage u;
    for (const auto& [name, copy] : s.initialState)
        u.deviceBytes += s.arrays.at(name).bytes();
    for (const auto& [name, a] : s.arrays) {
        u.deviceBytes += a.bytes();
        u.hostMirrorBytes += a.host.capacity();
        if (name.size() > 10 && name.ends_with(".recordSpk")) u.recordingBufferBytes += a.bytes();
    }
    u.recordingHostBytes = s.recorder->hostBytes();
    u.recordingChunkSteps = s.recorder->chunkSteps();
    return u;
}

const BuildInfo& Simulation::buildInfo() const {
    return m_impl->info;
}
const Model& Simulation::model() const {
    return m_impl->model;
}
std::string Simulation::backendName() const {
    return m_impl->backend->name();
}

DeviceTransfers Simulation::transfers() const {
    return m_impl->device->transfers();
}

} // namespace spikeforge
