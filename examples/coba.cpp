// The Vogels–Abbott COBA benchmark built through the C++ API; the same network as
// examples/coba.toml. Usage: example_coba [N] [p] [duration_ms]
#include "spikeforge/models.hpp"
#include "spikeforge/simulation.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>

using namespace spikeforge;

int main(int argc, char** argv) {
    const unsigned n = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : 4000;
    const double p = argc > 2 ? std::atof(argv[2]) : 0.02;
    const double durationMs = argc > 3 ? std::atof(argv[3]) : 1000.0;

    // Leaky integrate-and-fire, forward Euler, absolute refractory period (as Brian2's
    // `(unless refractory)`): v is frozen while refrac counts down.
    NeuronModel lif;
    lif.name = "LifCoba";
    lif.params = {"taum", "Vt", "Vr", "El", "I", "tref"}; // [ms] [mV] [mV] [mV] [mV] [ms]
    lif.vars = {{"v"}, {"refrac"}};
    lif.simCode = "if (refrac > 0.0) refrac -= dt;\n"
                  "if (refrac < 0.5 * dt) v += dt * (Isyn - (v - El) + I) / taum;";
    lif.thresholdConditionCode = "v > Vt";
    lif.resetCode = "v = Vr;\nrefrac = tref;";

    // Conductance relative to the leak, decaying by forward Euler.
    PostsynapticModel cond;
    cond.name = "EulerCond";
    cond.params = {"tau", "E"}; // [ms] [mV]
    cond.simCode = "injectCurrent(inSyn * (E - v));\ninSyn -= dt * inSyn / tau;";

    Model model("coba");
    model.setDT(0.1);
    const ParamValues cell = {{"taum", 20.0}, {"Vt", -50.0}, {"Vr", -60.0},
                              {"El", -60.0},  {"I", 20.0},   {"tref", 5.0}};
    const VarInitMap state = {{"v", init::Uniform(-60.0, -50.0)}, {"refrac", 0.0}};
    const unsigned nExc = static_cast<unsigned>(0.8 * n), nInh = n - nExc;
    model.addNeuronGroup("E", nExc, lif, cell, state).setSpikeRecording(true);
    model.addNeuronGroup("I", nInh, lif, cell, state).setSpikeRecording(true);
    for (const char* src : {"E", "I"})
        for (const char* tgt : {"E", "I"}) {
            const bool exc = src[0] == 'E';
            model.addSynapseGroup(
                std::string(src) + tgt, MatrixType::Sparse, 0, src, tgt,
                {models::StaticPulseConstantWeight(), {{"g", exc ? 0.6 : 6.7}}, {}, {}, {}},
                {cond, {{"tau", exc ? 5.0 : 10.0}, {"E", exc ? 0.0 : -80.0}}, {}},
                init::FixedProbability(p));
        }

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
