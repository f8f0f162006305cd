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
        "const uint32_t u_n = 2, u_m = u_n; int32_t u_a[3] = {(int32_t)(1.5), (int32_t)(2)};\n");
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
