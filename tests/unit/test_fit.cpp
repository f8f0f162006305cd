// fit() (issue #10, "Checkpoint then resume"; docs/training.md "Training a network"): exact
// resume from a checkpoint in a new compiler, callback counts and a Yin-Yang run above chance.
#include "spikeforge/errors.hpp"
#include "unit/test_fit_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

using namespace fit_test;

namespace {

std::vector<std::vector<double>> allWeights(EventPropCompiler& c) {
    return {c.weights("InHid"), c.weights("HidOut")};
}

// Records every hook call.
struct Recorder : Callback {
    uint32_t trainBegins = 0, firstEpoch = 99, epochs = 0;
    std::vector<uint64_t> epochExamples;
    std::vector<std::pair<uint64_t, uint64_t>> progress; // (done, total) of every call
    std::vector<uint32_t> epochEnds;
    size_t trainEndReports = 99;
    void onTrainBegin(uint32_t first, uint32_t n) override {
        trainBegins++;
        firstEpoch = first;
        epochs = n;
    }
    void onEpochBegin(uint32_t, uint64_t examples) override { epochExamples.push_back(examples); }
    void onBatchesDone(uint32_t, uint64_t done, uint64_t total) override {
        progress.emplace_back(done, total);
    }
    void onEpochEnd(const EpochReport& r) override { epochEnds.push_back(r.epoch); }
    void onTrainEnd(const std::vector<EpochReport>& r) override { trainEndReports = r.size(); }
};

FitOptions fitOptions(uint32_t epochs) {
    FitOptions o;
    o.epochs = epochs;
    o.shuffleSeed = 11;
    o.learningRate = yinYangOptions().adam.learningRate;
    o.learningRateDecay = 0.9;
    return o;
}

void expectSameMetrics(const Metrics& a, const Metrics& b, const std::string& what) {
    // Bit-identical: the same arithmetic in the same order.
    EXPECT_EQ(std::memcmp(&a.loss, &b.loss, sizeof(double)), 0)
        << what << ": " << a.loss << " vs " << b.loss;
    EXPECT_EQ(a.correct, b.correct) << what;
    EXPECT_EQ(a.examples, b.examples) << what;
}

} // namespace

TEST(Fit, CheckpointThenResumeInANewCompilerRepeatsTheUninterruptedRun) {
    const EventDataset train = makeYinYang(96, 1);
    const EventDataset validation = makeYinYang(30, 2);
    FitOptions options = fitOptions(3);
    options.plateauPatience = 1; // its state must travel in the checkpoint

    // Uninterrupted: three epochs.
    auto full = yinYangCompiler();
    const auto fullReports = fit(*full, train, &validation, options);
    const auto fullWeights = allWeights(*full);

    // Interrupted after epoch 1 (a checkpoint every epoch), resumed in a new compiler.
    TempPath dir;
    {
        auto first = yinYangCompiler();
        FitOptions stopEarly = options;
        stopEarly.epochs = 1;
        Checkpoint checkpoint(*first, dir.path(), 1, options);
        Callback* callbacks[] = {&checkpoint};
        fit(*first, train, &validation, stopEarly, callbacks);
    }
    auto resumed = yinYangCompiler();
    const ResumePoint start = resumeFromCheckpoint(*resumed, dir.path(), options);
    ASSERT_EQ(start.epoch, 1u);
    EXPECT_EQ(start.plateau, fullReports[0].plateau);
    EXPECT_EQ(start.plateau.epochs, 1u);
    const auto resumedReports = fit(*resumed, train, &validation, options, {}, start);

    ASSERT_EQ(fullReports.size(), 3u);
    ASSERT_EQ(resumedReports.size(), 2u);
    for (size_t i = 0; i < 2; i++) {
        const EpochReport& a = fullReports[i + 1];
        const EpochReport& b = resumedReports[i];
        EXPECT_EQ(a.epoch, b.epoch);
        EXPECT_EQ(a.learningRate, b.learningRate);
        EXPECT_EQ(a.plateau, b.plateau);
        expectSameMetrics(a.train, b.train, "train, epoch " + std::to_string(a.epoch));
        ASSERT_TRUE(a.validation && b.validation);
        expectSameMetrics(*a.validation, *b.validation,
                          "validation, epoch " + std::to_string(a.epoch));
    }
    const auto resumedWeights = allWeights(*resumed);
    for (size_t c = 0; c < fullWeights.size(); c++) {
        ASSERT_EQ(fullWeights[c].size(), resumedWeights[c].size());
        for (size_t i = 0; i < fullWeights[c].size(); i++)
            ASSERT_EQ(fullWeights[c][i], resumedWeights[c][i])
                << "connection " << c << " weight " << i;
    }
    // And training did move the weights (else the comparison above proves nothing).
    auto untrained = yinYangCompiler();
    EXPECT_NE(allWeights(*untrained), fullWeights);
}

TEST(Fit, CallbacksHearEveryEpochAndBatch) {
    const EventDataset train = makeYinYang(40, 3); // batches of 16: 16 + 16 + 8
    auto c = yinYangCompiler();
    FitOptions options = fitOptions(3);
    options.progressEveryBatches = 2;
    Recorder r;
    Callback* callbacks[] = {&r};
    const auto reports = fit(*c, train, nullptr, options, callbacks, 1);

    EXPECT_EQ(r.trainBegins, 1u);
    EXPECT_EQ(r.firstEpoch, 1u);
    EXPECT_EQ(r.epochs, 3u);
    EXPECT_EQ(r.epochExamples, (std::vector<uint64_t>{40, 40}));
    // Per epoch: batch 2 (every 2nd) and batch 3 (the last) of 3.
    using P = std::pair<uint64_t, uint64_t>;
    EXPECT_EQ(r.progress, (std::vector<P>{{2, 3}, {3, 3}, {2, 3}, {3, 3}}));
    EXPECT_EQ(r.epochEnds, (std::vector<uint32_t>{1, 2}));
    EXPECT_EQ(r.trainEndReports, 2u);
    ASSERT_EQ(reports.size(), 2u);
    for (const EpochReport& e : reports) {
        EXPECT_EQ(e.train.examples, 40u);
        EXPECT_FALSE(e.validation);
        EXPECT_DOUBLE_EQ(e.learningRate, options.learningRate * std::pow(0.9, e.epoch));
        EXPECT_GT(e.seconds, 0.0);
    }
}

// A progress function that throws (a Python callback raising, say) stops the epoch between
// batches; the compiler stays usable: the next calls select the examples they are given (no
// device-side index error) and evaluate as a fresh compiler with the same weights does.
TEST(Fit, AProgressFunctionThatThrowsLeavesTheCompilerUsable) {
    const EventDataset data = makeYinYang(64, 3); // 4 batches of 16
    auto c = yinYangCompiler();
    c->setDataset(data);
    std::vector<uint32_t> all(data.size());
    for (uint32_t i = 0; i < all.size(); i++)
        all[i] = i;
    struct Stop {};
    uint64_t calls = 0;
    EXPECT_THROW(c->trainEpoch(all,
                               [&](uint64_t done, uint64_t) {
                                   calls++;
                                   if (done >= 2) throw Stop{};
                               }),
                 Stop);
    EXPECT_EQ(calls, 2u);
    EXPECT_THROW(c->evaluate(all, [](uint64_t, uint64_t) { throw Stop{}; }), Stop);
    const Metrics trained = c->trainEpoch(all);
    EXPECT_EQ(trained.examples, 64u);
    const Metrics after = c->evaluate(all);

    auto fresh = yinYangCompiler();
    fresh->setDataset(data);
    for (const char* conn : {"InHid", "HidOut"})
        fresh->setWeights(conn, c->weights(conn));
    expectSameMetrics(fresh->evaluate(all), after, "evaluate after an interrupted epoch");
}

TEST(Fit, PlateauRuleHalvesAfterPatienceEpochsWithoutProgress) {
    FitOptions o;
    o.plateauPatience = 2;
    PlateauState s;
    // (loss, halvings after it): the first loss is the best; 1.0 - 5e-5 is noise, not progress.
    const std::vector<std::pair<double, uint32_t>> steps = {
        {1.0, 0}, {1.2, 0}, {1.0 - 5e-5, 1}, {0.9, 1}, {0.95, 1}, {0.91, 2}, {0.5, 2}};
    for (size_t i = 0; i < steps.size(); i++) {
        s = nextPlateauState(s, steps[i].first, o);
        EXPECT_EQ(s.halvings, steps[i].second) << "after loss " << i;
        EXPECT_EQ(s.epochs, i + 1);
    }
    EXPECT_EQ(s.best, 0.5);
    EXPECT_EQ(s.sinceBest, 0u);
    o.plateauPatience = 0; // off: nothing changes
    EXPECT_EQ(nextPlateauState(PlateauState{}, 1.0, o), PlateauState{});
}

TEST(Fit, PlateauHalvingsSetTheNextEpochsRate) {
    // A rate far too large makes the loss stall or rise: halvings must follow.
    const EventDataset train = makeYinYang(48, 5);
    auto c = yinYangCompiler();
    FitOptions options = fitOptions(5);
    options.learningRateDecay = 1.0;
    options.learningRate = 0.3;
    options.plateauPatience = 1;
    options.plateauFactor = 0.5;
    const auto reports = fit(*c, train, nullptr, options);
    ASSERT_EQ(reports.size(), 5u);
    PlateauState s;
    for (const EpochReport& r : reports) {
        EXPECT_DOUBLE_EQ(r.learningRate, options.learningRate * std::pow(0.5, s.halvings))
            << "epoch " << r.epoch;
        s = nextPlateauState(s, r.train.meanLoss(), options);
        EXPECT_EQ(r.plateau, s) << "epoch " << r.epoch;
    }
    EXPECT_GT(s.halvings, 0u) << "the rule never fired: the test shows nothing";
}

TEST(Fit, BlendingDoublesEachEpochsTrainingSetButNotValidation) {
    const EventDataset train = makeYinYang(40, 3), validation = makeYinYang(10, 4);
    auto c = yinYangCompiler();
    FitOptions options = fitOptions(2);
    options.blend = true;
    Recorder r;
    Callback* callbacks[] = {&r};
    const auto reports = fit(*c, train, &validation, options, callbacks);
    EXPECT_EQ(r.epochExamples, (std::vector<uint64_t>{80, 80}));
    ASSERT_EQ(reports.size(), 2u);
    for (const EpochReport& e : reports) {
        EXPECT_EQ(e.train.examples, 80u);
        ASSERT_TRUE(e.validation);
        EXPECT_EQ(e.validation->examples, 10u);
    }
}

TEST(Fit, RefusesAStartPastTheEndAndAnEmptyTrainingSet) {
    auto c = yinYangCompiler();
    const EventDataset train = makeYinYang(8, 3);
    EXPECT_THROW(fit(*c, train, nullptr, fitOptions(2), {}, 3), spikeforge::ModelError);
    EXPECT_THROW(fit(*c, makeYinYang(0, 3), nullptr, fitOptions(2)), spikeforge::ModelError);
    // Starting at the end trains nothing.
    EXPECT_TRUE(fit(*c, train, nullptr, fitOptions(2), {}, 2).empty());
}

TEST(Fit, ConcatenateKeepsBothSetsInOrder) {
    const EventDataset a = makeYinYang(5, 1), b = makeYinYang(4, 2);
    const EventDataset ab = concatenate(a, b);
    ASSERT_EQ(ab.size(), 9u);
    for (size_t i = 0; i < 9; i++) {
        const EventDataset& src = i < 5 ? a : b;
        const size_t j = i < 5 ? i : i - 5;
        EXPECT_EQ(ab.label(i), src.label(j));
        ASSERT_EQ(ab.times(i).size(), src.times(j).size());
        for (size_t k = 0; k < ab.times(i).size(); k++) {
            EXPECT_EQ(ab.times(i)[k], src.times(j)[k]);
            EXPECT_EQ(ab.channels(i)[k], src.channels(j)[k]);
        }
    }
}

TEST(Fit, YinYangLearnsClearlyAboveChanceInAFewEpochs) {
    const EventDataset train = makeYinYang(1500, 42);
    const EventDataset test = makeYinYang(300, 40);
    auto c = yinYangCompiler(32, 16);
    FitOptions options = fitOptions(5);
    options.learningRateDecay = 1.0;
    const auto reports = fit(*c, train, nullptr, options);
    const Metrics m = evaluateAll(*c, test);
    // Chance is 1/3 on three balanced classes.
    EXPECT_GT(m.accuracy(), 0.5) << "train accuracy of the last epoch "
                                 << reports.back().train.accuracy();
}

namespace {

std::string fileBytes(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// After the checkpoint of the first epoch is written, sets one weight to NaN through the API and
// keeps the checkpoint's bytes.
struct PlantNaN : Callback {
    EventPropCompiler& compiler;
    std::filesystem::path file;
    std::string saved;
    PlantNaN(EventPropCompiler& c, std::filesystem::path f) : compiler(c), file(std::move(f)) {}
    void onEpochEnd(const EpochReport& r) override {
        if (r.epoch != 0) return;
        saved = fileBytes(file);
        std::vector<double> w = compiler.weights("HidOut");
        w[2] = std::nan("");
        compiler.setWeights("HidOut", w);
    }
};

} // namespace

// A weight set to NaN stops fit() in the next epoch with an error naming the epoch and the
// connection; the last good checkpoint is left as it was.
TEST(Fit, PlantedNaNStopsTrainingAndKeepsTheLastCheckpoint) {
    const EventDataset train = makeYinYang(64, 1);
    const FitOptions options = fitOptions(3);
    auto compiler = yinYangCompiler();
    TempPath dir;
    Checkpoint checkpoint(*compiler, dir.path(), 1, options);
    PlantNaN plant(*compiler, dir.path() / Checkpoint::kFileName);
    Callback* callbacks[] = {&checkpoint, &plant};
    try {
        fit(*compiler, train, nullptr, options, callbacks);
        FAIL() << "training on a NaN weight must stop";
    } catch (const spikeforge::ModelError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("epoch 2 of 3"), std::string::npos) << what;
        EXPECT_NE(what.find("connection 'HidOut'"), std::string::npos) << what;
    }
    ASSERT_FALSE(plant.saved.empty()) << "the first epoch wrote a checkpoint";
    EXPECT_EQ(fileBytes(dir.path() / Checkpoint::kFileName), plant.saved)
        << "the failed epoch must not touch the last good checkpoint";
}
