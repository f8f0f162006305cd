#pragma once
// Helpers shared by the built-in model definitions.
#include "spikeforge/errors.hpp"
#include "spikeforge/snippets.hpp"

#include <cmath>
#include <cstdio>
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

// Builds a paramDomain result: each rule records the first violated condition, naming the
// parameter and its value. A parameter without a value is skipped (checkParams reports it).
class Domain {
public:
    explicit Domain(const ParamValues& values) : m_values(values) {}

    Domain& positive(const char* name) {
        return rule(
            name, [](double v) { return v > 0.0; }, "> 0");
    }
    Domain& nonNegative(const char* name) {
        return rule(
            name, [](double v) { return v >= 0.0; }, ">= 0");
    }
    Domain& probability(const char* name) {
        return rule(
            name, [](double v) { return v >= 0.0 && v <= 1.0; }, "in [0, 1]");
    }
    // A whole number in [0, max].
    Domain& count(const char* name, double max) {
        return rule(
            name, [max](double v) { return v >= 0.0 && v <= max && std::floor(v) == v; },
            "a whole number in [0, " + format(max) + "]");
    }
    // Parameter a must not exceed b (strict: a < b).
    Domain& ordered(const char* a, const char* b, bool strict) {
        const auto ia = m_values.find(a), ib = m_values.find(b);
        if (m_problem.empty() && ia != m_values.end() && ib != m_values.end() &&
            !(strict ? ia->second < ib->second : ia->second <= ib->second))
            m_problem = std::string("parameter '") + a + "' (" + format(ia->second) + ") must be " +
                        (strict ? "less than" : "at most") + " '" + b + "' (" + format(ib->second) +
                        ")";
        return *this;
    }
    // A condition on several values, with its own message.
    Domain& require(bool ok, const std::string& message) {
        if (m_problem.empty() && !ok) m_problem = message;
        return *this;
    }
    const std::string& problem() const { return m_problem; }

    static std::string format(double v) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.9g", v);
        return buf;
    }

private:
    template <typename F> Domain& rule(const char* name, F ok, const std::string& what) {
        const auto it = m_values.find(name);
        if (m_problem.empty() && it != m_values.end() && !ok(it->second))
            m_problem = std::string("parameter '") + name + "' must be " + what + " (got " +
                        format(it->second) + ")";
        return *this;
    }

    const ParamValues& m_values;
    std::string m_problem;
};

} // namespace spikeforge::models::detail
