// What custom-update code can read besides its variables: the time `t` of the step it runs
// after, `num_batch`, and the sizes it spans (`num_neurons`, or `num_pre` and `num_post` when
// WU-shaped), on every backend, with updates of different sizes merged into one kernel.
#include "backend_fixture.hpp"

#include "spikeforge/models.hpp"

#include <cmath>

namespace {

using namespace spikeforge;
using A = CustomUpdateVarAccess;
using sftest::BackendTest;

constexpr double kDt = 0.5; // [ms]
constexpr unsigned kBatch = 3;

NeuronModel holder() {
    NeuronModel n;
    n.name = "Holder";
    n.vars = {{"x"}};
    return n;
}

// Every term is an exact integer in double precision, so the check is exact.
CustomUpdateModel neuronShaped() {
    CustomUpdateModel m;
    m.name = "NeuronSizes";
    m.vars = {{"out", "scalar", A::ReadWrite}};
    m.varRefs = {{"x", "scalar", A::ReadOnly}};
    m.updateCode = "out = t * 1.0e6 + num_neurons * 1.0e3 + num_batch * 10.0 + batch;";
    return m;
}

CustomUpdateModel wuShaped() {
    CustomUpdateModel m;
    m.name = "SynapseSizes";
    m.vars = {{"out", "scalar", A::ReadWrite}};
    m.varRefs = {{"g", "scalar", A::ReadOnly}};
    m.updateCode = "out = t * 1.0e6 + num_pre * 1.0e3 + num_post * 10.0 + num_batch;";
    return m;
}

using CustomUpdateBuiltinsTest = BackendTest;

TEST_P(CustomUpdateBuiltinsTest, TimeBatchAndSizesReachTheCode) {
    Model m("cu_builtins");
    m.setDT(kDt);
    m.setPrecision(Precision::Double);
    m.setBatchSize(kBatch);
    m.addNeuronGroup("A", 7, holder(), {}, {{"x", 0.0}});
    m.addNeuronGroup("B", 5, holder(), {}, {{"x", 0.0}});
    m.addSynapseGroup("S", MatrixType::Dense, 0, "A", "B",
                      {models::StaticPulse(), {}, {{"g", 1.0}}, {}, {}},
                      {models::DeltaCurr(), {}, {}});
    // Same model on groups of two sizes: merged, so the sizes must come from each group's fields.
    m.addCustomUpdate("OnA", "G", neuronShaped(), {}, {{"out", 0.0}}, {{"x", {"A", "x"}}});
    m.addCustomUpdate("OnB", "G", neuronShaped(), {}, {{"out", 0.0}}, {{"x", {"B", "x"}}});
    m.addCustomUpdateWU("OnS", "G", wuShaped(), {}, {{"out", 0.0}}, {{"g", {"S", "g"}}});
    Simulation sim(m, prefs());
    sim.run(4);
    const double t = sim.time();
    ASSERT_EQ(t, 4 * kDt);
    sim.customUpdate("G");
    for (const auto& [group, n] : {std::pair<std::string, unsigned>{"OnA", 7}, {"OnB", 5}}) {
        sim.pull(group, "out");
        const auto out = sim.view<double>(group, "out");
        ASSERT_EQ(out.size(), size_t(kBatch) * n);
        for (unsigned b = 0; b < kBatch; b++)
            for (unsigned i = 0; i < n; i++)
                EXPECT_EQ(out[size_t(b) * n + i], t * 1e6 + n * 1e3 + kBatch * 10.0 + b)
                    << group << " batch " << b << " neuron " << i;
    }
    sim.pull("OnS", "out");
    const auto out = sim.view<double>("OnS", "out");
    ASSERT_EQ(out.size(), size_t(7) * 5); // weights are shared by the batch: so is the update
    for (double v : out)
        ASSERT_EQ(v, t * 1e6 + 7 * 1e3 + 5 * 10.0 + kBatch);
}

SF_INSTANTIATE_BACKEND_TESTS(CustomUpdateBuiltinsTest);

} // namespace
