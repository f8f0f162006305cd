#pragma once
// The snippet scanner: tokenises a user code string, checks every identifier against the names
// the context declares, rejects writes to read-only names and unsupported C++ constructs, and
// renders the code for a backend with names substituted, floating literals suffixed for the
// model precision and a #line directive pointing at the user's snippet.
#include "spikeforge/errors.hpp"
#include "spikeforge/types.hpp"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace spikeforge::snippet {

enum class TokenKind { Identifier, Number, Operator, Whitespace, Comment };

struct Token {
    TokenKind kind;
    std::string text;
    int line;   // 1-based, in the user's string
    int column; // 1-based
};

// What a name means inside one code field.
enum class NameKind {
    ReadOnly,  // parameters, read-only variables, built-ins such as t, dt, id
    ReadWrite, // variables the code may assign
    Function, // callable built-ins (addToPost, rand_uniform, injectCurrent, …) and maths functions
};

struct Context {
    std::string group; // e.g. "Exc" — used in every diagnostic
    std::string field; // e.g. "simCode"
    std::map<std::string, NameKind> names;
    Precision precision = Precision::Float;
};

struct Scanned {
    std::vector<Token> tokens;             // every token, whitespace and comments included
    std::set<std::string> referencedNames; // names from Context::names that the code uses
    std::set<std::string> assignedNames;   // ReadWrite names the code assigns
};

// Throws ModelError: "<group>.<field> line L, column C: <what> [did you mean 'x'?]".
// Accepts C99 statements: declarations of locals (scalar, float, double, int, unsigned, bool,
// int32_t, uint32_t, … with const), if/else, for, while, do, switch/case/break/continue,
// return-free code, arithmetic, comparisons, ternaries, array indexing, calls to Function names
// and the C maths library (exp, log, sqrt, fmin, …; see mathFunctions()).
// Rejects: unknown identifiers, string and character literals, preprocessor lines, `::`, `->`,
// and C++-only or unsafe keywords (new, delete, class, template, goto, asm, static, auto, …).
Scanned scan(const std::string& code, const Context& ctx);

// Renders scanned code. Each identifier found in `substitutions` is replaced by its value;
// unsuffixed floating literals get an `f` suffix when precision is Float; when `lineLabel` is
// non-empty, the output starts with `#line 1 "<lineLabel>"` so compiler diagnostics point at the
// user's snippet (line breaks are preserved so line numbers stay right).
std::string render(const Scanned& scanned, const std::map<std::string, std::string>& substitutions,
                   Precision precision, const std::string& lineLabel);

// The C maths functions snippets may call (callable in C++, CUDA and OpenCL C alike).
const std::set<std::string>& mathFunctions();

// Levenshtein-closest name within a small distance, or "" — for "did you mean".
std::string closestName(const std::string& name, const std::vector<std::string>& candidates);

} // namespace spikeforge::snippet
