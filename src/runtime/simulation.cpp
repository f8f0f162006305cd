// Simulation: all host logic over the backend's Device. Arrays are named "<group>.<var>"; the
// merged-group tables of generated code are rebuilt from the plan whenever an array moves or a
// dynamic parameter changes (a few hundred bytes, never a per-step cost).
#include "spikeforge/simulation.hpp"
#include "snippet/suggest.hpp"

#include "backends/backend.hpp"
#include "codegen/arrays.hpp"
#include "model/contexts.hpp"
#include "model/validate.hpp"
#include "runtime/host_array.hpp"
#include "runtime/recording.hpp"
#include "snippet/scanner.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <new>
#include <set>
#include <thread>

namespace spikeforge {

using runtime::HostArray;

struct Simulation::Impl {
    Model& model;
    BackendPreferences prefs;
    std::unique_ptr<backends::Backend> backend;
    codegen::Plan plan;
    std::unique_ptr<runtime::Device> device;
    std::map<std::string, HostArray> arrays;
    std::map<std::string, double> dynamicValues; // "owner/param" → value
    BuildInfo info;
    std::unique_ptr<runtime::SpikeRecorder> recorder;
    uint64_t step = 0;
    uint64_t checkedStep = 0; // steps before this one were checked for snippet errors
    uint32_t threads = 1;
    size_t capacity = 0; // [B] device memory the arrays may use in all, read once at start
    bool ready = false;  // constructed: every array is allocated and bound in the tables

    Impl(Model& m, const BackendPreferences& p) : model(m), prefs(p) {}
    ~Impl() {
        if (device)
            for (auto& [name, a] : arrays)
                device->release(a.device);
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

    // (Re)allocates the device array; a host mirror is dropped and made again on demand.
    void allocate(HostArray& a, size_t count) {
        // Checked first: an overflowing size leaves the array as it was.
        const size_t bytes = HostArray{{a.decl.name, a.decl.ctype, count}, nullptr, {}}.bytes();
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
        if (others <= capacity && bytes <= capacity - others) return;
        throw allocationError(a.decl.name, bytes, device->name() + " device",
                              "the other arrays use " + codegen::humanBytes(others) + " of the " +
                                  codegen::humanBytes(capacity) + " available");
    }

    // Refuses, before anything is allocated, a model whose arrays together with the largest
    // recording chunk need more device memory than the device has.
    void checkCapacity() const {
        std::vector<std::pair<size_t, std::string>> needs; // bytes, what
        for (const auto& d : plan.arrays)
            needs.emplace_back(HostArray{d, nullptr, {}}.bytes(), d.name);
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

    // Runs `n` steps, stopping at the end of each recording chunk so it can be streamed out.
    void advance(uint64_t n) {
        while (n > 0) {
            recorder->afterRun(step); // a chunk left full (its sink threw) is flushed first
            const uint64_t piece = std::min(n, recorder->stepsUntilFlush(step));
            for (uint64_t i = 0; i < piece; i++) {
                const auto a = args();
                device->launch("sf_synapse_update", a);
                device->launch("sf_neuron_update", a);
                step++;
            }
            n -= piece;
            recorder->afterRun(step);
        }
    }

    void refreshTables() {
        for (const auto& t : plan.mergedGroups) {
            const auto layout = codegen::layoutOf(t.fields);
            std::vector<unsigned char> bytes(layout.size * t.groupNames.size(), 0);
            for (size_t g = 0; g < t.groupNames.size(); g++)
                for (size_t f = 0; f < t.fields.size(); f++)
                    writeField(bytes.data() + g * layout.size + layout.offsets[f], t.fields[f],
                               t.bindings[g][f]);
            device->writeTable(t.symbol, bytes.data(), bytes.size());
        }
    }

    void writeField(unsigned char* dst, const codegen::FieldDecl& f,
                    const codegen::FieldBinding& b) {
        using K = codegen::FieldBinding::Kind;
        if (b.kind == K::Array) {
            void* p = arrays.at(b.array).device;
            std::memcpy(dst, &p, sizeof p);
            return;
        }
        if (b.kind == K::ArraySize) {
            runtime::storeNumber(dst, f.ctype, static_cast<double>(arrays.at(b.array).decl.count));
            return;
        }
        const double v =
            b.kind == K::Dynamic ? dynamicValues.at(b.owner + "/" + b.param) : b.number;
        runtime::storeNumber(dst, f.ctype, v);
    }

    runtime::StepArgs args() const {
        runtime::StepArgs a;
        a.t = static_cast<double>(step) * model.dt();
        a.step = step;
        a.recordStart = recorder->recordStart();
        a.recordSteps = recorder->recordSteps();
        a.seed = model.seed();
        a.threads = threads;
        return a;
    }

    // Out-of-range snippet indices, reported per code field (see codegen::kSnippetErrorsArray).
    // The flags are cleared before throwing so a caught error is not reported again.
    void checkSnippetErrors(bool initialising) {
        auto& a = arrays.at(codegen::kSnippetErrorsArray);
        std::vector<uint32_t> flags(a.decl.count);
        device->copyFromDevice(flags.data(), a.device, a.bytes());
        const uint64_t from = checkedStep;
        checkedStep = step;
        for (size_t slot = 0; slot < flags.size(); slot++) {
            if (flags[slot] == 0) continue;
            const uint32_t ordinal = flags[slot];
            device->zero(a.device, a.bytes());
            const auto field = contexts::codeFieldAt(model, slot);
            const auto scanned = snippet::scan(*field.code, field.context);
            const std::string array = ordinal <= scanned.checkedArrays.size()
                                          ? scanned.checkedArrays[ordinal - 1]
                                          : "an array";
            std::string when = "during initialisation";
            if (!initialising)
                when = step - from <= 1
                           ? "in step " + std::to_string(from)
                           : "in steps " + std::to_string(from) + " to " + std::to_string(step - 1);
            throw ModelError(field.group + "." + field.field + ": index out of range for '" +
                             array + "' " + when +
                             " (the out-of-range access was replaced by element 0)");
        }
    }

    void checkErrors(bool initialising = false) {
        checkSnippetErrors(initialising);
        for (const auto& sg : model.synapseGroups()) {
            auto& a = arrays.at(sg->name() + ".error");
            uint32_t flags = 0;
            device->copyFromDevice(&flags, a.device, sizeof flags);
            if (flags & 1u)
                throw ModelError("synapse group '" + sg->name() +
                                 "': connectivity initialiser produced a row longer than its "
                                 "maximum row length " +
                                 std::to_string(sg->maxRowLength()) +
                                 " (calcMaxRowLength is too small for these parameters)");
            if (flags & 2u)
                throw ModelError("synapse group '" + sg->name() +
                                 "': addToPostDelay was given a delay >= the maximum dendritic "
                                 "delay " +
                                 std::to_string(sg->maxDendriticDelaySteps()) +
                                 " steps (SynapseGroup::setMaxDendriticDelaySteps)");
        }
    }

    // Fresh arrays come zero-filled from Device::allocate; only a reset clears them again.
    void initialise(bool clear) {
        const auto t0 = std::chrono::steady_clock::now();
        if (clear)
            for (auto& [name, a] : arrays)
                device->zero(a.device, a.bytes());
        step = 0;
        checkedStep = 0;
        refreshTables();
        device->launch("sf_initialize", args());
        device->synchronise();
        checkErrors(true);
        info.initSeconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
};

Simulation::Simulation(Model& model, const BackendPreferences& prefs)
    : m_impl(std::make_unique<Impl>(model, prefs)) {
    auto& s = *m_impl;
    if (prefs.threads < 0) throw ModelError("threads must be 0 (all cores) or positive");
    s.threads = prefs.threads > 0 ? static_cast<uint32_t>(prefs.threads)
                                  : std::max(1u, std::thread::hardware_concurrency());
    model.finalise();
    s.backend = backends::makeBackend(prefs);
    const auto t0 = std::chrono::steady_clock::now();
    s.plan = s.backend->generate(model);
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
    auto& s = *m_impl;
    s.advance(1);
    s.checkErrors();
}

void Simulation::run(uint64_t steps) {
    auto& s = *m_impl;
    s.advance(steps);
    s.device->synchronise();
    s.checkErrors();
}

void Simulation::customUpdate(const std::string& updateGroup) {
    auto& s = *m_impl;
    std::vector<std::string> groups;
    for (const auto& cu : s.model.customUpdates()) {
        if (cu->updateGroup() == updateGroup) {
            s.device->launch("sf_custom_update_" + updateGroup, s.args());
            return;
        }
        groups.push_back(cu->updateGroup());
    }
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

void Simulation::pull(const std::string& group, const std::string& var) {
    auto& a = m_impl->array(group, var);
    m_impl->device->copyFromDevice(m_impl->mirror(a), a.device, a.bytes());
}

void Simulation::push(const std::string& group, const std::string& var) {
    auto& a = m_impl->array(group, var);
    m_impl->device->copyToDevice(a.device, m_impl->mirror(a), a.bytes());
}

template <typename T>
std::span<T> Simulation::view(const std::string& group, const std::string& var) {
    auto& a = m_impl->array(group, var);
    if (!runtime::typeMatches<T>(a.decl.ctype))
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
    if (m_impl->model.synapseGroup(sg).matrixType() != MatrixType::Sparse)
        throw ModelError("synapse group '" + sg + "' is Dense: it has no sparse connectivity");
    pull(sg, "rowLength");
    pull(sg, "ind");
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
    std::vector<uint32_t> out(a.decl.count);
    for (size_t i = 0; i < out.size(); i++)
        out[i] =
            static_cast<uint32_t>(runtime::loadNumber(host + i * a.elementSize(), a.decl.ctype));
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
    auto& a = s.array(group, egp);
    s.allocate(a, values.size());
    unsigned char* host = s.mirror(a);
    for (size_t i = 0; i < values.size(); i++)
        runtime::storeNumber(host + i * a.elementSize(), a.decl.ctype, values[i]);
    s.device->copyToDevice(a.device, host, a.bytes());
    s.refreshTables();
}

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
    }
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
    m_impl->recorder->flush(m_impl->step);
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

} // namespace spikeforge
