#include "convert.hpp"

#include "spikeforge/errors.hpp"

#include <nanobind/stl/string.h>

#include <algorithm>
#include <cctype>

namespace spikeforge::python {

namespace {

// The entry of `table` named `name` (case-insensitive), or a ModelError listing the names.
template <typename T>
T lookup(const std::vector<std::pair<std::string, T>>& table, const std::string& kind,
         const std::string& name) {
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    std::string list;
    for (const auto& [key, value] : table) {
        std::string k = key;
        std::transform(k.begin(), k.end(), k.begin(),
                       [](unsigned char c) { return char(std::tolower(c)); });
        if (k == lower) return value;
        list += (list.empty() ? "" : ", ") + key;
    }
    throw ModelError("unknown " + kind + " '" + name + "' (" + list + ")");
}

VarAccess accessOf(const std::string& name, const std::string& owner) {
    static const std::vector<std::pair<std::string, VarAccess>> kAccess = {
        {"ReadWrite", VarAccess::ReadWrite},
        {"ReadOnly", VarAccess::ReadOnly},
        {"ReadOnlyDuplicate", VarAccess::ReadOnlyDuplicate},
        {"ReadOnlySharedNeuron", VarAccess::ReadOnlySharedNeuron}};
    return lookup(kAccess, "variable access of model '" + owner + "'", name);
}

} // namespace

std::vector<VarDecl> varDecls(nb::handle list, const std::string& owner) {
    std::vector<VarDecl> out;
    for (nb::handle item : list) {
        if (nb::isinstance<nb::str>(item)) {
            out.push_back({nb::cast<std::string>(item), "scalar", VarAccess::ReadWrite});
            continue;
        }
        const nb::tuple t = nb::cast<nb::tuple>(item);
        if (t.size() < 1 || t.size() > 3)
            throw ModelError("model '" + owner +
                             "': a variable is a name or (name, type[, access]), got " +
                             std::to_string(t.size()) + " items");
        VarDecl v{nb::cast<std::string>(t[0]), "scalar", VarAccess::ReadWrite};
        if (t.size() > 1) v.type = nb::cast<std::string>(t[1]);
        if (t.size() > 2) v.access = accessOf(nb::cast<std::string>(t[2]), owner);
        out.push_back(v);
    }
    return out;
}

MatrixType matrixTypeOf(const std::string& name) {
    if (const std::optional<MatrixType> type = matrixTypeNamed(name)) return *type;
    std::string list;
    for (const std::string& known : matrixTypeConfigNames())
        list += (list.empty() ? "" : ", ") + known;
    throw ModelError("unknown matrix type '" + name + "' (" + list + ")");
}

Precision precisionOf(const std::string& name) {
    static const std::vector<std::pair<std::string, Precision>> kPrecisions = {
        {"float", Precision::Float}, {"double", Precision::Double}};
    return lookup(kPrecisions, "precision", name);
}

BlockSparseInit blockSparseOf(unsigned blockSize, const std::string& layout, double density,
                              double rewire,
                              const std::vector<std::pair<uint32_t, uint32_t>>& blocks,
                              unsigned attachments, const std::string& transposeOf,
                              const std::string& prunedBy, const std::string& propagation,
                              double expectedRate) {
    BlockSparseInit b;
    b.blockSize = blockSize;
    b.layout = lookup(blockLayoutNames(), "block layout", layout);
    b.density = density;
    b.rewire = rewire;
    b.blocks = blocks;
    b.attachments = attachments;
    b.transposeOf = transposeOf;
    b.prunedBy = prunedBy;
    b.propagation = lookup(propagationNames(), "propagation", propagation);
    b.expectedRate = expectedRate;
    return b;
}

nb::tuple spikeArrays(const std::vector<SpikeEvent>& events) {
    std::vector<double> times;
    std::vector<uint32_t> ids, batch;
    for (const SpikeEvent& e : events) {
        times.push_back(e.time);
        ids.push_back(e.neuron);
        batch.push_back(e.batch);
    }
    const size_t n = events.size();
    return nb::make_tuple(copyOf(std::move(times), {n}), copyOf(std::move(ids), {n}),
                          copyOf(std::move(batch), {n}));
}

std::vector<double> valuesOf(nb::ndarray<const double, nb::c_contig, nb::device::cpu> a) {
    return std::vector<double>(a.data(), a.data() + a.size());
}

BackendPreferences preferences(const std::string& backend, int threads, const std::string& cacheDir,
                               bool fastMath, const std::string& device, bool keepInitialState) {
    BackendPreferences p;
    p.backend = backend;
    p.threads = threads;
    p.cacheDir = cacheDir;
    p.fastMath = fastMath;
    p.device = device;
    p.keepInitialState = keepInitialState;
    return p;
}

} // namespace spikeforge::python
