#pragma once
// The naming rule (docs/names.md) applied to a whole model: every name that can reach generated
// code is a safe identifier and means one thing within the code fields that can see it.
#include "spikeforge/model.hpp"

#include <set>
#include <string>

namespace spikeforge::names {

// Names with a meaning in some code field (src/model/contexts.cpp, docs/snippets.md "Names
// each field sees"): no model may declare them, and a field that lacks one says so.
const std::set<std::string>& builtinNames();

// Throws ModelError "<what> '<name>' <problem>" when identifierProblem(name) finds one.
void checkIdentifier(const std::string& name, const std::string& what);

// Checks every snippet struct of every group (parameters, derived parameters, EGPs, variables,
// references, initialisers) against the rule and against the other names of its scopes.
void checkModelNames(const Model& model);

} // namespace spikeforge::names
