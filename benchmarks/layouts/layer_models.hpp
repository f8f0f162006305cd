#pragma once
// The models of the layout benchmarks: Bernoulli sources, targets that only sum their input (so a
// step's time is the delivery's), a plain pulse.
#include "spikeforge/snippets.hpp"

namespace sfbench {

// Spikes with probability p each step; `spikes` counts them.
inline spikeforge::NeuronModel bernoulli() {
    spikeforge::NeuronModel m;
    m.name = "Bernoulli";
    m.params = {"p"};
    m.vars = {{"spikes"}};
    m.thresholdConditionCode = "rand_uniform() < p";
    m.resetCode = "spikes += 1.0;";
    return m;
}

inline spikeforge::NeuronModel accumulate() {
    spikeforge::NeuronModel m;
    m.name = "Accumulate";
    m.vars = {{"acc"}};
    m.simCode = "acc += Isyn;";
    m.thresholdConditionCode = "false";
    return m;
}

inline spikeforge::WeightUpdateModel pulse() {
    spikeforge::WeightUpdateModel m;
    m.name = "Pulse";
    m.vars = {{"g", "scalar", spikeforge::VarAccess::ReadOnly}};
    m.preSpikeSynCode = "addToPost(g);";
    return m;
}

} // namespace sfbench
