// The Heidelberg spiking datasets (SHD, SSC), and any file in their HDF5 layout whatever its
// channels and classes, read with the HDF5 C API (the class-count rule and the warnings:
// dataset.hpp). Optional: without HDF5 (SPIKEFORGE_HAVE_HDF5 unset) the reader throws a
// BackendError.
#include "spikeforge/errors.hpp"
#include "spikeforge/train/dataset.hpp"

#include <string>

#if SPIKEFORGE_HAVE_HDF5
#include <hdf5.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <utility>
#include <vector>
#endif

namespace spikeforge::train {

#if !SPIKEFORGE_HAVE_HDF5

bool haveHdf5() {
    return false;
}

HeidelbergFile readHeidelbergHdf5File(const std::string& path, const HeidelbergOptions&) {
    throw BackendError("cannot read '" + path +
                       "': this build of spikeforge has no HDF5 support (install libhdf5-dev, "
                       "e.g. with tools/install-deps, and configure again)");
}

EventDataset readHeidelbergHdf5(const std::string& path, const HeidelbergOptions& options) {
    return readHeidelbergHdf5File(path, options).data;
}

#else

namespace {

// Examples read per HDF5 call: bounds the variable-length buffers HDF5 allocates.
constexpr hsize_t chunkExamples = 1024;

// Owns one HDF5 identifier.
class Handle {
public:
    Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
    Handle(Handle&& other) noexcept : id_(std::exchange(other.id_, -1)), close_(other.close_) {}
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
    Handle& operator=(Handle&&) = delete;
    ~Handle() {
        if (id_ >= 0) close_(id_);
    }
    hid_t get() const { return id_; }
    bool valid() const { return id_ >= 0; }

private:
    hid_t id_;
    herr_t (*close_)(hid_t);
};

// Turns off HDF5's printing of its error stack while we read (our errors say what went wrong),
// and restores the previous handler afterwards.
class QuietErrors {
public:
    QuietErrors() {
        H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
        H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    }
    QuietErrors(const QuietErrors&) = delete;
    QuietErrors& operator=(const QuietErrors&) = delete;
    ~QuietErrors() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }

private:
    H5E_auto2_t func_ = nullptr;
    void* data_ = nullptr;
};

// Variable-length buffers HDF5 fills with memory it allocates: given back when this goes away.
class VlenBuffer {
public:
    VlenBuffer(hid_t type, hsize_t count) : type_(type), data_(count, hvl_t{0, nullptr}) {}
    VlenBuffer(const VlenBuffer&) = delete;
    VlenBuffer& operator=(const VlenBuffer&) = delete;
    ~VlenBuffer() {
        hsize_t count = data_.size();
        const Handle space(H5Screate_simple(1, &count, nullptr), H5Sclose);
#if H5_VERSION_GE(1, 12, 0)
        H5Treclaim(type_, space.get(), H5P_DEFAULT, data_.data());
#else
        H5Dvlen_reclaim(type_, space.get(), H5P_DEFAULT, data_.data());
#endif
    }
    hvl_t* data() {
        return data_.data();
    }
    const hvl_t& operator[](size_t i) const {
        return data_[i];
    }

private:
    hid_t type_;
    std::vector<hvl_t> data_;
};

// A one-dimensional dataset, open.
struct Dataset {
    Handle handle;
    hsize_t length;
};

struct Reader {
    std::string path;
    HeidelbergOptions options;

    [[noreturn]] void fail(const std::string& what) const {
        throw ModelError("HDF5 file '" + path + "': " + what);
    }
    [[noreturn]] void fail(const std::string& dataset, const std::string& what) const {
        fail("dataset '" + dataset + "': " + what);
    }
    [[noreturn]] void failExample(const std::string& dataset, hsize_t i,
                                  const std::string& what) const {
        fail(dataset, "example " + std::to_string(i) + ": " + what);
    }

    // Opens a one-dimensional dataset and checks its type class (and, for variable-length
    // arrays, the element's class).
    Dataset open(hid_t file, const std::string& name, H5T_class_t cls, H5T_class_t element,
                 const char* expected) const {
        // H5Lexists must be asked about every link on the path, parent first.
        for (size_t slash = name.find('/');; slash = name.find('/', slash + 1)) {
            const std::string part = name.substr(0, slash);
            if (H5Lexists(file, part.c_str(), H5P_DEFAULT) <= 0) fail(name, "missing");
            if (slash == std::string::npos) break;
        }
        Handle dataset(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
        if (!dataset.valid()) fail(name, "not a dataset");
        const Handle type(H5Dget_type(dataset.get()), H5Tclose);
        bool ok = type.valid() && H5Tget_class(type.get()) == cls;
        if (ok && cls == H5T_VLEN) {
            const Handle super(H5Tget_super(type.get()), H5Tclose);
            ok = super.valid() && H5Tget_class(super.get()) == element;
        }
        if (!ok) fail(name, std::string("wrong type (expected ") + expected + ")");
        const Handle space(H5Dget_space(dataset.get()), H5Sclose);
        if (!space.valid() || H5Sget_simple_extent_ndims(space.get()) != 1) {
            fail(name, "must be one-dimensional");
        }
        hsize_t length = 0;
        H5Sget_simple_extent_dims(space.get(), &length, nullptr);
        return Dataset{std::move(dataset), length};
    }

    // Reads elements [first, first + count) of a one-dimensional dataset as `memType`.
    void read(hid_t dataset, const std::string& name, hid_t memType, hsize_t first, hsize_t count,
              void* buffer) const {
        const Handle fileSpace(H5Dget_space(dataset), H5Sclose);
        const Handle memSpace(H5Screate_simple(1, &count, nullptr), H5Sclose);
        if (H5Sselect_hyperslab(fileSpace.get(), H5S_SELECT_SET, &first, nullptr, &count, nullptr) <
                0 ||
            H5Dread(dataset, memType, memSpace.get(), fileSpace.get(), H5P_DEFAULT, buffer) < 0) {
            fail(name, "cannot read examples " + std::to_string(first) + " to " +
                           std::to_string(first + count - 1) +
                           " (corrupt file or values that "
                           "do not convert)");
        }
    }

    // The length of the optional `extra/keys` (one class name per class); none when absent.
    std::optional<hsize_t> readKeys(hid_t file) const {
        if (H5Lexists(file, "extra", H5P_DEFAULT) <= 0 ||
            H5Lexists(file, "extra/keys", H5P_DEFAULT) <= 0)
            return std::nullopt;
        const Handle keys(H5Dopen2(file, "extra/keys", H5P_DEFAULT), H5Dclose);
        if (!keys.valid()) fail("extra/keys", "not a dataset");
        const Handle space(H5Dget_space(keys.get()), H5Sclose);
        if (!space.valid() || H5Sget_simple_extent_ndims(space.get()) != 1)
            fail("extra/keys", "must be one-dimensional (one class name per class)");
        hsize_t length = 0;
        H5Sget_simple_extent_dims(space.get(), &length, nullptr);
        if (length == 0) fail("extra/keys", "is empty (the file names no classes)");
        if (length > UINT32_MAX) fail("extra/keys", "more than 2^32 - 1 class names");
        return length;
    }

    // What the class count is, for error messages.
    std::string classesOrigin(ClassCountSource from, uint32_t numClasses) const {
        switch (from) {
        case ClassCountSource::Options:
            return options.numClassesFrom.empty() ? "numClasses is " + std::to_string(numClasses)
                                                  : options.numClassesFrom;
        case ClassCountSource::Keys:
            return std::to_string(numClasses) + " classes: the length of extra/keys";
        case ClassCountSource::Labels:
            return "the largest label + 1";
        }
        return "";
    }

    // Labels; each must be below numClasses when that is given (> 0).
    std::vector<uint32_t> readLabels(hid_t labels, hsize_t n, uint32_t numClasses,
                                     ClassCountSource from) const {
        std::vector<int64_t> raw(n);
        if (n > 0) read(labels, "labels", H5T_NATIVE_INT64, 0, n, raw.data());
        for (hsize_t i = 0; i < n; i++) {
            if (raw[i] < 0 || (numClasses > 0 && raw[i] >= static_cast<int64_t>(numClasses))) {
                failExample("labels", i,
                            "label " + std::to_string(raw[i]) + " is out of range [0, " +
                                std::to_string(numClasses) + ") (" +
                                classesOrigin(from, numClasses) + ")");
            }
            if (raw[i] >= int64_t{UINT32_MAX}) failExample("labels", i, "label too large");
        }
        return std::vector<uint32_t>(raw.begin(), raw.end());
    }

    // Checks one example's events and appends the kept ones (times in [ms]).
    void addExample(hsize_t i, const hvl_t& t, const hvl_t& u, std::vector<float>& times,
                    std::vector<uint32_t>& channels, uint64_t& dropped) const {
        if (t.len != u.len) {
            failExample("spikes/times", i,
                        std::to_string(t.len) + " times but spikes/units has " +
                            std::to_string(u.len) + " units");
        }
        if (t.len > UINT32_MAX) failExample("spikes/times", i, "more than 2^32 - 1 spikes");
        const auto* seconds = static_cast<const double*>(t.p);
        const auto* units = static_cast<const int64_t*>(u.p);
        for (size_t k = 0; k < t.len; k++) {
            if (!std::isfinite(seconds[k]) || seconds[k] < 0.0) {
                failExample("spikes/times", i,
                            "spike " + std::to_string(k) + " has time " +
                                std::to_string(seconds[k]) +
                                " s (must be finite and non-negative)");
            }
            if (k > 0 && seconds[k] < seconds[k - 1]) {
                failExample("spikes/times", i,
                            "times are not sorted (spike " + std::to_string(k) + " at " +
                                std::to_string(seconds[k]) + " s follows " +
                                std::to_string(seconds[k - 1]) + " s)");
            }
            if (units[k] < 0 || units[k] >= static_cast<int64_t>(options.numChannels)) {
                failExample("spikes/units", i,
                            "spike " + std::to_string(k) + " has channel " +
                                std::to_string(units[k]) + ", not in [0, " +
                                std::to_string(options.numChannels) + ")");
            }
            const auto ms = static_cast<float>(seconds[k] * 1000.0); // [s] -> [ms]
            if (options.duration > 0.0 && ms > static_cast<float>(options.duration)) {
                dropped++;
                continue;
            }
            times.push_back(ms);
            channels.push_back(static_cast<uint32_t>(units[k]));
        }
    }

    HeidelbergFile run() const {
        if (options.numChannels == 0) fail("numChannels must be at least 1");
        if (!std::isfinite(options.duration) || options.duration < 0.0) {
            fail("duration must be finite and non-negative");
        }
        std::error_code ec;
        if (!std::filesystem::is_regular_file(path, ec))
            fail("no such file (or not a regular file)");
        const QuietErrors quiet;
        if (H5Fis_hdf5(path.c_str()) <= 0) fail("not an HDF5 file");
        const Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
        if (!file.valid()) fail("cannot be opened as HDF5");
        const Dataset times =
            open(file.get(), "spikes/times", H5T_VLEN, H5T_FLOAT, "variable-length floats");
        const Dataset units =
            open(file.get(), "spikes/units", H5T_VLEN, H5T_INTEGER, "variable-length integers");
        const Dataset labels = open(file.get(), "labels", H5T_INTEGER, H5T_INTEGER, "integers");
        if (times.length != units.length || times.length != labels.length) {
            fail("spikes/times, spikes/units and labels have " + std::to_string(times.length) +
                 ", " + std::to_string(units.length) + " and " + std::to_string(labels.length) +
                 " examples (must be equal)");
        }
        // The class count (dataset.hpp): the options', else extra/keys', else the labels'.
        const std::optional<hsize_t> keys = readKeys(file.get());
        uint32_t numClasses = options.numClasses;
        ClassCountSource from = ClassCountSource::Options;
        if (numClasses > 0 && keys && *keys != numClasses) {
            fail("extra/keys", "names " + std::to_string(*keys) + " classes but " +
                                   classesOrigin(from, numClasses));
        }
        if (numClasses == 0 && keys) {
            numClasses = static_cast<uint32_t>(*keys);
            from = ClassCountSource::Keys;
        } else if (numClasses == 0) {
            from = ClassCountSource::Labels;
        }
        const hsize_t n = options.maxExamples > 0
                              ? std::min<hsize_t>(times.length, options.maxExamples)
                              : times.length;
        return readAll(times.handle.get(), units.handle.get(),
                       readLabels(labels.handle.get(), n, numClasses, from), numClasses, from);
    }

    HeidelbergFile readAll(hid_t timesId, hid_t unitsId, std::vector<uint32_t> labels,
                           uint32_t numClasses, ClassCountSource from) const {
        const auto n = static_cast<hsize_t>(labels.size());
        if (numClasses == 0) {
            numClasses = 1 + (labels.empty() ? 0 : *std::max_element(labels.begin(), labels.end()));
        }
        const Handle timeType(H5Tvlen_create(H5T_NATIVE_DOUBLE), H5Tclose);
        const Handle unitType(H5Tvlen_create(H5T_NATIVE_INT64), H5Tclose);
        std::vector<float> times;
        std::vector<uint32_t> channels;
        std::vector<uint64_t> offsets;
        std::vector<uint32_t> counts;
        uint64_t dropped = 0;
        for (hsize_t first = 0; first < n; first += chunkExamples) {
            const hsize_t count = std::min(chunkExamples, n - first);
            VlenBuffer t(timeType.get(), count), u(unitType.get(), count);
            read(timesId, "spikes/times", timeType.get(), first, count, t.data());
            read(unitsId, "spikes/units", unitType.get(), first, count, u.data());
            for (hsize_t k = 0; k < count; k++) {
                offsets.push_back(times.size());
                addExample(first + k, t[k], u[k], times, channels, dropped);
                counts.push_back(static_cast<uint32_t>(times.size() - offsets.back()));
            }
        }
        double duration = options.duration; // [ms]
        if (duration == 0.0) {
            for (const float time : times)
                duration = std::max(duration, double(time));
        }
        const uint64_t inFile = times.size() + dropped;
        HeidelbergFile result{EventDataset(std::move(times), std::move(channels),
                                           std::move(offsets), std::move(counts), std::move(labels),
                                           options.numChannels, numClasses, duration),
                              from,
                              inFile,
                              dropped,
                              {}};
        const std::string source = "HDF5 file '" + path + "'";
        if (2 * dropped > inFile) {
            char share[32];
            std::snprintf(share, sizeof share, "%.1f%%", 100.0 * double(dropped) / double(inFile));
            char ms[32];
            std::snprintf(ms, sizeof ms, "%g", options.duration);
            result.warnings.push_back(
                source + ": " + std::to_string(dropped) + " of " + std::to_string(inFile) +
                " events (" + share + ") in spikes/times are later than the duration " + ms +
                " ms and were dropped; were the times written in milliseconds instead of "
                "seconds?");
        }
        for (std::string& w : emptyClassWarnings(result.data, source))
            result.warnings.push_back(std::move(w));
        return result;
    }
};

} // namespace

bool haveHdf5() {
    return true;
}

HeidelbergFile readHeidelbergHdf5File(const std::string& path, const HeidelbergOptions& options) {
    return Reader{path, options}.run();
}

EventDataset readHeidelbergHdf5(const std::string& path, const HeidelbergOptions& options) {
    return Reader{path, options}.run().data;
}

#endif

} // namespace spikeforge::train
