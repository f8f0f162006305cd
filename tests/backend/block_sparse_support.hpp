#pragma once
// What the block-sparse backend tests share: a spike pattern, a weight per pair exact in float,
// and block-sparse and Dense groups given the same weights.
#include "spikeforge/models.hpp"
#include "spikeforge/simulation.hpp"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
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

// Delivers g; each spike of a target moves g by steps of 1/8 that depend on both neurons
// (exact in float, so any order of updates gives the same bits).
inline spikeforge::WeightUpdateModel postLearning() {
    spikeforge::WeightUpdateModel learn;
    learn.name = "PostLearning";
    learn.vars = {{"g", "scalar"}};
    learn.preSpikeSynCode = "addToPost(g);";
    learn.postSpikeSynCode = "g += 0.125 * (id_pre % 3) - 0.125 * (id_post % 2);";
    return learn;
}

// Expects the accumulators `acc` of groups `got` and `want` (n neurons, every batch element) to
// be bit-identical; returns how many are nonzero (so a caller can check the input reached them).
inline size_t expectSameInput(spikeforge::Simulation& sim, const std::string& got,
                              const std::string& want, unsigned n) {
    sim.pull(got, "acc");
    sim.pull(want, "acc");
    const auto a = sim.view<float>(got, "acc");
    const auto b = sim.view<float>(want, "acc");
    size_t nonZero = 0;
    for (size_t i = 0; i < b.size(); i++) {
        EXPECT_EQ(a[i], b[i]) << "target " << i % n << " batch " << i / n;
        if (a[i] != b[i]) break;
        nonZero += b[i] != 0.0f;
    }
    return nonZero;
}

// Expects the weights g of block-sparse group "Blocks" (its synapses `pairs`) to equal those of
// Dense group "Dense" (numPost targets) in every batch element; returns how many differ from
// weightOf (so a caller can check a learning rule ran).
inline size_t expectSameWeights(spikeforge::Simulation& sim,
                                const std::vector<spikeforge::SynapsePair>& pairs, unsigned numPost,
                                unsigned batch) {
    size_t changed = 0;
    for (unsigned b = 0; b < batch; b++) {
        const auto blocks = sim.synapseValues("Blocks", "g", b);
        const auto dense = sim.synapseMatrix("Dense", "g", b);
        for (size_t i = 0; i < pairs.size(); i++) {
            const auto& p = pairs[i];
            EXPECT_EQ(blocks[i], dense[size_t(p.pre) * numPost + p.post])
                << "synapse " << p.pre << " -> " << p.post << ", batch " << b;
            if (blocks[i] != dense[size_t(p.pre) * numPost + p.post]) return changed;
            changed += blocks[i] != weightOf(p.pre, p.post);
        }
    }
    return changed;
}

} // namespace sftest
