// Transposes of block-sparse weights (BlockLayout::Transposed): the transposed group holds
// exactly the mirrored tiles of the group it names (Random, Mask and Barabási–Albert sources;
// sizes that are not multiples of b), built on the backend from that group's index; a Transpose
// custom update copies every weight to its mirror (batch 1 with shared weights, batch 3 with a
// copy per batch element); the transposed group delivers as the Dense group with its weights; bad
// declarations are clear errors. Every backend.
#include "backend_fixture.hpp"
#include "block_sparse_support.hpp"
#include "probe_models.hpp"

#include <map>
#include <set>
#include <utility>
#include <vector>

using namespace spikeforge;
using sftest::pattern;
using sftest::weightOf;

namespace {

constexpr unsigned kSrc = 45, kMid = 70; // 6 and 9 block-rows of b = 8, both cut off at the end

WeightUpdateModel weights(bool perBatch) {
    WeightUpdateModel w;
    w.name = "Weights";
    w.vars = {{"g", "scalar", perBatch ? VarAccess::ReadWrite : VarAccess::ReadOnly}};
    w.preSpikeSynCode = "addToPost(g);";
    return w;
}

BlockSparseInit transposeOf(const std::string& group) {
    BlockSparseInit b{8, BlockLayout::Transposed};
    b.transposeOf = group;
    return b;
}

// Fwd: Src -> Mid with `blocks`; Back: Mid -> AccBack, the transpose of Fwd; Dense: Mid ->
// AccDense; the Transpose update copies Fwd's g into Back's.
void addGroups(Model& m, unsigned src, unsigned mid, const BlockSparseInit& blocks,
               unsigned batch) {
    m.setBatchSize(batch);
    const bool perBatch = batch > 1;
    m.addNeuronGroup("Src", src, pattern(), {}, {{"k", 0.0}});
    m.addNeuronGroup("Mid", mid, pattern(), {}, {{"k", 0.0}});
    m.addNeuronGroup("AccBack", src, sftest::accumulate(), {}, {{"acc", 0.0}});
    m.addNeuronGroup("AccDense", src, sftest::accumulate(), {}, {{"acc", 0.0}});
    const WeightUpdateInit wu{weights(perBatch), {}, {{"g", 0.0}}, {}, {}};
    const PostsynapticInit ps{models::DeltaCurr(), {}, {}};
    m.addSynapseGroup("Fwd", MatrixType::BlockSparse, 0, "Src", "Mid", wu, ps, blocks);
    m.addSynapseGroup("Back", MatrixType::BlockSparse, 0, "Mid", "AccBack", wu, ps,
                      transposeOf("Fwd"));
    m.addSynapseGroup("Dense", MatrixType::Dense, 0, "Mid", "AccDense", wu, ps);
    m.addCustomUpdateWU("T", "Transpose", models::Transpose(), {}, {},
                        {{"variable", {"Fwd", "g", "Back", "g"}}});
}

struct Case {
    const char* name;
    unsigned src, mid;
    BlockSparseInit blocks;
};

class BlockTransposeTest : public sftest::BackendTest {};

TEST_P(BlockTransposeTest, MirrorsItsSourceTransposesAndDeliversAsDense) {
    BlockSparseInit mask{8, BlockLayout::Mask};
    mask.blocks = {{0, 8}, {0, 1}, {2, 0}, {2, 1}, {2, 2}, {5, 8}, {5, 4}, {3, 4}};
    BlockSparseInit scaleFree{8, BlockLayout::BarabasiAlbert};
    scaleFree.attachments = 2;
    const Case cases[] = {{"random", kSrc, kMid, {8, BlockLayout::Random, 0.4}},
                          {"mask", kSrc, kMid, mask},
                          {"barabasi_albert", 60, 60, scaleFree}};
    for (const Case& c : cases)
        for (unsigned batch : {1u, 3u}) {
            SCOPED_TRACE(testing::Message() << c.name << ", batch " << batch);
            Model m("block_transpose");
            addGroups(m, c.src, c.mid, c.blocks, batch);
            Simulation sim(m, prefs(2));
            const auto fwd = sim.synapses("Fwd");
            const auto back = sim.synapses("Back");
            ASSERT_FALSE(fwd.empty());
            std::set<std::pair<uint32_t, uint32_t>> mirrored, held;
            for (const auto& p : fwd)
                mirrored.insert({p.post, p.pre});
            for (const auto& p : back)
                held.insert({p.pre, p.post});
            ASSERT_EQ(held, mirrored);
            ASSERT_EQ(back.size(), fwd.size());
            for (unsigned b = 0; b < batch; b++) {
                std::vector<double> g;
                for (const auto& p : fwd)
                    g.push_back(weightOf(p.pre, p.post) * (b + 1));
                sim.setSynapseValues("Fwd", "g", g, b);
            }
            sim.customUpdate("Transpose");
            for (unsigned b = 0; b < batch; b++) {
                const auto values = sim.synapseValues("Back", "g", b);
                std::vector<double> dense(size_t(c.mid) * c.src, 0.0);
                for (size_t i = 0; i < back.size(); i++) {
                    const auto& p = back[i];
                    ASSERT_EQ(values[i], weightOf(p.post, p.pre) * (b + 1))
                        << "batch " << b << ", " << p.pre << " -> " << p.post;
                    dense[size_t(p.pre) * c.src + p.post] = values[i];
                }
                sim.setSynapseMatrix("Dense", "g", dense, b);
            }
            sim.run(30);
            EXPECT_GT(sftest::expectSameInput(sim, "AccBack", "AccDense", c.src), 0u);
        }
}

SF_INSTANTIATE_BACKEND_TESTS(BlockTransposeTest);

TEST(BlockTransposeModel, BadDeclarationsAreClearErrors) {
    const WeightUpdateInit wu{weights(false), {}, {{"g", 0.0}}, {}, {}};
    const PostsynapticInit ps{models::DeltaCurr(), {}, {}};
    auto finalise = [&](unsigned backPre, unsigned backBlock, const std::string& of, bool pruned,
                        bool backFirst) {
        Model m("block_transpose_bad");
        m.addNeuronGroup("Src", kSrc, pattern(), {}, {{"k", 0.0}});
        m.addNeuronGroup("Mid", kMid, pattern(), {}, {{"k", 0.0}});
        m.addNeuronGroup("Other", backPre, pattern(), {}, {{"k", 0.0}});
        BlockSparseInit fwd{8, BlockLayout::Random, 0.4};
        if (pruned) fwd.prunedBy = "g";
        BlockSparseInit back = transposeOf(of);
        back.blockSize = backBlock;
        if (backFirst)
            m.addSynapseGroup("Back", MatrixType::BlockSparse, 0, "Other", "Src", wu, ps, back);
        m.addSynapseGroup("Fwd", MatrixType::BlockSparse, 0, "Src", "Mid", wu, ps, fwd);
        if (!backFirst)
            m.addSynapseGroup("Back", MatrixType::BlockSparse, 0, "Other", "Src", wu, ps, back);
        m.finalise();
    };
    EXPECT_NO_THROW(finalise(kMid, 8, "Fwd", false, false));
    sftest::expectError<ModelError>([&] { finalise(kMid, 8, "Fwdd", false, false); },
                                    {"'Back'", "transposeOf names 'Fwdd'", "added before"});
    sftest::expectError<ModelError>([&] { finalise(kMid, 8, "Fwd", false, true); },
                                    {"'Back'", "transposeOf names 'Fwd'", "added before"});
    sftest::expectError<ModelError>([&] { finalise(kMid + 1, 8, "Fwd", false, false); },
                                    {"'Back'", "must be 70 x 45, not 71 x 45"});
    sftest::expectError<ModelError>([&] { finalise(kMid, 16, "Fwd", false, false); },
                                    {"'Back'", "block size 16 differs"});
    sftest::expectError<ModelError>([&] { finalise(kMid, 8, "Fwd", true, false); },
                                    {"'Back'", "'Fwd' is pruned"});
    // A transpose into a BlockSparse group that is not the source's transpose.
    Model m("block_transpose_unrelated");
    m.addNeuronGroup("Src", kSrc, pattern(), {}, {{"k", 0.0}});
    m.addNeuronGroup("Mid", kMid, pattern(), {}, {{"k", 0.0}});
    m.addSynapseGroup("Fwd", MatrixType::BlockSparse, 0, "Src", "Mid", wu, ps,
                      BlockSparseInit{8, BlockLayout::Random, 0.4});
    m.addSynapseGroup("Back", MatrixType::BlockSparse, 0, "Mid", "Src", wu, ps,
                      BlockSparseInit{8, BlockLayout::Random, 0.4});
    m.addCustomUpdateWU("T", "Transpose", models::Transpose(), {}, {},
                        {{"variable", {"Fwd", "g", "Back", "g"}}});
    sftest::expectError<ModelError>([&] { m.finalise(); },
                                    {"'T'", "Transposed of it (transposeOf = 'Fwd')"});
}

} // namespace
