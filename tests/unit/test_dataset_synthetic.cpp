// The synthetic SHD-shaped generator: shape, counts, determinism and class structure.
#include "spikeforge/errors.hpp"
#include "spikeforge/train/dataset.hpp"
#include "unit/test_dataset_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

using namespace spikeforge;
using namespace spikeforge::train;
using dataset_test::contains;
using dataset_test::errorOf;

namespace {

constexpr size_t bins = 35; // channel histogram bins for the class-structure test (20 channels)

// Per-example channel histogram, normalised to sum 1.
std::vector<double> histogram(const EventDataset& d, size_t i) {
    std::vector<double> h(bins, 0.0);
    for (const uint32_t c : d.channels(i))
        h[c * bins / d.numChannels()] += 1.0;
    for (double& v : h)
        v /= std::max<double>(1.0, d.times(i).size());
    return h;
}

} // namespace

TEST(DatasetSynthetic, ShapeAndCountsFollowTheDocumentedModel) {
    const SyntheticShdOptions o;
    const EventDataset d = makeSyntheticShd(100, 1);
    EXPECT_EQ(d.numChannels(), 700u);
    EXPECT_EQ(d.numClasses(), 20u);
    EXPECT_EQ(d.duration(), 1000.0);
    EXPECT_EQ(d.classCounts(), std::vector<size_t>(20, 5));
    // Count = round(g·meanSpikes), g uniform in [1 − spread, 1 + spread].
    const double lo = std::floor((1.0 - o.countSpread) * o.meanSpikes);
    const double hi = std::ceil((1.0 + o.countSpread) * o.meanSpikes);
    double total = 0.0;
    for (size_t i = 0; i < d.size(); i++) {
        const double n = d.counts()[i];
        EXPECT_GE(n, lo);
        EXPECT_LE(n, hi);
        total += n;
        const auto t = d.times(i);
        EXPECT_TRUE(std::is_sorted(t.begin(), t.end()));
    }
    // Mean of 100 uniform gains: sd 0.4/√3/√100 ≈ 2.3 % of meanSpikes; allow 4 sd.
    EXPECT_NEAR(total / d.size(), o.meanSpikes, 0.092 * o.meanSpikes);
    // Spikes reach across the channels and the time: not piled into a corner.
    const auto c = d.channels();
    EXPECT_LT(*std::min_element(c.begin(), c.end()), 35u);
    EXPECT_GT(*std::max_element(c.begin(), c.end()), 665u);
    EXPECT_GT(*std::max_element(d.times().begin(), d.times().end()), 950.0f);
}

TEST(DatasetSynthetic, SeedDecidesTheData) {
    const SyntheticShdOptions small{.meanSpikes = 200.0};
    const EventDataset a = makeSyntheticShd(40, 3, small), b = makeSyntheticShd(40, 3, small);
    const EventDataset c = makeSyntheticShd(40, 4, small);
    EXPECT_TRUE(std::ranges::equal(a.times(), b.times()));
    EXPECT_TRUE(std::ranges::equal(a.channels(), b.channels()));
    EXPECT_FALSE(std::ranges::equal(a.times(), c.times()));
}

TEST(DatasetSynthetic, ClassesAreLearnableAcrossSeeds) {
    // Nearest class-mean channel histogram, fitted on one seed and tested on another: the class
    // profiles are shared (profileSeed), so this beats the 5 % of chance by far.
    const SyntheticShdOptions o{.meanSpikes = 1000.0};
    const EventDataset train = makeSyntheticShd(400, 10, o), test = makeSyntheticShd(200, 11, o);
    std::vector<std::vector<double>> means(20, std::vector<double>(bins, 0.0));
    for (size_t i = 0; i < train.size(); i++) {
        const auto h = histogram(train, i);
        for (size_t k = 0; k < bins; k++)
            means[train.label(i)][k] += h[k] / 20.0;
    }
    size_t correct = 0;
    for (size_t i = 0; i < test.size(); i++) {
        const auto h = histogram(test, i);
        double best = std::numeric_limits<double>::max();
        uint32_t guess = 0;
        for (uint32_t c = 0; c < 20; c++) {
            double d2 = 0.0;
            for (size_t k = 0; k < bins; k++)
                d2 += (h[k] - means[c][k]) * (h[k] - means[c][k]);
            if (d2 < best) best = d2, guess = c;
        }
        correct += guess == test.label(i);
    }
    EXPECT_GT(correct, test.size() / 2) << correct << " of " << test.size();
}

TEST(DatasetSynthetic, BadOptionsAreErrors) {
    EXPECT_TRUE(contains(errorOf<ModelError>([] { makeSyntheticShd(1, 0, {.duration = 0.0}); }),
                         "duration must be positive"));
    EXPECT_TRUE(contains(errorOf<ModelError>([] {
                             makeSyntheticShd(1, 0, {.meanSpikes = 1.0, .countSpread = 2.0});
                         }),
                         "countSpread"));
}
