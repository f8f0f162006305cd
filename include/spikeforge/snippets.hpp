#pragma once
// Model descriptions: plain structs of names and code strings. Built-in models are values of
// these same types (see models.hpp), so a user-defined model is a first-class citizen.
#include "spikeforge/types.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace spikeforge {

// A state variable. `type` is a snippet-language type: "scalar" (the model precision), "float",
// "double", "int", "unsigned int", "uint8_t" … .
struct VarDecl {
    std::string name;
    std::string type = "scalar";
    VarAccess access = VarAccess::ReadWrite;
};

// Extra global parameter: an array attached to a group, sized and filled from the host.
// `type` is the element type ("scalar", "unsigned int", …).
struct EGPDecl {
    std::string name;
    std::string type = "scalar";
};

// A parameter computed on the host from the others (and dt [ms]) before code generation.
struct DerivedParamDecl {
    std::string name;
    std::function<double(const ParamValues&, double dt)> func;
};

// Common part of every snippet.
struct SnippetBase {
    std::string name;                // shown in diagnostics
    std::vector<std::string> params; // constants (folded into code unless dynamic)
    std::vector<DerivedParamDecl> derivedParams;
    std::vector<EGPDecl> egps;
    // Optional domain of the parameter values (the built-ins set it; user models may): returns ""
    // when `values` are valid, otherwise what is wrong, naming the parameter ("sd must be >= 0,
    // got -1"). Model::finalise calls it for every group and initialiser before any derived
    // parameter or row length is computed from the values; a parameter without a value is
    // reported before it is called.
    std::function<std::string(const ParamValues& values, Precision precision)> paramDomain;
};

// Variable initialiser: `code` assigns `value` for one element. Built-ins: id (element index),
// batch, num_batch, and the random functions rand_uniform(), rand_normal(), rand_exponential(),
// rand_gamma(a), rand_binomial(n, p).
struct InitSnippet : SnippetBase {
    std::string code;
};

// Sparse connectivity initialiser. `rowBuildCode` runs once per presynaptic row (`id_pre`) and
// calls `addSynapse(j)` for each target; `num_pre`, `num_post` and the random functions are
// available. Optional `preCalcRowLengthCode` runs once, serially, before the rows are built and
// fills `preCalcRowLength[i]` for every row i (for initialisers such as FixedNumberTotal whose
// rows are not independent); rowBuildCode may then read `preCalcRowLength[id_pre]`.
// calcMaxRowLength bounds a row's length (it sets the row stride); a row that would exceed it
// is reported as an error at initialisation, never truncated.
struct SparseInitSnippet : SnippetBase {
    std::string rowBuildCode;
    std::string preCalcRowLengthCode;
    std::function<unsigned(unsigned numPre, unsigned numPost, const ParamValues&)> calcMaxRowLength;
};

// Neuron model. simCode advances the state by one step of dt; thresholdConditionCode is an
// expression; resetCode runs after a spike. Built-ins: t, dt, id, batch, Isyn (summed input),
// st (last spike time [ms], -inf before the first), the random functions.
// Per-neuron storage of a neuron model: `slots` values of `type` for every neuron and batch
// element, kept across steps, that the neuron's code reads and writes as name[k] (k checked
// against slots at run time, like an EGP index: an index out of range is reported as an error
// naming the group and field). Stored as an array [batch][neuron][slots] named
// "<group>.<name>" (pull/push/view); trial state, so Simulation::resetState restores it. E.g.
// a ring buffer of each neuron's last spike times.
struct NeuronArrayDecl {
    std::string name;
    std::string type = "scalar";
    uint32_t slots = 1;
    // false: scratch storage the code writes before it reads it in every trial (a buffer whose
    // fill count is a variable, reset with the variables): resetState leaves it as it is and
    // BackendPreferences::keepInitialState keeps no copy of it, which saves a copy of the whole
    // array per trial and its memory (EventProp's spike buffers: 147 MB per copy at SHD size).
    bool trialState = true;
};

struct NeuronModel : SnippetBase {
    std::vector<VarDecl> vars;
    std::vector<NeuronArrayDecl> arrays;
    std::string simCode;
    std::string thresholdConditionCode;
    std::string resetCode;
};

// Postsynaptic model: turns the accumulated input `inSyn` into current with injectCurrent(x) and
// decays it. May read the target neuron's variables by name.
struct PostsynapticModel : SnippetBase {
    std::vector<VarDecl> vars;
    std::string simCode;
};

// Weight update model.
//  preSpikeSynCode   per synapse, for each presynaptic spike (addToPost(x), addToPostDelay(x, d))
//  postSpikeSynCode  per synapse, for each postsynaptic spike ("learn post")
//  synapseDynamicsCode per synapse, every step, spikes or not (graded synapses, gap junctions:
//                    addToPost(x), addToPostDelay(x, d), addToPre(x))
//  preEventThresholdConditionCode a condition on the presynaptic neuron (V_pre, preVars), tested
//                    every step after its simCode: where it holds the neuron emits a spike-like
//                    event of this synapse group (GeNN's spike-like events)
//  preEventSynCode   per synapse, for each presynaptic spike-like event (as preSpikeSynCode)
//  postEventThresholdConditionCode / postEventSynCode   the same for the postsynaptic neuron
//                    (V_post, postVars), its code per synapse as postSpikeSynCode
//  preSpikeCode / postSpikeCode   per neuron, updating preVars / postVars when it spikes
//  preDynamicsCode / postDynamicsCode per neuron, every step
// Synapse code may read V_pre-style neighbour variables (any var of the source neuron with
// suffix _pre, of the target with _post), st_pre, st_post, id_pre, id_post.
struct WeightUpdateModel : SnippetBase {
    std::vector<VarDecl> vars;     // per synapse
    std::vector<VarDecl> preVars;  // per presynaptic neuron
    std::vector<VarDecl> postVars; // per postsynaptic neuron
    std::string preSpikeSynCode;
    std::string postSpikeSynCode;
    std::string synapseDynamicsCode;
    std::string preEventThresholdConditionCode;
    std::string preEventSynCode;
    std::string postEventThresholdConditionCode;
    std::string postEventSynCode;
    std::string preSpikeCode;
    std::string postSpikeCode;
    std::string preDynamicsCode;
    std::string postDynamicsCode;
};

// Current source: injectCurrent(x) adds to the target's Isyn every step.
struct CurrentSourceModel : SnippetBase {
    std::vector<VarDecl> vars;
    std::string injectionCode;
};

// ---- initialisers bound to values -----------------------------------------------------------

// How one variable is initialised: a constant, an InitSnippet with its parameters, or values
// given in the model (GeNN's `vars={"V": array}`). Values are one per element (every batch
// element starts alike) or one per element and batch element ([batch][element]); a per-synapse
// variable takes one per synapse in the order Simulation::synapses lists them (for Dense, row
// by row), a Toeplitz kernel variable one per kernel weight. The runtime copies them in after
// every initialisation (construction, reset), so resetState restores them too.
struct VarInit {
    VarInit() = default;
    VarInit(double constant); // NOLINT: implicit by design, `{"V", -65.0}` reads naturally
    VarInit(InitSnippet snippet, ParamValues params);
    explicit VarInit(std::vector<double> values);

    bool isConstant() const { return m_snippet.code.empty() && !m_hasValues; }
    bool hasValues() const { return m_hasValues; }
    // Whether an initialiser snippet computes it (neither a constant nor given values).
    bool hasSnippet() const { return !m_snippet.code.empty(); }
    double constant() const { return m_constant; }
    const InitSnippet& snippet() const { return m_snippet; }
    const ParamValues& params() const { return m_params; }
    const std::vector<double>& values() const { return m_values; }

private:
    double m_constant = 0.0;
    InitSnippet m_snippet;
    ParamValues m_params;
    std::vector<double> m_values;
    bool m_hasValues = false;
};

using VarInitMap = std::map<std::string, VarInit>;

struct SparseConnectivityInit {
    SparseInitSnippet snippet;
    ParamValues params;
};

// Block-sparse connectivity (MatrixType::BlockSparse): the pre x post matrix cut into b x b
// blocks, of which some hold a dense tile of synapses and the rest none. Sources are cut into
// ceil(pre / b) block-rows, targets into ceil(post / b) block-columns; tiles at the edges are
// cut off at the groups' ends (their missing rows and columns are no synapses). The layout of
// the tiles is drawn at initialisation, on the backend, from the model's seed (the same tiles on
// every backend):
//  Random:        every block-row holds m = round(density x block-columns) tiles (at least 1)
//                 at distinct block-columns drawn uniformly, so each source's row is equally
//                 long.
//  WattsStrogatz: the small-world layout at block level: block-row r holds the m block-columns
//                 nearest its place on the ring of block-columns (r x columns / rows), each
//                 then rewired with probability `rewire` to a uniformly drawn column the row
//                 does not hold yet; again m tiles per block-row.
//  Balanced:      random with an even load: exactly m tiles in every block-row and every
//                 block-column (a random relabelling of a circulant block pattern: rows and
//                 columns permuted, the offsets a random m-subset). Needs as many block-rows as
//                 block-columns (source and target of equal size, e.g. a recurrent layer).
//  Mask:          the tiles the user gives, `blocks` as (block-row, block-column) pairs, any
//                 number per block-row (density is not used), stored as block-CSR.
//  BarabasiAlbert: preferential attachment at block level (Barabasi & Albert 1999), a
//                 scale-free block graph: block-nodes 0..m a clique, then each further one
//                 joined to `attachments` (m) distinct earlier ones drawn with probability
//                 proportional to their degree; every edge {i, j} is the tiles (i, j) and (j, i)
//                 (no diagonal). Needs as many block-rows as block-columns; built by the host
//                 from the model's seed (density is not used; about 2m / block-columns) and
//                 stored as block-CSR, so hubs cost only their own tiles.
//  Transposed:    the transpose of the BlockSparse group named `transposeOf` (added before this
//                 one, with this group's target as its source and this group's source as its
//                 target, the same block size): tile (r, c) here for each of its tiles (c, r),
//                 built on the backend from its index, stored as block-CSR. A custom update may
//                 transpose a variable of that group into this one (VarReference's transpose).
enum class BlockLayout { Random, WattsStrogatz, Balanced, Mask, BarabasiAlbert, Transposed };
// How a BlockSparse group propagates spikes (docs/block-sparse.md, "Event-driven and matrix
// forms"). EventDriven walks each spike's row: work in proportion to the spikes. Matrix walks the
// tiles once per step and applies each to every batch element whose sources in the tile's
// block-row spiked, summing those rows in registers before adding them to the targets: the
// product of the batch's 0/1 spike matrix with the block-sparse weights, each tile read once per
// step however many batch elements use it. It needs synapse code whose only effect is addToPost
// (no other assignment, addToPre, addToPostDelay or random numbers: then order does not matter)
// and no axonal delay; the two give the same input up to float rounding (exactly when the sums
// are exact). Auto picks Matrix for a batch (2 or more) in which a block-row is expected to
// have at least kMatrixRowsPerTile sources spiking per step (b x p >= 6, p = expectedRate x dt
// the chance a source spikes in a step: where it measured faster on the cpu,
// benchmarks/layouts/block_matrix.cpp) and the code allows it, else EventDriven.
enum class Propagation { Auto, EventDriven, Matrix };
inline constexpr double kMatrixRowsPerTile = 6.0;
// The block layouts and propagation forms by the names configs and the Python module use
// ("random", "watts_strogatz", …; "auto", "event_driven", "matrix"), in declaration order.
const std::vector<std::pair<std::string, BlockLayout>>& blockLayoutNames();
const std::vector<std::pair<std::string, Propagation>>& propagationNames();
struct BlockSparseInit {
    unsigned blockSize = 16; // b: 8, 16 or 32
    BlockLayout layout = BlockLayout::Random;
    double density = 0.1; // fraction of block positions holding a tile, (0, 1]
    double rewire = 0.0;  // WattsStrogatz: rewiring probability, [0, 1]
    std::vector<std::pair<uint32_t, uint32_t>> blocks = {}; // Mask: (block-row, block-column)
    // Set: the group can be pruned (Simulation::pruneBlocks) by the norms of its tiles in this
    // per-synapse variable (a float or double one, "g" say). Pruning removes the tiles of smallest
    // norm and grows as many at free block-columns of the same block-rows, on the device; the
    // kernels for it are generated only for groups that name a variable here.
    std::string prunedBy = "";
    unsigned attachments = 0;     // BarabasiAlbert: m, >= 1 and below the block-rows
    std::string transposeOf = ""; // Transposed: the group this one is the transpose of
    Propagation propagation = Propagation::Auto;
    // For Auto: the mean rate of the sources [Hz]; 0 (unknown) keeps the event-driven form.
    double expectedRate = 0.0;
};

// A convolution as connectivity (GeNN's TOEPLITZ): images are stored row by row with the channel
// fastest, neuron (y * width + x) * channels + c, and the kernel as [kh][kw][in channel][out
// channel], so a per-synapse variable of a Toeplitz group has kh * kw * in * out elements, one per
// kernel weight, shared by every position. Parameters (whole numbers):
//  Conv2D:        conv_kh, conv_kw, conv_ih, conv_iw, conv_ic, conv_oc; optional conv_sh,
//                 conv_sw (stride, 1), conv_padh, conv_padw (zero padding, 0), conv_oh, conv_ow
//                 (checked against the output size the others give).
//  AvgPoolConv2D: average pooling of the source image (pool_kh, pool_kw window, pool_sh, pool_sw
//                 stride, pool_ih, pool_iw, pool_ic the source), then Conv2D of the pooled image
//                 (conv_kh, conv_kw, conv_oc and the optional ones above; conv_ic is pool_ic).
// The target group must have conv_oh * conv_ow * conv_oc neurons, the source the input image's.
enum class ToeplitzKind { Conv2D, AvgPoolConv2D };
struct ToeplitzConnectivityInit {
    ToeplitzKind kind = ToeplitzKind::Conv2D;
    ParamValues params;
};

} // namespace spikeforge
