// fit() (fit.hpp): the epoch loop over one uploaded dataset (training examples first, the
// validation examples after them), with a per-epoch shuffle and learning rate that depend only
// on the epoch number, so that a run resumed at epoch k repeats the uninterrupted one.
#include "spikeforge/train/fit.hpp"

#include "spikeforge/errors.hpp"

#include "train/random.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

namespace spikeforge::train {

EventDataset concatenate(const EventDataset& first, const EventDataset& second) {
    if (first.numChannels() != second.numChannels())
        throw ModelError("cannot join datasets of " + std::to_string(first.numChannels()) +
                         " and " + std::to_string(second.numChannels()) + " channels");
    EventDatasetBuilder b(first.numChannels(), std::max(first.numClasses(), second.numClasses()),
                          std::max(first.duration(), second.duration()));
    for (const EventDataset* d : {&first, &second})
        for (size_t i = 0; i < d->size(); i++)
            b.add(d->label(i), d->times(i), d->channels(i));
    return std::move(b).build();
}

namespace {

void checkOptions(const FitOptions& o, uint32_t startEpoch) {
    if (startEpoch > o.epochs)
        throw ModelError("fit: start epoch " + std::to_string(startEpoch) + " is past the " +
                         std::to_string(o.epochs) + " epochs to train");
    if (!std::isfinite(o.learningRate) || o.learningRate <= 0.0)
        throw ModelError("fit: learning rate must be a finite number > 0");
    if (!std::isfinite(o.learningRateDecay) || o.learningRateDecay <= 0.0)
        throw ModelError("fit: learning rate decay must be a finite number > 0");
    if (o.progressEveryBatches == 0) throw ModelError("fit: progressEveryBatches must be >= 1");
    if (!std::isfinite(o.silentBoost) || o.silentBoost < 0.0)
        throw ModelError("fit: silentBoost must be a finite number >= 0");
}

std::vector<uint32_t> trainOrder(size_t size, const FitOptions& o, uint32_t epoch) {
    const std::vector<size_t> order = shuffledIndices(size, detail::mixSeed(o.shuffleSeed, epoch));
    return {order.begin(), order.end()};
}

} // namespace

std::vector<EpochReport> fit(EventPropCompiler& compiler, const EventDataset& train,
                             const EventDataset* validation, const FitOptions& options,
                             std::span<Callback* const> callbacks, uint32_t startEpoch) {
    checkOptions(options, startEpoch);
    if (train.size() == 0) throw ModelError("fit: the training set is empty");
    if (validation && validation->size() == 0) validation = nullptr;
    if (train.size() + (validation ? validation->size() : 0) > UINT32_MAX)
        throw ModelError("fit: more than 2^32 - 1 examples");
    // One upload for the whole run: the validation examples follow the training examples.
    compiler.setDataset(validation ? concatenate(train, *validation) : train);
    std::vector<uint32_t> validationIndices;
    if (validation) {
        validationIndices.resize(validation->size());
        std::iota(validationIndices.begin(), validationIndices.end(),
                  static_cast<uint32_t>(train.size()));
    }

    for (Callback* c : callbacks)
        c->onTrainBegin(startEpoch, options.epochs);
    std::vector<EpochReport> reports;
    for (uint32_t epoch = startEpoch; epoch < options.epochs; epoch++) {
        // Read before the clock starts: it waits for work submitted earlier.
        const std::optional<double> busyBefore = compiler.simulation().deviceBusySeconds();
        const auto start = std::chrono::steady_clock::now();
        EpochReport report;
        report.epoch = epoch;
        report.learningRate = options.learningRate * std::pow(options.learningRateDecay, epoch);
        compiler.setLearningRate(report.learningRate);

        const std::vector<uint32_t> order = trainOrder(train.size(), options, epoch);
        for (Callback* c : callbacks)
            c->onEpochBegin(epoch, order.size());
        auto progress = [&](uint64_t done, uint64_t total) {
            if (done % options.progressEveryBatches != 0 && done != total) return;
            for (Callback* c : callbacks)
                c->onBatchesDone(epoch, done, total);
        };
        // A failed epoch (NaN or Inf, a spike buffer overflow) ends the run before onEpochEnd:
        // no checkpoint of it is written, the previous one stays as it was.
        // The augmentation's draws depend only on the seed and the epoch, like the order.
        compiler.setAugmentationSeed(detail::mixSeed(options.shuffleSeed, epoch) ^ 0x5f3759dfULL);
        try {
            report.train = compiler.trainEpoch(order, progress);
            if (options.silentBoost != 0.0) compiler.boostSilentNeurons(options.silentBoost);
            if (validation) report.validation = compiler.evaluate(validationIndices);
        } catch (const ModelError& e) {
            throw ModelError("epoch " + std::to_string(epoch + 1) + " of " +
                             std::to_string(options.epochs) + ": " + e.what());
        }
        // evaluate() ends with reading its metrics, so the device is idle here.
        const std::optional<double> busyAfter = compiler.simulation().deviceBusySeconds();
        report.seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (busyBefore && busyAfter) report.deviceSeconds = *busyAfter - *busyBefore;
        for (Callback* c : callbacks)
            c->onEpochEnd(report);
        reports.push_back(report);
    }
    for (Callback* c : callbacks)
        c->onTrainEnd(reports);
    return reports;
}

std::optional<double> hostFraction(const std::vector<EpochReport>& reports) {
    double wall = 0.0, busy = 0.0; // [s]
    for (const EpochReport& r : reports) {
        if (!r.deviceSeconds) return std::nullopt;
        wall += r.seconds;
        busy += *r.deviceSeconds;
    }
    if (reports.empty() || wall <= 0.0) return std::nullopt;
    return std::clamp(1.0 - busy / wall, 0.0, 1.0);
}

} // namespace spikeforge::train
