#pragma once
// The checked tree of a snippet. The parser builds it from tokens, the checker annotates it
// (types, resolved names, writability, run-time index checks) and the printer prints generated
// code from it, so nothing of the user's text reaches a compiler except through this tree.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace spikeforge::snippet {

// The arithmetic types of the language. `Scalar` stands for the model precision until the
// checker resolves it; `Void` is the result of functions such as addToPost.
enum class Type { Void, Bool, I8, U8, I16, U16, I32, U32, I64, U64, F32, F64, Scalar };

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;

enum class ExprKind {
    IntLit,   // value in `bits`, type from its suffix and size as in C
    FloatLit, // value in `real`, `type` F32 (suffix f), F64 or Scalar (no suffix)
    BoolLit,  // true / false
    Name,     // a context name or a local
    Call,     // name(args)
    Index,    // kids[0][kids[1]]
    Unary,    // op kids[0]: + - ! ~ ++ --
    Postfix,  // kids[0] op: ++ --
    Binary,   // kids[0] op kids[1], including `,`
    Assign,   // kids[0] op kids[1]: = += -= …
    Ternary,  // kids[0] ? kids[1] : kids[2]
    Cast,     // (castType) kids[0]
    Paren,    // (kids[0]), kept so the printer mirrors the user's grouping
};

// What a Name or Call refers to, filled by the checker.
enum class Ref { Unresolved, Context, Local, Function };

// Every field of an expression node but its children, so a node can be copied field by field
// (the checker clones an assignment's target when it spells out `t op= v`).
struct ExprFields {
    ExprKind kind;
    int line = 0, column = 0;
    std::string op;               // operator text for Unary/Postfix/Binary/Assign
    int opLine = 0, opColumn = 0; // Binary, Assign: the operator's position
    std::string name;             // Name/Call
    uint64_t bits = 0;
    double real = 0.0;
    Type castType = Type::Void;
    int depth = 1; // height of this subtree, bounded so recursion over it is bounded

    // Checker annotations.
    Type type = Type::Void;
    bool isArray = false;  // an unindexed array (only valid as the base of an Index)
    uint32_t length = 0;   // local array length (0 for context arrays: length known at run time)
    bool lvalue = false;   // names and indexed elements
    bool writable = false; // lvalue that may be assigned
    Ref ref = Ref::Unresolved;
    int local = -1; // Local: index into Scanned::locals
    // Index, Binary `/` `%`: 1-based ordinal of its run-time check (Scanned::checks), else -1.
    int checkOrdinal = -1;
    // Binary, Assign: the type the operation is done in (after C's usual conversions); the
    // printer masks shift counts by its width.
    Type opType = Type::Void;
};

struct Expr : ExprFields {
    std::vector<ExprPtr> kids;
};

struct Declarator {
    std::string name;
    int line = 0, column = 0;
    ExprPtr bound;                 // array bound, or null for a scalar
    uint32_t length = 0;           // checked array length
    ExprPtr init;                  // `= expr`
    std::vector<ExprPtr> initList; // `= {a, b, …}` (arrays only)
    bool hasList = false;
    int local = -1; // index into Scanned::locals
};

enum class StmtKind {
    Expr,
    Decl,
    Block,
    If,
    For,
    While,
    DoWhile,
    Switch,
    Case,
    Default,
    Break,
    Continue,
    Empty,
    ForEachSynapse // for_each_synapse { body }: the synapses of the row (connectivity updates)
};

struct Stmt {
    StmtKind kind;
    int line = 0, column = 0;
    int endLine = 0;            // line of the closing '}' of a block (printing keeps lines aligned)
    ExprPtr expr;               // Expr: the expression; If/While/DoWhile/Switch/For: the condition
    ExprPtr step;               // For: the increment
    StmtPtr init;               // For: the init statement (Decl or Expr), may be null
    StmtPtr body, orElse;       // If/While/DoWhile/For/Switch body; If else branch
    std::vector<StmtPtr> stmts; // Block
    // Decl
    Type declType = Type::Void;
    bool isConst = false;
    std::vector<Declarator> decls;
    // Case
    ExprPtr caseValue;
    // Break, Continue: set by the checker where it leaves an iteration of for_each_synapse
    // itself (not of a loop or switch inside it); the printer prints the loop's own form.
    bool leavesSynapseLoop = false;
};

// A local variable as declared by the snippet.
struct Local {
    std::string name;
    Type type;
    bool isConst;
    uint32_t length; // 0: scalar
};

} // namespace spikeforge::snippet
