// The snippet printer: generated code from the checked tree. Every operator node is printed in
// parentheses, so the compiler groups exactly as the checker did whatever the substitutions
// expand to; literals are printed from their values; locals get a `u_` prefix so they can never
// meet a generated name; each statement is printed on its source line, so with the leading
// #line directive a compiler diagnostic points at the user's line.
#include "snippet/parser.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

namespace spikeforge::snippet {

namespace {

using detail::isInteger;

bool isWordChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

bool isOperatorChar(char c) {
    return std::string_view("+-*/%<>=!&|^~?:").find(c) != std::string_view::npos;
}

// `#line` labels are printed from validated group and field names; anything else is replaced,
// so no label can end the directive or the string.
std::string safeLabel(const std::string& label) {
    std::string out;
    for (char c : label)
        out += isWordChar(c) || c == '.' ? c : '_';
    return out;
}

const Expr& withoutParens(const Expr& e) {
    const Expr* x = &e;
    while (x->kind == ExprKind::Paren)
        x = x->kids[0].get();
    return *x;
}

// The context name an expression assigns as a whole (`x = e`, `x += e`, `x++`, `--x`), or null.
const Expr* assignedName(const Expr& whole) {
    const Expr& e = withoutParens(whole);
    const bool assigns = e.kind == ExprKind::Assign || e.kind == ExprKind::Postfix ||
                         (e.kind == ExprKind::Unary && (e.op == "++" || e.op == "--"));
    if (!assigns) return nullptr;
    const Expr& target = withoutParens(*e.kids[0]);
    return target.kind == ExprKind::Name && target.ref == Ref::Context ? &target : nullptr;
}

// Every context name assigned within `e` (all of it: `e` is not a whole statement).
void collectAssigned(const Expr& e, std::set<std::string>& out) {
    if (const Expr* n = assignedName(e)) out.insert(n->name);
    for (const auto& k : e.kids)
        collectAssigned(*k, out);
}

// Names assigned other than as a whole expression statement (assignedOutsideStatements).
void collectOutside(const Stmt& s, std::set<std::string>& out) {
    const auto exprs = [&](const ExprPtr& e) {
        if (e) collectAssigned(*e, out);
    };
    switch (s.kind) {
    case StmtKind::Expr:
        // The whole expression's own target is written through; its operands are not.
        if (assignedName(*s.expr)) {
            for (const auto& k : withoutParens(*s.expr).kids)
                collectAssigned(*k, out);
        } else {
            collectAssigned(*s.expr, out);
        }
        return;
    case StmtKind::For:
        // The header's statement and step are printed inside `for (…)`: no store can follow.
        if (s.init) {
            if (s.init->kind == StmtKind::Expr)
                collectAssigned(*s.init->expr, out);
            else
                collectOutside(*s.init, out);
        }
        exprs(s.expr);
        exprs(s.step);
        collectOutside(*s.body, out);
        return;
    case StmtKind::Decl:
        for (const auto& d : s.decls) {
            exprs(d.bound);
            exprs(d.init);
            for (const auto& e : d.initList)
                exprs(e);
        }
        return;
    case StmtKind::Block:
        for (const auto& c : s.stmts)
            collectOutside(*c, out);
        return;
    case StmtKind::ForEachSynapse:
        collectOutside(*s.body, out);
        return;
    case StmtKind::If:
    case StmtKind::While:
    case StmtKind::DoWhile:
    case StmtKind::Switch:
        exprs(s.expr);
        if (s.body) collectOutside(*s.body, out);
        if (s.orElse) collectOutside(*s.orElse, out);
        return;
    case StmtKind::Case:
        exprs(s.caseValue);
        return;
    case StmtKind::Default:
    case StmtKind::Break:
    case StmtKind::Continue:
    case StmtKind::Empty:
        return;
    }
}

class Printer {
public:
    Printer(const Scanned& s, const RenderOptions& o) : m_s(s), m_o(o) {}

    std::string run() {
        if (!m_o.lineLabel.empty()) m_out = "#line 1 \"" + safeLabel(m_o.lineLabel) + "\"\n";
        m_start = m_out.size();
        if (m_s.program && m_s.expression && !m_s.program->stmts.empty()) {
            expr(*m_s.program->stmts.at(0)->expr, false); // a threshold condition
        } else if (m_s.program) {
            for (const auto& st : m_s.program->stmts)
                statement(*st);
        }
        at(m_s.lines);
        m_out += '\n';
        return m_out;
    }

private:
    void at(int line) {
        while (m_line < line) {
            m_out += '\n';
            ++m_line;
        }
    }

    // Appends a token, with a space where two tokens would otherwise merge or read badly.
    void emit(const std::string& t) {
        if (t.empty()) return;
        if (m_out.size() > m_start) {
            const char last = m_out.back(), first = t[0];
            const bool word = isWordChar(first);
            if (first != ';' && first != ')' && first != ',' && first != ']' && last != '[' &&
                last != '(' &&
                ((isWordChar(last) && (word || first == '{')) ||
                 (isOperatorChar(last) && isOperatorChar(first)) ||
                 ((last == ';' || last == '{' || last == '}') && first != ')') ||
                 (last == ')' && (word || first == '{'))))
                m_out += ' ';
        }
        m_out += t;
    }

    std::string type(Type t) const { return typeName(t, m_o.precision); }

    // ---- statements -----------------------------------------------------------------------------

    void statement(const Stmt& s, bool inForHeader = false) {
        at(s.line);
        switch (s.kind) {
        case StmtKind::Expr: {
            const Expr* target = inForHeader ? nullptr : assignedName(*s.expr);
            const auto store =
                target ? m_o.writeThrough.find(target->name) : m_o.writeThrough.end();
            // Braces: the pair stays one statement after an `if`, `else` or loop header.
            if (store != m_o.writeThrough.end()) emit("{");
            expr(*s.expr, true);
            emit(";");
            if (store != m_o.writeThrough.end()) {
                emit(store->second);
                emit("}");
            }
            return;
        }
        case StmtKind::Decl:
            declaration(s);
            return;
        case StmtKind::Block:
            emit("{");
            for (const auto& c : s.stmts)
                statement(*c);
            at(s.endLine);
            emit("}");
            return;
        case StmtKind::If:
            emit("if (");
            expr(*s.expr, true);
            emit(")");
            statement(*s.body);
            if (s.orElse) {
                emit("else");
                statement(*s.orElse);
            }
            return;
        case StmtKind::For:
            emit("for (");
            if (!s.init) {
                emit(";");
            } else {
                statement(*s.init, true);
            }
            if (s.expr) expr(*s.expr, true);
            emit(";");
            if (s.step) expr(*s.step, true);
            emit(")");
            statement(*s.body);
            return;
        case StmtKind::While:
            emit("while (");
            expr(*s.expr, true);
            emit(")");
            statement(*s.body);
            return;
        case StmtKind::DoWhile:
            emit("do");
            statement(*s.body);
            emit("while (");
            expr(*s.expr, true);
            emit(");");
            return;
        case StmtKind::Switch:
            emit("switch (");
            expr(*s.expr, true);
            emit(")");
            statement(*s.body);
            return;
        case StmtKind::Case:
            emit("case");
            expr(*s.caseValue, false);
            emit(":");
            return;
        case StmtKind::Default:
            emit("default:");
            return;
        case StmtKind::Break:
            emit(s.leavesSynapseLoop ? synapseLoop().breakStatement : "break;");
            return;
        case StmtKind::Continue:
            emit("continue;");
            return;
        case StmtKind::Empty:
            emit(";");
            return;
        case StmtKind::ForEachSynapse:
            emit(synapseLoop().begin);
            statement(*s.body);
            emit(synapseLoop().end);
            return;
        }
    }

    const SynapseLoopText& synapseLoop() const {
        if (m_o.synapseLoop.begin.empty())
            throw InternalError("snippet render: for_each_synapse without its loop text");
        return m_o.synapseLoop;
    }

    void declaration(const Stmt& s) {
        if (s.isConst) emit("const");
        emit(type(s.declType));
        bool first = true;
        for (const Declarator& d : s.decls) {
            if (!first) emit(", ");
            first = false;
            at(d.line);
            emit("u_" + d.name);
            if (d.bound) emit("[" + std::to_string(d.length) + "]");
            if (d.init) {
                emit(" = ");
                expr(*d.init, true);
            } else if (d.bound) {
                // Explicit conversions: a braced list must never narrow (an error in C++).
                emit(" = {");
                if (d.initList.empty()) m_out += "0";
                for (size_t i = 0; i < d.initList.size(); i++) {
                    if (i) emit(", ");
                    const Expr& item = *d.initList[i];
                    // The checker's conversions (snippet/checker.cpp convertTo) are casts already.
                    if (item.kind == ExprKind::Cast && item.castType == s.declType) {
                        expr(item, true);
                        continue;
                    }
                    m_out += "(" + type(s.declType) + ")(";
                    expr(item, true);
                    emit(")");
                }
                m_out += "}";
            }
        }
        emit(";");
    }

    // ---- expressions ----------------------------------------------------------------------------

    void open(bool top) {
        if (!top) emit("(");
    }
    void close(bool top) {
        if (!top) emit(")");
    }

    std::string substitute(const std::string& name) const {
        const auto it = m_o.substitutions.find(name);
        return it != m_o.substitutions.end() ? it->second : name;
    }

    void expr(const Expr& e, bool top) {
        at(e.line);
        switch (e.kind) {
        case ExprKind::IntLit:
            emit(integer(e));
            return;
        case ExprKind::FloatLit:
            emit(floating(e));
            return;
        case ExprKind::BoolLit:
            emit(e.bits ? "true" : "false");
            return;
        case ExprKind::Name:
            emit(e.ref == Ref::Local ? "u_" + e.name : substitute(e.name));
            return;
        case ExprKind::Call:
            emit(substitute(e.name));
            emit("(");
            for (size_t i = 0; i < e.kids.size(); i++) {
                if (i) emit(", ");
                expr(*e.kids[i], true);
            }
            emit(")");
            return;
        case ExprKind::Index:
            index(e);
            return;
        case ExprKind::Unary:
            open(top);
            emit(e.op + "(");
            expr(*e.kids[0], true);
            emit(")");
            close(top);
            return;
        case ExprKind::Postfix:
            open(top);
            emit("(");
            expr(*e.kids[0], true);
            emit(")" + e.op);
            close(top);
            return;
        case ExprKind::Binary:
        case ExprKind::Assign:
            if (e.checkOrdinal >= 0) return checkedDivision(e);
            open(top);
            expr(*e.kids[0], false);
            emit(e.op == "," ? ", " : " " + e.op + " ");
            if (isShift(e.op)) {
                // A count outside [0, width) is undefined in C; every backend masks it as
                // OpenCL C does.
                emit("((");
                expr(*e.kids[1], true);
                emit(") & " + std::to_string(detail::bitWidth(e.opType) - 1) + ")");
                close(top);
                return;
            }
            // The right side of `=` cannot be a bare comma expression (the parser made it one
            // level down), so it needs no parentheses of its own.
            expr(*e.kids[1], e.kind == ExprKind::Assign);
            close(top);
            return;
        case ExprKind::Ternary:
            open(top);
            expr(*e.kids[0], false);
            emit(" ? ");
            expr(*e.kids[1], false);
            emit(" : ");
            expr(*e.kids[2], false);
            close(top);
            return;
        case ExprKind::Cast:
            open(top);
            if (saturates(e)) {
                saturatingCast(e);
            } else {
                emit("(" + type(e.castType) + ")(");
                expr(*e.kids[0], true);
                emit(")");
            }
            close(top);
            return;
        case ExprKind::Paren:
            expr(*e.kids[0], false);
            return;
        }
    }

    static bool isShift(const std::string& op) {
        return op == "<<" || op == ">>" || op == "<<=" || op == ">>=";
    }

    // Integer `/` or `%` through sf_div_<t> / sf_rem_<t>(a, b, flag, ordinal) (the backends'
    // preludes): a zero divisor, or the minimum divided by -1, gives 0 and stores the ordinal.
    void checkedDivision(const Expr& e) {
        if (e.kind != ExprKind::Binary || (e.op != "/" && e.op != "%"))
            throw InternalError("snippet render: a run-time check on operator '" + e.op + "'");
        requireErrorFlag();
        emit(std::string(e.op == "/" ? "sf_div_" : "sf_rem_") + integerSuffix(e.opType) + "(");
        expr(*e.kids[0], true);
        emit(", ");
        expr(*e.kids[1], true);
        emit(", " + m_o.errorFlag + ", " + std::to_string(e.checkOrdinal) + "u)");
    }

    static std::string integerSuffix(Type t) {
        switch (t) {
        case Type::I32:
            return "i32";
        case Type::U32:
            return "u32";
        case Type::I64:
            return "i64";
        case Type::U64:
            return "u64";
        default:
            break;
        }
        throw InternalError("snippet render: a checked division in a type that is not promoted");
    }

    // A floating value converted to an integer type (other than bool) is undefined in C when it
    // is NaN or out of range; sf_<f32|f64>_to_<i32|u32|i64|u64>(x, width) (the backends'
    // preludes) saturate to the target's range and map NaN to 0, as OpenCL's convert_<T>_sat.
    static bool saturates(const Expr& cast) {
        return detail::isFloating(cast.kids[0]->type) && isInteger(cast.castType) &&
               cast.castType != Type::Bool;
    }

    void saturatingCast(const Expr& e) {
        const int width = detail::bitWidth(e.castType);
        const std::string helper =
            std::string(e.kids[0]->type == Type::F32 ? "sf_f32_to_" : "sf_f64_to_") +
            (detail::isUnsigned(e.castType) ? "u" : "i") + (width <= 32 ? "32" : "64");
        emit("(" + type(e.castType) + ")" + helper + "(");
        expr(*e.kids[0], true);
        emit(", " + std::to_string(width) + "u)");
    }

    void requireErrorFlag() const {
        if (m_o.errorFlag.empty())
            throw InternalError("snippet render: run-time checks need an error flag");
    }

    // An index checked at run time goes through sf_index(i, n, flag, ordinal), which returns i
    // when 0 <= i < n and otherwise stores the ordinal in the error flag and returns 0.
    void index(const Expr& e) {
        expr(*e.kids[0], false);
        emit("[");
        if (e.checkOrdinal < 0) {
            expr(*e.kids[1], true);
            emit("]");
            return;
        }
        const Expr* base = e.kids[0].get();
        while (base->kind == ExprKind::Paren)
            base = base->kids[0].get();
        std::string size;
        if (base->ref == Ref::Local) {
            size = std::to_string(e.kids[0]->length) + "u";
        } else {
            const auto it = m_o.arraySizes.find(base->name);
            if (it == m_o.arraySizes.end())
                throw InternalError("snippet render: no size for array '" + base->name + "'");
            size = it->second;
        }
        requireErrorFlag();
        emit("sf_index((int64_t)(");
        expr(*e.kids[1], true);
        emit("), (uint64_t)(" + size + "), " + m_o.errorFlag + ", " +
             std::to_string(e.checkOrdinal) + "u)]");
    }

    static std::string integer(const Expr& e) {
        const std::string digits = std::to_string(e.bits);
        switch (e.type) {
        case Type::I32:
            return digits;
        case Type::U32:
            return digits + "u";
        case Type::I64:
            return "((int64_t)" + digits + "ll)";
        case Type::U64:
            return "((uint64_t)" + digits + "ull)";
        default:
            break;
        }
        throw InternalError("snippet render: integer literal of unexpected type");
    }

    // The shortest decimal form that reads back as the same value of the literal's type.
    static std::string floating(const Expr& e) { return floatLiteral(e.real, e.type == Type::F32); }

    static std::string floatLiteral(double value, bool f32) {
        const double v = f32 ? static_cast<double>(static_cast<float>(value)) : value;
        char buf[64];
        for (int digits = f32 ? 6 : 15; digits <= 17; digits++) {
            std::snprintf(buf, sizeof buf, "%.*g", digits, v);
            const double back = std::strtod(buf, nullptr);
            if (f32 ? static_cast<float>(back) == static_cast<float>(v) : back == v) break;
        }
        std::string s = buf;
        if (s.find_first_of(".e") == std::string::npos) s += ".0";
        return f32 ? s + "f" : s;
    }

    const Scanned& m_s;
    const RenderOptions& m_o;
    std::string m_out;
    size_t m_start = 0;
    int m_line = 1;
};

} // namespace

std::string render(const Scanned& scanned, const RenderOptions& options) {
    return Printer(scanned, options).run();
}

namespace {

bool hasLoop(const Stmt& s) {
    switch (s.kind) {
    case StmtKind::For:
    case StmtKind::While:
    case StmtKind::DoWhile:
    case StmtKind::ForEachSynapse:
        return true;
    case StmtKind::Block:
        return std::any_of(s.stmts.begin(), s.stmts.end(),
                           [](const StmtPtr& c) { return hasLoop(*c); });
    case StmtKind::If:
    case StmtKind::Switch:
        return (s.body && hasLoop(*s.body)) || (s.orElse && hasLoop(*s.orElse));
    case StmtKind::Expr:
    case StmtKind::Decl:
    case StmtKind::Case:
    case StmtKind::Default:
    case StmtKind::Break:
    case StmtKind::Continue:
    case StmtKind::Empty:
        return false;
    }
    return false;
}

} // namespace

bool containsLoop(const Scanned& scanned) {
    return scanned.program && hasLoop(*scanned.program);
}

std::set<std::string> assignedOutsideStatements(const Scanned& scanned) {
    std::set<std::string> out;
    if (!scanned.program) return out;
    // An expression field is one expression, not a statement: nothing follows it.
    if (scanned.expression) {
        for (const auto& st : scanned.program->stmts)
            if (st->expr) collectAssigned(*st->expr, out);
        return out;
    }
    for (const auto& st : scanned.program->stmts)
        collectOutside(*st, out);
    return out;
}

std::string render(const Scanned& scanned, const std::map<std::string, std::string>& substitutions,
                   Precision precision, const std::string& lineLabel) {
    RenderOptions o;
    o.substitutions = substitutions;
    o.precision = precision;
    o.lineLabel = lineLabel;
    // For tools and tests: checked indices report through `sfSnippetError` against sizes named
    // `sfSize_<array>`, which the surrounding code must declare.
    o.errorFlag = "sfSnippetError";
    for (const auto& a : scanned.checkedArrays)
        o.arraySizes[a] = "sfSize_" + a;
    return render(scanned, o);
}

} // namespace spikeforge::snippet
