#pragma once
// Small models that make a synapse group's delivery observable, shared by the layout tests:
// sources that spike once on demand, targets that only sum their input, a plain pulse.
#include "spikeforge/models.hpp"
#include "spikeforge/snippets.hpp"

namespace sftest {

// Neurons with fire = 1 spike in the first step; `count` sums the input they get (addToPre
// contributions of their outgoing synapses arrive as Isyn).
inline spikeforge::NeuronModel spikeOnce() {
    spikeforge::NeuronModel m;
    m.name = "SpikeOnce";
    m.vars = {{"fire"}, {"count"}};
    m.simCode = "count += Isyn;";
    m.thresholdConditionCode = "fire != 0";
    m.resetCode = "fire = 0;";
    return m;
}

// Never spikes; acc sums its input over the steps.
inline spikeforge::NeuronModel accumulate() {
    spikeforge::NeuronModel m;
    m.name = "Accumulate";
    m.vars = {{"acc"}};
    m.simCode = "acc += Isyn;";
    m.thresholdConditionCode = "false";
    return m;
}

// addToPost(g) per synapse of a spike, g shared by the batch.
inline spikeforge::WeightUpdateModel pulse() {
    spikeforge::WeightUpdateModel m;
    m.name = "Pulse";
    m.vars = {{"g", "scalar", spikeforge::VarAccess::ReadOnly}};
    m.preSpikeSynCode = "addToPost(g);";
    return m;
}

// A 4x4x1 image, 3x3 kernel, 2 output channels: 16 sources, 2x2x2 = 8 targets.
inline spikeforge::ToeplitzConnectivityInit conv4x4() {
    return spikeforge::init::Conv2D({{"conv_kh", 3},
                                     {"conv_kw", 3},
                                     {"conv_oc", 2},
                                     {"conv_sh", 1},
                                     {"conv_sw", 1},
                                     {"conv_padh", 0},
                                     {"conv_padw", 0},
                                     {"conv_oh", 2},
                                     {"conv_ow", 2},
                                     {"conv_ih", 4},
                                     {"conv_iw", 4},
                                     {"conv_ic", 1}});
}

} // namespace sftest
