// The matrix form of block-sparse spike propagation (BlockSparseInit::propagation): the batch's
// spikes times the block-sparse weights, tile by tile. It delivers bit for bit what the
// event-driven form and a Dense group with the same weights deliver (sizes that are and are not
// multiples of b, b = 8, 16, 32, fixed-row and block-CSR layouts, batch 1 and 5); forward (W^T s)
// and through a Transposed group (W s) it matches a dense product computed here; Auto picks it
// by the expected tile uses; code it cannot run is a clear error. Every backend.
#include "backend_fixture.hpp"
#include "block_sparse_support.hpp"
#include "codegen/lower.hpp"
#include "probe_models.hpp"
#include "spikeforge/models.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

using namespace spikeforge;
using sftest::pattern;
using sftest::staticPulse;

namespace {

struct Shape {
    unsigned pre, post, block;
    BlockLayout layout;
    double density;
};

BlockSparseInit blocksOf(const Shape& s, Propagation form) {
    BlockSparseInit b{s.block, s.layout, s.density};
    if (s.layout == BlockLayout::Mask) // block-row 1 empty, block-row 0 full, others two tiles
        for (uint32_t r = 0; r < (s.pre + s.block - 1) / s.block; r++)
            for (uint32_t c = 0; c < (s.post + s.block - 1) / s.block; c++)
                if (r == 0 || (r != 1 && (c == r % 3 || c == (r * 5 + 1) % 4)))
                    b.blocks.push_back({r, c});
    if (s.layout == BlockLayout::BarabasiAlbert) b.attachments = 2;
    b.propagation = form;
    return b;
}

// Src (spiking on a pattern, ~2/7 of its neurons each step) -> ViaBlocks through "Blocks";
// -> ViaDense through "Dense"; every name ends in `tag`, so that several shapes can share a model.
void addGroups(Model& m, const Shape& s, Propagation form, const std::string& tag = "") {
    m.addNeuronGroup("Src" + tag, s.pre, pattern(), {}, {{"k", 0.0}});
    m.addNeuronGroup("ViaBlocks" + tag, s.post, sftest::accumulate(), {}, {{"acc", 0.0}});
    m.addNeuronGroup("ViaDense" + tag, s.post, sftest::accumulate(), {}, {{"acc", 0.0}});
    m.addSynapseGroup("Blocks" + tag, MatrixType::BlockSparse, 0, "Src" + tag, "ViaBlocks" + tag,
                      staticPulse(), {models::DeltaCurr(), {}, {}}, blocksOf(s, form));
    m.addSynapseGroup("Dense" + tag, MatrixType::Dense, 0, "Src" + tag, "ViaDense" + tag,
                      staticPulse(), {models::DeltaCurr(), {}, {}});
}

// The block size of the matrix form the plan gives group `group`'s presynaptic update (0: the
// event-driven form), so a test cannot pass by comparing the event-driven form with itself.
unsigned matrixBlockOf(const Model& m, const std::string& group) {
    const codegen::Plan plan = codegen::lowerModel(m);
    for (const auto& k : plan.kernels)
        for (const auto& g : k.groups)
            if (const auto* b = std::get_if<codegen::PropagationBody>(&g.body))
                if (const auto& names = plan.mergedGroups.at(g.table).groupNames;
                    b->presynaptic && std::find(names.begin(), names.end(), group) != names.end())
                    return b->matrix.blockSize;
    ADD_FAILURE() << "no presynaptic update of " << group;
    return 0;
}

class BlockMatrixTest : public sftest::BackendTest {};

// The shapes side by side in one model per batch size and form (each shape its own groups, so
// one build serves five networks; a build is most of a backend test's time).
TEST_P(BlockMatrixTest, DeliversWhatTheEventDrivenFormAndDenseDeliver) {
    const std::vector<Shape> shapes = {
        Shape{40, 37, 8, BlockLayout::Random, 0.4}, Shape{64, 48, 16, BlockLayout::Random, 0.34},
        Shape{50, 70, 32, BlockLayout::Random, 0.5}, Shape{45, 70, 8, BlockLayout::Mask, 0.1},
        Shape{90, 90, 8, BlockLayout::BarabasiAlbert, 0.1}};
    for (unsigned batch : {1u, 5u}) {
        std::vector<std::vector<float>> inputs[2]; // per form, per shape
        for (Propagation form : {Propagation::Matrix, Propagation::EventDriven}) {
            Model m("block_matrix_vs_event");
            m.setBatchSize(batch);
            for (size_t i = 0; i < shapes.size(); i++)
                addGroups(m, shapes[i], form, std::to_string(i));
            m.finalise();
            for (size_t i = 0; i < shapes.size(); i++)
                ASSERT_EQ(matrixBlockOf(m, "Blocks" + std::to_string(i)),
                          form == Propagation::Matrix ? shapes[i].block : 0u)
                    << "shape " << i;
            Simulation sim(m, prefs(2));
            for (size_t i = 0; i < shapes.size(); i++) {
                const Shape& s = shapes[i];
                const std::string tag = std::to_string(i);
                const auto pairs = sim.synapses("Blocks" + tag);
                ASSERT_FALSE(pairs.empty()) << "shape " << i;
                const std::string blocks = "Blocks" + tag, dense = "Dense" + tag;
                for (unsigned b = 0; b < batch; b++)
                    sftest::setMatchingWeights(sim, pairs, s.pre, s.post, b, b + 1,
                                               {blocks.c_str()}, {dense.c_str()});
            }
            sim.run(30);
            for (size_t i = 0; i < shapes.size(); i++) {
                const Shape& s = shapes[i];
                const std::string tag = std::to_string(i);
                SCOPED_TRACE(testing::Message()
                             << s.pre << " x " << s.post << ", b = " << s.block << ", layout "
                             << int(s.layout) << ", batch " << batch << ", form " << int(form));
                EXPECT_GT(sftest::expectSameInput(sim, "ViaBlocks" + tag, "ViaDense" + tag, s.post),
                          size_t(s.post) * batch / 4);
                const auto acc = sim.view<float>("ViaBlocks" + tag, "acc");
                inputs[form == Propagation::Matrix ? 0 : 1].emplace_back(acc.begin(), acc.end());
            }
        }
        for (size_t i = 0; i < shapes.size(); i++)
            EXPECT_EQ(inputs[0].at(i), inputs[1].at(i)) << "shape " << i << ", batch " << batch;
    }
}

// Weights drawn from Uniform(-1, 1) (not exact in float), one matrix per batch element: the input
// accumulated over the run against sum over steps of W^T s(t) computed here in double from the
// spikes each step emitted (delivered the step after), to 1e-5 of the largest magnitude; and the
// Transposed group of W (source and target swapped) against W s(t) of the target population's
// spikes.
TEST_P(BlockMatrixTest, ForwardAndTransposedMatchADenseProduct) {
    constexpr unsigned kA = 45, kB = 70, kBatch = 3, kSteps = 25;
    Model m("block_matrix_product");
    m.setBatchSize(kBatch);
    m.addNeuronGroup("A", kA, pattern(), {}, {{"k", 0.0}});
    m.addNeuronGroup("B", kB, pattern(), {}, {{"k", 3.0}});
    m.addNeuronGroup("AccB", kB, sftest::accumulate(), {}, {{"acc", 0.0}});
    m.addNeuronGroup("AccA", kA, sftest::accumulate(), {}, {{"acc", 0.0}});
    const PostsynapticInit ps{models::DeltaCurr(), {}, {}};
    BlockSparseInit fwd{8, BlockLayout::Random, 0.4};
    fwd.propagation = Propagation::Matrix;
    BlockSparseInit back{8, BlockLayout::Transposed};
    back.transposeOf = "Fwd";
    back.propagation = Propagation::Matrix;
    WeightUpdateModel perBatch; // a weight per batch element, read-write (assigned by nothing)
    perBatch.name = "PerBatch";
    perBatch.vars = {{"g", "scalar", VarAccess::ReadWrite}};
    perBatch.preSpikeSynCode = "addToPost(g);";
    const WeightUpdateInit wu{perBatch, {}, {{"g", 0.0}}, {}, {}};
    m.addSynapseGroup("Fwd", MatrixType::BlockSparse, 0, "A", "AccB", wu, ps, fwd);
    m.addSynapseGroup("Back", MatrixType::BlockSparse, 0, "B", "AccA", wu, ps, back);
    m.finalise();
    ASSERT_EQ(matrixBlockOf(m, "Fwd"), 8u);
    ASSERT_EQ(matrixBlockOf(m, "Back"), 8u);
    Simulation sim(m, prefs(2));
    const auto fwdPairs = sim.synapses("Fwd"), backPairs = sim.synapses("Back");
    ASSERT_EQ(fwdPairs.size(), backPairs.size());
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    std::vector<std::vector<double>> w(kBatch, std::vector<double>(size_t(kA) * kB, 0.0));
    for (unsigned b = 0; b < kBatch; b++) {
        std::vector<double> values;
        for (const auto& p : fwdPairs) {
            values.push_back(float(uniform(rng)));
            w[b][size_t(p.pre) * kB + p.post] = values.back();
        }
        sim.setSynapseValues("Fwd", "g", values, b);
        values.clear();
        for (const auto& p : backPairs) { // Back's pair (b, a) holds W[a][b]
            const double v = w[b][size_t(p.post) * kB + p.pre];
            EXPECT_NE(v, 0.0) << "Back's tile at " << p.pre << ", " << p.post << " not in Fwd";
            values.push_back(v);
        }
        sim.setSynapseValues("Back", "g", values, b);
    }
    std::vector<double> wantB(size_t(kBatch) * kB, 0.0), wantA(size_t(kBatch) * kA, 0.0);
    for (unsigned step = 0; step < kSteps; step++) {
        sim.step();
        if (step + 1 == kSteps) break; // spikes of the last step are delivered after it
        const auto spikesA = sim.currentSpikes("A"), spikesB = sim.currentSpikes("B");
        for (unsigned b = 0; b < kBatch; b++) {
            for (uint32_t a : spikesA[b])
                for (unsigned j = 0; j < kB; j++)
                    wantB[size_t(b) * kB + j] += w[b][size_t(a) * kB + j];
            for (uint32_t j : spikesB[b])
                for (unsigned a = 0; a < kA; a++)
                    wantA[size_t(b) * kA + a] += w[b][size_t(a) * kB + j];
        }
    }
    auto expectNear = [&](const std::string& group, const std::vector<double>& want) {
        sim.pull(group, "acc");
        const auto got = sim.view<float>(group, "acc");
        ASSERT_EQ(got.size(), want.size());
        double scale = 0;
        for (double v : want)
            scale = std::max(scale, std::abs(v));
        ASSERT_GT(scale, 1.0) << group << " received nothing";
        for (size_t i = 0; i < want.size(); i++)
            EXPECT_NEAR(got[i], want[i], 1e-5 * scale) << group << " element " << i;
    };
    expectNear("AccB", wantB);
    expectNear("AccA", wantA);
}

// After pruning moves tiles (and the transposed index the SIMT gather walks is rebuilt), the
// matrix form still delivers what the Dense group with the new weights delivers.
TEST_P(BlockMatrixTest, PrunedGroupStillDeliversAsDense) {
    constexpr unsigned kPre = 60, kPost = 44, kBatch = 3;
    Model m("block_matrix_pruned");
    m.setBatchSize(kBatch);
    m.addNeuronGroup("Src", kPre, pattern(), {}, {{"k", 0.0}});
    m.addNeuronGroup("ViaBlocks", kPost, sftest::accumulate(), {}, {{"acc", 0.0}});
    m.addNeuronGroup("ViaDense", kPost, sftest::accumulate(), {}, {{"acc", 0.0}});
    BlockSparseInit blocks{8, BlockLayout::Random, 0.35};
    blocks.prunedBy = "g";
    blocks.propagation = Propagation::Matrix;
    m.addSynapseGroup("Blocks", MatrixType::BlockSparse, 0, "Src", "ViaBlocks", staticPulse(),
                      {models::DeltaCurr(), {}, {}}, blocks);
    m.addSynapseGroup("Dense", MatrixType::Dense, 0, "Src", "ViaDense", staticPulse(),
                      {models::DeltaCurr(), {}, {}});
    m.finalise();
    ASSERT_EQ(matrixBlockOf(m, "Blocks"), 8u);
    Simulation sim(m, prefs(2));
    const auto first = sim.synapses("Blocks");
    sim.pruneBlocks("Blocks", 5);
    const auto pairs = sim.synapses("Blocks");
    ASSERT_NE(pairs, first); // tiles moved
    sftest::setMatchingWeights(sim, pairs, kPre, kPost, 0, 1.0, {"Blocks"}, {"Dense"});
    sim.run(30);
    EXPECT_GT(sftest::expectSameInput(sim, "ViaBlocks", "ViaDense", kPost), size_t(kPost));
}

SF_INSTANTIATE_BACKEND_TESTS(BlockMatrixTest);

// Auto takes the matrix form for a batch in which a block-row is expected to have
// kMatrixRowsPerTile sources spiking a step (b x p, p = rate x dt): not for an unknown rate, a
// batch of one or a rate too low; never for code it cannot run, where an explicit Matrix is an
// error naming the group and the reason.
TEST(BlockMatrixModel, AutoChoosesByExpectedTileUsesAndRefusesCodeItCannotRun) {
    auto chosen = [](unsigned batch, double rate, const WeightUpdateInit& wu, unsigned delay,
                     Propagation form = Propagation::Auto) {
        Model m("block_matrix_choice");
        m.setDT(1.0);
        m.setBatchSize(batch);
        m.addNeuronGroup("Src", 64, pattern(), {}, {{"k", 0.0}});
        m.addNeuronGroup("Tgt", 64, sftest::accumulate(), {}, {{"acc", 0.0}});
        BlockSparseInit b{16, BlockLayout::Random, 0.25};
        b.propagation = form;
        b.expectedRate = rate;
        m.addSynapseGroup("Syn", MatrixType::BlockSparse, delay, "Src", "Tgt", wu,
                          {models::DeltaCurr(), {}, {}}, b);
        m.finalise();
        return m.synapseGroups().at(0)->matrixPropagation();
    };
    // b = 16: 400 Hz at dt = 1 ms is 6.4 sources a step per block-row, 300 Hz 4.8.
    EXPECT_TRUE(chosen(32, 400.0, staticPulse(), 0));
    EXPECT_TRUE(chosen(2, 400.0, staticPulse(), 0));
    EXPECT_FALSE(chosen(1, 400.0, staticPulse(), 0));
    EXPECT_FALSE(chosen(32, 300.0, staticPulse(), 0));
    EXPECT_FALSE(chosen(32, 0.0, staticPulse(), 0));
    EXPECT_TRUE(chosen(32, 5000.0, staticPulse(), 0)); // p capped at 1
    EXPECT_FALSE(chosen(32, 400.0, staticPulse(), 0, Propagation::EventDriven));
    EXPECT_TRUE(chosen(1, 0.0, staticPulse(), 0, Propagation::Matrix));

    WeightUpdateModel writes;
    writes.name = "Writes";
    writes.vars = {{"g", "scalar"}};
    writes.preSpikeSynCode = "addToPost(g); g += 1.0;";
    WeightUpdateModel toPre = writes;
    toPre.preSpikeSynCode = "addToPost(g); addToPre(g);";
    auto init = [](const WeightUpdateModel& w) {
        return WeightUpdateInit{w, {}, {{"g", 0.0}}, {}, {}};
    };
    for (const auto& [wu, delay, reason] : {std::tuple{init(writes), 0u, "assigns 'g'"},
                                            std::tuple{init(toPre), 0u, "calls addToPre"},
                                            std::tuple{staticPulse(), 2u, "an axonal delay"}}) {
        SCOPED_TRACE(reason);
        EXPECT_FALSE(chosen(32, 400.0, wu, delay));
        try {
            chosen(32, 50.0, wu, delay, Propagation::Matrix);
            ADD_FAILURE() << "no error";
        } catch (const ModelError& e) {
            sftest::expectContains(e.what(), {"'Syn'", "propagation", "matrix form", reason});
        }
    }
    for (double bad : {-1.0, std::nan("")})
        try {
            chosen(32, bad, staticPulse(), 0);
            ADD_FAILURE() << "no error for rate " << bad;
        } catch (const ModelError& e) {
            sftest::expectContains(e.what(), {"'Syn'", "expected rate"});
        }
}

} // namespace
