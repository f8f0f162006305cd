// Robustness: random token soup and randomly damaged valid snippets must either scan or fail with
// a ModelError that names the group and field — never crash, hang or throw anything else.
#include "snippet/scanner.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace spikeforge;

namespace {

snippet::Context fuzzContext() {
    snippet::Context c;
    c.group = "Fuzz";
    c.field = "simCode";
    c.names = {{"V", snippet::NameKind::ReadWrite},
               {"tau", snippet::NameKind::ReadOnly},
               {"t", snippet::NameKind::ReadOnly},
               {"Isyn", snippet::NameKind::ReadOnly},
               {"injectCurrent", snippet::NameKind::Function}};
    return c;
}

void scanMustNotMisbehave(const std::string& code, const snippet::Context& ctx) {
    try {
        const auto s = snippet::scan(code, ctx);
        // Whatever scans must also render, with line breaks preserved.
        const std::string out = snippet::render(s, {{"V", "l_V"}}, Precision::Float, "F.s");
        EXPECT_EQ(std::count(out.begin(), out.end(), '\n'),
                  std::count(code.begin(), code.end(), '\n') + 2)
            << code;
    } catch (const ModelError& e) {
        EXPECT_NE(std::string(e.what()).find("Fuzz.simCode"), std::string::npos) << e.what();
    }
}

TEST(SnippetFuzz, RandomTokenSoup) {
    const std::vector<std::string> pieces = {"V",      "tau",    "t",  "Isyn", "injectCurrent",
                                             "(",      ")",      "{",  "}",    "[",
                                             "]",      ";",      "=",  "+=",   "==",
                                             "<",      "?",      ":",  "1.5",  "2",
                                             ".5e",    "0x",     "if", "else", "for",
                                             "int",    "scalar", "x",  "\"",   "'",
                                             "#",      "/*",     "*/", "//",   "\n",
                                             " ",      "->",     "::", "++",   "--",
                                             "return", "new",    ",",  "exp"};
    std::mt19937 rng(7);
    const auto ctx = fuzzContext();
    for (int i = 0; i < 5000; i++) {
        std::string code;
        const int n = 1 + static_cast<int>(rng() % 24);
        for (int k = 0; k < n; k++)
            code += pieces[rng() % pieces.size()] + " ";
        scanMustNotMisbehave(code, ctx);
    }
}

TEST(SnippetFuzz, DamagedValidSnippets) {
    const std::string valid = "scalar x = exp(-t / tau);\nif (V > 1.0) {\n    V = x * 2.0f;\n}\n"
                              "injectCurrent(V + Isyn);\nfor (int i = 0; i < 3; i++) V += 0.5;";
    std::mt19937 rng(11);
    const auto ctx = fuzzContext();
    scanMustNotMisbehave(valid, ctx); // the intact snippet scans
    EXPECT_NO_THROW(snippet::scan(valid, ctx));
    for (int i = 0; i < 5000; i++) {
        std::string code = valid;
        const int edits = 1 + static_cast<int>(rng() % 3);
        for (int e = 0; e < edits; e++) {
            const size_t pos = rng() % code.size();
            switch (rng() % 3) {
            case 0:
                code.erase(pos, 1 + rng() % 3);
                break;
            case 1:
                code.insert(pos, 1, static_cast<char>(32 + rng() % 95));
                break;
            default:
                code[pos] = static_cast<char>(rng() % 128);
                break;
            }
            if (code.empty()) code.assign(1, 'V');
        }
        scanMustNotMisbehave(code, ctx);
    }
}

TEST(SnippetFuzz, HostilePiecesAndDeepStructures) {
    const std::vector<std::string> pieces = {"%:",      "%:%:",
                                             "<%",      "%>",
                                             "<:",      ":>",
                                             "?\?=",    "?\?/",
                                             "\\",      "&",
                                             "*",       "V",
                                             "(",       ")",
                                             "[",       "]",
                                             "{",       "}",
                                             ";",       "int a[3];",
                                             "a[",      "V]",
                                             "0",       "-1",
                                             "4096",    "switch (1) {",
                                             "case 1:", "default:",
                                             "break;",  "continue;",
                                             "(id)",    "+= 1",
                                             "++",      "t",
                                             "tau",     "= ",
                                             "/ 0",     "% 0",
                                             "(int)",   "(scalar*)",
                                             "sizeof",  "const",
                                             "\n",      "//",
                                             "/*",      "*/",
                                             ",",       "?",
                                             ":",       "injectCurrent(",
                                             "exp(",    "1e40f",
                                             "0x",      "while (1)",
                                             "for (;;)"};
    std::mt19937 rng(13);
    const auto ctx = fuzzContext();
    for (int i = 0; i < 4000; i++) {
        std::string code;
        const int n = 1 + static_cast<int>(rng() % 40);
        for (int k = 0; k < n; k++)
            code += pieces[rng() % pieces.size()] + " ";
        scanMustNotMisbehave(code, ctx);
    }
    for (int depth : {100, 255, 300, 5000, 20000}) {
        scanMustNotMisbehave("V = " + std::string(depth, '(') + "1" + std::string(depth, ')') + ";",
                             ctx);
        scanMustNotMisbehave(std::string(depth, '{') + std::string(depth, '}'), ctx);
        scanMustNotMisbehave("V = " + std::string(depth, '!') + "V;", ctx);
    }
}

} // namespace
