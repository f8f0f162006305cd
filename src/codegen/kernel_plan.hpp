#pragma once
// Typed kernel bodies: what one merged group does in one kernel, independent of the backend.
// Code fragments are a neutral C subset (compiles as C, C++, CUDA and OpenCL C); loops over
// batch elements, neurons, spikes, synapses and tiles are structure (fields below), never text,
// so every backend prints its own loops. What a backend spells its own way is a hook (Hook):
// fragments name it, each backend's prelude defines it.
//
// Names the printer provides to the fragments of every kind: `a` (const SFStepArgs*), `batch`
// (the batch element), `sf_t` (a->t in the scalar type, update kernels), `seed` (init kernels);
// each kind lists its own below.
#include "spikeforge/types.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace spikeforge::codegen {

// Backend hooks, named once here (docs/internals.md lists their meaning).
enum class Hook {
    AddToPost,      // SF_ADD_TO_POST(x): add x to the input of this synapse's target `id_post`
    AddToPostDelay, // SF_ADD_TO_POST_DELAY(x, d): the same, d steps later (dendritic delay)
    AddToPre,       // SF_ADD_TO_PRE(x): add x to the input of this synapse's source `id_pre`
    AddSynapse,     // SF_ADD_SYNAPSE(j): append target j to the row being built (defined by
                    // the layout around its row code, layouts/sparse.cpp: not a backend's)
    ReportError,    // SF_REPORT_ERROR(word, bit): set an abi::ErrorBit in an error word (atomic)
    AtomicAddU32,   // SF_ATOMIC_ADD_U32(p, v): atomically add v to *p (uint32_t), the old value
    TimeMin,        // SF_TIME_MIN: spike time of a neuron that never spiked
    LineResync,     // `#line SF_RESYNC`: point diagnostics back at the generated file
    RngState,       // sf_rng: a random stream's state type (rand_* functions draw from sfRng)
    RngInit,        // sf_rng_init(&state, seed, stream, element, batch, step)
    Global,         // SF_GLOBAL: address space of device arrays, in every pointer a fragment
                    // declares (`SF_GLOBAL float* p`; empty on the CPU, `__global` in OpenCL C)
    Prefetch,       // SF_PREFETCH(p): a hint to fetch address p into cache (SynapseLoop::prefetch)
    FloatBits,      // SF_FLOAT_BITS(x): the bits of float x as a uint32_t (for x >= 0 they order
                    // as the values do: block pruning selects tiles by them with a radix select)
};
inline constexpr Hook kHooks[] = {
    Hook::AddToPost,    Hook::AddToPostDelay, Hook::AddToPre,   Hook::AddSynapse, Hook::ReportError,
    Hook::AtomicAddU32, Hook::TimeMin,        Hook::LineResync, Hook::RngState,   Hook::RngInit,
    Hook::Global,       Hook::Prefetch,       Hook::FloatBits};
const char* hookName(Hook h);
// What Hook::TimeMin stands for: the spike time of a neuron that has not spiked (st, prev_st,
// set_pre, …), the lowest finite value of the model's precision, as GeNN's -TIME_MAX.
std::string timeMinLiteral(Precision precision);
// `SF_GLOBAL <elementType>*`: the type of a pointer into a device array, in fragments.
std::string globalPointer(const std::string& elementType);

// One neuron group's update: per (batch, id) the fragments run in order
//   perNeuron; spike = threshold; if (spike) onSpike; store
// then the printer records the spike bits, compacts them into the spike queue slot and copies
// them to the recording buffer. Names provided: sfN (neurons), sfSlot (queue slot), id (the
// neuron, uint32_t, as user code sees it) and sfId (the same as size_t, for array indices: a
// SIMT printer defines it from a 64-bit work-item index, so a compiler that packs work-items
// into vector lanes sees consecutive accesses, which a zero-extended 32-bit id hides) and sfWrite
// (whether this neuron's stores take effect: every store of the fragments is guarded by it). A
// SIMT work-item past the group's end runs the fragments for another neuron of the group (neuron
// 0, or in the CPU form's last word the word before's last neurons) with sfWrite false, so loads
// need no bounds check and a compiler can keep the loop free of branches (PoCL vectorises it);
// the fragments have no side effect besides their guarded stores and idempotent error reports.
struct NeuronUpdateBody {
    std::string numNeurons;     // an expression
    std::string perNeuron;      // statements
    std::string threshold;      // a bool expression
    std::string onSpike, store; // statements
    // Where the spikes go, as the buffer layouts spell it (codegen/layouts/buffers.hpp):
    std::string slot;           // this step's queue slot (uint32_t)
    std::string queueRow;       // the queue row of (batch, sfSlot) (size_t)
    std::string queueCount;     // the spike count of row sfRow (an lvalue, uint32_t)
    std::string queueIds;       // the first spike id of row sfRow (uint32_t*)
    std::string nextQueueCount; // the spike count of (batch, the next step's slot) (an lvalue)
    std::string stepWords;      // batch element `batch`'s spike words this step (uint32_t*,
                                // sfWords = (sfN + 31) / 32 of them, bit k of word w: neuron
                                // 32 w + k)
    std::string recording;      // whether this step is recorded (bool); empty: never
    std::string recordWords;    // batch element `batch`'s words in the recording (uint32_t*)
    bool usesRng = false;       // some snippet draws random numbers
    // The fragments write memory other than through stores guarded by sfWrite (per-neuron
    // arrays): a work-item past the group's end must not run them at all.
    bool unguardedWrites = false;
    // The neuron's code has no loops (its variables are stored unconditionally at the end): a
    // loop over neurons can be vectorised. False where a snippet loops (an event cursor).
    bool loopFree = true;
    // Each neuron's code touches memory no other neuron's code writes (it writes its own elements
    // and no EGP): a loop over neurons may run them in any order or at once. A compiler cannot
    // see this through the group's pointers (they may alias), and checked for aliasing at
    // every word of 32 neurons (COBA: a tenth of the step).
    bool independentNeurons = true;

    std::vector<std::string*> fragments() {
        return {&numNeurons, &perNeuron, &threshold,  &onSpike,  &store,
                &slot,       &queueRow,  &queueCount, &queueIds, &nextQueueCount,
                &stepWords,  &recording, &recordWords};
    }
};

// Iteration over the synapses of one spiking neuron, made by a connectivity descriptor: for
// sfK in [begin, end): perIter (defines the other neuron's index and sfSyn, the synapse index).
struct SynapseLoop {
    std::string setup;          // statements, once per spike
    std::string begin, end;     // expressions
    std::string perIter;        // statements
    std::string target;         // the postsynaptic index of synapse sfK (an expression)
    bool indexIsTarget = false; // sfK is the target itself and [begin, end) = all targets
    std::string bound;          // most iterations for one spike (an expression)
    // The setup generates the spike's row (procedural connectivity): it costs a row's work, so
    // a backend runs it once per spike (one work-item per spike), not once per synapse slot.
    bool setupGeneratesRow = false;
    // The same row as runs of synapses onto consecutive targets (block-sparse tiles), for a
    // backend that walks a run as one contiguous, vectorisable loop; empty `runs` when the
    // layout has no such form. For run sfR in [0, runs): runSetup defines sfRunPost (its first
    // target, uint32_t), sfRunSyn (the element of its first synapse, size_t) and sfRunLen (its
    // synapses, uint32_t, at most runLength); synapse sfC of the run is target sfRunPost + sfC
    // at element sfRunSyn + sfC, and the runs in order, each in order, are the row sfK walks.
    std::string runs = "", runSetup = "";
    unsigned runLength = 0;
    // Statements that fetch the row of source `sfNextPre` (uint32_t) into cache with
    // SF_PREFETCH, or empty. A hint for a backend that walks one spike's row after another on one
    // thread (cpu): printed for a later spike while this one runs, the row's misses overlap this
    // row's work (2x on a 32,768-neuron layer whose rows are in memory); a SIMT backend, whose
    // work-items hide latency by numbers, leaves it out. The layout gives its own arrays and the
    // row's extent; the lowerer adds the per-synapse variables the code reads.
    std::string prefetch = "";
    // Elements from one row of a run's tile to the next (block-sparse: the panel's width), for
    // the matrix form (TileProduct), which walks a tile's rows; an expression valid after setup.
    std::string runRowStride = "";
};

// The matrix form of a block-sparse group's spike propagation (BlockSparseInit::propagation):
// the batch's spikes as a 0/1 matrix X times the block-sparse weights W, y = X W, tile-major.
// Per block-row br: the b bits of its sources in `sourceWords` of every batch element; if any is
// set, the row loop's setup with id_pre = br x b (its first source) and for every run sfR (a
// tile, loop.runs / loop.runSetup), for every batch element with bits (perBatch) and every set
// bit r (id_pre = br x b + r, below sfNpre): the run's synapses at elements sfRunSyn + r x
// loop.runRowStride + sfC, perSynapse for each. The tile is read once for the whole batch, and
// each target still sums its inputs by ascending source. A SIMT backend gathers instead: a
// work-item per (batch element, target) walks `columns` (the target's synapses, tile by tile
// down its block-column, rows in order) and runs perSynapse where the source's bit is set.
// blockSize 0: no matrix form (event-driven).
struct TileProduct {
    unsigned blockSize = 0;
    std::string blockRows;   // block-rows of the source (an expression)
    std::string sourceWords; // the source's spike words of batch element `batch` this step
                             // propagates (uint32_t*): bit k of word w is source 32 w + k
    SynapseLoop columns;     // a target's synapses (the layout's columnLoop)
};

// Spike propagation (presynaptic: spikes of the source, row loop) or postsynaptic learning
// (spikes of the target, column loop). Per batch: perBatch; per spike `spikeId` = the neuron;
// per synapse: loop.perIter; perSynapse.
struct PropagationBody {
    bool presynaptic = true;
    std::string setup;      // statements once per call (sfNpre, sfNpost, sf_t)
    std::string slot;       // queue slot of the spikes read (uint32_t)
    std::string spikeCount; // the spikes of (batch, sfSlot) in the queue (uint32_t)
    std::string spikeIds;   // their ids (uint32_t*); empty: every neuron 0 .. spikeCount - 1 in
                            // order (synapse dynamics: every row, every step)
    std::string spikeId;    // name of the spiking neuron's index
    std::string perBatch;   // statements
    // SF_ADD_TO_POST(x) adds x to postInput (an lvalue of id_post, this batch element's: an
    // element of an array in which consecutive targets are consecutive elements, so a backend may
    // address a run of targets from its first one's element);
    // SF_ADD_TO_PRE(x) adds x to preOutput (an lvalue of id_pre; empty unless addsToPre).
    std::string postInput, preOutput;
    // SF_ADD_TO_POST_DELAY(x, d) (dendritic delay; empty when unused): with sfD_ = d, report
    // abi::ErrorBit::DendriticDelay into delayError when sfD_ >= delayLimit, else add x to
    // delayedInput (an lvalue of sfD_ and id_post, for this batch element).
    std::string delayedInput, delayLimit, delayError;
    SynapseLoop loop;
    std::string perSynapse; // statements
    // Number of targets when each target's updates are independent of the others (then a
    // backend may partition the targets among threads); empty when not.
    std::string numTargets;
    // What the per-synapse code assigns besides synapse variables and the SF_ADD_TO_POST hooks,
    // for backends that run spikes or synapses in parallel: variables of the spiking neuron's
    // side (one spike's own), of the other side, or anything else (EGPs: shared by all).
    bool writesSpikeSide = false, writesOtherSide = false, writesShared = false;
    // The per-synapse code calls SF_ADD_TO_PRE (addToPre): it adds to preOutput.
    bool addsToPre = false;
    // writesSpikeSide for a reason other than addToPre (a variable of the spiking side).
    bool writesSpikeVars = false;
    // How a GPU backend shares out a presynaptic update (SynapseGroup::setSpanType): Auto lets
    // the backend's rule choose; threadsPerSpike 0 lets it choose the count.
    enum class Span { Auto, Postsynaptic, Presynaptic } span = Span::Auto;
    unsigned threadsPerSpike = 0;
    TileProduct matrix; // presynaptic only; blockSize 0 unless the group uses the matrix form

    std::vector<std::string*> fragments() {
        auto& c = matrix.columns;
        return {&setup,
                &slot,
                &spikeCount,
                &spikeIds,
                &spikeId,
                &perBatch,
                &postInput,
                &preOutput,
                &delayedInput,
                &delayLimit,
                &delayError,
                &loop.setup,
                &loop.begin,
                &loop.end,
                &loop.perIter,
                &loop.target,
                &loop.bound,
                &loop.runs,
                &loop.runSetup,
                &loop.prefetch,
                &loop.runRowStride,
                &perSynapse,
                &numTargets,
                &matrix.blockRows,
                &matrix.sourceWords,
                &c.setup,
                &c.begin,
                &c.end,
                &c.perIter,
                &c.target,
                &c.bound};
    }
};

enum class CustomUpdateKind {
    Elementwise,     // every element independent
    BatchReduction,  // some variable reduced over the batch (per element)
    NeuronReduction, // some variable reduced over the elements (per batch element)
};
enum class ReduceOp { Sum, Max };

// A reduction: the local `local` of every element (and batch element) folded with `op`, the
// result written to array[index] (index in terms of `id` for batch reductions, `batch` for
// neuron reductions).
struct Reduction {
    std::string name, local, ctype;
    ReduceOp op = ReduceOp::Sum;
    std::string array, index;
};

// A transposed copy of a WU-shaped value of an update over a transposable layout (Dense): the
// local `value` of perElement, stored to `target`, the mirror element of synapse (id_pre,
// id_post) in the transposed group's variable (an lvalue of batch, id_pre and id_post, from the
// layout: Connectivity::transposedElementOf). numPre x numPost is the matrix's extent.
struct Transpose {
    std::string value, ctype, target;
    std::string numPre, numPost; // expressions
};

// Custom update over numElements elements x batch: prologue; per (batch, id): decode,
// perElement, the transposed stores, the reductions' folds; epilogue. Names provided: sfN
// (elements), id.
struct CustomUpdateBody {
    CustomUpdateKind kind = CustomUpdateKind::Elementwise;
    std::string numElements;
    unsigned batch = 1;             // batch elements iterated (1: not batched)
    std::string prologue, epilogue; // statements once per call
    std::string decode;             // WU-shaped: id_pre/id_post from id; may `continue`
    std::string perElement;
    std::vector<Reduction> reductions;
    std::vector<Transpose> transposes; // only in element-wise updates
    // With transposes: the element `id` of synapse (id_pre, id_post), an expression (the layout's
    // Connectivity::elementOf), for backends that visit the matrix by tiles.
    std::string elementId;

    std::vector<std::string*> fragments() {
        std::vector<std::string*> f = {&numElements, &prologue, &epilogue, &decode, &perElement};
        for (auto& r : reductions)
            for (std::string* s : {&r.name, &r.local, &r.ctype, &r.array, &r.index})
                f.push_back(s);
        for (auto& t : transposes)
            for (std::string* s : {&t.value, &t.ctype, &t.target, &t.numPre, &t.numPost})
                f.push_back(s);
        f.push_back(&elementId);
        return f;
    }
};

// Initialisation of one variable: for batch < batch, i < count: skip; body. Names provided:
// arr (the array), n (count), i.
struct VarInitLoop {
    std::string ctype, array, count;
    unsigned batch = 1;
    std::string skip, body; // statements; skip may `continue` (padding of sparse rows)
};

// One step of building a layout's arrays at initialisation (a connectivity layout's build,
// codegen/layouts/): the steps of a group run in order, each finished before the next starts.
// Names provided to `body`: those of InitBody::setup, and sfI (uint64_t), the iteration of a
// ForEach step.
struct BuildStep {
    enum class Kind {
        Serial,        // body, once
        ForEach,       // body for every sfI in [0, count), in parallel, in any order
        InclusiveScan, // array[0 .. count) (uint32_t) replaced by its inclusive prefix sums
        SortSegments,  // for every s in [0, count): array[bounds[s] .. bounds[s + 1]) (uint32_t)
                       // sorted ascending
    } kind = Kind::Serial;
    // The step's size for a backend sizing its launch, from the group's SynapseExtent: 1, pre,
    // post, post + 1 or pre x rowStride; `count` is the same in the body's names.
    enum class Extent { One, Pre, Post, PostPlusOne, RowSlots } extent = Extent::One;
    std::string count;
    std::string body;
    std::string array, bounds; // InclusiveScan, SortSegments: uint32_t* expressions
};

struct InitBody {
    std::string setup; // statements once per call
    std::vector<BuildStep> build;
    std::vector<VarInitLoop> vars;
    // The build reads another group's layout (a Transposed block layout reads the index of the
    // group it mirrors, an earlier one): a backend must finish the earlier groups' initialisation
    // first (the SIMT generator starts a new run of launches here).
    bool readsEarlierGroups = false;

    std::vector<std::string*> fragments() {
        std::vector<std::string*> f = {&setup};
        for (auto& s : build)
            for (std::string* x : {&s.count, &s.body, &s.array, &s.bounds})
                f.push_back(x);
        for (auto& v : vars)
            for (std::string* s : {&v.ctype, &v.array, &v.count, &v.skip, &v.body})
                f.push_back(s);
        return f;
    }
};

using KernelBody = std::variant<NeuronUpdateBody, PropagationBody, CustomUpdateBody, InitBody>;

// Every code fragment of a body (for merging: keys and placeholder resolution).
std::vector<std::string*> fragmentsOf(KernelBody& body);
// What a body's structure adds to its merge key beyond the fragments (flags, counts).
std::string structureOf(const KernelBody& body);

} // namespace spikeforge::codegen
