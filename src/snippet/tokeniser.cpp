#include "snippet/tokeniser.hpp"

#include <array>
#include <cctype>
#include <string_view>

namespace spikeforge::snippet::detail {

namespace {

bool isIdentStart(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool isIdentChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}
bool isDigit(char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
}
bool isHexDigit(char c) {
    return std::isxdigit(static_cast<unsigned char>(c)) != 0;
}
bool isSpace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// Longest match first: the tokeniser tries three-character operators, then two, then one.
// `->` and `::` are tokenised so the scanner can reject them with a precise message.
constexpr std::array<std::string_view, 2> kOps3 = {"<<=", ">>="};
constexpr std::array<std::string_view, 20> kOps2 = {"==", "!=", "<=", ">=", "&&", "||", "++",
                                                    "--", "+=", "-=", "*=", "/=", "%=", "&=",
                                                    "|=", "^=", "<<", ">>", "->", "::"};
constexpr std::string_view kOps1 = "+-*/%=<>!~&|^?:;,()[]{}.";

bool isValidIntegerSuffix(const std::string& s) {
    static const std::array<std::string_view, 23> valid = {
        "",   "u",  "U",  "l",   "L",   "ul",  "uL",  "Ul",  "UL",  "lu",  "lU", "Lu",
        "LU", "ll", "LL", "ull", "uLL", "Ull", "ULL", "llu", "llU", "LLu", "LLU"};
    for (auto v : valid)
        if (s == v) return true;
    return false;
}

bool isValidFloatSuffix(const std::string& s) {
    return s.empty() || s == "f" || s == "F" || s == "l" || s == "L";
}

// Walks the code once, keeping the 1-based line and column of the next character.
class Lexer {
public:
    Lexer(const std::string& code, const Context& ctx) : m_code(code), m_ctx(ctx) {}

    std::vector<Token> run() {
        while (m_pos < m_code.size())
            m_tokens.push_back(next());
        return std::move(m_tokens);
    }

private:
    char peek(std::size_t ahead = 0) const {
        return m_pos + ahead < m_code.size() ? m_code[m_pos + ahead] : '\0';
    }

    void advance() {
        if (m_code[m_pos] == '\n') {
            ++m_line;
            m_column = 1;
        } else {
            ++m_column;
        }
        ++m_pos;
    }

    [[noreturn]] void failHere(const std::string& what) const {
        fail(m_ctx, m_line, m_column, what);
    }

    Token next() {
        Token tok{TokenKind::Operator, "", m_line, m_column};
        const std::size_t start = m_pos;
        const char c = peek();
        if (isSpace(c)) {
            tok.kind = TokenKind::Whitespace;
            while (m_pos < m_code.size() && isSpace(peek()))
                advance();
        } else if (c == '/' && (peek(1) == '/' || peek(1) == '*')) {
            tok.kind = TokenKind::Comment;
            lexComment();
        } else if (isIdentStart(c)) {
            tok.kind = TokenKind::Identifier;
            while (isIdentChar(peek()))
                advance();
        } else if (isDigit(c) || (c == '.' && isDigit(peek(1)))) {
            tok.kind = TokenKind::Number;
            lexNumber();
        } else {
            lexOperator();
        }
        tok.text = m_code.substr(start, m_pos - start);
        return tok;
    }

    void lexComment() {
        const bool block = peek(1) == '*';
        // Comments never reach generated code, but a `\` or a trigraph in one would still be a
        // line continuation for the compiler if they ever did: refuse them everywhere.
        const int line = m_line, column = m_column;
        advance();
        advance();
        if (!block) {
            // The newline belongs to the following whitespace token, not the comment.
            while (m_pos < m_code.size() && peek() != '\n') {
                rejectContinuation();
                advance();
            }
            return;
        }
        while (!(peek() == '*' && peek(1) == '/')) {
            if (m_pos >= m_code.size()) fail(m_ctx, line, column, "unterminated comment '/*'");
            rejectContinuation();
            advance();
        }
        advance();
        advance();
    }

    void lexNumber() {
        const std::size_t start = m_pos;
        const int line = m_line, column = m_column;
        bool floating = false;
        if (peek() == '0' && (peek(1) == 'x' || peek(1) == 'X')) {
            advance();
            advance();
            if (!isHexDigit(peek())) failNumber(start, line, column);
            while (isHexDigit(peek()))
                advance();
        } else {
            while (isDigit(peek()))
                advance();
            if (peek() == '.') {
                floating = true;
                advance();
                while (isDigit(peek()))
                    advance();
            }
            if (peek() == 'e' || peek() == 'E') {
                floating = true;
                if (!lexExponent()) failNumber(start, line, column);
            }
        }
        std::string suffix;
        while (isIdentChar(peek())) {
            suffix += peek();
            advance();
        }
        const bool ok = floating ? isValidFloatSuffix(suffix) : isValidIntegerSuffix(suffix);
        // A trailing '.' after a complete number (1.2.3, 0x1.p3) is never valid C99 here.
        if (!ok || peek() == '.') failNumber(start, line, column);
    }

    // Returns false when the exponent has no digits.
    bool lexExponent() {
        advance(); // e or E
        if (peek() == '+' || peek() == '-') advance();
        if (!isDigit(peek())) return false;
        while (isDigit(peek()))
            advance();
        return true;
    }

    // Reports the whole malformed literal (up to the next operator or space) at its start.
    [[noreturn]] void failNumber(std::size_t start, int line, int column) {
        std::size_t end = m_pos;
        while (end < m_code.size() && (isIdentChar(m_code[end]) || m_code[end] == '.'))
            ++end;
        fail(m_ctx, line, column, "malformed number '" + m_code.substr(start, end - start) + "'");
    }

    // `\` (line continuation) and trigraphs (`??/` is a `\`) are preprocessor forms.
    void rejectContinuation() const {
        if (peek() == '\\') failHere("'\\' (line continuation) is not allowed in snippets");
        if (peek() == '?' && peek(1) == '?' &&
            std::string_view("=/'()!<>-").find(peek(2)) != std::string_view::npos)
            failHere(std::string("trigraph '??") + peek(2) + "' is not allowed in snippets");
    }

    void lexOperator() {
        const char c = peek();
        rejectContinuation();
        if (c == '"') failHere("string literals are not allowed in snippets");
        if (c == '\'') failHere("character literals are not allowed in snippets");
        if (c == '#') failHere("preprocessor directives ('#') are not allowed in snippets");
        const std::string_view rest = std::string_view(m_code).substr(m_pos);
        // Digraphs: the compiler reads `%:` as `#`, `<%` as `{` and so on.
        for (auto d : {"%:", "<%", "%>", "<:", ":>"})
            if (rest.starts_with(d))
                failHere(std::string("digraph '") + d + "' is not allowed in snippets");
        for (auto op : kOps3)
            if (rest.starts_with(op)) return advanceBy(op.size());
        for (auto op : kOps2)
            if (rest.starts_with(op)) return advanceBy(op.size());
        if (kOps1.find(c) != std::string_view::npos) return advance();
        if (std::isprint(static_cast<unsigned char>(c)))
            failHere(std::string("unexpected character '") + c + "'");
        failHere("unexpected non-ASCII or control character");
    }

    void advanceBy(std::size_t n) {
        for (std::size_t i = 0; i < n; ++i)
            advance();
    }

    const std::string& m_code;
    const Context& m_ctx;
    std::size_t m_pos = 0;
    int m_line = 1;
    int m_column = 1;
    std::vector<Token> m_tokens;
};

} // namespace

void fail(const Context& ctx, int line, int column, const std::string& what,
          const std::string& suggestion) {
    std::string msg = ctx.group + "." + ctx.field + " line " + std::to_string(line) + ", column " +
                      std::to_string(column) + ": " + what;
    if (!suggestion.empty()) msg += " (did you mean '" + suggestion + "'?)";
    throw ModelError(msg);
}

std::vector<Token> tokenise(const std::string& code, const Context& ctx) {
    return Lexer(code, ctx).run();
}

bool isFloatingLiteral(const std::string& number) {
    if (number.size() > 1 && number[0] == '0' && (number[1] == 'x' || number[1] == 'X'))
        return false;
    return number.find_first_of(".eE") != std::string::npos;
}

bool hasSuffix(const std::string& number) {
    if (number.empty()) return false;
    const char last = number.back();
    return last == 'f' || last == 'F' || last == 'l' || last == 'L';
}

} // namespace spikeforge::snippet::detail
