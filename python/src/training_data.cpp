// Training data from Python (spikeforge.ml builds on these): the compact event array
// (EventDataset) from numpy arrays, and the built-in sources — the Yin-Yang generator, the
// Heidelberg (SHD/SSC) reader and synthetic SHD-shaped data. Every array is copied once into
// the dataset; the compilers upload it to the device once.
#include "bindings.hpp"
#include "convert.hpp"

#include "spikeforge/errors.hpp"
#include "spikeforge/train/dataset.hpp"

#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <string>
#include <vector>

namespace spikeforge::python {

namespace {

using namespace spikeforge::train;

template <typename T> using In = nb::ndarray<const T, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

template <typename T> std::vector<T> vectorOf(In<T> a) {
    return std::vector<T>(a.data(), a.data() + a.shape(0));
}

template <typename T> nb::ndarray<nb::numpy, T> arrayOf(std::span<const T> s) {
    return copyOf(std::vector<T>(s.begin(), s.end()), {s.size()});
}

EventDataset datasetOf(In<float> times, In<uint32_t> channels, In<uint64_t> offsets,
                       In<uint32_t> counts, In<uint32_t> labels, uint32_t numChannels,
                       uint32_t numClasses, double duration) {
    return EventDataset(vectorOf(times), vectorOf(channels), vectorOf(offsets), vectorOf(counts),
                        vectorOf(labels), numChannels, numClasses, duration);
}

void bindEventDataset(nb::module_& m) {
    nb::class_<EventDataset>(m, "EventDataset",
                             "Examples as one flat list of (time [ms], channel) events with a "
                             "label each; validated on construction (ModelError naming the "
                             "first bad example).")
        .def(nb::new_(&datasetOf), nb::arg("times"), nb::arg("channels"), nb::arg("offsets"),
             nb::arg("counts"), nb::arg("labels"), nb::arg("num_channels"), nb::arg("num_classes"),
             nb::arg("duration"))
        .def("__len__", &EventDataset::size)
        .def_prop_ro("num_events", &EventDataset::numEvents)
        .def_prop_ro("num_channels", &EventDataset::numChannels)
        .def_prop_ro("num_classes", &EventDataset::numClasses)
        .def_prop_ro("duration", &EventDataset::duration)
        .def_prop_ro(
            "times", [](const EventDataset& d) { return arrayOf(d.times()); }, nb::rv_policy::move)
        .def_prop_ro(
            "channels", [](const EventDataset& d) { return arrayOf(d.channels()); },
            nb::rv_policy::move)
        .def_prop_ro(
            "offsets", [](const EventDataset& d) { return arrayOf(d.offsets()); },
            nb::rv_policy::move)
        .def_prop_ro(
            "counts", [](const EventDataset& d) { return arrayOf(d.counts()); },
            nb::rv_policy::move)
        .def_prop_ro(
            "labels", [](const EventDataset& d) { return arrayOf(d.labels()); },
            nb::rv_policy::move)
        .def(
            "example",
            [](const EventDataset& d, size_t i) {
                return nb::make_tuple(arrayOf(d.times(i)), arrayOf(d.channels(i)), d.label(i));
            },
            nb::arg("index"), "One example as (times [ms], channels, label).")
        .def(
            "subset",
            [](const EventDataset& d, const std::vector<size_t>& indices) {
                return d.subset(indices);
            },
            nb::arg("indices"))
        .def("class_counts", &EventDataset::classCounts);
}

void bindSources(nb::module_& m) {
    m.def(
        "make_yin_yang",
        [](size_t size, uint64_t seed, double tMin, double tMax, bool bias, double tBias,
           double duration) {
            return makeYinYang(size, seed, YinYangOptions{tMin, tMax, bias, tBias, duration});
        },
        nb::arg("size"), nb::arg("seed"), nb::arg("t_min") = 0.0, nb::arg("t_max") = 30.0,
        nb::arg("bias") = true, nb::arg("t_bias") = 0.0, nb::arg("duration") = 60.0,
        "The Yin-Yang set (Kriener et al. 2021) as latency-coded events, as `spikeforge train` "
        "makes it (docs/training.md).");
    m.def(
        "read_heidelberg",
        [](const std::string& path, uint32_t numChannels, uint32_t numClasses, size_t maxExamples,
           double duration) {
            HeidelbergOptions o;
            o.numChannels = numChannels;
            o.numClasses = numClasses;
            o.maxExamples = maxExamples;
            o.duration = duration;
            HeidelbergFile f = [&] {
                nb::gil_scoped_release release;
                return readHeidelbergHdf5File(path, o);
            }();
            return nb::make_tuple(std::move(f.data), f.warnings);
        },
        nb::arg("path"), nb::arg("num_channels") = 700, nb::arg("num_classes") = 0,
        nb::arg("max_examples") = 0, nb::arg("duration") = 0.0,
        "An SHD/SSC HDF5 file as (EventDataset, warnings); times become [ms].");
    m.def(
        "make_synthetic_shd",
        [](size_t size, uint64_t seed, uint32_t numChannels, uint32_t numClasses, double duration,
           double meanSpikes) {
            SyntheticShdOptions o;
            o.numChannels = numChannels;
            o.numClasses = numClasses;
            o.duration = duration;
            o.meanSpikes = meanSpikes;
            return makeSyntheticShd(size, seed, o);
        },
        nb::arg("size"), nb::arg("seed"), nb::arg("num_channels") = 700,
        nb::arg("num_classes") = 20, nb::arg("duration") = 1000.0, nb::arg("mean_spikes") = 5000.0);
    m.def("split_train_validation", &splitTrainValidation, nb::arg("data"),
          nb::arg("validation_size"), nb::arg("seed"));
    m.def("blend_same_class", &blendSameClass, nb::arg("data"), nb::arg("seed"),
          nb::arg("keep") = 0.5);
    m.def("shuffled_indices", &shuffledIndices, nb::arg("n"), nb::arg("seed"));
    m.def("have_hdf5", &haveHdf5);
}

} // namespace

void bindTrainingData(nb::module_& m) {
    bindEventDataset(m);
    bindSources(m);
}

} // namespace spikeforge::python
