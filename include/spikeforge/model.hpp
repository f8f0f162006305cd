#pragma once
// The model: neuron groups, synapse groups and current sources, each holding a snippet struct,
// its parameter values and its variable initialisers. `finalise()` validates everything and
// checks every code string; a Simulation builds from a finalised model.
#include "spikeforge/custom_update.hpp"
#include "spikeforge/errors.hpp"
#include "spikeforge/snippets.hpp"
#include "spikeforge/types.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace spikeforge {

// Dense: every pair; Sparse: rows built by a connectivity initialiser; Toeplitz: a convolution,
// weights shared through a kernel (init::Conv2D, init::AvgPoolConv2D); Procedural: the
// connectivity initialiser's rows regenerated at every spike, nothing stored (GeNN's
// PROCEDURAL): per-synapse variables are read-only and evaluated from their initialisers;
// BlockSparse: b x b dense tiles at block positions drawn at initialisation (BlockSparseInit).
enum class MatrixType { Dense, Sparse, Toeplitz, Procedural, BlockSparse };

// How a GPU backend shares out a synapse group's spike propagation (docs/internals.md, "SIMT
// kernels"): Auto lets the backend's rule choose; Postsynaptic: one thread per target (dense) or
// row slot (sparse); Presynaptic: one or more threads per spike. The CPU backend ignores it.
enum class SpanType { Auto, Postsynaptic, Presynaptic };

// What a matrix type means to the model, answered in one place per fact (a `switch` without
// `default` each, so a new type must answer them all). How a type is stored and iterated in
// generated code is its connectivity descriptor's business (codegen/connectivity.hpp).
struct MatrixTraits {
    bool builtByInitialiser; // its synapses come from a connectivity initialiser (else all pairs)
    bool transposable;       // a custom update may transpose a variable into it
    bool kernelShaped;       // its per-synapse variables hold a shared kernel (Toeplitz)
    bool procedural;         // nothing per synapse is stored: rows and values are regenerated
    bool blockTiled;         // synapses come in b x b tiles at positions of a block layout
    bool editableRows;       // stored ragged rows a custom connectivity update may edit
};
// The one table of matrix types (src/model/matrix.cpp): each type's names and traits, read by
// the model, validation, the runtime, the CLI and the Python module alike. A new type is a new
// enumerator, a row here and its layout (codegen/layouts/); the `switch`es over MatrixType then
// fail to compile until each answers it.
struct MatrixTypeInfo {
    MatrixType type;
    const char* name;       // "BlockSparse": in messages and C++, as GeNN spells it
    const char* configName; // "block_sparse": in TOML configs and Python
    MatrixTraits traits;
};
// Every row, in enumerator order.
const std::vector<MatrixTypeInfo>& matrixTypes();
const MatrixTypeInfo& matrixTypeInfo(MatrixType t);
MatrixTraits matrixTraits(MatrixType t);
// "Dense", "Sparse", "Toeplitz", "Procedural", "BlockSparse"
const char* matrixTypeName(MatrixType t);
// The type `text` names: its config name or its name, in any case ("block_sparse",
// "BlockSparse", "DENSE"); nullopt when none.
std::optional<MatrixType> matrixTypeNamed(const std::string& text);
// The config names, for messages and suggestions: "dense", "sparse", …
std::vector<std::string> matrixTypeConfigNames();

// The snippet analysis Model::finalise records (checked trees and facts of every code field);
// opaque here, read through the library's internal analysis layer.
namespace analysis {
struct Results;
struct Access;
} // namespace analysis

// Why `name` cannot name a model, group, variable, parameter or reference, or "" when it can.
// The rule (docs/names.md): an identifier [A-Za-z_][A-Za-z0-9_]* of at most 64 characters, not a
// keyword of C, C++, OpenCL C or CUDA, not starting with '_', 'sf' or 'SF_', without '__', and
// not a built-in name (t, dt, id, Isyn, …) or maths function of the snippet language.
std::string identifierProblem(const std::string& name);

class NeuronGroup;

// Values bound to a snippet: parameters, variable initialisers and dynamic-parameter marks.
template <typename Snippet> struct Bound {
    Snippet model;
    ParamValues params;
    VarInitMap varInits;
    std::set<std::string> dynamicParams; // changed between steps with Simulation::setDynamicParam
};

class NeuronGroup {
public:
    NeuronGroup(std::string name, unsigned numNeurons, NeuronModel model, ParamValues params,
                VarInitMap varInits);

    const std::string& name() const { return m_name; }
    unsigned size() const { return m_numNeurons; }
    const NeuronModel& model() const { return m_bound.model; }
    const Bound<NeuronModel>& bound() const { return m_bound; }

    // Record spikes into a bit-packed buffer (see Simulation::setRecordingWindow).
    void setSpikeRecording(bool on) { m_spikeRecording = on; }
    bool spikeRecording() const { return m_spikeRecording; }
    // Keep each neuron's last spike time [ms] (the array `st`, read with Simulation::pull) even
    // where no code reads it. Without this it is stored only where code reads it — neuron code
    // `st`, synapse code `st_pre` / `st_post` — as GeNN does: updating it costs every neuron a
    // load and a store each step.
    void setSpikeTimeRequired(bool on) { m_spikeTimeRequested = on; }
    // Whether the group stores `st` (requested, or read by code: filled in by Model::finalise).
    bool spikeTimeRequired() const {
        return m_spikeTimeRequested || m_spikeTimeRead || m_prevSpikeTimeRead;
    }
    // Whether the group stores `prevSt`, the spike time before the last (GeNN's prev_st): where
    // code reads `prev_st`, `prev_st_pre` or `prev_st_post` or a custom update references
    // "prev_st" (filled in by Model::finalise).
    bool prevSpikeTimeRequired() const { return m_prevSpikeTimeRead; }
    // Mark a parameter as dynamic: it becomes a runtime value instead of a folded constant.
    void setParamDynamic(const std::string& param, bool dynamic = true);

    // Slots of the spike queue, filled in by Model::finalise: the longest axonal delay of its
    // outgoing synapse groups or back-propagation delay of its incoming ones [steps] + 2. Step t
    // writes slot t mod numDelaySlots; the slot after it is never read during step t, so a device
    // may clear it for step t + 1 while step t's spikes are still being emitted (the SIMT kernels
    // do, saving a launch per step).
    unsigned numDelaySlots() const { return m_numDelaySlots; }
    // The slots a queue needs for spikes read `delaySteps` steps late.
    static constexpr uint64_t slotsForDelay(uint64_t delaySteps) { return delaySteps + 2; }
    // The names whose past values the group keeps, one copy per queue slot ([batch][slot]
    // [neuron], written by each step's neuron update at the slot its spikes go to): its
    // variables, "st" and "prev_st" that synapse code of an outgoing group with an axonal delay
    // reads as `V_pre` (or an incoming group with a back-propagation delay as `V_post`). Such
    // code sees the values of the step that emitted the delayed spike, as in GeNN. Filled in by
    // Model::finalise.
    const std::set<std::string>& delayedNames() const { return m_delayedNames; }

private:
    friend class Model;
    std::string m_name;
    unsigned m_numNeurons;
    Bound<NeuronModel> m_bound;
    bool m_spikeRecording = false;
    bool m_spikeTimeRequested = false;
    bool m_spikeTimeRead = false;
    bool m_prevSpikeTimeRead = false;
    unsigned m_numDelaySlots = 2;
    std::set<std::string> m_delayedNames;
};

struct WeightUpdateInit {
    WeightUpdateModel model;
    ParamValues params;
    VarInitMap varInits;     // per synapse
    VarInitMap preVarInits;  // per presynaptic neuron
    VarInitMap postVarInits; // per postsynaptic neuron
};

// The shape of a Toeplitz group, worked out by Model::finalise from its parameters.
struct ConvGeometry {
    unsigned inH = 0, inW = 0, inC = 0;                      // the source image
    unsigned poolKH = 1, poolKW = 1, poolSH = 1, poolSW = 1; // 1 x 1 for Conv2D (no pooling)
    unsigned convInH = 0, convInW = 0;                       // the image convolved (after pooling)
    unsigned kh = 0, kw = 0, sh = 1, sw = 1, padH = 0, padW = 0;
    unsigned outH = 0, outW = 0, outC = 0;
    // Elements of a per-synapse variable (the kernel's weights).
    size_t kernelSize() const { return size_t(kh) * kw * inC * outC; }
    // Synapses a spike of one source neuron visits (each pooling window x kernel position x
    // output channel; those outside the output are skipped).
    size_t rowIterations() const { return size_t(poolKH) * poolKW * kh * kw * outC; }
};

struct PostsynapticInit {
    PostsynapticModel model;
    ParamValues params;
    VarInitMap varInits;
};

class SynapseGroup {
public:
    SynapseGroup(std::string name, MatrixType matrixType, unsigned axonalDelaySteps,
                 NeuronGroup* source, NeuronGroup* target, WeightUpdateInit wu, PostsynapticInit ps,
                 std::optional<SparseConnectivityInit> connectivity);

    const std::string& name() const { return m_name; }
    MatrixType matrixType() const { return m_matrixType; }
    unsigned axonalDelaySteps() const { return m_axonalDelaySteps; }
    const NeuronGroup& source() const { return *m_source; }
    const NeuronGroup& target() const { return *m_target; }
    const Bound<WeightUpdateModel>& wu() const { return m_wu; }
    const Bound<PostsynapticModel>& ps() const { return m_ps; }
    const VarInitMap& wuPreVarInits() const { return m_wuPreVarInits; }
    const VarInitMap& wuPostVarInits() const { return m_wuPostVarInits; }
    const std::optional<SparseConnectivityInit>& connectivity() const { return m_connectivity; }
    // Toeplitz groups: the convolution and (after Model::finalise) its shape.
    const std::optional<ToeplitzConnectivityInit>& toeplitz() const { return m_toeplitz; }
    const ConvGeometry& convGeometry() const { return m_convGeometry; }
    // BlockSparse groups: the block layout and (after Model::finalise) its shape: block-rows
    // ceil(pre / b), block-columns ceil(post / b), tiles per block-row (of a layout the host
    // builds, Mask or BarabasiAlbert: the most any block-row holds), tiles in all, and a
    // host-built layout's tiles as (block-row, block-column), sorted.
    const std::optional<BlockSparseInit>& blockSparse() const { return m_blockSparse; }
    unsigned numBlockRows() const;
    unsigned numBlockCols() const;
    unsigned blocksPerRow() const { return m_blocksPerRow; }
    uint64_t numTiles() const { return m_numTiles; }
    const std::vector<std::pair<uint32_t, uint32_t>>& hostBuiltTiles() const {
        return m_hostBuiltTiles;
    }
    // BlockSparse groups, after Model::finalise: whether spikes propagate in the matrix form
    // (BlockSparseInit::propagation, decided from the code, the batch size and the expected rate).
    bool matrixPropagation() const { return m_matrixPropagation; }

    // Dendritic delay: addToPostDelay(x, d) needs a ring of maxDendriticDelaySteps slots.
    void setMaxDendriticDelaySteps(unsigned steps) { m_maxDendriticDelaySteps = steps; }
    unsigned maxDendriticDelaySteps() const { return m_maxDendriticDelaySteps; }
    // Back-propagation delay [steps] (GeNN's back_prop_delay_steps): postsynaptic learning
    // (postSpikeSynCode) runs for target spikes emitted this many steps late, and synapse code
    // reads the target's variables (`V_post`, `st_post`, `prev_st_post`) as they were then.
    void setBackPropDelaySteps(unsigned steps) { m_backPropDelaySteps = steps; }
    unsigned backPropDelaySteps() const { return m_backPropDelaySteps; }
    // Spike-like events (WeightUpdateModel::preEventThresholdConditionCode and the post one):
    // record the presynaptic (postsynaptic) neurons' events of this group into a bit-packed
    // buffer like spikes (Simulation::spikeEvents).
    void setPreEventRecording(bool on) { m_preEventRecording = on; }
    bool preEventRecording() const { return m_preEventRecording; }
    void setPostEventRecording(bool on) { m_postEventRecording = on; }
    bool postEventRecording() const { return m_postEventRecording; }
    // Whether the presynaptic (postsynaptic) side's last event time is kept: where synapse code
    // reads set_pre (set_post). Filled in by Model::finalise.
    bool eventTimeRequired(bool pre) const {
        return pre ? m_preEventTimeRead : m_postEventTimeRead;
    }
    // Whether some code runs per synapse for target spikes or events (postSpikeSynCode or
    // postEventSynCode): such a group walks its synapses by target.
    bool learnsPost() const {
        return !m_wu.model.postSpikeSynCode.empty() || !m_wu.model.postEventSynCode.empty();
    }
    // Whether something walks the group's synapses by target: postsynaptic learning or a
    // custom connectivity update's column code (filled in by Model::finalise).
    bool walkedByColumns() const { return learnsPost() || m_columnEdited; }
    // The weight update's presynaptic (postsynaptic) variables its synapse code reads with an
    // axonal (back-propagation) delay: kept per queue slot of the source (target) and read as
    // they were when the delivered spike was emitted, as in GeNN (NeuronGroup::delayedNames).
    // Filled in by Model::finalise.
    const std::set<std::string>& delayedNames() const { return m_delayedNames; }
    void setWUParamDynamic(const std::string& param, bool dynamic = true);
    // GPU parallelisation of the presynaptic update (like GeNN's setSpanType /
    // setNumThreadsPerSpike). Threads per spike (1 .. kMaxThreadsPerSpike, else ModelError)
    // apply to the presynaptic span and, with SpanType::Auto, choose it; 0 leaves the count to
    // the backend. A span the synapse code cannot run under safely is a ModelError when the model
    // is lowered (e.g. a postsynaptic span for code that writes presynaptic variables).
    static constexpr unsigned kMaxThreadsPerSpike = 1024;
    void setSpanType(SpanType span) { m_spanType = span; }
    SpanType spanType() const { return m_spanType; }
    void setNumThreadsPerSpike(unsigned threads);
    unsigned numThreadsPerSpike() const { return m_numThreadsPerSpike; }
    void setPSParamDynamic(const std::string& param, bool dynamic = true);

    // Sparse: the longest row storage holds (GeNN's setMaxConnections), instead of the bound
    // the connectivity initialiser computes; for connectivity the host gives
    // (Simulation::setSynapses). A row the initialiser draws longer is a ModelError at
    // initialisation, as with its own bound. 0: the initialiser's bound.
    void setMaxConnections(unsigned rowLength) { m_maxConnections = rowLength; }
    unsigned maxConnections() const { return m_maxConnections; }
    // The longest row a Procedural group may generate per spike (its row is built in memory
    // private to one thread); a larger bound is a ModelError at finalise.
    static constexpr unsigned kMaxProceduralRowLength = 16384;
    // Filled in by Model::finalise for Sparse groups: the row stride.
    unsigned maxRowLength() const { return m_maxRowLength; }
    // Synapse slots per presynaptic neuron in storage: every target for Dense, the maximum row
    // length for Sparse (rows are padded to it), the synapses one spike visits for Toeplitz.
    // After finalise.
    unsigned rowStride() const;
    // Elements of a per-synapse variable (without the batch dimension): pre x post (Dense),
    // pre x maximum row length (Sparse), the kernel's weights (Toeplitz), none (Procedural: values
    // are evaluated at each spike). After finalise.
    size_t synapseVarElements() const;
    // Column stride, only for Sparse groups with postSpikeSynCode.
    unsigned maxColLength() const { return m_maxColLength; }

private:
    friend class Model;
    std::string m_name;
    MatrixType m_matrixType;
    unsigned m_axonalDelaySteps;
    NeuronGroup* m_source;
    NeuronGroup* m_target;
    Bound<WeightUpdateModel> m_wu;
    Bound<PostsynapticModel> m_ps;
    VarInitMap m_wuPreVarInits;
    VarInitMap m_wuPostVarInits;
    std::optional<SparseConnectivityInit> m_connectivity;
    std::optional<ToeplitzConnectivityInit> m_toeplitz;
    std::optional<BlockSparseInit> m_blockSparse;
    unsigned m_blocksPerRow = 0;
    uint64_t m_numTiles = 0;
    std::vector<std::pair<uint32_t, uint32_t>> m_hostBuiltTiles;
    bool m_matrixPropagation = false;
    bool m_columnEdited = false; // a custom connectivity update has column code over it
    ConvGeometry m_convGeometry;
    unsigned m_maxDendriticDelaySteps = 1;
    unsigned m_backPropDelaySteps = 0;
    bool m_preEventRecording = false, m_postEventRecording = false;
    bool m_preEventTimeRead = false, m_postEventTimeRead = false;
    std::set<std::string> m_delayedNames;
    SpanType m_spanType = SpanType::Auto;
    unsigned m_numThreadsPerSpike = 0;
    unsigned m_maxRowLength = 0;
    unsigned m_maxConnections = 0;
    unsigned m_maxColLength = 0;
};

class CurrentSource {
public:
    CurrentSource(std::string name, CurrentSourceModel model, NeuronGroup* target,
                  ParamValues params, VarInitMap varInits);
    const std::string& name() const { return m_name; }
    const NeuronGroup& target() const { return *m_target; }
    const Bound<CurrentSourceModel>& bound() const { return m_bound; }
    void setParamDynamic(const std::string& param, bool dynamic = true);

private:
    std::string m_name;
    NeuronGroup* m_target;
    Bound<CurrentSourceModel> m_bound;
};

class Model {
public:
    // Throws ModelError when the name breaks the naming rule (identifierProblem).
    explicit Model(std::string name = "model");
    Model(const Model&) = delete;
    Model& operator=(const Model&) = delete;

    const std::string& name() const { return m_name; }
    void setDT(double dt) { m_dt = dt; } // [ms]
    double dt() const { return m_dt; }
    void setPrecision(Precision p) { m_precision = p; }
    Precision precision() const { return m_precision; }
    void setBatchSize(unsigned b) { m_batchSize = b; }
    unsigned batchSize() const { return m_batchSize; }
    void setSeed(uint64_t seed) { m_seed = seed; }
    uint64_t seed() const { return m_seed; }

    NeuronGroup& addNeuronGroup(const std::string& name, unsigned size, const NeuronModel& model,
                                const ParamValues& params, const VarInitMap& varInits);
    SynapseGroup& addSynapseGroup(const std::string& name, MatrixType matrixType,
                                  unsigned axonalDelaySteps, const std::string& source,
                                  const std::string& target, const WeightUpdateInit& wu,
                                  const PostsynapticInit& ps,
                                  std::optional<SparseConnectivityInit> connectivity = {});
    // A Toeplitz (convolution) group: matrixType must be MatrixType::Toeplitz.
    SynapseGroup& addSynapseGroup(const std::string& name, MatrixType matrixType,
                                  unsigned axonalDelaySteps, const std::string& source,
                                  const std::string& target, const WeightUpdateInit& wu,
                                  const PostsynapticInit& ps,
                                  const ToeplitzConnectivityInit& toeplitz);
    // A block-sparse group: matrixType must be MatrixType::BlockSparse.
    SynapseGroup& addSynapseGroup(const std::string& name, MatrixType matrixType,
                                  unsigned axonalDelaySteps, const std::string& source,
                                  const std::string& target, const WeightUpdateInit& wu,
                                  const PostsynapticInit& ps, const BlockSparseInit& blocks);
    CurrentSource& addCurrentSource(const std::string& name, const CurrentSourceModel& model,
                                    const std::string& target, const ParamValues& params,
                                    const VarInitMap& varInits);

    // Custom updates run by Simulation::customUpdate(updateGroup). Neuron-shaped: every
    // reference names a neuron-shaped variable of one size. WU-shaped: every reference names a
    // synapse-shaped variable of one synapse group.
    CustomUpdate& addCustomUpdate(const std::string& name, const std::string& updateGroup,
                                  const CustomUpdateModel& model, const ParamValues& params,
                                  const VarInitMap& varInits, const VarReferenceMap& varRefs,
                                  const EGPReferenceMap& egpRefs = {});
    CustomUpdate& addCustomUpdateWU(const std::string& name, const std::string& updateGroup,
                                    const CustomUpdateModel& model, const ParamValues& params,
                                    const VarInitMap& varInits, const VarReferenceMap& varRefs,
                                    const EGPReferenceMap& egpRefs = {});
    const std::vector<std::unique_ptr<CustomUpdate>>& customUpdates() const {
        return m_customUpdates;
    }
    // A custom connectivity update (structural plasticity) over Sparse synapse group
    // `synapseGroup`, run by Simulation::customUpdate(updateGroup) (see custom_update.hpp), in
    // GeNN's argument order: initialisers of its own per-synapse, pre and post variables, then
    // the references (varRefs per synapse, preVarRefs / postVarRefs per neuron).
    CustomConnectivityUpdate& addCustomConnectivityUpdate(
        const std::string& name, const std::string& updateGroup, const std::string& synapseGroup,
        const CustomConnectivityUpdateModel& model, const ParamValues& params,
        const VarInitMap& varInits, const VarInitMap& preVarInits, const VarInitMap& postVarInits,
        const VarReferenceMap& varRefs, const VarReferenceMap& preVarRefs = {},
        const VarReferenceMap& postVarRefs = {});
    const std::vector<std::unique_ptr<CustomConnectivityUpdate>>&
    customConnectivityUpdates() const {
        return m_connectivityUpdates;
    }

    NeuronGroup& neuronGroup(const std::string& name);
    const NeuronGroup& neuronGroup(const std::string& name) const;
    SynapseGroup& synapseGroup(const std::string& name);
    const SynapseGroup& synapseGroup(const std::string& name) const;
    const std::vector<std::unique_ptr<NeuronGroup>>& neuronGroups() const { return m_neuronGroups; }
    const std::vector<std::unique_ptr<SynapseGroup>>& synapseGroups() const {
        return m_synapseGroups;
    }
    const std::vector<std::unique_ptr<CurrentSource>>& currentSources() const {
        return m_currentSources;
    }

    // Validates the model and checks every code string, keeping each one's analysis (names
    // read and written, RNG use, …) for code generation; throws ModelError. Idempotent: calling
    // it again re-validates and rebuilds the analysis.
    void finalise();
    bool isFinalised() const { return m_finalised; }

private:
    friend struct analysis::Access;
    void checkNameFree(const std::string& name, const char* what) const;
    NeuronGroup* findNeuronGroup(const std::string& name) const;
    void finaliseCustomUpdates();       // custom_update.cpp
    void finaliseConnectivityUpdates(); // custom_connectivity_update.cpp
    void markSpikeTimeReaders();
    void markDelayedReaders();
    void checkBlockSparse(SynapseGroup& sg);
    const SynapseGroup* transposedSource(const SynapseGroup& sg, const std::string& at) const;
    std::string m_name;
    double m_dt = 0.1; // [ms]
    Precision m_precision = Precision::Float;
    unsigned m_batchSize = 1;
    uint64_t m_seed = 1234;
    bool m_finalised = false;
    std::vector<std::unique_ptr<NeuronGroup>> m_neuronGroups;
    std::vector<std::unique_ptr<SynapseGroup>> m_synapseGroups;
    std::vector<std::unique_ptr<CurrentSource>> m_currentSources;
    std::vector<std::unique_ptr<CustomUpdate>> m_customUpdates;
    std::vector<std::unique_ptr<CustomConnectivityUpdate>> m_connectivityUpdates;
    // Every group's name (one namespace for all kinds), with the group where it is a neuron or
    // synapse group: name checks and lookups in log time (models of 10,000 groups).
    struct NamedGroup {
        NeuronGroup* neuronGroup = nullptr;
        SynapseGroup* synapseGroup = nullptr;
    };
    std::map<std::string, NamedGroup> m_groupsByName;
    // Built by finalise; shared_ptr because the type is incomplete here.
    std::shared_ptr<const analysis::Results> m_analysis;
};

} // namespace spikeforge
