// Simulation::setDynamicParam checks a new value as Model::finalise checked the built one:
// finite, representable in the model precision, inside the snippet's paramDomain. A refused
// value is a ModelError naming the group and the parameter, and the old value stays in effect.
#include "backend_fixture.hpp"
#include "spikeforge/models.hpp"

#include <cmath>
#include <functional>
#include <limits>
#include <string>

using namespace spikeforge;
using sftest::errorOf;
using sftest::expectContains;

namespace {

constexpr double kDt = 0.1; // [ms]

// LIF at rest (V = Vrest = -65 mV, C = 1 nF, TauM = 20 ms) driven by Ioffset: R = 20 MOhm, so
// Ioffset = 0.5 nA moves V towards -55 mV, below the -50 mV threshold.
void addCell(Model& m) {
    auto& ng = m.addNeuronGroup("Cell", 8, models::LIF(),
                                {{"C", 1.0},
                                 {"TauM", 20.0},
                                 {"Vrest", -65.0},
                                 {"Vreset", -65.0},
                                 {"Vthresh", -50.0},
                                 {"Ioffset", 0.0},
                                 {"TauRefrac", 2.0}},
                                {{"V", -65.0}, {"RefracTime", 0.0}});
    ng.setParamDynamic("Ioffset");
    ng.setParamDynamic("TauRefrac");
}

class DynamicParamTest : public sftest::BackendTest {};

TEST_P(DynamicParamTest, RefusedValuesNameGroupAndParameterAndKeepTheOldValue) {
    Model m("dynamic_checked");
    m.setDT(kDt);
    addCell(m);
    Simulation sim(m, prefs(1));
    sim.setDynamicParam("Cell", "Ioffset", 0.5);
    const double inf = std::numeric_limits<double>::infinity();
    expectContains(errorOf<ModelError>([&] { sim.setDynamicParam("Cell", "Ioffset", inf); }),
                   {"setDynamicParam", "'Cell'", "'Ioffset'", "not finite", "keeps its value 0.5"});
    expectContains(errorOf<ModelError>([&] { sim.setDynamicParam("Cell", "Ioffset", 1e39); }),
                   {"'Cell'", "'Ioffset'", "overflows single precision"});
    expectContains(errorOf<ModelError>([&] { sim.setDynamicParam("Cell", "TauRefrac", -1.0); }),
                   {"'Cell'", "TauRefrac", "keeps its value 2"});
    expectContains(
        errorOf<ModelError>([&] { sim.setDynamicParam("Cell", "Ioffset", std::nan("")); }),
        {"'Cell'", "'Ioffset'", "not finite"});

    // Had any refused value been stored, V would be inf or NaN; with Ioffset = 0.5 it follows
    // V(n) = alpha - ExpTC^n (alpha - V0), alpha = -55 mV.
    const int steps = 50;
    sim.run(steps);
    sim.pull("Cell", "V");
    const double expected = -55.0 - std::pow(std::exp(-kDt / 20.0), steps) * (-55.0 + 65.0);
    for (float v : sim.view<float>("Cell", "V"))
        EXPECT_NEAR(v, expected, 1e-3);
}

TEST_P(DynamicParamTest, DoublePrecisionTakesLargeValues) {
    Model m("dynamic_double");
    m.setDT(kDt);
    m.setPrecision(Precision::Double);
    addCell(m);
    Simulation sim(m, prefs(1));
    EXPECT_NO_THROW(sim.setDynamicParam("Cell", "Ioffset", 1e39));  // finite in double
    EXPECT_NO_THROW(sim.setDynamicParam("Cell", "TauRefrac", 0.0)); // the domain allows 0
    sim.setDynamicParam("Cell", "Ioffset", 0.0);
    sim.run(1);
    sim.pull("Cell", "V");
    EXPECT_EQ(sim.view<double>("Cell", "V")[0], -65.0);
}

// Current sources and synapse groups go through the same checks, under their own names.
TEST_P(DynamicParamTest, CurrentSourceAndSynapseParameters) {
    Model m("dynamic_owners");
    m.setDT(kDt);
    addCell(m);
    m.addCurrentSource("Noise", models::GaussianNoise(), "Cell", {{"mean", 0.0}, {"sd", 0.1}}, {})
        .setParamDynamic("sd");
    m.addSynapseGroup("Syn", MatrixType::Dense, 0, "Cell", "Cell",
                      {models::StaticPulseConstantWeight(), {{"g", 0.1}}, {}, {}, {}},
                      {models::DeltaCurr(), {}, {}})
        .setWUParamDynamic("g");
    Simulation sim(m, prefs(1));
    expectContains(errorOf<ModelError>([&] { sim.setDynamicParam("Noise", "sd", -0.5); }),
                   {"'Noise'", "sd", "keeps its value 0.1"});
    expectContains(errorOf<ModelError>([&] { sim.setDynamicParam("Syn", "g", -1e300); }),
                   {"'Syn'", "weight update params", "'g'", "overflows single precision"});
    EXPECT_NO_THROW(sim.setDynamicParam("Noise", "sd", 0.0));
    EXPECT_NO_THROW(sim.setDynamicParam("Syn", "g", -2.0));
}

SF_INSTANTIATE_BACKEND_TESTS(DynamicParamTest);

} // namespace
