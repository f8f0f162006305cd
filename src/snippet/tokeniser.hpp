#pragma once
// Private helpers of the snippet scanner: the tokeniser and the diagnostic formatter. Not part
// of the public interface (see scanner.hpp).
#include "snippet/scanner.hpp"

#include <string>
#include <vector>

namespace spikeforge::snippet::detail {

// Throws ModelError "<group>.<field> line L, column C: <what>[ (did you mean 'x'?)]".
[[noreturn]] void fail(const Context& ctx, int line, int column, const std::string& what,
                       const std::string& suggestion = "");

// Splits `code` into tokens covering every character, so concatenating the token texts gives
// `code` back. Rejects string/character literals, preprocessor lines, malformed numbers and
// characters that have no meaning in C.
std::vector<Token> tokenise(const std::string& code, const Context& ctx);

// True for a decimal floating literal (has '.' or an exponent); hex integers are never floating
// even though they may contain 'e'.
bool isFloatingLiteral(const std::string& number);

// True when a floating literal already ends in a type suffix (f, F, l, L).
bool hasSuffix(const std::string& number);

} // namespace spikeforge::snippet::detail
