// The Vogels–Abbott COBA benchmark built through the C++ API; the same network as
// examples/coba.toml. Usage: example_coba [N] [p] [duration_ms]
#include "coba_model.hpp"
#include "spikeforge/simulation.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>

using namespace spikeforge;

int main(int argc, char** argv) {
    const unsigned n = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : 4000;
    const double p = argc > 2 ? std::atof(argv[2]) : 0.02;
    const double durationMs = argc > 3 ? std::atof(argv[3]) : 1000.0;

    Model model("coba");
    coba::build(model, n, p, true);

    Simulation sim(model);
    const auto steps = static_cast<uint64_t>(durationMs / model.dt() + 0.5);
    sim.setRecordingWindow(steps);
    const auto t0 = std::chrono::steady_clock::now();
    sim.run(steps);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    sim.pullRecording();
    const auto& info = sim.buildInfo();
    std::printf("build %.3f s%s, simulate %.3f s\n", info.generateSeconds + info.compileSeconds,
                info.cacheHit ? " (cached)" : "", wall);
    for (const char* g : {"E", "I"}) {
        const double count = static_cast<double>(sim.spikes(g).size());
        std::printf("%s: %.0f spikes, %.2f Hz\n", g, count,
                    count / (model.neuronGroup(g).size() * durationMs / 1000.0));
    }
    return 0;
}
