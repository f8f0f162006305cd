// The compact event array: validation errors, subsets, the seeded shuffle and the split.
#include "spikeforge/errors.hpp"
#include "spikeforge/train/dataset.hpp"
#include "unit/test_dataset_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <vector>

using namespace spikeforge;
using namespace spikeforge::train;
using dataset_test::contains;
using dataset_test::errorOf;

namespace {

// Three examples over 4 channels, 2 classes, 10 ms: 2, 0 and 3 events.
EventDataset small() {
    EventDatasetBuilder b(4, 2, 10.0);
    const std::vector<float> t0{1.0f, 2.5f}, t2{0.0f, 0.0f, 10.0f};
    const std::vector<uint32_t> c0{3, 1}, c2{0, 2, 3};
    b.add(1, t0, c0);
    b.add(0, {}, {});
    b.add(1, t2, c2);
    return std::move(b).build();
}

// The message of constructing a dataset of one example from these arrays.
std::string invalid(std::vector<float> times, std::vector<uint32_t> channels, uint32_t label,
                    double duration = 10.0) {
    return errorOf<ModelError>([&] {
        const auto n = static_cast<uint32_t>(times.size());
        EventDataset(std::move(times), std::move(channels), {0}, {n}, {label}, 4, 2, duration);
    });
}

} // namespace

TEST(DatasetEvents, BuilderLaysOutExamplesContiguously) {
    const EventDataset d = small();
    ASSERT_EQ(d.size(), 3u);
    EXPECT_EQ(d.numEvents(), 5u);
    EXPECT_EQ(std::vector<uint64_t>(d.offsets().begin(), d.offsets().end()),
              (std::vector<uint64_t>{0, 2, 2}));
    EXPECT_EQ(std::vector<uint32_t>(d.counts().begin(), d.counts().end()),
              (std::vector<uint32_t>{2, 0, 3}));
    EXPECT_EQ(d.times(2)[2], 10.0f);
    EXPECT_EQ(d.channels(0)[0], 3u);
    EXPECT_EQ(d.label(1), 0u);
    EXPECT_EQ(d.classCounts(), (std::vector<size_t>{1, 2}));
    EXPECT_TRUE(contains(errorOf<ModelError>([&] { d.times(3); }), "example 3 does not exist"));
}

TEST(DatasetEvents, ValidationNamesTheExampleAndTheFault) {
    EXPECT_TRUE(contains(invalid({2.0f, 1.0f}, {0, 0}, 0), "time-sorted"));
    EXPECT_TRUE(contains(invalid({1.0f}, {4}, 0), "channel 4 is not below numChannels 4"));
    EXPECT_TRUE(contains(invalid({1.0f}, {0}, 2), "label 2 is not below numClasses 2"));
    EXPECT_TRUE(contains(invalid({-0.5f}, {0}, 0), "is not in [0, duration"));
    EXPECT_TRUE(contains(invalid({std::nanf("")}, {0}, 0), "is not in [0, duration"));
    EXPECT_TRUE(contains(invalid({10.5f}, {0}, 0), "is not in [0, duration"));
    EXPECT_TRUE(contains(invalid({1.0f}, {0}, 0, -1.0), "duration must be finite"));
    // The error names the example: here the second one is bad.
    const std::string second = errorOf<ModelError>([] {
        EventDataset({1.0f, 3.0f, 2.0f}, {0, 0, 0}, {0, 1}, {1, 2}, {0, 0}, 4, 2, 10.0);
    });
    EXPECT_TRUE(contains(second, "dataset example 1, event 1"));
    EXPECT_TRUE(
        contains(errorOf<ModelError>([] { EventDataset({1.0f}, {0}, {0}, {2}, {0}, 4, 2, 10.0); }),
                 "dataset example 0: events [0, +2) lie outside the 1 events"));
    EXPECT_TRUE(contains(errorOf<ModelError>([] {
                             EventDataset({1.0f}, {0, 1}, {0}, {1}, {0}, 4, 2, 10.0);
                         }),
                         "1 event times but 2 event channels"));
    EXPECT_TRUE(contains(errorOf<ModelError>([] {
                             EventDatasetBuilder b(4, 2, 10.0);
                             b.add(0, std::vector<float>{1.0f}, {});
                         }),
                         "1 times but 0 channels"));
}

TEST(DatasetEvents, SubsetCopiesExamplesInTheGivenOrder) {
    const EventDataset d = small();
    const std::vector<size_t> pick{2, 0, 2};
    const EventDataset s = d.subset(pick);
    ASSERT_EQ(s.size(), 3u);
    for (size_t k = 0; k < pick.size(); k++) {
        EXPECT_EQ(s.label(k), d.label(pick[k]));
        EXPECT_TRUE(std::ranges::equal(s.times(k), d.times(pick[k])));
        EXPECT_TRUE(std::ranges::equal(s.channels(k), d.channels(pick[k])));
    }
    EXPECT_EQ(s.numEvents(), 8u);
    EXPECT_EQ(s.offsets()[2], 5u); // contiguous again
    const std::vector<size_t> bad{1, 7};
    EXPECT_TRUE(contains(errorOf<ModelError>([&] { d.subset(bad); }), "index 1 is 7"));
}

TEST(DatasetEvents, ShuffleIsASeededPermutationFollowingTheDocumentedAlgorithm) {
    const std::vector<size_t> a = shuffledIndices(1000, 7);
    std::vector<size_t> sorted = a;
    std::sort(sorted.begin(), sorted.end());
    std::vector<size_t> identity(1000);
    std::iota(identity.begin(), identity.end(), size_t{0});
    EXPECT_EQ(sorted, identity);
    EXPECT_EQ(shuffledIndices(1000, 7), a);
    EXPECT_NE(shuffledIndices(1000, 8), a);
    EXPECT_TRUE(shuffledIndices(0, 1).empty());
    // The documented algorithm, written again here: Fisher–Yates over std::mt19937_64(seed) with
    // rejection of the top partial range of 64-bit draws.
    std::mt19937_64 engine(7);
    for (size_t i = 1000; i > 1; i--) {
        const uint64_t range = i;
        const uint64_t limit = UINT64_MAX - UINT64_MAX % range;
        uint64_t draw = engine();
        while (draw >= limit)
            draw = engine();
        std::swap(identity[i - 1], identity[draw % range]);
    }
    EXPECT_EQ(identity, a);
}

TEST(DatasetEvents, ShuffleOfThreeIsUniformOverTheSixOrders) {
    // 6000 seeds: each order expects 1000 with sd sqrt(6000·(1/6)·(5/6)) ≈ 29; allow 5 sd.
    std::map<std::vector<size_t>, int> seen;
    for (uint64_t seed = 0; seed < 6000; seed++)
        seen[shuffledIndices(3, seed)]++;
    ASSERT_EQ(seen.size(), 6u);
    for (const auto& [order, count] : seen)
        EXPECT_NEAR(count, 1000, 145);
}

TEST(DatasetEvents, SplitPartitionsTheExamplesKeepingTheirOrder) {
    EventDatasetBuilder b(1, 5, 1.0);
    for (uint32_t i = 0; i < 50; i++) {
        const std::vector<float> t(i % 4, 0.5f); // an example is known by its label and count
        const std::vector<uint32_t> c(i % 4, 0);
        b.add(i % 5, t, c);
    }
    const EventDataset d = std::move(b).build();
    const auto [train, validation] = splitTrainValidation(d, 10, 3);
    ASSERT_EQ(validation.size(), 10u);
    ASSERT_EQ(train.size(), 40u);
    const std::vector<size_t> order = shuffledIndices(50, 3);
    std::vector<size_t> picked(order.begin(), order.begin() + 10);
    std::sort(picked.begin(), picked.end());
    for (size_t k = 0; k < picked.size(); k++) {
        EXPECT_EQ(validation.label(k), d.label(picked[k]));
        EXPECT_EQ(validation.counts()[k], d.counts()[picked[k]]);
    }
    std::vector<size_t> rest(order.begin() + 10, order.end());
    std::sort(rest.begin(), rest.end());
    for (size_t k = 0; k < rest.size(); k++)
        EXPECT_EQ(train.label(k), d.label(rest[k]));
    EXPECT_EQ(train.numEvents() + validation.numEvents(), d.numEvents());
    EXPECT_TRUE(contains(errorOf<ModelError>([&] { splitTrainValidation(d, 51, 3); }),
                         "validation size 51 exceeds the dataset's 50 examples"));
}
