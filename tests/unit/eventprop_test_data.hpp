#pragma once
// Shared by the EventProp gradient tests: small datasets, central differences of the engine's
// own loss, and element-wise comparison.
#include "spikeforge/train/eventprop.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace spikeforge::train::testing {

// One spike of referenceLifSpikes: its step and its place within the step (0 when the step
// started at or above threshold; `crossed` says the step started below it).
struct ReferenceSpike {
    int step;
    double f;
    bool crossed;
};

// The EventProp LIF's discrete forward pass at dt = 1 ms (tauM 20, tauS 5 ms, threshold 1),
// computed independently of the engine: a spike at the exact crossing of the step's trajectory
// (found by bisection), reset to 0 there (docs/training.md). `arrivals[step]` is the synaptic
// current added at the start of that step.
inline std::vector<ReferenceSpike> referenceLifSpikes(const std::vector<double>& arrivals) {
    const double alpha = std::exp(-1.0 / 20.0), beta = std::exp(-1.0 / 5.0);
    const double rho = 5.0 * (beta - alpha) / (5.0 - 20.0);
    auto trajectory = [](double v0, double u, double s) {
        return std::exp(-s / 20.0) * v0 +
               u * 5.0 * (std::exp(-s / 5.0) - std::exp(-s / 20.0)) / (5.0 - 20.0);
    };
    std::vector<ReferenceSpike> out;
    double v = 0.0, u = 0.0;
    for (int step = 0; step < int(arrivals.size()); step++) {
        u += arrivals[size_t(step)];
        const double vPrev = v;
        v = alpha * v + rho * u;
        if (v >= 1.0) {
            double f = 0.0;
            if (vPrev < 1.0) {
                double lo = 0.0, hi = 1.0;
                for (int i = 0; i < 80; i++) {
                    const double mid = 0.5 * (lo + hi);
                    (trajectory(vPrev, u, mid) < 1.0 ? lo : hi) = mid;
                }
                f = 0.5 * (lo + hi);
            }
            out.push_back({step, f, vPrev < 1.0});
            v -= std::exp((f - 1.0) / 20.0);
        }
        u *= beta;
    }
    return out;
}

// Random examples: each channel spikes a few times at random times inside [0, duration).
inline EventDataset randomExamples(uint32_t channels, uint32_t classes, size_t count,
                                   double duration, uint32_t spikesPerChannel, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> time(0.0, duration);
    EventDatasetBuilder b(channels, classes, duration);
    for (size_t e = 0; e < count; e++) {
        std::vector<std::pair<float, uint32_t>> events;
        for (uint32_t c = 0; c < channels; c++)
            for (uint32_t k = 0; k < spikesPerChannel; k++)
                events.emplace_back(static_cast<float>(time(rng)), c);
        std::sort(events.begin(), events.end());
        std::vector<float> t;
        std::vector<uint32_t> ch;
        for (const auto& [ti, ci] : events) {
            t.push_back(ti);
            ch.push_back(ci);
        }
        b.add(static_cast<uint32_t>(e % classes), t, ch);
    }
    return std::move(b).build();
}

// Central differences of the summed loss over `examples` for every weight of `connection`.
inline std::vector<double> finiteDifferences(EventPropCompiler& c, const std::string& connection,
                                             std::span<const uint32_t> examples, double h) {
    const std::vector<double> w0 = c.weights(connection);
    std::vector<double> fd(w0.size());
    for (size_t i = 0; i < w0.size(); i++) {
        std::vector<double> w = w0;
        w[i] = w0[i] + h;
        c.setWeights(connection, w);
        const double up = c.evaluate(examples).loss;
        w[i] = w0[i] - h;
        c.setWeights(connection, w);
        const double down = c.evaluate(examples).loss;
        fd[i] = (up - down) / (2.0 * h);
    }
    c.setWeights(connection, w0);
    return fd;
}

// Every element within `rel` of the reference, relative to the larger of its own size and a
// hundredth of the largest reference element (so elements near zero are not judged on noise).
inline void expectClose(const std::vector<double>& got, const std::vector<double>& want,
                        double rel) {
    ASSERT_EQ(got.size(), want.size());
    double largest = 0.0;
    for (double x : want)
        largest = std::max(largest, std::fabs(x));
    ASSERT_GT(largest, 0.0) << "a reference gradient of zero tests nothing";
    for (size_t i = 0; i < got.size(); i++)
        EXPECT_NEAR(got[i], want[i], rel * std::max(std::fabs(want[i]), 0.01 * largest))
            << "element " << i;
}

// A dataset of one example whose events are given as (time, channel) pairs.
inline EventDataset oneExample(uint32_t channels, uint32_t classes, double duration, uint32_t label,
                               std::vector<std::pair<float, uint32_t>> events) {
    std::sort(events.begin(), events.end());
    std::vector<float> t;
    std::vector<uint32_t> ch;
    for (const auto& [ti, ci] : events) {
        t.push_back(ti);
        ch.push_back(ci);
    }
    EventDatasetBuilder b(channels, classes, duration);
    b.add(label, t, ch);
    return std::move(b).build();
}

// Compares where the reference is defined (not NaN), each element within `rel` of the larger of
// its own size and `floor` times the largest defined reference element; returns how many
// elements were compared.
inline size_t expectCloseWhereDefined(const std::vector<double>& got,
                                      const std::vector<double>& want, double rel,
                                      double floor = 0.05) {
    EXPECT_EQ(got.size(), want.size());
    size_t compared = 0;
    double largest = 0.0;
    for (double x : want)
        if (!std::isnan(x)) largest = std::max(largest, std::fabs(x));
    for (size_t i = 0; i < got.size() && i < want.size(); i++) {
        if (std::isnan(want[i])) continue;
        compared++;
        EXPECT_NEAR(got[i], want[i], rel * std::max(std::fabs(want[i]), floor * largest))
            << "element " << i;
    }
    EXPECT_TRUE(compared == 0 || largest > 0.0) << "a reference gradient of zero tests nothing";
    return compared;
}

} // namespace spikeforge::train::testing
