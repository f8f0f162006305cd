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

namespace {

// The sets in order as one dataset (null entries skipped).
EventDataset concatenateAll(std::initializer_list<const EventDataset*> sets) {
    const EventDataset* first = *sets.begin();
    uint32_t classes = 0;
    double duration = 0.0;
    for (const EventDataset* d : sets) {
        if (!d) continue;
        if (d->numChannels() != first->numChannels())
            throw ModelError("cannot join datasets of " + std::to_string(first->numChannels()) +
                             " and " + std::to_string(d->numChannels()) + " channels");
        classes = std::max(classes, d->numClasses());
        duration = std::max(duration, d->duration());
    }
    EventDatasetBuilder b(first->numChannels(), classes, duration);
    for (const EventDataset* d : sets)
        if (d)
            for (size_t i = 0; i < d->size(); i++)
                b.add(d->label(i), d->times(i), d->channels(i));
    return std::move(b).build();
}

} // namespace

EventDataset concatenate(const EventDataset& first, const EventDataset& second) {
    return concatenateAll({&first, &second});
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
    if (!std::isfinite(o.plateauFactor) || o.plateauFactor <= 0.0 || o.plateauFactor > 1.0)
        throw ModelError("fit: plateauFactor must be a number in (0, 1]");
}

std::vector<uint32_t> trainOrder(size_t size, const FitOptions& o, uint32_t epoch) {
    const std::vector<size_t> order = shuffledIndices(size, detail::mixSeed(o.shuffleSeed, epoch));
    return {order.begin(), order.end()};
}

std::vector<PopulationActivity> activityOf(const EventPropCompiler::SpikeCounts& counts,
                                           uint64_t examples) {
    std::vector<PopulationActivity> out;
    for (const auto& [population, perNeuron] : counts) {
        PopulationActivity a;
        a.population = population;
        double sum = 0.0;
        for (double n : perNeuron) {
            sum += n;
            a.silent += n == 0.0;
        }
        if (!perNeuron.empty() && examples > 0)
            a.spikesPerNeuron = sum / (double(perNeuron.size()) * double(examples));
        out.push_back(a);
    }
    return out;
}

} // namespace

PlateauState nextPlateauState(const PlateauState& before, double loss, const FitOptions& options) {
    PlateauState s = before;
    if (options.plateauPatience == 0) return s;
    // Relative threshold as in the common "reduce on plateau" rule: noise-level gains do not
    // count as progress.
    if (s.epochs == 0 || loss < s.best - 1e-4 * std::abs(s.best)) {
        s.best = loss;
        s.sinceBest = 0;
    } else if (++s.sinceBest >= options.plateauPatience) {
        s.halvings++;
        s.sinceBest = 0;
    }
    s.epochs++;
    return s;
}

std::vector<EpochReport> fit(EventPropCompiler& compiler, const EventDataset& train,
                             const EventDataset* validation, const FitOptions& options,
                             std::span<Callback* const> callbacks, ResumePoint start) {
    const uint32_t startEpoch = start.epoch;
    PlateauState plateau = start.plateau;
    checkOptions(options, startEpoch);
    if (train.size() == 0) throw ModelError("fit: the training set is empty");
    if (validation && validation->size() == 0) validation = nullptr;
    // One upload for the whole run, the validation examples after the training examples; with
    // blending one per epoch, the epoch's blends between the two.
    const size_t trainSize = options.blend ? 2 * train.size() : train.size();
    if (trainSize + (validation ? validation->size() : 0) > UINT32_MAX)
        throw ModelError("fit: more than 2^32 - 1 examples");
    if (!options.blend) compiler.setDataset(validation ? concatenate(train, *validation) : train);
    std::vector<uint32_t> validationIndices;
    if (validation) {
        validationIndices.resize(validation->size());
        std::iota(validationIndices.begin(), validationIndices.end(),
                  static_cast<uint32_t>(trainSize));
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
        report.learningRate = options.learningRate * std::pow(options.learningRateDecay, epoch) *
                              std::pow(options.plateauFactor, plateau.halvings);
        compiler.setLearningRate(report.learningRate);

        if (options.blend) {
            const EventDataset blends =
                blendSameClass(train, detail::mixSeed(options.shuffleSeed, epoch) ^ 0xb1e7dULL);
            compiler.setDataset(concatenateAll({&train, &blends, validation}));
        }
        const std::vector<uint32_t> order = trainOrder(trainSize, options, epoch);
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
            const EventPropCompiler::SpikeCounts counts = compiler.takeTrainingSpikeCounts();
            report.activity = activityOf(counts, report.train.examples);
            if (options.silentBoost != 0.0)
                compiler.boostSilentNeurons(options.silentBoost, counts);
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
        plateau = nextPlateauState(
            plateau, report.validation ? report.validation->meanLoss() : report.train.meanLoss(),
            options);
        report.plateau = plateau;
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
