// Namespaces as in GeNN (docs/models.md "Names of neighbouring groups"): a current source or a
// postsynaptic model may have a variable named as one of its target neuron group's; each
// updates its own, and the target's stays readable explicitly as `x_post`. Every backend.
#include "backend_fixture.hpp"

#include "spikeforge/models.hpp"

#include <string>

using namespace spikeforge;

namespace {

class Namespaces : public sftest::BackendTest {};

TEST_P(Namespaces, SameNamedVariablesOfATargetAndItsInputsUpdateIndependently) {
    NeuronModel nm;
    nm.name = "Counter";
    nm.vars = {{"x"}};
    nm.simCode = "x += 1.0;";
    CurrentSourceModel cs;
    cs.name = "SameNameCS";
    cs.vars = {{"x"}, {"seen"}};
    // Runs before the neuron's code in each step: it sees the target's x of the step before.
    cs.injectionCode = "x += 10.0;\nseen = x_post;\ninjectCurrent(0.0);";
    PostsynapticModel ps;
    ps.name = "SameNamePS";
    ps.vars = {{"x"}, {"seen"}};
    ps.simCode = "x += 100.0;\nseen = x_post * 2.0;\ninjectCurrent(inSyn);\ninSyn = 0.0;";
    Model m("namespaces");
    m.setPrecision(Precision::Double);
    m.addNeuronGroup("N", 4, nm, {}, {{"x", 0.0}});
    m.addNeuronGroup("Src", 1, nm, {}, {{"x", 0.0}});
    m.addCurrentSource("C", cs, "N", {}, {{"x", 0.0}, {"seen", -1.0}});
    m.addSynapseGroup("S", MatrixType::Dense, 0, "Src", "N",
                      {models::StaticPulse(), {}, {{"g", 0.0}}, {}, {}},
                      {ps, {}, {{"x", 0.0}, {"seen", -1.0}}});
    Simulation sim(m, prefs());
    sim.run(3);
    auto each = [&](const std::string& g, const std::string& v, double want) {
        sim.pull(g, v);
        for (double value : sim.view<double>(g, v))
            EXPECT_EQ(value, want) << g << "." << v;
    };
    each("N", "x", 3.0);
    each("C", "x", 30.0);
    each("C", "seen", 2.0);
    each("S", "x", 300.0);
    each("S", "seen", 4.0);
}

} // namespace

SF_INSTANTIATE_BACKEND_TESTS(Namespaces);
