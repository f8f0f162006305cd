// Constructs the closed snippet language refuses: every preprocessor form (digraphs, trigraphs,
// line continuations), pointers in every spelling, variable-length and oversized arrays,
// C++-only words, misplaced statements, and inputs beyond the size and nesting limits. Each
// error must name the group, field, line and column.
#include "snippet/scanner.hpp"

#include <gtest/gtest.h>

#include <string>

using namespace spikeforge;
using namespace spikeforge::snippet;

namespace {

Context context() {
    Context ctx;
    ctx.group = "Exc";
    ctx.field = "simCode";
    ctx.names = {{"V", NameKind::ReadWrite},
                 {"thr", NameKind::ReadOnly},
                 {"id", {NameKind::ReadOnly, Type::U32}},
                 {"k", {NameKind::ReadWrite, Type::U32}},
                 {"buf", {NameKind::ReadOnly, Type::Scalar, true}},
                 {"addToPost", NameKind::Function}};
    return ctx;
}

std::string scanError(const std::string& code, const Context& ctx = context()) {
    try {
        scan(code, ctx);
    } catch (const ModelError& e) {
        return e.what();
    }
    ADD_FAILURE() << "expected a ModelError for: " << code;
    return "";
}

::testing::AssertionResult contains(const std::string& text, const std::string& part) {
    if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << "\"" << text << "\" does not contain \"" << part << "\"";
}

} // namespace

// ---- preprocessor forms ----------------------------------------------------------------------

TEST(SnippetRejects, PreprocessorLines) {
    EXPECT_TRUE(contains(scanError("#include <math.h>\nV = 1;"),
                         "Exc.simCode line 1, column 1: preprocessor directives"));
    EXPECT_TRUE(contains(scanError("V = 1;\n  #define X 2"), "line 2, column 3: preprocessor"));
}

TEST(SnippetRejects, Digraphs) {
    EXPECT_EQ(scanError("%:define X system\nV = 1;"),
              "Exc.simCode line 1, column 1: digraph '%:' is not allowed in snippets");
    EXPECT_TRUE(contains(scanError("V = 1;\n%:%:"), "line 2, column 1: digraph '%:'"));
    EXPECT_TRUE(contains(scanError("if (V > 1) <% V = 0; %>"), "column 12: digraph '<%'"));
    EXPECT_TRUE(contains(scanError("V = buf<:0:>;"), "column 8: digraph '<:'"));
    EXPECT_TRUE(contains(scanError("V = V %> 1;"), "column 7: digraph '%>'"));
    EXPECT_TRUE(contains(scanError("V = thr ? 1 :> 2;"), "column 13: digraph ':>'"));
}

TEST(SnippetRejects, Trigraphs) {
    EXPECT_TRUE(contains(scanError("?\?=define X 1"), "line 1, column 1: trigraph '?\?='"));
    EXPECT_TRUE(
        contains(scanError("V = 1; // ?\?/\nV = 2;"), "line 1, column 11: trigraph '?\?/'"));
    EXPECT_TRUE(contains(scanError("/* ?\?( */ V = 1;"), "column 4: trigraph '?\?('"));
}

TEST(SnippetRejects, LineContinuationAnywhere) {
    EXPECT_EQ(scanError("V = 1; // harmless? \\\nV = 2;"),
              "Exc.simCode line 1, column 21: '\\' (line continuation) is not allowed in "
              "snippets");
    EXPECT_TRUE(contains(scanError("V = 1 + \\\n 2;"), "line 1, column 9: '\\' (line"));
    EXPECT_TRUE(contains(scanError("/* a \\\n b */ V = 1;"), "line 1, column 6: '\\'"));
}

TEST(SnippetRejects, StringAndCharacterLiterals) {
    EXPECT_TRUE(contains(scanError("V = 1;\naddToPost(\"x\");"),
                         "line 2, column 11: string literals are not allowed"));
    EXPECT_TRUE(
        contains(scanError("V = 'a';"), "line 1, column 5: character literals are not allowed"));
}

// ---- pointers and memory ---------------------------------------------------------------------

TEST(SnippetRejects, AddressOfAndDereference) {
    EXPECT_EQ(scanError("(&thr)[0] = 1000;"),
              "Exc.simCode line 1, column 2: the address-of operator '&' is not allowed: "
              "snippets have no pointers");
    EXPECT_TRUE(contains(scanError("V = (&V)[k];"), "column 6: the address-of operator"));
    EXPECT_TRUE(contains(scanError("V = *buf;"), "column 5: the dereference operator '*'"));
    EXPECT_TRUE(
        contains(scanError("V = 1;\n*(buf + 1) = 2;"), "line 2, column 1: the dereference"));
    // Binary & and * are of course fine.
    EXPECT_NO_THROW(scan("k = k & 3u; V = V * 2.0;", context()));
}

TEST(SnippetRejects, PointersAndPointerCasts) {
    EXPECT_TRUE(contains(scanError("int *p;"), "column 5: pointers are not allowed"));
    EXPECT_TRUE(contains(scanError("V = (scalar*)0;"), "column 12: pointer casts are not allowed"));
    EXPECT_TRUE(contains(scanError("V = buf->x;"), "column 8: '->' is not allowed"));
    EXPECT_TRUE(contains(scanError("V = buf.x;"), "column 8: member access"));
}

TEST(SnippetRejects, CastsOnlyToArithmeticTypes) {
    EXPECT_TRUE(contains(scanError("V = (long)V;"), "column 6: type 'long' is not supported: use "
                                                    "int64_t"));
    EXPECT_TRUE(contains(scanError("V = (size_t)k;"), "type 'size_t' is not supported"));
    EXPECT_TRUE(contains(scanError("V = (void)0;"), "'void' is not allowed"));
    EXPECT_TRUE(contains(scanError("V = scalar(1);"), "column 5: 'scalar(...)' is a C++ "
                                                      "functional cast; write '(scalar)(...)'"));
    EXPECT_NO_THROW(
        scan("V = (double)(int32_t)(uint8_t)(bool)k + (scalar)(unsigned)V;", context()));
}

TEST(SnippetRejects, VariableLengthAndBadArrays) {
    EXPECT_TRUE(contains(scanError("int n = 3;\nscalar a[n];"),
                         "line 2, column 10: the size of array 'a' must be an integer constant "
                         "(variable-length arrays are not allowed)"));
    EXPECT_TRUE(contains(scanError("scalar a[k];"), "variable-length arrays are not allowed"));
    EXPECT_TRUE(contains(scanError("scalar a[2.0];"), "must be an integer constant"));
    EXPECT_TRUE(contains(scanError("scalar a[0];"), "column 10: the size of array 'a' must be "
                                                    "between 1 and 4096, not 0"));
    EXPECT_TRUE(contains(scanError("scalar a[1 - 2];"), "between 1 and 4096, not -1"));
    EXPECT_TRUE(contains(scanError("scalar a[5000];"), "not 5000"));
    EXPECT_TRUE(contains(scanError("scalar a[];"), "column 10: an array needs a constant size"));
    EXPECT_TRUE(contains(scanError("scalar a[2][2];"), "multi-dimensional arrays"));
    EXPECT_TRUE(contains(scanError("scalar a[4096], b[4096], c[4096], d[4096], e[1];"),
                         "column 44: local arrays hold more than 16384 elements"));
    EXPECT_TRUE(contains(scanError("scalar a[2] = {1, 2, 3};"),
                         "column 22: too many initialisers for 'a[2]'"));
    EXPECT_TRUE(contains(scanError("scalar a[2] = 1;"), "must be initialised with a '{ … }' list"));
    EXPECT_TRUE(contains(scanError("scalar x = {1};"), "can only initialise an array"));
    EXPECT_TRUE(contains(scanError("V = {1};"), "column 5: a '{ … }' list is only allowed"));
}

TEST(SnippetRejects, ConstantIndicesOutOfRange) {
    EXPECT_EQ(scanError("scalar a[3];\nV = a[3];"),
              "Exc.simCode line 2, column 7: index 3 is out of range for 'a' (3 elements)");
    EXPECT_TRUE(contains(scanError("int a[4];\na[-1] = 0;"), "index -1 is out of range for 'a'"));
    EXPECT_TRUE(contains(scanError("int a[4];\na[(2 + 2)] = 0;"), "index 4 is out of range"));
}

// ---- words and statements --------------------------------------------------------------------

TEST(SnippetRejects, CxxOnlyAndUnsafeKeywords) {
    EXPECT_TRUE(contains(scanError("V = new scalar;"), "column 5: 'new' is not allowed"));
    EXPECT_TRUE(contains(scanError("goto end;"), "column 1: 'goto' is not allowed"));
    EXPECT_TRUE(contains(scanError("V = 1;\nstatic int k2 = 0;"),
                         "line 2, column 1: 'static' is not allowed"));
    EXPECT_TRUE(contains(scanError("V = 1; delete V;"), "column 8: 'delete' is not allowed"));
    EXPECT_TRUE(contains(scanError("asm volatile;"), "column 1: 'asm' is not allowed"));
    EXPECT_TRUE(contains(scanError("_Pragma(V);"), "'_Pragma' is not allowed"));
    EXPECT_TRUE(contains(scanError("V = std::exp(V);"), "column 8: '::' is not allowed"));
    EXPECT_TRUE(contains(scanError("V = ::exp(V);"), "column 5: '::' is not allowed"));
    EXPECT_TRUE(contains(scanError("char c = 0;"), "column 1: type 'char' is not supported"));
    EXPECT_TRUE(contains(scanError("V = sizeof(V);"), "'sizeof' is only allowed on a type"));
}

TEST(SnippetRejects, ReturnHasAClearMessage) {
    EXPECT_TRUE(contains(scanError("if (V > 1) return;"),
                         "column 12: 'return' is not allowed: a snippet is a block of "
                         "statements run inline"));
}

TEST(SnippetRejects, ShadowingDeclarations) {
    EXPECT_TRUE(contains(scanError("scalar V = 1.0;"),
                         "line 1, column 8: declaration of 'V' shadows the model name 'V'"));
    EXPECT_TRUE(contains(scanError("float exp = 2.0;"),
                         "column 7: declaration of 'exp' shadows the function 'exp'"));
    EXPECT_TRUE(contains(scanError("int a = 1, thr = 2;"),
                         "column 12: declaration of 'thr' shadows the model name"));
    EXPECT_TRUE(contains(scanError("for (int id = 0; id < 3; id++) {}"),
                         "column 10: declaration of 'id' shadows"));
    EXPECT_TRUE(contains(scanError("int f(int x) { }"), "column 6: functions cannot be defined"));
    EXPECT_TRUE(contains(scanError("const int c;"), "column 11: const local 'c' needs an "
                                                    "initialiser"));
}

TEST(SnippetRejects, MisplacedStatements) {
    EXPECT_TRUE(contains(scanError("break;"), "column 1: 'break' outside a loop or switch"));
    EXPECT_TRUE(contains(scanError("V = 1;\ncontinue;"), "line 2, column 1: 'continue' outside"));
    EXPECT_TRUE(contains(scanError("switch (k) { case 1: continue; }"), "'continue' outside"));
    EXPECT_TRUE(contains(scanError("case 1: V = 0;"), "column 1: 'case' must be directly inside"));
    EXPECT_TRUE(contains(scanError("switch (k) { case 1: case 1: break; }"),
                         "column 27: duplicate case value 1"));
    EXPECT_TRUE(contains(scanError("switch (k) { default: default: break; }"), "second 'default'"));
    EXPECT_TRUE(contains(scanError("switch (k) { case k: break; }"),
                         "column 19: a case value must be an integer constant"));
    EXPECT_TRUE(contains(scanError("switch (k) { case 1: int z = 1; break; }"),
                         "column 22: a declaration directly inside a switch"));
    EXPECT_TRUE(contains(scanError("switch (k) V = 1;"), "expected '{' after 'switch"));
    EXPECT_TRUE(contains(scanError("if (V) int z = 1;"), "column 8: a declaration here must be "
                                                         "inside a block"));
    EXPECT_TRUE(contains(scanError("else V = 1;"), "column 1: 'else' without a matching 'if'"));
}

TEST(SnippetRejects, SyntaxErrorsNameTheirPosition) {
    EXPECT_TRUE(contains(scanError("V = (1.0 + 2.0;"), "column 15: expected ')' to close '('"));
    EXPECT_TRUE(contains(scanError("V = 1.0);"), "column 8: expected ';' to end the statement"));
    EXPECT_TRUE(contains(scanError("V = buf[(id];"), "column 12: expected ')'"));
    EXPECT_TRUE(contains(scanError("if (V > 1.0) {\n  V = 0.0;\n"),
                         "line 1, column 14: '{' is never closed"));
    EXPECT_TRUE(contains(scanError("V = 1"), "expected ';' to end the statement at the end"));
    EXPECT_TRUE(contains(scanError("V = ;"), "column 5: expected an expression, found ';'"));
    EXPECT_TRUE(contains(scanError("for (;;"), "Exc.simCode line 1"));
}

TEST(SnippetRejects, ExpressionFieldsTakeOneExpression) {
    Context c = context();
    c.field = "thresholdConditionCode";
    c.expression = true;
    EXPECT_NO_THROW(scan("V >= thr && id != 0u", c));
    EXPECT_NO_THROW(scan("", c)); // no condition: never spikes
    EXPECT_TRUE(contains(scanError("V >= thr;", c),
                         "thresholdConditionCode line 1, column 9: expected the end of the "
                         "condition"));
    EXPECT_TRUE(contains(scanError("addToPost(V)", c), "returns nothing"));
}

// ---- limits ----------------------------------------------------------------------------------

TEST(SnippetLimits, DeepNestingIsAnErrorNotAStackOverflow) {
    const std::string deep = "V = " + std::string(30000, '(') + "1" + std::string(30000, ')') + ";";
    EXPECT_TRUE(contains(scanError(deep), "line 1, column 259: nesting deeper than 256 levels"));
    EXPECT_TRUE(contains(scanError("V = " + std::string(60000, '-') + "1;"), "nesting deeper"));
    EXPECT_TRUE(contains(scanError(std::string(60000, '{')), "nesting deeper"));
    std::string ifs;
    for (int i = 0; i < 5000; i++)
        ifs += "if (V) ";
    EXPECT_TRUE(contains(scanError(ifs + "V = 1;"), "nesting deeper"));
    // 250 levels are fine.
    EXPECT_NO_THROW(
        scan("V = " + std::string(250, '(') + "1" + std::string(250, ')') + ";", context()));
}

TEST(SnippetLimits, LongOperatorChainsAreBounded) {
    std::string chain = "V = 1";
    for (int i = 0; i < 5000; i++)
        chain += "+1";
    EXPECT_TRUE(contains(scanError(chain + ";"), "expression nested too deeply"));
    std::string ok = "V = 1";
    for (int i = 0; i < 500; i++)
        ok += "+1";
    EXPECT_NO_THROW(scan(ok + ";", context()));
}

TEST(SnippetLimits, SizeLimit) {
    const std::string huge = "V = " + std::string(1000000, '(') + "1;";
    EXPECT_EQ(scanError(huge), "Exc.simCode: the code is 1000006 bytes long; snippets are limited "
                               "to 65536 bytes");
    const std::string big(70000, ' ');
    EXPECT_TRUE(contains(scanError(big), "limited to 65536 bytes"));
    EXPECT_NO_THROW(scan(std::string(60000, ' ') + "V = 1;", context()));
}
