// The fixed table of maths functions a config expression may call (round floor ceil sqrt exp
// log): values against the C library, domains, positions of errors, and that a parameter may
// still share a function's name when it is not called.
#include "expression.hpp"
#include "expression_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

using namespace spikeforge::cli;

namespace {

const std::map<std::string, double> params = {{"N", 20683.0}, {"scale", 0.05}, {"log", 3.0}};

double eval(const std::string& text) {
    return sftest::evalWith(params, text);
}

ExpressionError errorOf(const std::string& text) {
    return sftest::errorOfWith(params, text);
}

bool mentions(const ExpressionError& e, const std::string& fragment) {
    return std::string(e.what()).find(fragment) != std::string::npos;
}

} // namespace

TEST(ExpressionFunctions, ValuesMatchTheCLibrary) {
    EXPECT_EQ(eval("round(scale * N)"), std::round(0.05 * 20683.0)); // 1034.15 -> 1034
    EXPECT_EQ(eval("round(2.5)"), 3.0);                              // half away from zero
    EXPECT_EQ(eval("round(-2.5)"), -3.0);
    EXPECT_EQ(eval("floor(-0.5)"), -1.0);
    EXPECT_EQ(eval("ceil(0.25)"), 1.0);
    EXPECT_DOUBLE_EQ(eval("sqrt(0.1)"), std::sqrt(0.1));
    EXPECT_DOUBLE_EQ(eval("exp(1)"), std::exp(1.0));
    EXPECT_DOUBLE_EQ(eval("log(1 - 0.1009) / log(1 - 1 / (N * N))"),
                     std::log(1 - 0.1009) / std::log(1 - 1 / (20683.0 * 20683.0)));
    EXPECT_DOUBLE_EQ(eval("2 * sqrt ( 4 ) + -log(exp(2))"), 2.0); // spaces, nesting, unary minus
}

TEST(ExpressionFunctions, AParameterMayShareAFunctionsNameWhenNotCalled) {
    EXPECT_DOUBLE_EQ(eval("log * 2"), 6.0);
    EXPECT_DOUBLE_EQ(eval("log(log)"), std::log(3.0));
}

TEST(ExpressionFunctions, ArgumentsOutsideTheDomainAreErrorsAtTheFunction) {
    const ExpressionError s = errorOf("1 + sqrt(-1)");
    EXPECT_EQ(s.position(), 4u);
    EXPECT_TRUE(mentions(s, "sqrt(x) needs x >= 0 (got -1)")) << s.what();
    const ExpressionError l = errorOf("log(0)");
    EXPECT_EQ(l.position(), 0u);
    EXPECT_TRUE(mentions(l, "log(x) needs x > 0")) << l.what();
    const ExpressionError e = errorOf("exp(1000)");
    EXPECT_TRUE(mentions(e, "overflows")) << e.what();
}

TEST(ExpressionFunctions, MalformedCallsAreErrors) {
    const ExpressionError u = errorOf("2 * pow(2)");
    EXPECT_EQ(u.position(), 4u);
    EXPECT_TRUE(mentions(u, "unknown function 'pow'")) << u.what();
    EXPECT_EQ(errorOf("round(2").position(), 5u);                       // the unmatched '('
    EXPECT_EQ(errorOf("round()").position(), 6u);                       // no argument
    EXPECT_EQ(errorOf("sqrt(4, 9)").position(), 6u);                    // one argument only
    EXPECT_TRUE(mentions(errorOf("sqrt"), "unknown parameter 'sqrt'")); // not called
}
