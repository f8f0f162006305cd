#pragma once
// The device layout of a dataset for the spike-input neurons: each example's events regrouped by
// channel (time order kept within a channel), so that input neuron c of example e walks
// evTimes[rowOffsets[e*(C+1)+c] … rowOffsets[e*(C+1)+c+1]) forwards, then backwards for the
// backward pass. Built once on the host, uploaded once.
#include "spikeforge/train/dataset.hpp"

#include <cstdint>
#include <vector>

namespace spikeforge::train::detail {

struct DeviceDatasetLayout {
    std::vector<float> evTimes;       // [ms]
    std::vector<uint32_t> rowOffsets; // size() * (numChannels + 1)
    std::vector<int32_t> labels;
};

// ModelError when the dataset has more events than 32-bit offsets can address.
DeviceDatasetLayout layoutForDevice(const EventDataset& data);

} // namespace spikeforge::train::detail
