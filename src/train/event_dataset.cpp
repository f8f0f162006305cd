// The compact event array: validation, subsets, shuffles and splits.
#include "spikeforge/errors.hpp"
#include "spikeforge/train/dataset.hpp"
#include "train/random.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace spikeforge::train {

namespace {

std::string exampleName(size_t i) {
    return "dataset example " + std::to_string(i);
}

} // namespace

EventDataset::EventDataset(std::vector<float> times, std::vector<uint32_t> channels,
                           std::vector<uint64_t> offsets, std::vector<uint32_t> counts,
                           std::vector<uint32_t> labels, uint32_t numChannels, uint32_t numClasses,
                           double duration)
    : times_(std::move(times)), channels_(std::move(channels)), offsets_(std::move(offsets)),
      counts_(std::move(counts)), labels_(std::move(labels)), numChannels_(numChannels),
      numClasses_(numClasses), duration_(duration) {
    validate();
}

void EventDataset::validate() const {
    if (numChannels_ == 0) throw ModelError("dataset: numChannels must be at least 1");
    if (numClasses_ == 0) throw ModelError("dataset: numClasses must be at least 1");
    if (!std::isfinite(duration_) || duration_ < 0.0) {
        throw ModelError("dataset: duration must be finite and non-negative, got " +
                         std::to_string(duration_) + " ms");
    }
    if (times_.size() != channels_.size()) {
        throw ModelError("dataset: " + std::to_string(times_.size()) + " event times but " +
                         std::to_string(channels_.size()) + " event channels");
    }
    if (offsets_.size() != labels_.size() || counts_.size() != labels_.size()) {
        throw ModelError("dataset: " + std::to_string(labels_.size()) + " labels, " +
                         std::to_string(offsets_.size()) + " offsets and " +
                         std::to_string(counts_.size()) + " counts (must all be equal)");
    }
    // Times are floats: the bound is the duration as a float, so a spike at exactly the duration
    // (rounded like every time) is inside.
    const float latest = static_cast<float>(duration_);
    for (size_t i = 0; i < labels_.size(); i++) {
        if (labels_[i] >= numClasses_) {
            throw ModelError(exampleName(i) + ": label " + std::to_string(labels_[i]) +
                             " is not below numClasses " + std::to_string(numClasses_));
        }
        // Compare without forming offset + count, which could wrap.
        if (offsets_[i] > times_.size() || counts_[i] > times_.size() - offsets_[i]) {
            throw ModelError(exampleName(i) + ": events [" + std::to_string(offsets_[i]) + ", +" +
                             std::to_string(counts_[i]) + ") lie outside the " +
                             std::to_string(times_.size()) + " events");
        }
        const auto t = times(i);
        const auto c = channels(i);
        for (size_t k = 0; k < t.size(); k++) {
            if (!std::isfinite(t[k]) || t[k] < 0.0f || t[k] > latest) {
                throw ModelError(exampleName(i) + ", event " + std::to_string(k) + ": time " +
                                 std::to_string(t[k]) + " ms is not in [0, duration " +
                                 std::to_string(duration_) + " ms]");
            }
            if (k > 0 && t[k] < t[k - 1]) {
                throw ModelError(exampleName(i) + ", event " + std::to_string(k) + ": time " +
                                 std::to_string(t[k]) + " ms is before the previous event's " +
                                 std::to_string(t[k - 1]) + " ms (events must be time-sorted)");
            }
            if (c[k] >= numChannels_) {
                throw ModelError(exampleName(i) + ", event " + std::to_string(k) + ": channel " +
                                 std::to_string(c[k]) + " is not below numChannels " +
                                 std::to_string(numChannels_));
            }
        }
    }
}

static void checkExample(size_t example, size_t size) {
    if (example >= size) {
        throw ModelError(exampleName(example) + " does not exist (the dataset has " +
                         std::to_string(size) + " examples)");
    }
}

std::span<const float> EventDataset::times(size_t example) const {
    checkExample(example, size());
    return std::span<const float>(times_).subspan(offsets_[example], counts_[example]);
}

std::span<const uint32_t> EventDataset::channels(size_t example) const {
    checkExample(example, size());
    return std::span<const uint32_t>(channels_).subspan(offsets_[example], counts_[example]);
}

uint32_t EventDataset::label(size_t example) const {
    checkExample(example, size());
    return labels_[example];
}

EventDataset EventDataset::subset(std::span<const size_t> indices) const {
    EventDatasetBuilder builder(numChannels_, numClasses_, duration_);
    for (size_t k = 0; k < indices.size(); k++) {
        if (indices[k] >= size()) {
            throw ModelError("dataset subset: index " + std::to_string(k) + " is " +
                             std::to_string(indices[k]) + ", but the dataset has " +
                             std::to_string(size()) + " examples");
        }
        builder.add(labels_[indices[k]], times(indices[k]), channels(indices[k]));
    }
    return std::move(builder).build();
}

std::vector<size_t> EventDataset::classCounts() const {
    std::vector<size_t> counts(numClasses_, 0);
    for (const uint32_t label : labels_)
        counts[label]++;
    return counts;
}

EventDatasetBuilder::EventDatasetBuilder(uint32_t numChannels, uint32_t numClasses, double duration)
    : numChannels_(numChannels), numClasses_(numClasses), duration_(duration) {}

void EventDatasetBuilder::add(uint32_t label, std::span<const float> times,
                              std::span<const uint32_t> channels) {
    if (times.size() != channels.size()) {
        throw ModelError(exampleName(labels_.size()) + ": " + std::to_string(times.size()) +
                         " times but " + std::to_string(channels.size()) + " channels");
    }
    if (times.size() > UINT32_MAX) {
        throw ModelError(exampleName(labels_.size()) + ": more than 2^32 - 1 events");
    }
    offsets_.push_back(times_.size());
    counts_.push_back(static_cast<uint32_t>(times.size()));
    labels_.push_back(label);
    times_.insert(times_.end(), times.begin(), times.end());
    channels_.insert(channels_.end(), channels.begin(), channels.end());
}

EventDataset EventDatasetBuilder::build() && {
    return EventDataset(std::move(times_), std::move(channels_), std::move(offsets_),
                        std::move(counts_), std::move(labels_), numChannels_, numClasses_,
                        duration_);
}

std::vector<size_t> shuffledIndices(size_t n, uint64_t seed) {
    std::vector<size_t> order(n);
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    detail::Rng rng(seed);
    for (size_t i = n; i > 1; i--) {
        const size_t j = static_cast<size_t>(rng.upTo(i - 1));
        std::swap(order[i - 1], order[j]);
    }
    return order;
}

std::pair<EventDataset, EventDataset> splitTrainValidation(const EventDataset& data,
                                                           size_t validationSize, uint64_t seed) {
    if (validationSize > data.size()) {
        throw ModelError("dataset split: validation size " + std::to_string(validationSize) +
                         " exceeds the dataset's " + std::to_string(data.size()) + " examples");
    }
    std::vector<size_t> order = shuffledIndices(data.size(), seed);
    std::vector<size_t> validation(order.begin(), order.begin() + validationSize);
    std::vector<size_t> train(order.begin() + validationSize, order.end());
    std::sort(validation.begin(), validation.end());
    std::sort(train.begin(), train.end());
    return {data.subset(train), data.subset(validation)};
}

} // namespace spikeforge::train
