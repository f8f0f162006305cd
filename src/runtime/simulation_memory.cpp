// Simulation::Impl's arrays and device memory: lookup of arrays and EGPs, (re)allocation within
// the device's capacity, host mirrors and the recorded streams' buffers.
#include "codegen/arrays.hpp"
#include "codegen/checked_size.hpp"
#include "codegen/layouts/buffers.hpp"
#include "runtime/simulation_impl.hpp"

#include <algorithm>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace spikeforge {

Simulation::Impl::~Impl() {
    if (recorder) recorder->settle(); // it may be decoding a chunk in place
    if (!device) return;
    for (auto& [name, a] : arrays)
        device->release(a.device);
    for (auto& [name, copy] : initialState)
        device->release(copy);
}

runtime::HostArray& Simulation::Impl::array(const std::string& group, const std::string& var) {
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

runtime::HostArray& Simulation::Impl::egpArray(const std::string& group, const std::string& egp) {
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

void Simulation::Impl::resizeEGP(runtime::HostArray& a, size_t count) {
    if (a.device && a.decl.count == count) return;
    allocate(a, count);
    refreshTables();
}

void Simulation::Impl::allocate(runtime::HostArray& a, size_t count) {
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

void Simulation::Impl::checkGrowth(const runtime::HostArray& a, size_t bytes) const {
    const size_t others = deviceBytes - (a.device ? a.bytes() : 0); // [B]
    if (others <= capacity && bytes <= capacity - others) return;
    throw allocationError(a.decl.name, bytes, device->name() + " device",
                          "the other arrays use " + codegen::humanBytes(others) + " of the " +
                              codegen::humanBytes(capacity) + " available");
}

std::vector<Simulation::Impl::RecordedStream> Simulation::Impl::recordedStreams() const {
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

std::string Simulation::Impl::eventStreamName(const std::string& synapseGroup, bool pre) {
    return synapseGroup + (pre ? ".preEvents" : ".postEvents");
}

void Simulation::Impl::checkCapacity() const {
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
        needs.emplace_back(std::max<size_t>(1, runtime::kRecordingBudgetBytes / perStep) * perStep,
                           "spike recording chunk");
    size_t total = 0;
    for (const auto& [bytes, what] : needs)
        total = codegen::checkedAdd(total, bytes, "model '" + model.name() + "': device memory");
    if (total <= capacity) return;
    const size_t top = std::min<size_t>(3, needs.size());
    std::partial_sort(needs.begin(), needs.begin() + top, needs.end(),
                      [](const auto& x, const auto& y) { return x.first > y.first; });
    std::string largest;
    for (size_t i = 0; i < top; i++)
        largest += (i ? ", " : "") + needs[i].second + " " + codegen::humanBytes(needs[i].first);
    throw BackendError("model '" + model.name() + "' needs " + codegen::humanBytes(total) + " of " +
                       device->name() + " device memory, more than the " +
                       codegen::humanBytes(capacity) + " available (largest arrays: " + largest +
                       "); nothing was allocated; use a smaller model or batch size");
}

unsigned char* Simulation::Impl::mirror(runtime::HostArray& a) {
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

BackendError Simulation::Impl::allocationError(const std::string& array, size_t bytes,
                                               const std::string& where,
                                               const std::string& why) const {
    return BackendError("cannot allocate " + array + " (" + codegen::humanBytes(bytes) + " of " +
                        where + " memory): " + why + "; use a smaller model or batch size");
}

void Simulation::Impl::pullArray(runtime::HostArray& a) {
    device->copyFromDevice(mirror(a), a.device, a.bytes());
}

} // namespace spikeforge
