// The snippet parser: recursive descent over the significant tokens (whitespace and comments
// dropped), one function per grammar level. Binary operators use precedence climbing so a long
// chain `a + b + c + …` loops instead of recursing; every recursive path passes through a
// nesting guard.
#include "snippet/parser.hpp"

#include "snippet/tokeniser.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <set>
#include <string_view>

namespace spikeforge::snippet::detail {

namespace {

const std::set<std::string, std::less<>> kTypeWords = {
    "const",  "scalar",  "float",   "double",   "int",     "unsigned", "signed",  "bool",
    "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t", "int64_t", "uint64_t"};

// C types outside the language, each with the fixed-width type to use instead.
const std::map<std::string, std::string, std::less<>> kUnsupportedTypes = {
    {"long", "int64_t"},
    {"short", "int16_t"},
    {"char", "int8_t or uint8_t"},
    {"size_t", "uint64_t"}};

// C++-only or unsafe keywords, rejected by name so the user gets a clear message rather than
// "unknown identifier".
const std::set<std::string, std::less<>> kForbiddenWords = {
    "new",       "delete",   "class",       "struct",       "template",      "typename",
    "namespace", "using",    "goto",        "asm",          "static",        "extern",
    "auto",      "this",     "operator",    "throw",        "try",           "catch",
    "virtual",   "public",   "private",     "protected",    "friend",        "typedef",
    "union",     "enum",     "register",    "volatile",     "constexpr",     "mutable",
    "inline",    "nullptr",  "static_cast", "dynamic_cast", "const_cast",    "reinterpret_cast",
    "typeid",    "decltype", "noexcept",    "thread_local", "static_assert", "explicit",
    "export",    "restrict", "void",        "__asm__",      "_Pragma",       "__attribute__",
    "alignas",   "alignof",  "_Alignof",    "_Generic",     "_Static_assert"};

const std::set<std::string, std::less<>> kStatementWords = {
    "if",      "else",  "for",      "while",  "do",   "switch", "case",
    "default", "break", "continue", "sizeof", "true", "false",  "return"};

const std::set<std::string, std::less<>> kAssignOps = {
    "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="};

// Binding strength of binary operators; 0: not a binary operator.
int precedence(std::string_view op) {
    static const std::map<std::string_view, int> table = {
        {"||", 1}, {"&&", 2}, {"|", 3}, {"^", 4},  {"&", 5},  {"==", 6},
        {"!=", 6}, {"<", 7},  {">", 7}, {"<=", 7}, {">=", 7}, {"<<", 8},
        {">>", 8}, {"+", 9},  {"-", 9}, {"*", 10}, {"/", 10}, {"%", 10}};
    const auto it = table.find(op);
    return it == table.end() ? 0 : it->second;
}

class Parser {
public:
    Parser(const std::vector<Token>& tokens, const Context& ctx) : m_ctx(ctx) {
        for (const Token& t : tokens)
            if (t.kind != TokenKind::Whitespace && t.kind != TokenKind::Comment)
                m_toks.push_back(&t);
        if (m_toks.size() > kMaxTokens)
            failAt(*m_toks[kMaxTokens],
                   "the snippet has more than " + std::to_string(kMaxTokens) + " tokens");
        if (!tokens.empty()) {
            m_endLine = tokens.back().line;
            m_endColumn = tokens.back().column;
        }
    }

    std::shared_ptr<Stmt> program() {
        auto root = std::make_shared<Stmt>();
        root->kind = StmtKind::Block;
        root->line = 1;
        if (m_ctx.expression) {
            if (m_toks.empty()) return root; // no condition: the caller decides (never true)
            auto s = stmt(StmtKind::Expr, *m_toks.front());
            s->expr = expression();
            if (!atEnd()) failHere("expected the end of the condition, found '" + text() + "'");
            root->stmts.push_back(std::move(s));
            return root;
        }
        while (!atEnd())
            root->stmts.push_back(statement());
        root->endLine = m_endLine;
        return root;
    }

private:
    // ---- token access -------------------------------------------------------------------------

    bool atEnd() const { return m_pos >= m_toks.size(); }
    const Token& cur() const { return *m_toks[m_pos]; }
    std::string text(size_t ahead = 0) const {
        return m_pos + ahead < m_toks.size() ? m_toks[m_pos + ahead]->text : std::string();
    }
    bool isOp(const char* op, size_t ahead = 0) const {
        return m_pos + ahead < m_toks.size() &&
               m_toks[m_pos + ahead]->kind == TokenKind::Operator &&
               m_toks[m_pos + ahead]->text == op;
    }
    bool isWord(const char* w) const {
        return !atEnd() && cur().kind == TokenKind::Identifier && cur().text == w;
    }

    [[noreturn]] void failAt(const Token& t, const std::string& what) const {
        fail(m_ctx, t.line, t.column, what);
    }
    // Errors about a missing token point at the next token, or at the end of the code.
    [[noreturn]] void failHere(const std::string& what) const {
        if (atEnd()) fail(m_ctx, m_endLine, m_endColumn, what + " at the end of the code");
        failAt(cur(), what);
    }

    const Token& take() { return *m_toks[m_pos++]; }
    void expect(const char* op, const std::string& where) {
        if (!isOp(op))
            failHere(std::string("expected '") + op + "' " + where +
                     (atEnd() ? "" : ", found '" + text() + "'"));
        ++m_pos;
    }

    // Every recursive path enters here, so recursion depth is bounded by kMaxNesting.
    struct Guard {
        Parser& p;
        explicit Guard(Parser& parser) : p(parser) {
            if (++p.m_depth > kMaxNesting)
                p.failHere("nesting deeper than " + std::to_string(kMaxNesting) + " levels");
        }
        ~Guard() { --p.m_depth; }
        Guard(const Guard&) = delete;
        Guard& operator=(const Guard&) = delete;
    };

    // ---- statements -----------------------------------------------------------------------------

    StmtPtr stmt(StmtKind k, const Token& at) {
        auto s = std::make_unique<Stmt>();
        s->kind = k;
        s->line = at.line;
        s->column = at.column;
        return s;
    }

    StmtPtr statement() {
        Guard g(*this);
        if (atEnd()) failHere("expected a statement");
        const Token& t = cur();
        if (t.kind == TokenKind::Identifier) {
            if (t.text == "return")
                failAt(t, "'return' is not allowed: a snippet is a block of statements run inline, "
                          "not a function");
            if (kTypeWords.contains(t.text)) return declaration(true);
            if (t.text == "if") return ifStatement();
            if (t.text == "for") return forStatement();
            if (t.text == "while") return whileStatement();
            if (t.text == "do") return doStatement();
            if (t.text == "switch") return switchStatement();
            if (t.text == "case" || t.text == "default") return label();
            if (t.text == "break" || t.text == "continue") {
                auto s = stmt(t.text == "break" ? StmtKind::Break : StmtKind::Continue, take());
                expect(";", "after '" + t.text + "'");
                return s;
            }
            if (t.text == "else") failAt(t, "'else' without a matching 'if'");
            if (t.text == "for_each_synapse" && isOp("{", 1)) {
                auto s = stmt(StmtKind::ForEachSynapse, take());
                s->body = block();
                return s;
            }
        }
        if (isOp("{")) return block();
        if (isOp(";")) return stmt(StmtKind::Empty, take());
        auto s = stmt(StmtKind::Expr, t);
        s->expr = expression();
        expect(";", "to end the statement");
        return s;
    }

    StmtPtr block() {
        const Token& open = take();
        auto s = stmt(StmtKind::Block, open);
        while (!isOp("}")) {
            if (atEnd()) failAt(open, "'{' is never closed");
            s->stmts.push_back(statement());
        }
        s->endLine = take().line;
        return s;
    }

    // A sub-statement of if/for/while/do: a declaration there would be scoped to nothing
    // (and C forbids it).
    StmtPtr subStatement() {
        if (!atEnd() && cur().kind == TokenKind::Identifier && kTypeWords.contains(cur().text))
            failHere("a declaration here must be inside a block '{ … }'");
        return statement();
    }

    StmtPtr ifStatement() {
        auto s = stmt(StmtKind::If, take());
        s->expr = condition("if");
        s->body = subStatement();
        if (isWord("else")) {
            ++m_pos;
            s->orElse = subStatement();
        }
        return s;
    }

    ExprPtr condition(const char* what) {
        expect("(", std::string("after '") + what + "'");
        auto e = expression();
        expect(")", std::string("to close the condition of '") + what + "'");
        return e;
    }

    StmtPtr whileStatement() {
        auto s = stmt(StmtKind::While, take());
        s->expr = condition("while");
        s->body = subStatement();
        return s;
    }

    StmtPtr doStatement() {
        auto s = stmt(StmtKind::DoWhile, take());
        s->body = subStatement();
        if (!isWord("while")) failHere("expected 'while' after the body of 'do'");
        ++m_pos;
        s->expr = condition("while");
        expect(";", "after 'do … while (…)'");
        return s;
    }

    StmtPtr forStatement() {
        auto s = stmt(StmtKind::For, take());
        expect("(", "after 'for'");
        if (atEnd()) failHere("expected the initialisation of 'for'");
        if (isOp(";")) {
            ++m_pos;
        } else if (cur().kind == TokenKind::Identifier && kTypeWords.contains(cur().text)) {
            s->init = declaration(true);
        } else {
            s->init = stmt(StmtKind::Expr, cur());
            s->init->expr = expression();
            expect(";", "after the initialisation of 'for'");
        }
        if (!isOp(";")) s->expr = expression();
        expect(";", "after the condition of 'for'");
        if (!isOp(")")) s->step = expression();
        expect(")", "to close 'for (…)'");
        s->body = subStatement();
        return s;
    }

    StmtPtr switchStatement() {
        auto s = stmt(StmtKind::Switch, take());
        s->expr = condition("switch");
        if (!isOp("{")) failHere("expected '{' after 'switch (…)'");
        s->body = block();
        return s;
    }

    StmtPtr label() {
        const Token& t = take();
        auto s = stmt(t.text == "case" ? StmtKind::Case : StmtKind::Default, t);
        if (s->kind == StmtKind::Case) s->caseValue = ternary();
        expect(":", "after '" + t.text + "'");
        return s;
    }

    // [const] type name [ '[' bound ']' ] [= init | = { list }] {, …} ;
    StmtPtr declaration(bool needSemicolon) {
        auto s = stmt(StmtKind::Decl, cur());
        typeSpec(s->declType, s->isConst);
        while (true) {
            if (isOp("*")) failHere("pointers are not allowed: snippets have no pointers");
            if (atEnd() || cur().kind != TokenKind::Identifier)
                failHere("expected a name after type '" + typeWords(*s) + "'");
            const Token& n = take();
            if (kTypeWords.contains(n.text) || isReservedWord(n.text))
                failAt(n, "'" + n.text + "' cannot be used as a name");
            Declarator d;
            d.name = n.text;
            d.line = n.line;
            d.column = n.column;
            if (isOp("(")) failHere("functions cannot be defined in snippets");
            if (isOp("[")) {
                ++m_pos;
                if (isOp("]")) failHere("an array needs a constant size between '[' and ']'");
                d.bound = ternary();
                expect("]", "after the array size");
                if (isOp("[")) failHere("multi-dimensional arrays are not supported");
            }
            if (isOp("=")) {
                ++m_pos;
                if (isOp("{")) {
                    initList(d);
                } else {
                    d.init = assignment();
                }
            }
            s->decls.push_back(std::move(d));
            if (isOp(",")) {
                ++m_pos;
                continue;
            }
            if (!isOp(";"))
                failHere("expected '=', ',', ';' or '[' after the declaration of '" +
                         s->decls.back().name + "'");
            break;
        }
        if (needSemicolon) ++m_pos;
        return s;
    }

    void initList(Declarator& d) {
        Guard g(*this);
        ++m_pos; // {
        d.hasList = true;
        while (!isOp("}")) {
            d.initList.push_back(assignment());
            if (!isOp(",")) break;
            ++m_pos;
        }
        expect("}", "to close the initialiser list");
    }

    static std::string typeWords(const Stmt& s) {
        return (s.isConst ? "const " : "") + typeName(s.declType, Precision::Float);
    }

    // Reads `[const] base-type [const]`; the current token is a type word.
    void typeSpec(Type& type, bool& isConst) {
        const Token& first = cur();
        bool sawUnsigned = false, sawSigned = false, sawInt = false;
        type = Type::Void;
        isConst = false;
        while (!atEnd() && cur().kind == TokenKind::Identifier) {
            const std::string& w = cur().text;
            if (const auto it = kUnsupportedTypes.find(w); it != kUnsupportedTypes.end())
                failHere("type '" + w + "' is not supported: use " + it->second);
            if (!kTypeWords.contains(w)) break;
            const Token& t = take();
            if (w == "const") {
                if (isConst) failAt(t, "'const' given twice");
                isConst = true;
            } else if (w == "unsigned" || w == "signed") {
                if (sawUnsigned || sawSigned || type != Type::Void)
                    failAt(t, "misplaced '" + w + "'");
                (w == "unsigned" ? sawUnsigned : sawSigned) = true;
            } else if (w == "int" && !sawInt && (type == Type::Void)) {
                sawInt = true;
                type = Type::I32;
            } else {
                if (type != Type::Void || sawUnsigned || sawSigned)
                    failAt(t, "'" + w + "' cannot be combined with the type before it");
                type = parseTypeName(w, "");
            }
        }
        if (sawUnsigned) type = Type::U32;
        if (sawSigned) type = Type::I32;
        if (type == Type::Void)
            fail(m_ctx, first.line, first.column, "'const' must be followed by a type");
    }

    // ---- expressions ----------------------------------------------------------------------------

    ExprPtr node(ExprKind k, const Token& at) {
        auto e = std::make_unique<Expr>();
        e->kind = k;
        e->line = at.line;
        e->column = at.column;
        return e;
    }

    ExprPtr withKids(ExprPtr e, std::vector<ExprPtr> kids) {
        int depth = 0;
        for (const auto& k : kids)
            depth = std::max(depth, k->depth);
        e->depth = depth + 1;
        if (e->depth > kMaxExprDepth)
            fail(m_ctx, e->line, e->column,
                 "expression nested too deeply (more than " + std::to_string(kMaxExprDepth) +
                     " levels of operators)");
        e->kids = std::move(kids);
        return e;
    }

    ExprPtr expression() {
        auto e = assignment();
        while (isOp(",")) {
            const Token& op = take();
            auto n = node(ExprKind::Binary, op);
            n->op = ",";
            n->line = e->line;
            n->column = e->column;
            std::vector<ExprPtr> kids;
            kids.push_back(std::move(e));
            kids.push_back(assignment());
            e = withKids(std::move(n), std::move(kids));
        }
        return e;
    }

    ExprPtr assignment() {
        auto lhs = ternary();
        if (atEnd() || cur().kind != TokenKind::Operator || !kAssignOps.contains(cur().text))
            return lhs;
        const Token& op = take();
        auto n = node(ExprKind::Assign, op);
        n->op = op.text;
        n->line = lhs->line;
        n->column = lhs->column;
        n->opLine = op.line;
        n->opColumn = op.column;
        std::vector<ExprPtr> kids;
        kids.push_back(std::move(lhs));
        Guard g(*this); // `a = b = c = …` recurses once per '='
        kids.push_back(assignment());
        return withKids(std::move(n), std::move(kids));
    }

    ExprPtr ternary() {
        auto c = binary(1);
        if (!isOp("?")) return c;
        const Token& q = take();
        auto n = node(ExprKind::Ternary, q);
        n->line = c->line;
        n->column = c->column;
        std::vector<ExprPtr> kids;
        kids.push_back(std::move(c));
        {
            Guard g(*this);
            kids.push_back(expression());
        }
        expect(":", "in the conditional expression '? :'");
        kids.push_back(conditional());
        return withKids(std::move(n), std::move(kids));
    }

    // The third operand of ?: is again a conditional expression (C's grammar).
    ExprPtr conditional() {
        Guard g(*this);
        return ternary();
    }

    ExprPtr binary(int minPrec) {
        auto lhs = unary();
        while (!atEnd() && cur().kind == TokenKind::Operator) {
            const int prec = precedence(cur().text);
            if (prec == 0 || prec < minPrec) break;
            const Token& op = take();
            auto n = node(ExprKind::Binary, op);
            n->op = op.text;
            n->line = lhs->line;
            n->column = lhs->column;
            std::vector<ExprPtr> kids;
            kids.push_back(std::move(lhs));
            kids.push_back(binary(prec + 1));
            n->opLine = op.line;
            n->opColumn = op.column;
            lhs = withKids(std::move(n), std::move(kids));
        }
        return lhs;
    }

    ExprPtr unary() {
        if (atEnd()) failHere("expected an expression");
        const Token& t = cur();
        if (t.kind == TokenKind::Operator) {
            if (t.text == "&")
                failAt(t, "the address-of operator '&' is not allowed: snippets have no pointers");
            if (t.text == "*")
                failAt(t, "the dereference operator '*' is not allowed: snippets have no pointers");
            if (t.text == "+" || t.text == "-" || t.text == "!" || t.text == "~" ||
                t.text == "++" || t.text == "--") {
                ++m_pos;
                Guard g(*this); // `- - - x` recurses once per operator
                auto n = node(ExprKind::Unary, t);
                n->op = t.text;
                std::vector<ExprPtr> kids;
                kids.push_back(unary());
                return withKids(std::move(n), std::move(kids));
            }
            if (t.text == "(" && m_pos + 1 < m_toks.size() &&
                m_toks[m_pos + 1]->kind == TokenKind::Identifier &&
                (kTypeWords.contains(text(1)) || kUnsupportedTypes.contains(text(1))))
                return cast();
        }
        return postfix(primary());
    }

    ExprPtr cast() {
        Guard g(*this);
        const Token& open = take();
        auto n = node(ExprKind::Cast, open);
        bool isConst = false;
        typeSpec(n->castType, isConst);
        if (isOp("*")) failHere("pointer casts are not allowed: snippets have no pointers");
        expect(")", "to close the cast");
        std::vector<ExprPtr> kids;
        kids.push_back(unary());
        return withKids(std::move(n), std::move(kids));
    }

    ExprPtr postfix(ExprPtr e) {
        while (!atEnd() && cur().kind == TokenKind::Operator) {
            const Token& t = cur();
            if (t.text == "[") {
                Guard g(*this);
                ++m_pos;
                auto n = node(ExprKind::Index, t);
                n->line = e->line;
                n->column = e->column;
                std::vector<ExprPtr> kids;
                kids.push_back(std::move(e));
                kids.push_back(expression());
                expect("]", "to close the index");
                e = withKids(std::move(n), std::move(kids));
            } else if (t.text == "++" || t.text == "--") {
                ++m_pos;
                auto n = node(ExprKind::Postfix, t);
                n->op = t.text;
                n->line = e->line;
                n->column = e->column;
                std::vector<ExprPtr> kids;
                kids.push_back(std::move(e));
                e = withKids(std::move(n), std::move(kids));
            } else if (t.text == "(") {
                failAt(t, "only functions can be called, and only by name");
            } else if (t.text == "::") {
                failAt(t, "'::' is not allowed: snippets are C, not C++");
            } else if (t.text == "->") {
                failAt(t, "'->' is not allowed: snippets have no pointers");
            } else if (t.text == ".") {
                failAt(t, "member access with '.' is not allowed in snippets");
            } else {
                break;
            }
        }
        return e;
    }

    ExprPtr primary() {
        const Token& t = cur();
        switch (t.kind) {
        case TokenKind::Number:
            ++m_pos;
            return number(t);
        case TokenKind::Identifier:
            return identifier();
        case TokenKind::Operator:
            if (t.text == "(") {
                Guard g(*this);
                ++m_pos;
                auto n = node(ExprKind::Paren, t);
                std::vector<ExprPtr> kids;
                kids.push_back(expression());
                if (atEnd()) failAt(t, "'(' is never closed");
                expect(")", "to close '('");
                return withKids(std::move(n), std::move(kids));
            }
            if (t.text == "::") failAt(t, "'::' is not allowed: snippets are C, not C++");
            if (t.text == "{") failAt(t, "a '{ … }' list is only allowed to initialise an array");
            failAt(t, "expected an expression, found '" + t.text + "'");
        case TokenKind::Whitespace:
        case TokenKind::Comment:
            break;
        }
        throw InternalError("snippet parser: whitespace among significant tokens");
    }

    ExprPtr identifier() {
        const Token& t = take();
        const std::string& w = t.text;
        if (kForbiddenWords.contains(w))
            failAt(t, "'" + w + "' is not allowed in snippets (C99 statements only)");
        if (w == "true" || w == "false") {
            auto n = node(ExprKind::BoolLit, t);
            n->bits = w == "true";
            return n;
        }
        if (w == "sizeof") return sizeOf(t);
        if (kTypeWords.contains(w)) {
            if (isOp("("))
                failAt(t, "'" + w + "(...)' is a C++ functional cast; write '(" + w +
                              ")(...)' instead");
            failAt(t, "unexpected type '" + w + "' in an expression");
        }
        if (const auto it = kUnsupportedTypes.find(w); it != kUnsupportedTypes.end())
            failAt(t, "type '" + w + "' is not supported: use " + it->second);
        if (kStatementWords.contains(w)) failAt(t, "'" + w + "' cannot be used in an expression");
        if (isOp("(")) return call(t);
        auto n = node(ExprKind::Name, t);
        n->name = w;
        return n;
    }

    ExprPtr sizeOf(const Token& t) {
        if (!isOp("(") || m_pos + 1 >= m_toks.size() || !kTypeWords.contains(text(1)))
            failAt(t, "'sizeof' is only allowed on a type, as in sizeof(uint32_t)");
        ++m_pos;
        Type type;
        bool isConst;
        typeSpec(type, isConst);
        expect(")", "to close 'sizeof('");
        auto n = node(ExprKind::IntLit, t);
        n->castType = Type::U64;
        n->bits = static_cast<uint64_t>(bitWidth(type == Type::Bool ? Type::U8 : type) / 8);
        if (type == Type::Scalar) n->bits = m_ctx.precision == Precision::Float ? 4 : 8;
        return n;
    }

    ExprPtr call(const Token& name) {
        Guard g(*this);
        ++m_pos; // (
        auto n = node(ExprKind::Call, name);
        n->name = name.text;
        std::vector<ExprPtr> args;
        if (!isOp(")")) {
            while (true) {
                args.push_back(assignment());
                if (!isOp(",")) break;
                ++m_pos;
            }
        }
        expect(")", "to close the call of '" + name.text + "'");
        return withKids(std::move(n), std::move(args));
    }

    // Integer literals are typed as in C (int, then 64-bit; hex and octal may be unsigned);
    // floating literals keep their value, to be printed in the model precision.
    ExprPtr number(const Token& t) {
        const std::string& s = t.text;
        if (isFloatingLiteral(s)) {
            auto n = node(ExprKind::FloatLit, t);
            std::string body = s;
            n->castType = Type::Scalar;
            if (hasSuffix(s)) {
                if (s.back() == 'l' || s.back() == 'L')
                    failAt(t, "long double literals ('" + s + "') are not supported");
                n->castType = Type::F32;
                body.pop_back();
            }
            const auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), n->real);
            if (ec != std::errc() || end != body.data() + body.size())
                failAt(t, "floating literal '" + s + "' is out of range");
            return n;
        }
        auto n = node(ExprKind::IntLit, t);
        size_t i = 0;
        int base = 10;
        if (s.size() > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
            base = 16;
            i = 2;
        } else if (s.size() > 1 && s[0] == '0' && std::isdigit(static_cast<unsigned char>(s[1]))) {
            base = 8;
            i = 1;
        }
        size_t end = i;
        while (end < s.size() && std::isxdigit(static_cast<unsigned char>(s[end])) &&
               (base == 16 || std::isdigit(static_cast<unsigned char>(s[end]))))
            ++end;
        const auto [p, ec] = std::from_chars(s.data() + i, s.data() + end, n->bits, base);
        if (ec == std::errc::result_out_of_range)
            failAt(t, "integer literal '" + s + "' is too large");
        if (ec != std::errc() || p != s.data() + end) failAt(t, "malformed number '" + s + "'");
        std::string suffix = s.substr(end);
        std::transform(suffix.begin(), suffix.end(), suffix.begin(),
                       [](char c) { return static_cast<char>(std::tolower(c)); });
        const bool u = suffix.find('u') != std::string::npos;
        const bool l = suffix.find('l') != std::string::npos;
        const uint64_t v = n->bits;
        const bool decimal = base == 10;
        if (!u && !l && v <= 0x7fffffffu) {
            n->castType = Type::I32;
        } else if (!l && v <= 0xffffffffu && (u || !decimal)) {
            n->castType = Type::U32;
        } else if (!u && v <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
            n->castType = Type::I64;
        } else if (u || !decimal) {
            n->castType = Type::U64;
        } else {
            failAt(t, "integer literal '" + s + "' is too large for int64_t");
        }
        return n;
    }

    const Context& m_ctx;
    std::vector<const Token*> m_toks;
    size_t m_pos = 0;
    int m_depth = 0;
    int m_endLine = 1, m_endColumn = 1;
};

} // namespace

bool isTypeWord(const std::string& s) {
    return kTypeWords.contains(s);
}

bool isReservedWord(const std::string& s) {
    return kTypeWords.contains(s) || kStatementWords.contains(s) || kForbiddenWords.contains(s) ||
           kUnsupportedTypes.contains(s);
}

std::shared_ptr<Stmt> parse(const std::vector<Token>& tokens, const Context& ctx) {
    return Parser(tokens, ctx).program();
}

} // namespace spikeforge::snippet::detail
