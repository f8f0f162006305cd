// Neuron update as SIMT kernels, in three forms. GPU (OpenCL): one work-item per (neuron, batch
// element) runs the CPU's per neuron fragments (cpu_print_neuron.cpp), then its work-group emits
// its spikes together: counted in local memory, one global atomic add reserving their places in
// the queue slot, the spike bits of its 32-neuron words built in local memory and stored (and
// recorded) as whole words. Warps (CUDA): a warp's ballot is its word. CPU device: one work-item
// per 32-neuron word updates its neurons in a loop and emits the word, in one launch.
#include "backends/simt/simt_print.hpp"

#include "spikeforge/errors.hpp"

namespace spikeforge::simt {

namespace {

// Names every stage of the body declares (cpu_print_neuron.cpp declares the same).
std::string sizes(const codegen::NeuronUpdateBody& b) {
    return "const uint32_t sfN = " + b.numNeurons +
           ";\nconst uint32_t sfWords = (sfN + 31u) / 32u; (void)sfWords;\n"
           "const uint32_t sfSlot = " +
           b.slot + ";\nconst scalar sf_t = (scalar)a->t; (void)sf_t;\n";
}

// The queue row of (batch, sfSlot): its count and first spike.
std::string queueRow(const codegen::NeuronUpdateBody& b) {
    return "const size_t sfRow = " + b.queueRow + ";\n";
}

// Stage 0 of the GPU and warp forms: the spike count of this step's slot starts at zero for
// every batch element (the update stage adds to it).
Stage resetStage(const GroupContext& c, const codegen::NeuronUpdateBody& b) {
    Stage s;
    s.body = sizes(b) + queueRow(b) + "if (sfLid == 0u) " + b.queueCount + " = 0u;\n";
    s.items.assign(c.group.elements.size(), 1);
    s.dim1 = c.plan.batchSize;
    return s;
}

// Local memory of the GPU form's update stage: the work-group's spike words, then its spike
// count and the first queue position reserved for them.
std::string localLayout() {
    return "SF_LOCAL uint32_t* sfBitsL = sfLocal;\n"
           "SF_LOCAL uint32_t* sfCntL = sfLocal + SF_WG / 32u;\n";
}

// The fragments of one neuron in a scope opened before, in the CPU's order, leaving the spike
// in sfSpike; `after` runs in the scope at its end, which this closes.
std::string neuronBody(const codegen::NeuronUpdateBody& b, const std::string& after) {
    return "const uint32_t id = (uint32_t)sfId;\n" + b.perNeuron + "sfSpike = sfWrite && " +
           b.threshold + ";\nif (sfSpike) {\n" + b.onSpike + "}\n" + b.store + after + "}\n";
}

// The fragments of work-item sfLid's neuron. A work-item past the group's end runs them for
// neuron 0 with its stores off (sfWrite, kernel_plan.hpp): no branch around the body, so PoCL can
// run the work-group's loop in vector lanes. Fragments with other writes
// (NeuronUpdateBody::unguardedWrites) run only for the group's neurons.
std::string perNeuron(const codegen::NeuronUpdateBody& b) {
    const std::string scope = b.unguardedWrites
                                  ? "if (sfLid < sfN) {\n"
                                    "const bool sfWrite = true;\n"
                                    "const size_t sfId = (size_t)sfLid;\n"
                                  : "{\n"
                                    "const bool sfWrite = sfLid < sfN;\n"
                                    "const size_t sfId = sfWrite ? (size_t)sfLid : 0u;\n";
    return scope + neuronBody(b, "");
}

// Spike word sfW of this batch element (`word`) into spkBits and, inside the recording window,
// into the recording.
std::string storeWord(const codegen::NeuronUpdateBody& b, const std::string& word) {
    std::string s = b.stepWords + "[sfW] = " + word + ";\n";
    if (!b.recording.empty())
        s += "if " + b.recording + "\n" + b.recordWords + "[sfW] = " + word + ";\n";
    return s;
}

// Word sfW (sfWord) of this batch element: stored (and recorded), and its spikes put into the
// queue slot: one global atomic add reserves their places, then they follow in ascending order.
std::string emitWord(const codegen::NeuronUpdateBody& b) {
    return storeWord(b, "sfWord") +
           "if (sfWord != 0u) {\n"
           "uint32_t sfPos = sf_atomic_add_u32(&" +
           b.queueCount + ", sf_popcount(sfWord));\n" + "SF_GLOBAL uint32_t* sfQ = " + b.queueIds +
           ";\n"
           "uint32_t sfRest = sfWord;\n"
           "while (sfRest != 0u) {\n"
           "sfQ[sfPos++] = (uint32_t)sfW * 32u + sf_ctz(sfRest);\n"
           "sfRest &= sfRest - 1u;\n}\n}\n";
}

// Spikes of the work-group into the queue, and its words into spkBits and the recording.
// sfLid - sfLocalId is a multiple of SF_WG (ranges are padded to whole work-groups), so the
// work-group covers whole words: its word k is the group's word (sfLid - sfLocalId) / 32 + k.
std::string emitWorkGroup(const codegen::NeuronUpdateBody& b) {
    std::string s = "SF_BARRIER();\n"
                    "uint32_t sfPos = 0;\n"
                    "if (sfSpike) {\n"
                    "sf_local_atomic_or_u32(&sfBitsL[sfLocalId / 32u], 1u << (sfLocalId & 31u));\n"
                    "sfPos = sf_local_atomic_add_u32(&sfCntL[0], 1u);\n}\n"
                    "SF_BARRIER();\n"
                    "if (sfLocalId == 0u && sfCntL[0] > 0u)\n"
                    "sfCntL[1] = sf_atomic_add_u32(&" +
                    b.queueCount +
                    ", sfCntL[0]);\n"
                    "SF_BARRIER();\n"
                    "if (sfSpike) " +
                    b.queueIds + "[sfCntL[1] + sfPos] = (uint32_t)sfLid;\n";
    s += "const uint64_t sfW = (sfLid - sfLocalId) / 32u + sfLocalId;\n"
         "if (sfLocalId < SF_WG / 32u && sfW < sfWords) {\n" +
         storeWord(b, "sfBitsL[sfLocalId]");
    // A closing barrier: PoCL (the version tested) ran the code after a function's last barrier,
    // when the function is called under a branch (each work-group's range, simt_generator.cpp),
    // with the conditions of other work-items (seen: words past the group's end written).
    return s + "}\nSF_BARRIER();\n";
}

// GPU form, stage 1 (after resetStage): the update of every (neuron, batch element), then the
// work-group's emission of its spikes.
Stage updateStage(const GroupContext& c, const codegen::NeuronUpdateBody& b) {
    Stage s;
    s.body = sizes(b) + queueRow(b) + localLayout() + "bool sfSpike = false;\n" + perNeuron(b) +
             "if (sfLocalId < SF_WG / 32u) sfBitsL[sfLocalId] = 0u;\n"
             "if (sfLocalId == 0u) sfCntL[0] = 0u;\n" +
             emitWorkGroup(b);
    s.items = c.group.elements;
    s.dim1 = c.plan.batchSize;
    s.localWords = c.workGroupSize / 32 + 2;
    return s;
}

// Work-items of a stage with one per 32-neuron word, per group.
std::vector<size_t> wordItems(const GroupContext& c) {
    std::vector<size_t> items;
    for (size_t n : c.group.elements)
        items.push_back((n + 31) / 32);
    return items;
}

// Whether every group of the table has at least a word of neurons.
bool noGroupBelowAWord(const GroupContext& c) {
    for (size_t n : c.group.elements)
        if (n < 32) return false;
    return true;
}

// The scope of neuron sfK of word sfW: sfId, the neuron (size_t), and sfWrite, whether its
// stores take effect; as in perNeuron there is no branch around the body, and the last word of a
// group of at least 32 neurons is shifted back to end at the group's last neuron (consecutive
// neurons, stores off for those of the word before); else a neuron past the end runs neuron 0's
// fragments, stores off.
std::string wordNeuronScope(const GroupContext& c, const codegen::NeuronUpdateBody& b) {
    if (b.unguardedWrites)
        return "if (sfW * 32u + sfK < sfN) {\n"
               "const bool sfWrite = true;\n"
               "const size_t sfId = (size_t)(sfW * 32u + sfK);\n";
    if (noGroupBelowAWord(c))
        return "{\n"
               "const size_t sfId = (size_t)(sfBase + sfK);\n"
               "const bool sfWrite = sfId >= sfW * 32u;\n";
    return "{\n"
           "const bool sfWrite = sfW * 32u + sfK < sfN;\n"
           "const size_t sfId = sfWrite ? (size_t)(sfW * 32u + sfK) : 0u;\n";
}

// The only stage on a CPU device: a work-item per 32-neuron word and batch element updates the
// word's neurons in a loop (contiguous, so the compiler can run it in vector lanes), builds the
// word as it goes and emits it: one launch, no barrier, no local memory. Its first work-item
// clears the next step's queue slot (NeuronGroup::numDelaySlots): the emission here cannot wait
// for a launch that clears this step's.
Stage wordUpdateStage(const GroupContext& c, const codegen::NeuronUpdateBody& b) {
    Stage s;
    s.body = sizes(b) + queueRow(b) +
             "const uint64_t sfW = sfLid;\n"
             "if (sfW < sfWords) {\n"
             "const uint64_t sfBase = sfW * 32u + 32u > sfN && sfN >= 32u ? (uint64_t)sfN - 32u "
             ": sfW * 32u;\n"
             "(void)sfBase;\n"
             "uint32_t sfWord = 0u;\n"
             "for (uint32_t sfK = 0; sfK < 32u; sfK++) {\n"
             "bool sfSpike = false;\n" +
             wordNeuronScope(c, b) +
             neuronBody(b, "if (sfSpike) sfWord |= 1u << ((uint32_t)(sfId - sfW * 32u) & 31u);\n") +
             "}\n" + emitWord(b) + "}\n" + "if (sfLid == 0u) " + b.nextQueueCount + " = 0u;\n";
    s.items = wordItems(c);
    s.dim1 = c.plan.batchSize;
    return s;
}

// Stage 1 where sub-groups are 32 wide (CUDA warps): a warp's ballot is its spike word, so each
// warp reserves its spikes' places with one global atomic add, every spiking work-item finds its
// place from the ballot bits below its own, and lane 0 stores (and records) the word. No local
// memory and no barrier.
Stage ballotUpdateStage(const GroupContext& c, const codegen::NeuronUpdateBody& b) {
    std::string s = sizes(b) + queueRow(b) + "bool sfSpike = false;\n" + perNeuron(b) +
                    "const uint32_t sfBallot = sf_subgroup_ballot(sfSpike);\n"
                    "const uint32_t sfLane = sfLocalId & 31u;\n"
                    "uint32_t sfBase = 0;\n"
                    "if (sfLane == 0u && sfBallot != 0u)\n"
                    "sfBase = sf_atomic_add_u32(&" +
                    b.queueCount +
                    ", sf_popcount(sfBallot));\n"
                    "sfBase = sf_subgroup_broadcast_u32(sfBase, 0u);\n"
                    "if (sfSpike) " +
                    b.queueIds +
                    "[sfBase + sf_popcount(sfBallot & ((1u << sfLane) - 1u))] = "
                    "(uint32_t)sfLid;\n"
                    "const uint64_t sfW = sfLid / 32u;\n"
                    "if (sfLane == 0u && sfW < sfWords) {\n" +
                    storeWord(b, "sfBallot");
    Stage st;
    st.body = s + "}\n";
    st.items = c.group.elements;
    st.dim1 = c.plan.batchSize;
    return st;
}

} // namespace

std::vector<Stage> neuronUpdateStages(const GroupContext& c, const codegen::NeuronUpdateBody& b) {
    if (c.workGroupSize % 32 != 0)
        throw InternalError("SIMT neuron update: work-group size " +
                            std::to_string(c.workGroupSize) + " is not a multiple of 32");
    if (c.subGroupSize == 32) return {resetStage(c, b), ballotUpdateStage(c, b)};
    if (c.cpuDevice) return {wordUpdateStage(c, b)};
    return {resetStage(c, b), updateStage(c, b)};
}

} // namespace spikeforge::simt
