#pragma once
// Connectivity descriptors: everything the lowering needs to know about one matrix type, in one
// place. A new matrix type (block-sparse, procedural, Toeplitz) is a new descriptor; no pass
// branches on MatrixType (connectivityOf is the one dispatch).
#include "codegen/kernel_plan.hpp"
#include "spikeforge/model.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
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
    // `e`'s substitutions are the synapse code's; a layout rendering code of its own saves them.
    virtual SynapseLoop rowLoop(Lowerer& e) const = 0;
    // Whether per-synapse variables have storage (synapseCount() elements); when not, the
    // lowering evaluates each from its initialiser at element sfSyn (procedural connectivity).
    virtual bool storesSynapseVars() const { return true; }
    // The synapses onto postsynaptic neuron id_post (defines id_pre and sfSyn); sfNpre in scope.
    virtual SynapseLoop columnLoop(Env& env) const = 0;
    // Statements decoding synapse element `id` into id_pre and id_post; they `continue` past
    // padding.
    virtual std::string decode(Env& env) const = 0;
    // Transposable layouts (MatrixTraits::transposable): the element of synapse (id_pre,
    // id_post) in a synapse-shaped variable, and the element of its mirror (id_post, id_pre) in
    // a variable of the transposed group; expressions of id_pre and id_post, "" where the
    // layout cannot be transposed.
    // `target` is the group transposed into (its arrays may be named); elementOf may be "" where
    // transposedElementOf is not (a backend then stores the transposed values element by
    // element instead of by tiles).
    virtual std::string elementOf(Env&) const { return ""; }
    virtual std::string transposedElementOf(Env&, const SynapseGroup& /*target*/) const {
        return "";
    }
    // Statements skipping (`continue`) padding element `i` of a synapse variable; "" if none.
    virtual std::string paddingSkip(Env& env) const = 0;
    // Whether postsynaptic learning needs a column index built at initialisation.
    virtual bool needsColumnIndex() const = 0;
    // Building the connectivity at initialisation (InitBody::setup's names in scope); no steps
    // when it is implicit.
    virtual std::vector<BuildStep> build(Lowerer& e) const = 0;
    // Whether build() reads the layout of an earlier group (InitBody::readsEarlierGroups).
    virtual bool buildReadsEarlierGroups() const { return false; }
    // Block pruning and regrowth (a BlockSparse group naming BlockSparseInit::prunedBy, run by
    // Simulation::pruneBlocks): the steps that score the tiles, choose the weakest, move each to
    // a free place and rebuild what the layout derives from its index; statements that skip
    // (`continue`) element `i` of a synapse-shaped variable unless its tile moved (its values are
    // then initialised again); and the round (uint32_t), which keys the fresh draws. Nothing
    // for a layout that cannot be pruned.
    struct PruneProgram {
        std::vector<BuildStep> steps;
        std::string movedOnly, round;
    };
    virtual std::optional<PruneProgram> pruning(Lowerer&) const { return std::nullopt; }
    // Structural plasticity (custom connectivity updates; MatrixTraits::editableRows): how row
    // sfI (a ForEach step over the sources; InitBody::setup's names in scope) is edited in place.
    // `setup` defines id_pre (uint32_t), sfStride (uint32_t: the most synapses a row holds),
    // sfRow0 (size_t: the element of the row's first slot; slot k is element sfRow0 + k of a
    // synapse-shaped variable), sfTargets (a pointer: sfTargets[k] is slot k's target, an
    // lvalue) and sfLen (uint32_t, the row's length, which the edit changes); `finish` stores
    // sfLen back; `after` rebuilds what the layout derives from its rows (the column index),
    // once every row is edited. For edits from the columns' side: `lengths` (uint32_t per row)
    // and `targets` (per element) are the arrays themselves and `stride` the slots per row, slot
    // k of row i being element i x stride + k. Nothing for a layout whose rows cannot be edited.
    struct RowEditing {
        std::string setup, finish;
        std::vector<BuildStep> after;
        std::string lengths, targets, stride;
    };
    virtual std::optional<RowEditing> rowEditing(Env&) const { return std::nullopt; }

    // ---- host codec ----
    // The descriptor's arrays the codec reads (ConnectivityArray::var), pulled to the host first.
    virtual std::vector<std::string> codecArrays() const = 0;
    // Every synapse in the order synapses are listed (row by row: source, then the layout's order
    // within a row), each as its place in the dense pre x post matrix (pre * numPost + post) and
    // the element of a synapse-shaped variable (synapseCount() of them) holding its values.
    // `read(var)` gives a codecArrays() array as numbers. Several synapses may name one pair
    // where the connectivity allows it (Sparse drawn with replacement, a pooled convolution),
    // and several may share one element (a convolution's kernel weight); padding elements hold
    // none.
    struct SynapseEntry {
        size_t position, element;
    };
    using HostArrayReader = std::function<std::vector<uint64_t>(const std::string& var)>;
    virtual std::vector<SynapseEntry> synapseEntries(const HostArrayReader& read) const = 0;
    // How many synapses there are (synapseEntries without the list).
    virtual uint64_t countSynapses(const HostArrayReader& read) const = 0;
    // The host's own synapses as the layout stores them: the value of every array the
    // descriptor owns and fills (arrays(), for the device) and the element each list entry went
    // to. `list` holds (pre, post) pairs in any order; within a row the list's order is kept.
    // ModelError naming the group for a list the layout cannot hold (a neuron out of range, a
    // row longer than the maximum row length; Dense holds every pair and takes no list).
    struct EncodedSynapses {
        std::vector<std::pair<std::string, std::vector<uint64_t>>> arrays;
        std::vector<size_t> elementOf;
    };
    virtual EncodedSynapses encode(std::span<const std::pair<uint32_t, uint32_t>> list) const = 0;
    // Arrays of the layout the host fills from the model (a user-given layout: BlockSparse's
    // Mask), by name, uploaded before the initialisation kernels run (which then read them);
    // empty for layouts built on the device.
    virtual std::vector<std::pair<std::string, std::vector<uint64_t>>> hostBuiltArrays() const {
        return {};
    }
};

std::unique_ptr<Connectivity> connectivityOf(const SynapseGroup& sg);

// Statements of SynapseLoop::prefetch fetching elements [sfPfRow, sfPfRow + sfPfLen) of
// `pointer` (an expression; elements of C type `elementType`): one SF_PREFETCH per 64-byte line.
std::string prefetchRange(const std::string& pointer, const std::string& elementType);

} // namespace spikeforge::codegen
