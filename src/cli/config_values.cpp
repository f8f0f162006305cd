// Values bound to a model: parameters, variable initialisers and sparse connectivity.
#include "config_parts.hpp"
#include "snippet/suggest.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>

namespace spikeforge::cli {

namespace {

bool contains(const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

// Every key of `t` except `skip` is a parameter of `desc`; all of `declared` must be present.
ParamValues readParamTable(const Reader& r, const toml::table& t, const std::string& where,
                           const std::vector<std::string>& declared, const std::string& desc,
                           const std::string& skip) {
    ParamValues values;
    for (auto&& [key, value] : t) {
        const std::string name(key.str());
        if (name == skip) continue;
        if (!contains(declared, name))
            r.fail(key, where + ": unknown parameter '" + name + "' of " + desc +
                            suggestion(name, declared));
        values[name] = r.number(value, where + "." + name);
    }
    for (const std::string& name : declared)
        if (!values.count(name)) r.fail(t, where + ": missing parameter '" + name + "' of " + desc);
    return values;
}

std::vector<std::string> varNames(const std::vector<VarDecl>& vars) {
    std::vector<std::string> names;
    for (const VarDecl& v : vars)
        names.push_back(v.name);
    return names;
}

VarInit readVarInit(const Reader& r, const toml::node& node, const std::string& where) {
    if (!node.is_table()) {
        if (!node.is_number() && !node.is_string())
            r.fail(node, where +
                             ": expected a number, an expression string or an initialiser "
                             "table such as {init = \"Uniform\", min = 0, max = 1}, got " +
                             typeName(node));
        return VarInit(r.number(node, where));
    }
    const toml::table& t = *node.as_table();
    const toml::node& initNode = r.require(t, "init", where);
    const std::string init = r.string(initNode, where + ".init");
    const InitSnippet* snippet = init::findVarInitSnippet(init);
    if (!snippet)
        r.fail(initNode, where + ".init: unknown variable initialiser '" + init + "'" +
                             suggestion(init, init::varInitSnippetNames()));
    const ParamValues params =
        readParamTable(r, t, where, snippet->params, "initialiser '" + init + "'", "init");
    try {
        return VarInit(*snippet, params); // the Constant snippet becomes a plain constant
    } catch (const ModelError& e) {
        r.fail(t, where + ": " + e.what());
    }
}

} // namespace

ParamValues readParams(const Reader& r, const toml::table& entry, const std::string& key,
                       const std::string& where, const std::vector<std::string>& declared,
                       const std::string& modelDesc) {
    const toml::node* node = entry.get(key);
    if (!node) {
        if (declared.empty()) return {};
        r.fail(entry, where + ": missing key '" + key + "': " + modelDesc + " needs parameters " +
                          quotedList(declared));
    }
    const std::string here = where + ": " + key;
    return readParamTable(r, r.table(*node, here), here, declared, modelDesc, "");
}

VarInitMap readVarInits(const Reader& r, const toml::table& entry, const std::string& key,
                        const std::string& where, const std::vector<VarDecl>& declared,
                        const std::string& modelDesc) {
    const std::vector<std::string> names = varNames(declared);
    const toml::node* node = entry.get(key);
    if (!node) {
        if (declared.empty()) return {};
        r.fail(entry, where + ": missing key '" + key + "': " + modelDesc +
                          " needs initial values for " + quotedList(names));
    }
    const std::string here = where + ": " + key;
    const toml::table& t = r.table(*node, here);
    VarInitMap inits;
    for (auto&& [k, value] : t) {
        const std::string name(k.str());
        if (!contains(names, name))
            r.fail(k, here + ": unknown variable '" + name + "' of " + modelDesc +
                          suggestion(name, names));
        inits[name] = readVarInit(r, value, here + "." + name);
    }
    for (const std::string& name : names)
        if (!inits.count(name))
            r.fail(t, here + ": missing initial value for variable '" + name + "' of " + modelDesc);
    return inits;
}

SparseConnectivityInit readConnectivity(const Reader& r, const toml::node& node,
                                        const std::string& where) {
    const toml::table& t = r.table(node, where);
    const toml::node& initNode = r.require(t, "init", where);
    const std::string init = r.string(initNode, where + ".init");
    const SparseInitSnippet* snippet = init::findSparseInitSnippet(init);
    if (!snippet)
        r.fail(initNode, where + ".init: unknown connectivity initialiser '" + init + "'" +
                             suggestion(init, init::sparseInitSnippetNames()));
    const ParamValues params =
        readParamTable(r, t, where, snippet->params, "initialiser '" + init + "'", "init");
    return SparseConnectivityInit{*snippet, params};
}

ToeplitzConnectivityInit readToeplitz(const Reader& r, const toml::node& node,
                                      const std::string& where) {
    const toml::table& t = r.table(node, where);
    const toml::node& initNode = r.require(t, "init", where);
    const std::string name = r.string(initNode, where + ".init");
    const std::optional<ToeplitzKind> kind = init::findToeplitzInit(name);
    if (!kind)
        r.fail(initNode, where + ".init: unknown convolution '" + name + "'" +
                             suggestion(name, init::toeplitzInitNames()));
    const init::ToeplitzParamNames names = init::toeplitzParamNames(*kind);
    std::vector<std::string> known = names.required;
    known.insert(known.end(), names.optional.begin(), names.optional.end());
    ToeplitzConnectivityInit out{*kind, {}};
    for (auto&& [key, value] : t) {
        const std::string param(key.str());
        if (param == "init") continue;
        if (!contains(known, param))
            r.fail(key, where + ": unknown parameter '" + param + "' of " + name +
                            suggestion(param, known));
        out.params[param] = r.number(value, where + "." + param);
    }
    for (const std::string& param : names.required)
        if (!out.params.count(param))
            r.fail(t, where + ": missing parameter '" + param + "' of " + name);
    return out;
}

// A mask's blocks: an array of [block-row, block-column] pairs of whole numbers.
static std::vector<std::pair<uint32_t, uint32_t>>
readBlockList(const Reader& r, const toml::node& node, const std::string& where) {
    std::vector<std::pair<uint32_t, uint32_t>> out;
    const toml::array& list = r.array(node, where);
    for (size_t k = 0; k < list.size(); k++) {
        const std::string at = where + "[" + std::to_string(k) + "]";
        const toml::array& pair = r.array(list[k], at);
        if (pair.size() != 2)
            r.fail(list[k], at + ": a block is [block-row, block-column] (got " +
                                std::to_string(pair.size()) + " numbers)");
        out.emplace_back(
            static_cast<uint32_t>(r.count(pair[0], at + " block-row", 0, UINT32_MAX)),
            static_cast<uint32_t>(r.count(pair[1], at + " block-column", 0, UINT32_MAX)));
    }
    return out;
}

// The value `table` gives `name`, or an error at `node` naming the kind, with a suggestion.
template <typename T>
T named(const Reader& r, const toml::node& node, const std::string& at, const std::string& kind,
        const std::string& name, const std::vector<std::pair<std::string, T>>& table) {
    std::vector<std::string> names;
    for (const auto& [key, value] : table) {
        if (key == name) return value;
        names.push_back(key);
    }
    r.fail(node, at + ": unknown " + kind + " '" + name + "'" + suggestion(name, names));
}

// propagation ("auto", "event_driven", "matrix") and expected_rate (>= 0 Hz) into `out`.
void readPropagation(const Reader& r, const toml::table& t, const BlockKeys& keys,
                     BlockSparseInit& out,
                     const std::function<std::string(const std::string&)>& at) {
    if (const toml::node* n = t.get(keys.propagation)) {
        const std::string form = r.string(*n, at(keys.propagation));
        out.propagation =
            named(r, *n, at(keys.propagation), "propagation", form, propagationNames());
    }
    if (const toml::node* n = t.get(keys.expectedRate)) {
        out.expectedRate = r.number(*n, at(keys.expectedRate));
        if (!(out.expectedRate >= 0.0)) r.fail(*n, at(keys.expectedRate) + ": must be >= 0 Hz");
        if (out.propagation != Propagation::Auto)
            r.fail(*n, at(keys.expectedRate) + ": applies to propagation = \"auto\" only");
    }
}

// A block layout's keys in table `t` (named by `keys`; those missing take `defaults` when given,
// else are required): layout "random" | "watts_strogatz" | "balanced", block size 8 | 16 | 32,
// density in (0, 1], rewire in [0, 1] (watts_strogatz only). Finalise checks the values again.
BlockSparseInit readBlockKeys(const Reader& r, const toml::table& t, const std::string& where,
                              const BlockKeys& keys, const BlockSparseInit* defaults) {
    BlockSparseInit out = defaults ? *defaults : BlockSparseInit{};
    auto node = [&](const std::string& key) -> const toml::node* {
        return defaults ? t.get(key) : &r.require(t, key, where);
    };
    auto at = [&](const std::string& key) { return where + ": " + key; };
    if (const toml::node* n = node(keys.layout)) {
        const std::string layout = r.string(*n, at(keys.layout));
        out.layout = named(r, *n, at(keys.layout), "block layout", layout, blockLayoutNames());
    }
    if (const toml::node* n = node(keys.blockSize)) {
        out.blockSize = static_cast<unsigned>(r.count(*n, at(keys.blockSize), 8, 32));
        if (out.blockSize != 8 && out.blockSize != 16 && out.blockSize != 32)
            r.fail(*n, at(keys.blockSize) + ": " + std::to_string(out.blockSize) +
                           " is not one of 8, 16, 32");
    }
    const bool mask = out.layout == BlockLayout::Mask;
    const bool scaleFree = out.layout == BlockLayout::BarabasiAlbert;
    const bool mirror = out.layout == BlockLayout::Transposed;
    if (mirror && keys.blocks.empty())
        r.fail(*t.get(keys.layout),
               at(keys.layout) + ": layout \"transposed\" is not available here");
    if (const toml::node* n = t.get(keys.transposeOf)) {
        if (!mirror) r.fail(*n, at(keys.transposeOf) + ": applies to layout \"transposed\" only");
        out.transposeOf = r.identifier(*n, at(keys.transposeOf));
    } else if (mirror) {
        r.require(t, keys.transposeOf, where); // an error naming the missing key
    }
    if (const toml::node* n = mirror ? t.get(keys.density) : nullptr)
        r.fail(*n, at(keys.density) + ": not used by layout \"transposed\" (its tiles mirror " +
                       "another projection's)");
    if (const toml::node* n = t.get(keys.attachments)) {
        if (!scaleFree)
            r.fail(*n, at(keys.attachments) + ": applies to layout \"barabasi_albert\" only");
        out.attachments = static_cast<unsigned>(r.count(*n, at(keys.attachments), 1, UINT32_MAX));
    } else if (scaleFree) {
        r.require(t, keys.attachments, where); // an error naming the missing key
    }
    if (const toml::node* n = scaleFree ? t.get(keys.density) : nullptr)
        r.fail(*n, at(keys.density) + ": not used by layout \"barabasi_albert\" (attachments " +
                       "set its density)");
    if (mask && keys.blocks.empty())
        r.fail(*t.get(keys.layout), at(keys.layout) + ": layout \"mask\" is not available here");
    if (mask) { // the tiles are given: no density
        if (const toml::node* n = t.get(keys.density))
            r.fail(*n, at(keys.density) + ": not used by layout \"mask\" (its blocks are given)");
        out.blocks = readBlockList(r, r.require(t, keys.blocks, where), at(keys.blocks));
    } else if (const toml::node* n = keys.blocks.empty() ? nullptr : t.get(keys.blocks)) {
        r.fail(*n, at(keys.blocks) + ": applies to layout \"mask\" only");
    }
    if (const toml::node* n = mask || scaleFree || mirror ? nullptr : node(keys.density)) {
        out.density = r.number(*n, at(keys.density));
        if (!(out.density > 0.0 && out.density <= 1.0))
            r.fail(*n, at(keys.density) + ": must be in (0, 1]");
    }
    readPropagation(r, t, keys, out, at);
    if (const toml::node* n = t.get(keys.rewire)) {
        if (out.layout != BlockLayout::WattsStrogatz)
            r.fail(*n, at(keys.rewire) + ": applies to layout \"watts_strogatz\" only");
        out.rewire = r.number(*n, at(keys.rewire));
        if (!(out.rewire >= 0.0 && out.rewire <= 1.0))
            r.fail(*n, at(keys.rewire) + ": must be in [0, 1]");
    }
    return out;
}

// A projection's block layout: {layout, block_size, density, rewire, blocks}: density required
// except for a mask, rewire only for watts_strogatz, blocks only (and required) for a mask.
BlockSparseInit readBlockSparse(const Reader& r, const toml::node& node, const std::string& where) {
    const toml::table& t = r.table(node, where);
    r.checkKeys(t, where,
                {"layout", "block_size", "density", "rewire", "blocks", "attachments",
                 "transpose_of", "propagation", "expected_rate"});
    return readBlockKeys(r, t, where, {"layout", "block_size", "density", "rewire", "blocks"},
                         nullptr);
}

} // namespace spikeforge::cli
