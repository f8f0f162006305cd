// The CPU neuron kernel seeds a random generator per neuron only when a snippet it runs draws
// random numbers: decided from the scanner's recorded fact (Scanned::usesRng), never by
// searching the rendered text, which also holds user names such as `grand_total`.
#include "backends/cpu/cpu_emit.hpp"
#include "spikeforge/models.hpp"

#include <gtest/gtest.h>

using namespace spikeforge;

namespace {

bool seedsRng(const Model& m, const std::string& group) {
    return cpu::emitNeuronUpdate(m, m.neuronGroup(group)).code.find("sf_rng_init") !=
           std::string::npos;
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
