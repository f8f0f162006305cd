// The Yin-Yang generator against an independent description of the geometry.
#include "spikeforge/errors.hpp"
#include "spikeforge/train/dataset.hpp"
#include "unit/test_dataset_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

using namespace spikeforge;
using namespace spikeforge::train;
using dataset_test::contains;
using dataset_test::errorOf;

namespace {

// The yin-yang symbol told by halves of the disc (centre (0.5, 0.5), radius 0.5): the two dots
// (radius 0.1 around (0.25, 0.5) and (0.75, 0.5)) are class 2; left of the vertical axis, yin
// (class 1) is the upper half plus the disc of radius 0.25 around the left dot; right of it, yin
// is the upper half minus the disc of radius 0.25 around the right dot; the rest is yang (0).
int referenceClass(double x, double y) {
    const auto dist = [](double ax, double ay, double bx, double by) {
        return std::sqrt((ax - bx) * (ax - bx) + (ay - by) * (ay - by));
    };
    if (dist(x, y, 0.5, 0.5) > 0.5) return -1;
    const double left = dist(x, y, 0.25, 0.5), right = dist(x, y, 0.75, 0.5);
    if (left < 0.1 || right < 0.1) return 2;
    const bool upper = y > 0.5;
    const bool yin = x < 0.5 ? (upper || left <= 0.25) : (upper && right > 0.25);
    return yin ? 1 : 0;
}

} // namespace

TEST(DatasetYinYang, ClassifierAgreesWithTheReferenceGeometry) {
    // A grid offset by irrational steps so that no point lies exactly on a boundary.
    int counts[4] = {0, 0, 0, 0};
    for (int i = 0; i < 300; i++) {
        for (int j = 0; j < 300; j++) {
            const double x = (i + 1.0 / std::numbers::sqrt2) / 300.0;
            const double y = (j + 1.0 / std::numbers::pi) / 300.0;
            const int expected = referenceClass(x, y);
            ASSERT_EQ(yinYangClass(x, y), expected) << "at (" << x << ", " << y << ")";
            counts[expected + 1]++;
        }
    }
    // Areas: disc π/4, each dot π/100, yin and yang equal: (π/4 − π/50)/2 ≈ 0.3613 each, so
    // of 90000 grid points ≈ 32517 each; the grid's error is far below the 1 % allowed.
    const double yinYangArea = (std::numbers::pi / 4.0 - std::numbers::pi / 50.0) / 2.0;
    EXPECT_NEAR(counts[1], yinYangArea * 90000, 0.01 * yinYangArea * 90000);
    EXPECT_NEAR(counts[2], yinYangArea * 90000, 0.01 * yinYangArea * 90000);
    EXPECT_NEAR(counts[3], std::numbers::pi / 50.0 * 90000, 0.02 * std::numbers::pi / 50 * 90000);
}

TEST(DatasetYinYang, BalancedClassesAndPointsOfTheirClass) {
    // Latencies over [0, 1] ms make the spike time the feature value itself (to float precision).
    const YinYangOptions unit{
        .tMin = 0.0, .tMax = 1.0, .bias = false, .tBias = 0.0, .duration = 1.0};
    const EventDataset d = makeYinYang(3000, 42, unit);
    EXPECT_EQ(d.classCounts(), (std::vector<size_t>{1000, 1000, 1000}));
    EXPECT_EQ(makeYinYang(301, 42, unit).classCounts(), (std::vector<size_t>{101, 100, 100}));
    ASSERT_EQ(d.numChannels(), 4u);
    for (size_t i = 0; i < d.size(); i++) {
        double v[4] = {-1, -1, -1, -1};
        ASSERT_EQ(d.times(i).size(), 4u);
        for (size_t k = 0; k < 4; k++)
            v[d.channels(i)[k]] = d.times(i)[k];
        // Each channel once; 1 − x and 1 − y agree with x and y to float precision.
        ASSERT_GE(std::min({v[0], v[1], v[2], v[3]}), 0.0) << "example " << i;
        EXPECT_NEAR(v[0] + v[2], 1.0, 1e-6);
        EXPECT_NEAR(v[1] + v[3], 1.0, 1e-6);
        EXPECT_EQ(referenceClass(v[0], v[1]), static_cast<int>(d.label(i))) << "example " << i;
    }
}

TEST(DatasetYinYang, LatenciesLieInTheirRangeAndTheBiasSpikeIsWhereAsked) {
    const YinYangOptions o{.tMin = 2.0, .tMax = 30.0, .bias = true, .tBias = 1.0, .duration = 40.0};
    const EventDataset d = makeYinYang(600, 1, o);
    ASSERT_EQ(d.numChannels(), 5u);
    EXPECT_EQ(d.duration(), 40.0);
    for (size_t i = 0; i < d.size(); i++) {
        ASSERT_EQ(d.times(i).size(), 5u);
        double t[5] = {};
        for (size_t k = 0; k < 5; k++)
            t[d.channels(i)[k]] = d.times(i)[k];
        EXPECT_EQ(t[4], 1.0);
        for (int f = 0; f < 4; f++) {
            EXPECT_GE(t[f], 2.0);
            EXPECT_LE(t[f], 30.0);
        }
        // t_x + t_(1−x) = 2·tMin + (tMax − tMin) exactly up to float rounding of each.
        EXPECT_NEAR(t[0] + t[2], 32.0, 1e-5);
        EXPECT_NEAR(t[1] + t[3], 32.0, 1e-5);
    }
}

TEST(DatasetYinYang, SeedDecidesTheDataAndExamplesDoNotDependOnSize) {
    const EventDataset a = makeYinYang(90, 5), b = makeYinYang(90, 5), c = makeYinYang(90, 6);
    const EventDataset longer = makeYinYang(150, 5);
    EXPECT_TRUE(std::ranges::equal(a.times(), b.times()));
    EXPECT_TRUE(std::ranges::equal(a.channels(), b.channels()));
    EXPECT_FALSE(std::ranges::equal(a.times(), c.times()));
    for (size_t i = 0; i < a.size(); i++) {
        EXPECT_TRUE(std::ranges::equal(a.times(i), longer.times(i)));
        EXPECT_TRUE(std::ranges::equal(a.channels(i), longer.channels(i)));
    }
}

TEST(DatasetYinYang, DefaultsAndBadOptions) {
    const EventDataset d = makeYinYang(3, 0);
    EXPECT_EQ(d.numChannels(), 5u);
    EXPECT_EQ(d.numClasses(), 3u);
    EXPECT_EQ(d.duration(), 60.0);
    EXPECT_TRUE(contains(errorOf<ModelError>([] {
                             makeYinYang(3, 0, {.tMin = 0.0, .tMax = 30.0, .duration = 20.0});
                         }),
                         "shorter than the latest spike"));
    EXPECT_TRUE(contains(errorOf<ModelError>([] { makeYinYang(3, 0, {.tMin = 5.0, .tMax = 1.0}); }),
                         "tMax must not be below tMin"));
}

// A set that cannot fit in memory is refused before anything is generated, naming the size
// (instead of running for hours and being killed halfway): Yin-Yang and synthetic SHD alike.
TEST(DatasetLimits, HugeGeneratedSetsAreRefusedAtOnce) {
    const size_t huge = size_t(1) << 40; // ~10^12 examples: terabytes of events
    try {
        makeYinYang(huge, 1);
        FAIL() << "a Yin-Yang set of 2^40 examples was accepted";
    } catch (const ModelError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find(std::to_string(huge) + " examples"), std::string::npos) << what;
        EXPECT_NE(what.find("GiB of memory"), std::string::npos) << what;
    }
    EXPECT_THROW(makeSyntheticShd(huge, 1), ModelError);
    EXPECT_EQ(makeYinYang(30, 1).size(), 30u) << "ordinary sizes still work";
}
