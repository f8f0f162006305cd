// Tests of the snippet front end: tokenising, name resolution, types, write checks, rejected
// constructs and limits. Error tests check the exception type and the line/column in the message.
// Printing is tested in test_snippet_render.cpp, run-time index checks in
// test_snippet_runtime.cpp.
#include "snippet/scanner.hpp"
#include "snippet/suggest.hpp"

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
        {"V", NameKind::ReadWrite},
        {"U", NameKind::ReadWrite},
        {"Vthresh", NameKind::ReadOnly},
        {"tau", NameKind::ReadOnly},
        {"Isyn", NameKind::ReadOnly},
        {"dt", NameKind::ReadOnly},
        {"id", {NameKind::ReadOnly, Type::U32}},
        {"count", {NameKind::ReadWrite, Type::U32}},
        {"buf", {NameKind::ReadOnly, Type::Scalar, true}},
        {"hist", {NameKind::ReadWrite, Type::Scalar, true}},
        {"addToPost", NameKind::Function},
        {"addToPostDelay", NameKind::Function},
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
    const Scanned s =
        scan("count <<= 1; count >>= id << 2 >> 1; V = (U != V && U >= 1) || U <= 2 ? "
             "1 : 0; count %= 3; count ^= 1;",
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

TEST(SnippetNames, LocalsAreBlockScoped) {
    EXPECT_TRUE(contains(scanError("if (V > 0.0) { scalar x = 1.0; }\nV = x;"),
                         "line 2, column 5: unknown identifier 'x'"));
    EXPECT_TRUE(contains(scanError("for (int i = 0; i < 2; i++) {}\nV = i;"),
                         "line 2, column 5: unknown identifier 'i'"));
    EXPECT_TRUE(contains(scanError("int k = 1;\nint k = 2;"),
                         "line 2, column 5: 'k' is already declared in this block"));
    EXPECT_NO_THROW(scan("int k = 1;\n{ int k = 2; V += k; }\nV += k;", neuronContext()));
}

// PyGeNN code strings call gennrand_uniform() and friends: the same functions, checked and
// printed under spikeforge's names, refused where the function is, and not a name to declare.
TEST(SnippetNames, GeNNsSpellingsOfTheRandomFunctionsAreTheFunctions) {
    const Scanned s = scan("V += gennrand_uniform() * dt;", neuronContext());
    EXPECT_EQ(s.calledFunctions, (std::set<std::string>{"rand_uniform"}));
    EXPECT_TRUE(s.usesRng);
    const std::string printed = render(s, {}, Precision::Float, "");
    EXPECT_TRUE(contains(printed, "rand_uniform()"));
    EXPECT_FALSE(contains(printed, "gennrand"));
    EXPECT_TRUE(contains(scanError("V += gennrand_normal();"),
                         "line 1, column 6: 'rand_normal' cannot be called in simCode"));
    EXPECT_TRUE(contains(scanError("V += gennrand_uniform(1.0);"),
                         "'rand_uniform' takes 0 arguments, not 1"));
    EXPECT_TRUE(contains(scanError("scalar gennrand_uniform = 1.0;"),
                         "declaration of 'gennrand_uniform' shadows the function"));
    EXPECT_TRUE(contains(scanError("V += gennrand_log_normal(0.0, 1.0);"),
                         "'rand_log_normal' cannot be called in simCode"));
    EXPECT_TRUE(contains(scanError("V += gennrand_lognormal();"),
                         "unknown identifier 'gennrand_lognormal'"));
}

TEST(SnippetNames, FactsAreRecordedOnce) {
    const Scanned s = scan("V += Isyn * dt / tau; hist[id]++; --U; addToPost(V); V = exp(V);\n"
                           "if (rand_uniform() < 0.5) { addToPostDelay(V, count); }",
                           neuronContext());
    EXPECT_EQ(s.referencedNames,
              (std::set<std::string>{"V", "Isyn", "dt", "tau", "hist", "id", "U", "addToPost",
                                     "rand_uniform", "addToPostDelay", "count"}));
    EXPECT_EQ(s.assignedNames, (std::set<std::string>{"V", "hist", "U"}));
    EXPECT_EQ(s.readNames,
              (std::set<std::string>{"V", "Isyn", "dt", "tau", "hist", "id", "U", "count"}));
    const Scanned w = scan("V = 1.0; hist[count] = 2.0; (U) = V;", neuronContext());
    EXPECT_EQ(w.readNames, (std::set<std::string>{"count", "V"}));
    EXPECT_EQ(w.assignedNames, (std::set<std::string>{"V", "hist", "U"}));
    EXPECT_EQ(s.calledFunctions,
              (std::set<std::string>{"addToPost", "exp", "rand_uniform", "addToPostDelay"}));
    EXPECT_TRUE(s.usesRng);
    EXPECT_TRUE(s.usesAddToPostDelay);
    EXPECT_EQ(s.checkedArrays, (std::vector<std::string>{"hist"}));

    const Scanned plain = scan("V = exp(V) + buf[2];", neuronContext());
    EXPECT_FALSE(plain.usesRng);
    EXPECT_FALSE(plain.usesAddToPostDelay);
    EXPECT_TRUE(plain.assignedNames.contains("V"));
    // An EGP's length is known only at run time: even a constant index is checked then.
    EXPECT_EQ(plain.checkedArrays, (std::vector<std::string>{"buf"}));
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
    EXPECT_TRUE(contains(scanError("V = (V)(1.0);"), "column 8: only functions can be called"));
}

TEST(SnippetNames, BuiltInFunctionsOnlyWhereTheContextDeclaresThem) {
    EXPECT_TRUE(contains(scanError("injectCurrent(V);"),
                         "column 1: 'injectCurrent' cannot be called in simCode"));
    EXPECT_TRUE(
        contains(scanError("V = rand_normal();"), "column 5: 'rand_normal' cannot be called"));
}

// ---- types and calls -------------------------------------------------------------------------

TEST(SnippetTypes, ArityAndArgumentTypesAreChecked) {
    EXPECT_TRUE(
        contains(scanError("V = exp(1.0, 2.0);"), "column 5: 'exp' takes 1 argument, not 2"));
    EXPECT_TRUE(contains(scanError("V = 1;\nV = pow(V);"),
                         "line 2, column 5: 'pow' takes 2 arguments, not 1"));
    EXPECT_TRUE(contains(scanError("addToPost();"), "'addToPost' takes 1 argument, not 0"));
    EXPECT_TRUE(contains(scanError("addToPostDelay(V, 1.5);"),
                         "column 19: argument 2 of 'addToPostDelay' must be an integer"));
    EXPECT_TRUE(
        contains(scanError("V = buf[1.5];"), "column 9: an array index must be an integer"));
    EXPECT_TRUE(contains(scanError("V = abs(id);"), "column 9: 'abs' of an unsigned value"));
}

TEST(SnippetTypes, VoidFunctionsAreStatementsOnly) {
    EXPECT_TRUE(
        contains(scanError("V = addToPost(1.0);"), "column 5: 'addToPost(…)' returns nothing"));
    EXPECT_TRUE(contains(scanError("V = 1, addToPost(1.0);"), "column 8: 'addToPost(…)' returns"));
    EXPECT_NO_THROW(scan("addToPost(V * 2.0);", neuronContext()));
}

TEST(SnippetTypes, OperatorsNeedOperandsOfTheRightType) {
    EXPECT_TRUE(contains(scanError("V = V % 2;"), "column 7: '%' needs integer operands"));
    EXPECT_TRUE(contains(scanError("count = count << 1.0;"), "'<<' needs integer operands"));
    EXPECT_TRUE(contains(scanError("V = ~V;"), "column 6: '~' needs an integer"));
    EXPECT_TRUE(contains(scanError("count = count << 32;"),
                         "column 18: shift by 32 is out of range for 'uint32_t'"));
    EXPECT_TRUE(contains(scanError("switch (V) { default: break; }"),
                         "column 9: the value of a switch must be an integer"));
    EXPECT_NO_THROW(scan("count = count % 7u + (count & 3u) ^ (count | 1u);", neuronContext()));
}

TEST(SnippetTypes, IntegerDivisionByAConstantZeroIsRejected) {
    EXPECT_TRUE(contains(scanError("count = count / 0;"), "column 17: integer division by zero"));
    EXPECT_TRUE(contains(scanError("count = count % (2 - 2);"), "integer division by zero"));
    EXPECT_TRUE(contains(scanError("V = 1;\ncount /= 0u;"), "line 2, column 10: integer division"));
    // Floating division by zero is IEEE arithmetic (inf), not undefined behaviour.
    EXPECT_NO_THROW(scan("V = V / 0;", neuronContext()));
}

TEST(SnippetTypes, ArraysAreNotValues) {
    EXPECT_TRUE(contains(scanError("V = buf;"), "column 5: array 'buf' cannot be used as a value"));
    EXPECT_TRUE(contains(scanError("scalar a[2];\nV = a + 1.0;"),
                         "line 2, column 5: array 'a' cannot be used as a value"));
    EXPECT_TRUE(contains(scanError("V = exp(buf);"), "array 'buf' cannot be used as a value"));
    EXPECT_TRUE(contains(scanError("V = V[0];"), "column 5: 'V' is not an array"));
    EXPECT_TRUE(contains(scanError("V = exp(1.0)[0];"), "only arrays can be indexed"));
}

TEST(SnippetTypes, LiteralsAreTypedAndRangeChecked) {
    EXPECT_TRUE(contains(scanError("V = 1e40f;"), "column 5: floating literal is out of range"));
    EXPECT_TRUE(contains(scanError("V = 1.0L;"), "long double literals ('1.0L') are not"));
    EXPECT_TRUE(contains(scanError("V = 99999999999999999999;"), "integer literal"));
    EXPECT_TRUE(contains(scanError("V = 08;"), "column 5: malformed number '08'"));
    EXPECT_TRUE(contains(scanError("V = 1e999;"), "out of range"));
    EXPECT_NO_THROW(scan("count = 0x7fffffff + 017 + 4294967295u + 1ull;", neuronContext()));
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

// The write check is made on the typed tree: parentheses do not hide the target.
TEST(SnippetWrites, ParenthesisedTargetsAreStillChecked) {
    EXPECT_EQ(scanError("(id) += 100000000;"),
              "Exc.simCode line 1, column 2: cannot assign to read-only 'id'");
    EXPECT_TRUE(contains(scanError("V = 1;\n(id)++;"),
                         "line 2, column 2: cannot assign to read-only 'id'"));
    EXPECT_TRUE(
        contains(scanError("((tau)) = 1.0;"), "column 3: cannot assign to read-only 'tau'"));
    EXPECT_TRUE(contains(scanError("--(((dt)));"), "column 6: cannot assign to read-only 'dt'"));
    EXPECT_TRUE(
        contains(scanError("(buf)[0] = 1.0;"), "column 2: cannot assign to read-only 'buf'"));
}

TEST(SnippetWrites, OnlyVariablesAndElementsAreAssignable) {
    EXPECT_TRUE(contains(scanError("(V > 0 ? V : U) = 1.0;"),
                         "column 2: the target of '=' must be a variable or an array element"));
    EXPECT_TRUE(contains(scanError("(V + 1.0) = 2.0;"), "the target of '='"));
    EXPECT_TRUE(contains(scanError("V++ = 1.0;"), "the target of '='"));
    EXPECT_TRUE(contains(scanError("(V, U) = 1.0;"), "the target of '='"));
    EXPECT_TRUE(contains(scanError("const int k = 1;\nk = 2;"),
                         "line 2, column 1: cannot assign to const local 'k'"));
    EXPECT_TRUE(contains(scanError("const scalar w[2] = {1, 2};\nw[0] = 2;"),
                         "line 2, column 1: cannot assign to const local 'w'"));
    EXPECT_TRUE(contains(scanError("bool b = true;\nb++;"), "'++' cannot be applied to a bool"));
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
    EXPECT_TRUE(contains(scanError("(rand_uniform)++;"), "cannot assign to function"));
}

// ---- accepted code ---------------------------------------------------------------------------

TEST(SnippetAccepts, LocalsLoopsSwitchCastsTernariesAndIndexing) {
    const std::string code = "scalar acc = 0.0, k;\n"
                             "const unsigned int n = (unsigned int)id;\n"
                             "for (int i = 0, j = 1; i < 10; i++, j += 2) {\n"
                             "    acc += buf[(i + j) % 4] * (scalar)i;\n"
                             "    if (i == 3) continue;\n"
                             "}\n"
                             "k = sizeof(uint32_t) + n;\n"
                             "V = (V > Vthresh) ? acc : fmax(k, exp(-dt / tau));\n"
                             "hist[id] = (V >= Vthresh) ? 1 : 0;\n"
                             "while (k > 1.0) { k /= 2.0; if (k < 0.1) break; }\n"
                             "do { k++; } while (k < 3.0);\n"
                             "switch (n) { case 1: U = 0; break; case 2: { int z = 1; U = z; }\n"
                             "default: ; }\n"
                             "uint8_t small = (uint8_t)255; int64_t big = -small;\n"
                             "bool b = !big && true; U += b ? 1.0f : (float)0.5;\n";
    Scanned s;
    ASSERT_NO_THROW(s = scan(code, neuronContext()));
    EXPECT_EQ(s.assignedNames, (std::set<std::string>{"V", "hist", "U"}));
    EXPECT_EQ(s.referencedNames,
              (std::set<std::string>{"V", "U", "Vthresh", "tau", "dt", "id", "buf", "hist"}));
    EXPECT_EQ(s.locals.size(), 9u);
}

TEST(SnippetAccepts, SameLocalNameInTwoBlocks) {
    EXPECT_NO_THROW(scan("if (V > 0.0) { int j = 1; V += j; } else { int j = 2; V -= j; }\n"
                         "for (int i = 0; i < 2; i++) {}\nfor (int i = 0; i < 3; i++) {}",
                         neuronContext()));
}

TEST(SnippetAccepts, LocalArrays) {
    const Scanned s = scan("scalar w3[3] = {1.0, 2.0, 3.0}, x = w3[1];\nint h[2 * 8];\n"
                           "h[count % 16u] = 1;\nV = x + h[15];",
                           neuronContext());
    EXPECT_EQ(s.assignedNames, (std::set<std::string>{"V"}));
    ASSERT_EQ(s.locals.size(), 3u);
    EXPECT_EQ(s.locals[2].length, 16u);
    // Constant indices are checked now; only h[count % 16u] needs a run-time check.
    EXPECT_EQ(s.checkedArrays, (std::vector<std::string>{"h"}));
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

TEST(SnippetHelpers, FunctionTableHasArities) {
    const auto& m = mathFunctions();
    for (const char* f : {"exp", "log1p", "atan2", "fmin", "copysign", "tgamma", "abs"})
        EXPECT_TRUE(m.contains(f)) << f;
    EXPECT_FALSE(m.contains("printf"));
    EXPECT_FALSE(m.contains("rand_uniform")); // a built-in, not a maths function
    ASSERT_NE(functionInfo("fma"), nullptr);
    EXPECT_EQ(functionInfo("fma")->arity, 3);
    EXPECT_EQ(functionInfo("rand_binomial")->arity, 2);
    EXPECT_EQ(functionInfo("addToPostDelay")->arity, 2);
    EXPECT_EQ(functionInfo("system"), nullptr);
    EXPECT_TRUE(contains(scanError("V = min(V, U);"), "unknown identifier 'min' (did you mean"));
    const Scanned s = scan("V = fma(V, 2.0, log(fabs(U) + 1.0));", neuronContext());
    EXPECT_EQ(s.referencedNames, (std::set<std::string>{"V", "U"}));
}

TEST(SnippetHelpers, DeclaredTypeNames) {
    EXPECT_EQ(parseTypeName("unsigned int", "G.x"), Type::U32);
    EXPECT_EQ(parseTypeName("scalar", "G.x"), Type::Scalar);
    EXPECT_EQ(typeName(Type::Scalar, Precision::Double), "double");
    EXPECT_EQ(typeName(Type::I16, Precision::Float), "int16_t");
    try {
        parseTypeName("float*", "Grp.w");
        ADD_FAILURE() << "no error";
    } catch (const ModelError& e) {
        EXPECT_TRUE(contains(e.what(), "Grp.w: type 'float*'"));
    }
}
