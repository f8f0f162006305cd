// The neuron update body seeds a random generator per neuron only when a snippet it runs draws
// random numbers: decided from the scanner's recorded fact (Scanned::usesRng), never by
// searching the rendered text, which also holds user names such as `grand_total`.
#include "codegen/lowerer.hpp"
#include "spikeforge/models.hpp"

#include <gtest/gtest.h>

using namespace spikeforge;

namespace {

bool seedsRng(const Model& m, const std::string& group) {
    const auto lowered = codegen::lowerNeuronUpdate(m, m.neuronGroup(group));
    const auto& body = std::get<codegen::NeuronUpdateBody>(lowered.body);
    const bool seeds =
        body.perNeuron.find(codegen::hookName(codegen::Hook::RngInit)) != std::string::npos;
    EXPECT_EQ(seeds, body.usesRng) << group; // the flag and the body agree
    return seeds;
}

NeuronModel counter() {
    NeuronModel c;
    c.name = "Counter";
    c.vars = {{"grand_total"}};
    c.simCode = "grand_total += 1.0; // not rand_uniform()";
    c.thresholdConditionCode = "grand_total > 10.0";
    c.resetCode = "grand_total = 0.0;";
    return c;
}

TEST(EmitRng, OnlyKernelsThatDrawSeedAGenerator) {
    Model m("emit_rng");
    m.addNeuronGroup("Plain", 4, counter(), {}, {{"grand_total", 0.0}});
    m.addNeuronGroup("Noisy", 4, counter(), {}, {{"grand_total", 0.0}});
    m.addCurrentSource("Noise", models::GaussianNoise(), "Noisy", {{"mean", 0.0}, {"sd", 1.0}}, {});
    m.addNeuronGroup("Source", 4, models::Poisson(), {{"rate", 10.0}}, {{"timeStepToSpike", 0.0}});
    m.finalise();
    EXPECT_FALSE(seedsRng(m, "Plain")); // "l_grand_total" and a comment mention rand_
    EXPECT_TRUE(seedsRng(m, "Noisy"));  // only its current source draws
    EXPECT_TRUE(seedsRng(m, "Source")); // the Poisson model's own simCode draws
}

} // namespace
