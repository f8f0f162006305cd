#pragma once
// Simulation::Impl, the runtime's state and host logic over the backend's Device; shared by
// simulation.cpp (the public methods) and schedule.cpp (Simulation::run of a Schedule). Work
// for the device is queued (Impl::queue) and submitted in one Device::runSequence before every
// sync point and at the end of each public call, so a queue never outlives a call.
// Declared here; the bodies live by concern in simulation_memory.cpp (arrays and device
// memory), simulation_execution.cpp (queueing and running work), simulation_tables.cpp
// (merged-group tables and values) and simulation_state.cpp (initialisation, state and reset);
// refillHistory is in simulation.cpp and uploadGivenValues in synapses.cpp.
#include "spikeforge/simulation.hpp"

#include "backends/backend.hpp"
#include "codegen/abi.hpp"
#include "codegen/arrays.hpp"
#include "codegen/connectivity.hpp"
#include "codegen/ctype.hpp"
#include "codegen/layouts/buffers.hpp"
#include "codegen/lower.hpp"
#include "model/validate.hpp"
#include "runtime/device_errors.hpp"
#include "runtime/host_array.hpp"
#include "runtime/procedural_twin.hpp"
#include "runtime/recording.hpp"
#include "snippet/suggest.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <map>
#include <new>
#include <set>
#include <string>
#include <vector>

namespace spikeforge {

struct Simulation::Impl {
    Model& model;
    BackendPreferences prefs;
    std::unique_ptr<backends::Backend> backend;
    codegen::Plan plan;
    std::unique_ptr<backends::Device> device;
    std::map<std::string, runtime::HostArray> arrays;
    std::map<std::string, double> dynamicValues; // "owner/param" → value
    BuildInfo info;
    std::unique_ptr<runtime::SpikeRecorder> recorder;
    std::unique_ptr<runtime::DeviceErrors> errors;
    // Kernels (indices into plan.kernels) in launch order: initialisation, one step, and the
    // custom updates of each update group.
    std::vector<size_t> initKernels, stepKernels;
    std::map<std::string, std::vector<size_t>> customKernels;
    std::map<std::string, size_t> pruneKernels; // by synapse group (Simulation::pruneBlocks)
    uint64_t step = 0;
    uint64_t rngStep = 0; // codegen::abi::StepArgs::rngStep: steps since build or reset()
    // prefs.keepInitialState: a copy of each trial-state array as initialised (resetState).
    std::map<std::string, backends::Buffer> initialState;
    // Procedural groups read so far: each one's Sparse twin (runtime/procedural_twin.hpp).
    std::map<std::string, runtime::ProceduralTwin> proceduralTwins;
    // Device work not yet submitted (submit); empty between public calls.
    std::vector<backends::SequenceItem> queue;
    size_t capacity = 0; // [B] device memory the arrays may use in all, read once at start
    // [B] bytes() of every array with a device buffer plus every initial-state copy: kept as
    // they change, so that checking one allocation does not walk every array (set-up of a
    // model with thousands of groups was quadratic in them).
    size_t deviceBytes = 0;
    bool ready = false; // constructed: every array is allocated and bound in the tables

    Impl(Model& m, const BackendPreferences& p) : model(m), prefs(p) {}
    ~Impl();

    runtime::HostArray& array(const std::string& group, const std::string& var);

    // The extra global parameter `egp` of `group`; a ModelError for any other array (a state
    // variable's size is fixed by the model: resizing it would let kernels index past its end).
    runtime::HostArray& egpArray(const std::string& group, const std::string& egp);

    // An EGP about to receive `count` elements: reallocated (and the tables rebound to the new
    // buffer) only when its size changes, so uploads of the same size reuse device memory.
    void resizeEGP(runtime::HostArray& a, size_t count);

    // (Re)allocates the device array; a host mirror is dropped and made again on demand.
    void allocate(runtime::HostArray& a, size_t count);

    // An array growing to `bytes` keeps every array together within the capacity; otherwise
    // the array is left as it was.
    void checkGrowth(const runtime::HostArray& a, size_t bytes) const;

    // What is recorded: each recording neuron group's spikes (named as the group) and each
    // recording synapse group's spike-like events ("<group>.preEvents", "<group>.postEvents":
    // no group name holds a dot), with the array of its recording buffer.
    struct RecordedStream {
        std::string name;
        unsigned neurons = 0;
        std::string buffer;
    };
    std::vector<RecordedStream> recordedStreams() const;
    static std::string eventStreamName(const std::string& synapseGroup, bool pre);

    // Refuses, before anything is allocated, a model whose arrays together with the largest
    // recording chunk need more device memory than the device has.
    void checkCapacity() const;

    // A new value of a dynamic parameter passes the checks Model::finalise made on the built
    // value (finite, representable in the precision, the snippet's paramDomain), with the
    // other dynamic parameters of the snippet at their current values.
    void checkDynamicValue(const std::string& owner, const std::string& param, double v) const;

    // The host mirror of an array, made (zero-filled) on first use.
    unsigned char* mirror(runtime::HostArray& a);

    BackendError allocationError(const std::string& array, size_t bytes, const std::string& where,
                                 const std::string& why) const;

    // Steps that may run before the next interval check of device errors.
    uint64_t stepsUntilCheck() const;

    // Hands the queued work to the device (one runSequence). Called before every sync point and
    // at the end of each public call; the queue is emptied even when the device throws.
    void submit();

    // Flushes the recording chunk if the steps so far filled it (then true: a sync point).
    bool flushRecordingIfFull();

    // Queues `n` steps, stopping at the end of each recording chunk so it can be streamed out and
    // at each error-check interval (the queue is submitted there). A chunk flush is a sync point
    // anyway: errors are read there.
    void advance(uint64_t n);

    // Queues the launches of `kernels` at the current step.
    void queueLaunches(const std::vector<size_t>& kernels);

    // The kernels of an update group; ModelError naming it (with `where` before) if unknown.
    const std::vector<size_t>& updateKernels(const std::string& updateGroup,
                                             const std::string& where = "") const;

    // resetState's work on the arrays `chosen` (stateArrays): reads the errors latched before
    // (a sync point; returned, for the caller to throw once the reset is done), queues the copies
    // from the initial state and rewinds time and recording. A schedule's resetState item passes
    // readErrors = false: nothing waits for the device, and errors latched before are reported
    // at the next check, saying that they may come from an earlier trial.
    std::vector<std::string> resetTrial(const std::vector<std::string>& chosen,
                                        bool readErrors = true);

    void launchAll(const std::vector<size_t>& kernels);

    // Binds every merged-group table from the plan's bindings and the current arrays and values.
    void refreshTables();

    backends::FieldValue fieldValue(const codegen::FieldBinding& b) const;

    codegen::abi::StepArgs args() const;

    // Fresh arrays come zero-filled from Device::allocate; only a reset clears them again. Errors
    // latched before a reset are reported by it, after the reset, with the initialisation's own.
    void initialise(bool clear);

    // Values given in the model (VarInit(values)), copied in after the initialisation kernels
    // (runtime/synapses.cpp: per-synapse values go through the connectivity's codec).
    void uploadGivenValues();

    // A neuron variable whose past values are kept for delayed synapse code (VariableHistory)
    // was given new values before the first step (values in the model, a push): every slot of
    // its history becomes its host mirror's values, as initialisation fills it, so delayed code
    // never reads values these replaced. Nothing for a variable without a history.
    void refillHistory(const std::string& group, const std::string& var);

    // Layout arrays the host builds from the model (a given block mask), uploaded before the
    // initialisation kernels that read them (Connectivity::hostBuiltArrays).
    void uploadHostBuiltLayouts();

    // A device copy of every trial-state array as it is now (just initialised).
    void keepInitialState();

    // The trial-state arrays `selection` names (resetState): groups or "group.var"; all if empty.
    // ModelError without BackendPreferences::keepInitialState.
    std::vector<std::string> stateArrays(const std::vector<std::string>& selection) const;

    // Copies the device array into its host mirror (no error check).
    void pullArray(runtime::HostArray& a);

    // Assigns the plan's kernels to the runtime's launch points.
    void sortKernels();
};

} // namespace spikeforge
