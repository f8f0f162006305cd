// Neuron update as SIMT kernels: one work-item per (neuron, batch element) runs the CPU's per
// neuron fragments (cpu_print_neuron.cpp), then its work-group emits its spikes together: counted
// in local memory, one global atomic add reserving their places in the queue slot, the spike bits
// of its 32-neuron words built in local memory and stored (and recorded) as whole words.
#include "backends/simt/simt_print.hpp"

#include "spikeforge/errors.hpp"

namespace spikeforge::simt {

namespace {

// Local memory of the update stage: the work-group's spike words, then its spike count and the
// first queue position reserved for them.
std::string localLayout() {
    return "SF_LOCAL uint32_t* sfBitsL = sfLocal;\n"
           "SF_LOCAL uint32_t* sfCntL = sfLocal + SF_WG / 32u;\n";
}

// Names every stage of the body declares (cpu_print_neuron.cpp declares the same).
std::string sizes(const codegen::NeuronUpdateBody& b) {
    return "const uint32_t sfN = " + b.numNeurons +
           ";\nconst uint32_t sfWords = (sfN + 31u) / 32u; (void)sfWords;\n"
           "const uint32_t sfSlot = (uint32_t)(a->step % " +
           b.numDelaySlots + ");\nconst scalar sf_t = (scalar)a->t; (void)sf_t;\n";
}

// The queue row of (batch, sfSlot): its count and first spike.
std::string queueRow(const codegen::NeuronUpdateBody& b) {
    return "const size_t sfRow = (size_t)batch * " + b.numDelaySlots + " + sfSlot;\n";
}

// Stage 0: the spike count of this step's slot starts at zero for every batch element (the
// update stage adds to it).
Stage resetStage(const GroupContext& c, const codegen::NeuronUpdateBody& b) {
    Stage s;
    s.body = sizes(b) + queueRow(b) + "if (sfLid == 0u) " + b.spkCnt + "[sfRow] = 0u;\n";
    s.items.assign(c.group.elements.size(), 1);
    s.dim1 = c.plan.batchSize;
    return s;
}

// The fragments of one neuron, in the CPU's order, leaving the spike in sfSpike. A work-item past
// the group's end runs them for neuron 0 with its stores off (sfWrite, kernel_plan.hpp): no
// branch around the body, so PoCL can run the work-group's loop in vector lanes.
std::string perNeuron(const codegen::NeuronUpdateBody& b) {
    return "{\n"
           "const bool sfWrite = sfLid < sfN;\n"
           "const size_t sfId = sfWrite ? (size_t)sfLid : 0u;\n"
           "const uint32_t id = (uint32_t)sfId;\n" +
           b.perNeuron + "sfSpike = sfWrite && " + b.threshold + ";\nif (sfSpike) {\n" + b.onSpike +
           "}\n" + b.store + "}\n";
}

// Spike word sfW of this batch element (`word`) into spkBits and, inside the recording window,
// into the recording.
std::string storeWord(const codegen::NeuronUpdateBody& b, const std::string& word) {
    std::string s = b.spkBits + "[(size_t)batch * sfWords + sfW] = " + word + ";\n";
    if (!b.recordSpk.empty())
        s += "if (" + b.recordSpk +
             " && a->step >= a->recordStart && a->step - a->recordStart < a->recordSteps)\n" +
             b.recordSpk +
             "[((size_t)(a->step - a->recordStart) * SF_BATCH + batch) * sfWords + sfW] = " + word +
             ";\n";
    return s;
}

// Spikes of the work-group into the queue, and its words into spkBits and the recording.
// sfLid - sfLocalId is a multiple of SF_WG (ranges are padded to whole work-groups), so the
// work-group covers whole words: its word k is the group's word (sfLid - sfLocalId) / 32 + k.
std::string emit(const codegen::NeuronUpdateBody& b) {
    std::string s = "SF_BARRIER();\n"
                    "uint32_t sfPos = 0;\n"
                    "if (sfSpike) {\n"
                    "sf_local_atomic_or_u32(&sfBitsL[sfLocalId / 32u], 1u << (sfLocalId & 31u));\n"
                    "sfPos = sf_local_atomic_add_u32(&sfCntL[0], 1u);\n}\n"
                    "SF_BARRIER();\n"
                    "if (sfLocalId == 0u && sfCntL[0] > 0u)\n"
                    "sfCntL[1] = sf_atomic_add_u32(&" +
                    b.spkCnt +
                    "[sfRow], sfCntL[0]);\n"
                    "SF_BARRIER();\n"
                    "if (sfSpike) " +
                    b.spk + "[sfRow * sfN + sfCntL[1] + sfPos] = (uint32_t)sfLid;\n";
    s += "const uint64_t sfW = (sfLid - sfLocalId) / 32u + sfLocalId;\n"
         "if (sfLocalId < SF_WG / 32u && sfW < sfWords) {\n" +
         storeWord(b, "sfBitsL[sfLocalId]");
    // A closing barrier: PoCL (the version tested) ran the code after a function's last barrier,
    // when the function is called under a branch (each work-group's range, simt_generator.cpp),
    // with the conditions of other work-items (seen: words past the group's end written).
    return s + "}\nSF_BARRIER();\n";
}

// Stage 1: the update of every (neuron, batch element), then the emission of its spikes.
Stage updateStage(const GroupContext& c, const codegen::NeuronUpdateBody& b) {
    Stage s;
    s.body = sizes(b) + queueRow(b) + localLayout() + "bool sfSpike = false;\n" + perNeuron(b) +
             "if (sfLocalId < SF_WG / 32u) sfBitsL[sfLocalId] = 0u;\n"
             "if (sfLocalId == 0u) sfCntL[0] = 0u;\n" +
             emit(b);
    s.items = c.group.elements;
    s.dim1 = c.plan.batchSize;
    s.localWords = c.workGroupSize / 32 + 2;
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
                    b.spkCnt +
                    "[sfRow], sf_popcount(sfBallot));\n"
                    "sfBase = sf_subgroup_broadcast_u32(sfBase, 0u);\n"
                    "if (sfSpike) " +
                    b.spk +
                    "[sfRow * sfN + sfBase + sf_popcount(sfBallot & ((1u << sfLane) - 1u))] = "
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
    return {resetStage(c, b), c.subGroupSize == 32 ? ballotUpdateStage(c, b) : updateStage(c, b)};
}

} // namespace spikeforge::simt
