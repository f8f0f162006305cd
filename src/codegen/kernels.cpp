// The kernel list: every group lowered for each kernel it takes part in, merged per phase, and
// gathered into the entry points the runtime launches (codegen/abi.hpp names).
#include "codegen/abi.hpp"
#include "codegen/arrays.hpp"
#include "codegen/lowerer.hpp"
#include "codegen/plan_observer.hpp"

#include <algorithm>
#include <set>

namespace spikeforge::codegen {

namespace {

struct KernelBuilder {
    Plan& plan;
    Kernel kernel;
    std::set<std::string> reads, writes;

    // Merges one phase's groups and appends their tables and bodies to the kernel.
    void add(const std::string& prefix, std::vector<LoweredGroup> groups, bool batched = true) {
        if (groups.empty()) return;
        for (auto& set : mergeGroups(prefix, std::move(groups))) {
            const size_t table = plan.mergedGroups.size();
            for (size_t n : set.elements)
                kernel.workSize = std::max(kernel.workSize, n * (batched ? plan.batchSize : 1u));
            reads.insert(set.read.begin(), set.read.end());
            writes.insert(set.written.begin(), set.written.end());
            kernel.tables.push_back(table);
            kernel.groups.push_back(
                {table, std::move(set.body), std::move(set.elements), std::move(set.synapses)});
            plan.mergedGroups.push_back(std::move(set.table));
        }
    }
    Kernel done() {
        kernel.batchSize = plan.batchSize;
        kernel.reads.assign(reads.begin(), reads.end());
        kernel.writes.assign(writes.begin(), writes.end());
        return std::move(kernel);
    }
};

KernelBuilder builder(Plan& plan, const std::string& entry, KernelPhase phase) {
    KernelBuilder b{plan, {}, {}, {}};
    b.kernel.entry = entry;
    b.kernel.phase = phase;
    return b;
}

// Update groups in the order their first custom update was added.
std::vector<std::string> updateGroups(const Model& m) {
    std::vector<std::string> out;
    for (const auto& cu : m.customUpdates())
        if (std::find(out.begin(), out.end(), cu->updateGroup()) == out.end())
            out.push_back(cu->updateGroup());
    return out;
}

// The custom connectivity updates of each update group, one kernel per group (after the custom
// updates' kernels, so Simulation::customUpdate runs them after the group's custom updates).
// Updates over one synapse group edit the same rows: each gets a kernel of its own, in the
// order they were added.
std::vector<Kernel> connectivityKernels(Plan& plan, const Model& m) {
    std::vector<Kernel> out;
    for (const auto& cc : m.customConnectivityUpdates()) {
        auto k = builder(plan, abi::kConnectivityUpdatePrefix + cc->name(),
                         KernelPhase::ConnectivityUpdate);
        k.kernel.updateGroup = cc->updateGroup();
        std::vector<LoweredGroup> groups;
        groups.push_back(lowerConnectivityUpdate(m, *cc));
        k.add("ConnectivityUpdate" + cc->name(), std::move(groups), false);
        out.push_back(k.done());
    }
    return out;
}

Kernel customKernel(Plan& plan, const Model& m, const std::string& group) {
    auto b = builder(plan, abi::kCustomUpdatePrefix + group, KernelPhase::CustomUpdate);
    b.kernel.updateGroup = group;
    // Consecutive fusable updates share one pass; the others keep their order.
    std::vector<std::vector<const CustomUpdate*>> runs;
    for (const auto& cu : m.customUpdates()) {
        if (cu->updateGroup() != group) continue;
        if (runs.empty() || !fusable(*runs.back().back(), *cu)) runs.emplace_back();
        runs.back().push_back(cu.get());
    }
    std::vector<LoweredGroup> groups;
    bool batched = false;
    for (const auto& run : runs) {
        groups.push_back(lowerCustomUpdate(m, run));
        batched = batched || run.front()->isBatched();
    }
    b.add("CustomUpdate" + group, std::move(groups), batched);
    return b.done();
}

} // namespace

Plan lowerModel(const Model& m) {
    Plan plan;
    plan.precision = m.precision();
    plan.batchSize = m.batchSize();
    plan.arrays = planArrays(m);

    std::vector<LoweredGroup> nInit, sInit, cInit, cuInit, dyn, pre, post, nUpd, detect;
    std::vector<LoweredGroup> preEvents, postEvents;
    const auto neighbours = neuronNeighbours(m);
    for (const auto& ng : m.neuronGroups()) {
        nInit.push_back(lowerNeuronInit(m, *ng));
        const auto found = neighbours.find(ng.get());
        nUpd.push_back(lowerNeuronUpdate(
            m, *ng, found == neighbours.end() ? NeuronNeighbours{} : found->second));
    }
    for (const auto& sg : m.synapseGroups()) {
        sInit.push_back(lowerSynapseInit(m, *sg));
        if (!sg->wu().model.synapseDynamicsCode.empty())
            dyn.push_back(lowerSynapseDynamics(m, *sg));
        if (!sg->wu().model.preSpikeSynCode.empty()) pre.push_back(lowerPresynapticUpdate(m, *sg));
        if (!sg->wu().model.postSpikeSynCode.empty())
            post.push_back(lowerPostsynapticUpdate(m, *sg));
        for (const bool side : {true, false})
            if (hasEventCondition(*sg, side)) detect.push_back(lowerEventDetection(m, *sg, side));
        if (!sg->wu().model.preEventSynCode.empty())
            preEvents.push_back(lowerPresynapticUpdate(m, *sg, true));
        if (!sg->wu().model.postEventSynCode.empty())
            postEvents.push_back(lowerPostsynapticUpdate(m, *sg, true));
    }
    for (const auto& cs : m.currentSources())
        cInit.push_back(lowerCurrentSourceInit(m, *cs));
    for (const auto& cu : m.customUpdates())
        cuInit.push_back(lowerCustomUpdateInit(m, *cu));
    std::vector<LoweredGroup> ccInit;
    for (const auto& cc : m.customConnectivityUpdates())
        ccInit.push_back(lowerConnectivityUpdateInit(m, *cc));

    auto init = builder(plan, abi::kInitialiseEntry, KernelPhase::Initialise);
    init.add("NeuronInit", std::move(nInit));
    init.add("SynapseInit", std::move(sInit));
    init.add("CurrentSourceInit", std::move(cInit));
    init.add("CustomUpdateInit", std::move(cuInit));
    init.add("ConnectivityUpdateInit", std::move(ccInit));
    plan.kernels.push_back(init.done());
    std::vector<Kernel> custom;
    for (const auto& group : updateGroups(m))
        custom.push_back(customKernel(plan, m, group));
    // Its own kernel: a SIMT device may run one group's rows of both at once otherwise, and its
    // time is counted apart.
    if (!dyn.empty()) {
        auto dynamics = builder(plan, abi::kSynapseDynamicsEntry, KernelPhase::SynapseDynamics);
        dynamics.add("SynapseDynamics", std::move(dyn));
        plan.kernels.push_back(dynamics.done());
    }
    // Spike-like event code: kernels of their own (KernelPhase), before the spikes' as in GeNN.
    if (!preEvents.empty()) {
        auto k =
            builder(plan, abi::kPresynapticEventUpdateEntry, KernelPhase::PresynapticEventUpdate);
        k.add("PresynapticEventUpdate", std::move(preEvents));
        plan.kernels.push_back(k.done());
    }
    if (!postEvents.empty()) {
        auto k =
            builder(plan, abi::kPostsynapticEventUpdateEntry, KernelPhase::PostsynapticEventUpdate);
        k.add("PostsynapticEventUpdate", std::move(postEvents));
        plan.kernels.push_back(k.done());
    }
    // Spike propagation always has its kernel (empty without synapse groups); postsynaptic
    // learning one where some group learns. Apart, so each is timed apart (kernel timing).
    auto presynaptic = builder(plan, abi::kPresynapticUpdateEntry, KernelPhase::PresynapticUpdate);
    presynaptic.add("PresynapticUpdate", std::move(pre));
    plan.kernels.push_back(presynaptic.done());
    if (!post.empty()) {
        auto postsynaptic =
            builder(plan, abi::kPostsynapticUpdateEntry, KernelPhase::PostsynapticUpdate);
        postsynaptic.add("PostsynapticUpdate", std::move(post));
        plan.kernels.push_back(postsynaptic.done());
    }
    auto neu = builder(plan, abi::kNeuronUpdateEntry, KernelPhase::NeuronUpdate);
    neu.add("NeuronUpdate", std::move(nUpd));
    plan.kernels.push_back(neu.done());
    // After the neuron update, which flags the events: apart, as the compaction of a group's
    // flags needs all of them (a SIMT device runs a kernel's groups at once).
    if (!detect.empty()) {
        auto events = builder(plan, abi::kEventDetectionEntry, KernelPhase::EventDetection);
        events.add("EventDetection", std::move(detect));
        plan.kernels.push_back(events.done());
    }
    for (auto& k : custom)
        plan.kernels.push_back(std::move(k));
    for (auto& k : connectivityKernels(plan, m))
        plan.kernels.push_back(std::move(k));
    for (const auto& sg : m.synapseGroups()) {
        if (!sg->blockSparse() || sg->blockSparse()->prunedBy.empty()) continue;
        auto prune = builder(plan, abi::kBlockPrunePrefix + sg->name(), KernelPhase::BlockPrune);
        prune.kernel.updateGroup = sg->name();
        std::vector<LoweredGroup> groups;
        groups.push_back(lowerBlockPrune(m, *sg));
        prune.add("BlockPrune" + sg->name(), std::move(groups));
        plan.kernels.push_back(prune.done());
    }
    notifyPlanObserver(plan);
    return plan;
}

std::vector<size_t> stepKernels(const Plan& plan) {
    std::vector<size_t> dynamics, preEvents, pre, postEvents, post, neuron, detection;
    for (size_t k = 0; k < plan.kernels.size(); k++) {
        switch (plan.kernels[k].phase) {
        case KernelPhase::SynapseDynamics:
            dynamics.push_back(k);
            break;
        case KernelPhase::PresynapticEventUpdate:
            preEvents.push_back(k);
            break;
        case KernelPhase::PresynapticUpdate:
            pre.push_back(k);
            break;
        case KernelPhase::PostsynapticEventUpdate:
            postEvents.push_back(k);
            break;
        case KernelPhase::PostsynapticUpdate:
            post.push_back(k);
            break;
        case KernelPhase::NeuronUpdate:
            neuron.push_back(k);
            break;
        case KernelPhase::EventDetection:
            detection.push_back(k);
            break;
        case KernelPhase::Initialise:
        case KernelPhase::CustomUpdate:
        case KernelPhase::BlockPrune:
        case KernelPhase::ConnectivityUpdate:
            break;
        }
    }
    for (const auto* phase : {&preEvents, &pre, &postEvents, &post, &neuron, &detection})
        dynamics.insert(dynamics.end(), phase->begin(), phase->end());
    return dynamics;
}

std::vector<size_t> initKernels(const Plan& plan) {
    std::vector<size_t> kernels;
    for (size_t k = 0; k < plan.kernels.size(); k++)
        if (plan.kernels[k].phase == KernelPhase::Initialise) kernels.push_back(k);
    return kernels;
}

bool stepsAreBatchLocal(const Plan& plan) {
    if (plan.batchSize < 2) return false;
    std::set<std::string> shared;
    for (const ArrayDecl& a : plan.arrays)
        if (a.egp) shared.insert(a.name);
    for (size_t k : stepKernels(plan)) {
        for (const std::string& written : plan.kernels.at(k).writes)
            if (shared.count(written)) return false;
        for (const auto& g : plan.kernels.at(k).groups)
            if (const auto* p = std::get_if<PropagationBody>(&g.body);
                p && p->matrix.blockSize != 0)
                return false;
    }
    return true;
}

} // namespace spikeforge::codegen
