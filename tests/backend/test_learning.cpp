// The built-in learning pieces: Adam against a reference implementation, softmax against a direct
// computation, transposes, and a batch of networks learning one set of weights on the device.
#include "backend_fixture.hpp"
#include "spikeforge/models.hpp"

#include <cmath>
#include <random>

using namespace spikeforge;
using A = CustomUpdateVarAccess;

namespace {

class LearningTest : public sftest::BackendTest {};

NeuronModel params() {
    NeuronModel n;
    n.name = "Params";
    n.vars = {{"w", "scalar", VarAccess::ReadOnly},
              {"dw", "scalar", VarAccess::ReadOnly},
              {"x"},
              {"out"},
              {"yhat", "scalar", VarAccess::ReadOnlySharedNeuron},
              {"y", "scalar", VarAccess::ReadOnlySharedNeuron}};
    return n;
}

VarInitMap zeros() {
    return {{"w", 0.0}, {"dw", 0.0}, {"x", 0.0}, {"out", 0.0}, {"yhat", 0.0}, {"y", 0.0}};
}

// Adam after k steps equals a host reference of the update (Kingma & Ba, Algorithm 1).
TEST_P(LearningTest, AdamMatchesReference) {
    constexpr unsigned kN = 33, kSteps = 25;
    constexpr double kB1 = 0.9, kB2 = 0.999, kEps = 1e-8, kAlpha = 0.01;
    Model m("adam");
    m.setPrecision(Precision::Double);
    m.addNeuronGroup("P", kN, params(), {}, zeros());
    auto& adam = m.addCustomUpdate(
        "Opt", "Adam", models::Adam(),
        {{"beta1", kB1}, {"beta2", kB2}, {"epsilon", kEps}, {"alpha", kAlpha}},
        {{"m", 0.0}, {"v", 0.0}}, {{"gradient", {"P", "dw"}}, {"variable", {"P", "w"}}});
    adam.setParamDynamic("alpha");
    Simulation sim(m, prefs());
    std::mt19937 rng(3);
    std::normal_distribution<double> g(0.0, 1.0);
    std::vector<double> w(kN, 0.0), mm(kN, 0.0), vv(kN, 0.0);
    for (unsigned t = 1; t <= kSteps; t++) {
        const double alpha = t > 20 ? kAlpha / 10 : kAlpha; // a schedule via the dynamic param
        if (t == 21) sim.setDynamicParam("Opt", "alpha", alpha);
        sim.pull("P", "dw");
        auto dw = sim.view<double>("P", "dw");
        for (unsigned i = 0; i < kN; i++) {
            dw[i] = g(rng) + 0.1 * i;
            mm[i] = kB1 * mm[i] + (1 - kB1) * dw[i];
            vv[i] = kB2 * vv[i] + (1 - kB2) * dw[i] * dw[i];
            const double mHat = mm[i] / (1 - std::pow(kB1, t));
            const double vHat = vv[i] / (1 - std::pow(kB2, t));
            w[i] -= alpha * mHat / (std::sqrt(vHat) + kEps);
        }
        sim.push("P", "dw");
        sim.customUpdate("Adam");
    }
    sim.pull("P", "w");
    for (unsigned i = 0; i < kN; i++)
        EXPECT_NEAR(sim.view<double>("P", "w")[i], w[i], 1e-12) << i;
}

TEST_P(LearningTest, SoftmaxMatchesDirectComputation) {
    for (unsigned n : {1u, 31u, 33u, 1000u}) {
        constexpr unsigned kBatch = 2;
        Model m("softmax");
        m.setBatchSize(kBatch);
        m.addNeuronGroup("P", n, params(), {}, zeros());
        models::addSoftmax(m, "Soft", "Softmax", {"P", "x"}, {"P", "out"});
        Simulation sim(m, prefs());
        std::mt19937 rng(n);
        std::uniform_real_distribution<float> d(-5.0f, 5.0f);
        sim.pull("P", "x");
        for (float& x : sim.view<float>("P", "x"))
            x = d(rng);
        sim.push("P", "x");
        sim.customUpdate("Softmax");
        sim.pull("P", "out");
        const auto x = sim.view<float>("P", "x");
        const auto out = sim.view<float>("P", "out");
        for (unsigned b = 0; b < kBatch; b++) {
            double mx = -1e30, sum = 0.0;
            for (unsigned i = 0; i < n; i++)
                mx = std::max<double>(mx, x[b * n + i]);
            for (unsigned i = 0; i < n; i++)
                sum += std::exp(x[b * n + i] - mx);
            for (unsigned i = 0; i < n; i++)
                ASSERT_NEAR(out[b * n + i], std::exp(x[b * n + i] - mx) / sum, 1e-6)
                    << "n " << n << " batch " << b << " i " << i;
        }
    }
}

WeightUpdateModel weights() {
    WeightUpdateModel w;
    w.name = "Weights";
    w.vars = {{"g", "scalar", VarAccess::ReadOnly}};
    return w;
}

TEST_P(LearningTest, TransposeOfNonSquareDenseWeights) {
    constexpr unsigned kA = 7, kB = 13;
    Model m("transpose");
    m.addNeuronGroup("A", kA, params(), {}, zeros());
    m.addNeuronGroup("B", kB, params(), {}, zeros());
    for (auto [name, src, tgt] : {std::tuple{"Fwd", "A", "B"}, std::tuple{"Back", "B", "A"}})
        m.addSynapseGroup(name, MatrixType::Dense, 0, src, tgt,
                          {weights(), {}, {{"g", init::Uniform(-1.0, 1.0)}}, {}, {}},
                          {models::DeltaCurr(), {}, {}});
    m.addCustomUpdateWU("T", "Transpose", models::Transpose(), {}, {},
                        {{"variable", {"Fwd", "g", "Back", "g"}}});
    Simulation sim(m, prefs());
    sim.pull("Back", "g");
    const std::vector<float> before(sim.view<float>("Back", "g").begin(),
                                    sim.view<float>("Back", "g").end());
    sim.customUpdate("Transpose");
    sim.pull("Fwd", "g");
    sim.pull("Back", "g");
    const auto fwd = sim.view<float>("Fwd", "g");
    const auto back = sim.view<float>("Back", "g");
    bool changed = false;
    for (unsigned i = 0; i < kA; i++)
        for (unsigned j = 0; j < kB; j++) {
            ASSERT_EQ(back[j * kA + i], fwd[i * kB + j]) << i << "," << j;
            changed = changed || before[j * kA + i] != back[j * kA + i];
        }
    EXPECT_TRUE(changed); // the two groups started from different random weights
}

TEST_P(LearningTest, TransposeValidation) {
    auto build = [](Model& m, unsigned backPre, MatrixType backMatrix,
                    const CustomUpdateModel& cu) {
        m.addNeuronGroup("A", 7, params(), {}, zeros());
        m.addNeuronGroup("B", 13, params(), {}, zeros());
        m.addNeuronGroup("C", backPre, params(), {}, zeros());
        m.addSynapseGroup("Fwd", MatrixType::Dense, 0, "A", "B",
                          {weights(), {}, {{"g", 0.0}}, {}, {}}, {models::DeltaCurr(), {}, {}});
        std::optional<SparseConnectivityInit> conn;
        if (backMatrix == MatrixType::Sparse) conn = init::OneToOne();
        m.addSynapseGroup("Back", backMatrix, 0, "C", "A", {weights(), {}, {{"g", 0.0}}, {}, {}},
                          {models::DeltaCurr(), {}, {}}, conn);
        VarInitMap inits;
        for (const auto& v : cu.vars)
            inits[v.name] = 0.0;
        m.addCustomUpdateWU("T", "Transpose", cu, {}, inits,
                            {{"variable", {"Fwd", "g", "Back", "g"}}});
    };
    auto expectError = [](Model& m, std::initializer_list<std::string> parts) {
        try {
            m.finalise();
            FAIL() << "no exception";
        } catch (const ModelError& e) {
            for (const auto& p : parts)
                EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
        }
    };
    {
        Model m;
        build(m, 12, MatrixType::Dense, models::Transpose());
        expectError(m, {"'T'", "wrong shape", "12x7", "13x7"});
    }
    {
        Model m;
        build(m, 13, MatrixType::Sparse, models::Transpose());
        expectError(m, {"'T'", "Dense"});
    }
    CustomUpdateModel withReduction = models::Transpose();
    withReduction.vars = {{"s", "scalar", A::ReduceBatchSum}};
    withReduction.updateCode = "s = variable;";
    {
        Model m;
        build(m, 13, MatrixType::Dense, withReduction);
        expectError(m, {"'T'", "transpose cannot be combined with a reduction"});
    }
}

// Regression of a linear readout ŷ_b = Σ_i w_i x_ib to targets y_b by a batch of B networks with
// different inputs: per-batch gradients 2(ŷ_b − y_b)x_ib are summed over the batch on the device
// (BatchReduceAndZero) and applied by Adam. Only inputs and targets come from the host.
TEST_P(LearningTest, BatchOfNetworksLearnsOneSetOfWeights) {
    constexpr unsigned kN = 16, kBatch = 8, kSteps = 150;
    Model m("regression");
    m.setBatchSize(kBatch);
    m.addNeuronGroup("P", kN, params(), {}, zeros());
    CustomUpdateModel predict;
    predict.name = "Predict";
    predict.varRefs = {{"w", "scalar", A::ReadOnly},
                       {"x", "scalar", A::ReadOnly},
                       {"yhat", "scalar", A::ReduceNeuronSum}};
    predict.updateCode = "yhat = w * x;";
    m.addCustomUpdate("Pred", "Forward", predict, {}, {},
                      {{"w", {"P", "w"}}, {"x", {"P", "x"}}, {"yhat", {"P", "yhat"}}});
    CustomUpdateModel gradient;
    gradient.name = "Gradient";
    gradient.vars = {{"grad", "scalar", A::ReadWrite}};
    gradient.varRefs = {{"x", "scalar", A::ReadOnly},
                        {"yhat", "scalar", A::ReadOnlySharedNeuron},
                        {"y", "scalar", A::ReadOnlySharedNeuron}};
    gradient.updateCode = "grad = 2.0 * (yhat - y) * x / 8.0;";
    m.addCustomUpdate("Grad", "Backward", gradient, {}, {{"grad", 0.0}},
                      {{"x", {"P", "x"}}, {"yhat", {"P", "yhat"}}, {"y", {"P", "y"}}});
    m.addCustomUpdate("Reduce", "Backward", models::BatchReduceAndZero(), {}, {},
                      {{"gradient", {"Grad", "grad"}}, {"reducedGradient", {"P", "dw"}}});
    m.addCustomUpdate("Opt", "Backward", models::Adam(),
                      {{"beta1", 0.9}, {"beta2", 0.999}, {"epsilon", 1e-8}, {"alpha", 0.05}},
                      {{"m", 0.0}, {"v", 0.0}},
                      {{"gradient", {"P", "dw"}}, {"variable", {"P", "w"}}});
    Simulation sim(m, prefs());

    std::mt19937 rng(5);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::vector<float> wTrue(kN);
    for (auto& w : wTrue)
        w = nd(rng);
    std::vector<double> losses;
    for (unsigned step = 0; step < kSteps; step++) {
        sim.pull("P", "x");
        sim.pull("P", "y");
        auto x = sim.view<float>("P", "x");
        auto y = sim.view<float>("P", "y");
        for (unsigned b = 0; b < kBatch; b++) {
            double target = 0.0;
            for (unsigned i = 0; i < kN; i++) {
                x[b * kN + i] = nd(rng);
                target += wTrue[i] * x[b * kN + i];
            }
            y[b] = static_cast<float>(target);
        }
        sim.push("P", "x");
        sim.push("P", "y");
        sim.customUpdate("Forward");
        sim.pull("P", "yhat");
        double loss = 0.0;
        for (unsigned b = 0; b < kBatch; b++)
            loss += std::pow(sim.view<float>("P", "yhat")[b] - y[b], 2) / kBatch;
        losses.push_back(loss);
        sim.customUpdate("Backward");
    }
    auto mean = [&](size_t from, size_t to) {
        double s = 0.0;
        for (size_t i = from; i < to; i++)
            s += losses[i];
        return s / double(to - from);
    };
    // Loss falls on average from window to window (fresh random inputs make single steps noisy).
    double previous = mean(0, 30);
    for (size_t w = 30; w < kSteps; w += 30) {
        const double now = mean(w, w + 30);
        EXPECT_LT(now, previous) << "window starting at step " << w;
        previous = now;
    }
    EXPECT_LT(mean(kSteps - 30, kSteps), 0.05 * mean(0, 30));
}

SF_INSTANTIATE_BACKEND_TESTS(LearningTest);

} // namespace
