// Custom updates from Python with PyGeNN's names: create_custom_update_model, create_var_ref,
// create_wu_var_ref, create_egp_ref, Model.add_custom_update, and custom connectivity updates
// (create_custom_connectivity_update_model, Model.add_custom_connectivity_update). Whether an
// update is WU-shaped (over a synapse group's synapses) or neuron-shaped follows from its
// references, as in PyGeNN: any reference made by create_wu_var_ref makes it WU-shaped.
#include "bindings.hpp"
#include "convert.hpp"

#include "spikeforge/custom_update.hpp"
#include "spikeforge/errors.hpp"
#include "spikeforge/model.hpp"
#include "spikeforge/models.hpp"

#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <string>

namespace spikeforge::python {

namespace {

// A variable reference and whether it names a per-synapse variable.
struct VarRef {
    VarReference ref;
    bool wu = false;
};

CustomUpdateVarAccess customAccessOf(const std::string& name, const std::string& owner) {
    std::string list;
    for (CustomUpdateVarAccess a : kCustomUpdateVarAccesses) {
        if (name == toString(a)) return a;
        list += (list.empty() ? "" : ", ") + std::string(toString(a));
    }
    throw ModelError("custom update model '" + owner + "': unknown access '" + name + "' (" + list +
                     ")");
}

// (name, type, access) of a custom update's variable or reference: a name alone or a tuple.
template <typename Decl> std::vector<Decl> customDecls(nb::handle list, const std::string& owner) {
    std::vector<Decl> out;
    for (nb::handle item : list) {
        Decl d;
        if (nb::isinstance<nb::str>(item)) {
            d.name = nb::cast<std::string>(item);
        } else {
            const nb::tuple t = nb::cast<nb::tuple>(item);
            if (t.size() < 1 || t.size() > 3)
                throw ModelError("custom update model '" + owner +
                                 "': a variable or reference is a name or (name, type[, "
                                 "access]), got " +
                                 std::to_string(t.size()) + " items");
            d.name = nb::cast<std::string>(t[0]);
            if (t.size() > 1) d.type = nb::cast<std::string>(t[1]);
            if (t.size() > 2) d.access = customAccessOf(nb::cast<std::string>(t[2]), owner);
        }
        out.push_back(d);
    }
    return out;
}

CustomUpdateModel customUpdateModelOf(nb::handle model) {
    if (nb::isinstance<CustomUpdateModel>(model)) return nb::cast<CustomUpdateModel>(model);
    const std::string name = nb::cast<std::string>(model);
    if (const CustomUpdateModel* m = models::findCustomUpdateModel(name)) return *m;
    std::string list;
    for (const auto& n : models::customUpdateModelNames())
        list += (list.empty() ? "" : ", ") + n;
    throw ModelError("unknown custom update model '" + name + "' (built-in: " + list + ")");
}

// A group given by name or as the population object.
std::string groupName(nb::handle group) {
    if (nb::isinstance<nb::str>(group)) return nb::cast<std::string>(group);
    return nb::cast<std::string>(group.attr("name"));
}

CustomUpdate& addCustomUpdate(Model& m, const std::string& name, const std::string& updateGroup,
                              nb::handle model, const ParamValues& params, const VarInitMap& vars,
                              const std::map<std::string, VarRef>& refs,
                              const std::map<std::string, EGPReference>& egpRefs) {
    VarReferenceMap varRefs;
    bool wu = false, neuron = false;
    for (const auto& [slot, r] : refs) {
        varRefs.emplace(slot, r.ref);
        (r.wu ? wu : neuron) = true;
    }
    if (wu && neuron)
        throw ModelError("custom update '" + name +
                         "': references mix create_wu_var_ref (per synapse) and create_var_ref "
                         "(per neuron); one update is either WU-shaped or neuron-shaped");
    const EGPReferenceMap egps(egpRefs.begin(), egpRefs.end());
    const CustomUpdateModel cu = customUpdateModelOf(model);
    return wu ? m.addCustomUpdateWU(name, updateGroup, cu, params, vars, varRefs, egps)
              : m.addCustomUpdate(name, updateGroup, cu, params, vars, varRefs, egps);
}

VarReferenceMap referencesOf(const std::map<std::string, VarRef>& refs) {
    VarReferenceMap out;
    for (const auto& [slot, r] : refs)
        out.emplace(slot, r.ref);
    return out;
}

CustomConnectivityUpdate&
addConnectivityUpdate(Model& m, const std::string& name, const std::string& updateGroup,
                      nb::handle synapseGroup, const CustomConnectivityUpdateModel& model,
                      const ParamValues& params, const VarInitMap& vars, const VarInitMap& preVars,
                      const VarInitMap& postVars, const std::map<std::string, VarRef>& varRefs,
                      const std::map<std::string, VarRef>& preVarRefs,
                      const std::map<std::string, VarRef>& postVarRefs) {
    return m.addCustomConnectivityUpdate(name, updateGroup, groupName(synapseGroup), model, params,
                                         vars, preVars, postVars, referencesOf(varRefs),
                                         referencesOf(preVarRefs), referencesOf(postVarRefs));
}

void bindConnectivityUpdates(nb::module_& m) {
    nb::class_<CustomConnectivityUpdateModel>(m, "CustomConnectivityUpdateModel")
        .def_ro("name", &CustomConnectivityUpdateModel::name)
        .def_ro("params", &CustomConnectivityUpdateModel::params)
        .def_ro("row_update_code", &CustomConnectivityUpdateModel::rowUpdateCode)
        .def_ro("column_update_code", &CustomConnectivityUpdateModel::columnUpdateCode)
        .def("__repr__", [](const CustomConnectivityUpdateModel& c) {
            return "<CustomConnectivityUpdateModel '" + c.name + "'>";
        });
    nb::class_<CustomConnectivityUpdate>(m, "CustomConnectivityUpdate")
        .def_prop_ro("name", &CustomConnectivityUpdate::name)
        .def_prop_ro("update_group", &CustomConnectivityUpdate::updateGroup)
        .def_prop_ro("synapse_group", &CustomConnectivityUpdate::synapseGroupName)
        .def("__repr__", [](const CustomConnectivityUpdate& c) {
            return "<CustomConnectivityUpdate '" + c.name() + "'>";
        });
    m.def(
        "create_custom_connectivity_update_model",
        [](const std::string& name, const std::vector<std::string>& params, nb::handle vars,
           nb::handle preVars, nb::handle postVars, nb::handle varRefs, nb::handle preVarRefs,
           nb::handle postVarRefs, const std::string& rowUpdateCode,
           const std::string& columnUpdateCode, nb::handle derived, nb::handle egps) {
            CustomConnectivityUpdateModel c;
            fillBase(c, name, params, derived, egps);
            c.vars = varDecls(vars, name);
            c.preVars = varDecls(preVars, name);
            c.postVars = varDecls(postVars, name);
            c.varRefs = customDecls<VarRefDecl>(varRefs, name);
            c.preVarRefs = customDecls<VarRefDecl>(preVarRefs, name);
            c.postVarRefs = customDecls<VarRefDecl>(postVarRefs, name);
            c.rowUpdateCode = rowUpdateCode;
            c.columnUpdateCode = columnUpdateCode;
            return c;
        },
        nb::arg("name"), nb::arg("params") = std::vector<std::string>{},
        nb::arg("vars") = nb::list(), nb::arg("pre_vars") = nb::list(),
        nb::arg("post_vars") = nb::list(), nb::arg("var_refs") = nb::list(),
        nb::arg("pre_var_refs") = nb::list(), nb::arg("post_var_refs") = nb::list(),
        nb::arg("row_update_code") = "", nb::arg("column_update_code") = "",
        nb::arg("derived_params") = nb::list(), nb::arg("extra_global_params") = nb::list(),
        "A custom connectivity update model (structural plasticity): row_update_code runs once "
        "per row and may walk it with for_each_synapse { … }, remove_synapse() and "
        "add_synapse(j, values of vars, then of var_refs…); column_update_code the same per column "
        "(add_synapse(i, …) from source i). References are names or (name, type[, access]) "
        "with access ReadWrite or ReadOnly.");
}

} // namespace

void bindCustomUpdates(nb::module_& m) {
    bindConnectivityUpdates(m);
    nb::class_<CustomUpdateModel>(m, "CustomUpdateModel")
        .def_ro("name", &CustomUpdateModel::name)
        .def_ro("params", &CustomUpdateModel::params)
        .def_ro("update_code", &CustomUpdateModel::updateCode)
        .def("__repr__",
             [](const CustomUpdateModel& c) { return "<CustomUpdateModel '" + c.name + "'>"; });
    nb::class_<VarRef>(m, "VarReference")
        .def_prop_ro("group", [](const VarRef& r) { return r.ref.group; })
        .def_prop_ro("var", [](const VarRef& r) { return r.ref.var; })
        .def_ro("wu", &VarRef::wu)
        .def("__repr__", [](const VarRef& r) {
            return "<VarReference " + r.ref.group + "." + r.ref.var + (r.wu ? " (wu)>" : ">");
        });
    nb::class_<EGPReference>(m, "EGPReference")
        .def_ro("group", &EGPReference::group)
        .def_ro("egp", &EGPReference::egp);
    nb::class_<CustomUpdate>(m, "CustomUpdate")
        .def_prop_ro("name", &CustomUpdate::name)
        .def_prop_ro("update_group", &CustomUpdate::updateGroup)
        .def_prop_ro("is_wu_shaped", &CustomUpdate::isWUShaped)
        .def_prop_ro("var_names",
                     [](const CustomUpdate& c) {
                         std::vector<std::string> out;
                         for (const auto& v : c.model().vars)
                             out.push_back(v.name);
                         return out;
                     })
        .def("set_param_dynamic", &CustomUpdate::setParamDynamic, nb::arg("param"),
             nb::arg("dynamic") = true)
        .def("__repr__", [](const CustomUpdate& c) { return "<CustomUpdate '" + c.name() + "'>"; });

    m.def(
        "create_custom_update_model",
        [](const std::string& name, const std::vector<std::string>& params, nb::handle vars,
           nb::handle varRefs, const std::string& updateCode, nb::handle derived, nb::handle egps,
           nb::handle egpRefs) {
            CustomUpdateModel c;
            fillBase(c, name, params, derived, egps);
            c.vars = customDecls<CustomUpdateVarDecl>(vars, name);
            c.varRefs = customDecls<VarRefDecl>(varRefs, name);
            c.egpRefs = egpDecls(egpRefs);
            c.updateCode = updateCode;
            return c;
        },
        nb::arg("name"), nb::arg("params") = std::vector<std::string>{},
        nb::arg("vars") = nb::list(), nb::arg("var_refs") = nb::list(), nb::arg("update_code") = "",
        nb::arg("derived_params") = nb::list(), nb::arg("extra_global_params") = nb::list(),
        nb::arg("extra_global_param_refs") = nb::list(),
        "A custom update model; variables and references are names or (name, type[, access]) "
        "with access one of ReadWrite, ReadOnly, ReadOnlyShared, ReadOnlySharedNeuron, "
        "ReduceBatchSum, ReduceBatchMax, ReduceNeuronSum, ReduceNeuronMax, ReduceSum, ReduceMax, "
        "Broadcast.");
    m.def(
        "create_var_ref",
        [](nb::handle group, const std::string& var) {
            return VarRef{VarReference{groupName(group), var}, false};
        },
        nb::arg("group"), nb::arg("var"),
        "A reference to a per-neuron variable (of a population, a synapse population's "
        "postsynaptic or pre/post variables, a current source or a custom update).");
    m.def(
        "create_wu_var_ref",
        [](nb::handle group, const std::string& var, nb::handle transposeGroup,
           const std::string& transposeVar) {
            VarReference r{groupName(group), var};
            if (!transposeGroup.is_none()) {
                r.transposeGroup = groupName(transposeGroup);
                r.transposeVar = transposeVar.empty() ? var : transposeVar;
            }
            return VarRef{r, true};
        },
        nb::arg("group"), nb::arg("var"), nb::arg("transpose_group") = nb::none(),
        nb::arg("transpose_var") = "",
        "A reference to a per-synapse variable; with transpose_group, the update's result is "
        "also written transposed into that group's variable (Dense groups only).");
    m.def(
        "create_egp_ref",
        [](nb::handle group, const std::string& egp) {
            return EGPReference{groupName(group), egp};
        },
        nb::arg("group"), nb::arg("egp"));
    m.def("custom_update_models", &models::customUpdateModelNames);
}

void bindAddCustomUpdate(nb::class_<Model>& model) {
    model.def("add_custom_update", &addCustomUpdate, nb::arg("name"), nb::arg("update_group"),
              nb::arg("model"), nb::arg("params") = ParamValues{}, nb::arg("vars") = VarInitMap{},
              nb::arg("var_refs") = std::map<std::string, VarRef>{},
              nb::arg("egp_refs") = std::map<std::string, EGPReference>{},
              nb::rv_policy::reference_internal,
              "A custom update run by Simulation.custom_update(update_group); WU-shaped when "
              "its references come from create_wu_var_ref.");
    model.def("add_custom_connectivity_update", &addConnectivityUpdate, nb::arg("name"),
              nb::arg("update_group"), nb::arg("synapse_group"), nb::arg("model"),
              nb::arg("params") = ParamValues{}, nb::arg("vars") = VarInitMap{},
              nb::arg("pre_vars") = VarInitMap{}, nb::arg("post_vars") = VarInitMap{},
              nb::arg("var_refs") = std::map<std::string, VarRef>{},
              nb::arg("pre_var_refs") = std::map<std::string, VarRef>{},
              nb::arg("post_var_refs") = std::map<std::string, VarRef>{},
              nb::rv_policy::reference_internal,
              "A custom connectivity update over a Sparse synapse group, run by "
              "Simulation.custom_update(update_group) after that group's custom updates: "
              "var_refs from create_wu_var_ref, pre/post_var_refs from create_var_ref.");
}

} // namespace spikeforge::python
