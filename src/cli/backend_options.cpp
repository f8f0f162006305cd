#include "backend_options.hpp"

#include "snippet/suggest.hpp"
#include "spike_output.hpp" // UsageError

#include "spikeforge/devices.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <vector>

namespace spikeforge::cli {

namespace {

// Every backend name spikeforge knows; whether one is usable here is the backend's to say when
// it is built (availableBackends would load every OpenCL driver just to check a name).
const std::vector<std::string> knownBackends{"cpu", "opencl", "cuda"};

void checkBackendName(const std::string& name) {
    if (std::find(knownBackends.begin(), knownBackends.end(), name) != knownBackends.end()) return;
    throw UsageError("unknown backend '" + name + "'" + suggestion(name, knownBackends) +
                     "; `spikeforge info` lists the backends");
}

// The number `text` holds, or nullopt when it is not one finite number.
std::optional<double> numberOf(const std::string& text) {
    double value = 0.0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(value))
        return std::nullopt;
    return value;
}

} // namespace

std::string positiveNumber(const std::string& text) {
    const std::optional<double> value = numberOf(text);
    if (!value) return "'" + text + "' is not a number";
    return *value > 0.0 ? std::string() : "must be greater than 0, got " + text;
}

std::string nonNegativeNumber(const std::string& text) {
    const std::optional<double> value = numberOf(text);
    if (!value) return "'" + text + "' is not a number";
    return *value >= 0.0 ? std::string() : "must be 0 or more, got " + text;
}

void addBackendOptions(CLI::App& command, BackendOptions& o, BackendFlags flags) {
    command.add_option("--backend,-b", o.backend, "Backend to run on (see `info`)")
        ->capture_default_str();
    command.add_option("--device", o.device,
                       "OpenCL device: P:D as `info` lists it, or a name substring (default: "
                       "the first GPU, else the first device)");
    command.add_option("--threads", o.threads, "CPU threads (0 = all cores)")
        ->check(CLI::Range(0, std::numeric_limits<int>::max()))
        ->capture_default_str();
    command.add_flag("--fast-math", o.fastMath,
                     "Compile with fast floating-point maths, as Brian2 does by default "
                     "(results differ in the last bits; docs/backends.md)");
    switch (flags) {
    case BackendFlags::Common:
        return;
    case BackendFlags::Simulate:
        command
            .add_option("--cuda-graph-steps", o.cudaGraphSteps,
                        "cuda: run this many steps per CUDA graph (0 = plain launches)")
            ->check(CLI::Range(0u, kMaxCudaGraphSteps))
            ->capture_default_str();
        command
            .add_option("--compile-timeout", o.compileTimeoutSeconds,
                        "Time limit of the compiler [s] (0 = none)")
            ->check(nonNegativeNumber);
        command.add_flag("--kernel-timing", o.kernelTiming,
                         "Time every kernel on the device and report each kernel's seconds and "
                         "launches (in the JSON line as kernel_s and kernel_launches)");
        return;
    }
}

// Checked before the model is built, so the message names the flag rather than the
// BackendPreferences field.
void checkBackendOptions(const BackendOptions& o) {
    checkBackendName(o.backend);
    if (o.threads != 0 && o.backend != "cpu")
        throw UsageError("--threads " + std::to_string(o.threads) +
                         " sets the cpu backend's threads; --backend " + o.backend +
                         " has none (drop --threads)");
    if (o.cudaGraphSteps != 0 && o.backend != "cuda")
        throw UsageError("--cuda-graph-steps " + std::to_string(o.cudaGraphSteps) +
                         " runs steps as CUDA graphs; --backend " + o.backend +
                         " has none (drop --cuda-graph-steps)");
    if (o.device.empty()) return;
    if (o.backend == "cpu")
        throw UsageError("--device '" + o.device +
                         "' selects an OpenCL or CUDA device; --backend cpu has none (use "
                         "--backend opencl, or drop --device)");
    if (o.backend != "opencl") return; // cuda: its backend reports the selector
    if (const std::string error = openclSelectorError(o.device); !error.empty())
        throw UsageError("--device '" + o.device + "': " + error);
}

BackendPreferences preferencesOf(const BackendOptions& o) {
    BackendPreferences prefs;
    prefs.backend = o.backend;
    prefs.device = o.device;
    prefs.threads = o.threads;
    prefs.fastMath = o.fastMath;
    prefs.cudaGraphSteps = o.cudaGraphSteps;
    prefs.kernelTiming = o.kernelTiming;
    if (o.compileTimeoutSeconds) prefs.compileTimeout = *o.compileTimeoutSeconds;
    return prefs;
}

} // namespace spikeforge::cli
