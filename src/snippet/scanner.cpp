// The snippet scanner. There is no full C parser: the checks work on the sequence of significant
// tokens (whitespace and comments dropped) with a little local context — the tokens just before
// and after a name, and a pre-computed table of matching brackets. That is enough to resolve
// every identifier, find writes and recognise declarations in the small C99 subset snippets use;
// anything subtler is left to the backend compiler, whose messages #line maps back to the user.
#include "snippet/scanner.hpp"

#include "snippet/tokeniser.hpp"

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <utility>

namespace spikeforge::snippet {

namespace {

using detail::fail;

// Type words a local declaration or a cast may be built from.
const std::set<std::string, std::less<>> kTypeWords = {
    "const",    "scalar",  "float",    "double",  "int",      "unsigned", "signed",
    "long",     "short",   "char",     "bool",    "int8_t",   "uint8_t",  "int16_t",
    "uint16_t", "int32_t", "uint32_t", "int64_t", "uint64_t", "size_t"};

// Statement keywords and literals that need no resolution.
const std::set<std::string, std::less<>> kControlWords = {
    "if",      "else",  "for",      "while",  "do",   "switch", "case",
    "default", "break", "continue", "sizeof", "true", "false"};

// C++-only or unsafe keywords. They are rejected by name so the user gets a clear message
// rather than "unknown identifier".
const std::set<std::string, std::less<>> kForbiddenWords = {
    "new",       "delete",   "class",       "struct",       "template",      "typename",
    "namespace", "using",    "goto",        "asm",          "static",        "extern",
    "auto",      "this",     "operator",    "throw",        "try",           "catch",
    "virtual",   "public",   "private",     "protected",    "friend",        "typedef",
    "union",     "enum",     "register",    "volatile",     "constexpr",     "mutable",
    "inline",    "nullptr",  "static_cast", "dynamic_cast", "const_cast",    "reinterpret_cast",
    "typeid",    "decltype", "noexcept",    "thread_local", "static_assert", "explicit",
    "export",    "restrict", "void"};

const std::set<std::string, std::less<>> kAssignOps = {
    "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="};

bool isKeyword(std::string_view s) {
    return s == "return" || kTypeWords.contains(s) || kControlWords.contains(s) ||
           kForbiddenWords.contains(s);
}

bool isOpening(std::string_view s) {
    return s == "(" || s == "[" || s == "{";
}
bool isClosing(std::string_view s) {
    return s == ")" || s == "]" || s == "}";
}

std::string_view partnerOf(std::string_view close) {
    return close == ")" ? "(" : close == "]" ? "[" : "{";
}

std::string position(const Token& t) {
    return "line " + std::to_string(t.line) + ", column " + std::to_string(t.column);
}

// Walks the significant tokens once, left to right, filling Scanned's name sets.
class Checker {
public:
    Checker(const Context& ctx, Scanned& out) : m_ctx(ctx), m_out(out) {
        for (std::size_t i = 0; i < out.tokens.size(); ++i) {
            const TokenKind k = out.tokens[i].kind;
            if (k != TokenKind::Whitespace && k != TokenKind::Comment) m_sig.push_back(i);
        }
    }

    void run() {
        matchBrackets();
        std::size_t i = 0;
        while (i < m_sig.size()) {
            // Each handler returns the next index: declarations consume the declared name.
            switch (tok(i).kind) {
            case TokenKind::Identifier:
                i = identifier(i);
                break;
            case TokenKind::Operator:
                i = op(i);
                break;
            default:
                ++i; // numbers need no check
            }
        }
    }

private:
    const Token& tok(std::size_t i) const { return m_out.tokens[m_sig[i]]; }

    // Text of significant token i, or "" past the end (so look-ahead needs no bounds checks).
    std::string_view text(std::size_t i) const {
        return i < m_sig.size() ? std::string_view(tok(i).text) : std::string_view();
    }

    bool isName(std::size_t i) const {
        return i < m_sig.size() && tok(i).kind == TokenKind::Identifier && !isKeyword(text(i));
    }

    [[noreturn]] void failAt(std::size_t i, const std::string& what,
                             const std::string& suggestion = "") const {
        // Errors about a missing token point at the end of the code, i.e. the last token.
        const Token& t = tok(std::min(i, m_sig.size() - 1));
        fail(m_ctx, t.line, t.column, what, suggestion);
    }

    // Pairs every bracket with its partner so later checks can skip `[...]` in one step.
    void matchBrackets() {
        m_match.assign(m_sig.size(), 0);
        std::vector<std::size_t> open;
        for (std::size_t i = 0; i < m_sig.size(); ++i) {
            if (tok(i).kind != TokenKind::Operator) continue;
            const std::string_view s = text(i);
            if (isOpening(s)) open.push_back(i);
            if (!isClosing(s)) continue;
            if (open.empty()) failAt(i, "unmatched '" + std::string(s) + "'");
            const std::size_t o = open.back();
            if (text(o) != partnerOf(s)) {
                // Built by appending: `"'" + std::string(...)` trips a GCC 12 -Wrestrict false
                // positive at -O3.
                std::string what = "'";
                what.append(s).append("' does not match '").append(text(o));
                failAt(i, what + "' opened at " + position(tok(o)));
            }
            m_match[o] = i;
            m_match[i] = o;
            open.pop_back();
        }
        if (!open.empty())
            failAt(open.back(), "'" + std::string(text(open.back())) + "' is never closed");
    }

    std::size_t identifier(std::size_t i) {
        const std::string_view s = text(i);
        if (s == "return")
            failAt(i, "'return' is not allowed: a snippet is a block of statements run inline, "
                      "not a function");
        if (kForbiddenWords.contains(s))
            failAt(i, "'" + std::string(s) + "' is not allowed in snippets (C99 statements only)");
        if (kTypeWords.contains(s)) return typeSequence(i);
        if (!kControlWords.contains(s)) name(i);
        return i + 1;
    }

    // A run of type words is a cast or sizeof operand when `)` follows, else a declaration.
    std::size_t typeSequence(std::size_t i) {
        std::size_t j = i;
        std::string type;
        bool hasType = false;
        for (; j < m_sig.size() && kTypeWords.contains(text(j)); ++j) {
            hasType = hasType || text(j) != "const";
            if (!type.empty()) type += ' ';
            type.append(text(j));
        }
        if (!hasType) failAt(i, "'const' must be followed by a type");
        if (text(j) == ")") return j;
        if (text(j) == "(")
            failAt(i, "'" + type + "(...)' is a C++ functional cast; write '(" + type +
                          ")(...)' instead");
        if (!isName(j)) failAt(j, "expected a name or ')' after type '" + type + "'");
        m_declDepth = m_depth;
        declare(j);
        return j + 1;
    }

    void declare(std::size_t i) {
        const std::string name(text(i));
        if (m_ctx.names.contains(name))
            failAt(i, "declaration of '" + name + "' shadows the model name '" + name +
                          "'; choose another name");
        if (mathFunctions().contains(name))
            failAt(i, "declaration of '" + name + "' shadows the maths function '" + name + "'");
        // Block scoping is not tracked: a name declared in two blocks is one local here.
        if (std::find(m_locals.begin(), m_locals.end(), name) == m_locals.end())
            m_locals.push_back(name);
        const std::string_view after = text(i + 1);
        if (after == "(") failAt(i + 1, "functions cannot be defined in snippets");
        if (after != "=" && after != "," && after != ";" && after != "[")
            failAt(i + 1, "expected '=', ',', ';' or '[' after the declaration of '" + name + "'");
    }

    std::size_t op(std::size_t i) {
        const std::string_view s = text(i);
        if (s == "::") failAt(i, "'::' is not allowed: snippets are C, not C++");
        if (s == "->") failAt(i, "'->' is not allowed: snippets have no pointers");
        if (s == ".") failAt(i, "member access with '.' is not allowed in snippets");
        if (isOpening(s)) ++m_depth;
        if (isClosing(s)) --m_depth;
        // A declaration ends at `;` or at the bracket that encloses it (for-loop headers).
        const bool inDecl = m_declDepth >= 0;
        if (inDecl && (m_depth < m_declDepth || (s == ";" && m_depth == m_declDepth)))
            m_declDepth = -1;
        if (inDecl && s == "," && m_depth == m_declDepth) {
            if (!isName(i + 1)) failAt(i + 1, "expected a name after ',' in a declaration");
            declare(i + 1);
            return i + 2;
        }
        return i + 1;
    }

    void name(std::size_t i) {
        const std::string n(text(i));
        const bool called = text(i + 1) == "(";
        if (std::find(m_locals.begin(), m_locals.end(), n) != m_locals.end()) {
            if (called) failAt(i, "'" + n + "' is a local variable, not a function");
            return;
        }
        const auto it = m_ctx.names.find(n);
        if (it == m_ctx.names.end() && !mathFunctions().contains(n))
            failAt(i, "unknown identifier '" + n + "'", closestName(n, candidates()));
        const NameKind kind = it != m_ctx.names.end() ? it->second : NameKind::Function;
        if (it != m_ctx.names.end()) m_out.referencedNames.insert(n);
        const bool written = isWritten(i);
        if (kind == NameKind::Function) {
            if (written) failAt(i, "cannot assign to function '" + n + "'");
            if (!called) failAt(i, "function '" + n + "' must be called, as in " + n + "(...)");
            return;
        }
        if (called) failAt(i, "'" + n + "' is not a function");
        if (written && kind == NameKind::ReadOnly)
            failAt(i, "cannot assign to read-only '" + n + "'");
        if (written) m_out.assignedNames.insert(n);
    }

    // `++x`, `--x`, `x++`, `x = …`, `x[i] += …`, … (`==` is a comparison, not a write).
    bool isWritten(std::size_t i) const {
        if (i > 0 && (text(i - 1) == "++" || text(i - 1) == "--")) return true;
        std::size_t j = i + 1;
        while (text(j) == "[")
            j = m_match[j] + 1;
        const std::string_view next = text(j);
        return next == "++" || next == "--" || kAssignOps.contains(next);
    }

    // Suggestion order: model names, then locals, then maths functions (ties go to the first).
    std::vector<std::string> candidates() const {
        std::vector<std::string> c;
        for (const auto& [n, kind] : m_ctx.names)
            c.push_back(n);
        c.insert(c.end(), m_locals.begin(), m_locals.end());
        c.insert(c.end(), mathFunctions().begin(), mathFunctions().end());
        return c;
    }

    const Context& m_ctx;
    Scanned& m_out;
    std::vector<std::size_t> m_sig;   // indices into m_out.tokens of significant tokens
    std::vector<std::size_t> m_match; // for a bracket at significant index i, its partner
    std::vector<std::string> m_locals;
    int m_depth = 0;      // bracket nesting at the current token
    int m_declDepth = -1; // nesting of the declaration being read, or -1 outside one
};

// Levenshtein distance extended with adjacent transpositions (optimal string alignment), so
// the commonest typo, two swapped letters ("tua" for "tau"), costs one edit rather than two.
std::size_t editDistance(const std::string& a, const std::string& b) {
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i)
        d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j)
        d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    }
    return d[a.size()][b.size()];
}

std::string escapeForLine(const std::string& label) {
    std::string out;
    for (char c : label) {
        if (c == '"' || c == '\\') out += '\\';
        out += c == '\n' ? ' ' : c;
    }
    return out;
}

} // namespace

Scanned scan(const std::string& code, const Context& ctx) {
    Scanned out;
    out.tokens = detail::tokenise(code, ctx);
    Checker(ctx, out).run();
    return out;
}

std::string render(const Scanned& scanned, const std::map<std::string, std::string>& substitutions,
                   Precision precision, const std::string& lineLabel) {
    std::string out;
    if (!lineLabel.empty()) out += "#line 1 \"" + escapeForLine(lineLabel) + "\"\n";
    for (const Token& t : scanned.tokens) {
        if (t.kind == TokenKind::Identifier) {
            const auto it = substitutions.find(t.text);
            out += it != substitutions.end() ? it->second : t.text;
        } else if (t.kind == TokenKind::Number && precision == Precision::Float &&
                   detail::isFloatingLiteral(t.text) && !detail::hasSuffix(t.text)) {
            // An unsuffixed literal is double in C; in single-precision models that would
            // silently promote whole expressions to double (slow on GPUs).
            out += t.text + "f";
        } else {
            out += t.text;
        }
    }
    // A trailing // comment must not swallow whatever the generator appends next.
    if (out.empty() || out.back() != '\n') out += '\n';
    return out;
}

const std::set<std::string>& mathFunctions() {
    static const std::set<std::string> functions = {
        "exp",    "exp2",   "expm1", "log",   "log2",  "log10",    "log1p", "pow",   "sqrt",
        "cbrt",   "sin",    "cos",   "tan",   "asin",  "acos",     "atan",  "atan2", "sinh",
        "cosh",   "tanh",   "asinh", "acosh", "atanh", "fabs",     "fmin",  "fmax",  "fmod",
        "floor",  "ceil",   "round", "trunc", "rint",  "copysign", "hypot", "erf",   "erfc",
        "tgamma", "lgamma", "fma",   "isnan", "isinf", "min",      "max",   "abs"};
    return functions;
}

std::string closestName(const std::string& name, const std::vector<std::string>& candidates) {
    const std::size_t limit = std::max<std::size_t>(1, name.size() / 3);
    std::string best;
    std::size_t bestDistance = limit + 1;
    for (const std::string& c : candidates) {
        if (c == name) continue;
        const std::size_t d = editDistance(name, c);
        // Strictly less: on a tie the earlier candidate wins.
        if (d < bestDistance) {
            bestDistance = d;
            best = c;
        }
    }
    return best;
}

} // namespace spikeforge::snippet
