#pragma once
// Datasets for training (docs/training.md): the compact event array every dataset is stored as,
// and the sources that fill it — the Yin-Yang generator, the Heidelberg (SHD/SSC) HDF5 reader and
// a generator of synthetic SHD-shaped data. Everything here is host-side and built only on the
// standard library (HDF5 optional); the training compilers upload an EventDataset once.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace spikeforge::train {

// The compact event array: one flat list of (time, channel) events; example i owns the events
// [offsets[i], offsets[i] + counts[i]), sorted by time (ties in any order), and has one label.
// Times are [ms] from the start of the example, within [0, duration]. The constructor validates
// everything and throws a ModelError naming the first bad example; an EventDataset is therefore
// always valid and immutable.
class EventDataset {
public:
    EventDataset(std::vector<float> times, std::vector<uint32_t> channels,
                 std::vector<uint64_t> offsets, std::vector<uint32_t> counts,
                 std::vector<uint32_t> labels, uint32_t numChannels, uint32_t numClasses,
                 double duration);

    size_t size() const { return labels_.size(); }
    size_t numEvents() const { return times_.size(); }
    uint32_t numChannels() const { return numChannels_; }
    uint32_t numClasses() const { return numClasses_; }
    double duration() const { return duration_; } // [ms]

    // The flat arrays, as a device upload wants them.
    std::span<const float> times() const { return times_; } // [ms]
    std::span<const uint32_t> channels() const { return channels_; }
    std::span<const uint64_t> offsets() const { return offsets_; }
    std::span<const uint32_t> counts() const { return counts_; }
    std::span<const uint32_t> labels() const { return labels_; }

    // One example's events (bounds-checked: an index >= size() is a ModelError).
    std::span<const float> times(size_t example) const;
    std::span<const uint32_t> channels(size_t example) const;
    uint32_t label(size_t example) const;

    // The examples at `indices`, in that order (repeats allowed), copied into a new compact array
    // (offsets contiguous). An index >= size() is a ModelError naming its position.
    EventDataset subset(std::span<const size_t> indices) const;

    // Examples per class, [numClasses].
    std::vector<size_t> classCounts() const;

private:
    void validate() const;

    std::vector<float> times_;
    std::vector<uint32_t> channels_;
    std::vector<uint64_t> offsets_;
    std::vector<uint32_t> counts_;
    std::vector<uint32_t> labels_;
    uint32_t numChannels_;
    uint32_t numClasses_;
    double duration_;
};

// Builds an EventDataset example by example (offsets contiguous). Validation happens in build().
class EventDatasetBuilder {
public:
    EventDatasetBuilder(uint32_t numChannels, uint32_t numClasses, double duration);
    // Appends one example; `times` [ms] and `channels` must have equal length (else ModelError).
    void add(uint32_t label, std::span<const float> times, std::span<const uint32_t> channels);
    size_t size() const { return labels_.size(); }
    EventDataset build() &&;

private:
    std::vector<float> times_;
    std::vector<uint32_t> channels_;
    std::vector<uint64_t> offsets_;
    std::vector<uint32_t> counts_;
    std::vector<uint32_t> labels_;
    uint32_t numChannels_;
    uint32_t numClasses_;
    double duration_;
};

// A random permutation of 0 … n−1, the same on every platform for a given seed: std::mt19937_64
// seeded with `seed`, then Fisher–Yates from the last position down, position i swapped with a
// j uniform in [0, i] drawn by rejection from 64-bit outputs (no std::uniform_int_distribution,
// whose algorithm differs between standard libraries).
std::vector<size_t> shuffledIndices(size_t n, uint64_t seed);

// Same-class blending (the loss-shaping SHD recipe's augmentation): example i of the result has
// example i's label and mixes example i with a partner j of the same class, drawn uniformly among
// the others of that class (i itself when it is alone). Both are moved so that their mean event
// time and mean channel meet halfway (times by the real difference [ms], channels by the rounded
// one), then every event of either is kept with probability `keep`; events moved outside
// [0, duration] or the channel range are dropped. Deterministic from `seed` (example i's draws come
// from its own stream of (seed, i)); the result has data.size() examples.
EventDataset blendSameClass(const EventDataset& data, uint64_t seed, double keep = 0.5);

// Splits `data` into (train, validation): validationSize examples picked by
// shuffledIndices(size, seed) go to validation, the rest to train; each part keeps the original
// order of its examples. validationSize > size() is a ModelError.
std::pair<EventDataset, EventDataset> splitTrainValidation(const EventDataset& data,
                                                           size_t validationSize, uint64_t seed);

// ---- Yin-Yang (Kriener, Göltz & Petrovici 2021) ----
// Points (x, y) in the unit square inside the big circle (centre (0.5, 0.5), r_big 0.5), in three
// classes: 0 yang, 1 yin, 2 dot (within r_small 0.1 of (0.25, 0.5) or (0.75, 0.5)). Example i has
// class i mod 3 (so the classes are balanced exactly when size is a multiple of 3, and within one
// otherwise); its point is rejection-sampled until it falls in that class. Each example's draws
// come from its own std::mt19937_64 seeded with a mix (splitmix64) of (seed, i), so example i
// does not depend on size. Features v ∈ (x, y, 1 − x, 1 − y) → channels 0–3, one spike each at
// t = tMin + v·(tMax − tMin); with bias, channel 4 spikes at tBias. Defaults follow Wunderlich &
// Pehle's EventProp setup: latencies over [0, 30] ms and a bias spike at 0 ms.
struct YinYangOptions {
    double tMin = 0.0;      // [ms] latency of feature value 0
    double tMax = 30.0;     // [ms] latency of feature value 1
    bool bias = true;       // add the bias channel (channel 4)
    double tBias = 0.0;     // [ms]
    double duration = 60.0; // [ms] trial length; must be >= every spike time
};
EventDataset makeYinYang(size_t size, uint64_t seed, const YinYangOptions& options = {});

// The class of a point of the Yin-Yang square (0 yang, 1 yin, 2 dot); -1 outside the big circle.
int yinYangClass(double x, double y);

// ---- Spiking Heidelberg Digits / Spiking Speech Commands (Cramer et al. 2020) ----
// Reads the published HDF5 layout: `spikes/times` (variable-length float arrays [s]),
// `spikes/units` (variable-length integer arrays, channels) and `labels` (integers), all
// one-dimensional and of the same length, and optionally `extra/keys` (one-dimensional, one
// class name per class). Any number of channels and classes: times are converted to [ms].
//
// The class count: options.numClasses when given (then an `extra/keys` of another length is an
// error); else the length of `extra/keys` when the file has it; else the largest label + 1.
// A label >= the class count is an error.
//
// Errors (ModelError) name the file and the dataset or example: a missing file or dataset, a
// wrong type or rank, lengths that differ, unsorted or negative times, a channel >=
// numChannels, a label >= the class count, an `extra/keys` that disagrees with numClasses.
// A build without HDF5 has these functions too; they throw a BackendError saying so.
struct HeidelbergOptions {
    uint32_t numChannels = 700; // channels 0 … numChannels−1
    uint32_t numClasses = 0;    // 0 = from the file: extra/keys, else max label + 1
    size_t maxExamples = 0;     // read only the first maxExamples (0 = all)
    double duration = 0.0;      // [ms] 0 = latest spike in the file; else later spikes dropped
    // Where numClasses comes from, for error messages (e.g. "[dataset] num_classes = 3");
    // empty: "numClasses is N".
    std::string numClassesFrom = {};
};
EventDataset readHeidelbergHdf5(const std::string& path, const HeidelbergOptions& options = {});

// Where a Heidelberg file's class count came from (the rule above).
enum class ClassCountSource { Options, Keys, Labels };

// readHeidelbergHdf5's dataset and what else the reading found. Warnings are for a file that is
// valid but probably not what was meant; each starts with the file's name:
// - more than half of the events are later than options.duration and were dropped (times in
//   milliseconds instead of seconds look like this);
// - classes without examples (among those read).
struct HeidelbergFile {
    EventDataset data;
    ClassCountSource classesFrom = ClassCountSource::Options;
    uint64_t eventsInFile = 0;  // events of the examples read
    uint64_t eventsDropped = 0; // of those, later than options.duration
    std::vector<std::string> warnings;
};
HeidelbergFile readHeidelbergHdf5File(const std::string& path,
                                      const HeidelbergOptions& options = {});

// The warnings above, for any dataset; each starts with `source` (e.g. "file 'x.h5'"). Empty
// when there is nothing to say.
// Classes of data.numClasses() with no example, listed (the first 10, then how many more).
std::vector<std::string> emptyClassWarnings(const EventDataset& data, const std::string& source);
// More than half of data's events are later than `window` ms (e.g. the trial length): the
// network never sees them; suggests that the times were written in ms instead of s.
std::vector<std::string> lateEventWarnings(const EventDataset& data, const std::string& source,
                                           double window);

// Whether this build can read HDF5 files (readHeidelbergHdf5 throws otherwise).
bool haveHdf5();

// ---- Synthetic SHD-shaped data ----
// A stand-in for SHD when benchmarking or testing: numChannels channels, `duration` ms,
// numClasses classes, example i of class i mod numClasses. Each class has a profile of
// `bumpsPerClass` Gaussian bumps in channel space whose centres drift linearly in time while the
// bump is active (like formants); the profiles depend only on profileSeed, so sets generated
// with different `seed`s share their classes. An example draws a gain g uniform in
// [1 − countSpread, 1 + countSpread] and has exactly round(g·meanSpikes) spikes (so its count
// lies in [(1 − countSpread)·meanSpikes, (1 + countSpread)·meanSpikes] up to rounding), a time
// shift uniform in ±timeJitter ms and a channel shift uniform in ±channelJitter; a fraction
// `background` of its spikes is uniform over channels and time. Times are sorted; draws come
// from a per-example std::mt19937_64 seeded from (seed, i) as for Yin-Yang.
struct SyntheticShdOptions {
    uint32_t numChannels = 700;
    uint32_t numClasses = 20;
    double duration = 1000.0;   // [ms]
    double meanSpikes = 5000.0; // spikes per example (SHD: on the order of several thousand)
    double countSpread = 0.4;   // relative half-width of the count range
    uint32_t bumpsPerClass = 3;
    double background = 0.1;     // share of spikes uniform over channels and time
    double timeJitter = 50.0;    // [ms]
    double channelJitter = 20.0; // [channels]
    uint64_t profileSeed = 0x5eedc1a55e5ULL;
};
EventDataset makeSyntheticShd(size_t size, uint64_t seed, const SyntheticShdOptions& options = {});

} // namespace spikeforge::train
