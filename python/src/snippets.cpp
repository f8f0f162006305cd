// Models and initialisers: the built-ins by name and user models from Python strings, as
// PyGeNN's create_neuron_model / init_var / init_sparse_connectivity. Code strings are checked
// by the same snippet front end as in C++ when the model is finalised (a ModelError naming the
// group, field, line and column).
#include "bindings.hpp"
#include "convert.hpp"

#include "spikeforge/errors.hpp"
#include "spikeforge/models.hpp"

#include <nanobind/stl/function.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <memory>

namespace spikeforge::python {

namespace {

[[noreturn]] void unknownName(const std::string& kind, const std::string& name,
                              const std::vector<std::string>& names) {
    std::string list;
    for (const auto& n : names)
        list += (list.empty() ? "" : ", ") + n;
    throw ModelError("unknown " + kind + " '" + name + "' (built-in: " + list + ")");
}

// "Uniform" → its snippet, or a ModelError listing the known names.
template <typename T>
const T& builtIn(const T* found, const std::string& kind, const std::string& name,
                 const std::vector<std::string>& names) {
    if (!found) unknownName(kind, name, names);
    return *found;
}

} // namespace

void fillBase(SnippetBase& s, const std::string& name, const std::vector<std::string>& params,
              nb::handle derived, nb::handle egps) {
    s.name = name;
    s.params = params;
    for (nb::handle item : derived) {
        auto [dname, func] =
            nb::cast<std::pair<std::string, std::function<double(const ParamValues&, double)>>>(
                item);
        s.derivedParams.push_back({dname, func});
    }
    s.egps = egpDecls(egps);
}

std::vector<EGPDecl> egpDecls(nb::handle list) {
    std::vector<EGPDecl> out;
    for (nb::handle item : list) {
        if (nb::isinstance<nb::str>(item)) {
            out.push_back({nb::cast<std::string>(item), "scalar"});
        } else {
            auto [ename, type] = nb::cast<std::pair<std::string, std::string>>(item);
            out.push_back({ename, type});
        }
    }
    return out;
}

namespace {

NeuronModel neuronModel(const std::string& name, const std::vector<std::string>& params,
                        nb::handle vars, const std::string& simCode,
                        const std::string& thresholdConditionCode, const std::string& resetCode,
                        nb::handle derived, nb::handle egps) {
    NeuronModel m;
    fillBase(m, name, params, derived, egps);
    m.vars = varDecls(vars, name);
    m.simCode = simCode;
    m.thresholdConditionCode = thresholdConditionCode;
    m.resetCode = resetCode;
    return m;
}

// A built-in's name, or a ModelError saying what else the argument may be.
std::string snippetName(nb::handle snippet, const std::string& function,
                        const std::string& creator) {
    if (!nb::isinstance<nb::str>(snippet))
        throw ModelError(function + ": the snippet must be a built-in's name or made by " +
                         creator + ", not " + nb::cast<std::string>(nb::repr(snippet)));
    return nb::cast<std::string>(snippet);
}

// Initialisers have no device arrays for extra global parameters (contexts.cpp): refused here,
// naming the snippet, rather than left to fail as unknown names in the code.
void refuseInitEGPs(const std::string& kind, const std::string& name, nb::handle egps) {
    if (nb::len(egps) != 0)
        throw ModelError(kind + " '" + name +
                         "': extra global parameters are not supported in initialisers; pass "
                         "the values as parameters, or set the variable's values from the host");
}

InitSnippet varInitSnippet(const std::string& name, const std::vector<std::string>& params,
                           const std::string& code, nb::handle derived, nb::handle egps) {
    refuseInitEGPs("variable initialiser", name, egps);
    InitSnippet s;
    fillBase(s, name, params, derived, nb::list());
    s.code = code;
    return s;
}

SparseInitSnippet sparseInitSnippet(const std::string& name, const std::vector<std::string>& params,
                                    const std::string& rowBuildCode, nb::handle derived,
                                    nb::handle calcMaxRowLength,
                                    const std::string& preCalcRowLengthCode, nb::handle egps) {
    refuseInitEGPs("connectivity initialiser", name, egps);
    SparseInitSnippet s;
    fillBase(s, name, params, derived, nb::list());
    s.rowBuildCode = rowBuildCode;
    s.preCalcRowLengthCode = preCalcRowLengthCode;
    if (!calcMaxRowLength.is_none()) {
        if (!PyCallable_Check(calcMaxRowLength.ptr()))
            throw ModelError(
                "connectivity initialiser '" + name +
                "': calc_max_row_len_func must be callable(num_pre, num_post, params)");
        // The bound the user's function gives, checked: a whole number from 0 to 2^32 - 1.
        // Copies of the snippet may be made and dropped where the GIL is released (building a
        // simulation): the reference is released holding it.
        std::shared_ptr<nb::object> func(new nb::object(nb::borrow(calcMaxRowLength)),
                                         [](nb::object* f) {
                                             nb::gil_scoped_acquire gil;
                                             delete f;
                                         });
        s.calcMaxRowLength = [func, name](unsigned numPre, unsigned numPost,
                                          const ParamValues& params) -> unsigned {
            nb::gil_scoped_acquire gil;
            nb::object r = (*func)(numPre, numPost, params);
            long long n = -1;
            if (!nb::isinstance<nb::int_>(r) || !nb::try_cast(r, n) || n < 0 ||
                n > static_cast<long long>(UINT32_MAX))
                throw ModelError("connectivity initialiser '" + name +
                                 "': calc_max_row_len_func returned " +
                                 nb::cast<std::string>(nb::repr(r)) +
                                 ", not a whole number from 0 to 4294967295");
            return static_cast<unsigned>(n);
        };
    }
    return s;
}

void bindModelTypes(nb::module_& m) {
    nb::class_<InitSnippet>(m, "VarInitSnippet")
        .def_ro("name", &InitSnippet::name)
        .def_ro("params", &InitSnippet::params)
        .def_ro("var_init_code", &InitSnippet::code)
        .def("__repr__", [](const InitSnippet& s) { return "<VarInitSnippet '" + s.name + "'>"; });
    nb::class_<SparseInitSnippet>(m, "SparseConnectInitSnippet")
        .def_ro("name", &SparseInitSnippet::name)
        .def_ro("params", &SparseInitSnippet::params)
        .def_ro("row_build_code", &SparseInitSnippet::rowBuildCode)
        .def("__repr__", [](const SparseInitSnippet& s) {
            return "<SparseConnectInitSnippet '" + s.name + "'>";
        });
    nb::class_<NeuronModel>(m, "NeuronModel")
        .def_ro("name", &NeuronModel::name)
        .def_ro("params", &NeuronModel::params)
        .def_ro("sim_code", &NeuronModel::simCode)
        .def_ro("threshold_condition_code", &NeuronModel::thresholdConditionCode)
        .def_ro("reset_code", &NeuronModel::resetCode)
        .def("__repr__", [](const NeuronModel& n) { return "<NeuronModel '" + n.name + "'>"; });
    nb::class_<WeightUpdateModel>(m, "WeightUpdateModel")
        .def_ro("name", &WeightUpdateModel::name)
        .def_ro("params", &WeightUpdateModel::params)
        .def("__repr__",
             [](const WeightUpdateModel& w) { return "<WeightUpdateModel '" + w.name + "'>"; });
    nb::class_<PostsynapticModel>(m, "PostsynapticModel")
        .def_ro("name", &PostsynapticModel::name)
        .def_ro("params", &PostsynapticModel::params)
        .def("__repr__",
             [](const PostsynapticModel& p) { return "<PostsynapticModel '" + p.name + "'>"; });
    nb::class_<CurrentSourceModel>(m, "CurrentSourceModel")
        .def_ro("name", &CurrentSourceModel::name)
        .def_ro("params", &CurrentSourceModel::params)
        .def("__repr__",
             [](const CurrentSourceModel& c) { return "<CurrentSourceModel '" + c.name + "'>"; });
}

void bindInitTypes(nb::module_& m) {
    nb::class_<VarInit>(m, "VarInit")
        .def(nb::init_implicit<double>())
        // A sequence of numbers (a list, a NumPy array): the values themselves (VarInit(values)).
        .def(nb::init_implicit<std::vector<double>>())
        .def_prop_ro("is_constant", &VarInit::isConstant)
        .def_prop_ro("has_values", &VarInit::hasValues)
        .def_prop_ro("constant", &VarInit::constant)
        .def_prop_ro("values", &VarInit::values)
        .def("__repr__", [](const VarInit& v) {
            if (v.hasValues()) return "<VarInit " + std::to_string(v.values().size()) + " values>";
            return v.isConstant() ? "<VarInit " + std::to_string(v.constant()) + ">"
                                  : "<VarInit '" + v.snippet().name + "'>";
        });
    nb::class_<SparseConnectivityInit>(m, "SparseConnectivityInit")
        .def_prop_ro("name", [](const SparseConnectivityInit& s) { return s.snippet.name; })
        .def_ro("params", &SparseConnectivityInit::params);
    nb::class_<ToeplitzConnectivityInit>(m, "ToeplitzConnectivityInit")
        .def_ro("params", &ToeplitzConnectivityInit::params);
    nb::class_<BlockSparseInit>(m, "BlockSparseInit")
        .def_ro("block_size", &BlockSparseInit::blockSize)
        .def_ro("density", &BlockSparseInit::density)
        .def_ro("expected_rate", &BlockSparseInit::expectedRate);
    nb::class_<WeightUpdateInit>(m, "WeightUpdateInit")
        .def_prop_ro("model", [](const WeightUpdateInit& w) { return w.model; })
        .def_ro("params", &WeightUpdateInit::params);
    nb::class_<PostsynapticInit>(m, "PostsynapticInit")
        .def_prop_ro("model", [](const PostsynapticInit& p) { return p.model; })
        .def_ro("params", &PostsynapticInit::params);
}

} // namespace

WeightUpdateModel weightUpdateModelOf(nb::handle model) {
    if (nb::isinstance<WeightUpdateModel>(model)) return nb::cast<WeightUpdateModel>(model);
    const std::string name = nb::cast<std::string>(model);
    return builtIn(models::findWeightUpdateModel(name), "weight update model", name,
                   models::weightUpdateModelNames());
}

PostsynapticModel postsynapticModelOf(nb::handle model) {
    if (nb::isinstance<PostsynapticModel>(model)) return nb::cast<PostsynapticModel>(model);
    const std::string name = nb::cast<std::string>(model);
    return builtIn(models::findPostsynapticModel(name), "postsynaptic model", name,
                   models::postsynapticModelNames());
}

NeuronModel neuronModelOf(nb::handle model) {
    if (nb::isinstance<NeuronModel>(model)) return nb::cast<NeuronModel>(model);
    const std::string name = nb::cast<std::string>(model);
    return builtIn(models::findNeuronModel(name), "neuron model", name, models::neuronModelNames());
}

CurrentSourceModel currentSourceModelOf(nb::handle model) {
    if (nb::isinstance<CurrentSourceModel>(model)) return nb::cast<CurrentSourceModel>(model);
    const std::string name = nb::cast<std::string>(model);
    return builtIn(models::findCurrentSourceModel(name), "current source model", name,
                   models::currentSourceModelNames());
}

void bindSnippets(nb::module_& m) {
    bindModelTypes(m);
    bindInitTypes(m);
    m.def(
        "init_var",
        [](nb::handle snippet, const ParamValues& params) {
            if (nb::isinstance<InitSnippet>(snippet))
                return VarInit(nb::cast<const InitSnippet&>(snippet), params);
            const auto name = snippetName(snippet, "init_var", "create_var_init_snippet");
            const InitSnippet& s = builtIn(init::findVarInitSnippet(name), "variable initialiser",
                                           name, init::varInitSnippetNames());
            return VarInit(s, params);
        },
        nb::arg("snippet"), nb::arg("params") = ParamValues{},
        "A variable initialiser, a built-in by name (\"Uniform\", \"Normal\", …) or one from "
        "create_var_init_snippet, with its parameters.");
    m.def(
        "init_sparse_connectivity",
        [](nb::handle snippet, const ParamValues& params) {
            if (nb::isinstance<SparseInitSnippet>(snippet))
                return SparseConnectivityInit{nb::cast<const SparseInitSnippet&>(snippet), params};
            const auto name = snippetName(snippet, "init_sparse_connectivity",
                                          "create_sparse_connect_init_snippet");
            const SparseInitSnippet& s =
                builtIn(init::findSparseInitSnippet(name), "connectivity initialiser", name,
                        init::sparseInitSnippetNames());
            return SparseConnectivityInit{s, params};
        },
        nb::arg("snippet"), nb::arg("params") = ParamValues{});
    m.def("create_var_init_snippet", &varInitSnippet, nb::arg("name"),
          nb::arg("params") = std::vector<std::string>{}, nb::arg("var_init_code") = "",
          nb::arg("derived_params") = nb::list(), nb::arg("extra_global_params") = nb::list(),
          "A variable initialiser written by the user: var_init_code assigns `value` for one "
          "element (docs/snippets.md, \"Names each field sees\"); checked and run on the "
          "device like the built-ins.");
    m.def("create_sparse_connect_init_snippet", &sparseInitSnippet, nb::arg("name"),
          nb::arg("params") = std::vector<std::string>{}, nb::arg("row_build_code") = "",
          nb::arg("derived_params") = nb::list(), nb::arg("calc_max_row_len_func") = nb::none(),
          nb::arg("pre_calc_row_length_code") = "", nb::arg("extra_global_params") = nb::list(),
          "A connectivity initialiser written by the user: row_build_code calls addSynapse(j) "
          "for each target of row id_pre; calc_max_row_len_func(num_pre, num_post, params) "
          "bounds a row (or set the group's max_connections).");
    m.def(
        "init_toeplitz_connectivity",
        [](const std::string& name, const ParamValues& params) {
            const auto kind = init::findToeplitzInit(name);
            if (!kind) unknownName("Toeplitz initialiser", name, init::toeplitzInitNames());
            return ToeplitzConnectivityInit{*kind, params};
        },
        nb::arg("snippet"), nb::arg("params") = ParamValues{});
    m.def(
        "init_weight_update",
        [](nb::handle model, const ParamValues& params, const VarInitMap& vars,
           const VarInitMap& preVars, const VarInitMap& postVars) {
            return WeightUpdateInit{weightUpdateModelOf(model), params, vars, preVars, postVars};
        },
        nb::arg("model"), nb::arg("params") = ParamValues{}, nb::arg("vars") = VarInitMap{},
        nb::arg("pre_vars") = VarInitMap{}, nb::arg("post_vars") = VarInitMap{});
    m.def(
        "init_postsynaptic",
        [](nb::handle model, const ParamValues& params, const VarInitMap& vars) {
            return PostsynapticInit{postsynapticModelOf(model), params, vars};
        },
        nb::arg("model"), nb::arg("params") = ParamValues{}, nb::arg("vars") = VarInitMap{});
    m.def("block_sparse", &blockSparseOf, nb::arg("block_size") = 16, nb::arg("layout") = "random",
          nb::arg("density") = 0.1, nb::arg("rewire") = 0.0,
          nb::arg("blocks") = std::vector<std::pair<uint32_t, uint32_t>>{},
          nb::arg("attachments") = 0, nb::arg("transpose_of") = "", nb::arg("pruned_by") = "",
          nb::arg("propagation") = "auto", nb::arg("expected_rate") = 0.0);
    m.def("create_neuron_model", &neuronModel, nb::arg("name"),
          nb::arg("params") = std::vector<std::string>{}, nb::arg("vars") = nb::list(),
          nb::arg("sim_code") = "", nb::arg("threshold_condition_code") = "",
          nb::arg("reset_code") = "", nb::arg("derived_params") = nb::list(),
          nb::arg("extra_global_params") = nb::list());
    m.def(
        "create_weight_update_model",
        [](const std::string& name, const std::vector<std::string>& params, nb::handle vars,
           nb::handle preVars, nb::handle postVars, const std::string& preSpikeSyn,
           const std::string& postSpikeSyn, const std::string& preSpike,
           const std::string& postSpike, const std::string& preDynamics,
           const std::string& postDynamics, nb::handle derived, nb::handle egps,
           const std::string& synapseDynamics, const std::string& preEventCondition,
           const std::string& preEventSyn, const std::string& postEventCondition,
           const std::string& postEventSyn) {
            WeightUpdateModel w;
            fillBase(w, name, params, derived, egps);
            w.vars = varDecls(vars, name);
            w.preVars = varDecls(preVars, name);
            w.postVars = varDecls(postVars, name);
            w.preSpikeSynCode = preSpikeSyn;
            w.postSpikeSynCode = postSpikeSyn;
            w.preSpikeCode = preSpike;
            w.postSpikeCode = postSpike;
            w.preDynamicsCode = preDynamics;
            w.postDynamicsCode = postDynamics;
            w.synapseDynamicsCode = synapseDynamics;
            w.preEventThresholdConditionCode = preEventCondition;
            w.preEventSynCode = preEventSyn;
            w.postEventThresholdConditionCode = postEventCondition;
            w.postEventSynCode = postEventSyn;
            return w;
        },
        nb::arg("name"), nb::arg("params") = std::vector<std::string>{},
        nb::arg("vars") = nb::list(), nb::arg("pre_vars") = nb::list(),
        nb::arg("post_vars") = nb::list(), nb::arg("pre_spike_syn_code") = "",
        nb::arg("post_spike_syn_code") = "", nb::arg("pre_spike_code") = "",
        nb::arg("post_spike_code") = "", nb::arg("pre_dynamics_code") = "",
        nb::arg("post_dynamics_code") = "", nb::arg("derived_params") = nb::list(),
        nb::arg("extra_global_params") = nb::list(), nb::arg("synapse_dynamics_code") = "",
        nb::arg("pre_event_threshold_condition_code") = "", nb::arg("pre_event_syn_code") = "",
        nb::arg("post_event_threshold_condition_code") = "", nb::arg("post_event_syn_code") = "");
    m.def(
        "create_postsynaptic_model",
        [](const std::string& name, const std::vector<std::string>& params, nb::handle vars,
           const std::string& simCode, nb::handle derived, nb::handle egps) {
            PostsynapticModel p;
            fillBase(p, name, params, derived, egps);
            p.vars = varDecls(vars, name);
            p.simCode = simCode;
            return p;
        },
        nb::arg("name"), nb::arg("params") = std::vector<std::string>{},
        nb::arg("vars") = nb::list(), nb::arg("sim_code") = "",
        nb::arg("derived_params") = nb::list(), nb::arg("extra_global_params") = nb::list());
    m.def(
        "create_current_source_model",
        [](const std::string& name, const std::vector<std::string>& params, nb::handle vars,
           const std::string& injectionCode, nb::handle derived, nb::handle egps) {
            CurrentSourceModel c;
            fillBase(c, name, params, derived, egps);
            c.vars = varDecls(vars, name);
            c.injectionCode = injectionCode;
            return c;
        },
        nb::arg("name"), nb::arg("params") = std::vector<std::string>{},
        nb::arg("vars") = nb::list(), nb::arg("injection_code") = "",
        nb::arg("derived_params") = nb::list(), nb::arg("extra_global_params") = nb::list());
    m.def("neuron_models", &models::neuronModelNames);
    m.def("weight_update_models", &models::weightUpdateModelNames);
    m.def("postsynaptic_models", &models::postsynapticModelNames);
    m.def("current_source_models", &models::currentSourceModelNames);
}

} // namespace spikeforge::python
