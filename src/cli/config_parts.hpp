#pragma once
// Private to the config loader: user-defined models, model lookups and the values bound to a
// model (parameters, variable initialisers, connectivity).
#include "config_reader.hpp"

#include "spikeforge/models.hpp"
#include "spikeforge/snippets.hpp"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace spikeforge::cli {

// Models defined in [neuron_models.NAME], [postsynaptic_models.NAME], … .
struct UserModels {
    std::map<std::string, NeuronModel> neurons;
    std::map<std::string, PostsynapticModel> postsynaptic;
    std::map<std::string, WeightUpdateModel> weightUpdate;
    std::map<std::string, CurrentSourceModel> currentSources;
};

UserModels readUserModels(const Reader& r, const toml::table& root);

// A model named by the string `node`: a user model first, then a built-in one.
const NeuronModel& lookupNeuronModel(const Reader& r, const UserModels& models,
                                     const toml::node& node, const std::string& where);
const PostsynapticModel& lookupPostsynapticModel(const Reader& r, const UserModels& models,
                                                 const toml::node& node, const std::string& where);
const WeightUpdateModel& lookupWeightUpdateModel(const Reader& r, const UserModels& models,
                                                 const toml::node& node, const std::string& where);
const CurrentSourceModel& lookupCurrentSourceModel(const Reader& r, const UserModels& models,
                                                   const toml::node& node,
                                                   const std::string& where);

// entry[key] must give exactly the parameters in `declared`. `modelDesc` names the model in
// diagnostics ("neuron model 'LIF'").
ParamValues readParams(const Reader& r, const toml::table& entry, const std::string& key,
                       const std::string& where, const std::vector<std::string>& declared,
                       const std::string& modelDesc);

// entry[key] must give an initial value for exactly the variables in `declared`.
VarInitMap readVarInits(const Reader& r, const toml::table& entry, const std::string& key,
                        const std::string& where, const std::vector<VarDecl>& declared,
                        const std::string& modelDesc);

// {init = "FixedProbability", prob = 0.1}
SparseConnectivityInit readConnectivity(const Reader& r, const toml::node& node,
                                        const std::string& where);
// A convolution table {init = "Conv2D", conv_kh = 3, ...} (init::toeplitzParamNames): unknown
// or missing parameters are errors at their file position; shapes are checked by finalise.
BlockSparseInit readBlockSparse(const Reader& r, const toml::node& node, const std::string& where);
// The names of a block layout's keys in a table (config_values.cpp, readBlockKeys).
struct BlockKeys {
    std::string layout, blockSize, density, rewire, blocks; // blocks empty: no mask key
    std::string attachments = "attachments";                // barabasi_albert's m
    std::string transposeOf = "transpose_of";               // transposed's group
    std::string propagation = "propagation";                // "auto" | "event_driven" | "matrix"
    std::string expectedRate = "expected_rate";             // [Hz], for "auto"
};
BlockSparseInit readBlockKeys(const Reader& r, const toml::table& t, const std::string& where,
                              const BlockKeys& keys, const BlockSparseInit* defaults);
ToeplitzConnectivityInit readToeplitz(const Reader& r, const toml::node& node,
                                      const std::string& where);

// A SpikeSourceArray population's spike_times (inline lists, one per neuron) or
// spike_times_file (CSV rows "neuron,time_ms", relative to the config); nullopt when the entry
// has neither. Times must be finite and >= 0; each neuron's times are sorted here. The file's
// path is appended to `files`.
std::optional<SpikeSourceInput> readSpikeTimes(const Reader& r, const toml::table& entry,
                                               const std::string& where, const std::string& name,
                                               unsigned size, std::vector<std::string>& files);

// Fails at `at` when `snippet` declares an extra global parameter not in `given` (a config can
// only give SpikeSourceArray's spikeTimes), naming the group (`where`), `desc` and the EGP.
void checkEgpsGiven(const Reader& r, const toml::node& at, const std::string& where,
                    const SnippetBase& snippet, const std::string& desc,
                    const std::set<std::string>& given = {});

} // namespace spikeforge::cli
