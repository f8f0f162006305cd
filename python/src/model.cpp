// Model and its populations with PyGeNN's method names: add_neuron_population,
// add_synapse_population, add_current_source. A population is owned by its model (the Python
// object returned keeps the model alive); sources and targets are given as names or populations.
#include "bindings.hpp"
#include "convert.hpp"

#include "spikeforge/errors.hpp"
#include "spikeforge/model.hpp"

#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace spikeforge::python {

namespace {

// A population given by name or as the NeuronGroup object.
std::string populationName(nb::handle population) {
    if (nb::isinstance<NeuronGroup>(population))
        return nb::cast<const NeuronGroup&>(population).name();
    return nb::cast<std::string>(population);
}

SynapseGroup& addSynapsePopulation(Model& m, const std::string& name, const std::string& matrixType,
                                   nb::handle source, nb::handle target, const WeightUpdateInit& wu,
                                   const PostsynapticInit& ps, nb::handle connectivity,
                                   unsigned delaySteps) {
    const MatrixType type = matrixTypeOf(matrixType);
    const std::string pre = populationName(source), post = populationName(target);
    if (nb::isinstance<BlockSparseInit>(connectivity))
        return m.addSynapseGroup(name, type, delaySteps, pre, post, wu, ps,
                                 nb::cast<const BlockSparseInit&>(connectivity));
    if (nb::isinstance<ToeplitzConnectivityInit>(connectivity))
        return m.addSynapseGroup(name, type, delaySteps, pre, post, wu, ps,
                                 nb::cast<const ToeplitzConnectivityInit&>(connectivity));
    if (nb::isinstance<SparseConnectivityInit>(connectivity))
        return m.addSynapseGroup(name, type, delaySteps, pre, post, wu, ps,
                                 nb::cast<const SparseConnectivityInit&>(connectivity));
    if (!connectivity.is_none())
        throw ModelError("synapse population '" + name +
                         "': connectivity must be init_sparse_connectivity(...), "
                         "init_toeplitz_connectivity(...), block_sparse(...) or None");
    return m.addSynapseGroup(name, type, delaySteps, pre, post, wu, ps);
}

std::vector<std::string> namesOf(const std::vector<VarDecl>& vars) {
    std::vector<std::string> out;
    for (const auto& v : vars)
        out.push_back(v.name);
    return out;
}

std::vector<std::string> namesOf(const std::vector<EGPDecl>& egps) {
    std::vector<std::string> out;
    for (const auto& e : egps)
        out.push_back(e.name);
    return out;
}

void bindPopulations(nb::module_& m) {
    nb::class_<NeuronGroup>(m, "NeuronGroup")
        .def_prop_ro("name", &NeuronGroup::name)
        .def_prop_ro("num_neurons", &NeuronGroup::size)
        .def_prop_ro("var_names", [](const NeuronGroup& g) { return namesOf(g.model().vars); })
        .def_prop_ro("egp_names", [](const NeuronGroup& g) { return namesOf(g.model().egps); })
        .def_prop_rw("spike_recording_enabled", &NeuronGroup::spikeRecording,
                     &NeuronGroup::setSpikeRecording)
        .def("set_param_dynamic", &NeuronGroup::setParamDynamic, nb::arg("param"),
             nb::arg("dynamic") = true)
        .def("__repr__", [](const NeuronGroup& g) { return "<NeuronGroup '" + g.name() + "'>"; });
    nb::class_<SynapseGroup>(m, "SynapseGroup")
        .def_prop_ro("name", &SynapseGroup::name)
        .def_prop_ro("wu_var_names",
                     [](const SynapseGroup& g) { return namesOf(g.wu().model.vars); })
        .def_prop_ro("wu_pre_var_names",
                     [](const SynapseGroup& g) { return namesOf(g.wu().model.preVars); })
        .def_prop_ro("wu_post_var_names",
                     [](const SynapseGroup& g) { return namesOf(g.wu().model.postVars); })
        .def_prop_ro("ps_var_names",
                     [](const SynapseGroup& g) { return namesOf(g.ps().model.vars); })
        .def_prop_ro("wu_egp_names",
                     [](const SynapseGroup& g) { return namesOf(g.wu().model.egps); })
        .def_prop_ro("ps_egp_names",
                     [](const SynapseGroup& g) { return namesOf(g.ps().model.egps); })
        .def_prop_ro(
            "matrix_type",
            [](const SynapseGroup& g) { return std::string(matrixTypeName(g.matrixType())); })
        .def_prop_rw("max_connections", &SynapseGroup::maxConnections,
                     &SynapseGroup::setMaxConnections)
        .def_prop_rw("max_dendritic_delay_steps", &SynapseGroup::maxDendriticDelaySteps,
                     &SynapseGroup::setMaxDendriticDelaySteps)
        .def_prop_rw("back_prop_delay_steps", &SynapseGroup::backPropDelaySteps,
                     &SynapseGroup::setBackPropDelaySteps)
        .def_prop_rw("pre_event_recording_enabled", &SynapseGroup::preEventRecording,
                     &SynapseGroup::setPreEventRecording)
        .def_prop_rw("post_event_recording_enabled", &SynapseGroup::postEventRecording,
                     &SynapseGroup::setPostEventRecording)
        .def("set_wu_param_dynamic", &SynapseGroup::setWUParamDynamic, nb::arg("param"),
             nb::arg("dynamic") = true)
        .def("set_ps_param_dynamic", &SynapseGroup::setPSParamDynamic, nb::arg("param"),
             nb::arg("dynamic") = true)
        .def("__repr__", [](const SynapseGroup& g) { return "<SynapseGroup '" + g.name() + "'>"; });
    nb::class_<CurrentSource>(m, "CurrentSource")
        .def_prop_ro("name", &CurrentSource::name)
        .def_prop_ro("var_names",
                     [](const CurrentSource& c) { return namesOf(c.bound().model.vars); })
        .def_prop_ro("egp_names",
                     [](const CurrentSource& c) { return namesOf(c.bound().model.egps); })
        .def("set_param_dynamic", &CurrentSource::setParamDynamic, nb::arg("param"),
             nb::arg("dynamic") = true)
        .def("__repr__",
             [](const CurrentSource& c) { return "<CurrentSource '" + c.name() + "'>"; });
}

} // namespace

void bindModel(nb::module_& m) {
    bindPopulations(m);
    nb::class_<Model> model(m, "Model");
    model
        .def(
            "__init__",
            [](Model* self, const std::string& name, const std::string& precision, double dt,
               unsigned batchSize, uint64_t seed) {
                new (self) Model(name);
                self->setPrecision(precisionOf(precision));
                self->setDT(dt);
                self->setBatchSize(batchSize);
                self->setSeed(seed);
            },
            nb::arg("name") = "model", nb::arg("precision") = "float", nb::arg("dt") = 0.1,
            nb::arg("batch_size") = 1, nb::arg("seed") = 1234)
        .def_prop_ro("name", &Model::name)
        .def_prop_rw("dt", &Model::dt, &Model::setDT)
        .def_prop_rw("batch_size", &Model::batchSize, &Model::setBatchSize)
        .def_prop_rw("seed", &Model::seed, &Model::setSeed)
        .def_prop_rw(
            "precision", [](const Model& m) { return std::string(toString(m.precision())); },
            [](Model& m, const std::string& p) { m.setPrecision(precisionOf(p)); })
        .def(
            "add_neuron_population",
            [](Model& m, const std::string& name, unsigned size, nb::handle model,
               const ParamValues& params, const VarInitMap& vars) -> NeuronGroup& {
                return m.addNeuronGroup(name, size, neuronModelOf(model), params, vars);
            },
            nb::arg("name"), nb::arg("num_neurons"), nb::arg("model"),
            nb::arg("params") = ParamValues{}, nb::arg("vars") = VarInitMap{},
            nb::rv_policy::reference_internal)
        .def("add_synapse_population", &addSynapsePopulation, nb::arg("name"),
             nb::arg("matrix_type"), nb::arg("source"), nb::arg("target"), nb::arg("weight_update"),
             nb::arg("postsynaptic"), nb::arg("connectivity") = nb::none(),
             nb::arg("delay_steps") = 0, nb::rv_policy::reference_internal)
        .def(
            "add_current_source",
            [](Model& m, const std::string& name, nb::handle model, nb::handle target,
               const ParamValues& params, const VarInitMap& vars) -> CurrentSource& {
                return m.addCurrentSource(name, currentSourceModelOf(model), populationName(target),
                                          params, vars);
            },
            nb::arg("name"), nb::arg("model"), nb::arg("target"), nb::arg("params") = ParamValues{},
            nb::arg("vars") = VarInitMap{}, nb::rv_policy::reference_internal)
        .def(
            "neuron_population",
            [](Model& m, const std::string& name) -> NeuronGroup& { return m.neuronGroup(name); },
            nb::rv_policy::reference_internal)
        .def(
            "synapse_population",
            [](Model& m, const std::string& name) -> SynapseGroup& { return m.synapseGroup(name); },
            nb::rv_policy::reference_internal)
        .def("finalise", &Model::finalise);
    bindAddCustomUpdate(model);
}

} // namespace spikeforge::python
