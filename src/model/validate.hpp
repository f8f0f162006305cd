#pragma once
// Checks shared by the groups' and the custom updates' validation (model.cpp).
#include "spikeforge/model.hpp"
#include "spikeforge/snippets.hpp"

#include <set>

namespace spikeforge {

// What parameter values are checked against: derived parameters are evaluated with dt [ms] and
// every value must be representable in the model precision.
struct Numerics {
    double dt;
    Precision precision;
};

// Every declared parameter has a value, every value names a declared parameter, and the values
// pass checkValues.
void checkParams(const std::string& group, const std::string& field, const SnippetBase& snippet,
                 const ParamValues& values, const Numerics& num);
// Every variable has a valid type and an initialiser, every initialiser names a variable, its
// parameters pass checkParams and a constant initial value fits the variable's type.
void checkVars(const std::string& group, const std::string& field, const std::vector<VarDecl>& vars,
               const VarInitMap& inits, const std::string& model, bool synaptic,
               const Numerics& num);
// Dynamic parameters exist and feed no derived parameter.
void checkDynamic(const std::string& group, const SnippetBase& snippet, const ParamValues& values,
                  const std::set<std::string>& dynamic, double dt);

// validate_values.cpp: values are finite and representable, pass the snippet's paramDomain, and
// every derived parameter evaluates to a finite, representable value.
void checkValues(const std::string& group, const std::string& field, const SnippetBase& snippet,
                 const ParamValues& values, const Numerics& num);
// A constant initial value fits a variable of snippet type `type`.
void checkInitialValue(const std::string& group, const std::string& field, const VarDecl& var,
                       double value, Precision precision);
// Element counts and byte sizes of a group's arrays fit their index types (uint32_t per batch
// element, size_t in all).
void checkNeuronSizes(const NeuronGroup& ng, unsigned batchSize);
void checkSynapseSizes(const SynapseGroup& sg, unsigned batchSize);

// toeplitz.cpp: the shape of a Toeplitz group from its initialiser's parameters, checked against
// the source and target sizes (ModelError naming the group and parameter).
ConvGeometry toeplitzGeometry(const std::string& group, const ToeplitzConnectivityInit& init,
                              unsigned numPre, unsigned numPost);
// Code over a Toeplitz group's shared kernel neither writes it per spike (every position would
// race for one weight) nor names id_pre / id_post in a custom update (a kernel weight has no
// single pair); a Procedural group's per-synapse values, evaluated at each spike, are written by
// no code and referenced by no custom update.
void checkLayoutUses(const Model& m, const analysis::Results& results);
// custom_update_validate.cpp: a custom-update reference to a synapse group's dendritic-delay
// buffer names a group whose code calls addToPostDelay (only then has it one).
void checkBufferReferences(const Model& m, const analysis::Results& results);
// Whether BlockSparse group `sg` propagates in the matrix form (BlockSparseInit::propagation):
// Matrix where the code cannot run in it is a ModelError saying why; Auto decides by the
// expected tile uses (matrix.cpp).
bool usesMatrixPropagation(const Model& m, const SynapseGroup& sg,
                           const analysis::Results& results);

} // namespace spikeforge
