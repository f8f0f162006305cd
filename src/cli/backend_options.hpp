#pragma once
// The options every command that runs a model shares (simulate, train, evaluate): which backend
// and device, and how it builds. Declared, checked and turned into BackendPreferences here
// alone (docs/cli.md).
#include "spikeforge/simulation.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace spikeforge::cli {

struct BackendOptions {
    std::string backend = "cpu";
    std::string device; // BackendPreferences::device: "" = default, "P:D" or a name substring
    int threads = 0;    // cpu backend; 0 = all cores
    bool fastMath = false;
    // simulate only (addBackendOptions with simulateOnly):
    uint32_t cudaGraphSteps = 0;                 // BackendPreferences::cudaGraphSteps
    bool kernelTiming = false;                   // BackendPreferences::kernelTiming
    std::optional<double> compileTimeoutSeconds; // [s] compiler time limit; 0 = none
};

// Which of the options a command offers.
enum class BackendFlags {
    Common,   // --backend, --device, --threads, --fast-math
    Simulate, // and --cuda-graph-steps, --kernel-timing, --compile-timeout
};

// Declares the options on `command`, bound to `options`.
void addBackendOptions(CLI::App& command, BackendOptions& options, BackendFlags flags);

// A backend name spikeforge does not know, --threads for a backend other than cpu, a graph for
// one other than cuda, a device for cpu or an OpenCL selector that names no device: a
// UsageError naming the flag (checked before any model is built).
void checkBackendOptions(const BackendOptions& options);

// The preferences the options ask for (the rest at their defaults).
BackendPreferences preferencesOf(const BackendOptions& options);

// CLI11 checks that name the value (CLI11's own print the whole double range): "" when fine.
std::string positiveNumber(const std::string& text);
std::string nonNegativeNumber(const std::string& text);

} // namespace spikeforge::cli
