// Regrouping a dataset by (example, channel) for the device (device_dataset.hpp).
#include "train/device_dataset.hpp"

#include "spikeforge/errors.hpp"

#include <limits>

namespace spikeforge::train::detail {

DeviceDatasetLayout layoutForDevice(const EventDataset& data) {
    const uint64_t maxEvents = std::numeric_limits<uint32_t>::max();
    if (data.numEvents() > maxEvents)
        throw ModelError("dataset has " + std::to_string(data.numEvents()) +
                         " events; the device layout addresses at most " +
                         std::to_string(maxEvents) + " (train on a subset)");
    const uint32_t channels = data.numChannels();
    DeviceDatasetLayout out;
    out.evTimes.resize(data.numEvents());
    out.rowOffsets.resize(data.size() * (size_t(channels) + 1));
    out.labels.reserve(data.size());
    std::vector<uint32_t> fill(channels);
    uint32_t next = 0; // first event of the current example in the regrouped array
    for (size_t e = 0; e < data.size(); e++) {
        const auto times = data.times(e);
        const auto chans = data.channels(e);
        // Counting sort by channel; the events are visited in time order, so each channel's
        // events stay time-sorted.
        std::vector<uint32_t> count(channels, 0);
        for (uint32_t c : chans)
            count[c]++;
        uint32_t* row = &out.rowOffsets[e * (size_t(channels) + 1)];
        uint32_t at = next;
        for (uint32_t c = 0; c < channels; c++) {
            row[c] = at;
            fill[c] = at;
            at += count[c];
        }
        row[channels] = at;
        for (size_t i = 0; i < times.size(); i++)
            out.evTimes[fill[chans[i]]++] = times[i];
        next = at;
        out.labels.push_back(static_cast<int32_t>(data.label(e)));
    }
    return out;
}

} // namespace spikeforge::train::detail
