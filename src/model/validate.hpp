#pragma once
// Checks shared by the groups' and the custom updates' validation (model.cpp).
#include "spikeforge/snippets.hpp"

#include <set>

namespace spikeforge {

// Every declared parameter has a value and every value names a declared parameter.
void checkParams(const std::string& group, const std::string& field, const SnippetBase& snippet,
                 const ParamValues& values);
// Every variable has a valid type and an initialiser, and every initialiser names a variable.
void checkVars(const std::string& group, const std::string& field,
               const std::vector<VarDecl>& vars, const VarInitMap& inits, const std::string& model,
               bool synaptic);
// Dynamic parameters exist and feed no derived parameter.
void checkDynamic(const std::string& group, const SnippetBase& snippet, const ParamValues& values,
                  const std::set<std::string>& dynamic, double dt);

} // namespace spikeforge
