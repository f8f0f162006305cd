#pragma once
// The Vogels–Abbott COBA network (the same as examples/coba.toml), built through the C++ API:
// `n` leaky integrate-and-fire neurons, 80 % excitatory and 20 % inhibitory, every population
// connected to every population with probability `p`, exponentially decaying conductances,
// forward Euler. Used by example_coba and by benchmarks/recording.
#include "spikeforge/model.hpp"
#include "spikeforge/models.hpp"

#include <string>

namespace coba {

inline void build(spikeforge::Model& model, unsigned n, double p, bool recordSpikes) {
    using namespace spikeforge;
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

    model.setDT(0.1); // [ms]
    const ParamValues cell = {{"taum", 20.0}, {"Vt", -50.0}, {"Vr", -60.0},
                              {"El", -60.0},  {"I", 20.0},   {"tref", 5.0}};
    const VarInitMap state = {{"v", init::Uniform(-60.0, -50.0)}, {"refrac", 0.0}};
    const unsigned nExc = static_cast<unsigned>(0.8 * n), nInh = n - nExc;
    model.addNeuronGroup("E", nExc, lif, cell, state).setSpikeRecording(recordSpikes);
    model.addNeuronGroup("I", nInh, lif, cell, state).setSpikeRecording(recordSpikes);
    for (const char* src : {"E", "I"})
        for (const char* tgt : {"E", "I"}) {
            const bool exc = src[0] == 'E';
            model.addSynapseGroup(
                std::string(src) + tgt, MatrixType::Sparse, 0, src, tgt,
                {models::StaticPulseConstantWeight(), {{"g", exc ? 0.6 : 6.7}}, {}, {}, {}},
                {cond, {{"tau", exc ? 5.0 : 10.0}, {"E", exc ? 0.0 : -80.0}}, {}},
                init::FixedProbability(p));
        }
}

} // namespace coba
