#include "expression.hpp"

#include <cctype>
#include <charconv>
#include <cmath>

namespace spikeforge::cli {

ExpressionError::ExpressionError(std::size_t position, const std::string& message,
                                 std::string unknownName)
    : std::runtime_error(message), m_position(position), m_unknownName(std::move(unknownName)) {}

bool isIdentifier(std::string_view name) {
    if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_'))
        return false;
    for (char c : name)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
    return true;
}

namespace {

// The functions an expression may call: a fixed table of pure one-argument maths (enough for
// the scaling rules of examples/microcircuit.toml: rounded counts, square roots, the synapse
// count formula), so a config still cannot run code. `valid` is the domain; an argument
// outside it is an error rather than a NaN.
struct Function {
    std::string_view name;
    double (*apply)(double);
    bool (*valid)(double);
    std::string_view domain; // for the error message
};

bool anyValue(double) {
    return true;
}
bool nonNegative(double x) {
    return x >= 0.0;
}
bool positive(double x) {
    return x > 0.0;
}

constexpr Function kFunctions[] = {
    {"round", [](double x) { return std::round(x); }, anyValue, ""},
    {"floor", [](double x) { return std::floor(x); }, anyValue, ""},
    {"ceil", [](double x) { return std::ceil(x); }, anyValue, ""},
    {"sqrt", [](double x) { return std::sqrt(x); }, nonNegative, ">= 0"},
    {"exp", [](double x) { return std::exp(x); }, anyValue, ""},
    {"log", [](double x) { return std::log(x); }, positive, "> 0"},
};

const Function* findFunction(std::string_view name) {
    for (const Function& f : kFunctions)
        if (f.name == name) return &f;
    return nullptr;
}

// Recursive descent over
//   expr    := term (('+' | '-') term)*
//   term    := unary (('*' | '/') unary)*
//   unary   := ('+' | '-') unary | primary
//   primary := number | name | function '(' expr ')' | '(' expr ')'
class Parser {
public:
    Parser(std::string_view text, const NameLookup& lookup) : m_text(text), m_lookup(lookup) {}

    double parse() {
        skipSpace();
        if (m_pos == m_text.size()) throw ExpressionError(0, "empty expression");
        const double value = expr();
        skipSpace();
        if (m_pos != m_text.size())
            throw ExpressionError(m_pos, "unexpected '" + std::string(1, m_text[m_pos]) +
                                             "' after the end of the expression");
        return value;
    }

private:
    // Deep enough for any sensible config, shallow enough that the stack never overflows.
    static constexpr int maxDepth = 64;

    void skipSpace() {
        while (m_pos < m_text.size() && std::isspace(static_cast<unsigned char>(m_text[m_pos])))
            ++m_pos;
    }
    bool accept(char c) {
        skipSpace();
        if (m_pos < m_text.size() && m_text[m_pos] == c) {
            ++m_pos;
            return true;
        }
        return false;
    }

    double expr() {
        double value = term();
        for (;;) {
            if (accept('+'))
                value += term();
            else if (accept('-'))
                value -= term();
            else
                return value;
        }
    }

    double term() {
        double value = unary();
        for (;;) {
            if (accept('*')) {
                value *= unary();
            } else if (accept('/')) {
                const std::size_t at = m_pos - 1;
                const double divisor = unary();
                if (divisor == 0.0) throw ExpressionError(at, "division by zero");
                value /= divisor;
            } else {
                return value;
            }
        }
    }

    double unary() {
        if (++m_depth > maxDepth) throw ExpressionError(m_pos, "expression nested too deeply");
        double value;
        if (accept('-'))
            value = -unary();
        else if (accept('+'))
            value = unary();
        else
            value = primary();
        --m_depth;
        return value;
    }

    double primary() {
        skipSpace();
        if (m_pos == m_text.size())
            throw ExpressionError(m_pos, "unexpected end of expression: expected a number, a "
                                         "parameter name or '('");
        const char c = m_text[m_pos];
        if (c == '(') return parenthesised();
        if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return number();
        if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') return name();
        throw ExpressionError(m_pos, "unexpected '" + std::string(1, c) +
                                         "': expected a number, a parameter name or '('");
    }

    double parenthesised() {
        const std::size_t open = m_pos++;
        const double value = expr();
        if (!accept(')')) {
            skipSpace();
            if (m_pos == m_text.size()) throw ExpressionError(open, "unbalanced '(': missing ')'");
            throw ExpressionError(m_pos,
                                  "expected ')' but found '" + std::string(1, m_text[m_pos]) + "'");
        }
        return value;
    }

    std::size_t scanDigits(std::size_t i) const {
        while (i < m_text.size() && std::isdigit(static_cast<unsigned char>(m_text[i])))
            ++i;
        return i;
    }

    double number() {
        const std::size_t start = m_pos;
        std::size_t end = scanDigits(m_pos);
        if (end < m_text.size() && m_text[end] == '.') end = scanDigits(end + 1);
        if (end < m_text.size() && (m_text[end] == 'e' || m_text[end] == 'E')) {
            std::size_t exp = end + 1;
            if (exp < m_text.size() && (m_text[exp] == '+' || m_text[exp] == '-')) ++exp;
            const std::size_t expEnd = scanDigits(exp);
            if (expEnd == exp) throw ExpressionError(end, "malformed exponent in number");
            end = expEnd;
        }
        double value = 0.0;
        const char* first = m_text.data() + start;
        const auto [ptr, ec] = std::from_chars(first, m_text.data() + end, value);
        if (ec != std::errc() || ptr != m_text.data() + end || !std::isfinite(value))
            throw ExpressionError(start, "malformed number '" +
                                             std::string(m_text.substr(start, end - start)) + "'");
        m_pos = end;
        return value;
    }

    double name() {
        const std::size_t start = m_pos;
        while (m_pos < m_text.size() &&
               (std::isalnum(static_cast<unsigned char>(m_text[m_pos])) || m_text[m_pos] == '_'))
            ++m_pos;
        const std::string id(m_text.substr(start, m_pos - start));
        if (accept('(')) return call(start, id);
        const std::optional<double> value = m_lookup(id);
        if (!value) throw ExpressionError(start, "unknown parameter '" + id + "'", id);
        return *value;
    }

    // `name(` has been read; `start` is where the name begins.
    double call(std::size_t start, const std::string& id) {
        const Function* f = findFunction(id);
        if (!f)
            throw ExpressionError(start, "unknown function '" + id +
                                             "' (functions: round, "
                                             "floor, ceil, sqrt, exp, log)");
        --m_pos; // back onto '(' so that parenthesised() reports a missing ')'
        const double argument = parenthesised();
        if (!f->valid(argument))
            throw ExpressionError(start, id + "(x) needs x " + std::string(f->domain) + " (got " +
                                             formatNumber(argument) + ")");
        const double value = f->apply(argument);
        if (!std::isfinite(value))
            throw ExpressionError(start, id + "(" + formatNumber(argument) + ") overflows");
        return value;
    }

    static std::string formatNumber(double x) {
        char buffer[32];
        const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, x);
        return ec == std::errc() ? std::string(buffer, end) : std::string("?");
    }

    std::string_view m_text;
    const NameLookup& m_lookup;
    std::size_t m_pos = 0;
    int m_depth = 0;
};

} // namespace

double evaluateExpression(std::string_view text, const NameLookup& lookup) {
    const double value = Parser(text, lookup).parse();
    if (!std::isfinite(value)) throw ExpressionError(0, "the result is not a finite number");
    return value;
}

} // namespace spikeforge::cli
