// Top level of the config loader: [model], populations, projections and current sources.
#include "config.hpp"

#include "config_parts.hpp"
#include "input_file.hpp"
#include "snippet/suggest.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <limits>
#include <set>

namespace spikeforge::cli {

namespace {

constexpr uint64_t maxUnsigned = std::numeric_limits<unsigned>::max();

// Group names share one namespace (populations, projections, current sources).
class GroupNames {
public:
    explicit GroupNames(const Reader& r) : m_r(r) {}
    void claim(const toml::node& node, const std::string& name, const std::string& where) {
        const auto [it, added] = m_used.emplace(name, Reader::positionOf(node));
        if (!added)
            m_r.fail(node, where + ": name: '" + name + "' is already used by the group at line " +
                               std::to_string(it->second.line) + ", column " +
                               std::to_string(it->second.column));
    }

    std::map<std::string, Config::Position> positions() const {
        std::map<std::string, Config::Position> out;
        for (const auto& [name, at] : m_used)
            out[name] = {at.line, at.column};
        return out;
    }

private:
    const Reader& m_r;
    std::map<std::string, toml::source_position> m_used;
};

// [[section]] entries; each must be a table.
std::vector<const toml::table*> entries(const Reader& r, const toml::node& node,
                                        const std::string& section) {
    const toml::array& list = r.array(node, section + " (write each entry as [[" + section + "]])");
    std::vector<const toml::table*> tables;
    for (std::size_t i = 0; i < list.size(); ++i)
        tables.push_back(&r.table(list[i], section + "[" + std::to_string(i) + "]"));
    return tables;
}

// "population 'E'" when the entry has a usable name, otherwise "populations[3]".
std::string entryLabel(const toml::table& t, const std::string& kind, const std::string& section,
                       std::size_t index) {
    if (const auto* name = t.get_as<std::string>("name"); name && isIdentifier(name->get()))
        return kind + " '" + name->get() + "'";
    return section + "[" + std::to_string(index) + "]";
}

// Model::add* reports its own ModelErrors without a position: add the entry's.
template <typename F>
auto addToModel(const Reader& r, const toml::table& t, const std::string& where, F add)
    -> decltype(add()) {
    try {
        return add();
    } catch (const ConfigError&) {
        throw;
    } catch (const ModelError& e) {
        r.fail(t, where + ": " + e.what());
    }
}

std::string defaultModelName(const std::string& sourceName) {
    const std::string stem = std::filesystem::path(sourceName).stem().string();
    // A file stem that breaks the model naming rule (e.g. starts with "sf") is not an error of
    // the config: the model just gets the neutral name.
    return identifierProblem(stem).empty() ? stem : std::string("model");
}

Precision readPrecision(const Reader& r, const toml::node& node) {
    const std::string text = r.string(node, "model: precision");
    if (text == "float") return Precision::Float;
    if (text == "double") return Precision::Double;
    r.fail(node, "model: precision: unknown precision '" + text + "'" +
                     suggestion(text, {"float", "double"}));
}

void readModelSection(const Reader& r, const toml::table& root, Config& cfg) {
    const toml::table& t = r.table(r.require(root, "model", "top level"), "model");
    r.checkKeys(t, "model", {"name", "dt", "precision", "batch", "seed", "duration_ms"});
    const toml::node* name = t.get("name");
    const std::string modelName =
        name ? r.string(*name, "model: name") : defaultModelName(cfg.file);
    try {
        cfg.model = std::make_unique<Model>(modelName);
    } catch (const ModelError& e) {
        r.fail(*name, std::string("model: name: ") + e.what()); // a default name never throws
    }
    cfg.model->setDT(r.positive(r.require(t, "dt", "model"), "model: dt"));
    if (const toml::node* p = t.get("precision")) cfg.model->setPrecision(readPrecision(r, *p));
    if (const toml::node* b = t.get("batch"))
        cfg.model->setBatchSize(
            static_cast<unsigned>(r.count(*b, "model: batch", 1, maxBatchSize)));
    if (const toml::node* s = t.get("seed"))
        cfg.model->setSeed(r.count(*s, "model: seed", 0, std::numeric_limits<uint64_t>::max()));
    if (const toml::node* d = t.get("duration_ms"))
        cfg.durationMs = r.positive(*d, "model: duration_ms");
}

bool isSpikeSourceArray(const NeuronModel& model) {
    return &model == &models::SpikeSourceArray(); // user models cannot shadow built-ins
}

// Extra global parameters of the variable initialisers in `inits` (none are built in; a
// user-supplied one could not be given by a config).
void checkInitEgps(const Reader& r, const toml::table& t, const std::string& where,
                   const VarInitMap& inits) {
    for (const auto& [var, init] : inits)
        if (init.hasSnippet())
            checkEgpsGiven(r, t, where, init.snippet(),
                           "the initialiser '" + init.snippet().name + "' of '" + var + "'");
}

// The SpikeSourceArray's startSpike/endSpike are set from spike_times, not from `vars`.
VarInitMap spikeSourceVars(const Reader& r, const toml::table& t, const std::string& where) {
    if (const toml::node* vars = t.get("vars"))
        r.fail(*vars, where + ": vars: a SpikeSourceArray's startSpike and endSpike are set from "
                              "spike_times or spike_times_file; remove 'vars'");
    return {{"startSpike", 0.0}, {"endSpike", 0.0}};
}

// spike_times / spike_times_file: required for a SpikeSourceArray, refused for other models.
std::optional<SpikeSourceInput>
readPopulationSpikes(const Reader& r, const toml::table& t, const std::string& where,
                     const std::string& name, unsigned size, const toml::node& modelNode,
                     const std::string& desc, bool spikeSource, Config& cfg) {
    for (const char* key : {"spike_times", "spike_times_file"})
        if (const toml::node* node = t.get(key); node && !spikeSource)
            r.fail(*node, where + ": " + key +
                              ": spike times are only given to a SpikeSourceArray population, "
                              "not to " +
                              desc);
    std::optional<SpikeSourceInput> spikes =
        readSpikeTimes(r, t, where, name, size, cfg.inputFiles);
    if (spikeSource && !spikes)
        r.fail(modelNode, where + ": " + desc +
                              " needs the extra global parameter 'spikeTimes': give spike_times "
                              "(one list of times [ms] per neuron) or spike_times_file");
    return spikes;
}

void readPopulation(const Reader& r, const toml::table& t, const std::string& where,
                    const UserModels& models, Config& cfg, GroupNames& names) {
    r.checkKeys(t, where,
                {"name", "size", "model", "params", "vars", "record_spikes", "spike_times",
                 "spike_times_file"});
    const toml::node& nameNode = r.require(t, "name", where);
    const std::string name = r.identifier(nameNode, where + ": name");
    const auto size = static_cast<unsigned>(
        r.count(r.require(t, "size", where), where + ": size", 1, maxUnsigned));
    const toml::node& modelNode = r.require(t, "model", where);
    const NeuronModel& neuron = lookupNeuronModel(r, models, modelNode, where + ": model");
    const std::string desc = "neuron model '" + r.string(modelNode, where) + "'";
    const ParamValues params = readParams(r, t, "params", where, neuron.params, desc);
    const bool spikeSource = isSpikeSourceArray(neuron);
    const VarInitMap vars = spikeSource ? spikeSourceVars(r, t, where)
                                        : readVarInits(r, t, "vars", where, neuron.vars, desc);
    std::optional<SpikeSourceInput> spikes =
        readPopulationSpikes(r, t, where, name, size, modelNode, desc, spikeSource, cfg);
    checkEgpsGiven(r, modelNode, where, neuron, desc,
                   spikeSource ? std::set<std::string>{"spikeTimes"} : std::set<std::string>{});
    checkInitEgps(r, t, where + ": vars", vars);
    const toml::node* record = t.get("record_spikes");
    const bool recordSpikes = record ? r.boolean(*record, where + ": record_spikes") : true;
    names.claim(nameNode, name, where);
    addToModel(r, t, where, [&]() -> NeuronGroup& {
        return cfg.model->addNeuronGroup(name, size, neuron, params, vars);
    }).setSpikeRecording(recordSpikes);
    if (spikes) cfg.spikeSources.push_back(std::move(*spikes));
}

// The name of an existing population, for a projection's source/target or a current source.
std::string populationRef(const Reader& r, const toml::table& t, const std::string& key,
                          const std::string& where, const Model& model) {
    const toml::node& node = r.require(t, key, where);
    const std::string name = r.string(node, where + ": " + key);
    std::vector<std::string> populations;
    for (const auto& group : model.neuronGroups()) {
        if (group->name() == name) return name;
        populations.push_back(group->name());
    }
    r.fail(node, where + ": " + key + ": unknown population '" + name + "'" +
                     suggestion(name, populations));
}

MatrixType readMatrixType(const Reader& r, const toml::node& node, const std::string& where) {
    const std::string text = r.string(node, where + ": matrix");
    if (const std::optional<MatrixType> type = matrixTypeNamed(text)) return *type;
    r.fail(node, where + ": matrix: unknown matrix type '" + text + "'" +
                     suggestion(text, matrixTypeConfigNames()));
}

WeightUpdateInit readWeightUpdate(const Reader& r, const toml::table& entry,
                                  const std::string& outer, const UserModels& models) {
    const std::string where = outer + ": weight_update";
    const toml::table& t = r.table(r.require(entry, "weight_update", outer), where);
    r.checkKeys(t, where, {"model", "params", "vars", "pre_vars", "post_vars"});
    const toml::node& modelNode = r.require(t, "model", where);
    WeightUpdateInit wu;
    wu.model = lookupWeightUpdateModel(r, models, modelNode, where + ": model");
    const std::string desc = "weight update model '" + r.string(modelNode, where) + "'";
    wu.params = readParams(r, t, "params", where, wu.model.params, desc);
    wu.varInits = readVarInits(r, t, "vars", where, wu.model.vars, desc);
    wu.preVarInits = readVarInits(r, t, "pre_vars", where, wu.model.preVars, desc);
    wu.postVarInits = readVarInits(r, t, "post_vars", where, wu.model.postVars, desc);
    return wu;
}

PostsynapticInit readPostsynaptic(const Reader& r, const toml::table& entry,
                                  const std::string& outer, const UserModels& models) {
    const std::string where = outer + ": postsynaptic";
    const toml::table& t = r.table(r.require(entry, "postsynaptic", outer), where);
    r.checkKeys(t, where, {"model", "params", "vars"});
    const toml::node& modelNode = r.require(t, "model", where);
    PostsynapticInit ps;
    ps.model = lookupPostsynapticModel(r, models, modelNode, where + ": model");
    const std::string desc = "postsynaptic model '" + r.string(modelNode, where) + "'";
    ps.params = readParams(r, t, "params", where, ps.model.params, desc);
    ps.varInits = readVarInits(r, t, "vars", where, ps.model.vars, desc);
    return ps;
}

std::optional<SparseConnectivityInit> readProjectionConnectivity(const Reader& r,
                                                                 const toml::table& t,
                                                                 const std::string& where,
                                                                 MatrixType matrix) {
    const toml::node* node = t.get("connectivity");
    // Read by readProjection: a convolution, a block layout.
    if (matrixTraits(matrix).kernelShaped || matrixTraits(matrix).blockTiled) return std::nullopt;
    if (!matrixTraits(matrix).builtByInitialiser) {
        if (node)
            r.fail(*node, where + ": connectivity: only sparse projections take a connectivity "
                                  "initialiser, toeplitz ones a convolution and block_sparse "
                                  "ones a block layout (a dense projection connects every "
                                  "pair)");
        return std::nullopt;
    }
    if (!node)
        r.fail(t, where + ": missing required key 'connectivity' (a sparse projection needs an "
                          "initialiser such as {init = \"FixedProbability\", prob = 0.1})");
    return readConnectivity(r, *node, where + ": connectivity");
}

void checkProjectionEgps(const Reader& r, const toml::table& t, const std::string& where,
                         const WeightUpdateInit& wu, const PostsynapticInit& ps,
                         const std::optional<SparseConnectivityInit>& connectivity) {
    checkEgpsGiven(r, t, where, wu.model, "weight update model '" + wu.model.name + "'");
    checkEgpsGiven(r, t, where, ps.model, "postsynaptic model '" + ps.model.name + "'");
    if (connectivity)
        checkEgpsGiven(r, t, where, connectivity->snippet,
                       "connectivity initialiser '" + connectivity->snippet.name + "'");
    for (const VarInitMap* inits : {&wu.varInits, &wu.preVarInits, &wu.postVarInits, &ps.varInits})
        checkInitEgps(r, t, where, *inits);
}

void readProjection(const Reader& r, const toml::table& t, const std::string& where,
                    const UserModels& models, Model& model, GroupNames& names) {
    r.checkKeys(t, where,
                {"name", "source", "target", "matrix", "delay_steps", "max_dendritic_delay_steps",
                 "back_prop_delay_steps", "record_pre_events", "record_post_events",
                 "connectivity", "weight_update", "postsynaptic"});
    const toml::node& nameNode = r.require(t, "name", where);
    const std::string name = r.identifier(nameNode, where + ": name");
    const std::string source = populationRef(r, t, "source", where, model);
    const std::string target = populationRef(r, t, "target", where, model);
    const MatrixType matrix = readMatrixType(r, r.require(t, "matrix", where), where);
    const toml::node* delayNode = t.get("delay_steps");
    const auto delay = static_cast<unsigned>(
        delayNode ? r.count(*delayNode, where + ": delay_steps", 0, maxUnsigned) : 0);
    const auto connectivity = readProjectionConnectivity(r, t, where, matrix);
    const WeightUpdateInit wu = readWeightUpdate(r, t, where, models);
    const PostsynapticInit ps = readPostsynaptic(r, t, where, models);
    checkProjectionEgps(r, t, where, wu, ps, connectivity);
    names.claim(nameNode, name, where);
    std::optional<ToeplitzConnectivityInit> convolution;
    if (matrixTraits(matrix).kernelShaped) {
        const toml::node* node = t.get("connectivity");
        if (!node)
            r.fail(t, where + ": missing required key 'connectivity' (a toeplitz projection needs "
                              "a convolution such as {init = \"Conv2D\", conv_kh = 3, ...})");
        convolution = readToeplitz(r, *node, where + ": connectivity");
    }
    std::optional<BlockSparseInit> blocks;
    if (matrixTraits(matrix).blockTiled) {
        const toml::node* node = t.get("connectivity");
        if (!node)
            r.fail(t, where + ": missing required key 'connectivity' (a block_sparse projection "
                              "needs a block layout such as {layout = \"random\", block_size = "
                              "16, density = 0.1})");
        blocks = readBlockSparse(r, *node, where + ": connectivity");
    }
    SynapseGroup& group = addToModel(r, t, where, [&]() -> SynapseGroup& {
        if (blocks)
            return model.addSynapseGroup(name, matrix, delay, source, target, wu, ps, *blocks);
        if (convolution)
            return model.addSynapseGroup(name, matrix, delay, source, target, wu, ps, *convolution);
        return model.addSynapseGroup(name, matrix, delay, source, target, wu, ps, connectivity);
    });
    if (const toml::node* d = t.get("max_dendritic_delay_steps"))
        group.setMaxDendriticDelaySteps(static_cast<unsigned>(
            r.count(*d, where + ": max_dendritic_delay_steps", 1, maxUnsigned)));
    if (const toml::node* d = t.get("back_prop_delay_steps"))
        group.setBackPropDelaySteps(static_cast<unsigned>(
            r.count(*d, where + ": back_prop_delay_steps", 0, maxUnsigned)));
    if (const toml::node* e = t.get("record_pre_events"))
        group.setPreEventRecording(r.boolean(*e, where + ": record_pre_events"));
    if (const toml::node* e = t.get("record_post_events"))
        group.setPostEventRecording(r.boolean(*e, where + ": record_post_events"));
}

void readCurrentSource(const Reader& r, const toml::table& t, const std::string& where,
                       const UserModels& models, Model& model, GroupNames& names) {
    r.checkKeys(t, where, {"name", "target", "model", "params", "vars"});
    const toml::node& nameNode = r.require(t, "name", where);
    const std::string name = r.identifier(nameNode, where + ": name");
    const std::string target = populationRef(r, t, "target", where, model);
    const toml::node& modelNode = r.require(t, "model", where);
    const CurrentSourceModel& cs =
        lookupCurrentSourceModel(r, models, modelNode, where + ": model");
    const std::string desc = "current source model '" + r.string(modelNode, where) + "'";
    const ParamValues params = readParams(r, t, "params", where, cs.params, desc);
    const VarInitMap vars = readVarInits(r, t, "vars", where, cs.vars, desc);
    checkEgpsGiven(r, modelNode, where, cs, desc);
    checkInitEgps(r, t, where + ": vars", vars);
    names.claim(nameNode, name, where);
    addToModel(r, t, where, [&]() -> CurrentSource& {
        return model.addCurrentSource(name, cs, target, params, vars);
    });
}

// Calls read(reader, table, where, …) for every [[section]] entry.
template <typename Read>
void readEntries(const Reader& r, const toml::table& root, const std::string& section,
                 const std::string& kind, bool required, Read read) {
    const toml::node* node = root.get(section);
    if (!node) {
        if (required) r.require(root, section, "top level");
        return;
    }
    const std::vector<const toml::table*> tables = entries(r, *node, section);
    for (std::size_t i = 0; i < tables.size(); ++i)
        read(*tables[i], entryLabel(*tables[i], kind, section, i));
}

Config buildConfig(const toml::table& root, const std::string& sourceName,
                   const std::vector<std::string>& overrides) {
    Reader r(sourceName);
    r.checkKeys(root, "top level",
                {"model", "parameters", "neuron_models", "postsynaptic_models",
                 "weight_update_models", "current_source_models", "populations", "projections",
                 "current_sources"});
    const toml::node* parameters = root.get("parameters");
    r.setParameters(parameters ? &r.table(*parameters, "parameters") : nullptr, overrides);

    Config cfg;
    cfg.file = sourceName;
    readModelSection(r, root, cfg);
    cfg.parameters = r.parameters();
    const UserModels models = readUserModels(r, root);
    GroupNames names(r);
    Model& model = *cfg.model;
    readEntries(r, root, "populations", "population", true, [&](auto& t, const auto& where) {
        readPopulation(r, t, where, models, cfg, names);
    });
    readEntries(r, root, "projections", "projection", false, [&](auto& t, const auto& where) {
        readProjection(r, t, where, models, model, names);
    });
    readEntries(
        r, root, "current_sources", "current source", false,
        [&](auto& t, const auto& where) { readCurrentSource(r, t, where, models, model, names); });
    cfg.groupPositions = names.positions();
    return cfg;
}

// Where `message` names the group: quoted ('E') or as a field prefix (E.simCode), else npos.
std::size_t groupMention(const std::string& message, const std::string& name) {
    std::size_t first = message.find("'" + name + "'");
    for (std::size_t at = message.find(name + "."); at != std::string::npos;
         at = message.find(name + ".", at + 1)) {
        const bool wordStart =
            at == 0 ||
            !(std::isalnum(static_cast<unsigned char>(message[at - 1])) || message[at - 1] == '_');
        if (wordStart) {
            first = std::min(first, at);
            break;
        }
    }
    return first;
}

} // namespace

Config parseConfig(std::string_view text, const std::string& sourceName,
                   const std::vector<std::string>& overrides) {
    toml::table root = parseToml(text, sourceName);
    return buildConfig(root, sourceName, overrides);
}

void rethrowAtGroup(const Config& cfg, const ModelError& e) {
    if (dynamic_cast<const ConfigError*>(&e)) throw; // already placed
    // The group named first in the message is the one it is about.
    const std::string message = e.what();
    std::size_t first = std::string::npos;
    Config::Position at;
    for (const auto& [name, position] : cfg.groupPositions) {
        const std::size_t found = groupMention(message, name);
        if (found < first) first = found, at = position;
    }
    if (first == std::string::npos) throw; // the original exception, not a sliced copy
    throw ConfigError(cfg.file, at.line, at.column, message);
}

void finaliseModel(Config& cfg) {
    try {
        cfg.model->finalise();
    } catch (const ModelError& e) {
        rethrowAtGroup(cfg, e);
    }
}

Config loadConfig(const std::string& path, const std::vector<std::string>& overrides) {
    std::string text;
    try {
        text = readInputFile(path);
    } catch (const InputFileError& e) {
        throw ConfigError(path, 0, 0,
                          std::string(e.atOpen() ? "cannot open" : "cannot read") +
                              " the config file: " + e.what());
    }
    return parseConfig(text, path, overrides);
}

} // namespace spikeforge::cli
