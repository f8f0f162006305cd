// Built-in names where GeNN has them (docs/snippets.md "Names each field sees"), on every
// backend: num_batch and num_neurons in neuron, postsynaptic, current-source, weight-update
// pre/post and synapse code; num_neurons in neuron-shaped initialisers; id_pre, id_post,
// num_pre and num_post in per-synapse initialisers of every layout that has synapse pairs.
#include "backend_fixture.hpp"

#include "spikeforge/models.hpp"

#include <string>
#include <vector>

using namespace spikeforge;

namespace {

constexpr unsigned kBatch = 3, kPre = 5, kPost = 7;

class BuiltinNames : public sftest::BackendTest {};

// Writes num_batch * 100 + num_neurons into each of its variables, each from another field.
TEST_P(BuiltinNames, SizesAreNamedInEveryStepField) {
    NeuronModel nm;
    nm.name = "Sizes";
    nm.vars = {{"x"}, {"k", "uint32_t"}};
    nm.simCode = "x = num_batch * 100 + num_neurons;\nk++;";
    nm.thresholdConditionCode = "k == 1u && num_batch == 3u";
    PostsynapticModel ps;
    ps.name = "SizesPS";
    ps.vars = {{"p"}};
    ps.simCode = "p = num_batch * 100 + num_neurons;\ninjectCurrent(inSyn);\ninSyn = 0.0;";
    WeightUpdateModel wu;
    wu.name = "SizesWU";
    wu.vars = {{"q"}};
    wu.preVars = {{"a"}};
    wu.postVars = {{"b"}};
    wu.preSpikeSynCode = "q = num_batch * 100 + num_pre * 10 + batch;";
    wu.preDynamicsCode = "a = num_batch * 100 + num_neurons;";
    wu.postDynamicsCode = "b = num_batch * 100 + num_neurons;";
    CurrentSourceModel cs;
    cs.name = "SizesCS";
    cs.vars = {{"c"}};
    cs.injectionCode = "c = num_batch * 100 + num_neurons;\ninjectCurrent(0.0);";
    Model m("builtin_sizes");
    m.setBatchSize(kBatch);
    m.setPrecision(Precision::Double);
    m.addNeuronGroup("Pre", kPre, nm, {}, {{"x", 0.0}, {"k", 0.0}});
    m.addNeuronGroup("Post", kPost, nm, {}, {{"x", 0.0}, {"k", 0.0}});
    m.addSynapseGroup("S", MatrixType::Dense, 0, "Pre", "Post",
                      {wu, {}, {{"q", 0.0}}, {{"a", 0.0}}, {{"b", 0.0}}}, {ps, {}, {{"p", 0.0}}});
    m.addCurrentSource("C", cs, "Post", {}, {{"c", 0.0}});
    Simulation sim(m, prefs());
    sim.run(3); // Pre spikes in step 0 (k reaches 1); its spikes reach S in step 1.
    auto all = [&](const std::string& g, const std::string& v, double want) {
        sim.pull(g, v);
        const auto values = sim.view<double>(g, v);
        ASSERT_FALSE(values.empty());
        for (size_t i = 0; i < values.size(); i++)
            ASSERT_EQ(values[i], want) << g << "." << v << "[" << i << "]";
    };
    all("Pre", "x", 300 + kPre);
    all("Post", "x", 300 + kPost);
    all("S", "p", 300 + kPost);
    all("S", "a", 300 + kPre);
    all("S", "b", 300 + kPost);
    all("C", "c", 300 + kPost);
    // Per batch element: batch b's synapses hold 300 + 50 + b.
    sim.pull("S", "q");
    const auto q = sim.view<double>("S", "q");
    ASSERT_EQ(q.size(), size_t(kBatch) * kPre * kPost);
    for (unsigned b = 0; b < kBatch; b++)
        for (size_t i = 0; i < size_t(kPre) * kPost; i++)
            ASSERT_EQ(q[b * kPre * kPost + i], 350.0 + b) << "batch " << b;
}

InitSnippet pairValue() {
    InitSnippet s;
    s.name = "PairValue";
    s.code = "value = id_pre * 1000 + id_post + num_pre * 0 + num_post * 0;";
    return s;
}

// Every synapse's value is its own pair, read through the codec (the element a layout keeps it
// in does not matter). Procedural evaluates the initialiser at each synapse when it is read.
TEST_P(BuiltinNames, SynapseInitialisersSeeTheirPair) {
    struct Layout {
        const char* name;
        MatrixType type;
    };
    for (const Layout& l :
         {Layout{"Dense", MatrixType::Dense}, Layout{"Sparse", MatrixType::Sparse},
          Layout{"Procedural", MatrixType::Procedural},
          Layout{"BlockSparse", MatrixType::BlockSparse}}) {
        SCOPED_TRACE(l.name);
        NeuronModel nm;
        nm.name = "Idle";
        nm.vars = {{"x"}};
        InitSnippet counted;
        counted.name = "Counted";
        counted.code = "value = num_neurons * 1000 + id;";
        Model m(std::string("pair_init_") + l.name);
        m.setPrecision(Precision::Double);
        m.addNeuronGroup("Pre", 20, nm, {}, {{"x", VarInit(counted, {})}});
        m.addNeuronGroup("Post", 18, nm, {}, {{"x", 0.0}});
        WeightUpdateModel wu;
        wu.name = "Pulse";
        wu.vars = {{"g", "scalar", VarAccess::ReadOnly}};
        wu.preSpikeSynCode = "addToPost(g);";
        const WeightUpdateInit w{wu, {}, {{"g", VarInit(pairValue(), {})}}, {}, {}};
        const PostsynapticInit p{models::DeltaCurr(), {}, {}};
        if (l.type == MatrixType::Dense)
            m.addSynapseGroup("S", l.type, 0, "Pre", "Post", w, p);
        else if (l.type == MatrixType::BlockSparse)
            m.addSynapseGroup("S", l.type, 0, "Pre", "Post", w, p,
                              BlockSparseInit{8, BlockLayout::Random, 0.5});
        else
            m.addSynapseGroup("S", l.type, 0, "Pre", "Post", w, p, init::FixedProbability(0.3));
        Simulation sim(m, prefs());
        const auto pairs = sim.synapses("S");
        ASSERT_FALSE(pairs.empty());
        const auto values = sim.synapseValues("S", "g", 0);
        ASSERT_EQ(values.size(), pairs.size());
        for (size_t k = 0; k < pairs.size(); k++)
            ASSERT_EQ(values[k], pairs[k].pre * 1000.0 + pairs[k].post) << "synapse " << k;
        sim.pull("Pre", "x");
        const auto x = sim.view<double>("Pre", "x");
        for (unsigned i = 0; i < 20; i++)
            ASSERT_EQ(x[i], 20000.0 + i);
    }
}

} // namespace

SF_INSTANTIATE_BACKEND_TESTS(BuiltinNames);
