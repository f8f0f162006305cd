// Synapse dynamics (WeightUpdateModel::synapseDynamicsCode): code run for every synapse in every
// step, spikes or not. A gap-junction pair against its closed form (the Euler map exactly, the
// continuous solution within the method's error); graded synapses on every connectivity layout
// against a trace integrated here from the synapses the group reports; per-synapse variables
// written by the code; on every backend, batch 1 and 3.
#include "backend_fixture.hpp"
#include "probe_models.hpp"

#include "spikeforge/models.hpp"

#include <cmath>
#include <tuple>
#include <vector>

namespace {

using namespace spikeforge;
using sftest::expectError;

constexpr double kDt = 0.1; // [ms]

// V follows a known wave from the first step on (its initial value before): no spikes.
NeuronModel wave() {
    NeuronModel m;
    m.name = "Wave";
    m.vars = {{"V"}};
    m.simCode = "V = sin(0.3 * t + 0.7 * id) + 0.5 * batch;";
    return m;
}

// The wave's value the synapse code of step n reads (the previous step's update left it).
double waveAt(unsigned n, unsigned id, unsigned batch, double initial) {
    if (n == 0) return initial;
    return std::sin(0.3 * ((n - 1) * kDt) + 0.7 * id) + 0.5 * batch;
}

// A graded synapse: input tanh(V_pre) g every step; with `counts`, the synapse also sums the
// V_pre it saw into its own variable.
WeightUpdateModel graded(bool counts) {
    WeightUpdateModel m;
    m.name = counts ? "GradedCounting" : "Graded";
    m.vars = {{"g", "scalar", VarAccess::ReadOnly}};
    m.synapseDynamicsCode = "addToPost(g * tanh(V_pre));";
    if (counts) {
        m.vars.push_back({"seen"});
        m.synapseDynamicsCode += "\nseen += V_pre;";
    }
    return m;
}

// Distinct weights from the pair (or, for a kernel weight, its index).
InitSnippet pairWeights(bool kernel) {
    InitSnippet s;
    s.name = kernel ? "KernelWeights" : "PairWeights";
    s.code = kernel ? "value = 0.1 * (1 + id % 7);"
                    : "value = 0.1 * (1 + (id_pre * 7 + id_post * 3) % 11);";
    return s;
}

struct Layout {
    std::string name;
    MatrixType type;
    unsigned pre, post;
};

const std::vector<Layout>& layouts() {
    static const std::vector<Layout> all = {{"Dense", MatrixType::Dense, 7, 5},
                                            {"Sparse", MatrixType::Sparse, 9, 6},
                                            {"Procedural", MatrixType::Procedural, 9, 6},
                                            {"BlockSparse", MatrixType::BlockSparse, 20, 24},
                                            {"Toeplitz", MatrixType::Toeplitz, 16, 8}};
    return all;
}

void addGraded(Model& m, const Layout& l) {
    const bool stores = l.type != MatrixType::Procedural && l.type != MatrixType::Toeplitz;
    const bool kernel = l.type == MatrixType::Toeplitz;
    VarInitMap vars = {{"g", VarInit(pairWeights(kernel), {})}};
    if (stores) vars["seen"] = 0.0;
    const WeightUpdateInit wu{graded(stores), {}, vars, {}, {}};
    const PostsynapticInit ps{models::DeltaCurr(), {}, {}};
    switch (l.type) {
    case MatrixType::Dense:
        m.addSynapseGroup("Syn", l.type, 0, "Pre", "Post", wu, ps);
        break;
    case MatrixType::Sparse:
    case MatrixType::Procedural:
        m.addSynapseGroup("Syn", l.type, 0, "Pre", "Post", wu, ps, init::FixedProbability(0.5));
        break;
    case MatrixType::BlockSparse: {
        BlockSparseInit b;
        b.blockSize = 8;
        b.density = 0.5;
        m.addSynapseGroup("Syn", l.type, 0, "Pre", "Post", wu, ps, b);
        break;
    }
    case MatrixType::Toeplitz:
        m.addSynapseGroup("Syn", l.type, 0, "Pre", "Post", wu, ps, sftest::conv4x4());
        break;
    }
}

class SynapseDynamicsTest
    : public ::testing::TestWithParam<std::tuple<std::string, unsigned, size_t>> {
protected:
    BackendPreferences prefs() const { return sftest::preferencesFor(std::get<0>(GetParam())); }
    unsigned batch() const { return std::get<1>(GetParam()); }
    const Layout& layout() const { return layouts().at(std::get<2>(GetParam())); }
};

// Every step each target receives the sum over its synapses of g tanh(V_pre), V_pre the wave's
// previous value: the accumulated input after 40 steps matches the sum taken here (double
// precision; only the order of the sums may differ, 1e-10 relative).
TEST_P(SynapseDynamicsTest, GradedInputMatchesTheTraceIntegratedHere) {
    const Layout& l = layout();
    Model m("synapse_dynamics");
    m.setDT(kDt);
    m.setBatchSize(batch());
    m.setPrecision(Precision::Double);
    std::vector<double> initial(l.pre);
    for (unsigned i = 0; i < l.pre; i++)
        initial[i] = 0.05 * i - 0.2;
    m.addNeuronGroup("Pre", l.pre, wave(), {}, {{"V", VarInit(initial)}});
    m.addNeuronGroup("Post", l.post, sftest::accumulate(), {}, {{"acc", 0.0}});
    addGraded(m, l);
    Simulation sim(m, prefs());
    const auto synapses = sim.synapses("Syn");
    ASSERT_FALSE(synapses.empty());
    const auto g = sim.synapseValues("Syn", "g");
    ASSERT_EQ(g.size(), synapses.size());
    constexpr unsigned kSteps = 40;
    sim.run(kSteps);
    sim.pull("Post", "acc");
    const auto acc = sim.view<double>("Post", "acc");
    const bool stores = l.type != MatrixType::Procedural && l.type != MatrixType::Toeplitz;
    for (unsigned b = 0; b < batch(); b++) {
        std::vector<double> expected(l.post, 0.0), seen(synapses.size(), 0.0);
        for (unsigned n = 0; n < kSteps; n++)
            for (size_t s = 0; s < synapses.size(); s++) {
                const double v = waveAt(n, synapses[s].pre, b, initial[synapses[s].pre]);
                expected[synapses[s].post] += g[s] * std::tanh(v);
                seen[s] += v;
            }
        for (unsigned j = 0; j < l.post; j++)
            EXPECT_NEAR(acc[b * l.post + j], expected[j], 1e-10 * (1.0 + std::fabs(expected[j])))
                << l.name << " batch " << b << " target " << j;
        if (!stores) continue;
        const auto got = sim.synapseValues("Syn", "seen", b);
        for (size_t s = 0; s < synapses.size(); s++)
            ASSERT_NEAR(got[s], seen[s], 1e-10 * (1.0 + std::fabs(seen[s])))
                << l.name << " batch " << b << " synapse " << s;
    }
}

// dV/dt = Isyn with nothing else: a pair joined by one gap junction of conductance g.
NeuronModel passive() {
    NeuronModel m;
    m.name = "Passive";
    m.vars = {{"V"}};
    m.simCode = "V += dt * Isyn;";
    return m;
}

WeightUpdateModel gapJunction() {
    WeightUpdateModel m;
    m.name = "GapJunction";
    m.vars = {{"g", "scalar", VarAccess::ReadOnly}};
    m.synapseDynamicsCode = "addToPost(g * (V_pre - V_post));\naddToPre(g * (V_post - V_pre));";
    return m;
}

// Two neurons joined by one junction (0 -> 1): V0' = g (V1 - V0), V1' = g (V0 - V1). The sum
// stays; the difference D follows the Euler map D_{n+1} = (1 - 2 g dt) D_n exactly (up to
// rounding), and the continuous solution D0 exp(-2 g t) within the method's error
// (|(1 - x)^n - exp(-n x)| <= n x^2 / 2, x = 2 g dt). Dense: the other three pairs have g = 0;
// Sparse: the one synapse, given by the host.
class GapJunctionTest : public ::testing::TestWithParam<std::tuple<std::string, unsigned, bool>> {};

TEST_P(GapJunctionTest, PairConvergesAsTheClosedForm) {
    const auto& [backend, batch, sparse] = GetParam();
    Model m("gap_junction");
    m.setDT(kDt);
    m.setBatchSize(batch);
    m.setPrecision(Precision::Double);
    m.addNeuronGroup("Pair", 2, passive(), {}, {{"V", VarInit(std::vector<double>{-70.0, -40.0})}});
    const double g = 0.05;
    if (sparse)
        m.addSynapseGroup("Gap", MatrixType::Sparse, 0, "Pair", "Pair",
                          {gapJunction(), {}, {{"g", g}}, {}, {}}, {models::DeltaCurr(), {}, {}},
                          init::FixedProbability(0.5));
    else
        m.addSynapseGroup(
            "Gap", MatrixType::Dense, 0, "Pair", "Pair",
            {gapJunction(), {}, {{"g", VarInit(std::vector<double>{0, g, 0, 0})}}, {}, {}},
            {models::DeltaCurr(), {}, {}});
    Simulation sim(m, sftest::preferencesFor(backend));
    if (sparse) {
        const std::vector<SynapsePair> one = {{0, 1}};
        sim.setSynapses("Gap", one);
        ASSERT_EQ(sim.synapseCount("Gap"), 1u);
    }
    constexpr unsigned kSteps = 300;
    sim.run(kSteps);
    sim.pull("Pair", "V");
    const auto v = sim.view<double>("Pair", "V");
    const double d0 = 30.0, sum = -110.0, x = 2.0 * g * kDt;
    const double euler = d0 * std::pow(1.0 - x, kSteps);
    const double exact = d0 * std::exp(-2.0 * g * kSteps * kDt);
    for (unsigned b = 0; b < batch; b++) {
        const double v0 = v[2 * b], v1 = v[2 * b + 1];
        EXPECT_NEAR(v0 + v1, sum, 1e-9) << "batch " << b;
        EXPECT_NEAR(v1 - v0, euler, 1e-9) << "batch " << b;
        EXPECT_NEAR(v1 - v0, exact, d0 * kSteps * x * x / 2.0) << "batch " << b;
        EXPECT_LT(std::fabs(v1 - v0), 0.06 * d0) << "batch " << b << ": the pair did not converge";
    }
}

std::vector<std::tuple<std::string, unsigned, bool>> gapParams() {
    std::vector<std::tuple<std::string, unsigned, bool>> out;
    for (const auto& b : sftest::suiteBackends())
        for (unsigned batch : {1u, 3u})
            for (bool sparse : {false, true})
                out.emplace_back(b, batch, sparse);
    return out;
}

INSTANTIATE_TEST_SUITE_P(Backends, GapJunctionTest, ::testing::ValuesIn(gapParams()),
                         [](const auto& info) {
                             return std::get<0>(info.param) + "_batch" +
                                    std::to_string(std::get<1>(info.param)) +
                                    (std::get<2>(info.param) ? "_Sparse" : "_Dense");
                         });

std::vector<std::tuple<std::string, unsigned, size_t>> params() {
    std::vector<std::tuple<std::string, unsigned, size_t>> out;
    for (const auto& b : sftest::suiteBackends())
        for (unsigned batch : {1u, 3u})
            for (size_t l = 0; l < layouts().size(); l++)
                out.emplace_back(b, batch, l);
    return out;
}

INSTANTIATE_TEST_SUITE_P(Backends, SynapseDynamicsTest, ::testing::ValuesIn(params()),
                         [](const auto& info) {
                             return std::get<0>(info.param) + "_batch" +
                                    std::to_string(std::get<1>(info.param)) + "_" +
                                    layouts().at(std::get<2>(info.param)).name;
                         });

// addToPostDelay from synapse dynamics: every step each synapse adds g, delivered d = 2 steps
// later through the dendritic ring; with the same for every step the target receives
// pre x g from step 2 on (steps 0 and 1 deliver nothing).
TEST(SynapseDynamicsDelay, AddToPostDelayGoesThroughTheDendriticRing) {
    for (const auto& backend : sftest::suiteBackends()) {
        SCOPED_TRACE(backend);
        Model m("synapse_dynamics_delay");
        m.setDT(kDt);
        m.setBatchSize(2);
        m.setPrecision(Precision::Double);
        m.addNeuronGroup("Pre", 3, wave(), {}, {{"V", 0.0}});
        m.addNeuronGroup("Post", 4, sftest::accumulate(), {}, {{"acc", 0.0}});
        WeightUpdateModel late;
        late.name = "LateGraded";
        late.vars = {{"g", "scalar", VarAccess::ReadOnly}};
        late.synapseDynamicsCode = "addToPostDelay(g, 2);";
        auto& sg =
            m.addSynapseGroup("Syn", MatrixType::Dense, 0, "Pre", "Post",
                              {late, {}, {{"g", 0.25}}, {}, {}}, {models::DeltaCurr(), {}, {}});
        sg.setMaxDendriticDelaySteps(3);
        Simulation sim(m, sftest::preferencesFor(backend));
        sim.run(2);
        sim.pull("Post", "acc");
        for (double v : sim.view<double>("Post", "acc"))
            EXPECT_EQ(v, 0.0);
        sim.run(5); // steps 2..6 each deliver 3 x 0.25
        sim.pull("Post", "acc");
        for (double v : sim.view<double>("Post", "acc"))
            EXPECT_EQ(v, 5 * 0.75);
    }
}

// A Procedural group evaluates its per-synapse values from their initialisers: synapse dynamics
// may read them but not assign them.
TEST(SynapseDynamics, ProceduralAndToeplitzRefuseAssigningAPerSynapseValue) {
    for (MatrixType type : {MatrixType::Procedural, MatrixType::Toeplitz}) {
        Model m("synapse_dynamics_assign");
        m.addNeuronGroup("Pre", 16, wave(), {}, {{"V", 0.0}});
        m.addNeuronGroup("Post", 8, sftest::accumulate(), {}, {{"acc", 0.0}});
        WeightUpdateModel wu = graded(false);
        wu.vars[0].access = VarAccess::ReadWrite;
        wu.synapseDynamicsCode += "\ng *= 0.5;";
        const WeightUpdateInit init{wu, {}, {{"g", 0.1}}, {}, {}};
        if (type == MatrixType::Procedural)
            m.addSynapseGroup("Syn", type, 0, "Pre", "Post", init, {models::DeltaCurr(), {}, {}},
                              init::FixedProbability(0.5));
        else
            m.addSynapseGroup("Syn", type, 0, "Pre", "Post", init, {models::DeltaCurr(), {}, {}},
                              sftest::conv4x4());
        expectError<ModelError>([&] { m.finalise(); },
                                {"synapse group 'Syn'", "synapseDynamicsCode", "assigns 'g'"});
    }
}

// Spike-only names stay where they belong: addToPost is refused in postsynaptic learning, and
// synapse dynamics is checked like any field (a typo names the field and suggests the name).
TEST(SynapseDynamics, CodeIsCheckedNamingTheField) {
    Model m("synapse_dynamics_typo");
    m.addNeuronGroup("Pre", 4, wave(), {}, {{"V", 0.0}});
    m.addNeuronGroup("Post", 4, sftest::accumulate(), {}, {{"acc", 0.0}});
    WeightUpdateModel wu = graded(false);
    wu.synapseDynamicsCode = "addToPost(g * tanh(V_pree));";
    m.addSynapseGroup("Syn", MatrixType::Dense, 0, "Pre", "Post", {wu, {}, {{"g", 0.1}}, {}, {}},
                      {models::DeltaCurr(), {}, {}});
    expectError<ModelError>([&] { m.finalise(); }, {"Syn", "synapseDynamicsCode", "V_pre"});
}

} // namespace
