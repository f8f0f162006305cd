// Block pruning while training (BlockPruning, docs/block-sparse.md "Pruning and regrowth"): the
// schedule's counts; a Yin-Yang network whose recurrent block-sparse layer is pruned every few
// batches still learns, keeps its tile count and moves its tiles; a run checkpointed mid-way and
// resumed in a new compiler repeats the uninterrupted one exactly (layout, weights, metrics).
#include "spikeforge/errors.hpp"
#include "unit/test_fit_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <set>
#include <utility>
#include <vector>

using namespace fit_test;

namespace {

TEST(BlockPruningSchedule, TilesToPruneFollowTheSchedule) {
    const BlockPruning constant{4, 0.25, 0};
    EXPECT_EQ(tilesToPrune(constant, 40, 3), 0u); // not a pruning batch
    EXPECT_EQ(tilesToPrune(constant, 40, 4), 10u);
    EXPECT_EQ(tilesToPrune(constant, 40, 400), 10u);
    EXPECT_EQ(tilesToPrune(constant, 40, 0), 0u);
    const BlockPruning cosine{5, 0.5, 100};
    // 0.5 x (1 + cos(pi t / 100)) / 2 of 1000 tiles at t = 5, 50, 95; none from t = 100 on.
    EXPECT_EQ(tilesToPrune(cosine, 1000, 5),
              uint32_t(std::lround(250.0 * (1.0 + std::cos(std::numbers::pi * 0.05)))));
    EXPECT_EQ(tilesToPrune(cosine, 1000, 50), 250u);
    EXPECT_EQ(tilesToPrune(cosine, 1000, 95),
              uint32_t(std::lround(250.0 * (1.0 + std::cos(std::numbers::pi * 0.95)))));
    EXPECT_EQ(tilesToPrune(cosine, 1000, 100), 0u);
    EXPECT_EQ(tilesToPrune(cosine, 1000, 105), 0u);
    EXPECT_EQ(tilesToPrune({1, 1.0, 0}, 7, 1), 7u); // all of them
}

TEST(BlockPruningSchedule, BadSchedulesAreClearErrors) {
    Network net;
    net.addSpikeInput("In", {5});
    net.addLif("Hid", 32);
    ConnectionParams dense{{1.0, 0.5}, 5.0};
    dense.pruning = BlockPruning{};
    EXPECT_THROW(net.addConnection("InHid", "In", "Hid", dense), spikeforge::ModelError);
    ConnectionParams blocks{{1.0, 0.5}, 5.0};
    blocks.blocks = spikeforge::BlockSparseInit{8, spikeforge::BlockLayout::Random, 0.5};
    for (const BlockPruning& bad :
         {BlockPruning{0, 0.1, 0}, BlockPruning{10, 0.0, 0}, BlockPruning{10, 1.5, 0}}) {
        blocks.pruning = bad;
        try {
            net.addConnection("HidHid", "Hid", "Hid", blocks);
            ADD_FAILURE() << "accepted every " << bad.everyBatches << ", fraction " << bad.fraction;
        } catch (const spikeforge::ModelError& e) {
            EXPECT_NE(std::string(e.what()).find("'HidHid'"), std::string::npos) << e.what();
        }
    }
}

// Yin-Yang with a recurrent hidden layer of 64 LIF neurons held as 8 x 8 tiles of 8 (2 per
// block-row: 16 tiles), a quarter of them pruned and regrown every `every` batches.
std::unique_ptr<EventPropCompiler> prunedCompiler(uint32_t every) {
    Network net;
    net.addSpikeInput("In", {5});
    net.addLif("Hid", 64, {20.0, 1.0, 16});
    net.addLeakyIntegrate("Out", 3, {20.0, Readout::SumVar});
    net.addConnection("InHid", "In", "Hid", {{1.5, 0.78}, 5.0});
    ConnectionParams rec{{0.0, 0.05}, 5.0};
    rec.blocks = spikeforge::BlockSparseInit{8, spikeforge::BlockLayout::Random, 0.25};
    rec.pruning = BlockPruning{every, 0.25, 0};
    net.addConnection("HidHid", "Hid", "Hid", rec);
    net.addConnection("HidOut", "Hid", "Out", {{0.0, 0.1}, 5.0});
    spikeforge::BackendPreferences prefs;
    prefs.backend = "cpu";
    prefs.threads = 1;
    return std::make_unique<EventPropCompiler>(net, yinYangOptions(), prefs);
}

// The block positions (block-row, block-column) holding a tile.
std::set<std::pair<uint32_t, uint32_t>> tiles(EventPropCompiler& c) {
    std::set<std::pair<uint32_t, uint32_t>> out;
    for (const auto& p : c.simulation().synapses("HidHid"))
        out.insert({p.pre / 8, p.post / 8});
    return out;
}

FitOptions options(uint32_t epochs) {
    FitOptions o;
    o.epochs = epochs;
    o.shuffleSeed = 5;
    o.learningRate = yinYangOptions().adam.learningRate;
    o.learningRateDecay = 1.0;
    return o;
}

TEST(EventPropBlockPruning, YinYangLearnsWhileItsRecurrentTilesArePruned) {
    const EventDataset train = makeYinYang(1500, 42);
    const EventDataset test = makeYinYang(300, 40);
    auto c = prunedCompiler(10); // 94 batches an epoch: 9 prunings of 4 tiles
    const auto before = tiles(*c);
    ASSERT_EQ(before.size(), 16u);
    const auto reports = fit(*c, train, nullptr, options(5));
    const auto after = tiles(*c);
    EXPECT_EQ(after.size(), 16u);
    EXPECT_NE(after, before);
    const Metrics m = evaluateAll(*c, test);
    // Chance is 1/3 on three balanced classes.
    EXPECT_GT(m.accuracy(), 0.5) << "train accuracy of the last epoch "
                                 << reports.back().train.accuracy();
}

TEST(EventPropBlockPruning, CheckpointThenResumeRepeatsTheUninterruptedRun) {
    const EventDataset train = makeYinYang(96, 1); // 6 batches an epoch, pruned every 4th
    auto full = prunedCompiler(4);
    const auto initial = tiles(*full);
    const auto fullReports = fit(*full, train, nullptr, options(3));
    TempPath dir;
    {
        auto first = prunedCompiler(4);
        FitOptions stopEarly = options(3);
        stopEarly.epochs = 1;
        Checkpoint checkpoint(*first, dir.path(), 1, options(3));
        Callback* callbacks[] = {&checkpoint};
        fit(*first, train, nullptr, stopEarly, callbacks);
    }
    auto resumed = prunedCompiler(4);
    const ResumePoint start = resumeFromCheckpoint(*resumed, dir.path(), options(3));
    ASSERT_EQ(start.epoch, 1u);
    const auto resumedReports = fit(*resumed, train, nullptr, options(3), {}, start);
    ASSERT_EQ(resumedReports.size(), 2u);
    for (size_t i = 0; i < 2; i++) {
        EXPECT_EQ(fullReports[i + 1].train.loss, resumedReports[i].train.loss) << "epoch " << i + 1;
        EXPECT_EQ(fullReports[i + 1].train.correct, resumedReports[i].train.correct);
    }
    EXPECT_NE(tiles(*full), initial); // pruning moved tiles
    EXPECT_EQ(tiles(*resumed), tiles(*full));
    for (const char* conn : {"InHid", "HidHid", "HidOut"})
        EXPECT_EQ(resumed->weights(conn), full->weights(conn)) << conn;
}

} // namespace
