// Simulation: all host logic over the backend's Device. Arrays are named "<group>.<var>"; the
// merged-group tables of generated code are bound again from the plan whenever an array moves or
// a dynamic parameter changes (a few hundred bytes, never a per-step cost). Device-side errors
// are read only at sync points (runtime/device_errors.hpp).
#include "codegen/layouts/buffers.hpp"
#include "runtime/simulation_impl.hpp"
#include "snippet/suggest.hpp"

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
    if (prefs.kernelTiming) s.device->enableKernelTiming(s.plan.kernels.size());
    s.capacity = s.device->memoryCapacity();
    s.checkCapacity();
    for (const auto& d : s.plan.arrays) {
        HostArray a{d, nullptr, {}};
        s.arrays.emplace(d.name, std::move(a));
        s.allocate(s.arrays.at(d.name), d.count);
    }
    std::vector<runtime::SpikeRecorder::Group> recorded;
    for (const auto& r : s.recordedStreams())
        recorded.push_back({r.name, r.neurons, &s.arrays.at(r.buffer)});
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
    m_impl->submit();
    m_impl->recorder->deliver();
}

void Simulation::run(uint64_t steps) {
    auto& s = *m_impl;
    s.advance(steps);
    s.submit();
    s.recorder->deliver(); // the last full chunk, decoded while the steps after it ran
    s.errors->check(s.step);
}

void Simulation::checkErrors() {
    m_impl->errors->check(m_impl->step);
}

void Simulation::customUpdate(const std::string& updateGroup) {
    m_impl->launchAll(m_impl->updateKernels(updateGroup));
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
    m_impl->recorder->deliver(); // what was recorded before the reset, to the sink
}

void Simulation::resetState(const std::vector<std::string>& state) {
    auto& s = *m_impl;
    const std::vector<std::string> chosen = s.stateArrays(state); // checked before any change
    const std::vector<std::string> pending = s.resetTrial(chosen);
    s.submit();
    s.recorder->deliver(); // what was recorded before the reset, to the sink
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
    // Before the first step the pushed values are the initial ones, which delayed synapse code
    // reads until the group's history fills; later ones become history as steps run.
    if (m_impl->step == 0) m_impl->refillHistory(group, var);
}

void Simulation::Impl::refillHistory(const std::string& group, const std::string& var) {
    const auto found = arrays.find(group + "." + codegen::VariableHistory::arrayVarOfStored(var));
    if (found == arrays.end()) return;
    runtime::HostArray& history = found->second;
    runtime::HostArray& values = array(group, var);
    const size_t bytes = values.bytes(); // [batch][neuron]
    const size_t perBatch = bytes / model.batchSize();
    const size_t slots = history.bytes() / bytes;
    const unsigned char* from = mirror(values);
    unsigned char* to = mirror(history);
    for (size_t b = 0; b < model.batchSize(); b++)
        for (size_t k = 0; k < slots; k++)
            std::memcpy(to + (b * slots + k) * perBatch, from + b * perBatch, perBatch);
    device->copyToDevice(history.device, to, history.bytes());
}

template <typename T>
std::span<T> Simulation::view(const std::string& group, const std::string& var) {
    auto& a = m_impl->array(group, var);
    if (!runtime::typeMatches<T>(a.type()))
        throw ModelError("variable '" + var + "' of group '" + group + "' has element type " +
                         a.decl.ctype + "; view<T> must use that type");
    return {reinterpret_cast<T*>(m_impl->mirror(a)), a.decl.count};
}

std::string Simulation::elementType(const std::string& group, const std::string& var) {
    return m_impl->array(group, var).decl.ctype;
}

unsigned Simulation::batchCopies(const std::string& group, const std::string& var) {
    return m_impl->array(group, var).decl.batched ? m_impl->model.batchSize() : 1u;
}

template std::span<float> Simulation::view<float>(const std::string&, const std::string&);
template std::span<double> Simulation::view<double>(const std::string&, const std::string&);
template std::span<int32_t> Simulation::view<int32_t>(const std::string&, const std::string&);
template std::span<uint32_t> Simulation::view<uint32_t>(const std::string&, const std::string&);
template std::span<int16_t> Simulation::view<int16_t>(const std::string&, const std::string&);
template std::span<uint16_t> Simulation::view<uint16_t>(const std::string&, const std::string&);
template std::span<int8_t> Simulation::view<int8_t>(const std::string&, const std::string&);
template std::span<uint8_t> Simulation::view<uint8_t>(const std::string&, const std::string&);
template std::span<int64_t> Simulation::view<int64_t>(const std::string&, const std::string&);
template std::span<uint64_t> Simulation::view<uint64_t>(const std::string&, const std::string&);

void Simulation::pullConnectivity(const std::string& sg) {
    const MatrixType type = m_impl->model.synapseGroup(sg).matrixType();
    if (!matrixTraits(type).editableRows)
        throw ModelError("synapse group '" + sg + "' is " + matrixTypeName(type) +
                         ": it has no sparse connectivity");
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

namespace {

// The events of the last step in a stream's queue, per batch element, sorted.
std::vector<std::vector<uint32_t>> currentEventsOf(Simulation::Impl& s,
                                                   const codegen::EventStream& e) {
    // Copied into temporaries: reading spikes does not keep host mirrors of the spike queue.
    auto copy = [&](const std::string& var) {
        const auto& a = s.array(e.owner, var);
        std::vector<uint32_t> out(a.decl.count);
        s.device->copyFromDevice(out.data(), a.device, a.bytes());
        return out;
    };
    const auto cnt = copy(e.count);
    const auto spk = copy(e.ids);
    const unsigned D = e.slots;
    const size_t slot = s.step == 0 ? 0 : (s.step - 1) % D;
    std::vector<std::vector<uint32_t>> out(s.model.batchSize());
    for (unsigned b = 0; b < s.model.batchSize(); b++) {
        const size_t base = (size_t(b) * D + slot) * e.neurons;
        out[b].assign(spk.begin() + base, spk.begin() + base + cnt[size_t(b) * D + slot]);
        // GPU kernels emit spikes in the order work-groups finish; the API's order is one.
        std::sort(out[b].begin(), out[b].end());
    }
    s.errors->check(s.step);
    return out;
}

} // namespace

std::vector<std::vector<uint32_t>> Simulation::currentSpikes(const std::string& group) {
    return currentEventsOf(*m_impl, codegen::spikesOf(m_impl->model.neuronGroup(group)));
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

std::vector<SpikeEvent> Simulation::spikeEvents(const std::string& synapseGroup,
                                                bool presynaptic) const {
    auto& s = *m_impl;
    const auto& sg = s.model.synapseGroup(synapseGroup);
    const std::string name = Impl::eventStreamName(synapseGroup, presynaptic);
    const bool on = presynaptic ? sg.preEventRecording() : sg.postEventRecording();
    if (!on || !s.recorder->records(name))
        throw ModelError("synapse group '" + synapseGroup + "' does not record " +
                         (presynaptic ? "pre" : "post") +
                         "synaptic spike-like events (SynapseGroup::set" +
                         (presynaptic ? "Pre" : "Post") + "EventRecording(true) before building)");
    return s.recorder->events(name);
}

std::vector<std::vector<uint32_t>> Simulation::currentSpikeEvents(const std::string& synapseGroup,
                                                                  bool presynaptic) {
    auto& s = *m_impl;
    const auto& sg = s.model.synapseGroup(synapseGroup);
    if (!codegen::hasEventCondition(sg, presynaptic))
        throw ModelError("synapse group '" + synapseGroup + "' has no " +
                         (presynaptic ? "pre" : "post") + "EventThresholdConditionCode");
    return currentEventsOf(s, codegen::eventsOf(sg, presynaptic));
}

size_t Simulation::deviceBytes(const std::string& group) const {
    const auto& s = *m_impl;
    size_t total = 0;
    bool found = false;
    for (const auto& [name, a] : s.arrays)
        if (name.size() > group.size() && name.compare(0, group.size(), group) == 0 &&
            name[group.size()] == '.') {
            total += a.bytes();
            found = true;
        }
    if (!found) throw ModelError("no group '" + group + "' in model '" + s.model.name() + "'");
    return total;
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
    s.recorder->settle();
    u.recordingHostBytes = s.recorder->hostBytes();
    u.recordingChunkSteps = s.recorder->chunkSteps();
    u.recordingChunksPerBuffer = s.recorder->chunksPerBuffer();
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

std::optional<double> Simulation::deviceBusySeconds() const {
    return m_impl->device->busySeconds(); // the queue is empty between public calls
}

namespace {

// The counter name of a plan kernel (KernelTime::name).
std::string kernelTimeName(const codegen::Kernel& k) {
    switch (k.phase) {
    case codegen::KernelPhase::Initialise:
        return "initialise";
    case codegen::KernelPhase::SynapseDynamics:
        return "synapse_dynamics";
    case codegen::KernelPhase::PresynapticEventUpdate:
        return "presynaptic_event_update";
    case codegen::KernelPhase::PresynapticUpdate:
        return "presynaptic_update";
    case codegen::KernelPhase::PostsynapticEventUpdate:
        return "postsynaptic_event_update";
    case codegen::KernelPhase::PostsynapticUpdate:
        return "postsynaptic_update";
    case codegen::KernelPhase::NeuronUpdate:
        return "neuron_update";
    case codegen::KernelPhase::EventDetection:
        return "event_detection";
    case codegen::KernelPhase::CustomUpdate:
        return "custom_update." + k.updateGroup;
    case codegen::KernelPhase::BlockPrune:
        return "prune_blocks." + k.updateGroup;
    case codegen::KernelPhase::ConnectivityUpdate: // one kernel per update: named by it
        return "custom_connectivity_update." +
               k.entry.substr(std::string(codegen::abi::kConnectivityUpdatePrefix).size());
    }
    throw InternalError("a kernel phase without a timer name");
}

} // namespace

std::vector<KernelTime> Simulation::kernelTimes() const {
    auto& s = *m_impl;
    if (!s.device->kernelTiming())
        throw ModelError("kernelTimes: simulation of model '" + s.model.name() +
                         "' was built without kernel timing (set "
                         "BackendPreferences::kernelTiming)");
    const auto counters = s.device->kernelCounters();
    if (!counters)
        throw BackendError("kernelTimes: the " + s.backend->name() +
                           " device cannot time kernels (no profiling or event timing)");
    std::vector<KernelTime> out;
    for (size_t k = 0; k < s.plan.kernels.size(); k++)
        out.push_back(
            {kernelTimeName(s.plan.kernels[k]), counters->at(k).seconds, counters->at(k).launches});
    return out;
}

} // namespace spikeforge
