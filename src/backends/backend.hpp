#pragma once
// Backend factory: the one header through which the runtime reaches a backend. Concrete backends
// stay private to their folders.
#include "backends/device.hpp"
#include "codegen/plan.hpp"
#include "spikeforge/simulation.hpp"

#include <memory>

namespace spikeforge::backends {

class Backend {
public:
    virtual ~Backend() = default;
    virtual std::string name() const = 0;
    // Print the plan in the backend's dialect, compile it (or fetch it from the cache) and load
    // it; fills the compile part of `info`. The device
    // binds the plan's tables and launches its kernels by index, so `plan.kernels` must be final.
    virtual std::unique_ptr<Device> build(const codegen::Plan& plan, BuildInfo& info) = 0;
};

std::unique_ptr<Backend> makeBackend(const BackendPreferences& prefs);

} // namespace spikeforge::backends
