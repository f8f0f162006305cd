// The snippet checker: resolves every name (block-scoped locals, then the context, then the
// maths functions), types every expression with C's usual arithmetic conversions, and decides
// writes on the typed tree (so `(id) += 1` is as read-only as `id += 1`). Array bounds and
// constant indices into local arrays are checked here; other indices are marked for a run-time
// check. The facts code generation needs are recorded in Scanned as they are found.
#include "snippet/parser.hpp"
#include "snippet/suggest.hpp"

#include "snippet/tokeniser.hpp"

#include <algorithm>
#include <limits>

namespace spikeforge::snippet::detail {

namespace {

Type promote(Type t) {
    return bitWidth(t) < 32 && isInteger(t) ? Type::I32 : t;
}

// C's usual arithmetic conversions (Scalar already resolved).
Type common(Type a, Type b) {
    if (a == Type::F64 || b == Type::F64) return Type::F64;
    if (a == Type::F32 || b == Type::F32) return Type::F32;
    a = promote(a);
    b = promote(b);
    if (a == b) return a;
    if (isUnsigned(a) == isUnsigned(b)) return bitWidth(a) >= bitWidth(b) ? a : b;
    const Type u = isUnsigned(a) ? a : b, s = isUnsigned(a) ? b : a;
    if (bitWidth(u) >= bitWidth(s)) return u;
    return s; // a wider signed type holds every value of the unsigned one
}

const Expr& stripParens(const Expr& e) {
    const Expr* p = &e;
    while (p->kind == ExprKind::Paren)
        p = p->kids[0].get();
    return *p;
}

// Converts a constant to type t; nullopt when C leaves the result undefined or it does not fit.
std::optional<int64_t> convert(int64_t v, Type t) {
    if (t == Type::Bool) return v != 0;
    const int w = bitWidth(t);
    if (isUnsigned(t)) {
        uint64_t u = static_cast<uint64_t>(v);
        if (w < 64) u &= (uint64_t(1) << w) - 1;
        if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
        return static_cast<int64_t>(u);
    }
    if (w < 64 && (v < -(int64_t(1) << (w - 1)) || v >= (int64_t(1) << (w - 1))))
        return std::nullopt;
    return v;
}

std::optional<int64_t> binaryConstant(const std::string& op, int64_t a, int64_t b, Type t) {
    const auto ca = convert(a, t), cb = convert(b, t);
    if (!ca || !cb) return std::nullopt;
    a = *ca;
    b = *cb;
    int64_t r = 0;
    const bool u = isUnsigned(t);
    const auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
    if (op == "+") {
        if (u) return convert(static_cast<int64_t>(ua + ub), t);
        if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
    } else if (op == "-") {
        if (u) return convert(static_cast<int64_t>(ua - ub), t);
        if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
    } else if (op == "*") {
        if (u) return convert(static_cast<int64_t>(ua * ub), t);
        if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
    } else if (op == "/" || op == "%") {
        if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1)) return std::nullopt;
        r = op == "/" ? a / b : a % b;
    } else if (op == "&") {
        r = a & b;
    } else if (op == "|") {
        r = a | b;
    } else if (op == "^") {
        r = a ^ b;
    } else {
        return std::nullopt;
    }
    return convert(r, t);
}

} // namespace

std::optional<int64_t> constantValue(const Expr& e) {
    switch (e.kind) {
    case ExprKind::IntLit:
        if (e.bits > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
            return std::nullopt;
        return static_cast<int64_t>(e.bits);
    case ExprKind::BoolLit:
        return static_cast<int64_t>(e.bits);
    case ExprKind::Paren:
        return constantValue(*e.kids[0]);
    case ExprKind::Cast: {
        if (!isInteger(e.type)) return std::nullopt;
        const auto v = constantValue(*e.kids[0]);
        return v ? convert(*v, e.type) : std::nullopt;
    }
    case ExprKind::Unary: {
        const auto v = constantValue(*e.kids[0]);
        if (!v || !isInteger(e.type)) return std::nullopt;
        if (e.op == "+") return convert(*v, e.type);
        if (e.op == "-") return binaryConstant("-", 0, *v, e.type);
        if (e.op == "~") return convert(~*v, e.type);
        if (e.op == "!") return *v == 0;
        return std::nullopt;
    }
    case ExprKind::Binary: {
        const auto a = constantValue(*e.kids[0]), b = constantValue(*e.kids[1]);
        if (!a || !b) return std::nullopt;
        const Type ct = common(e.kids[0]->type, e.kids[1]->type);
        if (!isInteger(ct)) return std::nullopt;
        const std::string& op = e.op;
        if (op == "&&") return *a != 0 && *b != 0;
        if (op == "||") return *a != 0 || *b != 0;
        if (op == ",") return std::nullopt;
        if (op == "<<" || op == ">>") {
            const auto l = convert(*a, e.type);
            if (!l || *b < 0 || *b >= bitWidth(e.type)) return std::nullopt;
            if (op == ">>") return *l >> *b;
            if (*l < 0) return std::nullopt;
            if (isUnsigned(e.type))
                return convert(static_cast<int64_t>(static_cast<uint64_t>(*l) << *b), e.type);
            if (*b >= 63 || *l > (std::numeric_limits<int64_t>::max() >> *b)) return std::nullopt;
            return convert(*l << *b, e.type);
        }
        if (op == "==" || op == "!=" || op == "<" || op == ">" || op == "<=" || op == ">=") {
            const auto x = convert(*a, ct), y = convert(*b, ct);
            if (!x || !y) return std::nullopt;
            if (op == "==") return *x == *y;
            if (op == "!=") return *x != *y;
            if (op == "<") return *x < *y;
            if (op == ">") return *x > *y;
            if (op == "<=") return *x <= *y;
            return *x >= *y;
        }
        return binaryConstant(op, *a, *b, e.type);
    }
    case ExprKind::Ternary: {
        const auto c = constantValue(*e.kids[0]);
        if (!c || !isInteger(e.type)) return std::nullopt;
        const auto v = constantValue(*e.kids[*c ? 1 : 2]);
        return v ? convert(*v, e.type) : std::nullopt;
    }
    case ExprKind::FloatLit:
    case ExprKind::Name:
    case ExprKind::Call:
    case ExprKind::Index:
    case ExprKind::Postfix:
    case ExprKind::Assign:
        return std::nullopt;
    }
    return std::nullopt;
}

namespace {

class Checker {
public:
    Checker(const Context& ctx, Scanned& out) : m_ctx(ctx), m_out(out) {
        // Only a field with for_each_synapse pays for the merged table.
        if (ctx.synapseLoopNames.empty()) return;
        m_loopNames = ctx.names;
        for (const auto& [n, sym] : ctx.synapseLoopNames)
            m_loopNames[n] = sym;
    }

    void run(Stmt& root) {
        if (m_ctx.expression) {
            if (!root.stmts.empty()) value(*root.stmts[0]->expr);
            return;
        }
        statement(root, false);
    }

private:
    [[noreturn]] void failAt(int line, int column, const std::string& what,
                             const std::string& suggestion = "") const {
        fail(m_ctx, line, column, what, suggestion);
    }
    [[noreturn]] void failAt(const Expr& e, const std::string& what) const {
        failAt(e.line, e.column, what);
    }

    Type resolve(Type t) const {
        if (t != Type::Scalar) return t;
        return m_ctx.precision == Precision::Float ? Type::F32 : Type::F64;
    }

    // ---- statements -----------------------------------------------------------------------------

    void statement(Stmt& s, bool inSwitchBlock) {
        switch (s.kind) {
        case StmtKind::Block:
            m_scopes.emplace_back();
            for (auto& c : s.stmts) {
                if (inSwitchBlock && c->kind == StmtKind::Decl)
                    failAt(c->line, c->column,
                           "a declaration directly inside a switch must be in its own block "
                           "'{ … }' (a case label may not jump over it)");
                if (inSwitchBlock && (c->kind == StmtKind::Case || c->kind == StmtKind::Default))
                    caseLabel(*c);
                else
                    statement(*c, false);
            }
            m_scopes.pop_back();
            return;
        case StmtKind::Expr:
            expr(*s.expr, false, true);
            return;
        case StmtKind::Decl:
            declaration(s);
            return;
        case StmtKind::If:
            value(*s.expr);
            statement(*s.body, false);
            if (s.orElse) statement(*s.orElse, false);
            return;
        case StmtKind::While:
        case StmtKind::DoWhile:
            value(*s.expr);
            loopBody(*s.body);
            return;
        case StmtKind::For:
            m_scopes.emplace_back();
            if (s.init) statement(*s.init, false);
            if (s.expr) value(*s.expr);
            if (s.step) expr(*s.step, false, false);
            loopBody(*s.body);
            m_scopes.pop_back();
            return;
        case StmtKind::Switch:
            switchStatement(s);
            return;
        case StmtKind::Case:
        case StmtKind::Default:
            failAt(s.line, s.column,
                   "'" + std::string(s.kind == StmtKind::Case ? "case" : "default") +
                       "' must be directly inside the block of a switch");
        case StmtKind::Break:
            if (m_loops == 0 && m_switches.empty())
                failAt(s.line, s.column, "'break' outside a loop or switch");
            s.leavesSynapseLoop =
                m_inSynapseLoop && m_loops == m_synapseLoopDepth && m_switches.empty();
            return;
        case StmtKind::Continue:
            if (m_loops == 0) failAt(s.line, s.column, "'continue' outside a loop");
            s.leavesSynapseLoop = m_inSynapseLoop && m_loops == m_synapseLoopDepth;
            return;
        case StmtKind::Empty:
            return;
        case StmtKind::ForEachSynapse:
            synapseLoop(s);
            return;
        }
    }

    // for_each_synapse { … }: once per synapse of the row, with the names only it sees.
    void synapseLoop(Stmt& s) {
        if (m_ctx.synapseLoopNames.empty())
            failAt(s.line, s.column,
                   "'for_each_synapse' is only available in the row or column code of a "
                   "custom connectivity update");
        if (m_inSynapseLoop)
            failAt(s.line, s.column, "'for_each_synapse' cannot be nested in another");
        m_inSynapseLoop = true;
        m_synapseLoopDepth = m_loops + 1; // the loops around the body's own statements
        loopBody(*s.body);
        m_inSynapseLoop = false;
    }

    const std::map<std::string, Symbol>& names() const {
        return m_inSynapseLoop ? m_loopNames : m_ctx.names;
    }

    void loopBody(Stmt& body) {
        ++m_loops;
        // A switch inside a loop: `break` leaves the switch, `continue` the loop.
        auto saved = std::move(m_switches);
        m_switches.clear();
        statement(body, false);
        m_switches = std::move(saved);
        --m_loops;
    }

    struct SwitchState {
        std::set<int64_t> cases;
        bool hasDefault = false;
        Type type = Type::I32;
    };

    void switchStatement(Stmt& s) {
        value(*s.expr);
        if (!isInteger(s.expr->type))
            failAt(*s.expr,
                   "the value of a switch must be an integer, not " + typeText(s.expr->type));
        m_switches.push_back({{}, false, promote(s.expr->type)});
        const int savedLoops = m_loops;
        statement(*s.body, true);
        m_loops = savedLoops;
        m_switches.pop_back();
    }

    void caseLabel(Stmt& s) {
        auto& sw = m_switches.back();
        if (s.kind == StmtKind::Default) {
            if (sw.hasDefault) failAt(s.line, s.column, "a second 'default' in one switch");
            sw.hasDefault = true;
            return;
        }
        value(*s.caseValue);
        const auto v = isInteger(s.caseValue->type) ? constantValue(*s.caseValue) : std::nullopt;
        if (!v) failAt(*s.caseValue, "a case value must be an integer constant");
        const auto c = convert(*v, sw.type);
        if (!c)
            failAt(*s.caseValue, "case value " + std::to_string(*v) + " does not fit the switch");
        if (!sw.cases.insert(*c).second)
            failAt(*s.caseValue, "duplicate case value " + std::to_string(*c));
    }

    void declaration(Stmt& s) {
        s.declType = resolve(s.declType);
        for (Declarator& d : s.decls) {
            if (m_ctx.names.contains(d.name) || m_ctx.synapseLoopNames.contains(d.name))
                failAt(d.line, d.column,
                       "declaration of '" + d.name + "' shadows the model name '" + d.name +
                           "'; choose another name");
            if (functionInfo(d.name))
                failAt(d.line, d.column,
                       "declaration of '" + d.name + "' shadows the function '" + d.name + "'");
            if (m_scopes.back().contains(d.name))
                failAt(d.line, d.column, "'" + d.name + "' is already declared in this block");
            if (d.bound) arrayBound(d);
            if (d.init) {
                if (d.bound)
                    failAt(d.line, d.column,
                           "array '" + d.name + "' must be initialised with a '{ … }' list");
                value(*d.init);
                convertTo(d.init, s.declType);
            }
            if (d.hasList) {
                if (!d.bound)
                    failAt(d.line, d.column, "a '{ … }' list can only initialise an array");
                if (d.initList.size() > d.length)
                    failAt(*d.initList[d.length], "too many initialisers for '" + d.name + "[" +
                                                      std::to_string(d.length) + "]'");
                for (auto& e : d.initList) {
                    value(*e);
                    convertTo(e, s.declType);
                }
            }
            if (s.isConst && !d.init && !d.hasList)
                failAt(d.line, d.column, "const local '" + d.name + "' needs an initialiser");
            d.local = static_cast<int>(m_out.locals.size());
            m_out.locals.push_back({d.name, s.declType, s.isConst, d.length});
            m_scopes.back()[d.name] = d.local;
        }
    }

    void arrayBound(Declarator& d) {
        value(*d.bound);
        const auto v = isInteger(d.bound->type) ? constantValue(*d.bound) : std::nullopt;
        if (!v)
            failAt(*d.bound, "the size of array '" + d.name +
                                 "' must be an integer constant (variable-length arrays are not "
                                 "allowed)");
        if (*v <= 0 || *v > static_cast<int64_t>(kMaxLocalArray))
            failAt(*d.bound, "the size of array '" + d.name + "' must be between 1 and " +
                                 std::to_string(kMaxLocalArray) + ", not " + std::to_string(*v));
        d.length = static_cast<uint32_t>(*v);
        m_elements += d.length;
        if (m_elements > kMaxLocalElements)
            failAt(d.line, d.column,
                   "local arrays hold more than " + std::to_string(kMaxLocalElements) +
                       " elements in all");
    }

    // ---- expressions ----------------------------------------------------------------------------

    std::string typeText(Type t) const { return "'" + typeName(t, m_ctx.precision) + "'"; }

    // An operand: a value of arithmetic type (not void, not an unindexed array).
    void value(Expr& e) { expr(e, false, false); }

    void expr(Expr& e, bool arrayBase, bool allowVoid) {
        switch (e.kind) {
        case ExprKind::IntLit:
            e.type = e.castType;
            break;
        case ExprKind::FloatLit:
            e.type = resolve(e.castType);
            if (e.type == Type::F32 && e.real > std::numeric_limits<float>::max())
                failAt(e, "floating literal is out of range for float");
            break;
        case ExprKind::BoolLit:
            e.type = Type::Bool;
            break;
        case ExprKind::Name:
            name(e, arrayBase);
            break;
        case ExprKind::Call:
            call(e);
            break;
        case ExprKind::Index:
            index(e);
            break;
        case ExprKind::Unary:
        case ExprKind::Postfix:
            unary(e);
            break;
        case ExprKind::Binary:
            binary(e);
            break;
        case ExprKind::Assign:
            assign(e);
            break;
        case ExprKind::Ternary:
            value(*e.kids[0]);
            value(*e.kids[1]);
            value(*e.kids[2]);
            e.type = e.kids[1]->type == e.kids[2]->type ? e.kids[1]->type
                                                        : common(e.kids[1]->type, e.kids[2]->type);
            break;
        case ExprKind::Cast:
            value(*e.kids[0]);
            e.castType = resolve(e.castType);
            e.type = e.castType;
            break;
        case ExprKind::Paren: {
            Expr& k = *e.kids[0];
            expr(k, arrayBase, false);
            e.type = k.type;
            e.isArray = k.isArray;
            e.length = k.length;
            e.lvalue = k.lvalue;
            e.writable = k.writable;
            break;
        }
        }
        if (e.type == Type::Void && !allowVoid)
            failAt(e, "'" + e.name + "(…)' returns nothing: call it as a statement on its own");
    }

    void name(Expr& e, bool arrayBase) {
        for (auto s = m_scopes.rbegin(); s != m_scopes.rend(); ++s) {
            const auto it = s->find(e.name);
            if (it == s->end()) continue;
            const Local& l = m_out.locals[it->second];
            e.ref = Ref::Local;
            e.local = it->second;
            e.type = l.type;
            e.isArray = l.length > 0;
            e.length = l.length;
            e.lvalue = true;
            e.writable = !l.isConst;
            return arrayCheck(e, arrayBase);
        }
        const auto it = names().find(e.name);
        if (it == names().end()) {
            if (functionInfo(e.name))
                failAt(e, "function '" + e.name + "' must be called, as in " + e.name + "(...)");
            unknown(e);
        }
        if (it->second.kind == NameKind::Function)
            failAt(e, "function '" + e.name + "' must be called, as in " + e.name + "(...)");
        e.ref = Ref::Context;
        e.type = resolve(it->second.type);
        e.isArray = it->second.array;
        e.lvalue = true;
        e.writable =
            it->second.kind == NameKind::ReadWrite || it->second.kind == NameKind::WriteOnly;
        if (it->second.kind == NameKind::WriteOnly && &e != m_writeOnly)
            failAt(e, "'" + e.name +
                          "' is write-only (a Broadcast reference): assign it with a plain '=', "
                          "never read it (no +=, ++ or use as a value)");
        m_out.referencedNames.insert(e.name);
        if (&e != m_writeOnly) m_out.readNames.insert(e.name);
        arrayCheck(e, arrayBase);
    }

    void arrayCheck(const Expr& e, bool arrayBase) const {
        if (e.isArray && !arrayBase)
            failAt(e, "array '" + e.name + "' cannot be used as a value: index it, as in " +
                          e.name + "[i]");
        if (!e.isArray && arrayBase) failAt(e, "'" + e.name + "' is not an array");
    }

    [[noreturn]] void unknown(const Expr& e) const {
        std::vector<std::string> c;
        for (const auto& [n, sym] : names())
            c.push_back(n);
        for (const auto& s : m_scopes)
            for (const auto& [n, i] : s)
                c.push_back(n);
        c.insert(c.end(), mathFunctions().begin(), mathFunctions().end());
        std::string what = "unknown identifier '" + e.name + "'";
        if (m_ctx.builtinsElsewhere && m_ctx.builtinsElsewhere->count(e.name))
            what += ": '" + e.name + "' is a built-in name of other code fields, not of " +
                    m_ctx.field + " (docs/snippets.md, \"Names each field sees\")";
        failAt(e.line, e.column, what, closestName(e.name, c));
    }

    bool isLocal(const std::string& n) const {
        return std::any_of(m_scopes.begin(), m_scopes.end(),
                           [&](const auto& s) { return s.contains(n); });
    }

    void call(Expr& e) {
        if (isLocal(e.name)) failAt(e, "'" + e.name + "' is a local variable, not a function");
        // Another spelling of a function (GeNN's gennrand_uniform, …) becomes the function's own
        // name in the tree, which is what the contexts declare and the printer prints.
        if (const FunctionInfo* named = functionInfo(e.name)) e.name = named->name;
        const auto it = names().find(e.name);
        if (it != names().end() && it->second.kind != NameKind::Function)
            failAt(e, "'" + e.name + "' is not a function");
        const FunctionInfo* f = functionInfo(e.name);
        if (it != names().end() && !f)
            throw InternalError("snippet: function '" + e.name + "' has no signature");
        if (it == names().end() && !f) unknown(e);
        if (it == names().end() && !f->maths) {
            if (m_ctx.synapseLoopNames.contains(e.name))
                failAt(e, "'" + e.name + "' can only be called inside 'for_each_synapse { … }'");
            failAt(e, "'" + e.name + "' cannot be called in " + m_ctx.field);
        }
        if (m_inSynapseLoop && e.name == "add_synapse")
            failAt(e, "'add_synapse' cannot be called inside 'for_each_synapse': add synapses "
                      "after the loop (the row is being walked)");
        const auto arity = m_ctx.arities.find(e.name);
        const int wanted = arity == m_ctx.arities.end() ? f->arity : arity->second;
        if (static_cast<int>(e.kids.size()) != wanted)
            failAt(e, "'" + e.name + "' takes " + std::to_string(wanted) + " argument" +
                          (wanted == 1 ? "" : "s") + ", not " + std::to_string(e.kids.size()));
        bool allFloat = true;
        for (size_t i = 0; i < e.kids.size(); i++) {
            value(*e.kids[i]);
            allFloat = allFloat && e.kids[i]->type == Type::F32;
            if ((f->integerArgs >> i & 1u) && !isInteger(e.kids[i]->type))
                failAt(*e.kids[i], "argument " + std::to_string(i + 1) + " of '" + e.name +
                                       "' must be an integer, not " + typeText(e.kids[i]->type));
        }
        e.ref = Ref::Function;
        using R = FunctionInfo::Returns;
        switch (f->returns) {
        case R::Void:
            e.type = Type::Void;
            break;
        case R::Scalar:
            e.type = resolve(Type::Scalar);
            break;
        case R::U32:
            e.type = Type::U32;
            break;
        case R::Bool:
            e.type = Type::Bool;
            break;
        case R::Floating:
            e.type = allFloat ? Type::F32 : Type::F64;
            break;
        case R::SameAsArg:
            // abs of an unsigned value is ambiguous in C++ and meaningless anyway.
            if (isUnsigned(promote(e.kids[0]->type)))
                failAt(*e.kids[0], "'" + e.name + "' of an unsigned value (" +
                                       typeText(e.kids[0]->type) + ") is not allowed");
            e.type = promote(e.kids[0]->type);
            break;
        }
        if (it != names().end()) m_out.referencedNames.insert(e.name);
        m_out.calledFunctions.insert(e.name);
        m_out.usesRng = m_out.usesRng || f->rng;
        m_out.usesAddToPostDelay = m_out.usesAddToPostDelay || e.name == "addToPostDelay";
    }

    void index(Expr& e) {
        Expr& base = *e.kids[0];
        const Expr& root = stripParens(base);
        if (root.kind != ExprKind::Name) failAt(base, "only arrays can be indexed");
        expr(base, true, false);
        Expr& idx = *e.kids[1];
        value(idx);
        if (!isInteger(idx.type))
            failAt(idx, "an array index must be an integer, not " + typeText(idx.type));
        e.type = base.type;
        e.lvalue = true;
        e.writable = base.writable;
        const auto c = constantValue(idx);
        if (base.length > 0 && c) {
            if (*c < 0 || *c >= static_cast<int64_t>(base.length))
                failAt(idx, "index " + std::to_string(*c) + " is out of range for '" + root.name +
                                "' (" + std::to_string(base.length) + " elements)");
            return;
        }
        auto& arrays = m_out.checkedArrays;
        if (std::find(arrays.begin(), arrays.end(), root.name) == arrays.end())
            arrays.push_back(root.name);
        e.checkOrdinal = addCheck({CheckKind::Index, root.name, "", "", idx.line, idx.column});
    }

    int addCheck(RuntimeCheck check) {
        m_out.checks.push_back(std::move(check));
        return static_cast<int>(m_out.checks.size());
    }

    // Decided on the typed tree: whatever the parentheses, only a writable variable or an
    // element of a writable array may be assigned.
    void requireWritable(const Expr& target, const std::string& op) {
        const Expr& t = stripParens(target);
        const Expr* name = &t;
        if (t.kind == ExprKind::Index) name = &stripParens(*t.kids[0]);
        if (name->kind != ExprKind::Name || (t.kind == ExprKind::Name && t.isArray)) {
            if (t.kind == ExprKind::Name)
                failAt(t, "cannot assign to array '" + t.name + "' as a whole");
            failAt(t, "the target of '" + op + "' must be a variable or an array element");
        }
        if (!t.writable) {
            if (name->ref == Ref::Local)
                failAt(*name, "cannot assign to const local '" + name->name + "'");
            failAt(*name, "cannot assign to read-only '" + name->name + "'");
        }
        if (name->ref == Ref::Context) m_out.assignedNames.insert(name->name);
    }

    // `exp = 1` and `addToPost += 1` name a function where a variable is needed.
    void rejectFunctionTarget(const Expr& target) const {
        const Expr& t = stripParens(target);
        if (t.kind != ExprKind::Name || isLocal(t.name)) return;
        const auto it = names().find(t.name);
        const bool fn = it != names().end() ? it->second.kind == NameKind::Function
                                            : functionInfo(t.name) != nullptr;
        if (fn) failAt(t, "cannot assign to function '" + t.name + "'");
    }

    void unary(Expr& e) {
        Expr& k = *e.kids[0];
        if (e.op == "++" || e.op == "--") {
            rejectFunctionTarget(k);
            value(k);
            requireWritable(k, e.op);
            if (k.type == Type::Bool) failAt(k, "'" + e.op + "' cannot be applied to a bool");
            e.type = k.type;
            return;
        }
        value(k);
        if (e.op == "!") {
            e.type = Type::Bool;
            return;
        }
        if (e.op == "~" && !isInteger(k.type))
            failAt(k, "'~' needs an integer, not " + typeText(k.type));
        e.type = promote(k.type);
    }

    // Checks `a op b` for a binary operator (also the operator of a compound assignment) and
    // returns the type the operation is done in.
    Type operation(const std::string& op, const Expr& a, const Expr& b, int line, int column) {
        const Type ct = common(a.type, b.type);
        const bool ints = isInteger(a.type) && isInteger(b.type);
        if ((op == "%" || op == "&" || op == "|" || op == "^" || op == "<<" || op == ">>") && !ints)
            failAt(line, column,
                   "'" + op + "' needs integer operands, not " + typeText(a.type) + " and " +
                       typeText(b.type));
        if ((op == "/" || op == "%") && isInteger(ct)) {
            const auto v = constantValue(b);
            if (v && *v == 0) failAt(b, "integer division by zero");
        }
        if (op == "<<" || op == ">>") {
            const Type lt = promote(a.type);
            const auto v = constantValue(b);
            if (v && (*v < 0 || *v >= bitWidth(lt)))
                failAt(b,
                       "shift by " + std::to_string(*v) + " is out of range for " + typeText(lt));
            return lt;
        }
        return ct;
    }

    void binary(Expr& e) {
        Expr& a = *e.kids[0];
        Expr& b = *e.kids[1];
        value(a);
        value(b);
        const std::string& op = e.op;
        if (op == ",") {
            e.type = b.type;
        } else if (op == "&&" || op == "||" || op == "==" || op == "!=" || op == "<" || op == ">" ||
                   op == "<=" || op == ">=") {
            e.type = Type::Bool;
        } else {
            e.type = operation(op, a, b, e.opLine, e.opColumn);
            e.opType = e.type;
            guardDivision(e, b);
        }
    }

    // Integer `/` and `%` trap (SIGFPE on x86) or give garbage for a zero divisor and for the
    // minimum divided by -1. Unless the divisor is a constant that rules both out, the printer
    // calls a checked helper that returns 0 and reports this site.
    void guardDivision(Expr& e, const Expr& divisor) {
        if ((e.op != "/" && e.op != "%") || !isInteger(e.opType)) return;
        const auto v = constantValue(divisor);
        if (v && *v != 0 && (isUnsigned(e.opType) || *v != -1)) return;
        e.checkOrdinal = addCheck({CheckKind::Division, "", e.op,
                                   typeName(e.opType, m_ctx.precision), e.opLine, e.opColumn});
    }

    // C converts a floating value to an integer type implicitly where one is stored (`i = x`,
    // `int i = x`); the value is undefined for NaN and out of range. An explicit cast node is
    // inserted there, which the printer prints as a saturating conversion.
    static void convertTo(ExprPtr& slot, Type target) {
        if (!isFloating(slot->type) || !isInteger(target) || target == Type::Bool) return;
        wrapInCast(slot, target);
    }

    static void wrapInCast(ExprPtr& slot, Type target) {
        auto cast = std::make_unique<Expr>();
        cast->kind = ExprKind::Cast;
        cast->line = slot->line;
        cast->column = slot->column;
        cast->castType = target;
        cast->type = target;
        cast->depth = slot->depth + 1;
        cast->kids.push_back(std::move(slot));
        slot = std::move(cast);
    }

    static ExprPtr clone(const Expr& e) {
        auto c = std::make_unique<Expr>();
        static_cast<ExprFields&>(*c) = e;
        for (const auto& k : e.kids)
            c->kids.push_back(clone(*k));
        return c;
    }

    // Evaluating it twice is the same as once: no assignment, increment or call inside.
    static bool sideEffectFree(const Expr& e) {
        if (e.kind == ExprKind::Assign || e.kind == ExprKind::Postfix || e.kind == ExprKind::Call)
            return false;
        if (e.kind == ExprKind::Unary && (e.op == "++" || e.op == "--")) return false;
        return std::all_of(e.kids.begin(), e.kids.end(),
                           [](const ExprPtr& k) { return sideEffectFree(*k); });
    }

    // `t op= v` whose operation needs a checked division or a saturating conversion of a
    // floating result into an integer target is spelled out as `t = (T)(t op v)`, which can
    // carry both; the target is then evaluated twice, so it must have no side effects.
    void spellOutCompound(Expr& e) {
        Expr& target = *e.kids[0];
        auto op = std::make_unique<Expr>();
        op->kind = ExprKind::Binary;
        op->op = e.op.substr(0, e.op.size() - 1);
        op->line = target.line;
        op->column = target.column;
        op->opLine = e.opLine;
        op->opColumn = e.opColumn;
        op->type = op->opType = e.opType;
        const bool saturates =
            isFloating(e.opType) && isInteger(target.type) && target.type != Type::Bool;
        const bool divides = (op->op == "/" || op->op == "%") && isInteger(e.opType);
        if (!saturates && !divides) return;
        guardDivision(*op, *e.kids[1]);
        if (!saturates && op->checkOrdinal < 0) return;
        if (!sideEffectFree(target))
            failAt(e.opLine, e.opColumn,
                   "'" + e.op + "' evaluates its target twice here (as 't = t " + op->op +
                       " v', so the operation can be checked at run time): the target must not "
                       "assign, increment or call anything; compute the index in a local first");
        op->kids.push_back(clone(target));
        op->kids.push_back(std::move(e.kids[1]));
        op->depth = std::max(op->kids[0]->depth, op->kids[1]->depth) + 1;
        e.kids[1] = std::move(op);
        if (e.opType != target.type) wrapInCast(e.kids[1], target.type);
        e.op = "=";
        e.opType = target.type;
    }

    void assign(Expr& e) {
        Expr& target = *e.kids[0];
        rejectFunctionTarget(target);
        // `x = …` and `a[i] = …` do not read x or a (the index is read as usual).
        const Expr& t = stripParens(target);
        const Expr& root = t.kind == ExprKind::Index ? stripParens(*t.kids[0]) : t;
        if (e.op == "=") m_writeOnly = &root;
        value(target);
        m_writeOnly = nullptr;
        requireWritable(target, e.op);
        value(*e.kids[1]);
        e.type = target.type;
        if (e.op == "=") {
            e.opType = target.type;
            convertTo(e.kids[1], target.type);
            return;
        }
        e.opType =
            operation(e.op.substr(0, e.op.size() - 1), target, *e.kids[1], e.opLine, e.opColumn);
        spellOutCompound(e);
    }

    const Context& m_ctx;
    Scanned& m_out;
    std::vector<std::map<std::string, int>> m_scopes{1};
    std::vector<SwitchState> m_switches;
    int m_loops = 0;
    uint32_t m_elements = 0;
    const Expr* m_writeOnly = nullptr;         // the name a plain `=` assigns: not a read
    std::map<std::string, Symbol> m_loopNames; // the context's names and its synapse-loop names
    bool m_inSynapseLoop = false;
    int m_synapseLoopDepth = 0; // m_loops directly inside for_each_synapse's body
};

} // namespace

void check(Stmt& program, const Context& ctx, Scanned& out) {
    Checker(ctx, out).run(program);
}

} // namespace spikeforge::snippet::detail
