#pragma once
// A compiled, initialised model on a backend. All host logic lives here; generated code contains
// kernels only.
#include "spikeforge/model.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace spikeforge {

struct BackendPreferences {
    std::string backend = "cpu";
    int threads = 0;        // 0 = all cores
    std::string cacheDir;   // empty = $SPIKEFORGE_CACHE, $XDG_CACHE_HOME/spikeforge or ~/.cache/…
    std::string compiler;   // one program (path or name), no arguments; empty = $CXX or c++
    bool debugCode = false; // -O0 -g instead of -O3
    // Let the compilers reorder and approximate floating-point arithmetic as GeNN's
    // optimize_code and Brian2's default -ffast-math do (cpu: -ffast-math; cuda:
    // --use_fast_math; opencl: -cl-unsafe-math-optimizations): x / c becomes x * (1 / c),
    // a * b + c may be fused, sums reassociated. NaN and Inf keep their meaning (isnan, isinf
    // and the NaN checks of training still work). Results then differ in the last bits from an
    // exact build and between backends; off by default (docs/backends.md, "Fast math").
    bool fastMath = false;
    // How hard the cpu backend's compiler optimises the generated code. Release: -O3, the flags
    // of a run that is timed. Quick: -O1, for code that runs briefly, such as a test suite that
    // builds hundreds of small models; it computes the same numbers (neither contracts or
    // reassociates, and a test checks bit identity) in about half the compile time. Auto:
    // Quick where the environment has SPIKEFORGE_QUICK_BUILD=1 (the test suite sets it),
    // Release otherwise. debugCode wins over both. The cuda backend's Quick adds NVRTC 13's
    // --Ofast-compile=mid (a third of the compile time; the same arithmetic). The opencl backend
    // builds as it always does: PoCL's unoptimised kernels run far slower (docs/backends.md,
    // "Quick builds").
    enum class Optimisation { Auto, Release, Quick };
    Optimisation optimisation = Optimisation::Auto;
    double compileTimeout = 600.0; // [s] 0 = no limit
    // The GPU backends' device (opencl; cuda later; the cpu backend refuses one): empty = the
    // first GPU or accelerator, else the first device; "P:D" = device D of platform P as
    // `spikeforge info` lists them; any other text = the first device whose "<platform name>
    // <device name>" contains it, ignoring case. A selector matching nothing is a BackendError
    // listing the devices (docs/backends.md).
    std::string device;
    // Device-side errors (an index out of range in a snippet, a dendritic delay beyond its
    // maximum, …) are latched on the device and read at sync points: pull, pullConnectivity,
    // currentSpikes, the recording flush, the end of run(), reset(), checkErrors() — and every
    // errorCheckInterval steps [steps] (0 = only at sync points). step() alone copies nothing
    // back. The error names the group and the steps it happened in (docs/errors.md).
    uint64_t errorCheckInterval = 1000;
    // Keep a device copy of every array of trial state as initialised (at build and at each
    // reset()), so that resetState() can restore it without re-running initialisers. Costs one
    // more copy of the neuron-side state in device memory (docs/memory.md).
    bool keepInitialState = false;
    // The cuda backend only: steps captured into one CUDA graph and replayed with a single
    // launch (0 = off: one launch per kernel and step) [steps], with the custom updates and
    // state copies of a Schedule between them; meant to cut the per-launch cost that dominates
    // small models. A longer stretch is split into graphs of this many steps. At most
    // kMaxCudaGraphSteps; a larger value, or a value other than 0 for another backend, is a
    // ModelError (docs/gpu.md).
    uint32_t cudaGraphSteps = 0;
    // The opencl backend only: which form of the SIMT kernels it builds. Auto: by the device's
    // type (a CPU device such as PoCL runs a work-group as a loop on one core, so it gets a
    // 32-neuron word per work-item in the neuron update and serial spike propagation with plain
    // additions; other devices get the GPU forms, docs/internals.md). Gpu or Cpu force one form,
    // e.g. to run the GPU forms on PoCL (the test suite does). Another value than Auto for
    // another backend is a ModelError.
    enum class KernelForm { Auto, Gpu, Cpu };
    KernelForm openclKernels = KernelForm::Auto;
    // The cpu backend only: how a stretch of steps of a batched model is ordered. ByStep: every
    // batch element's step k, then step k+1 (threads share each step's work). ByBatch: each
    // thread takes whole batch elements through the whole stretch, which keeps an element's
    // state in its core's cache (3-4x faster for EventProp training); allowed when no step code
    // writes an extra global parameter. Auto: ByBatch when allowed and the batch has at least
    // as many elements as threads. Results are identical bit for bit. Another value than Auto
    // for another backend is a ModelError (docs/backends.md).
    enum class StepOrder { Auto, ByStep, ByBatch };
    StepOrder cpuStepOrder = StepOrder::Auto;
    // Per-kernel time counters (GeNN's timing_enabled), read with Simulation::kernelTimes():
    // every launch of every kernel is timed on the device (wall time around each entry point on
    // the cpu, profiling markers on OpenCL, CUDA events on cuda). Each kernel then runs as a
    // launch of its own (no batch-major stretches on the cpu, no multi-step kernel on PoCL, no
    // CUDA graphs), so timing costs some speed; off by default (docs/backends.md).
    bool kernelTiming = false;
};

// One kernel's time counter (BackendPreferences::kernelTiming, Simulation::kernelTimes).
struct KernelTime {
    // "initialise", "synapse_dynamics", "presynaptic_update", "postsynaptic_update",
    // "neuron_update", "custom_update.<update group>" or "prune_blocks.<synapse group>"
    std::string name;
    double seconds = 0.0;  // [s] the device's time in its launches
    uint64_t launches = 0; // times it ran
};
inline constexpr uint32_t kMaxCudaGraphSteps = 10000;

struct BuildInfo {
    double generateSeconds = 0.0; // code generation
    double compileSeconds = 0.0;  // system compiler (0 when the cache hit)
    double initSeconds = 0.0;     // allocation + initialisation kernels
    bool cacheHit = false;
    std::string sourcePath; // generated source, for inspection
};

// One synapse: its source and target neurons.
struct SynapsePair {
    uint32_t pre;
    uint32_t post;
    bool operator==(const SynapsePair&) const = default;
};

struct SpikeEvent {
    double time; // [ms]
    uint32_t neuron;
    uint32_t batch;
    bool operator==(const SpikeEvent&) const = default;
};

// Receives the recorded spikes of one group as each recording chunk is decoded: in time, batch,
// neuron order within the call, calls in time order (Simulation::setSpikeSink).
using SpikeSink = std::function<void(const std::string& group, std::span<const SpikeEvent>)>;

// Memory a simulation holds now (docs/memory.md explains each part).
struct MemoryUsage {
    size_t deviceBytes = 0;                // every device array, recording buffers included
    size_t hostMirrorBytes = 0;            // host copies made by pull/push/view/setEGP
    size_t recordingBufferBytes = 0;       // device recording chunk buffers (part of deviceBytes)
    size_t recordingHostBytes = 0;         // decoded spike events kept on the host + decode buffer
    uint64_t recordingChunkSteps = 0;      // steps one recording chunk holds
    unsigned recordingChunksPerBuffer = 0; // 2 where a chunk is decoded while the next records
};

// Host-device copies a simulation has made (Simulation::transfers): calls and bytes.
struct DeviceTransfers {
    uint64_t toDevice = 0;
    uint64_t fromDevice = 0;
    uint64_t bytesToDevice = 0;
    uint64_t bytesFromDevice = 0;
};

// A fixed sequence of simulation work run by Simulation::run(schedule, repeats) as one unit:
// the same results as the equivalent host calls, with no host work between the items except at
// sync points (recording chunk flushes, error-check intervals, and the error read that
// resetState does). On the cuda backend with cudaGraphSteps > 0 the stretches between sync
// points are replayed as CUDA graphs (docs/gpu.md). Built fluently:
//   Schedule().resetState().steps(500).customUpdate("Reduce").customUpdate("Adam")
class Schedule {
public:
    struct Item {
        enum class Kind { Steps, CustomUpdate, ResetState } kind = Kind::Steps;
        uint64_t steps = 0;             // Steps: as many step() calls [steps]
        std::string updateGroup;        // CustomUpdate: as Simulation::customUpdate
        std::vector<std::string> state; // ResetState: as Simulation::resetState (empty: all)
    };

    Schedule& steps(uint64_t n) {
        m_items.push_back({Item::Kind::Steps, n, {}, {}});
        return *this;
    }
    Schedule& customUpdate(const std::string& updateGroup) {
        m_items.push_back({Item::Kind::CustomUpdate, 0, updateGroup, {}});
        return *this;
    }
    Schedule& resetState(const std::vector<std::string>& state = {}) {
        m_items.push_back({Item::Kind::ResetState, 0, {}, state});
        return *this;
    }
    const std::vector<Item>& items() const { return m_items; }

private:
    std::vector<Item> m_items;
};

class Simulation {
public:
    using SpikeSink = spikeforge::SpikeSink;

    // Finalises the model if needed, generates and compiles code, allocates and initialises.
    explicit Simulation(Model& model, const BackendPreferences& prefs = {});
    ~Simulation();
    Simulation(const Simulation&) = delete;
    Simulation& operator=(const Simulation&) = delete;

    // One step. Device-side errors are not read here unless errorCheckInterval steps have passed
    // since the last check (BackendPreferences::errorCheckInterval).
    void step();
    // `steps` steps, then a check of device-side errors: a ModelError names each error, its
    // group and field and the steps it happened in ("in steps 120 to 999").
    void run(uint64_t steps);
    // Runs `schedule` `repeats` times. Every name in it is checked before anything runs (a
    // ModelError names the item's index). Results (state, t, timestep, recorded spikes, random
    // draws) equal those of the host calls it stands for: steps(n) as n step() calls,
    // customUpdate and resetState as the methods. Device-side errors are read as step() reads
    // them, at each resetState item (as resetState does) and once at the end, as run() does.
    void run(const Schedule& schedule, uint64_t repeats = 1);
    // A sync point: reads and clears the device-side errors latched since the last check and
    // throws one ModelError naming them all. pull, pullConnectivity, currentSpikes,
    // pullRecording and reset check the same way after doing their work.
    void checkErrors();
    double time() const; // [ms]
    uint64_t timestep() const;
    // Re-run every initialiser (same seed ⇒ same state) and rewind time to 0. Errors latched
    // before the reset are reported (ModelError) after it is done.
    void reset();
    // Starts a new trial: time goes back to 0 and the chosen trial state goes back to its
    // initial values, copied on the device from the copy BackendPreferences::keepInitialState
    // keeps (ModelError without it). `state` names groups ("Hidden": every state array of the
    // group) or arrays ("Hidden.V"); empty: all trial state. Trial state is neuron, postsynaptic,
    // pre/post and current-source variables, spike queues, spike times and synaptic input;
    // weights, connectivity, custom-update state (the Adam step counter included) and EGPs keep
    // their values, and no initialiser runs. Random draws are keyed by steps since build or
    // reset(), not by time, so every trial draws fresh numbers. Recorded spikes are discarded, as
    // by reset(). Errors latched before are reported after it is done.
    void resetState(const std::vector<std::string>& state = {});

    // Run every custom update of an update group (Model::addCustomUpdate), in the order they
    // were added. Throws ModelError for an update group the model does not have.
    void customUpdate(const std::string& updateGroup);

    // Block pruning and regrowth on a BlockSparse group that names BlockSparseInit::prunedBy
    // (docs/block-sparse.md), on the device, the model unchanged: the `count` tiles of smallest
    // norm in that variable are removed and as many grown at block-columns their block-rows do
    // not hold, drawn afresh each call; a grown tile's per-synapse variables, and the
    // per-synapse state of the custom updates over the group (optimiser moments), start from
    // their initialisers again. Every block-row keeps its tile count. ModelError for a group
    // that cannot be pruned or a count above its tiles.
    void pruneBlocks(const std::string& synapseGroup, uint32_t count);

    // ---- state ----
    // Host views of a variable: group may name a neuron group, synapse group (weight-update
    // vars, pre/post vars, postsynaptic vars; also "inSyn") or current source. Layout is
    // [batch][element] for batched vars; sparse weights are [row * rowStride + k].
    // Device memory is the only copy of the state: the host mirror behind view() is made on the
    // first pull/push/view/setEGP of that array (zero-filled until pulled) and then kept.
    void pull(const std::string& group, const std::string& var);
    void push(const std::string& group, const std::string& var);
    template <typename T> std::span<T> view(const std::string& group, const std::string& var);
    // The C element type view<T> takes for the variable ("float", "double", "int32_t",
    // "uint32_t", "int16_t", "uint16_t", "int8_t", "uint8_t", "int64_t", "uint64_t"; "bool",
    // which view<uint8_t> reads, one byte of 0 or 1 per element), for callers that choose T at run
    // time (the Python module). ModelError for an unknown group or variable, as view.
    std::string elementType(const std::string& group, const std::string& var);
    // How many copies of the variable view() holds, one per batch element laid out first
    // ([batch][element]): the model's batch size for a variable with a batch dimension, 1 for
    // one the batch shares (ReadOnly, ReadOnlyShared…, a batch reduction's target, the
    // variables of an unbatched custom update, connectivity). From the declaration, not the
    // count. ModelError for an unknown group or variable, as view.
    unsigned batchCopies(const std::string& group, const std::string& var);
    // ---- synapses of any matrix type (through the connectivity's host codec) ----
    // Each synapse of a synapse group as (pre, post), in the order its variables hold them (row
    // by row for Dense and Sparse). Reads the connectivity from the device: a sync point, as
    // pullConnectivity.
    std::vector<SynapsePair> synapses(const std::string& synapseGroup);
    // How many synapses the group has (synapses().size() without the list).
    uint64_t synapseCount(const std::string& synapseGroup);
    // A weight-update variable's value at each synapse of synapses(), in that order, for batch
    // element `batch` (ignored for a variable the batch shares). Pulls the variable.
    std::vector<double> synapseValues(const std::string& synapseGroup, const std::string& var,
                                      unsigned batch = 0);
    // Sets them: one value per synapse of synapses(), converted to the variable's type (an
    // integer variable takes only whole numbers in its range); other batch elements keep theirs.
    void setSynapseValues(const std::string& synapseGroup, const std::string& var,
                          std::span<const double> values, unsigned batch = 0);
    // The variable as a dense numPre x numPost matrix, row-major: `absent` where a pair has no
    // synapse, the sum of its synapses where it has several (Sparse drawn with replacement).
    std::vector<double> synapseMatrix(const std::string& synapseGroup, const std::string& var,
                                      unsigned batch = 0, double absent = 0.0);
    // Sets the variable from a dense numPre x numPost matrix: each synapse takes its pair's
    // value. A pair without a synapse must hold 0 (ModelError naming it: nothing is dropped
    // silently), and so must a pair with several synapses (they are set to 0; set them apart
    // with setSynapseValues).
    void setSynapseMatrix(const std::string& synapseGroup, const std::string& var,
                          std::span<const double> matrix, unsigned batch = 0);
    // Synapses per (pre, post) pair as a dense numPre x numPost matrix, row-major (0: none).
    std::vector<uint32_t> connectivityMatrix(const std::string& synapseGroup);
    // Host-given connectivity (GeNN's host-initialised sparse connectivity), before the first
    // step: the group's synapses become `list` (in any order; within a row the list's order is
    // kept, so synapses() returns the list sorted by source), replacing what the initialiser
    // built, and its weight-update variables take `values` (one per list entry, in list order)
    // or, for a variable not given, its constant initial value; a variable whose initialiser is
    // not a constant must be given. Everything is checked before anything changes: a neuron out
    // of range, a row longer than the maximum row length (SynapseGroup::setMaxConnections), a
    // Dense group, a step already taken or a missing or mis-sized value is a ModelError naming the
    // group. reset() re-runs the initialisers, this connectivity included; resetState keeps it.
    void setSynapses(const std::string& synapseGroup, std::span<const SynapsePair> list,
                     const std::map<std::string, std::vector<double>>& values = {});

    // Sparse storage itself (after pullConnectivity): row lengths and column indices as uint32.
    void pullConnectivity(const std::string& synapseGroup);
    std::vector<uint32_t> rowLengths(const std::string& synapseGroup) const;
    std::vector<uint32_t> columnIndices(const std::string& synapseGroup) const; // row*stride+k
    unsigned rowStride(const std::string& synapseGroup) const;

    // ---- parameters ----
    // The value is checked as Model::finalise checks parameters (finite, representable in the
    // precision, the model's paramDomain); a refused one is a ModelError and the old value stays.
    void setDynamicParam(const std::string& group, const std::string& param, double value);
    // Extra global parameters: replace the array (values converted to the EGP's type). Only an
    // EGP of the group is accepted (ModelError naming the group's EGPs otherwise). The device
    // buffer is reallocated only when the element count changes; an upload of the same count
    // rewrites it in place.
    void setEGP(const std::string& group, const std::string& egp, std::span<const double> values);
    // Typed upload: T must be the EGP's element type (ModelError otherwise); the values go from
    // `values` to the device in one copy, with no conversion and no host mirror made.
    template <typename T>
    void setEGP(const std::string& group, const std::string& egp, std::span<const T> values);

    // ---- spikes ----
    // Spikes emitted in the last step by a neuron group, per batch element, in neuron order on
    // every backend.
    std::vector<std::vector<uint32_t>> currentSpikes(const std::string& group);
    // Record spikes of every group with spike recording on, for the next `steps` steps, then
    // stop. Delivers what was recorded before, then discards spikes kept from an earlier window.
    // Recording is streamed: a bit-packed device buffer holds one chunk of steps (about 1 MiB,
    // at least 1,024 steps within a 64 MiB budget; docs/memory.md); each full chunk is decoded
    // into events on a host thread of its own while the next is recorded, so memory grows with
    // the number of spikes, not with the window. Throws ModelError if the window end overflows.
    void setRecordingWindow(uint64_t steps);
    // Largest recording chunk in steps (0 = the sizing above decides); for tests and tuning.
    // Takes effect at the next setRecordingWindow.
    void setRecordingChunkSteps(uint64_t steps);
    // Stream decoded spikes to `sink` instead of keeping them (an empty sink keeps them again).
    // spikes() then returns only events decoded while no sink was set. The sink runs on the
    // calling thread inside run()/step()/pullRecording() (and reset(), resetState(),
    // setRecordingWindow(), which deliver what was recorded before); an exception it throws
    // propagates from there. Everything recorded up to the last chunk end is delivered when
    // run() returns.
    void setSpikeSink(SpikeSink sink);
    // Decode the steps recorded so far in the current chunk (spikes() shows full chunks only).
    void pullRecording();
    std::vector<SpikeEvent> spikes(const std::string& group) const; // sorted by time, batch, neuron
    // The spike-like events of a synapse group's presynaptic (or postsynaptic) neurons
    // (WeightUpdateModel::preEventThresholdConditionCode), recorded like spikes where
    // SynapseGroup::setPreEventRecording (setPostEventRecording) is on; a SpikeSink receives
    // them as group "<synapse group>.preEvents" ("….postEvents").
    std::vector<SpikeEvent> spikeEvents(const std::string& synapseGroup,
                                        bool presynaptic = true) const;
    // The neurons that emitted a spike-like event in the last step, per batch element, sorted.
    std::vector<std::vector<uint32_t>> currentSpikeEvents(const std::string& synapseGroup,
                                                          bool presynaptic = true);

    MemoryUsage memoryUsage() const;
    // Device bytes of one group's own arrays (a synapse group: its connectivity, per-synapse
    // variables and its postsynaptic input; a neuron group: its state and spike buffers), not
    // counting initial-state copies; ModelError for an unknown group.
    size_t deviceBytes(const std::string& group) const;
    // Host-device copies so far (the device's count), e.g. to confirm a loop copies nothing.
    DeviceTransfers transfers() const;
    // Seconds the device has spent executing this simulation's work since it was built [s]:
    // kernels (initialisation, steps, custom updates), on-device copies and zero-fills, as the
    // backend measures them (docs/backends.md, "Device busy time"). Host code, syncs, host
    // transfers and the gaps between submitted sequences are not in it, so 1 − Δbusy / Δwall
    // over a loop is the share of its wall time spent outside device work. std::nullopt when the
    // backend cannot measure it (an OpenCL queue without profiling, a CUDA driver without event
    // timing). Waits for the work submitted so far to finish; reads no device-side errors.
    std::optional<double> deviceBusySeconds() const;
    // The time counters of every kernel the model has, in plan order (initialise first), since
    // the simulation was built: a kernel that never ran reads 0 s and 0 launches. Waits for the
    // work submitted so far. ModelError unless BackendPreferences::kernelTiming was set;
    // BackendError when the device cannot time kernels (an OpenCL queue without profiling, a
    // CUDA driver without event timing).
    std::vector<KernelTime> kernelTimes() const;

    const BuildInfo& buildInfo() const;
    const Model& model() const;
    std::string backendName() const;

    struct Impl;

private:
    std::unique_ptr<Impl> m_impl;
};

// Backends compiled into this library and whether each is usable here (with the reason if not).
struct BackendStatus {
    std::string name;
    bool usable;
    std::string reason;
};
std::vector<BackendStatus> availableBackends();

} // namespace spikeforge
