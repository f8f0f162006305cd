// Printing generated code from the checked tree: substitutions, prefixed locals, literals
// re-printed from their values, every operator parenthesised, line structure and #line labels,
// and the bounds-checked form of indices.
#include "snippet/scanner.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

using namespace spikeforge;
using namespace spikeforge::snippet;

namespace {

Context context(Precision p = Precision::Float) {
    Context ctx;
    ctx.group = "Exc";
    ctx.field = "simCode";
    ctx.precision = p;
    ctx.names = {{"V", NameKind::ReadWrite},
                 {"U", NameKind::ReadWrite},
                 {"Vthresh", NameKind::ReadOnly},
                 {"id", {NameKind::ReadOnly, Type::U32}},
                 {"buf", {NameKind::ReadOnly, Type::Scalar, true}},
                 {"addToPost", NameKind::Function}};
    return ctx;
}

std::string renderWith(const std::string& code, Precision precision,
                       const std::map<std::string, std::string>& subs = {},
                       const std::string& label = "") {
    return render(scan(code, context(precision)), subs, precision, label);
}

} // namespace

TEST(SnippetRender, FloatLiteralsTakeTheModelPrecision) {
    EXPECT_EQ(renderWith("V = 1.0 * 1e-3;", Precision::Float), "V = 1.0f * 0.001f;\n");
    EXPECT_EQ(renderWith("V = .5 * 2.f;", Precision::Double), "V = 0.5 * 2.0f;\n");
    EXPECT_EQ(renderWith("V = 0.1;", Precision::Double), "V = 0.1;\n");
    EXPECT_EQ(renderWith("V = 0.1;", Precision::Float), "V = 0.1f;\n");
    EXPECT_EQ(renderWith("V = 1E2F;", Precision::Double), "V = 100.0f;\n");
}

TEST(SnippetRender, IntegerLiteralsArePrintedFromTheirValues) {
    EXPECT_EQ(renderWith("V = 0x10 + 017;", Precision::Float), "V = 16 + 15;\n");
    EXPECT_EQ(renderWith("V = 7u * 3000000000;", Precision::Float),
              "V = 7u * ((int64_t)3000000000ll);\n");
    EXPECT_EQ(renderWith("V = 0xffffffffffffffff;", Precision::Float),
              "V = ((uint64_t)18446744073709551615ull);\n");
    EXPECT_EQ(renderWith("V = sizeof(double) + true;", Precision::Float),
              "V = ((uint64_t)8ull) + true;\n");
}

TEST(SnippetRender, EveryOperatorIsParenthesised) {
    EXPECT_EQ(renderWith("V = V + U * 2.0 - -V;", Precision::Double),
              "V = (V + (U * 2.0)) - (-(V));\n");
    EXPECT_EQ(renderWith("V = (V > 0 ? V : U) + (double)id;", Precision::Double),
              "V = ((V > 0) ? V : U) + ((double)(id));\n");
    EXPECT_EQ(renderWith("V++; --U; V = (V, U);", Precision::Double),
              "(V)++; --(U); V = (V, U);\n");
}

TEST(SnippetRender, SubstitutionReplacesContextNamesOnly) {
    const std::string code = "V = Vthresh + V; // V resets\nU = 1e5 * V;";
    const std::map<std::string, std::string> subs = {
        {"V", "group->V[id]"}, {"e5", "BAD"}, {"scalar", "float"}};
    EXPECT_EQ(renderWith(code, Precision::Double, subs),
              "group->V[id] = Vthresh + group->V[id];\nU = 100000.0 * group->V[id];\n");
}

TEST(SnippetRender, LocalsArePrefixedAndTypesResolved) {
    EXPECT_EQ(renderWith("scalar x = (scalar)V;\nV = x;", Precision::Float, {{"x", "BAD"}}),
              "float u_x = (float)(V);\nV = u_x;\n");
    EXPECT_EQ(
        renderWith("const unsigned int n = 2, m = n; int a[3] = {1.5, 2};", Precision::Double),
        "const uint32_t u_n = 2, u_m = u_n; int32_t u_a[3] = { (int32_t)sf_f64_to_i32(1.5, 32u), "
        "(int32_t)(2)};\n");
    EXPECT_EQ(renderWith("int a[2]; V = a[1];", Precision::Float),
              "int32_t u_a[2] = {0}; V = u_a[1];\n");
}

TEST(SnippetRender, FunctionsTakeTheirSubstitution) {
    EXPECT_EQ(renderWith("addToPost(V * 2.0);", Precision::Double,
                         {{"addToPost", "sfInSyn[id_post] += "}}),
              "sfInSyn[id_post] += (V * 2.0);\n");
    EXPECT_EQ(renderWith("V = exp(-V);", Precision::Double), "V = exp(-(V));\n");
}

TEST(SnippetRender, StatementsKeepTheirLines) {
    const std::string code = "V += 1.0;\n\n  /* two\n lines */\nU = V; // end";
    const std::string out = renderWith(code, Precision::Float, {}, "Exc.simCode");
    EXPECT_EQ(out, "#line 1 \"Exc.simCode\"\nV += 1.0f;\n\n\n\nU = V;\n");
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'),
              std::count(code.begin(), code.end(), '\n') + 2);
    EXPECT_EQ(renderWith("if (V > 1.0)\n{\n  V = 0.0;\n}\nelse U = 1.0;\n", Precision::Double),
              "if (V > 1.0)\n{\nV = 0.0;\n} else\nU = 1.0;\n\n");
    EXPECT_EQ(renderWith("V = V +\n  U;", Precision::Double), "V = V + \nU;\n");
}

TEST(SnippetRender, NoLabelMeansNoLineDirectiveAndOneTrailingNewline) {
    EXPECT_EQ(renderWith("V = 0;\n", Precision::Float), "V = 0;\n\n");
    EXPECT_EQ(renderWith("V = 0;", Precision::Float), "V = 0;\n");
    EXPECT_EQ(renderWith("", Precision::Float), "\n");
}

TEST(SnippetRender, LineLabelIsReducedToSafeCharacters) {
    EXPECT_EQ(renderWith("V = 0;", Precision::Float, {}, "a\"b\\c\nd"),
              "#line 1 \"a_b_c_d\"\nV = 0;\n");
}

TEST(SnippetRender, RunTimeIndicesGoThroughTheCheck) {
    const Scanned s = scan("int h[8];\nh[id % 9u] = 1;\nV = buf[id] + h[7];", context());
    RenderOptions o;
    o.arraySizes = {{"buf", "nBuf"}};
    o.errorFlag = "err";
    EXPECT_EQ(render(s, o), "int32_t u_h[8] = {0};\n"
                            "u_h[sf_index((int64_t)(id % 9u), (uint64_t)(8u), err, 1u)] = 1;\n"
                            "V = buf[sf_index((int64_t)(id), (uint64_t)(nBuf), err, 2u)] + "
                            "u_h[7];\n");
    // Without an error flag or an array size, printing is an internal error, never unchecked.
    RenderOptions noFlag;
    noFlag.arraySizes = o.arraySizes;
    EXPECT_THROW(render(s, noFlag), InternalError);
    RenderOptions noSize;
    noSize.errorFlag = "err";
    EXPECT_THROW(render(s, noSize), InternalError);
}

TEST(SnippetRender, ExpressionFields) {
    Context c = context();
    c.field = "thresholdConditionCode";
    c.expression = true;
    EXPECT_EQ(render(scan("V >= Vthresh && V > 0.5", c), {}, Precision::Float, ""),
              "((V >= Vthresh) && (V > 0.5f))\n");
    EXPECT_EQ(render(scan("", c), {}, Precision::Float, ""), "\n");
}

TEST(SnippetRender, WriteThroughStoresRightAfterEachWholeAssignment) {
    const Scanned s = scan("if (V > 1.0) V = 0.0; else U += 1.0;\n"
                           "for (int i = 0; i < 2; i++) V++;\n"
                           "--U;\n"
                           "V = (U = 2.0) + 1.0;\n"
                           "for (V = 0.0; V < 1.0; V += 0.5) { }",
                           context());
    RenderOptions o;
    o.writeThrough = {{"V", "sV;"}, {"U", "sU;"}};
    EXPECT_EQ(render(s, o), "if (V > 1.0f) { V = 0.0f; sV; } else { U += 1.0f; sU; }\n"
                            "for (int32_t u_i = 0; u_i < 2; (u_i)++) { (V)++; sV; }\n"
                            "{ --(U); sU; }\n"
                            "{ V = (U = 2.0f) + 1.0f; sV; }\n"
                            "for (V = 0.0f; V < 1.0f; V += 0.5f) { }\n");
    // Where no store follows: U inside an expression, V in a for header.
    EXPECT_EQ(assignedOutsideStatements(s), (std::set<std::string>{"U", "V"}));
    EXPECT_TRUE(assignedOutsideStatements(scan("V = 1.0; U -= V;", context())).empty());
    // Without write-through entries nothing changes.
    EXPECT_EQ(render(scan("V = 1.0;", context()), RenderOptions{}), "V = 1.0f;\n");
}

// Integer division and modulo whose divisor may be 0 (or -1, for a signed minimum) go through
// the checked helpers, each site with its own ordinal and position; a divisor that rules both
// out is printed plainly.
TEST(SnippetRender, IntegerDivisionIsCheckedUnlessTheDivisorIsSafe) {
    const Scanned s =
        scan("int a = 7;\nint b = a / (int)id;\nuint32_t c = id % 3u;\nint d = a / -1;\n"
             "int e = a % 4;\nuint32_t f = id / 0xffffffffu;\nscalar g = V / (scalar)id;",
             context());
    RenderOptions o;
    o.errorFlag = "err";
    EXPECT_EQ(render(s, o), "int32_t u_a = 7;\n"
                            "int32_t u_b = sf_div_i32(u_a, (int32_t)(id), err, 1u);\n"
                            "uint32_t u_c = id % 3u;\n"
                            "int32_t u_d = sf_div_i32(u_a, -(1), err, 2u);\n"
                            "int32_t u_e = u_a % 4;\n"
                            "uint32_t u_f = id / 4294967295u;\n"
                            "float u_g = V / ((float)(id));\n");
    ASSERT_EQ(s.checks.size(), 2u);
    EXPECT_EQ(s.checks[0].kind, CheckKind::Division);
    EXPECT_EQ(s.checks[0].op, "/");
    EXPECT_EQ(s.checks[0].typeName, "int32_t");
    EXPECT_EQ(s.checks[0].line, 2);
    EXPECT_EQ(s.checks[0].column, 11); // the operator
    EXPECT_EQ(s.checks[1].line, 4);
    // Without a place to report, a checked division is never printed unchecked.
    EXPECT_THROW(render(s, RenderOptions{}), InternalError);
}

TEST(SnippetRender, EveryPromotedTypeHasItsHelper) {
    RenderOptions o;
    o.errorFlag = "err";
    EXPECT_EQ(render(scan("int64_t x = 5; uint64_t y = 6u; x %= x; y /= y;", context()), o),
              "int64_t u_x = 5; uint64_t u_y = 6u; u_x = sf_rem_i64(u_x, u_x, err, 1u); "
              "u_y = sf_div_u64(u_y, u_y, err, 2u);\n");
}

// `t op= v` that needs a check is spelled out `t = (T)(t op v)`; a target with side effects
// would be evaluated twice, so it is refused with its position.
TEST(SnippetRender, CompoundAssignmentsThatNeedAGuardAreSpelledOut) {
    RenderOptions o;
    o.errorFlag = "err";
    o.arraySizes = {{"buf", "n"}};
    EXPECT_EQ(
        render(scan("int8_t k = 9; k /= (int8_t)id; int i = 3; i *= V; i += 2;", context()), o),
        "int8_t u_k = 9; u_k = (int8_t)(sf_div_i32(u_k, (int8_t)(id), err, 1u)); int32_t "
        "u_i = 3; u_i = (int32_t)sf_f32_to_i32(u_i * V, 32u); u_i += 2;\n");
    try {
        scan("int h[4]; int i = 0; h[i++] /= (int)id;", context());
        FAIL() << "accepted";
    } catch (const ModelError& e) {
        EXPECT_NE(std::string(e.what()).find("Exc.simCode line 1, column 29: '/=' evaluates its "
                                             "target twice"),
                  std::string::npos)
            << e.what();
    }
    // Without a check the target is evaluated once, as written.
    EXPECT_NO_THROW(scan("int h[4]; int i = 0; h[i++] /= 2;", context()));
}

// Shift counts are masked by the width of the shifted type (OpenCL C's rule, on every backend).
TEST(SnippetRender, ShiftCountsAreMaskedByTheWidth) {
    EXPECT_EQ(
        renderWith("int64_t x = 1; uint32_t n = id; x = x << n; n >>= id; V = (scalar)(1 << 3);",
                   Precision::Float),
        "int64_t u_x = 1; uint32_t u_n = id; u_x = u_x << ((u_n) & 63); u_n >>= ((id) & "
        "31); V = (float)((1 << ((3) & 31)));\n");
}

// Every conversion of a floating value to an integer type saturates at the target's bounds
// (the helper is picked by the source type and the target's signedness and width); bool is a
// comparison, not a conversion.
TEST(SnippetRender, FloatToIntegerConversionsSaturate) {
    EXPECT_EQ(
        renderWith("uint8_t a = V; int64_t b = (int64_t)V; uint64_t c; c = V; bool d = V;",
                   Precision::Float),
        "uint8_t u_a = (uint8_t)sf_f32_to_u32(V, 8u); int64_t u_b = (int64_t)sf_f32_to_i64(V, "
        "64u); uint64_t u_c; u_c = (uint64_t)sf_f32_to_u64(V, 64u); bool u_d = V;\n");
    EXPECT_EQ(renderWith("int32_t a = (int32_t)V; uint32_t b = V;", Precision::Double),
              "int32_t u_a = (int32_t)sf_f64_to_i32(V, 32u); uint32_t u_b = "
              "(uint32_t)sf_f64_to_u32(V, 32u);\n");
}
