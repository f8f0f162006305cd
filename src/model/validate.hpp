#pragma once
// Checks shared by the groups' and the custom updates' validation (model.cpp).
#include "spikeforge/snippets.hpp"

namespace spikeforge {

// Every declared parameter has a value and every value names a declared parameter.
void checkParams(const std::string& group, const std::string& field, const SnippetBase& snippet,
                 const ParamValues& values);
// Every variable has a valid type and an initialiser, and every initialiser names a variable.
void checkVars(const std::string& group, const std::string& field,
               const std::vector<VarDecl>& vars, const VarInitMap& inits, const std::string& model,
               bool synaptic);

} // namespace spikeforge
