// Synapses of any matrix type through the connectivity's host codec
// (codegen::Connectivity::synapseEntries): the (pre, post) list, per-synapse values and the
// dense pre x post views. Nothing here knows how a layout stores its synapses.
#include "codegen/connectivity.hpp"
#include "model/var_refs.hpp"
#include "runtime/simulation_impl.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace spikeforge {

namespace {

using codegen::Connectivity;

// The host codec's view of one synapse group: each synapse's pair in the pre x post matrix and
// the element of its synapse-shaped variables holding its values.
struct SynapseMap {
    const SynapseGroup* group = nullptr;
    size_t numPre = 0, numPost = 0;
    size_t elements = 0; // of a synapse-shaped variable, per batch element
    std::vector<Connectivity::SynapseEntry> entries;
};

// Pulls the arrays the layout's codec reads (a sync point) and returns the reader of them.
Connectivity::HostArrayReader pullCodecArrays(Simulation::Impl& s, const std::string& name,
                                              const Connectivity& layout) {
    for (const std::string& var : layout.codecArrays())
        s.pullArray(s.array(name, var));
    s.errors->check(s.step);
    return [&s, name](const std::string& var) {
        runtime::HostArray& a = s.array(name, var);
        const unsigned char* host = s.mirror(a);
        std::vector<uint64_t> out(a.decl.count);
        for (size_t i = 0; i < out.size(); i++)
            out[i] =
                static_cast<uint64_t>(codegen::loadNumber(host + i * a.elementSize(), a.type()));
        return out;
    };
}

SynapseMap synapseMap(Simulation::Impl& s, const std::string& name) {
    SynapseMap map;
    map.group = &s.model.synapseGroup(name); // ModelError naming the group (with a suggestion)
    map.numPre = map.group->source().size();
    map.numPost = map.group->target().size();
    const auto layout = codegen::connectivityOf(*map.group);
    map.elements = layout->synapseCount();
    map.entries = layout->synapseEntries(pullCodecArrays(s, name, *layout));
    return map;
}

// The offset of batch element `batch` in a weight-update variable of the group (0 when the
// batch shares it); ModelError for a variable that is not one, or a batch out of range.
size_t batchOffset(Simulation::Impl& s, const SynapseMap& map, const std::string& var,
                   unsigned batch) {
    const SynapseGroup& g = *map.group;
    bool found = false;
    std::string names;
    for (const auto& v : g.wu().model.vars) {
        found = found || v.name == var;
        names += (names.empty() ? "" : ", ") + v.name;
    }
    if (!found)
        throw ModelError("synapse group '" + g.name() + "': '" + var +
                         "' is not a weight-update variable (" +
                         (names.empty() ? "it has none" : "its variables: " + names) + ")");
    if (batch >= s.model.batchSize())
        throw ModelError("synapse group '" + g.name() + "': batch element " +
                         std::to_string(batch) + " of a batch of " +
                         std::to_string(s.model.batchSize()));
    const size_t elements = map.elements;
    const size_t count = s.array(g.name(), var).decl.count;
    if (count == elements) return 0; // shared by the batch
    if (count != elements * s.model.batchSize())
        throw InternalError("synapse group '" + g.name() + "': variable '" + var + "' has " +
                            std::to_string(count) + " elements for " + std::to_string(elements) +
                            " synapse slots");
    return size_t(batch) * elements;
}

// `v` converted for an element of type `t`, or ModelError where it cannot be held exactly
// (an integer variable takes whole numbers in its range only).
void checkRepresentable(codegen::CType t, double v, const std::string& where) {
    const auto& info = codegen::info(t);
    if (info.floating) return;
    const double bits = 8.0 * double(info.size) - (info.isSigned ? 1.0 : 0.0);
    const double lo = info.isSigned ? -std::ldexp(1.0, int(bits)) : 0.0;
    const double hi = std::ldexp(1.0, int(bits)) - 1.0;
    if (t == codegen::CType::Bool ? (v != 0.0 && v != 1.0)
                                  : (!std::isfinite(v) || v != std::floor(v) || v < lo || v > hi))
        throw ModelError(where + ": " + std::to_string(v) + " is not a value of type " + info.name);
}

// The Sparse twin that reads Procedural group `name` (built on first use); nullptr for a group
// of any other matrix type.
Simulation* proceduralTwin(Simulation::Impl& s, const std::string& name) {
    const SynapseGroup& sg = s.model.synapseGroup(name); // ModelError naming an unknown group
    if (sg.matrixType() != MatrixType::Procedural) return nullptr;
    auto it = s.proceduralTwins.find(name);
    if (it == s.proceduralTwins.end())
        it = s.proceduralTwins.emplace(name, runtime::makeProceduralTwin(s.model, sg, s.prefs))
                 .first;
    return it->second.sim.get();
}

// Values given in the model for one array (VarInit(values)): `perBatch` of them per batch
// element or one for each element and batch element; each goes to its element, or, with a
// codec `map`, to the element of its synapse (in the order Simulation::synapses lists them).
void fillGiven(Simulation::Impl& s, const std::string& group, const std::string& var,
               const std::vector<double>& values, size_t elements, const SynapseMap* map) {
    runtime::HostArray& a = s.array(group, var);
    const size_t batches = elements ? a.decl.count / elements : 0;
    if (batches == 0 || batches * elements != a.decl.count)
        throw InternalError("group '" + group + "': variable '" + var + "' has " +
                            std::to_string(a.decl.count) + " elements, not a multiple of " +
                            std::to_string(elements));
    const size_t perBatch = map ? map->entries.size() : elements;
    const bool each = values.size() == perBatch * batches;
    if (values.size() != perBatch && !each) {
        const std::string unit = map ? "synapse" : "element";
        throw ModelError(
            "group '" + group + "', variable '" + var + "': " + std::to_string(values.size()) +
            " values given; it takes one per " + unit + " (" + std::to_string(perBatch) + ")" +
            (batches > 1 ? " or one per " + unit + " and batch element (" +
                               std::to_string(perBatch * batches) + ")"
                         : ""));
    }
    s.pullArray(a); // what initialisation wrote (padding, a shared variable's other elements)
    unsigned char* host = s.mirror(a);
    for (size_t b = 0; b < batches; b++)
        for (size_t k = 0; k < perBatch; k++) {
            const double v = values[each ? b * perBatch + k : k];
            const size_t element = map ? map->entries[k].element : k;
            codegen::storeNumber(host + (b * elements + element) * a.elementSize(), a.type(), v);
        }
    s.device->copyToDevice(a.device, host, a.bytes());
}

void fillGivenInits(Simulation::Impl& s, const std::string& group, const VarInitMap& inits,
                    size_t elements, const SynapseMap* map = nullptr) {
    for (const auto& [var, init] : inits)
        if (init.hasValues()) fillGiven(s, group, var, init.values(), elements, map);
}

bool anyGiven(const VarInitMap& inits) {
    return std::any_of(inits.begin(), inits.end(),
                       [](const auto& kv) { return kv.second.hasValues(); });
}

} // namespace

void Simulation::Impl::uploadGivenValues() {
    Impl& s = *this;
    for (const auto& ng : model.neuronGroups()) {
        fillGivenInits(s, ng->name(), ng->bound().varInits, ng->size());
        for (const auto& [var, init] : ng->bound().varInits)
            if (init.hasValues()) refillHistory(ng->name(), var);
    }
    for (const auto& cs : model.currentSources())
        fillGivenInits(s, cs->name(), cs->bound().varInits, cs->target().size());
    for (const auto& sg : model.synapseGroups()) {
        fillGivenInits(s, sg->name(), sg->wuPreVarInits(), sg->source().size());
        fillGivenInits(s, sg->name(), sg->wuPostVarInits(), sg->target().size());
        for (const VarInitMap* inits : {&sg->wuPreVarInits(), &sg->wuPostVarInits()})
            for (const auto& [var, init] : *inits)
                if (init.hasValues()) refillHistory(sg->name(), var);
        fillGivenInits(s, sg->name(), sg->ps().varInits, sg->target().size());
        if (!anyGiven(sg->wu().varInits)) continue;
        const size_t elements = sg->synapseVarElements();
        if (matrixTraits(sg->matrixType()).kernelShaped) { // one value per kernel weight
            fillGivenInits(s, sg->name(), sg->wu().varInits, elements);
            continue;
        }
        const SynapseMap map = synapseMap(s, sg->name());
        fillGivenInits(s, sg->name(), sg->wu().varInits, elements, &map);
    }
    for (const auto& cu : model.customUpdates())
        for (const auto& v : cu->model().vars) {
            const VarInit& init = cu->varInits().at(v.name);
            if (!init.hasValues()) continue;
            const auto own = refs::ownVar(*cu, v, model.batchSize());
            const bool perSynapse = own.elementDim && cu->isWUShaped() &&
                                    !matrixTraits(cu->synapseGroup()->matrixType()).kernelShaped;
            if (!perSynapse) {
                fillGiven(s, cu->name(), v.name, init.values(), own.elements, nullptr);
                continue;
            }
            const SynapseMap map = synapseMap(s, cu->synapseGroup()->name());
            fillGiven(s, cu->name(), v.name, init.values(), map.elements, &map);
        }
}

uint64_t Simulation::synapseCount(const std::string& synapseGroup) {
    if (Simulation* twin = proceduralTwin(*m_impl, synapseGroup))
        return twin->synapseCount(synapseGroup);
    auto& s = *m_impl;
    const auto layout = codegen::connectivityOf(s.model.synapseGroup(synapseGroup));
    return layout->countSynapses(pullCodecArrays(s, synapseGroup, *layout));
}

std::vector<SynapsePair> Simulation::synapses(const std::string& synapseGroup) {
    if (Simulation* twin = proceduralTwin(*m_impl, synapseGroup))
        return twin->synapses(synapseGroup);
    const SynapseMap map = synapseMap(*m_impl, synapseGroup);
    std::vector<SynapsePair> out;
    out.reserve(map.entries.size());
    for (const auto& e : map.entries)
        out.push_back({uint32_t(e.position / map.numPost), uint32_t(e.position % map.numPost)});
    return out;
}

std::vector<double> Simulation::synapseValues(const std::string& synapseGroup,
                                              const std::string& var, unsigned batch) {
    if (Simulation* twin = proceduralTwin(*m_impl, synapseGroup))
        return twin->synapseValues(synapseGroup, var, batch);
    auto& s = *m_impl;
    const SynapseMap map = synapseMap(s, synapseGroup);
    const size_t offset = batchOffset(s, map, var, batch);
    runtime::HostArray& a = s.array(synapseGroup, var);
    s.pullArray(a);
    const unsigned char* host = s.mirror(a);
    std::vector<double> out;
    out.reserve(map.entries.size());
    for (const auto& e : map.entries)
        out.push_back(codegen::loadNumber(host + (offset + e.element) * a.elementSize(), a.type()));
    return out;
}

void Simulation::setSynapseValues(const std::string& synapseGroup, const std::string& var,
                                  std::span<const double> values, unsigned batch) {
    auto& s = *m_impl;
    const SynapseMap map = synapseMap(s, synapseGroup);
    const size_t offset = batchOffset(s, map, var, batch);
    const size_t count = map.entries.size();
    const std::string where = "synapse group '" + synapseGroup + "', variable '" + var + "'";
    if (values.size() != count)
        throw ModelError(where + ": " + std::to_string(values.size()) + " values for " +
                         std::to_string(count) + " synapses");
    runtime::HostArray& a = s.array(synapseGroup, var);
    for (size_t k = 0; k < values.size(); k++)
        checkRepresentable(a.type(), values[k], where + ", synapse " + std::to_string(k));
    // Synapses sharing an element (a convolution's kernel weight) must agree on its value.
    std::vector<size_t> firstOf(map.elements, SIZE_MAX);
    for (size_t k = 0; k < values.size(); k++) {
        size_t& first = firstOf[map.entries[k].element];
        if (first == SIZE_MAX) {
            first = k;
        } else if (values[first] != values[k]) {
            throw ModelError(where + ": synapses " + std::to_string(first) + " and " +
                             std::to_string(k) + " share one weight of the " +
                             matrixTypeName(map.group->matrixType()) + " layout (element " +
                             std::to_string(map.entries[k].element) + ") but are given " +
                             std::to_string(values[first]) + " and " + std::to_string(values[k]));
        }
    }
    s.pullArray(a); // the other batch elements and the padding keep their values
    unsigned char* host = s.mirror(a);
    for (size_t k = 0; k < values.size(); k++)
        codegen::storeNumber(host + (offset + map.entries[k].element) * a.elementSize(), a.type(),
                             values[k]);
    s.device->copyToDevice(a.device, host, a.bytes());
}

std::vector<double> Simulation::synapseMatrix(const std::string& synapseGroup,
                                              const std::string& var, unsigned batch,
                                              double absent) {
    if (Simulation* twin = proceduralTwin(*m_impl, synapseGroup))
        return twin->synapseMatrix(synapseGroup, var, batch, absent);
    auto& s = *m_impl;
    const SynapseMap map = synapseMap(s, synapseGroup);
    const size_t offset = batchOffset(s, map, var, batch);
    runtime::HostArray& a = s.array(synapseGroup, var);
    s.pullArray(a);
    const unsigned char* host = s.mirror(a);
    std::vector<double> out(map.numPre * map.numPost, absent);
    std::vector<bool> seen(out.size(), false);
    for (const auto& e : map.entries) {
        const size_t p = e.position;
        const double v =
            codegen::loadNumber(host + (offset + e.element) * a.elementSize(), a.type());
        out[p] = seen[p] ? out[p] + v : v;
        seen[p] = true;
    }
    return out;
}

void Simulation::setSynapseMatrix(const std::string& synapseGroup, const std::string& var,
                                  std::span<const double> matrix, unsigned batch) {
    auto& s = *m_impl;
    const SynapseMap map = synapseMap(s, synapseGroup);
    const std::string where = "synapse group '" + synapseGroup + "', variable '" + var + "'";
    if (matrix.size() != map.numPre * map.numPost)
        throw ModelError(where + ": a " + std::to_string(map.numPre) + " x " +
                         std::to_string(map.numPost) + " matrix has " +
                         std::to_string(map.numPre * map.numPost) + " values, got " +
                         std::to_string(matrix.size()));
    std::vector<uint32_t> perPair(matrix.size(), 0);
    for (const auto& e : map.entries)
        perPair[e.position]++;
    std::vector<double> values;
    for (size_t p = 0; p < matrix.size(); p++) {
        if (perPair[p] == 1 || matrix[p] == 0.0) continue;
        throw ModelError(
            where + ": the pair from source " + std::to_string(p / map.numPost) + " to target " +
            std::to_string(p % map.numPost) + " has " +
            (perPair[p] == 0 ? "no synapse" : std::to_string(perPair[p]) + " synapses") +
            " for the value " + std::to_string(matrix[p]));
    }
    for (const auto& e : map.entries)
        values.push_back(perPair[e.position] == 1 ? matrix[e.position] : 0.0);
    setSynapseValues(synapseGroup, var, values, batch);
}

std::vector<uint32_t> Simulation::connectivityMatrix(const std::string& synapseGroup) {
    if (Simulation* twin = proceduralTwin(*m_impl, synapseGroup))
        return twin->connectivityMatrix(synapseGroup);
    const SynapseMap map = synapseMap(*m_impl, synapseGroup);
    std::vector<uint32_t> out(map.numPre * map.numPost, 0);
    for (const auto& e : map.entries)
        out[e.position]++;
    return out;
}

void Simulation::setSynapses(const std::string& synapseGroup, std::span<const SynapsePair> list,
                             const std::map<std::string, std::vector<double>>& values) {
    auto& s = *m_impl;
    const SynapseGroup& g = s.model.synapseGroup(synapseGroup);
    const std::string where = "synapse group '" + synapseGroup + "'";
    if (s.step != 0)
        throw ModelError(where +
                         ": synapses can be given only before the first step (this "
                         "simulation is at step " +
                         std::to_string(s.step) + ")");
    // Every check first: nothing changes unless all of it holds.
    for (const auto& [var, given] : values) {
        if (!g.wu().varInits.count(var))
            throw ModelError(where + ": '" + var + "' is not a weight-update variable");
        if (given.size() != list.size())
            throw ModelError(where + ", variable '" + var + "': " + std::to_string(given.size()) +
                             " values for " + std::to_string(list.size()) + " synapses");
        const codegen::CType type = s.array(synapseGroup, var).type();
        for (size_t k = 0; k < given.size(); k++)
            checkRepresentable(type, given[k],
                               where + ", variable '" + var + "', synapse " + std::to_string(k));
    }
    for (const auto& v : g.wu().model.vars)
        if (!values.count(v.name) && !g.wu().varInits.at(v.name).isConstant())
            throw ModelError(where + ": give values for weight-update variable '" + v.name +
                             "' (its initialiser is not a constant)");
    std::vector<std::pair<uint32_t, uint32_t>> pairs;
    pairs.reserve(list.size());
    for (const SynapsePair& syn : list)
        pairs.emplace_back(syn.pre, syn.post);
    const auto layout = codegen::connectivityOf(g);
    const Connectivity::EncodedSynapses encoded = layout->encode(pairs);

    for (const auto& [var, numbers] : encoded.arrays) {
        runtime::HostArray& a = s.array(synapseGroup, var);
        if (numbers.size() != a.decl.count)
            throw InternalError(where + ": encoded '" + var + "' has " +
                                std::to_string(numbers.size()) + " elements for " +
                                std::to_string(a.decl.count));
        unsigned char* host = s.mirror(a);
        for (size_t i = 0; i < numbers.size(); i++)
            codegen::storeNumber(host + i * a.elementSize(), a.type(), double(numbers[i]));
        s.device->copyToDevice(a.device, host, a.bytes());
    }
    const size_t elements = layout->synapseCount();
    for (const auto& v : g.wu().model.vars) {
        runtime::HostArray& a = s.array(synapseGroup, v.name);
        const auto given = values.find(v.name);
        const double fill =
            given == values.end() ? g.wu().varInits.at(v.name).constant() : 0.0; // padding: 0
        unsigned char* host = s.mirror(a);
        for (size_t i = 0; i < a.decl.count; i++)
            codegen::storeNumber(host + i * a.elementSize(), a.type(), fill);
        if (given != values.end())
            for (size_t b = 0; b < a.decl.count / elements; b++)
                for (size_t k = 0; k < list.size(); k++)
                    codegen::storeNumber(host + (b * elements + encoded.elementOf[k]) *
                                                    a.elementSize(),
                                         a.type(), given->second[k]);
        s.device->copyToDevice(a.device, host, a.bytes());
    }
}

void Simulation::pruneBlocks(const std::string& synapseGroup, uint32_t count) {
    auto& s = *m_impl;
    const SynapseGroup& sg = s.model.synapseGroup(synapseGroup); // ModelError if unknown
    const auto kernel = s.pruneKernels.find(synapseGroup);
    if (kernel == s.pruneKernels.end())
        throw ModelError("pruneBlocks: synapse group '" + synapseGroup +
                         "' cannot be pruned: only a BlockSparse group that names the variable "
                         "its tiles are scored by (BlockSparseInit::prunedBy) can");
    const uint64_t tiles = sg.numTiles();
    if (count > tiles)
        throw ModelError("pruneBlocks: synapse group '" + synapseGroup + "' holds " +
                         std::to_string(tiles) + " tiles; cannot prune " + std::to_string(count));
    runtime::HostArray& a = s.array(synapseGroup, "pruneCount");
    unsigned char* host = s.mirror(a);
    codegen::storeNumber(host, a.type(), double(count));
    s.device->copyToDevice(a.device, host, a.bytes());
    s.launchAll({kernel->second});
}

} // namespace spikeforge
