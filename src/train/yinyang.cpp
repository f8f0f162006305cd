// The Yin-Yang dataset (Kriener, Göltz & Petrovici 2021), generated from a seed and latency-coded.
#include "spikeforge/errors.hpp"
#include "spikeforge/train/dataset.hpp"
#include "train/dataset_limits.hpp"
#include "train/random.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <string>

namespace spikeforge::train {

namespace {

constexpr double rBig = 0.5;   // radius of the big circle; the square is [0, 2·rBig)²
constexpr double rSmall = 0.1; // radius of the two dots
constexpr uint32_t numFeatures = 4;

void checkOptions(const YinYangOptions& o) {
    const auto bad = [](const std::string& what) { throw ModelError("Yin-Yang options: " + what); };
    for (const double v : {o.tMin, o.tMax, o.tBias, o.duration}) {
        if (!std::isfinite(v) || v < 0.0) bad("every time must be finite and non-negative");
    }
    if (o.tMax < o.tMin) bad("tMax must not be below tMin");
    if (o.tMax > o.duration || (o.bias && o.tBias > o.duration)) {
        bad("duration " + std::to_string(o.duration) + " ms is shorter than the latest spike");
    }
}

} // namespace

int yinYangClass(double x, double y) {
    const double dCentre = std::hypot(x - rBig, y - rBig);
    if (dCentre > rBig) return -1;
    const double dRight = std::hypot(x - 1.5 * rBig, y - rBig); // to the right dot
    const double dLeft = std::hypot(x - 0.5 * rBig, y - rBig);  // to the left dot
    if (dRight < rSmall || dLeft < rSmall) return 2;
    const bool yin = dRight <= rSmall || (dLeft > rSmall && dLeft <= 0.5 * rBig) ||
                     (y > rBig && dRight > 0.5 * rBig);
    return yin ? 1 : 0;
}

EventDataset makeYinYang(size_t size, uint64_t seed, const YinYangOptions& options) {
    checkOptions(options);
    const uint32_t channels = numFeatures + (options.bias ? 1 : 0);
    detail::checkGeneratedSize("a Yin-Yang set", size, channels);
    EventDatasetBuilder builder(channels, 3, options.duration);
    std::array<float, numFeatures + 1> times{};
    std::array<uint32_t, numFeatures + 1> order{};
    std::array<float, numFeatures + 1> sortedTimes{};
    for (size_t i = 0; i < size; i++) {
        const int label = static_cast<int>(i % 3);
        detail::Rng rng(seed, i);
        double x = 0.0, y = 0.0;
        do { // Reject points outside the big circle or of another class.
            x = rng.uniform(0.0, 2.0 * rBig);
            y = rng.uniform(0.0, 2.0 * rBig);
        } while (yinYangClass(x, y) != label);
        const std::array<double, numFeatures> features{x, y, 1.0 - x, 1.0 - y};
        for (uint32_t f = 0; f < numFeatures; f++) {
            times[f] =
                static_cast<float>(options.tMin + features[f] * (options.tMax - options.tMin));
        }
        if (options.bias) times[numFeatures] = static_cast<float>(options.tBias);
        // Events in time order; equal times keep channel order.
        std::iota(order.begin(), order.begin() + channels, 0u);
        std::stable_sort(order.begin(), order.begin() + channels,
                         [&](uint32_t a, uint32_t b) { return times[a] < times[b]; });
        for (uint32_t k = 0; k < channels; k++)
            sortedTimes[k] = times[order[k]];
        builder.add(static_cast<uint32_t>(label), std::span(sortedTimes.data(), channels),
                    std::span<const uint32_t>(order.data(), channels));
    }
    return std::move(builder).build();
}

} // namespace spikeforge::train
