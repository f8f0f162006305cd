// Tests of the snippet scanner: tokenising, name resolution, write checks, rejected constructs
// and rendering. Error tests check the exception type and the line/column in the message.
#include "snippet/scanner.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace spikeforge;
using namespace spikeforge::snippet;

namespace {

Context neuronContext() {
    Context ctx;
    ctx.group = "Exc";
    ctx.field = "simCode";
    ctx.names = {
        {"V", NameKind::ReadWrite},           {"U", NameKind::ReadWrite},
        {"Vthresh", NameKind::ReadOnly},      {"tau", NameKind::ReadOnly},
        {"Isyn", NameKind::ReadOnly},         {"dt", NameKind::ReadOnly},
        {"id", NameKind::ReadOnly},           {"buf", NameKind::ReadOnly},
        {"hist", NameKind::ReadWrite},        {"addToPost", NameKind::Function},
        {"rand_uniform", NameKind::Function},
    };
    return ctx;
}

// The message of the ModelError that scanning `code` throws. Any other exception type escapes
// and fails the test; no exception at all is reported as a failure.
std::string scanError(const std::string& code, const Context& ctx = neuronContext()) {
    try {
        scan(code, ctx);
    } catch (const ModelError& e) {
        return e.what();
    }
    ADD_FAILURE() << "expected a ModelError for: " << code;
    return "";
}

// Like gmock's HasSubstr, but the test binary links GoogleTest only.
::testing::AssertionResult contains(const std::string& text, const std::string& part) {
    if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << "\"" << text << "\" does not contain \"" << part << "\"";
}

std::string renderWith(const std::string& code, Precision precision,
                       const std::map<std::string, std::string>& subs = {},
                       const std::string& label = "") {
    return render(scan(code, neuronContext()), subs, precision, label);
}

std::vector<std::string> significantTexts(const Scanned& s) {
    std::vector<std::string> out;
    for (const Token& t : s.tokens)
        if (t.kind != TokenKind::Whitespace && t.kind != TokenKind::Comment) out.push_back(t.text);
    return out;
}

} // namespace

// ---- tokenising ------------------------------------------------------------------------------

TEST(SnippetTokenise, MultiLineCodeWithCommentsKeepsEveryCharacterAndPosition) {
    const std::string code = "V += 1.5; // step\n  /* block\n comment */ U = V;";
    const Scanned s = scan(code, neuronContext());

    std::string joined;
    for (const Token& t : s.tokens)
        joined += t.text;
    EXPECT_EQ(joined, code);

    // V, ws, +=, ws, 1.5, ;, ws, comment, ws("\n  "), comment, ws, U, ws, =, ws, V, ;
    ASSERT_EQ(s.tokens.size(), 17u);
    EXPECT_EQ(s.tokens[2].kind, TokenKind::Operator);
    EXPECT_EQ(s.tokens[2].text, "+=");
    EXPECT_EQ(s.tokens[4].kind, TokenKind::Number);
    EXPECT_EQ(s.tokens[4].column, 6);
    EXPECT_EQ(s.tokens[7].kind, TokenKind::Comment);
    EXPECT_EQ(s.tokens[7].text, "// step");
    EXPECT_EQ(s.tokens[8].kind, TokenKind::Whitespace);
    EXPECT_EQ(s.tokens[8].text, "\n  ");
    EXPECT_EQ(s.tokens[9].kind, TokenKind::Comment);
    EXPECT_EQ(s.tokens[9].text, "/* block\n comment */");
    EXPECT_EQ(s.tokens[9].line, 2);
    EXPECT_EQ(s.tokens[9].column, 3);
    const Token& u = s.tokens[11];
    EXPECT_EQ(u.kind, TokenKind::Identifier);
    EXPECT_EQ(u.text, "U");
    EXPECT_EQ(u.line, 3);
    EXPECT_EQ(u.column, 13);
}

TEST(SnippetTokenise, NumbersAreSingleTokens) {
    const Scanned s = scan("V = 1.0e-3f + 0x1Fu + .5 + 2.f + 10UL + 1E+4 + 7ll;", neuronContext());
    EXPECT_EQ(significantTexts(s),
              (std::vector<std::string>{"V", "=", "1.0e-3f", "+", "0x1Fu", "+", ".5", "+", "2.f",
                                        "+", "10UL", "+", "1E+4", "+", "7ll", ";"}));
}

TEST(SnippetTokenise, MultiCharacterOperatorsUseLongestMatch) {
    const Scanned s = scan("hist <<= 1; hist >>= U << 2 >> 1; V = (U != V && U >= 1) || U <= 2 ? "
                           "1 : 0; hist %= 3; hist ^= 1;",
                           neuronContext());
    const std::vector<std::string> t = significantTexts(s);
    for (const char* op :
         {"<<=", ">>=", "<<", ">>", "!=", "&&", ">=", "||", "<=", "?", ":", "%=", "^="})
        EXPECT_NE(std::find(t.begin(), t.end(), op), t.end()) << op;
    EXPECT_EQ(std::find(t.begin(), t.end(), "<"), t.end());
}

TEST(SnippetTokenise, MalformedNumbersAreRejected) {
    EXPECT_TRUE(contains(scanError("V = 1e;"), "line 1, column 5: malformed number '1e'"));
    EXPECT_TRUE(
        contains(scanError("V = 1;\nU = 1.2.3;"), "line 2, column 5: malformed number '1.2.3'"));
    EXPECT_TRUE(contains(scanError("V = 3f;"), "column 5: malformed number '3f'"));
    EXPECT_TRUE(contains(scanError("V = 0x;"), "column 5: malformed number '0x'"));
    EXPECT_TRUE(contains(scanError("V = 1e+x;"), "column 5: malformed number '1e+x'"));
}

TEST(SnippetTokenise, UnterminatedBlockCommentPointsAtItsStart) {
    EXPECT_TRUE(contains(scanError("V = 1;\n  /* never closed"),
                         "Exc.simCode line 2, column 3: unterminated comment"));
}

// ---- name resolution -------------------------------------------------------------------------

TEST(SnippetNames, UnknownIdentifierHasFullMessageWithSuggestion) {
    EXPECT_EQ(scanError("V = V + tua;"),
              "Exc.simCode line 1, column 9: unknown identifier 'tua' (did you mean 'tau'?)");
}

TEST(SnippetNames, UnknownIdentifierOnLaterLine) {
    EXPECT_TRUE(contains(scanError("V += 1.0;\n\tV = Vthres;"),
                         "line 2, column 6: unknown identifier 'Vthres' (did you mean "
                         "'Vthresh'?)"));
}

TEST(SnippetNames, UnknownIdentifierWithoutCloseNameHasNoSuggestion) {
    const std::string msg = scanError("V = zzzzzz;");
    EXPECT_TRUE(contains(msg, "line 1, column 5: unknown identifier 'zzzzzz'"));
    EXPECT_FALSE(contains(msg, "did you mean"));
}

TEST(SnippetNames, SuggestionsComeFromLocalsAndMathFunctions) {
    EXPECT_TRUE(contains(scanError("scalar decay = 1.0;\nV *= decai;"),
                         "line 2, column 6: unknown identifier 'decai' (did you mean 'decay'?)"));
    EXPECT_TRUE(
        contains(scanError("V = sqr(V);"), "unknown identifier 'sqr' (did you mean 'sqrt'?)"));
}

TEST(SnippetNames, ReferencedAndAssignedNames) {
    const Scanned s =
        scan("V += Isyn * dt / tau; hist[id]++; --U; addToPost(V); V = exp(V);", neuronContext());
    EXPECT_EQ(s.referencedNames,
              (std::set<std::string>{"V", "Isyn", "dt", "tau", "hist", "id", "U", "addToPost"}));
    EXPECT_EQ(s.assignedNames, (std::set<std::string>{"V", "hist", "U"}));
}

TEST(SnippetNames, FunctionMustBeCalled) {
    EXPECT_TRUE(contains(scanError("V = rand_uniform;"),
                         "line 1, column 5: function 'rand_uniform' must be called"));
    EXPECT_TRUE(contains(scanError("V = exp + 1.0;"), "column 5: function 'exp' must be called"));
}

TEST(SnippetNames, VariableCalledLikeAFunctionIsRejected) {
    EXPECT_TRUE(contains(scanError("V = tau(1.0);"), "column 5: 'tau' is not a function"));
    EXPECT_TRUE(contains(scanError("int k = 1;\nV = k(2);"),
                         "line 2, column 5: 'k' is a local variable, not a function"));
}

// ---- writes ----------------------------------------------------------------------------------

TEST(SnippetWrites, AssigningReadOnlyParameterIsRejected) {
    EXPECT_EQ(scanError("V = 0.0;\n  tau = 2.0;"),
              "Exc.simCode line 2, column 3: cannot assign to read-only 'tau'");
    EXPECT_TRUE(
        contains(scanError("Vthresh *= 2.0;"), "column 1: cannot assign to read-only 'Vthresh'"));
    EXPECT_TRUE(
        contains(scanError("buf[id + 1] = V;"), "column 1: cannot assign to read-only 'buf'"));
}

TEST(SnippetWrites, IncrementOrDecrementOfReadOnlyIsRejected) {
    EXPECT_TRUE(contains(scanError("V = 1.0; ++tau;"),
                         "line 1, column 12: cannot assign to read-only 'tau'"));
    EXPECT_TRUE(contains(scanError("V = 1.0;\ndt--;"),
                         "line 2, column 1: cannot assign to read-only 'dt'"));
}

TEST(SnippetWrites, ComparisonIsNotAWrite) {
    const Scanned s = scan(
        "if (tau == V && Vthresh <= V && dt != 0.0 && buf[id] >= 1.0) { V = 0; }", neuronContext());
    EXPECT_EQ(s.assignedNames, (std::set<std::string>{"V"}));
    EXPECT_TRUE(s.referencedNames.contains("tau"));
    EXPECT_TRUE(s.referencedNames.contains("buf"));
}

TEST(SnippetWrites, AssigningAFunctionIsRejected) {
    EXPECT_TRUE(contains(scanError("exp = 1.0;"), "column 1: cannot assign to function 'exp'"));
    EXPECT_TRUE(contains(scanError("V = 1;\naddToPost += 1;"),
                         "line 2, column 1: cannot assign to function 'addToPost'"));
}

// ---- rejected constructs ---------------------------------------------------------------------

TEST(SnippetRejects, StringAndCharacterLiterals) {
    EXPECT_TRUE(contains(scanError("V = 1;\naddToPost(\"x\");"),
                         "line 2, column 11: string literals are not allowed"));
    EXPECT_TRUE(
        contains(scanError("V = 'a';"), "line 1, column 5: character literals are not allowed"));
}

TEST(SnippetRejects, PreprocessorLines) {
    EXPECT_TRUE(contains(scanError("#include <math.h>\nV = 1;"),
                         "Exc.simCode line 1, column 1: preprocessor directives"));
    EXPECT_TRUE(contains(scanError("V = 1;\n  #define X 2"), "line 2, column 3: preprocessor"));
}

TEST(SnippetRejects, CxxOnlyAndUnsafeKeywords) {
    EXPECT_TRUE(contains(scanError("V = new scalar;"), "column 5: 'new' is not allowed"));
    EXPECT_TRUE(contains(scanError("goto end;"), "column 1: 'goto' is not allowed"));
    EXPECT_TRUE(contains(scanError("V = 1;\nstatic int k = 0;"),
                         "line 2, column 1: 'static' is not allowed"));
    EXPECT_TRUE(contains(scanError("V = 1; delete V;"), "column 8: 'delete' is not allowed"));
}

TEST(SnippetRejects, ScopeResolutionArrowAndMemberAccess) {
    EXPECT_TRUE(contains(scanError("V = std::exp(V);"), "unknown identifier 'std'"));
    EXPECT_TRUE(contains(scanError("V = ::exp(V);"), "column 5: '::' is not allowed"));
    EXPECT_TRUE(contains(scanError("V = buf->x;"), "column 8: '->' is not allowed"));
    EXPECT_TRUE(contains(scanError("V = buf.x;"), "column 8: member access"));
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
                         "column 7: declaration of 'exp' shadows the maths function 'exp'"));
    EXPECT_TRUE(contains(scanError("int a = 1, tau = 2;"),
                         "column 12: declaration of 'tau' shadows the model name"));
    EXPECT_TRUE(contains(scanError("for (int id = 0; id < 3; id++) {}"),
                         "column 10: declaration of 'id' shadows"));
}

TEST(SnippetRejects, FunctionalCastsPointersAndFunctionDefinitions) {
    EXPECT_TRUE(contains(scanError("V = scalar(1);"), "column 5: 'scalar(...)' is a C++ "
                                                      "functional cast; write '(scalar)(...)'"));
    EXPECT_TRUE(contains(scanError("int *p = 0;"), "column 5: expected a name or ')' after "
                                                   "type 'int'"));
    EXPECT_TRUE(contains(scanError("int f(int x) { }"), "column 6: functions cannot be defined"));
}

TEST(SnippetRejects, UnbalancedBrackets) {
    EXPECT_TRUE(contains(scanError("V = (1.0 + 2.0;"), "line 1, column 5: '(' is never closed"));
    EXPECT_TRUE(contains(scanError("V = 1.0);"), "line 1, column 8: unmatched ')'"));
    EXPECT_TRUE(contains(scanError("V = buf[(id];"),
                         "column 12: ']' does not match '(' opened at line 1, column 9"));
    EXPECT_TRUE(contains(scanError("if (V > 1.0) {\n  V = 0.0;\n"),
                         "line 1, column 14: '{' is never closed"));
}

// ---- accepted code ---------------------------------------------------------------------------

TEST(SnippetAccepts, LocalsForLoopsCastsTernariesAndIndexing) {
    const std::string code = "scalar acc = 0.0, k;\n"
                             "const unsigned int n = (unsigned int)id;\n"
                             "for (int i = 0, j = 1; i < 10; i++, j += 2) {\n"
                             "    acc += buf[(i + j) % 4] * (scalar)i;\n"
                             "}\n"
                             "k = sizeof(uint32_t) + n;\n"
                             "V = (V > Vthresh) ? acc : fmax(k, exp(-dt / tau));\n"
                             "hist[id] = (V >= Vthresh) ? 1 : 0;\n"
                             "while (k > 1.0) { k /= 2.0; }\n"
                             "do { k++; } while (k < 3.0);\n"
                             "switch (n) { case 1: U = 0; break; default: break; }\n";
    Scanned s;
    ASSERT_NO_THROW(s = scan(code, neuronContext()));
    EXPECT_EQ(s.assignedNames, (std::set<std::string>{"V", "hist", "U"}));
    EXPECT_EQ(s.referencedNames,
              (std::set<std::string>{"V", "U", "Vthresh", "tau", "dt", "id", "buf", "hist"}));
}

TEST(SnippetAccepts, SameLocalNameInTwoBlocks) {
    EXPECT_NO_THROW(scan("if (V > 0.0) { int j = 1; V += j; } else { int j = 2; V -= j; }\n"
                         "for (int i = 0; i < 2; i++) {}\nfor (int i = 0; i < 3; i++) {}",
                         neuronContext()));
}

TEST(SnippetAccepts, LocalArrayWithInitialiserList) {
    const Scanned s = scan("scalar w3[3] = {1.0, 2.0, 3.0}, x = w3[1];\nV = x;", neuronContext());
    EXPECT_EQ(s.assignedNames, (std::set<std::string>{"V"}));
}

// ---- rendering -------------------------------------------------------------------------------

TEST(SnippetRender, FloatLiteralsGetSuffixInSinglePrecision) {
    const std::string code = "V = 1.0 + 1e-3 + .5 + 2.f + 0x10 + 3 + 0xE + 2.5L + 1E2F;";
    EXPECT_EQ(renderWith(code, Precision::Float),
              "V = 1.0f + 1e-3f + .5f + 2.f + 0x10 + 3 + 0xE + 2.5L + 1E2F;\n");
}

TEST(SnippetRender, DoublePrecisionLeavesLiteralsAlone) {
    const std::string code = "V = 1.0 + 1e-3 + .5 + 2.f + 0x10 + 3;";
    EXPECT_EQ(renderWith(code, Precision::Double), code + "\n");
}

TEST(SnippetRender, SubstitutionReplacesWholeIdentifiersOnly) {
    const std::string code = "V = Vthresh + V; // V resets\nU = 1e5 * V;";
    const std::map<std::string, std::string> subs = {
        {"V", "group->V[id]"}, {"e5", "BAD"}, {"scalar", "float"}};
    EXPECT_EQ(renderWith(code, Precision::Double, subs),
              "group->V[id] = Vthresh + group->V[id]; // V resets\nU = 1e5 * group->V[id];\n");
}

TEST(SnippetRender, SubstitutionAppliesToTypeWords) {
    EXPECT_EQ(renderWith("scalar x = (scalar)V;", Precision::Float, {{"scalar", "float"}}),
              "float x = (float)V;\n");
}

TEST(SnippetRender, LineDirectiveAndLineBreaksArePreserved) {
    const std::string code = "V += 1.0;\n\n  /* two\n lines */\nU = V; // end";
    const std::string out = renderWith(code, Precision::Float, {}, "Exc.simCode");
    EXPECT_EQ(out, "#line 1 \"Exc.simCode\"\nV += 1.0f;\n\n  /* two\n lines */\nU = V; // end\n");
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'),
              std::count(code.begin(), code.end(), '\n') + 2);
}

TEST(SnippetRender, NoLabelMeansNoLineDirectiveAndOneTrailingNewline) {
    EXPECT_EQ(renderWith("V = 0;\n", Precision::Float), "V = 0;\n");
    EXPECT_EQ(renderWith("", Precision::Float), "\n");
}

TEST(SnippetRender, LineLabelIsEscaped) {
    EXPECT_EQ(renderWith("V = 0;", Precision::Float, {}, "a\"b\\c"),
              "#line 1 \"a\\\"b\\\\c\"\nV = 0;\n");
}

// ---- helpers ---------------------------------------------------------------------------------

TEST(SnippetHelpers, ClosestName) {
    EXPECT_EQ(closestName("tua", {"V", "tau", "Isyn"}), "tau"); // a transposition is one edit
    EXPECT_EQ(closestName("tu", {"V", "tau"}), "tau");
    EXPECT_EQ(closestName("tau", {"tau"}), "");             // exact match is no suggestion
    EXPECT_EQ(closestName("xyz", {"tau", "V"}), "");        // too far
    EXPECT_EQ(closestName("ab", {"ac", "ab", "ad"}), "ac"); // tie: first candidate
    // Limit is max(1, len / 3): 9 letters allow 3 edits but not 4.
    EXPECT_EQ(closestName("abcdefghi", {"abcdefxyz"}), "abcdefxyz");
    EXPECT_EQ(closestName("abcdefghi", {"abcdewxyz"}), "");
}

TEST(SnippetHelpers, MathFunctionsAreCallableWithoutDeclaration) {
    const auto& m = mathFunctions();
    for (const char* f : {"exp", "log1p", "atan2", "fmin", "copysign", "tgamma", "min", "abs"})
        EXPECT_TRUE(m.contains(f)) << f;
    EXPECT_FALSE(m.contains("printf"));
    const Scanned s = scan("V = fma(V, 2.0, log(fabs(U) + 1.0));", neuronContext());
    EXPECT_EQ(s.referencedNames, (std::set<std::string>{"V", "U"}));
}
