// The progress bar and the metrics CSV (docs/training.md "Training a network"), driven with
// made-up reports: no compiler needed.
#include "spikeforge/errors.hpp"
#include "unit/test_fit_support.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

using namespace fit_test;
using spikeforge::ModelError;

namespace {

EpochReport report(uint32_t epoch, bool withValidation) {
    EpochReport r;
    r.epoch = epoch;
    r.train = {10.0 * (epoch + 1), 3 + epoch, 8};
    if (withValidation) r.validation = Metrics{2.0, 1, 4};
    r.seconds = 1.5;
    r.learningRate = 0.01;
    return r;
}

std::vector<std::string> lines(const fs::path& p) {
    std::ifstream in(p);
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);)
        out.push_back(line);
    return out;
}

} // namespace

TEST(FitMetricsCsv, OneRowPerEpochUnderOneHeader) {
    TempPath csv(".csv");
    {
        MetricsCsv m(csv.path());
        m.onEpochEnd(report(0, true));
        m.onEpochEnd(report(1, false));
    }
    const auto l = lines(csv.path());
    ASSERT_EQ(l.size(), 3u);
    EXPECT_EQ(l[0], MetricsCsv::header());
    // epoch (1-based), mean loss 10/8, accuracy 3/8, validation 2/4 and 1/4, seconds, rate.
    EXPECT_EQ(l[1], "1,1.25,0.375,0.5,0.25,1.5,0.01");
    EXPECT_EQ(l[2], "2,2.5,0.5,,,1.5,0.01");
}

TEST(FitMetricsCsv, AFreshRunRefusesAnExistingFile) {
    TempPath csv(".csv");
    std::ofstream(csv.path()) << "mine\n";
    EXPECT_THROW(MetricsCsv m(csv.path()), ModelError);
    EXPECT_EQ(lines(csv.path()), std::vector<std::string>{"mine"});
}

TEST(FitMetricsCsv, AResumedRunKeepsEarlierRowsDropsLaterOnesAndAppends) {
    TempPath csv(".csv");
    {
        MetricsCsv m(csv.path());
        for (uint32_t e = 0; e < 3; e++)
            m.onEpochEnd(report(e, false));
    }
    { // resumed from a checkpoint after epoch 2: the row of epoch 3 is repeated by the run
        MetricsCsv m(csv.path(), 2);
        m.onEpochEnd(report(2, true));
    }
    const auto l = lines(csv.path());
    ASSERT_EQ(l.size(), 4u);
    EXPECT_EQ(l[0], MetricsCsv::header());
    EXPECT_EQ(l[1].substr(0, 2), "1,");
    EXPECT_EQ(l[2].substr(0, 2), "2,");
    EXPECT_EQ(l[3], "3,3.75,0.625,0.5,0.25,1.5,0.01");
}

TEST(FitMetricsCsv, AResumedRunRefusesAMissingOrForeignFile) {
    TempPath csv(".csv");
    EXPECT_THROW(MetricsCsv m(csv.path(), 1), ModelError);
    std::ofstream(csv.path()) << "a,b\n1,2\n";
    EXPECT_THROW(MetricsCsv m(csv.path(), 1), ModelError);
    EXPECT_EQ(lines(csv.path()), (std::vector<std::string>{"a,b", "1,2"}));
}

TEST(FitProgressBar, PlainOutputIsOneLinePerEpoch) {
    std::ostringstream out;
    ProgressBar bar(out, false);
    bar.onTrainBegin(0, 2);
    for (uint32_t e = 0; e < 2; e++) {
        bar.onEpochBegin(e, 8);
        bar.onBatchesDone(e, 1, 2);
        bar.onBatchesDone(e, 2, 2);
        bar.onEpochEnd(report(e, e == 1));
    }
    const std::string text = out.str();
    EXPECT_EQ(text.find('\r'), std::string::npos);
    EXPECT_EQ(text.find('\x1b'), std::string::npos);
    std::istringstream in(text);
    std::vector<std::string> l;
    for (std::string line; std::getline(in, line);)
        l.push_back(line);
    ASSERT_EQ(l.size(), 2u) << text;
    EXPECT_EQ(l[0].rfind("epoch 1/2  train loss 1.2500 acc 37.5%", 0), 0u) << l[0];
    EXPECT_NE(l[1].find("validation loss 0.5000 acc 25.0%"), std::string::npos) << l[1];
}

TEST(FitProgressBar, TerminalOutputRedrawsOneLine) {
    std::ostringstream out;
    ProgressBar bar(out, true);
    bar.onTrainBegin(0, 1);
    bar.onEpochBegin(0, 8);
    bar.onBatchesDone(0, 2, 2); // the last batch is always drawn
    const std::string progress = out.str();
    EXPECT_EQ(progress.front(), '\r');
    EXPECT_NE(progress.find("epoch 1/1  batch 2/2"), std::string::npos) << progress;
    EXPECT_NE(progress.find("ex/s  ETA 0:00"), std::string::npos) << progress;
    EXPECT_EQ(progress.find('\n'), std::string::npos);
    bar.onEpochEnd(report(0, false));
    EXPECT_EQ(out.str().back(), '\n');
}
