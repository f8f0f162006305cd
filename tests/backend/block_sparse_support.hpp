#pragma once
// What the block-sparse backend tests share: a spike pattern, a weight per pair exact in float,
// and block-sparse and Dense groups given the same weights.
#include "spikeforge/models.hpp"
#include "spikeforge/simulation.hpp"

#include <initializer_list>
#include <vector>

namespace sftest {

// Neuron i of batch element b fires at steps following a pattern that differs between neurons
// and batch elements (k counts steps).
inline spikeforge::NeuronModel pattern() {
    spikeforge::NeuronModel m;
    m.name = "Pattern";
    m.vars = {{"k", "int"}};
    m.simCode = "k += 1;";
    m.thresholdConditionCode = "(k * (id + 2) + 3 * batch) % 7 < 2";
    return m;
}

inline spikeforge::WeightUpdateInit staticPulse() {
    return {spikeforge::models::StaticPulse(), {}, {{"g", 0.0}}, {}, {}};
}

// A weight in eighths, different for each pair: sums of a few hundred of them are exact in
// float, so any order of accumulation gives the same bits.
inline double weightOf(uint32_t pre, uint32_t post) {
    return double(int((pre * 7 + post * 3) % 9) - 4) / 8.0;
}

// Gives the block-sparse groups' synapses weightOf(pre, post) x scale in batch element `batch`,
// and the Dense groups the same weights at those pairs (0 elsewhere).
inline void setMatchingWeights(spikeforge::Simulation& sim,
                               const std::vector<spikeforge::SynapsePair>& pairs, unsigned numPre,
                               unsigned numPost, unsigned batch, double scale,
                               std::initializer_list<const char*> blockGroups,
                               std::initializer_list<const char*> denseGroups) {
    std::vector<double> values, dense(size_t(numPre) * numPost, 0.0);
    for (const auto& p : pairs) {
        values.push_back(weightOf(p.pre, p.post) * scale);
        dense[size_t(p.pre) * numPost + p.post] = values.back();
    }
    for (const char* g : blockGroups)
        sim.setSynapseValues(g, "g", values, batch);
    for (const char* g : denseGroups)
        sim.setSynapseMatrix(g, "g", dense, batch);
}

} // namespace sftest
