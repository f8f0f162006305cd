// The Barabási–Albert block layout (BlockLayout::BarabasiAlbert), stored as block-CSR: a
// symmetric block graph without self-blocks, m(m + 1) / 2 + (n - m - 1) m edges, every node of
// degree >= m, degrees heavy-tailed (hubs far above the mean and above any node of a Random
// layout of the same block density); the same layout on every backend; delivery bit-identical to
// the Dense group holding the same weights (sizes that are not multiples of b, batch 1 and 3);
// postsynaptic learning and pruning on it; bad parameters are clear errors.
#include "backend_fixture.hpp"
#include "block_sparse_support.hpp"
#include "probe_models.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <vector>

using namespace spikeforge;
using sftest::pattern;
using sftest::setMatchingWeights;
using sftest::staticPulse;

namespace {

// 500 neurons, b = 8: 63 block-nodes (the last of 4 neurons).
constexpr unsigned kNeurons = 500, kBlock = 8, kNodes = 63;

void addGroups(Model& m, const BlockSparseInit& blocks, unsigned batch) {
    m.setBatchSize(batch);
    m.addNeuronGroup("Src", kNeurons, pattern(), {}, {{"k", 0.0}});
    m.addNeuronGroup("ViaBlocks", kNeurons, sftest::accumulate(), {}, {{"acc", 0.0}});
    m.addNeuronGroup("ViaDense", kNeurons, sftest::accumulate(), {}, {{"acc", 0.0}});
    m.addSynapseGroup("Blocks", MatrixType::BlockSparse, 0, "Src", "ViaBlocks", staticPulse(),
                      {models::DeltaCurr(), {}, {}}, blocks);
    m.addSynapseGroup("Dense", MatrixType::Dense, 0, "Src", "ViaDense", staticPulse(),
                      {models::DeltaCurr(), {}, {}});
}

BlockSparseInit scaleFree(unsigned m) {
    BlockSparseInit b{kBlock, BlockLayout::BarabasiAlbert};
    b.attachments = m;
    return b;
}

std::set<std::pair<unsigned, unsigned>> tilesOf(const std::vector<SynapsePair>& pairs) {
    std::set<std::pair<unsigned, unsigned>> t;
    for (const auto& p : pairs)
        t.insert({p.pre / kBlock, p.post / kBlock});
    return t;
}

// Tiles per block-row.
std::vector<unsigned> degrees(const std::set<std::pair<unsigned, unsigned>>& tiles) {
    std::vector<unsigned> d(kNodes, 0);
    for (const auto& [r, c] : tiles)
        d.at(r)++;
    return d;
}

class BlockScaleFreeTest : public sftest::BackendTest {};

TEST_P(BlockScaleFreeTest, GraphIsScaleFreeSymmetricAndTheSameOnEveryBackend) {
    const unsigned m = 3;
    auto layout = [&](const BackendPreferences& p) {
        Model model("block_scale_free");
        addGroups(model, scaleFree(m), 1);
        Simulation sim(model, p);
        return tilesOf(sim.synapses("Blocks"));
    };
    const auto tiles = layout(prefs(2));
    EXPECT_EQ(tiles.size(), 2u * (m * (m + 1) / 2 + (kNodes - m - 1) * m));
    for (const auto& [r, c] : tiles) {
        EXPECT_NE(r, c) << "no self-blocks";
        EXPECT_TRUE(tiles.count({c, r})) << "(" << r << ", " << c << ") without its mirror";
    }
    const auto d = degrees(tiles);
    EXPECT_GE(*std::min_element(d.begin(), d.end()), m);
    const double mean = double(tiles.size()) / kNodes;
    const unsigned hub = *std::max_element(d.begin(), d.end());
    EXPECT_GE(hub, 3.0 * mean) << "mean degree " << mean;
    // A Random layout of the same block density: no node far from the mean.
    Model random("block_scale_free_random");
    addGroups(random, {kBlock, BlockLayout::Random, mean / kNodes}, 1);
    Simulation sim(random, sftest::preferencesFor("cpu"));
    std::vector<unsigned> columns(kNodes, 0);
    for (const auto& [r, c] : tilesOf(sim.synapses("Blocks")))
        columns.at(c)++;
    EXPECT_GT(hub, 1.5 * *std::max_element(columns.begin(), columns.end()));
    // The tail: the best-connected tenth of the nodes holds over a quarter of the tiles.
    auto sorted = d;
    std::sort(sorted.rbegin(), sorted.rend());
    EXPECT_GT(std::accumulate(sorted.begin(), sorted.begin() + kNodes / 10, 0u), tiles.size() / 4);
    if (GetParam() != "cpu") {
        EXPECT_EQ(tiles, layout(sftest::preferencesFor("cpu")));
    }
}

TEST_P(BlockScaleFreeTest, DeliversWhatTheEquivalentDenseGroupDelivers) {
    for (unsigned batch : {1u, 3u}) {
        SCOPED_TRACE(testing::Message() << "batch " << batch);
        Model m("block_scale_free_vs_dense");
        addGroups(m, scaleFree(4), batch);
        Simulation sim(m, prefs(2));
        const auto pairs = sim.synapses("Blocks");
        for (unsigned b = 0; b < batch; b++)
            setMatchingWeights(sim, pairs, kNeurons, kNeurons, b, b + 1, {"Blocks"}, {"Dense"});
        sim.run(30);
        EXPECT_GT(sftest::expectSameInput(sim, "ViaBlocks", "ViaDense", kNeurons),
                  size_t(kNeurons) * batch / 4);
    }
}

// Postsynaptic learning through the transposed index, and a pruned scale-free group, against
// Dense: the rule's weights equal at every synapse.
TEST_P(BlockScaleFreeTest, LearnsAndPrunesAsDense) {
    const WeightUpdateModel learn = sftest::postLearning();
    Model m("block_scale_free_learning");
    m.addNeuronGroup("Src", kNeurons, pattern(), {}, {{"k", 0.0}});
    m.addNeuronGroup("ViaBlocks", kNeurons, pattern(), {}, {{"k", 0.0}});
    m.addNeuronGroup("ViaDense", kNeurons, pattern(), {}, {{"k", 0.0}});
    BlockSparseInit blocks = scaleFree(3);
    blocks.prunedBy = "g";
    m.addSynapseGroup("Blocks", MatrixType::BlockSparse, 0, "Src", "ViaBlocks",
                      {learn, {}, {{"g", 0.5}}, {}, {}}, {models::DeltaCurr(), {}, {}}, blocks);
    m.addSynapseGroup("Dense", MatrixType::Dense, 0, "Src", "ViaDense",
                      {learn, {}, {{"g", 0.0}}, {}, {}}, {models::DeltaCurr(), {}, {}});
    Simulation sim(m, prefs(2));
    const auto before = tilesOf(sim.synapses("Blocks"));
    sim.pruneBlocks("Blocks", 40);
    const auto pairs = sim.synapses("Blocks");
    const auto after = tilesOf(pairs);
    EXPECT_EQ(after.size(), before.size());
    EXPECT_NE(after, before);
    EXPECT_EQ(degrees(after), degrees(before)); // every block-row keeps its tiles
    setMatchingWeights(sim, pairs, kNeurons, kNeurons, 0, 1.0, {"Blocks"}, {"Dense"});
    sim.run(25);
    EXPECT_GT(sftest::expectSameWeights(sim, pairs, kNeurons, 1), pairs.size() / 2);
}

SF_INSTANTIATE_BACKEND_TESTS(BlockScaleFreeTest);

TEST(BlockScaleFreeModel, BadParametersAreClearErrors) {
    auto finalise = [](unsigned pre, unsigned post, BlockSparseInit b) {
        Model m("block_scale_free_bad");
        m.addNeuronGroup("Src", pre, pattern(), {}, {{"k", 0.0}});
        m.addNeuronGroup("Tgt", post, sftest::accumulate(), {}, {{"acc", 0.0}});
        m.addSynapseGroup("Syn", MatrixType::BlockSparse, 0, "Src", "Tgt", staticPulse(),
                          {models::DeltaCurr(), {}, {}}, b);
        m.finalise();
    };
    sftest::expectError<ModelError>([&] { finalise(40, 80, scaleFree(2)); },
                                    {"Syn", "BarabasiAlbert", "as many block-rows", "5 and 10"});
    sftest::expectError<ModelError>([&] { finalise(40, 40, scaleFree(0)); },
                                    {"Syn", "attachments (m) in [1, 5)", "got 0"});
    sftest::expectError<ModelError>([&] { finalise(40, 40, scaleFree(5)); },
                                    {"Syn", "attachments (m) in [1, 5)", "got 5"});
    BlockSparseInit random{8, BlockLayout::Random, 0.4};
    random.attachments = 2;
    sftest::expectError<ModelError>([&] { finalise(40, 40, random); },
                                    {"Syn", "BarabasiAlbert layout only"});
    EXPECT_NO_THROW(finalise(40, 40, scaleFree(4))); // the clique alone
}

} // namespace
