#pragma once
// The per-neuron-group and per-synapse-group buffers as layouts, one class each (one file each in
// this folder): the spike queue with its delay slots, the spike recording buffer and the
// dendritic-delay ring. Each owns its arrays and spells its own index expressions; the lowering
// puts those expressions into the plan's bodies, so no backend spells them.
#include "codegen/env.hpp"
#include "spikeforge/model.hpp"

#include <map>
#include <string>
#include <vector>

namespace spikeforge::codegen {

// One device array a buffer owns: "<group>.<var>" of `ctype`, `dims` multiplied; `state`: trial
// state (ArrayDecl::state).
struct BufferArray {
    std::string var, ctype;
    std::vector<size_t> dims;
    bool state = true;
    bool batched = true; // dims[0] is the batch (ArrayDecl::batched)
};

// The slot of a queue of `slots` slots (an expression) that step a->step reads for what was
// written `delay` (an expression) steps late: (t - 1 - delay) mod slots.
std::string delayedSlot(const std::string& slots, const std::string& delay);

// Where a stream of events lives: the spikes of a neuron group (arrays "<ng>.spkCnt", "spk",
// "spkBits", "recordSpk"), or the spike-like events of one side of a synapse group
// ("<sg>.preEvCnt", "preEv", "preEvBits", "preRecordEv"; "post..." for the target's), with the
// queue slots of the neurons' group (their delays) and whether the stream is recorded.
struct EventStream {
    std::string owner;
    std::string count, ids, bits, record; // array variable names
    unsigned slots = 0, neurons = 0;
    bool recorded = false;
};
EventStream spikesOf(const NeuronGroup& ng);
EventStream eventsOf(const SynapseGroup& sg, bool pre);

// The spike queue of a neuron group (or any EventStream): numDelaySlots slots per batch element,
// each a count (spkCnt[batch][slot]) and the ids of the spiking neurons (spk[batch][slot][neuron]).
// Step t writes slot t mod slots; a synapse group with axonal delay d reads slot (t - 1 - d) mod
// slots.
class SpikeQueue {
public:
    static std::vector<BufferArray> arrays(const EventStream& s, unsigned batch);
    // The queue as one kernel body sees it: its arrays bound through `env` as fields
    // `<prefix>SpkCnt`, `<prefix>Spk` (used as `use`), `neurons` an expression for the group's
    // size in the body.
    SpikeQueue(Env& env, const EventStream& s, const std::string& prefix, Use use,
               const std::string& neurons);
    SpikeQueue(Env& env, const NeuronGroup& ng, const std::string& prefix, Use use,
               const std::string& neurons)
        : SpikeQueue(env, spikesOf(ng), prefix, use, neurons) {}
    std::string writeSlot() const; // the slot step a->step writes
    // The slot propagation reads this step for spikes `axonalDelay` (an expression) steps late.
    std::string readSlot(const std::string& axonalDelay) const;
    std::string nextSlot() const; // the slot step a->step + 1 writes
    // Queue row of batch element `batch` and slot `slot` (expressions), a size_t expression.
    std::string row(const std::string& slot) const;
    std::string count(const std::string& row) const; // spike count of a row (an lvalue)
    std::string ids(const std::string& row) const;   // pointer to a row's first spike id

private:
    std::string m_slots, m_count, m_ids, m_neurons;
};

// Bit-packed spikes of a neuron group: one 32-neuron word per bit of a step, [batch][word]
// (spkBits, the step's words) and, when recorded, [step][batch][word] for the steps of the
// recording window (recordSpk, sized by Simulation::setRecordingWindow).
class SpikeRecording {
public:
    static std::vector<BufferArray> arrays(const EventStream& s, unsigned batch);
    SpikeRecording(Env& env, const EventStream& s);
    SpikeRecording(Env& env, const NeuronGroup& ng) : SpikeRecording(env, spikesOf(ng)) {}
    // The words of batch element `batch` this step (pointer), sfWords of them.
    std::string stepWords() const;
    // Whether this step is recorded (a bool expression; "" when the group records nothing),
    // and the pointer to batch element `batch`'s words in the recording. Backends store each of
    // the sfWords words whole (never OR bits in): the runtime relies on it to reuse a chunk
    // without clearing it (runtime/recording.cpp).
    std::string recording() const;
    std::string recordWords() const;

private:
    std::string m_bits, m_record;
};

// The dendritic-delay ring of a synapse group: maxDendriticDelaySteps slots of every target per
// batch element, [batch][slot][target]; input `d` steps late goes to slot (t + d) mod slots and
// the target's update at step t takes and clears slot t mod slots.
class DendriticRing {
public:
    static std::vector<BufferArray> arrays(const SynapseGroup& sg, unsigned batch,
                                           const std::string& scalar);
    DendriticRing(Env& env, const SynapseGroup& sg, const std::string& prefix, Use use,
                  const std::string& scalar);
    // Statements declaring what writerElement reads, for batch element `batch` (propagation;
    // sfNpost in scope).
    std::string writerSetup() const;
    // The element `sfD_` steps late of target id_post (an lvalue), and the number sfD_ must be
    // below.
    std::string writerElement() const;
    std::string writerLimit() const;
    // The slot of this step for target sfId of batch element `batch` (an lvalue; sfN targets).
    std::string readerElement() const;

private:
    std::string m_array, m_slots, m_scalar;
};

// What one history keeps (VariableHistory): the delayed names of `owner` with their element
// types, and the slots and neurons of the neuron group they belong to.
struct HistoryOf {
    std::string owner;
    std::map<std::string, std::string> types; // delayed name → element type
    unsigned slots = 0, neurons = 0;
};
// A neuron group's (NeuronGroup::delayedNames: variables, "st" and "prev_st", scalar), and a
// synapse group's weight-update presynaptic (postsynaptic) variables (SynapseGroup::delayedNames)
// with its source's (target's) queue slots.
HistoryOf historyOf(const NeuronGroup& ng, Precision precision);
HistoryOf wuHistoryOf(const SynapseGroup& sg, bool pre, Precision precision);

// The past values of delayed names: for each, an array "<owner>.delayed.<name>"
// [batch][slot][neuron] with the neuron group's queue slots. The neuron update of step t stores
// the values it leaves at slot t mod slots (where its spikes go); synapse code delayed by d
// steps reads slot (t - 1 - d) mod slots, the slot of the spikes it delivers this step.
// Initialisation fills every slot with the initial values.
class VariableHistory {
public:
    static std::vector<BufferArray> arrays(const HistoryOf& h, unsigned batch);
    // The array's variable part ("delayed.V"): no variable name holds a dot, so it cannot clash.
    static std::string arrayVar(const std::string& name);
    // The same for the group's stored array `var` ("V", "st", "prevSt"): where its history
    // would be, if it has one.
    static std::string arrayVarOfStored(const std::string& var);
    // The history as one body sees it: fields `<prefix><name>` and `slotsField` (the queue's,
    // SpikeQueue, named alike; bound only where something is kept, so a body without delayed
    // names gains no field), `neurons` the neuron count in the body.
    VariableHistory(Env& env, HistoryOf h, const std::string& prefix, const std::string& slotsField,
                    Use use, const std::string& neurons);
    const HistoryOf& keeps() const { return m_h; }
    // The slot delayed code reads this step for values `delay` (an expression) steps late.
    std::string readSlot(const std::string& delay) const;
    // The element of `name` for batch element `batch`, slot `slot` and neuron `id` (an lvalue).
    std::string element(const std::string& name, const std::string& slot,
                        const std::string& id) const;
    // The statements an initialisation loop over (batch, i) of n neurons runs to fill every slot
    // of `name` with `initial` (an expression); the loop's `arr` is `array(name)`.
    std::string fillSlots(const std::string& initial) const;
    std::string array(const std::string& name) const;

private:
    Env& m_env;
    HistoryOf m_h;
    std::string m_prefix, m_slots, m_neurons;
    Use m_use;
};

} // namespace spikeforge::codegen
