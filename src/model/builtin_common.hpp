#pragma once
// Helpers shared by the built-in model definitions.
#include "spikeforge/errors.hpp"
#include "spikeforge/snippets.hpp"

#include <string>

namespace spikeforge::models::detail {

// A parameter's value for a derived-parameter function; a missing one is the user's error.
inline double param(const ParamValues& values, const char* name, const char* model) {
    const auto it = values.find(name);
    if (it == values.end()) {
        throw ModelError(std::string(model) + ": parameter '" + name +
                         "' has no value (needed by a derived parameter)");
    }
    return it->second;
}

inline VarDecl var(const char* name, const char* type = "scalar",
                   VarAccess access = VarAccess::ReadWrite) {
    return VarDecl{name, type, access};
}

} // namespace spikeforge::models::detail
