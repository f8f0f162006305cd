// Block-sparse connectivity (MatrixType::BlockSparse): b x b tiles at positions drawn from the
// seed. A block-sparse group delivers exactly what a Dense group holding the same weights (zero
// outside the tiles) delivers; its layout has the tiles per block-row asked, at distinct
// block-columns spread uniformly, the same on every backend; its codec reads as the dense
// matrix; bad parameters are clear errors naming the group.
#include "backend_fixture.hpp"
#include "block_sparse_support.hpp"
#include "codegen/lower.hpp"
#include "probe_models.hpp"
#include "spikeforge/models.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <map>
#include <set>
#include <tuple>
#include <vector>

using namespace spikeforge;
using sftest::expectContains;
using sftest::pattern;
using sftest::setMatchingWeights;
using sftest::staticPulse;
using sftest::weightOf;

namespace {

struct Shape {
    unsigned pre, post, block;
    double density;
};

void addGroups(Model& m, const Shape& s, unsigned batch) {
    m.setBatchSize(batch);
    m.addNeuronGroup("Src", s.pre, pattern(), {}, {{"k", 0.0}});
    m.addNeuronGroup("ViaBlocks", s.post, sftest::accumulate(), {}, {{"acc", 0.0}});
    m.addNeuronGroup("ViaDense", s.post, sftest::accumulate(), {}, {{"acc", 0.0}});
    m.addSynapseGroup("Blocks", MatrixType::BlockSparse, 0, "Src", "ViaBlocks", staticPulse(),
                      {models::DeltaCurr(), {}, {}},
                      BlockSparseInit{s.block, BlockLayout::Random, s.density});
    m.addSynapseGroup("Dense", MatrixType::Dense, 0, "Src", "ViaDense", staticPulse(),
                      {models::DeltaCurr(), {}, {}});
}

class BlockSparseTest : public sftest::BackendTest {};

TEST_P(BlockSparseTest, DeliversWhatTheEquivalentDenseGroupDelivers) {
    for (const Shape& s : {Shape{40, 37, 8, 0.4}, Shape{64, 48, 16, 0.34}, Shape{50, 70, 32, 0.5},
                           Shape{33, 100, 8, 0.25}})
        for (unsigned batch : {1u, 5u}) {
            SCOPED_TRACE(testing::Message()
                         << s.pre << " x " << s.post << ", b = " << s.block << ", batch " << batch);
            Model m("block_sparse_vs_dense");
            addGroups(m, s, batch);
            Simulation sim(m, prefs(2));
            const auto pairs = sim.synapses("Blocks");
            ASSERT_FALSE(pairs.empty());
            for (unsigned b = 0; b < batch; b++)
                setMatchingWeights(sim, pairs, s.pre, s.post, b, b + 1, {"Blocks"}, {"Dense"});
            sim.run(30);
            // The input reached many targets.
            EXPECT_GT(sftest::expectSameInput(sim, "ViaBlocks", "ViaDense", s.post),
                      size_t(s.post) * batch / 4);
        }
}

// Block structure read back through the codec: tiles per block-row, distinct columns, whole
// tiles cut off only at the groups' ends; the same layout on this backend as on cpu.
// Density 0.25 (25 of 101 columns) draws by selection sampling, 0.05 (5: 5^2 < 101) by Floyd's
// algorithm: both are checked.
TEST_P(BlockSparseTest, LayoutHasTheTilesAskedAndIsTheSameOnEveryBackend) {
    for (const auto& [density, perRow] : {std::pair{0.25, 25u}, std::pair{0.05, 5u}}) {
        SCOPED_TRACE(testing::Message() << "density " << density);
        const Shape s{203, 805, 8,
                      density}; // 26 block-rows (the last of 3 rows), 101 block-columns
        const unsigned rows = 26, cols = 101;
        auto layout = [&](const BackendPreferences& p) {
            Model m("block_sparse_layout");
            addGroups(m, s, 1);
            Simulation sim(m, p);
            std::map<unsigned, std::map<unsigned, unsigned>> tiles; // block-row -> column -> pairs
            for (const auto& pair : sim.synapses("Blocks")) {
                EXPECT_LT(pair.pre, s.pre);
                EXPECT_LT(pair.post, s.post);
                tiles[pair.pre / s.block][pair.post / s.block]++;
            }
            EXPECT_EQ(sim.synapseCount("Blocks"), sim.synapses("Blocks").size());
            return tiles;
        };
        const auto tiles = layout(prefs(1));
        ASSERT_EQ(tiles.size(), rows);
        std::vector<unsigned> perColumn(cols, 0);
        for (const auto& [row, columns] : tiles) {
            EXPECT_EQ(columns.size(), perRow) << "block-row " << row;
            const unsigned height = row + 1 < rows ? 8u : 203u - 25u * 8u;
            for (const auto& [col, pairs] : columns) {
                const unsigned width = col + 1 < cols ? 8u : 805u - 100u * 8u;
                EXPECT_EQ(pairs, height * width) << "tile (" << row << ", " << col << ")";
                perColumn[col]++;
            }
        }
        // Each column is in a block-row's tiles with probability perRow/101: counts binomial(26,
        // p), all within 5 sigma and not all equal (a layout that always took the same columns
        // fails).
        const double p = double(perRow) / cols, mean = rows * p, sd = std::sqrt(rows * p * (1 - p));
        for (unsigned c = 0; c < cols; c++)
            EXPECT_LE(std::abs(perColumn[c] - mean), 5 * sd) << "block-column " << c;
        EXPECT_GT(std::set<unsigned>(perColumn.begin(), perColumn.end()).size(), 3u);
        EXPECT_EQ(tiles, layout(sftest::preferencesFor("cpu")));
    }
}

// The block graph of a square recurrent layer (block-rows = block-columns = nodes), undirected,
// without self-loops: its mean clustering coefficient and mean shortest path length.
struct GraphStats {
    double clustering = 0, pathLength = 0;
};

GraphStats blockGraphStats(const std::vector<std::set<unsigned>>& adj) {
    const size_t n = adj.size();
    GraphStats s;
    for (size_t v = 0; v < n; v++) {
        const std::vector<unsigned> nb(adj[v].begin(), adj[v].end());
        if (nb.size() < 2) continue;
        size_t links = 0;
        for (size_t i = 0; i < nb.size(); i++)
            for (size_t j = i + 1; j < nb.size(); j++)
                links += adj[nb[i]].count(nb[j]);
        s.clustering += 2.0 * links / (double(nb.size()) * (nb.size() - 1));
    }
    s.clustering /= n;
    double total = 0, pairs = 0;
    for (size_t src = 0; src < n; src++) { // breadth-first search from every node
        std::vector<int> dist(n, -1);
        std::vector<unsigned> queue{unsigned(src)};
        dist[src] = 0;
        for (size_t q = 0; q < queue.size(); q++)
            for (unsigned w : adj[queue[q]])
                if (dist[w] < 0) {
                    dist[w] = dist[queue[q]] + 1;
                    queue.push_back(w);
                }
        for (size_t t = 0; t < n; t++)
            if (t != src && dist[t] > 0) total += dist[t], pairs += 1;
    }
    s.pathLength = total / pairs;
    return s;
}

// The tiles of a recurrent BlockSparse group read through the codec, as block-rows of columns.
std::vector<std::set<unsigned>> blockRows(const BackendPreferences& p, const BlockSparseInit& b,
                                          unsigned neurons) {
    Model m("block_sparse_small_world");
    m.addNeuronGroup("Hidden", neurons, pattern(), {}, {{"k", 0.0}});
    m.addSynapseGroup("Rec", MatrixType::BlockSparse, 0, "Hidden", "Hidden", staticPulse(),
                      {models::DeltaCurr(), {}, {}}, b);
    Simulation sim(m, p);
    std::vector<std::set<unsigned>> rows((neurons + b.blockSize - 1) / b.blockSize);
    for (const auto& pair : sim.synapses("Rec"))
        rows[pair.pre / b.blockSize].insert(pair.post / b.blockSize);
    return rows;
}

TEST_P(BlockSparseTest, WattsStrogatzIsASmallWorld) {
    const unsigned neurons = 1024, nodes = 128, m = 10; // b = 8, density 10/128
    const double density = double(m) / nodes;
    auto graph = [&](const std::vector<std::set<unsigned>>& rows) {
        std::vector<std::set<unsigned>> adj(nodes);
        for (unsigned r = 0; r < nodes; r++)
            for (unsigned c : rows[r])
                if (c != r) adj[r].insert(c), adj[c].insert(r);
        return adj;
    };
    // No rewiring: exactly the ring lattice, the m columns centred on the row's own.
    const auto lattice =
        blockRows(prefs(1), {8, BlockLayout::WattsStrogatz, density, 0.0}, neurons);
    for (unsigned r = 0; r < nodes; r++) {
        std::set<unsigned> want;
        for (unsigned j = 0; j < m; j++)
            want.insert((r + nodes - m / 2 + j) % nodes);
        ASSERT_EQ(lattice[r], want) << "block-row " << r;
    }
    const BlockSparseInit smallWorld{8, BlockLayout::WattsStrogatz, density, 0.1};
    const auto rewired = blockRows(prefs(1), smallWorld, neurons);
    const auto random = blockRows(prefs(1), {8, BlockLayout::Random, density}, neurons);
    size_t moved = 0;
    for (unsigned r = 0; r < nodes; r++) {
        ASSERT_EQ(rewired[r].size(), m) << "block-row " << r;
        ASSERT_EQ(random[r].size(), m) << "block-row " << r;
        for (unsigned c : rewired[r])
            moved += lattice[r].count(c) == 0;
    }
    // About a tenth of the lattice's tiles move: binomial(1280, 0.1) = 128 +- 11.
    EXPECT_GT(moved, 80u);
    EXPECT_LT(moved, 180u);
    const GraphStats sw = blockGraphStats(graph(rewired)), rnd = blockGraphStats(graph(random));
    // Watts & Strogatz (1998): clustering far above a random graph's, paths nearly as short.
    EXPECT_GT(sw.clustering, 2.5 * rnd.clustering) << sw.clustering << " vs " << rnd.clustering;
    EXPECT_LT(sw.pathLength, 1.6 * rnd.pathLength) << sw.pathLength << " vs " << rnd.pathLength;
    EXPECT_EQ(rewired, blockRows(sftest::preferencesFor("cpu"), smallWorld, neurons));
}

// Balanced: exactly m tiles in every block-row and every block-column, yet rows as unrelated as
// random ones (a banded layout would give some pairs of rows m - 1 shared columns), on grids of
// 100 (not a power of two: the permutations walk cycles) and 64 nodes, m by Floyd's algorithm
// and by selection sampling; the same on every backend; another seed gives another layout.
TEST_P(BlockSparseTest, BalancedLayoutHasEqualRowAndColumnCounts) {
    for (const auto& [nodes, m] : {std::pair{100u, 6u}, std::pair{100u, 30u}, std::pair{64u, 9u}}) {
        SCOPED_TRACE(testing::Message() << nodes << " nodes, " << m << " per row");
        const unsigned neurons = nodes * 8 - 3; // the last block-row and column cut off
        const BlockSparseInit b{8, BlockLayout::Balanced, double(m) / nodes};
        const auto rows = blockRows(prefs(1), b, neurons);
        ASSERT_EQ(rows.size(), nodes);
        std::vector<unsigned> perColumn(nodes, 0);
        for (unsigned r = 0; r < nodes; r++) {
            ASSERT_EQ(rows[r].size(), m) << "block-row " << r;
            for (unsigned c : rows[r])
                perColumn[c]++;
        }
        for (unsigned c = 0; c < nodes; c++)
            EXPECT_EQ(perColumn[c], m) << "block-column " << c;
        // Columns two rows share: the mean is m (m - 1) / (nodes - 1) for any balanced layout,
        // but a banded one (consecutive offsets, rows in any order) has pairs sharing m - 1;
        // random-like rows share about m^2 / nodes, a few more at most.
        unsigned maxShared = 0;
        for (unsigned r = 0; r < nodes; r++)
            for (unsigned q = r + 1; q < nodes; q++) {
                unsigned both = 0;
                for (unsigned c : rows[r])
                    both += rows[q].count(c);
                maxShared = std::max(maxShared, both);
            }
        EXPECT_LT(maxShared, m - 1);
        EXPECT_LE(maxShared, 3 + 2 * m * m / nodes);
        EXPECT_EQ(rows, blockRows(sftest::preferencesFor("cpu"), b, neurons));
        auto reseeded = prefs(1);
        Model other("block_sparse_reseeded");
        other.setSeed(12345);
        other.addNeuronGroup("Hidden", neurons, pattern(), {}, {{"k", 0.0}});
        other.addSynapseGroup("Rec", MatrixType::BlockSparse, 0, "Hidden", "Hidden", staticPulse(),
                              {models::DeltaCurr(), {}, {}}, b);
        Simulation sim(other, reseeded);
        std::vector<std::set<unsigned>> otherRows(nodes);
        for (const auto& pair : sim.synapses("Rec"))
            otherRows[pair.pre / 8].insert(pair.post / 8);
        EXPECT_NE(rows, otherRows);
    }
}

// Postsynaptic learning through the transposed block index: a target's spike visits each of its
// synapses once, as in a Dense group, so after a run the weights at the tiles' synapses equal
// the Dense group's bit for bit (sums of eighths); sizes not multiples of b, several tiles per
// block-column, batch 1 and 3, each layout's index.
TEST_P(BlockSparseTest, PostsynapticLearningMatchesTheEquivalentDenseGroup) {
    const WeightUpdateModel learn = sftest::postLearning();
    for (const auto& [shape, layout] :
         {std::pair{Shape{45, 37, 8, 0.5}, BlockLayout::Random},
          std::pair{Shape{70, 70, 16, 0.4}, BlockLayout::Balanced},
          std::pair{Shape{64, 100, 8, 0.3}, BlockLayout::WattsStrogatz}})
        for (unsigned batch : {1u, 3u}) {
            const Shape& s = shape;
            SCOPED_TRACE(testing::Message()
                         << s.pre << " x " << s.post << ", b = " << s.block << ", batch " << batch);
            Model m("block_sparse_post_learning");
            m.setBatchSize(batch);
            m.addNeuronGroup("Src", s.pre, pattern(), {}, {{"k", 0.0}});
            m.addNeuronGroup("ViaBlocks", s.post, pattern(), {}, {{"k", 0.0}}); // spiking
            m.addNeuronGroup("ViaDense", s.post, pattern(), {}, {{"k", 0.0}});
            const WeightUpdateInit wu{learn, {}, {{"g", 0.0}}, {}, {}};
            m.addSynapseGroup("Blocks", MatrixType::BlockSparse, 0, "Src", "ViaBlocks", wu,
                              {models::DeltaCurr(), {}, {}},
                              BlockSparseInit{s.block, layout, s.density});
            m.addSynapseGroup("Dense", MatrixType::Dense, 0, "Src", "ViaDense", wu,
                              {models::DeltaCurr(), {}, {}});
            Simulation sim(m, prefs(2));
            const auto pairs = sim.synapses("Blocks");
            for (unsigned b = 0; b < batch; b++)
                setMatchingWeights(sim, pairs, s.pre, s.post, b, 1.0, {"Blocks"}, {"Dense"});
            sim.run(25);
            // The rule ran on most synapses.
            EXPECT_GT(sftest::expectSameWeights(sim, pairs, s.post, batch), pairs.size() / 2);
        }
}

// A block mask given by the user: rows of different lengths (one empty, one full), its tiles
// exactly (the codec lists them), delivery as the Dense group with the same weights (bit for
// bit), postsynaptic learning through the transposed index as Dense's, the same after reset();
// batch 1 and 3; every backend.
TEST_P(BlockSparseTest, GivenMaskHoldsItsTilesAndDeliversAsDense) {
    const unsigned pre = 45, post = 37, b = 8; // 6 block-rows (the last of 5), 5 block-columns
    const std::vector<std::pair<uint32_t, uint32_t>> blocks = {
        {0, 4}, {0, 1}, {2, 0}, {2, 1}, {2, 2}, {2, 3}, {2, 4}, {3, 2}, {5, 0}, {5, 4}};
    std::set<std::pair<unsigned, unsigned>> wanted(blocks.begin(), blocks.end());
    WeightUpdateModel learn;
    learn.name = "PostLearningMask";
    learn.vars = {{"g", "scalar"}};
    learn.preSpikeSynCode = "addToPost(g);";
    learn.postSpikeSynCode = "g += 0.125 * (id_pre % 3) - 0.125 * (id_post % 2);";
    for (unsigned batch : {1u, 3u}) {
        SCOPED_TRACE(testing::Message() << "batch " << batch);
        Model m("block_sparse_mask");
        m.setBatchSize(batch);
        m.addNeuronGroup("Src", pre, pattern(), {}, {{"k", 0.0}});
        m.addNeuronGroup("ViaBlocks", post, sftest::accumulate(), {}, {{"acc", 0.0}});
        m.addNeuronGroup("ViaDense", post, sftest::accumulate(), {}, {{"acc", 0.0}});
        m.addNeuronGroup("LearnBlocks", post, pattern(), {}, {{"k", 0.0}});
        m.addNeuronGroup("LearnDense", post, pattern(), {}, {{"k", 0.0}});
        m.addNeuronGroup("CountBlocks", post, sftest::accumulate(), {}, {{"acc", 0.0}});
        m.addNeuronGroup("CountDense", post, sftest::accumulate(), {}, {{"acc", 0.0}});
        BlockSparseInit mask{b, BlockLayout::Mask};
        mask.blocks = blocks;
        const PostsynapticInit ps{models::DeltaCurr(), {}, {}};
        m.addSynapseGroup("Blocks", MatrixType::BlockSparse, 0, "Src", "ViaBlocks", staticPulse(),
                          ps, mask);
        m.addSynapseGroup("Dense", MatrixType::Dense, 0, "Src", "ViaDense", staticPulse(), ps);
        const WeightUpdateInit wu{learn, {}, {{"g", 0.0}}, {}, {}};
        m.addSynapseGroup("LearnB", MatrixType::BlockSparse, 0, "Src", "LearnBlocks", wu, ps, mask);
        m.addSynapseGroup("LearnD", MatrixType::Dense, 0, "Src", "LearnDense", wu, ps);
        // A unit per synapse without a weight: a padding slot walked by mistake would count.
        WeightUpdateModel unit;
        unit.name = "Unit";
        unit.preSpikeSynCode = "addToPost(1.0);";
        m.addSynapseGroup("CountB", MatrixType::BlockSparse, 0, "Src", "CountBlocks",
                          {unit, {}, {}, {}, {}}, ps, mask);
        m.addSynapseGroup("CountD", MatrixType::Dense, 0, "Src", "CountDense", staticPulse(), ps);
        Simulation sim(m, prefs(2));
        EXPECT_EQ(m.synapseGroup("Blocks").blocksPerRow(), 5u); // the fullest row
        for (int pass = 0; pass < 2; pass++) { // the second after reset(): the mask uploaded again
            SCOPED_TRACE(pass ? "after reset" : "first run");
            const auto pairs = sim.synapses("Blocks");
            std::set<std::pair<unsigned, unsigned>> seen;
            for (const auto& p : pairs)
                seen.insert({p.pre / b, p.post / b});
            EXPECT_EQ(seen, wanted);
            size_t expected = 0;
            for (const auto& [r, c] : blocks)
                expected += size_t(std::min(b, pre - r * b)) * std::min(b, post - c * b);
            ASSERT_EQ(pairs.size(), expected);
            EXPECT_EQ(sim.synapseCount("Blocks"), expected);
            for (unsigned e = 0; e < batch; e++) {
                setMatchingWeights(sim, pairs, pre, post, e, e + 1, {"Blocks", "LearnB"},
                                   {"Dense", "LearnD"});
                std::vector<double> ones(size_t(pre) * post, 0.0);
                for (const auto& p : pairs)
                    ones[size_t(p.pre) * post + p.post] = 1.0;
                sim.setSynapseMatrix("CountD", "g", ones, e);
            }
            sim.run(25);
            sim.pull("ViaBlocks", "acc");
            sim.pull("ViaDense", "acc");
            const auto got = sim.view<float>("ViaBlocks", "acc");
            const auto want = sim.view<float>("ViaDense", "acc");
            for (size_t i = 0; i < want.size(); i++)
                ASSERT_EQ(got[i], want[i]) << "target " << i % post << " batch " << i / post;
            sim.pull("CountBlocks", "acc");
            sim.pull("CountDense", "acc");
            const auto counted = sim.view<float>("CountBlocks", "acc");
            const auto inMask = sim.view<float>("CountDense", "acc");
            for (size_t i = 0; i < inMask.size(); i++)
                ASSERT_EQ(counted[i], inMask[i]) << "target " << i % post << " batch " << i / post;
            size_t changed = 0;
            for (unsigned e = 0; e < batch; e++) {
                const auto learnt = sim.synapseValues("LearnB", "g", e);
                const auto dense = sim.synapseMatrix("LearnD", "g", e);
                for (size_t i = 0; i < pairs.size(); i++) {
                    ASSERT_EQ(learnt[i], dense[size_t(pairs[i].pre) * post + pairs[i].post])
                        << pairs[i].pre << " -> " << pairs[i].post;
                    changed += learnt[i] != weightOf(pairs[i].pre, pairs[i].post) * (e + 1);
                }
            }
            EXPECT_GT(changed, pairs.size() / 2);
            sim.reset();
        }
    }
}

// Rows stored in memory (Sparse, BlockSparse) are fetched ahead: the presynaptic loop carries
// the prefetch of a later source's row (sfNextPre) — the layout's own arrays and the
// per-synapse variables the code reads, nothing else; Dense rows (one stream the hardware
// prefetcher follows) and a weight the code does not store carry none.
TEST(RowPrefetch, StoredRowsAreFetchedAhead) {
    auto prefetchOf = [](MatrixType type, const WeightUpdateInit& wu) {
        Model m("row_prefetch");
        m.addNeuronGroup("Src", 100, pattern(), {}, {{"k", 0.0}});
        m.addNeuronGroup("Tgt", 100, sftest::accumulate(), {}, {{"acc", 0.0}});
        const PostsynapticInit ps{models::DeltaCurr(), {}, {}};
        if (type == MatrixType::BlockSparse)
            m.addSynapseGroup("Syn", type, 0, "Src", "Tgt", wu, ps,
                              BlockSparseInit{8, BlockLayout::Random, 0.25});
        else if (type == MatrixType::Sparse)
            m.addSynapseGroup("Syn", type, 0, "Src", "Tgt", wu, ps, init::FixedProbability(0.1));
        else
            m.addSynapseGroup("Syn", type, 0, "Src", "Tgt", wu, ps);
        m.finalise();
        const codegen::Plan plan = codegen::lowerModel(m);
        for (const auto& k : plan.kernels)
            for (const auto& g : k.groups)
                if (const auto* b = std::get_if<codegen::PropagationBody>(&g.body))
                    if (b->presynaptic) return b->loop.prefetch;
        ADD_FAILURE() << "no presynaptic update";
        return std::string();
    };
    const std::string sparse = prefetchOf(MatrixType::Sparse, staticPulse());
    expectContains(sparse, {"sfNextPre", "SF_PREFETCH", "rowLength", "ind", "g_g"});
    const std::string blocks = prefetchOf(MatrixType::BlockSparse, staticPulse());
    expectContains(blocks, {"sfNextPre", "SF_PREFETCH", "blockCol", "g_g"});
    EXPECT_EQ(blocks.find("id_pre"), std::string::npos) << "the later spike's row, not this one";
    EXPECT_EQ(prefetchOf(MatrixType::Dense, staticPulse()), "");
    const WeightUpdateInit constant{models::StaticPulseConstantWeight(), {{"g", 0.5}}, {}, {}, {}};
    const std::string unstored = prefetchOf(MatrixType::BlockSparse, constant);
    EXPECT_NE(unstored.find("blockCol"), std::string::npos);
    EXPECT_EQ(unstored.find("g_g"), std::string::npos);
}

// The bytes a projection holds on the device (the model summary's B/synapse): BlockSparse's
// are its weights and one index per tile (plus its postsynaptic input), about half of what a
// Sparse group of the same synapse count holds (a weight and an index per synapse, rows padded).
TEST_P(BlockSparseTest, DeviceBytesPerProjection) {
    const Shape s{512, 512, 16, 0.25};
    Model m("block_sparse_bytes");
    addGroups(m, s, 2);
    m.addNeuronGroup("ViaSparse", s.post, sftest::accumulate(), {}, {{"acc", 0.0}});
    m.addSynapseGroup("Sparse", MatrixType::Sparse, 0, "Src", "ViaSparse", staticPulse(),
                      {models::DeltaCurr(), {}, {}}, init::FixedProbability(0.25));
    Simulation sim(m, prefs(1));
    const SynapseGroup& g = m.synapseGroup("Blocks");
    const size_t tiles = size_t(g.numBlockRows()) * g.blocksPerRow();
    // StaticPulse's g is read-only: one copy for the batch; the input is per batch element.
    const size_t weights = sim.synapseCount("Blocks") * sizeof(float);
    const size_t input = 2 * s.post * sizeof(float);
    EXPECT_GE(sim.deviceBytes("Blocks"), weights + 4 * tiles + input);
    EXPECT_LE(sim.deviceBytes("Blocks"), weights + 4 * tiles + 2 * input + 64);
    EXPECT_GT(sim.deviceBytes("Sparse"), 1.4 * double(sim.deviceBytes("Blocks")));
    EXPECT_GE(sim.deviceBytes("Dense"), size_t(s.pre) * s.post * sizeof(float));
    expectContains(sftest::errorOf<ModelError>([&] { (void)sim.deviceBytes("Nope"); }),
                   {"no group 'Nope'"});
}

TEST_P(BlockSparseTest, CodecReadsTheDenseMatrix) {
    const Shape s{20, 30, 8, 0.5};
    Model m("block_sparse_codec");
    addGroups(m, s, 1);
    Simulation sim(m, prefs(1));
    const auto pairs = sim.synapses("Blocks");
    std::vector<double> values;
    for (const auto& p : pairs)
        values.push_back(weightOf(p.pre, p.post) + 8.0); // never 0
    sim.setSynapseValues("Blocks", "g", values);
    const auto matrix = sim.synapseMatrix("Blocks", "g", 0, -100.0);
    const auto count = sim.connectivityMatrix("Blocks");
    std::set<std::pair<uint32_t, uint32_t>> present;
    for (const auto& p : pairs)
        present.insert({p.pre, p.post});
    EXPECT_EQ(present.size(), pairs.size()); // no pair twice
    for (uint32_t i = 0; i < s.pre; i++)
        for (uint32_t j = 0; j < s.post; j++) {
            const size_t at = size_t(i) * s.post + j;
            const bool has = present.count({i, j}) > 0;
            EXPECT_EQ(count[at], has ? 1u : 0u);
            EXPECT_EQ(matrix[at], has ? weightOf(i, j) + 8.0 : -100.0);
        }
    // The matrix round trip sets the same values; a value off the tiles is refused.
    std::vector<double> dense(matrix);
    for (double& v : dense)
        if (v == -100.0) v = 0.0;
    sim.setSynapseMatrix("Blocks", "g", dense);
    EXPECT_EQ(sim.synapseValues("Blocks", "g"), values);
    const auto absent = std::find(count.begin(), count.end(), 0u) - count.begin();
    ASSERT_LT(size_t(absent), count.size());
    dense[absent] = 1.0;
    expectContains(sftest::errorOf<ModelError>([&] { sim.setSynapseMatrix("Blocks", "g", dense); }),
                   {"Blocks"});
    expectContains(sftest::errorOf<ModelError>([&] {
                       const std::vector<SynapsePair> list{{0, 0}};
                       sim.setSynapses("Blocks", list);
                   }),
                   {"Blocks", "BlockSparse"});
}

// Custom updates over block-sparse variables: each element decodes to its own (pre, post), and a
// batch reduction sums each synapse's values over the batch; padding is left alone.
TEST_P(BlockSparseTest, CustomUpdatesSeeEachSynapsesPairAndReduceOverTheBatch) {
    using A = CustomUpdateVarAccess;
    const unsigned batch = 3;
    Model m("block_sparse_custom");
    m.setBatchSize(batch);
    m.addNeuronGroup("Src", 45, pattern(), {}, {{"k", 0.0}});
    m.addNeuronGroup("Tgt", 21, sftest::accumulate(), {}, {{"acc", 0.0}});
    WeightUpdateModel wu;
    wu.name = "Holder";
    wu.vars = {{"g", "scalar", VarAccess::ReadOnly}, {"grad"}, {"pair"}};
    wu.preSpikeSynCode = "addToPost(g);";
    m.addSynapseGroup("Blocks", MatrixType::BlockSparse, 0, "Src", "Tgt",
                      {wu, {}, {{"g", 0.0}, {"grad", 0.0}, {"pair", 0.0}}, {}, {}},
                      {models::DeltaCurr(), {}, {}}, BlockSparseInit{16, BlockLayout::Random, 0.5});
    CustomUpdateModel label;
    label.name = "Label";
    label.varRefs = {{"pair", "scalar", A::ReadWrite}};
    label.updateCode = "pair = id_pre * 1000 + id_post;";
    m.addCustomUpdateWU("L", "Label", label, {}, {}, {{"pair", {"Blocks", "pair"}}});
    CustomUpdateModel reduce;
    reduce.name = "Reduce";
    reduce.varRefs = {{"grad", "scalar", A::ReadOnly}, {"g", "scalar", A::ReduceBatchSum}};
    reduce.updateCode = "g = grad;";
    m.addCustomUpdateWU("R", "Reduce", reduce, {}, {},
                        {{"grad", {"Blocks", "grad"}}, {"g", {"Blocks", "g"}}});
    Simulation sim(m, prefs(1));
    const auto pairs = sim.synapses("Blocks");
    ASSERT_FALSE(pairs.empty());
    std::vector<double> total(pairs.size(), 0.0);
    for (unsigned b = 0; b < batch; b++) {
        std::vector<double> grad;
        for (size_t k = 0; k < pairs.size(); k++) {
            grad.push_back(weightOf(pairs[k].pre, pairs[k].post) + b);
            total[k] += grad.back();
        }
        sim.setSynapseValues("Blocks", "grad", grad, b);
    }
    sim.customUpdate("Label");
    sim.customUpdate("Reduce");
    const auto labels = sim.synapseValues("Blocks", "pair", 1);
    for (unsigned b = 0; b < batch; b++) {
        const auto g = sim.synapseValues("Blocks", "g", b);
        for (size_t k = 0; k < pairs.size(); k++)
            ASSERT_EQ(g[k], total[k]) << "batch " << b << " synapse " << k;
    }
    for (size_t k = 0; k < pairs.size(); k++)
        ASSERT_EQ(labels[k], pairs[k].pre * 1000.0 + pairs[k].post) << "synapse " << k;
}

SF_INSTANTIATE_BACKEND_TESTS(BlockSparseTest);

TEST(BlockSparseModel, BadParametersAreClearErrors) {
    auto finalise = [](BlockSparseInit b, const char* postCode = "") {
        Model m("block_sparse_bad");
        m.addNeuronGroup("Src", 20, pattern(), {}, {{"k", 0.0}});
        m.addNeuronGroup("Tgt", 20, sftest::accumulate(), {}, {{"acc", 0.0}});
        WeightUpdateInit wu = staticPulse();
        wu.model.postSpikeSynCode = postCode;
        m.addSynapseGroup("Syn", MatrixType::BlockSparse, 0, "Src", "Tgt", wu,
                          {models::DeltaCurr(), {}, {}}, b);
        m.finalise();
    };
    expectContains(sftest::errorOf<ModelError>([&] {
                       finalise({12, BlockLayout::Random, 0.5});
                   }),
                   {"Syn", "block size 12", "8, 16, 32"});
    for (double d : {0.0, -0.5, 1.5, std::nan("")})
        expectContains(sftest::errorOf<ModelError>([&] {
                           finalise({8, BlockLayout::Random, d});
                       }),
                       {"Syn", "density"});
    expectContains(sftest::errorOf<ModelError>([&] {
                       finalise({8, BlockLayout::WattsStrogatz, 0.3, 1.5});
                   }),
                   {"Syn", "rewiring probability"});
    expectContains(sftest::errorOf<ModelError>([&] {
                       finalise({8, BlockLayout::Random, 0.3, 0.1});
                   }),
                   {"Syn", "WattsStrogatz"});
    // Rewiring needs free columns: 2 of 3 block-columns per block-row is refused.
    expectContains(sftest::errorOf<ModelError>([&] {
                       finalise({8, BlockLayout::WattsStrogatz, 0.6, 0.5});
                   }),
                   {"Syn", "at most half"});
    EXPECT_NO_THROW(finalise({8, BlockLayout::WattsStrogatz, 0.6, 0.0})); // the lattice alone
    auto maskOf = [](std::vector<std::pair<uint32_t, uint32_t>> blocks) {
        BlockSparseInit b{8, BlockLayout::Mask};
        b.blocks = std::move(blocks);
        return b;
    };
    expectContains(sftest::errorOf<ModelError>([&] { finalise(maskOf({})); }),
                   {"Syn", "Mask", "at least one block"});
    expectContains(sftest::errorOf<ModelError>([&] {
                       finalise(maskOf({{0, 1}, {3, 0}}));
                   }),
                   {"Syn", "block 1 (3, 0)", "outside the 3 x 3 block grid"});
    expectContains(sftest::errorOf<ModelError>([&] {
                       finalise(maskOf({{1, 2}, {0, 0}, {1, 2}}));
                   }),
                   {"Syn", "block (1, 2)", "given twice"});
    BlockSparseInit randomWithBlocks{8, BlockLayout::Random, 0.5};
    randomWithBlocks.blocks = {{0, 0}};
    expectContains(sftest::errorOf<ModelError>([&] { finalise(randomWithBlocks); }),
                   {"Syn", "Mask layout only"});
    Model wide("block_sparse_balanced_shape"); // 3 block-rows onto 5 block-columns
    wide.addNeuronGroup("Src", 20, pattern(), {}, {{"k", 0.0}});
    wide.addNeuronGroup("Tgt", 40, sftest::accumulate(), {}, {{"acc", 0.0}});
    wide.addSynapseGroup("Syn", MatrixType::BlockSparse, 0, "Src", "Tgt", staticPulse(),
                         {models::DeltaCurr(), {}, {}},
                         BlockSparseInit{8, BlockLayout::Balanced, 0.4});
    expectContains(sftest::errorOf<ModelError>([&] { wide.finalise(); }),
                   {"Syn", "Balanced", "as many block-rows as block-columns", "3 and 5"});
    Model m("block_sparse_overloads");
    m.addNeuronGroup("Src", 20, pattern(), {}, {{"k", 0.0}});
    m.addNeuronGroup("Tgt", 20, sftest::accumulate(), {}, {{"acc", 0.0}});
    expectContains(sftest::errorOf<ModelError>([&] {
                       m.addSynapseGroup("A", MatrixType::BlockSparse, 0, "Src", "Tgt",
                                         staticPulse(), {models::DeltaCurr(), {}, {}});
                   }),
                   {"A", "block layout"});
    expectContains(sftest::errorOf<ModelError>([&] {
                       m.addSynapseGroup("B", MatrixType::Dense, 0, "Src", "Tgt", staticPulse(),
                                         {models::DeltaCurr(), {}, {}}, BlockSparseInit{});
                   }),
                   {"B", "MatrixType::BlockSparse"});
}

} // namespace
