// Same-class blending (blendSameClass, docs/training.md "The published SHD recipe"): partners
// come from the same class, both move to the midpoint of their centres, each event is kept with
// the given probability, and the draws depend only on the seed.
#include "spikeforge/errors.hpp"
#include "spikeforge/train/dataset.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

using namespace spikeforge::train;

namespace {

constexpr uint32_t kEvents = 1000;

// Example of class `label`: kEvents events on channels base … base+4, times t0 + 0.1 k [ms].
void addRamp(EventDatasetBuilder& b, uint32_t label, uint32_t base, float t0) {
    std::vector<float> t;
    std::vector<uint32_t> c;
    for (uint32_t k = 0; k < kEvents; k++) {
        t.push_back(t0 + 0.1f * float(k));
        c.push_back(base + k % 5);
    }
    b.add(label, t, c);
}

// Class 0: A (channels 10-14 from 100 ms) and B (channels 30-34 from 400 ms); class 1: C alone.
EventDataset threeExamples() {
    EventDatasetBuilder b(100, 2, 1000.0);
    addRamp(b, 0, 10, 100.0f);
    addRamp(b, 0, 30, 400.0f);
    addRamp(b, 1, 60, 600.0f);
    return std::move(b).build();
}

TEST(Blend, PartnersMeetAtTheMidpointOfTheirCentres) {
    const EventDataset d = threeExamples();
    const EventDataset out = blendSameClass(d, 7);
    ASSERT_EQ(out.size(), 3u);
    for (size_t i = 0; i < 3; i++)
        EXPECT_EQ(out.label(i), d.label(i));
    // A's centre (149.95 ms, 12) and B's (449.95 ms, 32) meet at (299.95 ms, 22): A moves by
    // (+150 ms, +10), B by (-150 ms, -10), so both land on channels 20-24 from 250 ms.
    for (size_t i = 0; i < 2; i++) {
        const auto t = out.times(i);
        const auto c = out.channels(i);
        // Each of 2 x 1000 events kept with p 0.5: 1000 +- 22 (sd); 5.4 sd either way.
        EXPECT_GT(t.size(), 880u) << "example " << i;
        EXPECT_LT(t.size(), 1120u) << "example " << i;
        for (size_t k = 0; k < t.size(); k++) {
            ASSERT_GE(c[k], 20u);
            ASSERT_LE(c[k], 24u);
            const double step = (double(t[k]) - 250.0) / 0.1; // position on the shared grid
            ASSERT_NEAR(step, std::round(step), 1e-2) << "time " << t[k];
            ASSERT_EQ(uint32_t(std::lround(step)) % 5, c[k] - 20) << "time " << t[k];
            if (k) {
                ASSERT_LE(t[k - 1], t[k]) << "events sorted by time";
            }
        }
    }
    // C is alone in its class: it blends with itself, unmoved.
    for (const uint32_t c : out.channels(2)) {
        EXPECT_GE(c, 60u);
        EXPECT_LE(c, 64u);
    }
}

TEST(Blend, KeepingEveryEventKeepsBothExamplesWhole) {
    const EventDataset out = blendSameClass(threeExamples(), 3, 1.0);
    EXPECT_EQ(out.times(0).size(), 2 * kEvents);
    EXPECT_EQ(out.times(1).size(), 2 * kEvents);
    EXPECT_EQ(out.times(2).size(), 2 * kEvents);
}

TEST(Blend, TheSeedDecidesEveryDraw) {
    const EventDataset d = threeExamples();
    const EventDataset a = blendSameClass(d, 11), b = blendSameClass(d, 11),
                       c = blendSameClass(d, 12);
    for (size_t i = 0; i < d.size(); i++) {
        EXPECT_EQ(std::vector<float>(a.times(i).begin(), a.times(i).end()),
                  std::vector<float>(b.times(i).begin(), b.times(i).end()));
        EXPECT_EQ(std::vector<uint32_t>(a.channels(i).begin(), a.channels(i).end()),
                  std::vector<uint32_t>(b.channels(i).begin(), b.channels(i).end()));
    }
    EXPECT_NE(std::vector<float>(a.times(0).begin(), a.times(0).end()),
              std::vector<float>(c.times(0).begin(), c.times(0).end()));
}

TEST(Blend, PartnersAreDrawnFromTheWholeClass) {
    // Class 0 has four examples on distinct channel bands; over many seeds, example 0 blends
    // with each of the other three (its events land at a midpoint that names the partner).
    EventDatasetBuilder b(200, 1, 1000.0);
    for (uint32_t e = 0; e < 4; e++)
        addRamp(b, 0, 40 * e, 100.0f);
    const EventDataset d = std::move(b).build();
    std::set<uint32_t> seen;
    for (uint64_t seed = 0; seed < 40; seed++) {
        const EventDataset out = blendSameClass(d, seed, 1.0);
        seen.insert(out.channels(0)[0] / 20); // midpoint band 20 e_partner / 20 = e_partner
    }
    EXPECT_EQ(seen, (std::set<uint32_t>{1, 2, 3}));
}

TEST(Blend, RefusesAKeepProbabilityOutsideZeroToOne) {
    EXPECT_THROW(blendSameClass(threeExamples(), 1, 0.0), spikeforge::ModelError);
    EXPECT_THROW(blendSameClass(threeExamples(), 1, 1.5), spikeforge::ModelError);
}

} // namespace
