// BackendPreferences::fastMath on every backend: the build really uses the fast flags (results
// differ from the exact build in the last bits, so it is also a separate cache entry), stays
// close to the exact build, and NaN and Inf keep their meaning (isnan/isinf are not folded away,
// as -ffinite-math-only or -cl-fast-relaxed-math would do).
#include "backend_fixture.hpp"
#include "spikeforge/model.hpp"
#include "spikeforge/models.hpp"

#include <cmath>
#include <vector>

using namespace spikeforge;

namespace {

constexpr unsigned kNeurons = 1000;

// Leaky integration towards a per-neuron drive, divided by constants (parameters) the way
// models are written: fast maths turns the divisions into multiplications by a reciprocal.
void buildLeaky(Model& m) {
    NeuronModel leak;
    leak.name = "Leak";
    leak.params = {"tau", "scale"}; // [ms] [1]
    leak.vars = {{"v"}, {"drive"}};
    leak.simCode = "v += dt * (drive - v) / tau;\n"
                   "drive = drive / scale + 0.25 * sin(t / 7.0);";
    m.setDT(0.1);
    m.addNeuronGroup("N", kNeurons, leak, {{"tau", 20.0}, {"scale", 1.0007}},
                     {{"v", init::Uniform(-1.0, 1.0)}, {"drive", init::Uniform(-3.0, 3.0)}});
}

std::vector<float> runLeaky(BackendPreferences prefs, bool fastMath) {
    prefs.fastMath = fastMath;
    Model m("fast_math_leak");
    buildLeaky(m);
    Simulation sim(m, prefs);
    sim.run(2000);
    sim.pull("N", "v");
    const auto v = sim.view<float>("N", "v");
    return {v.begin(), v.end()};
}

using FastMathTest = sftest::BackendTest;

TEST_P(FastMathTest, StaysCloseToTheExactBuildButIsAnotherBuild) {
    const std::vector<float> exact = runLeaky(prefs(1), false);
    const std::vector<float> fast = runLeaky(prefs(1), true);
    ASSERT_EQ(exact.size(), fast.size());
    size_t different = 0;
    double worst = 0.0;
    for (size_t i = 0; i < exact.size(); i++) {
        ASSERT_TRUE(std::isfinite(exact[i]) && std::isfinite(fast[i])) << i;
        different += exact[i] != fast[i];
        worst = std::max(worst, std::fabs(double(exact[i]) - fast[i]) /
                                    std::max(1.0, std::fabs(double(exact[i]))));
    }
    // 2000 steps of rounding differences in a contracting update stay at float precision.
    EXPECT_LE(worst, 1e-4);
    // The fast flags were used: reciprocals and reassociation round differently somewhere.
    EXPECT_GT(different, 0u) << "the fast-math build computed exactly what the exact one did";
}

TEST_P(FastMathTest, NanAndInfKeepTheirMeaning) {
    NeuronModel probe;
    probe.name = "Probe";
    probe.vars = {{"zero"}, {"q"}, {"r"}, {"isNan", "int"}, {"isInf", "int"}};
    // zero is a variable, so nothing is known at compile time but what the flags allow.
    probe.simCode = "q = zero / zero;\n"
                    "r = 1.0 / zero;\n"
                    "isNan = isnan(q) ? 1 : 0;\n"
                    "isInf = isinf(r) ? 1 : 0;";
    Model m("fast_math_nan");
    m.setDT(1.0);
    m.addNeuronGroup("P", 40, probe, {},
                     {{"zero", 0.0}, {"q", 0.0}, {"r", 0.0}, {"isNan", 0.0}, {"isInf", 0.0}});
    BackendPreferences p = prefs(1);
    p.fastMath = true;
    Simulation sim(m, p);
    sim.run(3);
    for (const char* var : {"isNan", "isInf"}) {
        sim.pull("P", var);
        for (int32_t flag : sim.view<int32_t>("P", var))
            ASSERT_EQ(flag, 1) << var;
    }
    sim.pull("P", "q");
    for (float x : sim.view<float>("P", "q"))
        ASSERT_TRUE(std::isnan(x));
}

SF_INSTANTIATE_BACKEND_TESTS(FastMathTest);

} // namespace
