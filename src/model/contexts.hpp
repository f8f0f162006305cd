#pragma once
// The names each code field may use. Model::finalise checks snippets against these contexts and
// the code generator renders them against the same ones, so validation and generation agree.
#include "snippet/scanner.hpp"
#include "spikeforge/model.hpp"

namespace spikeforge::contexts {

// Every code field of the model, with the context it is checked in.
struct CodeField {
    std::string group; // owner group name
    std::string field; // e.g. "simCode", "ps.simCode", "init.V"
    const std::string* code;
    snippet::Context context;
};

snippet::Context neuronContext(const Model& m, const NeuronGroup& ng, const std::string& field);
snippet::Context thresholdContext(const Model& m, const NeuronGroup& ng);
snippet::Context postsynapticContext(const Model& m, const SynapseGroup& sg);
snippet::Context currentSourceContext(const Model& m, const CurrentSource& cs);
// kind: "preSpikeSynCode", "postSpikeSynCode", "synapseDynamicsCode", "preEventSynCode" or
// "postEventSynCode"
snippet::Context synapseContext(const Model& m, const SynapseGroup& sg, const std::string& kind);
// A spike-like event condition of the presynaptic (pre) or postsynaptic neuron: an expression
// of its variables (V_pre or V_post), the weight update's pre (post) variables and parameters.
snippet::Context eventConditionContext(const Model& m, const SynapseGroup& sg, bool pre);
// pre = true: preSpikeCode / preDynamicsCode; false: the post versions
snippet::Context wuNeuronContext(const Model& m, const SynapseGroup& sg, bool pre,
                                 const std::string& field);
// What a variable initialiser runs over, which decides the sizes and indices it may name: one
// per neuron (num_neurons), one per synapse (id_pre, id_post, num_pre, num_post), one per
// element of a shared kernel (num_pre, num_post: no pair owns a kernel weight), or other
// (custom-update variables).
enum class InitShape { Neuron, Synapse, Kernel, Other };
snippet::Context varInitContext(const Model& m, const std::string& group, const std::string& var,
                                const VarInit& init, InitShape shape);
snippet::Context customUpdateContext(const Model& m, const CustomUpdate& cu);
snippet::Context connectivityUpdateContext(const Model& m, const CustomConnectivityUpdate& cc);
snippet::Context columnUpdateContext(const Model& m, const CustomConnectivityUpdate& cc);
snippet::Context rowBuildContext(const Model& m, const SynapseGroup& sg);
snippet::Context preCalcRowLengthContext(const Model& m, const SynapseGroup& sg);

// Every code field of the model (for validation), always in the same order: a field's position
// is its slot among the run-time snippet errors of the model-wide error array
// (codegen::kErrorsArray, at codegen::snippetErrorWord(number of synapse groups, slot)).
std::vector<CodeField> allCodeFields(const Model& m);
size_t codeFieldCount(const Model& m);
size_t codeFieldSlot(const Model& m, const std::string& group, const std::string& field);
CodeField codeFieldAt(const Model& m, size_t slot);

// Parameters plus derived parameters, evaluated with the model's dt.
ParamValues evaluateParams(const SnippetBase& snippet, const ParamValues& params, double dt);

} // namespace spikeforge::contexts
