#pragma once
// The snippet front end: a closed C99 subset. `scan` tokenises a user code string, parses it into
// a tree, type-checks it against the names the context declares (types, writability, arity) and
// records the facts code generation needs; `render` prints generated code from that checked
// tree, never from the user's text. See docs/snippets.md for the language.
#include "snippet/ast.hpp"
#include "spikeforge/errors.hpp"
#include "spikeforge/types.hpp"

#include <map>
#include <memory>
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
    WriteOnly, // assigned with a plain `=` and never read (Broadcast custom-update references)
    Function,  // callable built-ins (addToPost, rand_uniform, injectCurrent, …); the signature
               // comes from the one function table (functionInfo)
};

// A name of the context with its type. Arrays (extra global parameters, preCalcRowLength) have
// a length known only at run time: every index into them is checked when the code runs.
struct Symbol {
    NameKind kind = NameKind::ReadOnly;
    Type type = Type::Scalar;
    bool array = false;
    Symbol() = default;
    Symbol(NameKind k, Type t = Type::Scalar, bool isArray = false) // NOLINT: implicit on purpose
        : kind(k), type(t), array(isArray) {}
};

struct Context {
    std::string group; // e.g. "Exc" — used in every diagnostic
    std::string field; // e.g. "simCode"
    std::map<std::string, Symbol> names;
    Precision precision = Precision::Float;
    bool expression = false; // the code is one expression (threshold conditions), not statements
    // Built-in names of the language as a whole (names::builtinNames): one that this field lacks
    // is refused saying so, rather than as an unknown word.
    const std::set<std::string>* builtinsElsewhere = nullptr;
    // Names seen only inside `for_each_synapse { … }` (custom connectivity updates: id_post,
    // the per-synapse references, remove_synapse); the statement is refused where it is empty.
    std::map<std::string, Symbol> synapseLoopNames;
    // Functions whose argument count the context sets, overriding the table's (add_synapse: the
    // target and one value per per-synapse reference).
    std::map<std::string, int> arities;
};

// Limits, so no input can exhaust the stack, memory or the compiler.
inline constexpr size_t kMaxSnippetBytes = 64 * 1024;
inline constexpr size_t kMaxTokens = 100000;
inline constexpr int kMaxNesting = 256;          // brackets, blocks and statements
inline constexpr int kMaxExprDepth = 1024;       // height of an expression tree (operator chains)
inline constexpr uint32_t kMaxLocalArray = 4096; // elements of one local array
inline constexpr uint32_t kMaxLocalElements = 16384; // elements of all local arrays of a snippet

// A place in a snippet where generated code checks a value at run time.
enum class CheckKind {
    Index,    // an array index outside [0, n): the element 0 is used instead
    Division, // integer `/` or `%` by zero, or the minimum / -1: the result is 0
};
struct RuntimeCheck {
    CheckKind kind;
    std::string array;    // Index: the array indexed
    std::string op;       // Division: "/" or "%"
    std::string typeName; // Division: the type it is done in ("int", "uint64_t", …)
    int line = 0, column = 0;
};

struct Scanned {
    std::vector<Token> tokens;           // every token, whitespace and comments included
    std::shared_ptr<const Stmt> program; // the checked tree: a Block (or an Expr statement
                                         // for expression fields)
    std::vector<Local> locals;           // declared locals, indexed by Expr::local
    int lines = 1;                       // lines of the user's string
    bool expression = false;             // an expression field (threshold condition)
    Precision precision = Precision::Float;
    // Facts recorded once for code generation.
    std::set<std::string> referencedNames; // names from Context::names that the code uses
    std::set<std::string> readNames;       // those whose value is read (not only assigned by `=`)
    std::set<std::string> assignedNames;   // ReadWrite names the code assigns
    std::set<std::string> calledFunctions; // every function called (built-in or maths)
    bool usesRng = false;                  // calls a rand_* function
    bool usesAddToPostDelay = false;
    // Arrays indexed with a run-time check (each once, in order of first use): the printer
    // needs an element count for each.
    std::vector<std::string> checkedArrays;
    // Every run-time check site: a failing check stores its ordinal (1-based position here) in
    // the field's error slot, so the runtime can name the line and column.
    std::vector<RuntimeCheck> checks;
    bool needsErrorSlot() const { return !checks.empty(); }
};

// Throws ModelError: "<group>.<field> line L, column C: <what> [did you mean 'x'?]".
Scanned scan(const std::string& code, const Context& ctx);
// Debug counter: calls of `scan` in this process so far (thread-safe). Tests use it to prove
// that Model::finalise scans each code field once and later passes never scan again.
uint64_t scanCount();

// How `for_each_synapse { body }` is printed (the lowering of a custom connectivity update
// gives it; one line each, so the user's lines stay in place): begin, the body, end; a `break`
// that leaves the loop itself is printed as breakStatement (a `continue` stays one: begin opens
// a form in which it ends the synapse's iteration).
struct SynapseLoopText {
    std::string begin, end, breakStatement;
};

struct RenderOptions {
    std::map<std::string, std::string> substitutions; // context name → generated expression
    Precision precision = Precision::Float;
    std::string lineLabel; // non-empty: `#line 1 "<label>"` first, so diagnostics name it
    // Context arrays (EGPs, preCalcRowLength) → expression of their element count.
    std::map<std::string, std::string> arraySizes;
    // Expression of a `uint32_t*` where an out-of-range index reports its ordinal; required
    // when the scanned code needsIndexChecks().
    std::string errorFlag;
    // Context name → a statement storing its value back to memory, printed (both in one pair
    // of braces) right after every statement whose whole expression assigns the name (`x = e;`,
    // `x += e;`, `x++;`, `--x;`): the store happens where the value changes, so a path that does
    // not assign it stores nothing. Assignments anywhere else (inside an expression, a for
    // header) are not followed by a store: assignedOutsideStatements lists those names, which
    // the caller must store itself.
    std::map<std::string, std::string> writeThrough;
    SynapseLoopText synapseLoop; // required when the code has for_each_synapse
};

// Context names the code assigns somewhere other than as a whole expression statement (see
// RenderOptions::writeThrough).
std::set<std::string> assignedOutsideStatements(const Scanned& scanned);
// Whether the code has a for, while or do loop (which keeps a compiler from vectorising it).
bool containsLoop(const Scanned& scanned);

// Prints the checked tree. Context names found in `substitutions` are replaced by their value
// (a function's substitution is printed before its parenthesised arguments); locals are printed
// as `u_<name>`; literals are printed from their values (floating literals without a suffix
// take the model precision); each statement stays on its source line.
std::string render(const Scanned& scanned, const RenderOptions& options);
// The same with no array sizes: run-time index checks, if any, are printed against
// `sfSnippetError` (a uint32_t*) and `sfSize_<array>`, names the caller must provide.
std::string render(const Scanned& scanned, const std::map<std::string, std::string>& substitutions,
                   Precision precision, const std::string& lineLabel);

// Signature of a callable function: arity, and what it returns.
struct FunctionInfo {
    enum class Returns { Void, Scalar, U32, Bool, Floating, SameAsArg };
    const char* name;
    int arity;
    Returns returns;
    unsigned integerArgs; // bit i set: argument i must be an integer (addSynapse's j, …)
    bool maths;           // a C maths function, callable in every context
    bool rng;             // draws random numbers
};

// The one table of functions snippets may call; nullptr when `name` is not one. GeNN's
// spellings of the random functions (gennrand_uniform, …) give the function they spell.
const FunctionInfo* functionInfo(const std::string& name);

// The functions that draw random numbers (rand_uniform, …), from the same table: the fields
// with random numbers declare these.
const std::vector<std::string>& randomFunctions();

// The C maths functions snippets may call (callable in C++, CUDA and OpenCL C alike).
const std::set<std::string>& mathFunctions();

// C spelling of a type ("float", "uint32_t"); Scalar resolves to `precision`.
std::string typeName(Type t, Precision precision);
// Parses a variable type of a model declaration ("scalar", "unsigned int", "uint8_t", …);
// throws ModelError naming `what` for anything else.
Type parseTypeName(const std::string& name, const std::string& what);

} // namespace spikeforge::snippet
