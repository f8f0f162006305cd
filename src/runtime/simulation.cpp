// Simulation: all host logic over the backend's Device. Arrays are named "<group>.<var>"; the
// merged-group tables of generated code are rebuilt from the plan whenever an array moves or a
// dynamic parameter changes (a few hundred bytes, never a per-step cost).
#include "spikeforge/simulation.hpp"

#include "backends/backend.hpp"
#include "codegen/arrays.hpp"
#include "model/contexts.hpp"
#include "runtime/host_array.hpp"
#include "snippet/scanner.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
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
    uint64_t step = 0;
    uint64_t checkedStep = 0; // steps before this one were checked for snippet errors
    uint64_t recordStart = 0, recordSteps = 0;
    uint32_t threads = 1;

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

    void allocate(HostArray& a, size_t count) {
        if (a.device) device->release(a.device);
        a.decl.count = count;
        // At least one element of storage: a bounds-checked snippet index into an empty EGP
        // falls back to element 0, which must be memory.
        a.device = device->allocate(std::max(a.bytes(), a.elementSize()));
        a.host.assign(a.bytes(), 0);
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
        a.recordStart = recordStart;
        a.recordSteps = recordSteps;
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
                when = step - from <= 1 ? "in step " + std::to_string(from)
                                        : "in steps " + std::to_string(from) + " to " +
                                              std::to_string(step - 1);
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

    void initialise() {
        const auto t0 = std::chrono::steady_clock::now();
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
    for (const auto& d : s.plan.arrays) {
        HostArray a{d, nullptr, {}};
        s.arrays.emplace(d.name, std::move(a));
        s.allocate(s.arrays.at(d.name), d.count);
    }
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
    s.initialise();
}

Simulation::~Simulation() = default;

void Simulation::step() {
    auto& s = *m_impl;
    const auto a = s.args();
    s.device->launch("sf_synapse_update", a);
    s.device->launch("sf_neuron_update", a);
    s.step++;
    s.checkErrors();
}

void Simulation::run(uint64_t steps) {
    auto& s = *m_impl;
    for (uint64_t i = 0; i < steps; i++) {
        const auto a = s.args();
        s.device->launch("sf_synapse_update", a);
        s.device->launch("sf_neuron_update", a);
        s.step++;
    }
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
    const auto near = snippet::closestName(updateGroup, groups);
    throw ModelError("model '" + s.model.name() + "' has no custom update group '" + updateGroup +
                     "'" + (near.empty() ? "" : " (did you mean '" + near + "'?)"));
}

double Simulation::time() const {
    return static_cast<double>(m_impl->step) * m_impl->model.dt();
}
uint64_t Simulation::timestep() const {
    return m_impl->step;
}

void Simulation::reset() {
    m_impl->recordStart = 0;
    m_impl->initialise();
}

void Simulation::pull(const std::string& group, const std::string& var) {
    auto& a = m_impl->array(group, var);
    m_impl->device->copyFromDevice(a.host.data(), a.device, a.bytes());
}

void Simulation::push(const std::string& group, const std::string& var) {
    auto& a = m_impl->array(group, var);
    m_impl->device->copyToDevice(a.device, a.host.data(), a.bytes());
}

template <typename T>
std::span<T> Simulation::view(const std::string& group, const std::string& var) {
    auto& a = m_impl->array(group, var);
    if (!runtime::typeMatches<T>(a.decl.ctype))
        throw ModelError("variable '" + var + "' of group '" + group + "' has element type " +
                         a.decl.ctype + "; view<T> must use that type");
    return {reinterpret_cast<T*>(a.host.data()), a.decl.count};
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
    std::memcpy(out.data(), a.host.data(), a.bytes());
    return out;
}

std::vector<uint32_t> Simulation::columnIndices(const std::string& sg) const {
    auto& a = m_impl->array(sg, "ind");
    std::vector<uint32_t> out(a.decl.count);
    for (size_t i = 0; i < out.size(); i++)
        out[i] = static_cast<uint32_t>(
            runtime::loadNumber(a.host.data() + i * a.elementSize(), a.decl.ctype));
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
    it->second = v;
    s.refreshTables();
}

void Simulation::setEGP(const std::string& group, const std::string& egp,
                        std::span<const double> values) {
    auto& s = *m_impl;
    auto& a = s.array(group, egp);
    s.allocate(a, values.size());
    for (size_t i = 0; i < values.size(); i++)
        runtime::storeNumber(a.host.data() + i * a.elementSize(), a.decl.ctype, values[i]);
    s.device->copyToDevice(a.device, a.host.data(), a.bytes());
    s.refreshTables();
}

std::vector<std::vector<uint32_t>> Simulation::currentSpikes(const std::string& group) {
    auto& s = *m_impl;
    const auto& ng = s.model.neuronGroup(group);
    pull(group, "spkCnt");
    pull(group, "spk");
    const auto cnt = view<uint32_t>(group, "spkCnt");
    const auto spk = view<uint32_t>(group, "spk");
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
    for (const auto& ng : s.model.neuronGroups())
        if (ng->spikeRecording())
            s.allocate(s.array(ng->name(), "recordSpk"),
                       steps * s.model.batchSize() * codegen::bitWords(ng->size()));
    s.recordStart = s.step;
    s.recordSteps = steps;
    s.refreshTables();
}

void Simulation::pullRecording() {
    for (const auto& ng : m_impl->model.neuronGroups())
        if (ng->spikeRecording()) pull(ng->name(), "recordSpk");
}

std::vector<SpikeEvent> Simulation::spikes(const std::string& group) const {
    auto& s = *m_impl;
    const auto& ng = s.model.neuronGroup(group);
    if (!ng.spikeRecording())
        throw ModelError("neuron group '" + group +
                         "' does not record spikes "
                         "(NeuronGroup::setSpikeRecording(true) before building)");
    const auto& a = s.array(group, "recordSpk");
    const auto* words = reinterpret_cast<const uint32_t*>(a.host.data());
    const unsigned W = codegen::bitWords(ng.size()), B = s.model.batchSize();
    const uint64_t steps = std::min<uint64_t>(s.recordSteps, s.step - s.recordStart);
    std::vector<SpikeEvent> out;
    for (uint64_t t = 0; t < steps && (t + 1) * B * W <= a.decl.count; t++)
        for (unsigned b = 0; b < B; b++)
            for (unsigned w = 0; w < W; w++) {
                uint32_t x = words[(t * B + b) * W + w];
                while (x) {
                    const uint32_t n = w * 32 + static_cast<uint32_t>(__builtin_ctz(x));
                    out.push_back({double(s.recordStart + t) * s.model.dt(), n, b});
                    x &= x - 1;
                }
            }
    return out;
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
