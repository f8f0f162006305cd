#pragma once
// The small interface a backend implements for the runtime: memory, the merged-group tables of
// generated code, and kernel launches. All host logic is written once, in runtime/.
#include <cstddef>
#include <cstdint>
#include <string>

namespace spikeforge::runtime {

// Arguments every generated entry point receives. Mirrored by `SFStepArgs` in generated code.
struct StepArgs {
    double t = 0.0;    // [ms] time at the start of the step
    uint64_t step = 0; // timestep index
    uint64_t recordStart = 0;
    uint64_t recordSteps = 0;
    uint64_t seed = 0;
    uint32_t threads = 1; // OpenMP threads for CPU kernels (regions go serial at 1)
};

class Device {
public:
    virtual ~Device() = default;
    virtual std::string name() const = 0;
    virtual void* allocate(size_t bytes) = 0; // zero-filled; nullptr for 0 bytes
    // Bytes of memory the device can give this process in all [B]. The runtime refuses a model
    // whose arrays need more before allocating anything: on an overcommitting OS an allocation
    // beyond it may succeed and the process is killed only when its zero-fill touches the pages.
    virtual size_t memoryCapacity() const = 0;
    virtual void release(void* ptr) = 0;
    virtual void zero(void* ptr, size_t bytes) = 0;
    virtual void copyToDevice(void* dst, const void* src, size_t bytes) = 0;
    virtual void copyFromDevice(void* dst, const void* src, size_t bytes) = 0;
    // Overwrite a merged-group table of the generated code.
    virtual void writeTable(const std::string& symbol, const void* bytes, size_t size) = 0;
    // Entry points: "sf_initialize", "sf_synapse_update", "sf_neuron_update".
    virtual void launch(const std::string& entry, const StepArgs& args) = 0;
    virtual void synchronise() = 0;
};

} // namespace spikeforge::runtime
