// Synthetic SHD-shaped data: class-dependent, time-drifting channel profiles (docs/training.md).
#include "spikeforge/errors.hpp"
#include "spikeforge/train/dataset.hpp"
#include "train/dataset_limits.hpp"
#include "train/random.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace spikeforge::train {

namespace {

// One bump of a class profile: active over [onset, onset + length] [ms], its centre moving
// linearly from `centre` to `centre + drift` [channels] meanwhile, Gaussian of width `width`.
struct Bump {
    double onset, length, centre, drift, width, weight;
};

void checkOptions(const SyntheticShdOptions& o) {
    const auto bad = [](const std::string& what) {
        throw ModelError("synthetic SHD options: " + what);
    };
    if (o.numChannels == 0 || o.numClasses == 0) bad("numChannels and numClasses must be >= 1");
    if (!std::isfinite(o.duration) || o.duration <= 0.0) bad("duration must be positive");
    if (!std::isfinite(o.meanSpikes) || o.meanSpikes < 0.0 || o.meanSpikes > 1e8) {
        bad("meanSpikes must be in [0, 1e8]");
    }
    if (!(o.countSpread >= 0.0 && o.countSpread <= 1.0)) bad("countSpread must be in [0, 1]");
    if (!(o.background >= 0.0 && o.background <= 1.0)) bad("background must be in [0, 1]");
    if (o.bumpsPerClass == 0 && o.background < 1.0) bad("bumpsPerClass must be >= 1");
    if (!std::isfinite(o.timeJitter) || o.timeJitter < 0.0 || !std::isfinite(o.channelJitter) ||
        o.channelJitter < 0.0) {
        bad("timeJitter and channelJitter must be finite and non-negative");
    }
}

// The profile of class c: depends on profileSeed and c only.
std::vector<Bump> classProfile(const SyntheticShdOptions& o, uint32_t c) {
    detail::Rng rng(o.profileSeed, c);
    const double channels = o.numChannels;
    std::vector<Bump> bumps(o.bumpsPerClass);
    for (Bump& b : bumps) {
        b.onset = rng.uniform(0.0, 0.5) * o.duration;
        b.length = std::min(rng.uniform(0.3, 0.6) * o.duration, o.duration - b.onset);
        b.centre = rng.uniform(0.1, 0.9) * channels;
        b.drift = rng.uniform(-0.2, 0.2) * channels;
        b.width = rng.uniform(0.01, 0.035) * channels;
        b.weight = rng.uniform(0.5, 1.5);
    }
    return bumps;
}

// Mirrors v into [0, hi] once at each end, then clamps (a shift can overshoot by at most hi).
double reflect(double v, double hi) {
    if (v < 0.0) v = -v;
    if (v > hi) v = 2.0 * hi - v;
    return std::clamp(v, 0.0, hi);
}

// Index of the bump whose cumulative weight first exceeds u·total.
size_t pickBump(const std::vector<double>& cumulative, double u) {
    const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), u * cumulative.back());
    return std::min(static_cast<size_t>(it - cumulative.begin()), cumulative.size() - 1);
}

} // namespace

EventDataset makeSyntheticShd(size_t size, uint64_t seed, const SyntheticShdOptions& o) {
    checkOptions(o);
    detail::checkGeneratedSize("a synthetic SHD set", size,
                               double(o.meanSpikes) * (1.0 + o.countSpread));
    std::vector<std::vector<Bump>> profiles;
    std::vector<std::vector<double>> cumulative;
    for (uint32_t c = 0; c < o.numClasses; c++) {
        profiles.push_back(classProfile(o, c));
        std::vector<double> sums;
        double sum = 0.0;
        for (const Bump& b : profiles.back())
            sums.push_back(sum += b.weight);
        cumulative.push_back(std::move(sums));
    }
    const double lastChannel = o.numChannels - 1;
    EventDatasetBuilder builder(o.numChannels, o.numClasses, o.duration);
    std::vector<std::pair<float, uint32_t>> events;
    std::vector<float> times;
    std::vector<uint32_t> channels;
    for (size_t i = 0; i < size; i++) {
        const auto label = static_cast<uint32_t>(i % o.numClasses);
        detail::Rng rng(seed, i);
        const double gain = rng.uniform(1.0 - o.countSpread, 1.0 + o.countSpread);
        const auto count = static_cast<size_t>(std::llround(gain * o.meanSpikes));
        const double timeShift = rng.uniform(-o.timeJitter, o.timeJitter);          // [ms]
        const double channelShift = rng.uniform(-o.channelJitter, o.channelJitter); // [channels]
        events.clear();
        for (size_t k = 0; k < count; k++) {
            double t = 0.0, ch = 0.0;
            if (rng.uniform() < o.background) {
                t = rng.uniform(0.0, o.duration);
                ch = static_cast<double>(rng.upTo(o.numChannels - 1));
            } else {
                const Bump& b = profiles[label][pickBump(cumulative[label], rng.uniform())];
                const double u = rng.uniform(); // position within the bump's active time
                t = reflect(b.onset + u * b.length + timeShift, o.duration);
                ch = std::round(reflect(
                    b.centre + u * b.drift + channelShift + b.width * rng.normal(), lastChannel));
            }
            // A float time rounded up past the duration is pulled back to it.
            const float time = std::min(static_cast<float>(t), static_cast<float>(o.duration));
            events.emplace_back(time, static_cast<uint32_t>(ch));
        }
        std::sort(events.begin(), events.end());
        times.resize(events.size());
        channels.resize(events.size());
        for (size_t k = 0; k < events.size(); k++) {
            times[k] = events[k].first;
            channels[k] = events[k].second;
        }
        builder.add(label, times, channels);
    }
    return std::move(builder).build();
}

} // namespace spikeforge::train
