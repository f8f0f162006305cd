#pragma once
// Private passes of the snippet front end (see scanner.hpp for the public interface).
#include "snippet/scanner.hpp"

#include <optional>
#include <string>
#include <vector>

namespace spikeforge::snippet::detail {

// Recursive-descent parser over the significant tokens: builds the tree, nothing more (names
// and types are the checker's). Nesting is bounded by kMaxNesting and expression height by
// kMaxExprDepth, so no input can overflow the stack here or in later passes.
std::shared_ptr<Stmt> parse(const std::vector<Token>& tokens, const Context& ctx);

// Resolves names, types every expression, checks writability, arity, constant array bounds
// and indices, and fills the facts of `out`.
void check(Stmt& program, const Context& ctx, Scanned& out);

// Words of the language (types, statements) and words rejected by name.
bool isTypeWord(const std::string& s);
bool isReservedWord(const std::string& s);

// Value of an integer constant expression (typed by the checker), if it is one.
std::optional<int64_t> constantValue(const Expr& e);

bool isInteger(Type t);
bool isFloating(Type t);
bool isUnsigned(Type t);
int bitWidth(Type t);

} // namespace spikeforge::snippet::detail
