#pragma once
// Backend factory. Concrete backends stay private to their folders.
#include "codegen/plan.hpp"
#include "runtime/device.hpp"
#include "spikeforge/simulation.hpp"

#include <memory>

namespace spikeforge::backends {

class Backend {
public:
    virtual ~Backend() = default;
    virtual std::string name() const = 0;
    // Code generation: arrays, merged groups and source for this model.
    virtual codegen::Plan generate(const Model& model) = 0;
    // Compile (or fetch from the cache) and load; fills the compile part of `info`.
    virtual std::unique_ptr<runtime::Device> build(const codegen::Plan& plan, BuildInfo& info) = 0;
};

std::unique_ptr<Backend> makeBackend(const BackendPreferences& prefs);

} // namespace spikeforge::backends
