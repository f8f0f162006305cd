#pragma once
// A small, safe arithmetic evaluator for the numeric fields of a TOML config: numbers,
// parameter names, + - * /, unary minus/plus, parentheses and a fixed table of one-argument
// maths functions (round floor ceil sqrt exp log). Nothing else (no user functions, no
// assignment), so a config can never run code.
#include <cstddef>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace spikeforge::cli {

// A malformed or unevaluable expression. `position` is the 0-based offset of the offending
// character in the expression text; `unknownName` is set when the problem is an unknown name,
// so the caller can add a "did you mean".
class ExpressionError : public std::runtime_error {
public:
    ExpressionError(std::size_t position, const std::string& message, std::string unknownName = {});
    std::size_t position() const { return m_position; }
    const std::string& unknownName() const { return m_unknownName; }

private:
    std::size_t m_position;
    std::string m_unknownName;
};

// Resolves a parameter name to its value; std::nullopt when the name is unknown.
using NameLookup = std::function<std::optional<double>(const std::string& name)>;

// Evaluates `text`; throws ExpressionError. The result is always finite.
double evaluateExpression(std::string_view text, const NameLookup& lookup);

// True when `name` is a valid parameter name: [A-Za-z_][A-Za-z0-9_]*.
bool isIdentifier(std::string_view name);

} // namespace spikeforge::cli
