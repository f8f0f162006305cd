// Simulation: build, step, run, state as numpy arrays. A view is a numpy array over the host
// mirror (no copy) whose owner is the Python Simulation object, so the simulation lives as long
// as any view of it; push sends what was written through a view to the device. Long calls
// (building, running) release the GIL.
#include "bindings.hpp"
#include "convert.hpp"

#include "spikeforge/errors.hpp"
#include "spikeforge/simulation.hpp"

#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>

namespace spikeforge::python {

namespace {

using Array = nb::ndarray<nb::numpy>;

// A view over the host mirror: [batch, element] where the variable has one copy per batch
// element (Simulation::batchCopies, from its declaration), [element] otherwise. `dtype` is T's
// except for bool variables, stored as one byte of 0 or 1 and viewed as numpy's bool.
template <typename T>
Array viewOf(Simulation& sim, nb::handle owner, const std::string& group, const std::string& var,
             nb::dlpack::dtype dtype = nb::dtype<T>()) {
    const std::span<T> s = sim.view<T>(group, var);
    const size_t b = sim.batchCopies(group, var);
    if (b > 1) {
        const size_t shape[2] = {b, s.size() / b};
        return Array(s.data(), 2, shape, owner, nullptr, dtype);
    }
    const size_t shape[1] = {s.size()};
    return Array(s.data(), 1, shape, owner, nullptr, dtype);
}

// The numpy view of a variable, typed as the device array is.
Array view(nb::handle self, const std::string& group, const std::string& var) {
    Simulation& sim = nb::cast<Simulation&>(self);
    const std::string type = sim.elementType(group, var);
    if (type == "float") return viewOf<float>(sim, self, group, var);
    if (type == "double") return viewOf<double>(sim, self, group, var);
    if (type == "int32_t") return viewOf<int32_t>(sim, self, group, var);
    if (type == "uint32_t") return viewOf<uint32_t>(sim, self, group, var);
    if (type == "int16_t") return viewOf<int16_t>(sim, self, group, var);
    if (type == "uint16_t") return viewOf<uint16_t>(sim, self, group, var);
    if (type == "int8_t") return viewOf<int8_t>(sim, self, group, var);
    if (type == "uint8_t") return viewOf<uint8_t>(sim, self, group, var);
    if (type == "int64_t") return viewOf<int64_t>(sim, self, group, var);
    if (type == "uint64_t") return viewOf<uint64_t>(sim, self, group, var);
    if (type == "bool") return viewOf<uint8_t>(sim, self, group, var, nb::dtype<bool>());
    throw InternalError("no numpy type for element type " + type);
}

// The synapses of a group as (pre, post) arrays.
nb::tuple synapses(Simulation& sim, const std::string& group) {
    const auto pairs = sim.synapses(group);
    std::vector<uint32_t> pre, post;
    for (const auto& p : pairs) {
        pre.push_back(p.pre);
        post.push_back(p.post);
    }
    const size_t n = pairs.size();
    return nb::make_tuple(copyOf(std::move(pre), {n}), copyOf(std::move(post), {n}));
}

} // namespace

void bindSchedule(nb::module_& m) {
    nb::class_<Schedule>(m, "Schedule")
        .def(nb::init<>())
        .def("steps", &Schedule::steps, nb::arg("n"), nb::rv_policy::reference_internal,
             "Appends n steps; returns the schedule (calls chain).")
        .def("custom_update", &Schedule::customUpdate, nb::arg("update_group"),
             nb::rv_policy::reference_internal)
        .def("reset_state", &Schedule::resetState, nb::arg("state") = std::vector<std::string>{},
             nb::rv_policy::reference_internal)
        .def("__len__", [](const Schedule& s) { return s.items().size(); });
}

void bindSimulation(nb::module_& m) {
    bindSchedule(m);
    nb::class_<Simulation>(m, "Simulation")
        .def(
            "__init__",
            [](Simulation* self, Model& model, const std::string& backend, int threads,
               const std::string& cacheDir, bool fastMath, const std::string& device,
               bool keepInitialState, bool kernelTiming) {
                BackendPreferences p =
                    preferences(backend, threads, cacheDir, fastMath, device, keepInitialState);
                p.kernelTiming = kernelTiming;
                nb::gil_scoped_release release;
                new (self) Simulation(model, p);
            },
            nb::arg("model"), nb::arg("backend") = "cpu", nb::arg("threads") = 0,
            nb::arg("cache_dir") = "", nb::arg("fast_math") = false, nb::arg("device") = "",
            nb::arg("keep_initial_state") = false, nb::arg("kernel_timing") = false,
            nb::keep_alive<1, 2>())
        .def(
            "kernel_times",
            [](const Simulation& s) {
                nb::dict out;
                for (const KernelTime& k : s.kernelTimes())
                    out[nb::str(k.name.c_str())] = nb::make_tuple(k.seconds, k.launches);
                return out;
            },
            "Seconds and launches of every kernel, {name: (seconds, launches)} (needs "
            "kernel_timing=True).")
        .def("step", &Simulation::step, nb::call_guard<nb::gil_scoped_release>())
        .def(
            "run", [](Simulation& s, uint64_t steps) { s.run(steps); }, nb::arg("steps"),
            nb::call_guard<nb::gil_scoped_release>())
        .def(
            "run",
            [](Simulation& s, const Schedule& schedule, uint64_t repeats) {
                s.run(schedule, repeats);
            },
            nb::arg("schedule"), nb::arg("repeats") = 1, nb::call_guard<nb::gil_scoped_release>(),
            "Runs a Schedule `repeats` times with no host work between its items.")
        .def_prop_ro("t", &Simulation::time)
        .def_prop_ro("timestep", &Simulation::timestep)
        .def_prop_ro("backend", &Simulation::backendName)
        .def("reset", &Simulation::reset, nb::call_guard<nb::gil_scoped_release>())
        .def("reset_state", &Simulation::resetState, nb::arg("state") = std::vector<std::string>{})
        .def("custom_update", &Simulation::customUpdate, nb::arg("update_group"))
        .def("check_errors", &Simulation::checkErrors)
        .def("pull", &Simulation::pull, nb::arg("group"), nb::arg("var"))
        .def("push", &Simulation::push, nb::arg("group"), nb::arg("var"))
        .def("view", &view, nb::arg("group"), nb::arg("var"),
             "The variable's host mirror as a numpy array, [batch, element] for batched "
             "variables; no copy (pull first to read the device, push after writing).")
        .def("synapses", &synapses, nb::arg("group"))
        .def("synapse_count", &Simulation::synapseCount, nb::arg("group"))
        .def(
            "synapse_values",
            [](Simulation& s, const std::string& g, const std::string& v, unsigned batch) {
                std::vector<double> values = s.synapseValues(g, v, batch);
                const size_t n = values.size();
                return copyOf(std::move(values), {n});
            },
            nb::arg("group"), nb::arg("var"), nb::arg("batch") = 0)
        .def(
            "set_synapse_values",
            [](Simulation& s, const std::string& g, const std::string& v,
               nb::ndarray<const double, nb::c_contig, nb::device::cpu> values,
               unsigned batch) { s.setSynapseValues(g, v, valuesOf(values), batch); },
            nb::arg("group"), nb::arg("var"), nb::arg("values"), nb::arg("batch") = 0)
        .def(
            "synapse_matrix",
            [](Simulation& s, const std::string& g, const std::string& v, unsigned batch,
               double absent) {
                const auto& sg = s.model().synapseGroup(g);
                std::vector<double> values = s.synapseMatrix(g, v, batch, absent);
                return copyOf(std::move(values), {sg.source().size(), sg.target().size()});
            },
            nb::arg("group"), nb::arg("var"), nb::arg("batch") = 0, nb::arg("absent") = 0.0)
        .def(
            "set_synapse_matrix",
            [](Simulation& s, const std::string& g, const std::string& v,
               nb::ndarray<const double, nb::c_contig, nb::device::cpu> matrix,
               unsigned batch) { s.setSynapseMatrix(g, v, valuesOf(matrix), batch); },
            nb::arg("group"), nb::arg("var"), nb::arg("matrix"), nb::arg("batch") = 0)
        .def("set_dynamic_param", &Simulation::setDynamicParam, nb::arg("group"), nb::arg("param"),
             nb::arg("value"))
        .def(
            "set_egp",
            [](Simulation& s, const std::string& g, const std::string& egp,
               nb::ndarray<const double, nb::c_contig, nb::device::cpu> values) {
                const std::vector<double> v = valuesOf(values);
                s.setEGP(g, egp, std::span<const double>(v));
            },
            nb::arg("group"), nb::arg("egp"), nb::arg("values"))
        .def("current_spikes", &Simulation::currentSpikes, nb::arg("group"))
        .def("set_recording_window", &Simulation::setRecordingWindow, nb::arg("steps"))
        .def("pull_recording", &Simulation::pullRecording)
        .def(
            "spikes",
            [](Simulation& s, const std::string& group) { return spikeArrays(s.spikes(group)); },
            nb::arg("group"),
            "Recorded spikes as (times [ms], neuron ids, batch elements) numpy arrays.")
        .def(
            "spike_events",
            [](Simulation& s, const std::string& group, bool pre) {
                return spikeArrays(s.spikeEvents(group, pre));
            },
            nb::arg("synapse_group"), nb::arg("pre") = true,
            "Recorded spike-like events of a synapse group's presynaptic (pre=False: "
            "postsynaptic) neurons as (times [ms], neuron ids, batch elements) numpy arrays.")
        .def("current_spike_events", &Simulation::currentSpikeEvents, nb::arg("synapse_group"),
             nb::arg("pre") = true)
        .def("prune_blocks", &Simulation::pruneBlocks, nb::arg("group"), nb::arg("count"))
        .def_prop_ro("cache_hit", [](const Simulation& s) { return s.buildInfo().cacheHit; });
    m.def("available_backends", [] {
        std::vector<std::pair<std::string, bool>> out;
        for (const auto& b : availableBackends())
            out.push_back({b.name, b.usable});
        return out;
    });
}

} // namespace spikeforge::python
