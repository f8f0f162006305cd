// Variables initialised from values given in the model (VarInit(values), docs/models.md
// "Initial values given as arrays"): one per element or per element and batch element, one per
// synapse in Simulation::synapses order, one per kernel weight; restored by reset() and
// resetState(); a wrong count is a ModelError naming the group, the variable and both counts.
// Every backend.
#include "backend_fixture.hpp"

#include "spikeforge/models.hpp"

#include <string>
#include <vector>

using namespace spikeforge;

namespace {

constexpr unsigned kBatch = 2;

NeuronModel counter() {
    NeuronModel nm;
    nm.name = "Counter";
    nm.vars = {{"x"}, {"k", "int32_t", VarAccess::ReadOnly}};
    nm.simCode = "x += 1.0;";
    return nm;
}

std::vector<double> ramp(size_t n, double scale) {
    std::vector<double> v(n);
    for (size_t i = 0; i < n; i++)
        v[i] = scale * double(i) - 3.0;
    return v;
}

class VarValues : public sftest::BackendTest {};

TEST_P(VarValues, NeuronVariablesTakeValuesPerElementOrPerBatchElement) {
    Model m("var_values_neurons");
    m.setBatchSize(kBatch);
    m.setPrecision(Precision::Double);
    // x: one value per element and batch element; k (shared by the batch): one per element.
    m.addNeuronGroup("N", 5, counter(), {},
                     {{"x", VarInit(ramp(5 * kBatch, 0.5))}, {"k", VarInit(ramp(5, 2.0))}});
    BackendPreferences p = prefs();
    p.keepInitialState = true;
    Simulation sim(m, p);
    auto check = [&](double added) {
        sim.pull("N", "x");
        sim.pull("N", "k");
        const auto x = sim.view<double>("N", "x");
        const auto k = sim.view<int32_t>("N", "k");
        const auto wantX = ramp(5 * kBatch, 0.5);
        const auto wantK = ramp(5, 2.0);
        for (size_t i = 0; i < wantX.size(); i++)
            EXPECT_EQ(x[i], wantX[i] + added) << i;
        for (size_t i = 0; i < wantK.size(); i++)
            EXPECT_EQ(k[i], int32_t(wantK[i])) << i;
    };
    check(0.0);
    sim.run(3);
    check(3.0);
    sim.resetState();
    check(0.0);
    sim.run(2);
    sim.reset();
    check(0.0);
}

TEST_P(VarValues, SynapseVariablesTakeOneValuePerSynapseInCodecOrder) {
    for (MatrixType type : {MatrixType::Dense, MatrixType::Sparse}) {
        SCOPED_TRACE(matrixTypeName(type));
        Model m(std::string("var_values_") + matrixTypeName(type));
        m.setPrecision(Precision::Double);
        m.addNeuronGroup("Pre", 4, counter(), {}, {{"x", 0.0}, {"k", 0.0}});
        m.addNeuronGroup("Post", 6, counter(), {}, {{"x", 0.0}, {"k", 0.0}});
        const size_t synapses = type == MatrixType::Dense ? 24 : 12;
        const WeightUpdateInit w{
            models::StaticPulse(), {}, {{"g", VarInit(ramp(synapses, 0.25))}}, {}, {}};
        if (type == MatrixType::Dense)
            m.addSynapseGroup("S", type, 0, "Pre", "Post", w, {models::DeltaCurr(), {}, {}});
        else
            m.addSynapseGroup("S", type, 0, "Pre", "Post", w, {models::DeltaCurr(), {}, {}},
                              init::FixedNumberPostWithReplacement(3));
        Simulation sim(m, prefs());
        EXPECT_EQ(sim.synapseValues("S", "g", 0), ramp(synapses, 0.25));
    }
}

TEST_P(VarValues, ToeplitzKernelsAndCustomUpdateVariablesTakeValues) {
    Model m("var_values_kernel");
    m.setPrecision(Precision::Double);
    m.addNeuronGroup("Img", 16, counter(), {}, {{"x", 0.0}, {"k", 0.0}});
    m.addNeuronGroup("Map", 9, counter(), {}, {{"x", 0.0}, {"k", 0.0}});
    m.addSynapseGroup("T", MatrixType::Toeplitz, 0, "Img", "Map",
                      {models::StaticPulse(), {}, {{"g", VarInit({1.0, 2.0, 3.0, 4.0})}}, {}, {}},
                      {models::DeltaCurr(), {}, {}},
                      init::Conv2D({{"conv_kh", 2},
                                    {"conv_kw", 2},
                                    {"conv_oc", 1},
                                    {"conv_sh", 1},
                                    {"conv_sw", 1},
                                    {"conv_padh", 0},
                                    {"conv_padw", 0},
                                    {"conv_oh", 3},
                                    {"conv_ow", 3},
                                    {"conv_ih", 4},
                                    {"conv_iw", 4},
                                    {"conv_ic", 1}}));
    CustomUpdateModel scale;
    scale.name = "Scale";
    scale.vars = {{"s"}};
    scale.varRefs = {{"x"}};
    scale.updateCode = "x = s;";
    m.addCustomUpdate("CU", "Set", scale, {}, {{"s", VarInit(ramp(9, 1.0))}},
                      {{"x", {"Map", "x"}}});
    Simulation sim(m, prefs());
    sim.pull("T", "g");
    const auto g = sim.view<double>("T", "g");
    EXPECT_EQ(std::vector<double>(g.begin(), g.end()), (std::vector<double>{1, 2, 3, 4}));
    sim.customUpdate("Set");
    sim.pull("Map", "x");
    const auto x = sim.view<double>("Map", "x");
    EXPECT_EQ(std::vector<double>(x.begin(), x.end()), ramp(9, 1.0));
}

TEST_P(VarValues, AWrongCountOrAProceduralGroupIsRefusedNamingTheVariable) {
    {
        Model m("var_values_count");
        m.setBatchSize(kBatch);
        m.addNeuronGroup("N", 5, counter(), {}, {{"x", VarInit(ramp(7, 1.0))}, {"k", 0.0}});
        sftest::expectError<ModelError>([&] { Simulation sim(m, prefs()); },
                                        {"group 'N', variable 'x': 7 values given",
                                         "one per element (5)",
                                         "one per element and batch element (10)"});
    }
    {
        Model m("var_values_synapses");
        m.addNeuronGroup("Pre", 4, counter(), {}, {{"x", 0.0}, {"k", 0.0}});
        m.addNeuronGroup("Post", 6, counter(), {}, {{"x", 0.0}, {"k", 0.0}});
        m.addSynapseGroup("S", MatrixType::Sparse, 0, "Pre", "Post",
                          {models::StaticPulse(), {}, {{"g", VarInit(ramp(5, 1.0))}}, {}, {}},
                          {models::DeltaCurr(), {}, {}}, init::FixedNumberPostWithReplacement(3));
        sftest::expectError<ModelError>(
            [&] { Simulation sim(m, prefs()); },
            {"group 'S', variable 'g': 5 values given", "one per synapse (12)"});
    }
    {
        Model m("var_values_procedural");
        m.addNeuronGroup("Pre", 4, counter(), {}, {{"x", 0.0}, {"k", 0.0}});
        m.addNeuronGroup("Post", 6, counter(), {}, {{"x", 0.0}, {"k", 0.0}});
        m.addSynapseGroup("S", MatrixType::Procedural, 0, "Pre", "Post",
                          {models::StaticPulse(), {}, {{"g", VarInit(ramp(5, 1.0))}}, {}, {}},
                          {models::DeltaCurr(), {}, {}}, init::FixedProbability(0.5));
        sftest::expectError<ModelError>(
            [&] { m.finalise(); },
            {"'S'", "variable 'g' is given as values", "Procedural group stores no synapses"});
    }
    {
        Model m("var_values_range");
        m.addNeuronGroup("N", 2, counter(), {}, {{"x", 0.0}, {"k", VarInit({1.0, 0.5})}});
        sftest::expectError<ModelError>([&] { m.finalise(); }, {"'N'", "k[1]"});
    }
}

} // namespace

SF_INSTANTIATE_BACKEND_TESTS(VarValues);
