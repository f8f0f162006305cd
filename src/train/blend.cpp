// Same-class blending (dataset.hpp, blendSameClass): the loss-shaping SHD recipe's augmentation
// that doubles the training set with mixtures of two recordings of one class.
#include "spikeforge/errors.hpp"
#include "spikeforge/train/dataset.hpp"

#include "train/random.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace spikeforge::train {

namespace {

struct Centre {
    double time = 0.0;    // [ms] mean event time
    double channel = 0.0; // mean channel
};

Centre centreOf(const EventDataset& d, size_t i) {
    const auto t = d.times(i);
    const auto c = d.channels(i);
    Centre m;
    if (t.empty()) return m;
    for (size_t k = 0; k < t.size(); k++) {
        m.time += t[k];
        m.channel += c[k];
    }
    m.time /= double(t.size());
    m.channel /= double(t.size());
    return m;
}

struct Event {
    float time;
    uint32_t channel;
};

// Example i's events moved by (dt, dc), each kept with probability `keep`, appended to `out`;
// events moved outside [0, duration] or the channels are dropped.
void addShifted(const EventDataset& d, size_t i, double dt, int64_t dc, double keep,
                detail::Rng& rng, std::vector<Event>& out) {
    const auto t = d.times(i);
    const auto c = d.channels(i);
    for (size_t k = 0; k < t.size(); k++) {
        const bool kept = rng.uniform() < keep; // drawn for every event: streams stay aligned
        const double time = double(t[k]) + dt;
        const int64_t channel = int64_t(c[k]) + dc;
        if (!kept || time < 0.0 || time > d.duration() || channel < 0 ||
            channel >= int64_t(d.numChannels()))
            continue;
        out.push_back({static_cast<float>(time), static_cast<uint32_t>(channel)});
    }
}

} // namespace

EventDataset blendSameClass(const EventDataset& data, uint64_t seed, double keep) {
    if (!(keep > 0.0 && keep <= 1.0))
        throw ModelError("blend: the probability of keeping an event must be in (0, 1]");
    std::vector<std::vector<size_t>> byClass(data.numClasses());
    for (size_t i = 0; i < data.size(); i++)
        byClass[data.label(i)].push_back(i);
    std::vector<Centre> centres(data.size());
    for (size_t i = 0; i < data.size(); i++)
        centres[i] = centreOf(data, i);

    EventDatasetBuilder b(data.numChannels(), data.numClasses(), data.duration());
    std::vector<Event> events;
    std::vector<float> times;
    std::vector<uint32_t> channels;
    for (size_t i = 0; i < data.size(); i++) {
        detail::Rng rng(seed, i);
        const auto& mates = byClass[data.label(i)];
        // A partner other than i when the class has one: position of i skipped.
        size_t j = i;
        if (mates.size() > 1) {
            const size_t self = size_t(std::find(mates.begin(), mates.end(), i) - mates.begin());
            size_t k = size_t(rng.upTo(mates.size() - 2));
            if (k >= self) k++;
            j = mates[k];
        }
        // Both move to the midpoint of their centres (channels by a whole number).
        const Centre mid{(centres[i].time + centres[j].time) / 2.0,
                         (centres[i].channel + centres[j].channel) / 2.0};
        events.clear();
        for (const size_t e : {i, j})
            addShifted(data, e, mid.time - centres[e].time,
                       std::llround(mid.channel - centres[e].channel), keep, rng, events);
        std::stable_sort(events.begin(), events.end(),
                         [](const Event& a, const Event& b) { return a.time < b.time; });
        times.resize(events.size());
        channels.resize(events.size());
        for (size_t k = 0; k < events.size(); k++) {
            times[k] = events[k].time;
            channels[k] = events[k].channel;
        }
        b.add(data.label(i), times, channels);
    }
    return std::move(b).build();
}

} // namespace spikeforge::train
