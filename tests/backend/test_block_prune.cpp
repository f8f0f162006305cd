// Block pruning and regrowth (Simulation::pruneBlocks): the k tiles of smallest norm go, every
// other weight stays bit for bit, each block-row grows as many tiles as it lost at block-columns
// it did not hold, from the weight's initialiser, with the custom updates' per-synapse state
// started afresh; the block count never changes; the pruned group still delivers and learns as
// the Dense group with its weights; the same tiles grow on every backend. Random, Mask (rows of
// different lengths, an empty and a full one) and Barabási–Albert (in double precision) layouts,
// sizes that are not multiples of b, batch 1 and 3.
#include "backend_fixture.hpp"
#include "block_sparse_support.hpp"
#include "probe_models.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <vector>

using namespace spikeforge;
using sftest::pattern;
using sftest::setMatchingWeights;
using sftest::weightOf;

namespace {

using A = CustomUpdateVarAccess;

// Weights g (scored, regrown from Uniform(1, 2)) and a probe that custom updates write.
WeightUpdateModel holder() {
    WeightUpdateModel wu;
    wu.name = "Holder";
    wu.vars = {{"g", "scalar", VarAccess::ReadOnly}, {"probe"}};
    wu.preSpikeSynCode = "addToPost(g);";
    return wu;
}

// "Moment" keeps per-synapse state m (as an optimiser does; 0 at the start, +3 a call);
// "Expose" copies it to the group's probe, where the codec reads it.
void addMomentUpdates(Model& m) {
    CustomUpdateModel moment;
    moment.name = "Moment";
    moment.vars = {{"m", "scalar"}};
    moment.varRefs = {{"g", "scalar", A::ReadOnly}};
    moment.updateCode = "m += 3.0;";
    m.addCustomUpdateWU("Moment", "Moment", moment, {}, {{"m", 0.0}}, {{"g", {"Blocks", "g"}}});
    CustomUpdateModel expose;
    expose.name = "Expose";
    expose.varRefs = {{"m", "scalar", A::ReadOnly}, {"probe", "scalar", A::ReadWrite}};
    expose.updateCode = "probe = m;";
    m.addCustomUpdateWU("Expose", "Expose", expose, {}, {},
                        {{"m", {"Moment", "m"}}, {"probe", {"Blocks", "probe"}}});
}

struct Case {
    const char* name;
    unsigned pre, post, block;
    BlockSparseInit blocks;
    uint32_t firstPrune, secondPrune;
    Precision precision = Precision::Float;
};

// Each block-row's block-columns in slot order (the order the codec lists a row's tiles).
using RowTiles = std::map<unsigned, std::vector<unsigned>>;
RowTiles tilesOf(const std::vector<SynapsePair>& pairs, unsigned b) {
    RowTiles rows;
    for (const auto& p : pairs) {
        if (p.pre % b != 0) continue; // a block-row's first source lists each tile
        auto& cols = rows[p.pre / b];
        if (std::find(cols.begin(), cols.end(), p.post / b) == cols.end())
            cols.push_back(p.post / b);
    }
    return rows;
}

struct Snapshot {
    std::vector<SynapsePair> pairs;
    std::vector<double> g, probe;
    RowTiles tiles;
};

Snapshot snapshot(Simulation& sim, unsigned b) {
    sim.customUpdate("Expose");
    Snapshot s{sim.synapses("Blocks"), {}, {}, {}};
    s.g = sim.synapseValues("Blocks", "g");
    s.probe = sim.synapseValues("Blocks", "probe");
    s.tiles = tilesOf(s.pairs, b);
    return s;
}

// The k tiles (block-row, block-column) of smallest sum of squared weights, ties to the lower
// (block-row, slot): what pruning must remove. Weights in eighths: the sums are exact in float.
std::set<std::pair<unsigned, unsigned>> weakest(const Snapshot& s, unsigned b, uint32_t k) {
    std::map<std::pair<unsigned, unsigned>, double> norm;
    for (size_t i = 0; i < s.pairs.size(); i++)
        norm[{s.pairs[i].pre / b, s.pairs[i].post / b}] += s.g[i] * s.g[i];
    std::vector<std::tuple<double, unsigned, unsigned, unsigned>> order; // norm, row, slot, col
    for (const auto& [row, cols] : s.tiles)
        for (unsigned j = 0; j < cols.size(); j++)
            order.emplace_back(norm.at({row, cols[j]}), row, j, cols[j]);
    std::sort(order.begin(), order.end());
    std::set<std::pair<unsigned, unsigned>> out;
    for (uint32_t i = 0; i < k; i++)
        out.insert({std::get<1>(order.at(i)), std::get<3>(order.at(i))});
    return out;
}

// Checks one pruning from `before` to `after`: per block-row the tile count, the kept tiles
// (weights and moments unchanged), the grown ones (new columns where the row has room, weights
// from Uniform(1, 2), moments 0).
void expectPruned(const Snapshot& before, const Snapshot& after, unsigned b, unsigned numCols,
                  const std::set<std::pair<unsigned, unsigned>>& removed) {
    std::map<std::pair<unsigned, unsigned>, bool> grown; // tile -> whether it is new
    for (const auto& [row, cols] : before.tiles) {
        SCOPED_TRACE(testing::Message() << "block-row " << row);
        const auto found = after.tiles.find(row);
        ASSERT_NE(found, after.tiles.end());
        const std::vector<unsigned>& now = found->second;
        ASSERT_EQ(now.size(), cols.size());
        unsigned moved = 0;
        for (unsigned c : cols)
            moved += removed.count({row, c});
        for (unsigned c : cols)
            if (!removed.count({row, c})) {
                EXPECT_NE(std::find(now.begin(), now.end(), c), now.end()) << "kept column " << c;
            }
        const bool full = cols.size() == numCols, roomy = numCols - cols.size() >= moved;
        for (unsigned c : now) {
            const bool held = std::find(cols.begin(), cols.end(), c) != cols.end();
            if (held && !removed.count({row, c})) continue;
            // A full row regrows in place; a row with room grows at columns it did not hold.
            if (full) {
                EXPECT_TRUE(held) << "column " << c;
            }
            if (roomy) {
                EXPECT_FALSE(held) << "column " << c;
            }
            grown[{row, c}] = true;
        }
        EXPECT_EQ(std::count_if(grown.begin(), grown.end(),
                                [&](const auto& t) { return t.first.first == row; }),
                  moved);
    }
    std::map<std::pair<uint32_t, uint32_t>, size_t> was;
    for (size_t i = 0; i < before.pairs.size(); i++)
        was[{before.pairs[i].pre, before.pairs[i].post}] = i;
    std::set<double> fresh;
    for (size_t i = 0; i < after.pairs.size(); i++) {
        const auto& p = after.pairs[i];
        if (grown.count({p.pre / b, p.post / b})) {
            EXPECT_GE(after.g[i], 1.0) << p.pre << " -> " << p.post;
            EXPECT_LE(after.g[i], 2.0) << p.pre << " -> " << p.post;
            EXPECT_EQ(after.probe[i], 0.0) << "moment of new synapse " << p.pre << " -> " << p.post;
            fresh.insert(after.g[i]);
        } else {
            const size_t k = was.at({p.pre, p.post});
            ASSERT_EQ(after.g[i], before.g[k]) << "kept synapse " << p.pre << " -> " << p.post;
            EXPECT_EQ(after.probe[i], before.probe[k]) << p.pre << " -> " << p.post;
        }
    }
    EXPECT_GT(fresh.size(), grown.size()); // drawn, not one value: tiles hold many synapses
}

class BlockPruneTest : public sftest::BackendTest {};

TEST_P(BlockPruneTest, RemovesTheWeakestTilesAndGrowsAsManyElsewhere) {
    BlockSparseInit mask{8, BlockLayout::Mask, 0.1};
    // 6 block-rows (the last of 5 sources) x 5 block-columns (the last of 5 targets): an empty
    // row, a full one, rows of 1 to 3 tiles.
    mask.blocks = {{0, 0}, {0, 2}, {2, 0}, {2, 1}, {2, 2}, {2, 3}, {2, 4},
                   {3, 4}, {4, 1}, {4, 3}, {5, 0}, {5, 2}, {5, 4}};
    BlockSparseInit random{8, BlockLayout::Random, 0.375};     // 3 of 8 block-columns a row
    BlockSparseInit scaleFree{8, BlockLayout::BarabasiAlbert}; // 9 block-nodes, 2 edges each new
    scaleFree.attachments = 2;
    const Case cases[] = {
        {"random", 70, 61, 8, random, 6, 9},
        {"mask", 45, 37, 8, mask, 5, 3},
        {"barabasi_albert, double", 70, 70, 8, scaleFree, 7, 4, Precision::Double}};
    for (Case c : cases) {
        c.blocks.prunedBy = "g";
        SCOPED_TRACE(c.name);
        const unsigned numCols = (c.post + c.block - 1) / c.block;
        auto run = [&](const BackendPreferences& p) {
            Model m("block_prune");
            m.setPrecision(c.precision);
            m.addNeuronGroup("Src", c.pre, pattern(), {}, {{"k", 0.0}});
            m.addNeuronGroup("Tgt", c.post, sftest::accumulate(), {}, {{"acc", 0.0}});
            m.addSynapseGroup(
                "Blocks", MatrixType::BlockSparse, 0, "Src", "Tgt",
                {holder(), {}, {{"g", init::Uniform(1.0, 2.0)}, {"probe", -1.0}}, {}, {}},
                {models::DeltaCurr(), {}, {}}, c.blocks);
            addMomentUpdates(m);
            Simulation sim(m, p);
            const auto pairs = sim.synapses("Blocks");
            std::vector<double> g;
            for (const auto& q : pairs)
                g.push_back(weightOf(q.pre, q.post));
            sim.setSynapseValues("Blocks", "g", g);
            sim.customUpdate("Moment");
            std::vector<Snapshot> states = {snapshot(sim, c.block)};
            for (uint32_t k : {c.firstPrune, c.secondPrune}) {
                sim.pruneBlocks("Blocks", k);
                states.push_back(snapshot(sim, c.block));
                const Snapshot& before = states[states.size() - 2];
                SCOPED_TRACE(testing::Message() << "pruning " << k);
                expectPruned(before, states.back(), c.block, numCols, weakest(before, c.block, k));
            }
            return states;
        };
        const auto here = run(sftest::releaseBuild(prefs(2)));
        if (GetParam() == "cpu") continue;
        const auto onCpu = run(sftest::preferencesFor("cpu"));
        for (size_t s = 1; s < here.size(); s++) {
            ASSERT_EQ(here[s].pairs, onCpu[s].pairs) << "after pruning " << s;
            for (size_t i = 0; i < here[s].g.size(); i++)
                ASSERT_NEAR(here[s].g[i], onCpu[s].g[i], 1e-6) << "synapse " << i;
        }
    }
}

// After pruning, delivery and postsynaptic learning (through the transposed index, built again)
// are those of a Dense group given the same weights; batch 1 and 3.
TEST_P(BlockPruneTest, PrunedGroupStillDeliversAndLearnsAsDense) {
    const WeightUpdateModel learn = sftest::postLearning();
    const unsigned pre = 70, post = 53, b = 8;
    for (unsigned batch : {1u, 3u}) {
        SCOPED_TRACE(testing::Message() << "batch " << batch);
        Model m("block_prune_dense");
        m.setBatchSize(batch);
        m.addNeuronGroup("Src", pre, pattern(), {}, {{"k", 0.0}});
        m.addNeuronGroup("ViaBlocks", post, pattern(), {}, {{"k", 0.0}});
        m.addNeuronGroup("ViaDense", post, pattern(), {}, {{"k", 0.0}});
        BlockSparseInit blocks{b, BlockLayout::Random, 0.3};
        blocks.prunedBy = "g";
        m.addSynapseGroup("Blocks", MatrixType::BlockSparse, 0, "Src", "ViaBlocks",
                          {learn, {}, {{"g", init::Normal(0.0, 1.0)}}, {}, {}},
                          {models::DeltaCurr(), {}, {}}, blocks);
        m.addSynapseGroup("Dense", MatrixType::Dense, 0, "Src", "ViaDense",
                          {learn, {}, {{"g", 0.0}}, {}, {}}, {models::DeltaCurr(), {}, {}});
        Simulation sim(m, prefs(2));
        const auto first = sim.synapses("Blocks");
        sim.pruneBlocks("Blocks", 7);
        const auto pairs = sim.synapses("Blocks");
        // As many tiles (their synapses may differ: an edge tile is cut off at the group's end).
        size_t tilesBefore = 0, tilesAfter = 0;
        for (const auto& [row, cols] : tilesOf(first, b))
            tilesBefore += cols.size();
        for (const auto& [row, cols] : tilesOf(pairs, b))
            tilesAfter += cols.size();
        ASSERT_EQ(tilesAfter, tilesBefore);
        ASSERT_NE(pairs, first); // tiles moved
        for (unsigned k = 0; k < batch; k++)
            setMatchingWeights(sim, pairs, pre, post, k, 1.0, {"Blocks"}, {"Dense"});
        sim.run(25);
        // The rule ran on most synapses.
        EXPECT_GT(sftest::expectSameWeights(sim, pairs, post, batch), pairs.size() / 2);
    }
}

SF_INSTANTIATE_BACKEND_TESTS(BlockPruneTest);

TEST(BlockPruneModel, BadRequestsAreClearErrors) {
    auto model = [](const std::string& prunedBy) {
        auto m = std::make_unique<Model>("block_prune_bad");
        m->addNeuronGroup("Src", 40, pattern(), {}, {{"k", 0.0}});
        m->addNeuronGroup("Tgt", 40, pattern(), {}, {{"k", 0.0}});
        WeightUpdateModel wu = holder();
        wu.vars.push_back({"count", "int"});
        BlockSparseInit blocks{8, BlockLayout::Random, 0.4};
        blocks.prunedBy = prunedBy;
        m->addSynapseGroup("Blocks", MatrixType::BlockSparse, 0, "Src", "Tgt",
                           {wu, {}, {{"g", 0.5}, {"probe", 0.0}, {"count", 0.0}}, {}, {}},
                           {models::DeltaCurr(), {}, {}}, blocks);
        m->addSynapseGroup("Dense", MatrixType::Dense, 0, "Src", "Tgt",
                           {wu, {}, {{"g", 0.5}, {"probe", 0.0}, {"count", 0.0}}, {}, {}},
                           {models::DeltaCurr(), {}, {}});
        return m;
    };
    auto finalise = [&](const std::string& prunedBy) {
        auto m = model(prunedBy);
        m->finalise();
    };
    sftest::expectError<ModelError>([&] { finalise("w"); },
                                    {"'Blocks'", "prunedBy names 'w'", "g, probe, count"});
    sftest::expectError<ModelError>([&] { finalise("count"); }, {"'Blocks'", "of type 'int'"});

    auto unpruned = model("");
    Simulation plain(*unpruned, sftest::preferencesFor("cpu"));
    sftest::expectError<ModelError>([&] { plain.pruneBlocks("Blocks", 1); },
                                    {"'Blocks' cannot be pruned"});
    auto pruned = model("g");
    Simulation sim(*pruned, sftest::preferencesFor("cpu"));
    sftest::expectError<ModelError>([&] { sim.pruneBlocks("Dense", 1); },
                                    {"'Dense' cannot be pruned"});
    sftest::expectError<ModelError>([&] { sim.pruneBlocks("Blockz", 1); }, {"Blockz"});
    // 5 block-rows x 2 tiles (round(0.4 x 5)).
    sftest::expectError<ModelError>([&] { sim.pruneBlocks("Blocks", 11); },
                                    {"holds 10 tiles; cannot prune 11"});
    const auto before = sim.synapses("Blocks");
    sim.pruneBlocks("Blocks", 0); // nothing moves
    EXPECT_EQ(sim.synapses("Blocks"), before);
    sim.pruneBlocks("Blocks", 10); // every tile moves
    EXPECT_EQ(sim.synapses("Blocks").size(), before.size());
}

} // namespace
