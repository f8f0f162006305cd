#pragma once
// Connectivity descriptors: everything the lowering needs to know about one matrix type, in one
// place. A new matrix type (block-sparse, procedural, Toeplitz) is a new descriptor; no pass
// branches on MatrixType (connectivityOf is the one dispatch).
#include "codegen/kernel_plan.hpp"
#include "spikeforge/model.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace spikeforge::codegen {

class Env;
class Lowerer;

// An array a descriptor owns: "<group>.<var>" of `ctype` with `dims` (multiplied).
struct ConnectivityArray {
    std::string var, ctype;
    std::vector<size_t> dims;
};

class Connectivity {
public:
    virtual ~Connectivity() = default;
    // Elements of a synapse-shaped variable (without the batch dimension).
    virtual size_t synapseCount() const = 0;
    // Arrays the descriptor owns (indices, row lengths, column index).
    virtual std::vector<ConnectivityArray> arrays() const = 0;
    // The synapses of presynaptic neuron id_pre (defines id_post and sfSyn); sfNpost in scope.
    virtual SynapseLoop rowLoop(Env& env) const = 0;
    // The synapses onto postsynaptic neuron id_post (defines id_pre and sfSyn); sfNpre in scope.
    virtual SynapseLoop columnLoop(Env& env) const = 0;
    // Statements decoding synapse element `id` into id_pre and id_post; they `continue` past
    // padding.
    virtual std::string decode(Env& env) const = 0;
    // Statements skipping (`continue`) padding element `i` of a synapse variable; "" if none.
    virtual std::string paddingSkip(Env& env) const = 0;
    // Whether postsynaptic learning needs a column index built at initialisation.
    virtual bool needsColumnIndex() const = 0;
    // Building the connectivity at initialisation; none when it is implicit.
    virtual std::optional<ConnectivityBuild> build(Lowerer& e) const = 0;
};

std::unique_ptr<Connectivity> connectivityOf(const SynapseGroup& sg);

} // namespace spikeforge::codegen
