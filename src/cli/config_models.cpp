// User-defined models ([neuron_models.NAME] …) and lookups of models by name.
#include "config_parts.hpp"
#include "snippet/suggest.hpp"

#include <set>

namespace spikeforge::cli {

namespace {

VarAccess parseAccess(const Reader& r, const toml::node& node, const std::string& where) {
    static const std::vector<std::pair<std::string, VarAccess>> modes = {
        {"ReadWrite", VarAccess::ReadWrite},
        {"ReadOnly", VarAccess::ReadOnly},
        {"ReadOnlyDuplicate", VarAccess::ReadOnlyDuplicate},
        {"ReadOnlySharedNeuron", VarAccess::ReadOnlySharedNeuron}};
    const std::string text = r.string(node, where);
    std::vector<std::string> names;
    for (const auto& [name, mode] : modes) {
        if (name == text) return mode;
        names.push_back(name);
    }
    r.fail(node, where + ": unknown access mode '" + text + "'" + suggestion(text, names));
}

// Tracks the names a model declares so that a parameter and a variable cannot share one.
class DeclaredNames {
public:
    DeclaredNames(const Reader& r, std::string where) : m_r(r), m_where(std::move(where)) {}
    void add(const toml::node& node, const std::string& name) {
        if (!m_names.insert(name).second)
            m_r.fail(node, m_where + ": the name '" + name + "' is declared twice");
    }

private:
    const Reader& m_r;
    std::string m_where;
    std::set<std::string> m_names;
};

std::vector<std::string> readParamNames(const Reader& r, const toml::table& t,
                                        const std::string& where, DeclaredNames& declared) {
    std::vector<std::string> names;
    const toml::node* node = t.get("params");
    if (!node) return names;
    const toml::array& list = r.array(*node, where + ": params");
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string name =
            r.identifier(list[i], where + ": params[" + std::to_string(i) + "]");
        declared.add(list[i], name);
        names.push_back(name);
    }
    return names;
}

VarDecl readVarDecl(const Reader& r, const toml::node& node, const std::string& where) {
    if (node.is_string()) return VarDecl{r.identifier(node, where), "scalar", VarAccess::ReadWrite};
    const toml::table& t = r.table(node, where);
    r.checkKeys(t, where, {"name", "type", "access"});
    VarDecl decl;
    decl.name = r.identifier(r.require(t, "name", where), where + ".name");
    if (const toml::node* type = t.get("type")) decl.type = r.string(*type, where + ".type");
    if (const toml::node* access = t.get("access"))
        decl.access = parseAccess(r, *access, where + ".access");
    return decl;
}

std::vector<VarDecl> readVarDecls(const Reader& r, const toml::table& t, const std::string& key,
                                  const std::string& where, DeclaredNames& declared) {
    std::vector<VarDecl> vars;
    const toml::node* node = t.get(key);
    if (!node) return vars;
    const toml::array& list = r.array(*node, where + ": " + key);
    for (std::size_t i = 0; i < list.size(); ++i) {
        VarDecl decl = readVarDecl(r, list[i], where + ": " + key + "[" + std::to_string(i) + "]");
        declared.add(list[i], decl.name);
        vars.push_back(std::move(decl));
    }
    return vars;
}

std::string readCode(const Reader& r, const toml::table& t, const std::string& key,
                     const std::string& where) {
    const toml::node* node = t.get(key);
    return node ? r.string(*node, where + ": " + key) : std::string();
}

NeuronModel readNeuronModel(const Reader& r, const toml::table& t, const std::string& where) {
    r.checkKeys(t, where, {"params", "vars", "sim_code", "threshold_condition_code", "reset_code"});
    DeclaredNames declared(r, where);
    NeuronModel m;
    m.params = readParamNames(r, t, where, declared);
    m.vars = readVarDecls(r, t, "vars", where, declared);
    m.simCode = readCode(r, t, "sim_code", where);
    m.thresholdConditionCode = readCode(r, t, "threshold_condition_code", where);
    m.resetCode = readCode(r, t, "reset_code", where);
    return m;
}

PostsynapticModel readPostsynapticModel(const Reader& r, const toml::table& t,
                                        const std::string& where) {
    r.checkKeys(t, where, {"params", "vars", "sim_code"});
    DeclaredNames declared(r, where);
    PostsynapticModel m;
    m.params = readParamNames(r, t, where, declared);
    m.vars = readVarDecls(r, t, "vars", where, declared);
    m.simCode = readCode(r, t, "sim_code", where);
    return m;
}

WeightUpdateModel readWeightUpdateModel(const Reader& r, const toml::table& t,
                                        const std::string& where) {
    r.checkKeys(t, where,
                {"params", "vars", "pre_vars", "post_vars", "pre_spike_syn_code",
                 "post_spike_syn_code", "synapse_dynamics_code", "pre_spike_code",
                 "post_spike_code", "pre_dynamics_code", "post_dynamics_code",
                 "pre_event_threshold_condition_code", "pre_event_syn_code",
                 "post_event_threshold_condition_code", "post_event_syn_code"});
    DeclaredNames declared(r, where);
    WeightUpdateModel m;
    m.params = readParamNames(r, t, where, declared);
    m.vars = readVarDecls(r, t, "vars", where, declared);
    m.preVars = readVarDecls(r, t, "pre_vars", where, declared);
    m.postVars = readVarDecls(r, t, "post_vars", where, declared);
    m.preSpikeSynCode = readCode(r, t, "pre_spike_syn_code", where);
    m.postSpikeSynCode = readCode(r, t, "post_spike_syn_code", where);
    m.synapseDynamicsCode = readCode(r, t, "synapse_dynamics_code", where);
    m.preSpikeCode = readCode(r, t, "pre_spike_code", where);
    m.postSpikeCode = readCode(r, t, "post_spike_code", where);
    m.preDynamicsCode = readCode(r, t, "pre_dynamics_code", where);
    m.postDynamicsCode = readCode(r, t, "post_dynamics_code", where);
    m.preEventThresholdConditionCode = readCode(r, t, "pre_event_threshold_condition_code", where);
    m.preEventSynCode = readCode(r, t, "pre_event_syn_code", where);
    m.postEventThresholdConditionCode =
        readCode(r, t, "post_event_threshold_condition_code", where);
    m.postEventSynCode = readCode(r, t, "post_event_syn_code", where);
    return m;
}

CurrentSourceModel readCurrentSourceModel(const Reader& r, const toml::table& t,
                                          const std::string& where) {
    r.checkKeys(t, where, {"params", "vars", "injection_code"});
    DeclaredNames declared(r, where);
    CurrentSourceModel m;
    m.params = readParamNames(r, t, where, declared);
    m.vars = readVarDecls(r, t, "vars", where, declared);
    m.injectionCode = readCode(r, t, "injection_code", where);
    return m;
}

// Reads every [section.NAME] table with `readOne`; a user model may not shadow a built-in one.
template <typename M, typename ReadOne, typename FindBuiltin>
void readSection(const Reader& r, const toml::table& root, const std::string& section,
                 const std::string& kind, ReadOne readOne, FindBuiltin findBuiltin,
                 std::map<std::string, M>& out) {
    const toml::node* node = root.get(section);
    if (!node) return;
    const toml::table& models = r.table(*node, section);
    for (auto&& [key, value] : models) {
        const std::string name(key.str());
        if (!isIdentifier(name))
            r.fail(key, section + ": '" + name +
                            "' is not a valid model name (letters, digits "
                            "and '_', not starting with a digit)");
        if (findBuiltin(name))
            r.fail(key, section + "." + name + ": '" + name + "' is a built-in " + kind +
                            "; give the user-defined model another name");
        const std::string where = section + "." + name;
        M model = readOne(r, r.table(value, where), where);
        model.name = name;
        out.emplace(name, std::move(model));
    }
}

template <typename M>
const M& lookupModel(const Reader& r, const toml::node& node, const std::string& where,
                     const std::string& kind, const std::map<std::string, M>& user,
                     const M* (*findBuiltin)(const std::string&),
                     std::vector<std::string> (*builtinNames)()) {
    const std::string name = r.string(node, where);
    if (const auto it = user.find(name); it != user.end()) return it->second;
    if (const M* builtin = findBuiltin(name)) return *builtin;
    std::vector<std::string> names = builtinNames();
    for (const auto& [userName, model] : user)
        names.push_back(userName);
    r.fail(node, where + ": unknown " + kind + " '" + name + "'" + suggestion(name, names));
}

} // namespace

UserModels readUserModels(const Reader& r, const toml::table& root) {
    UserModels m;
    readSection(r, root, "neuron_models", "neuron model", readNeuronModel, models::findNeuronModel,
                m.neurons);
    readSection(r, root, "postsynaptic_models", "postsynaptic model", readPostsynapticModel,
                models::findPostsynapticModel, m.postsynaptic);
    readSection(r, root, "weight_update_models", "weight update model", readWeightUpdateModel,
                models::findWeightUpdateModel, m.weightUpdate);
    readSection(r, root, "current_source_models", "current source model", readCurrentSourceModel,
                models::findCurrentSourceModel, m.currentSources);
    return m;
}

const NeuronModel& lookupNeuronModel(const Reader& r, const UserModels& models,
                                     const toml::node& node, const std::string& where) {
    return lookupModel(r, node, where, "neuron model", models.neurons, models::findNeuronModel,
                       models::neuronModelNames);
}

const PostsynapticModel& lookupPostsynapticModel(const Reader& r, const UserModels& models,
                                                 const toml::node& node, const std::string& where) {
    return lookupModel(r, node, where, "postsynaptic model", models.postsynaptic,
                       models::findPostsynapticModel, models::postsynapticModelNames);
}

const WeightUpdateModel& lookupWeightUpdateModel(const Reader& r, const UserModels& models,
                                                 const toml::node& node, const std::string& where) {
    return lookupModel(r, node, where, "weight update model", models.weightUpdate,
                       models::findWeightUpdateModel, models::weightUpdateModelNames);
}

const CurrentSourceModel& lookupCurrentSourceModel(const Reader& r, const UserModels& models,
                                                   const toml::node& node,
                                                   const std::string& where) {
    return lookupModel(r, node, where, "current source model", models.currentSources,
                       models::findCurrentSourceModel, models::currentSourceModelNames);
}

} // namespace spikeforge::cli
