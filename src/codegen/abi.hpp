#pragma once
// The ABI between the runtime and generated code, defined once: the step-argument struct, the
// device-side error bits and the names of the kernel entry points. The runtime uses the C++
// definitions; generators print the C declarations from the same tables, so the two cannot
// drift apart.
#include <cstdint>
#include <string>

namespace spikeforge::codegen::abi {

// Arguments every kernel entry point receives. Backend settings (threads, devices) are not here:
// a backend owns them.
struct StepArgs {
    double t = 0.0;           // [ms] time at the start of the step
    uint64_t step = 0;        // timestep index
    uint64_t recordStart = 0; // first step of the current recording chunk
    uint64_t recordSteps = 0; // steps in the current recording chunk (0: not recording)
    uint64_t seed = 0;        // model seed, keys every random stream
    // Steps run since the simulation was built or last reset(): the step that keys random
    // draws during a step. Equal to `step` until resetState() starts a new trial at step 0,
    // after which it keeps counting, so every trial draws fresh numbers.
    uint64_t rngStep = 0;
};

// One field of StepArgs as generated code declares it (same order, same C type).
struct AbiField {
    const char* ctype;
    const char* name;
};
inline constexpr AbiField kStepArgsFields[] = {
    {"double", "t"},
    {"uint64_t", "step"},
    {"uint64_t", "recordStart"},
    {"uint64_t", "recordSteps"},
    {"uint64_t", "seed"},
    {"uint64_t", "rngStep"},
};

// `typedef struct SFStepArgs { … } SFStepArgs;` for generated code (C, C++, CUDA and OpenCL C spell
// it alike).
std::string stepArgsDeclaration();

// Device-side error bits of a synapse group's error word (its word in the model-wide error array,
// codegen::kErrorsArray). A kernel sets a bit (atomic OR) and never clears it; the runtime reads
// the array at sync points and clears it, so an error is reported once, with the steps it
// happened in.
enum class ErrorBit : uint32_t {
    RowOverflow = 1u,    // connectivity initialiser built a row longer than maxRowLength
    DendriticDelay = 2u, // addToPostDelay got a delay >= the maximum dendritic delay
    RowFull = 4u,        // add_synapse on a row at its maximum row length (connectivity update)
    TargetRange = 8u,    // add_synapse named a target (a source, in column code) out of range
};
inline constexpr ErrorBit kErrorBits[] = {ErrorBit::RowOverflow, ErrorBit::DendriticDelay,
                                          ErrorBit::RowFull, ErrorBit::TargetRange};
// The macro name of a bit in generated code ("SF_ERROR_ROW_OVERFLOW").
const char* errorMacro(ErrorBit b);
// `#define SF_ERROR_… <value>u` for every bit.
std::string errorBitDefinitions();
// What a set bit means, for the user ("addToPostDelay was given a delay >= the maximum dendritic
// delay"); the runtime adds the group, the bound and the steps.
const char* errorDescription(ErrorBit b);

// A snippet's error slot holds the ordinal of the run-time check that failed
// (snippet::Scanned::checks); a checked integer division sets this bit as well when it failed
// because the minimum was divided by -1 rather than by zero.
inline constexpr uint32_t kDivisionOverflowBit = 0x80000000u;

// Kernel entry points. Custom-update entry points are kCustomUpdatePrefix + update group name
// (a validated identifier).
inline constexpr const char* kInitialiseEntry = "sf_initialize";
inline constexpr const char* kSynapseDynamicsEntry = "sf_synapse_dynamics";
inline constexpr const char* kPresynapticUpdateEntry = "sf_presynaptic_update";
inline constexpr const char* kPostsynapticUpdateEntry = "sf_postsynaptic_update";
inline constexpr const char* kNeuronUpdateEntry = "sf_neuron_update";
inline constexpr const char* kEventDetectionEntry = "sf_event_detection";
inline constexpr const char* kPresynapticEventUpdateEntry = "sf_presynaptic_event_update";
inline constexpr const char* kPostsynapticEventUpdateEntry = "sf_postsynaptic_event_update";
inline constexpr const char* kCustomUpdatePrefix = "sf_custom_update_";
// Block pruning of a prunable synapse group: kBlockPrunePrefix + the group's name.
inline constexpr const char* kBlockPrunePrefix = "sf_prune_blocks_";
// A custom connectivity update: kConnectivityUpdatePrefix + the update's name.
inline constexpr const char* kConnectivityUpdatePrefix = "sf_connectivity_update_";
// CPU only, where the plan's steps are batch-local (codegen::stepsAreBatchLocal): a stretch of
// steps of every step kernel, run one batch element at a time (a thread per element).
inline constexpr const char* kBatchStepsEntry = "sf_steps_by_batch";

} // namespace spikeforge::codegen::abi
