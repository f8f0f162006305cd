#pragma once
// Python values to the public C++ types, one definition each; an unknown name is a ModelError
// listing the known ones (the same words as the TOML front end's).
#include "bindings.hpp"

#include <nanobind/ndarray.h>

#include "spikeforge/model.hpp"
#include "spikeforge/simulation.hpp"
#include "spikeforge/snippets.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace spikeforge::python {

// Variables of a user model from a list of names or (name, type[, access]) tuples; access is
// "ReadWrite" (default), "ReadOnly", "ReadOnlyDuplicate" or "ReadOnlySharedNeuron". `owner`
// names the model in errors.
std::vector<VarDecl> varDecls(nb::handle list, const std::string& owner);
// "dense", "sparse", "toeplitz", "procedural", "block_sparse" (any case; "DENSE" as PyGeNN).
MatrixType matrixTypeOf(const std::string& name);
// "float" or "double".
Precision precisionOf(const std::string& name);
// A block layout and its propagation form from keyword values (spikeforge.block_sparse).
BlockSparseInit blockSparseOf(unsigned blockSize, const std::string& layout, double density,
                              double rewire,
                              const std::vector<std::pair<uint32_t, uint32_t>>& blocks,
                              unsigned attachments, const std::string& transposeOf,
                              const std::string& prunedBy, const std::string& propagation,
                              double expectedRate);
// The common part of a user model (snippets.cpp): parameters, derived parameters (name,
// callable(params, dt)) and extra global parameters (name or (name, type)).
void fillBase(SnippetBase& s, const std::string& name, const std::vector<std::string>& params,
              nb::handle derived, nb::handle egps);
// Extra global parameters (or references to them) from names or (name, type) pairs.
std::vector<EGPDecl> egpDecls(nb::handle list);
// A model given as a built-in's name or as a model object (snippets.cpp).
NeuronModel neuronModelOf(nb::handle model);
WeightUpdateModel weightUpdateModelOf(nb::handle model);
PostsynapticModel postsynapticModelOf(nb::handle model);
CurrentSourceModel currentSourceModelOf(nb::handle model);

// A freshly allocated numpy array of `values` (owned by a capsule), of the given shape.
template <typename T>
nb::ndarray<nb::numpy, T> copyOf(std::vector<T> values, std::vector<size_t> shape) {
    auto* data = new std::vector<T>(std::move(values));
    nb::capsule owner(data, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
    return nb::ndarray<nb::numpy, T>(data->data(), shape.size(), shape.data(), owner);
}
// Spike events as (times [ms], neuron ids, batch elements) numpy arrays.
nb::tuple spikeArrays(const std::vector<SpikeEvent>& events);
// A numpy array of doubles, copied.
std::vector<double> valuesOf(nb::ndarray<const double, nb::c_contig, nb::device::cpu> a);
// The backend and its options (Simulation's keyword arguments).
BackendPreferences preferences(const std::string& backend, int threads, const std::string& cacheDir,
                               bool fastMath, const std::string& device, bool keepInitialState);

} // namespace spikeforge::python
