// Unit tests of the CLI helpers: expression evaluator, "did you mean", JSON output.
#include "expression.hpp"
#include "expression_support.hpp"
#include "json.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

using namespace spikeforge::cli;

namespace {

const std::map<std::string, double> params = {{"N", 4000.0}, {"p", 0.02}, {"tau_m", 20.0}};

double eval(const std::string& text) {
    return sftest::evalWith(params, text);
}

ExpressionError errorOf(const std::string& text) {
    return sftest::errorOfWith(params, text);
}

} // namespace

TEST(Expression, Numbers) {
    EXPECT_DOUBLE_EQ(eval("42"), 42.0);
    EXPECT_DOUBLE_EQ(eval("0.25"), 0.25);
    EXPECT_DOUBLE_EQ(eval(".5"), 0.5);
    EXPECT_DOUBLE_EQ(eval("5."), 5.0);
    EXPECT_DOUBLE_EQ(eval("1e3"), 1000.0);
    EXPECT_DOUBLE_EQ(eval("2.5E-2"), 0.025);
    EXPECT_DOUBLE_EQ(eval("1e+2"), 100.0);
    EXPECT_DOUBLE_EQ(eval("  7  "), 7.0);
}

TEST(Expression, PrecedenceAndAssociativity) {
    EXPECT_DOUBLE_EQ(eval("1 + 2 * 3"), 7.0);
    EXPECT_DOUBLE_EQ(eval("(1 + 2) * 3"), 9.0);
    EXPECT_DOUBLE_EQ(eval("10 - 4 - 3"), 3.0);
    EXPECT_DOUBLE_EQ(eval("64 / 4 / 2"), 8.0);
    EXPECT_DOUBLE_EQ(eval("2 * 3 / 4"), 1.5);
    EXPECT_DOUBLE_EQ(eval("((2))"), 2.0);
}

TEST(Expression, UnaryOperators) {
    EXPECT_DOUBLE_EQ(eval("-3"), -3.0);
    EXPECT_DOUBLE_EQ(eval("+3"), 3.0);
    EXPECT_DOUBLE_EQ(eval("--3"), 3.0);
    EXPECT_DOUBLE_EQ(eval("2 * -3"), -6.0);
    EXPECT_DOUBLE_EQ(eval("-(1 + 2) * 2"), -6.0);
    EXPECT_DOUBLE_EQ(eval("1 - -1"), 2.0);
}

TEST(Expression, Parameters) {
    EXPECT_DOUBLE_EQ(eval("N"), 4000.0);
    EXPECT_DOUBLE_EQ(eval("0.8*N"), 3200.0);
    EXPECT_DOUBLE_EQ(eval("0.2 * N"), 800.0);
    EXPECT_DOUBLE_EQ(eval("p"), 0.02);
    EXPECT_DOUBLE_EQ(eval("N * p / tau_m"), 4.0);
    EXPECT_DOUBLE_EQ(eval("-tau_m"), -20.0);
}

TEST(Expression, UnknownNameReportsNameAndPosition) {
    const ExpressionError e = errorOf("0.8*M");
    EXPECT_EQ(e.position(), 4u);
    EXPECT_EQ(e.unknownName(), "M");
    EXPECT_NE(std::string(e.what()).find("unknown parameter 'M'"), std::string::npos);
}

TEST(Expression, SyntaxErrorsReportPositions) {
    EXPECT_EQ(errorOf("").position(), 0u);
    EXPECT_EQ(errorOf("   ").position(), 0u);
    EXPECT_EQ(errorOf("1 +").position(), 3u);
    EXPECT_EQ(errorOf("2 * (3").position(), 4u); // the unmatched '('
    EXPECT_EQ(errorOf("(1 2)").position(), 3u);
    EXPECT_EQ(errorOf("1 2").position(), 2u);
    EXPECT_EQ(errorOf("N # 2").position(), 2u);
    EXPECT_EQ(errorOf("1e").position(), 1u);
    EXPECT_EQ(errorOf("3)").position(), 1u);
    EXPECT_EQ(errorOf("2 ** 3").position(), 3u);
    EXPECT_EQ(errorOf("N^2").position(), 1u);
    EXPECT_NE(std::string(errorOf("cbrt(4)").what()).find("unknown function 'cbrt'"),
              std::string::npos); // only the functions of the fixed table
}

TEST(Expression, DivisionByZeroPointsAtTheOperator) {
    const ExpressionError e = errorOf("N / (p - p)");
    EXPECT_EQ(e.position(), 2u);
    EXPECT_NE(std::string(e.what()).find("division by zero"), std::string::npos);
}

TEST(Expression, OverflowIsRejected) {
    EXPECT_THROW(eval("1e308 * 10"), ExpressionError);
    EXPECT_THROW(eval("1e999"), ExpressionError);
}

TEST(Expression, DeepNestingIsAnErrorNotACrash) {
    EXPECT_THROW(eval(std::string(10000, '(') + "1" + std::string(10000, ')')), ExpressionError);
    EXPECT_THROW(eval(std::string(10000, '-') + "1"), ExpressionError);
    EXPECT_DOUBLE_EQ(eval(std::string(20, '(') + "1" + std::string(20, ')')), 1.0);
}

TEST(Expression, Identifiers) {
    EXPECT_TRUE(isIdentifier("N"));
    EXPECT_TRUE(isIdentifier("_tau2"));
    EXPECT_FALSE(isIdentifier(""));
    EXPECT_FALSE(isIdentifier("2N"));
    EXPECT_FALSE(isIdentifier("a-b"));
    EXPECT_FALSE(isIdentifier("a b"));
}

TEST(Json, Escaping) {
    EXPECT_EQ(jsonString("plain"), "\"plain\"");
    EXPECT_EQ(jsonString("a\"b\\c"), "\"a\\\"b\\\\c\"");
    EXPECT_EQ(jsonString("line\nnext\ttab"), "\"line\\nnext\\ttab\"");
    EXPECT_EQ(jsonString(std::string("\x01", 1)), "\"\\u0001\"");
    EXPECT_EQ(jsonString("µs"), "\"µs\"");
}

TEST(Json, NumbersAndObjects) {
    EXPECT_EQ(jsonNumber(1.5), "1.5");
    EXPECT_EQ(jsonNumber(1000.0), "1000");
    EXPECT_EQ(jsonNumber(std::nan("")), "null");
    EXPECT_EQ(jsonNumber(INFINITY), "null");
    JsonObject inner;
    inner.addNumber("E", 6.25);
    JsonObject o;
    o.addString("backend", "cpu").addInteger("spikes", 12).addBool("cache_hit", false);
    o.addObject("rates_hz", inner);
    EXPECT_EQ(o.str(), "{\"backend\": \"cpu\", \"spikes\": 12, \"cache_hit\": false, "
                       "\"rates_hz\": {\"E\": 6.25}}");
    EXPECT_EQ(JsonObject().str(), "{}");
}
