#pragma once
// Helpers of the expression tests: evaluate a config expression over a fixed parameter table,
// and catch the error it raises.
#include "expression.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace sftest {

using Params = std::map<std::string, double>;

inline double evalWith(const Params& params, const std::string& text) {
    return spikeforge::cli::evaluateExpression(
        text, [&](const std::string& name) -> std::optional<double> {
            const auto it = params.find(name);
            if (it == params.end()) return std::nullopt;
            return it->second;
        });
}

// The ExpressionError `text` raises (a failure, and an error at npos, when it raises none).
inline spikeforge::cli::ExpressionError errorOfWith(const Params& params, const std::string& text) {
    try {
        evalWith(params, text);
    } catch (const spikeforge::cli::ExpressionError& e) {
        return e;
    }
    ADD_FAILURE() << "no ExpressionError for \"" << text << "\"";
    return spikeforge::cli::ExpressionError(std::string::npos, "");
}

} // namespace sftest
