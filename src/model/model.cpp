// Model construction and validation. Every failure is a ModelError naming the group and field.
#include "spikeforge/model.hpp"
#include "snippet/suggest.hpp"

#include "model/analysis.hpp"
#include "model/block_layouts.hpp"
#include "model/contexts.hpp"
#include "model/names.hpp"
#include "model/validate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>

namespace spikeforge {

namespace {

// The field that makes a group learn by target (SynapseGroup::learnsPost), for messages.
std::string postLearningField(const SynapseGroup& sg) {
    return sg.wu().model.postSpikeSynCode.empty() ? "postEventSynCode" : "postSpikeSynCode";
}

// Spike-like event code needs its condition (GeNN's rule): without one no event ever happens.
void checkEventCode(const SynapseGroup& sg) {
    const auto& wu = sg.wu().model;
    for (const bool pre : {true, false}) {
        const std::string& code = pre ? wu.preEventSynCode : wu.postEventSynCode;
        const std::string& condition =
            pre ? wu.preEventThresholdConditionCode : wu.postEventThresholdConditionCode;
        const bool recorded = pre ? sg.preEventRecording() : sg.postEventRecording();
        const std::string side = pre ? "pre" : "post";
        if (!code.empty() && condition.empty())
            throw ModelError("synapse group '" + sg.name() + "', " + side +
                             "EventSynCode: runs on spike-like events, but the weight update "
                             "model '" +
                             wu.name + "' has no " + side + "EventThresholdConditionCode");
        if (recorded && condition.empty())
            throw ModelError("synapse group '" + sg.name() + "': " + side +
                             "-event recording is on, but the weight update model '" + wu.name +
                             "' has no " + side + "EventThresholdConditionCode");
    }
}

std::string where(const std::string& group, const std::string& field) {
    return "group '" + group + "', " + field + ": ";
}

std::vector<std::string> varNames(const std::vector<VarDecl>& vars) {
    std::vector<std::string> out;
    for (const auto& v : vars)
        out.push_back(v.name);
    return out;
}

} // namespace

// Every declared parameter has a value and every value names a declared parameter.
void checkParams(const std::string& group, const std::string& field, const SnippetBase& snippet,
                 const ParamValues& values, const Numerics& num) {
    for (const auto& p : snippet.params)
        if (!values.count(p))
            throw ModelError(where(group, field) + "missing value for parameter '" + p +
                             "' of model '" + snippet.name + "'");
    for (const auto& [name, value] : values) {
        if (std::find(snippet.params.begin(), snippet.params.end(), name) == snippet.params.end())
            throw ModelError(where(group, field) + "model '" + snippet.name +
                             "' has no parameter '" + name + "'" +
                             didYouMean(name, snippet.params));
        if (!std::isfinite(value))
            throw ModelError(where(group, field) + "parameter '" + name + "' is not finite");
    }
    std::set<std::string> seen;
    for (const auto& p : snippet.params)
        if (!seen.insert(p).second)
            throw ModelError(where(group, field) + "model '" + snippet.name +
                             "' declares parameter '" + p + "' twice");
    checkValues(group, field, snippet, values, num);
}

const std::set<std::string>& allowedVarTypes() {
    static const std::set<std::string> types = {"scalar",       "float",   "double",   "int",
                                                "unsigned int", "int8_t",  "uint8_t",  "int16_t",
                                                "uint16_t",     "int32_t", "uint32_t", "bool"};
    return types;
}

void checkVars(const std::string& group, const std::string& field, const std::vector<VarDecl>& vars,
               const VarInitMap& inits, const std::string& model, bool synaptic,
               const Numerics& num) {
    std::set<std::string> seen;
    for (const auto& v : vars) {
        if (!seen.insert(v.name).second)
            throw ModelError(where(group, field) + "model '" + model + "' declares variable '" +
                             v.name + "' twice");
        if (!allowedVarTypes().count(v.type))
            throw ModelError(where(group, field) + "variable '" + v.name + "' has type '" + v.type +
                             "', which is not a snippet type");
        if (synaptic && v.access == VarAccess::ReadOnlySharedNeuron)
            throw ModelError(where(group, field) + "variable '" + v.name +
                             "': ReadOnlySharedNeuron is for neuron-shaped variables only");
        if (!inits.count(v.name))
            throw ModelError(where(group, field) + "missing initialiser for variable '" + v.name +
                             "' of model '" + model + "'");
    }
    const auto names = varNames(vars);
    for (const auto& [name, init] : inits) {
        if (!seen.count(name))
            throw ModelError(where(group, field) + "model '" + model + "' has no variable '" +
                             name + "'" + didYouMean(name, names));
        const VarDecl& decl = *std::find_if(vars.begin(), vars.end(),
                                            [&](const VarDecl& v) { return v.name == name; });
        if (init.hasSnippet())
            checkParams(group, field + "." + name, init.snippet(), init.params(), num);
        else if (init.hasValues())
            for (size_t i = 0; i < init.values().size(); i++)
                checkInitialValue(group, field + "." + name + "[" + std::to_string(i) + "]", decl,
                                  init.values()[i], num.precision);
        else
            checkInitialValue(group, field + "." + name, decl, init.constant(), num.precision);
    }
}

// A dynamic parameter may not feed a derived parameter: derived values are computed once, at
// build time, so a change would silently not reach them. Detected by perturbing the value.
void checkDynamic(const std::string& group, const SnippetBase& snippet, const ParamValues& values,
                  const std::set<std::string>& dynamic, double dt) {
    for (const auto& p : dynamic) {
        if (std::find(snippet.params.begin(), snippet.params.end(), p) == snippet.params.end())
            throw ModelError(where(group, "dynamic parameters") + "model '" + snippet.name +
                             "' has no parameter '" + p + "'" + didYouMean(p, snippet.params));
        ParamValues perturbed = values;
        perturbed[p] = values.at(p) * 1.5 + 1.0;
        for (const auto& d : snippet.derivedParams) {
            const double a = d.func(values, dt), b = d.func(perturbed, dt);
            if (a != b && !(std::isnan(a) && std::isnan(b)))
                throw ModelError(where(group, "dynamic parameters") + "parameter '" + p +
                                 "' cannot be dynamic: derived parameter '" + d.name +
                                 "' depends on it");
        }
    }
}

// ---- groups ------------------------------------------------------------------------------

NeuronGroup::NeuronGroup(std::string name, unsigned numNeurons, NeuronModel model,
                         ParamValues params, VarInitMap varInits)
    : m_name(std::move(name)),
      m_numNeurons(numNeurons), m_bound{
                                    std::move(model), std::move(params), std::move(varInits), {}} {}

void NeuronGroup::setParamDynamic(const std::string& param, bool dynamic) {
    if (dynamic)
        m_bound.dynamicParams.insert(param);
    else
        m_bound.dynamicParams.erase(param);
}

SynapseGroup::SynapseGroup(std::string name, MatrixType matrixType, unsigned axonalDelaySteps,
                           NeuronGroup* source, NeuronGroup* target, WeightUpdateInit wu,
                           PostsynapticInit ps, std::optional<SparseConnectivityInit> connectivity)
    : m_name(std::move(name)), m_matrixType(matrixType), m_axonalDelaySteps(axonalDelaySteps),
      m_source(source),
      m_target(target), m_wu{std::move(wu.model), std::move(wu.params), std::move(wu.varInits), {}},
      m_ps{std::move(ps.model), std::move(ps.params), std::move(ps.varInits), {}},
      m_wuPreVarInits(std::move(wu.preVarInits)), m_wuPostVarInits(std::move(wu.postVarInits)),
      m_connectivity(std::move(connectivity)) {}

void SynapseGroup::setWUParamDynamic(const std::string& param, bool dynamic) {
    if (dynamic)
        m_wu.dynamicParams.insert(param);
    else
        m_wu.dynamicParams.erase(param);
}

void SynapseGroup::setNumThreadsPerSpike(unsigned threads) {
    if (threads > kMaxThreadsPerSpike)
        throw ModelError(where(m_name, "threads per spike") + std::to_string(threads) +
                         " is more than " + std::to_string(kMaxThreadsPerSpike));
    m_numThreadsPerSpike = threads;
}

void SynapseGroup::setPSParamDynamic(const std::string& param, bool dynamic) {
    if (dynamic)
        m_ps.dynamicParams.insert(param);
    else
        m_ps.dynamicParams.erase(param);
}

CurrentSource::CurrentSource(std::string name, CurrentSourceModel model, NeuronGroup* target,
                             ParamValues params, VarInitMap varInits)
    : m_name(std::move(name)),
      m_target(target), m_bound{std::move(model), std::move(params), std::move(varInits), {}} {}

void CurrentSource::setParamDynamic(const std::string& param, bool dynamic) {
    if (dynamic)
        m_bound.dynamicParams.insert(param);
    else
        m_bound.dynamicParams.erase(param);
}

// ---- model -------------------------------------------------------------------------------

Model::Model(std::string name) : m_name(std::move(name)) {
    names::checkIdentifier(m_name, "model name");
}

void Model::checkNameFree(const std::string& name, const char* what) const {
    names::checkIdentifier(name, std::string(what) + " name");
    if (m_groupsByName.count(name))
        throw ModelError(std::string(what) + " name '" + name + "' is already used");
}

// The neuron group called `name`, or nullptr.
NeuronGroup* Model::findNeuronGroup(const std::string& name) const {
    const auto it = m_groupsByName.find(name);
    return it == m_groupsByName.end() ? nullptr : it->second.neuronGroup;
}

NeuronGroup& Model::addNeuronGroup(const std::string& name, unsigned size, const NeuronModel& model,
                                   const ParamValues& params, const VarInitMap& varInits) {
    checkNameFree(name, "neuron group");
    if (size == 0) throw ModelError(where(name, "size") + "a neuron group needs at least 1 neuron");
    m_finalised = false;
    m_neuronGroups.push_back(std::make_unique<NeuronGroup>(name, size, model, params, varInits));
    m_groupsByName[name] = {m_neuronGroups.back().get(), nullptr};
    return *m_neuronGroups.back();
}

SynapseGroup& Model::addSynapseGroup(const std::string& name, MatrixType matrixType,
                                     unsigned axonalDelaySteps, const std::string& source,
                                     const std::string& target, const WeightUpdateInit& wu,
                                     const PostsynapticInit& ps,
                                     std::optional<SparseConnectivityInit> connectivity) {
    checkNameFree(name, "synapse group");
    auto find = [&](const std::string& n, const char* role) -> NeuronGroup* {
        if (NeuronGroup* g = findNeuronGroup(n)) return g;
        std::vector<std::string> names;
        for (auto& g : m_neuronGroups)
            names.push_back(g->name());
        throw ModelError(where(name, role) + "no neuron group '" + n + "'" + didYouMean(n, names));
    };
    NeuronGroup* src = find(source, "source");
    NeuronGroup* tgt = find(target, "target");
    const bool needsInitialiser = matrixTraits(matrixType).builtByInitialiser;
    if (!needsInitialiser && connectivity)
        throw ModelError(where(name, "connectivity") + "a " + matrixTypeName(matrixType) +
                         " synapse group takes no connectivity initialiser");
    if (needsInitialiser && !connectivity)
        throw ModelError(where(name, "connectivity") + "a " + matrixTypeName(matrixType) +
                         " synapse group needs a connectivity initialiser");
    if (matrixTraits(matrixType).kernelShaped)
        throw ModelError(where(name, "connectivity") + "a " + matrixTypeName(matrixType) +
                         " synapse group needs a convolution (init::Conv2D or "
                         "init::AvgPoolConv2D)");
    if (matrixTraits(matrixType).blockTiled)
        throw ModelError(where(name, "connectivity") + "a " + matrixTypeName(matrixType) +
                         " synapse group needs a block layout (BlockSparseInit)");
    m_finalised = false;
    m_synapseGroups.push_back(std::make_unique<SynapseGroup>(
        name, matrixType, axonalDelaySteps, src, tgt, wu, ps, std::move(connectivity)));
    m_groupsByName[name] = {nullptr, m_synapseGroups.back().get()};
    return *m_synapseGroups.back();
}

SynapseGroup& Model::addSynapseGroup(const std::string& name, MatrixType matrixType,
                                     unsigned axonalDelaySteps, const std::string& source,
                                     const std::string& target, const WeightUpdateInit& wu,
                                     const PostsynapticInit& ps,
                                     const ToeplitzConnectivityInit& toeplitz) {
    if (!matrixTraits(matrixType).kernelShaped)
        throw ModelError(where(name, "connectivity") +
                         "a convolution needs MatrixType::Toeplitz, "
                         "not " +
                         matrixTypeName(matrixType));
    checkNameFree(name, "synapse group");
    NeuronGroup* src = findNeuronGroup(source);
    NeuronGroup* tgt = findNeuronGroup(target);
    for (const auto& [g, n, role] :
         {std::tuple{src, source, "source"}, std::tuple{tgt, target, "target"}})
        if (!g) {
            std::vector<std::string> names;
            for (auto& group : m_neuronGroups)
                names.push_back(group->name());
            throw ModelError(where(name, role) + "no neuron group '" + n + "'" +
                             didYouMean(n, names));
        }
    m_finalised = false;
    m_synapseGroups.push_back(std::make_unique<SynapseGroup>(name, matrixType, axonalDelaySteps,
                                                             src, tgt, wu, ps, std::nullopt));
    m_synapseGroups.back()->m_toeplitz = toeplitz;
    m_groupsByName[name] = {nullptr, m_synapseGroups.back().get()};
    return *m_synapseGroups.back();
}

SynapseGroup& Model::addSynapseGroup(const std::string& name, MatrixType matrixType,
                                     unsigned axonalDelaySteps, const std::string& source,
                                     const std::string& target, const WeightUpdateInit& wu,
                                     const PostsynapticInit& ps, const BlockSparseInit& blocks) {
    if (!matrixTraits(matrixType).blockTiled)
        throw ModelError(where(name, "connectivity") +
                         "a block layout needs MatrixType::BlockSparse, not " +
                         matrixTypeName(matrixType));
    // Checked and added as a Dense group is, then given its layout.
    SynapseGroup& sg = addSynapseGroup(name, MatrixType::Dense, axonalDelaySteps, source, target,
                                       wu, ps, std::nullopt);
    sg.m_matrixType = matrixType;
    sg.m_blockSparse = blocks;
    return sg;
}

CurrentSource& Model::addCurrentSource(const std::string& name, const CurrentSourceModel& model,
                                       const std::string& target, const ParamValues& params,
                                       const VarInitMap& varInits) {
    checkNameFree(name, "current source");
    NeuronGroup* tgt = findNeuronGroup(target);
    if (!tgt) throw ModelError(where(name, "target") + "no neuron group '" + target + "'");
    m_finalised = false;
    m_currentSources.push_back(std::make_unique<CurrentSource>(name, model, tgt, params, varInits));
    m_groupsByName[name] = {};
    return *m_currentSources.back();
}

template <typename G>
[[noreturn]] static void noSuchGroup(const std::vector<std::unique_ptr<G>>& groups,
                                     const std::string& name, const char* what) {
    std::vector<std::string> names;
    for (const auto& g : groups)
        names.push_back(g->name());
    throw ModelError(std::string("no ") + what + " '" + name + "'" + didYouMean(name, names));
}

NeuronGroup& Model::neuronGroup(const std::string& n) {
    if (NeuronGroup* g = findNeuronGroup(n)) return *g;
    noSuchGroup(m_neuronGroups, n, "neuron group");
}
const NeuronGroup& Model::neuronGroup(const std::string& n) const {
    if (const NeuronGroup* g = findNeuronGroup(n)) return *g;
    noSuchGroup(m_neuronGroups, n, "neuron group");
}
SynapseGroup& Model::synapseGroup(const std::string& n) {
    const auto it = m_groupsByName.find(n);
    if (it != m_groupsByName.end() && it->second.synapseGroup) return *it->second.synapseGroup;
    noSuchGroup(m_synapseGroups, n, "synapse group");
}
const SynapseGroup& Model::synapseGroup(const std::string& n) const {
    const auto it = m_groupsByName.find(n);
    if (it != m_groupsByName.end() && it->second.synapseGroup) return *it->second.synapseGroup;
    noSuchGroup(m_synapseGroups, n, "synapse group");
}

// Which groups store their neurons' last spike times: those whose neuron code reads `st`, whose
// outgoing synapse code reads `st_pre` or incoming synapse code `st_post` (only those contexts
// declare the names, so a field naming one belongs to such a group).
namespace {

// A Mask layout's tiles: each (block-row, block-column) in range and given once, at least one;
// returns the tiles of the fullest block-row (the row capacity).
unsigned checkBlockMask(const std::vector<std::pair<uint32_t, uint32_t>>& blocks, unsigned rows,
                        unsigned cols, const std::string& at) {
    if (blocks.empty()) throw ModelError(at + "a Mask layout needs at least one block");
    std::vector<std::vector<uint32_t>> byRow(rows);
    for (size_t k = 0; k < blocks.size(); k++) {
        const auto [r, c] = blocks[k];
        if (r >= rows || c >= cols)
            throw ModelError(at + "block " + std::to_string(k) + " (" + std::to_string(r) + ", " +
                             std::to_string(c) + ") is outside the " + std::to_string(rows) +
                             " x " + std::to_string(cols) + " block grid");
        byRow[r].push_back(c);
    }
    size_t most = 0;
    for (unsigned r = 0; r < rows; r++) {
        auto& row = byRow[r];
        std::sort(row.begin(), row.end());
        const auto twice = std::adjacent_find(row.begin(), row.end());
        if (twice != row.end())
            throw ModelError(at + "block (" + std::to_string(r) + ", " + std::to_string(*twice) +
                             ") is given twice");
        most = std::max(most, row.size());
    }
    return static_cast<unsigned>(most);
}

} // namespace

// A block layout's parameters, and its shape: the tiles per block-row.
namespace {

// The variable a prunable group's tiles are scored by: one of its per-synapse variables, of a
// floating-point type.
void checkPrunedBy(const SynapseGroup& sg, const std::string& at) {
    const std::string& name = sg.blockSparse()->prunedBy;
    for (const VarDecl& v : sg.wu().model.vars)
        if (v.name == name) {
            if (v.type != "scalar" && v.type != "float" && v.type != "double")
                throw ModelError(at + "prunedBy names variable '" + name + "' of type '" + v.type +
                                 "'; tiles are scored by the norm of a float or double variable");
            return;
        }
    std::string names;
    for (const VarDecl& v : sg.wu().model.vars)
        names += (names.empty() ? "" : ", ") + v.name;
    throw ModelError(at + "prunedBy names '" + name + "', which is no per-synapse variable of " +
                     "weight update model '" + sg.wu().model.name +
                     "' (it has: " + (names.empty() ? "none" : names) + ")");
}

} // namespace

// The group a Transposed layout mirrors: an earlier BlockSparse group (so its shape is known),
// not itself Transposed, of the mirrored shape and the same block size, never pruned (its
// transpose is built once, from its layout at initialisation).
const SynapseGroup* Model::transposedSource(const SynapseGroup& sg, const std::string& at) const {
    const BlockSparseInit& b = *sg.blockSparse();
    const SynapseGroup* of = nullptr;
    for (const auto& g : m_synapseGroups) {
        if (g.get() == &sg) break;
        if (g->name() == b.transposeOf) of = g.get();
    }
    if (!of)
        throw ModelError(at + "transposeOf names '" + b.transposeOf +
                         "', which is no synapse group added before this one");
    if (!of->blockSparse() || of->blockSparse()->layout == BlockLayout::Transposed)
        throw ModelError(at + "transposeOf names '" + of->name() +
                         "', which is not a BlockSparse group with a layout of its own");
    if (of->blockSparse()->blockSize != b.blockSize)
        throw ModelError(at + "block size " + std::to_string(b.blockSize) + " differs from '" +
                         of->name() + "''s " + std::to_string(of->blockSparse()->blockSize));
    if (of->source().size() != sg.target().size() || of->target().size() != sg.source().size())
        throw ModelError(
            at + "the transpose of '" + of->name() + "' (" + std::to_string(of->source().size()) +
            " x " + std::to_string(of->target().size()) + ") must be " +
            std::to_string(of->target().size()) + " x " + std::to_string(of->source().size()) +
            ", not " + std::to_string(sg.source().size()) + " x " +
            std::to_string(sg.target().size()));
    if (!of->blockSparse()->prunedBy.empty())
        throw ModelError(at + "'" + of->name() +
                         "' is pruned (prunedBy), so its layout changes; a Transposed layout "
                         "mirrors a fixed one");
    return of;
}

void Model::checkBlockSparse(SynapseGroup& sg) {
    const BlockSparseInit& b = *sg.blockSparse();
    const std::string at = where(sg.name(), "block layout");
    if (b.blockSize != 8 && b.blockSize != 16 && b.blockSize != 32)
        throw ModelError(at + "block size " + std::to_string(b.blockSize) +
                         " is not one of 8, 16, 32");
    if (!(b.density > 0.0 && b.density <= 1.0))
        throw ModelError(at + "density must be in (0, 1] (got " + std::to_string(b.density) + ")");
    if (!(b.rewire >= 0.0 && b.rewire <= 1.0))
        throw ModelError(at + "rewiring probability must be in [0, 1] (got " +
                         std::to_string(b.rewire) + ")");
    if (b.layout != BlockLayout::WattsStrogatz && b.rewire != 0.0)
        throw ModelError(at + "a rewiring probability applies to the WattsStrogatz layout only");
    const unsigned cols = sg.numBlockCols();
    switch (b.layout) {
    case BlockLayout::Balanced:
        if (sg.numBlockRows() != cols)
            throw ModelError(at +
                             "a Balanced layout needs as many block-rows as block-columns "
                             "(got " +
                             std::to_string(sg.numBlockRows()) + " and " + std::to_string(cols) +
                             ": sources and targets of equal size)");
        [[fallthrough]];
    case BlockLayout::Random:
    case BlockLayout::WattsStrogatz:
        if (!b.blocks.empty()) throw ModelError(at + "blocks are given for the Mask layout only");
        sg.m_hostBuiltTiles.clear();
        sg.m_blocksPerRow =
            std::clamp(static_cast<unsigned>(std::lround(b.density * cols)), 1u, cols);
        break;
    case BlockLayout::Mask:
        sg.m_blocksPerRow = checkBlockMask(b.blocks, sg.numBlockRows(), cols, at);
        sg.m_hostBuiltTiles = b.blocks;
        std::sort(sg.m_hostBuiltTiles.begin(), sg.m_hostBuiltTiles.end());
        break;
    case BlockLayout::BarabasiAlbert:
        if (!b.blocks.empty()) throw ModelError(at + "blocks are given for the Mask layout only");
        if (sg.numBlockRows() != cols)
            throw ModelError(at + "a BarabasiAlbert layout needs as many block-rows as " +
                             "block-columns (got " + std::to_string(sg.numBlockRows()) + " and " +
                             std::to_string(cols) + ": sources and targets of equal size)");
        if (b.attachments == 0 || b.attachments >= cols)
            throw ModelError(at + "a BarabasiAlbert layout needs attachments (m) in [1, " +
                             std::to_string(cols) + ") (got " + std::to_string(b.attachments) +
                             ")");
        sg.m_hostBuiltTiles =
            model_detail::barabasiAlbertTiles(cols, b.attachments, m_seed, sg.name());
        sg.m_blocksPerRow = 0;
        for (size_t k = 0, run = 0; k < sg.m_hostBuiltTiles.size(); k++) {
            run = k > 0 && sg.m_hostBuiltTiles[k - 1].first == sg.m_hostBuiltTiles[k].first
                      ? run + 1
                      : 1;
            sg.m_blocksPerRow = std::max(sg.m_blocksPerRow, static_cast<unsigned>(run));
        }
        break;
    case BlockLayout::Transposed: {
        if (!b.blocks.empty()) throw ModelError(at + "blocks are given for the Mask layout only");
        sg.m_hostBuiltTiles.clear();
        const SynapseGroup* of = transposedSource(sg, at);
        sg.m_blocksPerRow = of->numBlockRows(); // a bound: a block-column of `of` holds at most
        sg.m_numTiles = of->numTiles();         // every block-row
        break;
    }
    }
    if (b.layout != BlockLayout::Transposed && !b.transposeOf.empty())
        throw ModelError(at + "transposeOf applies to the Transposed layout only");
    if (b.layout != BlockLayout::BarabasiAlbert && b.attachments != 0)
        throw ModelError(at + "attachments apply to the BarabasiAlbert layout only");
    if (b.layout != BlockLayout::Transposed)
        sg.m_numTiles = sg.m_hostBuiltTiles.empty()
                            ? uint64_t(sg.numBlockRows()) * sg.m_blocksPerRow
                            : sg.m_hostBuiltTiles.size();
    // Postsynaptic learning walks a target's column as tiles x b iterations (32-bit).
    if (sg.learnsPost() && sg.m_numTiles * b.blockSize > UINT32_MAX)
        throw ModelError(where(sg.name(), postLearningField(sg)) +
                         "postsynaptic learning on a BlockSparse group of more than 2^32 "
                         "synapse slots is not supported");
    if (!b.prunedBy.empty()) checkPrunedBy(sg, at);
    if (!b.prunedBy.empty() && b.layout == BlockLayout::Transposed)
        throw ModelError(at + "a Transposed layout mirrors '" + b.transposeOf +
                         "' tile for tile and cannot be pruned on its own");
    // Rewiring draws columns until it finds one the row does not hold: with at least half of
    // them free that takes at most two draws on average, near a full row it would take ~cols.
    if (b.layout == BlockLayout::WattsStrogatz && b.rewire > 0.0 && 2ull * sg.m_blocksPerRow > cols)
        throw ModelError(at + "a rewired WattsStrogatz layout needs at most half the " +
                         std::to_string(cols) + " block-columns per block-row (density <= 0.5; " +
                         "got " + std::to_string(sg.m_blocksPerRow) + ")");
}

void Model::markSpikeTimeReaders() {
    for (auto& ng : m_neuronGroups)
        ng->m_spikeTimeRead = ng->m_prevSpikeTimeRead = false;
    auto named = [&](const std::string& group) -> const NamedGroup& {
        const auto it = m_groupsByName.find(group);
        if (it == m_groupsByName.end())
            throw InternalError("code field of unknown group '" + group + "'");
        return it->second;
    };
    // `prev`: the spike time before the last is read (prevSt; st is then kept too).
    auto mark = [&](const std::string& group, bool prev) {
        NeuronGroup* ng = named(group).neuronGroup;
        if (!ng) throw InternalError("'" + group + "' reads st but is no neuron group");
        (prev ? ng->m_prevSpikeTimeRead : ng->m_spikeTimeRead) = true;
    };
    // A custom update referencing a group's spike times.
    for (const auto& cu : m_customUpdates)
        for (const auto& [name, ref] : cu->varRefs())
            if ((ref.var == "st" || ref.var == "prev_st") && named(ref.group).neuronGroup)
                mark(ref.group, ref.var == "prev_st");
    for (size_t i = 0; i < m_analysis->fields.size(); i++) {
        const auto& refs = m_analysis->fields[i].referencedNames;
        const std::string& owner = m_analysis->names[i].group;
        for (const bool prev : {false, true}) {
            const std::string p = prev ? "prev_" : "";
            if (refs.count(p + "st")) mark(owner, prev);
            if (!refs.count(p + "st_pre") && !refs.count(p + "st_post")) continue;
            const SynapseGroup* sg = named(owner).synapseGroup;
            if (!sg)
                throw InternalError("'" + owner + "' reads " + p + "st_pre/" + p +
                                    "st_post but is no synapse group");
            if (refs.count(p + "st_pre")) mark(sg->source().name(), prev);
            if (refs.count(p + "st_post")) mark(sg->target().name(), prev);
        }
    }
}

void Model::markDelayedReaders() {
    for (auto& ng : m_neuronGroups)
        ng->m_delayedNames.clear();
    auto kept = [](const VarDecl& v) { return hasElementDim(v.access) && hasBatchDim(v.access); };
    // The code that runs for (or beside) a delayed spike; code run by the neuron update (the
    // weight update's pre/post code, the postsynaptic model) sees the present.
    static const char* const fields[] = {"preSpikeSynCode", "postSpikeSynCode",
                                         "synapseDynamicsCode", "preEventSynCode",
                                         "postEventSynCode"};
    for (auto& sg : m_synapseGroups) {
        sg->m_delayedNames.clear();
        sg->m_preEventTimeRead = sg->m_postEventTimeRead = false;
        for (const char* field : fields) {
            const auto slot = m_analysis->slots.find({sg->name(), field});
            if (slot == m_analysis->slots.end()) continue;
            const auto& refs = m_analysis->fields[slot->second].referencedNames;
            for (const bool pre : {true, false}) {
                if (!refs.count(pre ? "set_pre" : "set_post")) continue;
                const auto& wu = sg->wu().model;
                if ((pre ? wu.preEventThresholdConditionCode : wu.postEventThresholdConditionCode)
                        .empty())
                    throw ModelError(where(sg->name(), field) + "reads " +
                                     (pre ? "set_pre" : "set_post") +
                                     ", the time of a spike-like event, but the weight update "
                                     "model '" +
                                     wu.name + "' has no " + (pre ? "pre" : "post") +
                                     "EventThresholdConditionCode");
                (pre ? sg->m_preEventTimeRead : sg->m_postEventTimeRead) = true;
            }
            for (const bool pre : {true, false}) {
                if ((pre ? sg->axonalDelaySteps() : sg->backPropDelaySteps()) == 0) continue;
                NeuronGroup& ng = pre ? *sg->m_source : *sg->m_target;
                const std::string suffix = pre ? "_pre" : "_post";
                for (const auto& v : ng.model().vars)
                    if (refs.count(v.name + suffix) && kept(v)) ng.m_delayedNames.insert(v.name);
                for (const auto& v : pre ? sg->wu().model.preVars : sg->wu().model.postVars)
                    if (refs.count(v.name) && kept(v)) sg->m_delayedNames.insert(v.name);
                // Spike code gets the delivered spike's own time by arithmetic (lower_synapse).
                const bool ownSpike =
                    field == std::string(pre ? "preSpikeSynCode" : "postSpikeSynCode");
                if (refs.count("st" + suffix) && !ownSpike) ng.m_delayedNames.insert("st");
                if (refs.count("prev_st" + suffix)) ng.m_delayedNames.insert("prev_st");
            }
        }
    }
}

void Model::finalise() {
    // Until this run succeeds the model is not finalised and has no analysis: a failed
    // re-finalise must not leave the previous results readable.
    m_finalised = false;
    m_analysis.reset();
    if (!(m_dt > 0.0) || !std::isfinite(m_dt))
        throw ModelError("model '" + m_name + "': dt must be a positive number of ms");
    if (m_batchSize == 0) throw ModelError("model '" + m_name + "': batch size must be at least 1");
    names::checkModelNames(*this);
    const Numerics num{m_dt, m_precision};
    for (auto& ng : m_neuronGroups) {
        const auto& b = ng->bound();
        checkParams(ng->name(), "params", b.model, b.params, num);
        checkVars(ng->name(), "vars", b.model.vars, b.varInits, b.model.name, false, num);
        checkNeuronSizes(*ng, m_batchSize);
        checkDynamic(ng->name(), b.model, b.params, b.dynamicParams, m_dt);
        ng->m_numDelaySlots = static_cast<unsigned>(NeuronGroup::slotsForDelay(0));
    }
    for (auto& sg : m_synapseGroups) {
        const auto& wu = sg->wu();
        checkParams(sg->name(), "weight update params", wu.model, wu.params, num);
        checkVars(sg->name(), "weight update vars", wu.model.vars, wu.varInits, wu.model.name, true,
                  num);
        checkVars(sg->name(), "weight update pre vars", wu.model.preVars, sg->wuPreVarInits(),
                  wu.model.name, false, num);
        checkVars(sg->name(), "weight update post vars", wu.model.postVars, sg->wuPostVarInits(),
                  wu.model.name, false, num);
        checkDynamic(sg->name(), wu.model, wu.params, wu.dynamicParams, m_dt);
        const auto& ps = sg->ps();
        checkParams(sg->name(), "postsynaptic params", ps.model, ps.params, num);
        checkVars(sg->name(), "postsynaptic vars", ps.model.vars, ps.varInits, ps.model.name, false,
                  num);
        checkDynamic(sg->name(), ps.model, ps.params, ps.dynamicParams, m_dt);
        if (sg->spanType() == SpanType::Postsynaptic && sg->numThreadsPerSpike() > 0)
            throw ModelError(where(sg->name(), "threads per spike") +
                             "apply to the presynaptic span, but the span type is postsynaptic");
        if (sg->maxDendriticDelaySteps() == 0)
            throw ModelError(where(sg->name(), "max dendritic delay") + "must be at least 1");
        checkEventCode(*sg);
        auto& src = *sg->m_source;
        src.m_numDelaySlots =
            std::max(src.m_numDelaySlots,
                     static_cast<unsigned>(NeuronGroup::slotsForDelay(sg->axonalDelaySteps())));
        auto& tgt = *sg->m_target;
        tgt.m_numDelaySlots =
            std::max(tgt.m_numDelaySlots,
                     static_cast<unsigned>(NeuronGroup::slotsForDelay(sg->backPropDelaySteps())));
        if (sg->connectivity()) {
            const auto& c = *sg->connectivity();
            checkParams(sg->name(), "connectivity", c.snippet, c.params, num);
            if (!c.snippet.calcMaxRowLength)
                throw ModelError(where(sg->name(), "connectivity") + "initialiser '" +
                                 c.snippet.name + "' has no calcMaxRowLength");
            // Rows may hold multapses (initialisers with replacement), so the bound is the
            // initialiser's own and is not clipped to the target size.
            sg->m_maxRowLength =
                sg->m_maxConnections > 0
                    ? sg->m_maxConnections
                    : std::max(1u, c.snippet.calcMaxRowLength(
                                       sg->source().size(), sg->target().size(),
                                       contexts::evaluateParams(c.snippet, c.params, m_dt)));
        }
        if (sg->toeplitz()) {
            sg->m_convGeometry = toeplitzGeometry(sg->name(), *sg->toeplitz(), sg->source().size(),
                                                  sg->target().size());
            if (sg->learnsPost())
                throw ModelError(where(sg->name(), postLearningField(*sg)) +
                                 "a Toeplitz group has no postsynaptic learning: its weights are "
                                 "shared by every position of the kernel");
        }
        if (sg->blockSparse()) checkBlockSparse(*sg);
        if (matrixTraits(sg->matrixType()).procedural) {
            if (sg->learnsPost())
                throw ModelError(where(sg->name(), postLearningField(*sg)) +
                                 "a Procedural group has no postsynaptic learning: it stores no "
                                 "synapses to walk by target");
            for (const auto& [var, init] : sg->wu().varInits)
                if (init.hasValues())
                    throw ModelError(where(sg->name(), "vars") + "variable '" + var +
                                     "' is given as values, but a Procedural group stores no "
                                     "synapses to hold them (give an initialiser, or use Sparse)");
            if (!sg->connectivity()->snippet.preCalcRowLengthCode.empty())
                throw ModelError(where(sg->name(), "connectivity") + "initialiser '" +
                                 sg->connectivity()->snippet.name +
                                 "' draws its row lengths together (preCalcRowLengthCode), but a "
                                 "Procedural group regenerates each row on its own; use Sparse");
            // A spike's row is generated into a buffer private to the thread (stack or GPU
            // private memory), which a bound this large would overflow.
            if (sg->maxRowLength() > SynapseGroup::kMaxProceduralRowLength)
                throw ModelError(where(sg->name(), "connectivity") + "rows of up to " +
                                 std::to_string(sg->maxRowLength()) +
                                 " synapses; a Procedural group generates at most " +
                                 std::to_string(SynapseGroup::kMaxProceduralRowLength) +
                                 " per spike (use Sparse, or fewer targets per row)");
        }
        checkSynapseSizes(*sg, m_batchSize);
    }
    for (auto& cs : m_currentSources) {
        const auto& b = cs->bound();
        checkParams(cs->name(), "params", b.model, b.params, num);
        checkVars(cs->name(), "vars", b.model.vars, b.varInits, b.model.name, false, num);
        checkDynamic(cs->name(), b.model, b.params, b.dynamicParams, m_dt);
    }
    finaliseCustomUpdates();
    finaliseConnectivityUpdates();
    // Every code field is scanned here and only here; later passes read the kept results.
    m_analysis = analysis::analyse(*this);
    checkLayoutUses(*this, *m_analysis);
    checkBufferReferences(*this, *m_analysis);
    for (auto& sg : m_synapseGroups)
        sg->m_matrixPropagation =
            sg->blockSparse() && usesMatrixPropagation(*this, *sg, *m_analysis);
    markSpikeTimeReaders();
    markDelayedReaders();
    m_finalised = true;
}

} // namespace spikeforge
