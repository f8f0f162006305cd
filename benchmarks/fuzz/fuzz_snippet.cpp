// Fuzz target "snippet": random and mutated code strings through the snippet checker
// (snippet::scan, then render for what it accepts), in every kind of code field a model has.
// Only ModelError may come out; anything else, a crash or a hang is a finding.
//
//   fuzz_snippet --inputs 1000000 --seed 1 [SEED_FILES...]
#include "fuzz_common.hpp"

#include "config.hpp"
#include "model/contexts.hpp"
#include "snippet/scanner.hpp"

#include <iostream>
#include <set>

using namespace spikeforge;

namespace {

// A model with every built-in neuron, synapse, postsynaptic, current-source, initialiser and
// connectivity kind, plus a user model with integer and read-only variables: its code fields
// give the contexts inputs are checked in, and the built-ins' code is part of the seeds.
const char* const contextModel = R"(
[model]
dt = 0.1
[neuron_models.User]
params = ["tau", "thr"]
vars = ["V", { name = "n", type = "int" }, { name = "k", type = "uint8_t", access = "ReadOnly" }]
sim_code = "V += dt * (Isyn - V) / tau;"
threshold_condition_code = "V > thr"
reset_code = "V = 0.0; n++;"
[current_source_models.Ramp]
params = ["slope"]
injection_code = "injectCurrent(slope * t);"
[[populations]]
name = "L"
size = 8
model = "LIF"
params = { C = 0.25, TauM = 20.0, Vrest = -65.0, Vreset = -65.0, Vthresh = -50.0, Ioffset = 0.0, TauRefrac = 2.0 }
vars = { V = { init = "NormalClipped", mean = -60.0, sd = 2.0, min = -65.0, max = -50.0 }, RefracTime = 0.0 }
[[populations]]
name = "Z"
size = 8
model = "Izhikevich"
params = { a = 0.02, b = 0.2, c = -65.0, d = 8.0 }
vars = { V = { init = "Uniform", min = -70.0, max = -60.0 }, U = { init = "Normal", mean = -14.0, sd = 1.0 } }
[[populations]]
name = "Src"
size = 8
model = "Poisson"
params = { rate = 10.0 }
vars = { timeStepToSpike = { init = "Exponential", lambda = 1.0 } }
[[populations]]
name = "R"
size = 8
model = "LeakyIntegrate"
params = { C = 1.0, TauM = 20.0, Vrest = 0.0 }
vars = { V = { init = "Gamma", a = 2.0, b = 1.0 } }
[[populations]]
name = "U"
size = 8
model = "User"
params = { tau = 10.0, thr = 1.0 }
vars = { V = { init = "Binomial", n = 10, p = 0.5 }, n = 0, k = 1 }
[[projections]]
name = "A"
source = "Src"
target = "L"
matrix = "sparse"
connectivity = { init = "FixedProbability", prob = 0.1 }
weight_update = { model = "STDPNearest", params = { tauPlus = 20.0, tauMinus = 20.0, Aplus = 0.01, Aminus = 0.01, Wmin = 0.0, Wmax = 1.0 }, vars = { g = 0.5 } }
postsynaptic = { model = "ExpCurr", params = { tau = 5.0 } }
[[projections]]
name = "B"
source = "Src"
target = "Z"
matrix = "sparse"
connectivity = { init = "FixedNumberPostWithReplacement", rowLength = 2 }
weight_update = { model = "STDPAllToAll", params = { tauPlus = 20.0, tauMinus = 20.0, Aplus = 0.01, Aminus = 0.01, Wmin = 0.0, Wmax = 1.0 }, vars = { g = 0.5 }, pre_vars = { preTrace = 0.0, preTraceT = -1e30 }, post_vars = { postTrace = 0.0, postTraceT = -1e30 } }
postsynaptic = { model = "ExpCond", params = { tau = 5.0, E = 0.0 } }
[[projections]]
name = "C"
source = "L"
target = "U"
matrix = "sparse"
max_dendritic_delay_steps = 4
connectivity = { init = "FixedNumberTotalWithReplacement", total = 16 }
weight_update = { model = "StaticPulseDendriticDelay", vars = { g = 0.1, d = 1 } }
postsynaptic = { model = "DeltaCurr" }
[[projections]]
name = "D"
source = "Z"
target = "R"
matrix = "dense"
weight_update = { model = "StaticPulse", vars = { g = 0.1 } }
postsynaptic = { model = "DeltaCurr" }
[[projections]]
name = "E"
source = "U"
target = "R"
matrix = "sparse"
connectivity = { init = "FixedProbabilityNoAutapse", prob = 0.5 }
weight_update = { model = "StaticPulseConstantWeight", params = { g = 0.2 } }
postsynaptic = { model = "DeltaCurr" }
[[projections]]
name = "F"
source = "L"
target = "L"
matrix = "sparse"
connectivity = { init = "OneToOne" }
weight_update = { model = "StaticPulse", vars = { g = 0.1 } }
postsynaptic = { model = "DeltaCurr" }
[[current_sources]]
name = "I1"
target = "L"
model = "DC"
params = { amp = 0.5 }
[[current_sources]]
name = "I2"
target = "Z"
model = "GaussianNoise"
params = { mean = 0.0, sd = 1.0 }
[[current_sources]]
name = "I3"
target = "U"
model = "Ramp"
params = { slope = 0.1 }
)";

// Valid and hostile snippets beside the built-ins' own code (docs/snippets.md and issue #6).
const char* const extraSeeds[] = {
    "scalar x = exp(-t / tau);\nif (V > 1.0) {\n    V = x * 2.0f;\n}\nfor (int i = 0; i < 3; i++) "
    "V += 0.5;",
    "if (refrac > 0.0) { refrac -= dt; }\nif (refrac < 0.5 * dt) { v += dt * (Isyn - v) / tau; }",
    "injectCurrent(inSyn * (E - V));\ninSyn -= dt * inSyn / tau;",
    "addToPost(g);\ng = fmin(Wmax, fmax(Wmin, g - Aminus * exp(-(t - st_post) / tauMinus)));",
    "addToPostDelay(g, d);",
    "value = rand_normal() * sd + mean;",
    "scalar a[4];\nfor (int i = 0; i < 4; i++) { a[i] = 0.25 * i; }\nV += a[3];",
    "switch (n) { case 0: V = 1.0; break; default: V = 0.0; }",
    "do { n--; } while (n > 0);",
    "unsigned int k2 = (unsigned int)(V * 3.0);\nV = k2 > 2u ? 1.0 : 0.0;",
    "int define, x;\n%:define erfc(x) %:x\nV += 0.0;",
    "%:include <stdio.h>\n<% V = 1.0; %>\nscalar q<:2:>;",
    "?\?=define X 1\nV = ?\?- 1;",
    "// comment \\\n/*\nstatic int q = 0;\n// */\nV += 0.0;",
    "(&thr)[0] = 1000.0;",
    "(id) += 100000000;\n(id)++;",
    "int n2 = 4;\nscalar a[n2];\na[7] = 1.0;",
    "int z = 1 / 0;\nint w = id % (2 - 2);",
    "scalar *p = &V;\n*p = 0.0;\nV = (scalar)(int*)0;",
    "#define X 1\n#include \"/etc/passwd\"\n#pragma once",
    "asm(\"nop\");\nstd::system(0);\nsystem(\"touch x\");",
    "((((((((((V))))))))));\n{{{{{{{{}}}}}}}}",
};

const std::vector<std::string> dictionary = {
    "V",
    "n",
    "k",
    "tau",
    "thr",
    "t",
    "dt",
    "id",
    "batch",
    "Isyn",
    "inSyn",
    "g",
    "value",
    "id_pre",
    "id_post",
    "num_pre",
    "num_post",
    "st",
    "preCalcRowLength",
    "x",
    "i",
    "scalar",
    "float",
    "double",
    "int",
    "unsigned",
    "unsigned int",
    "bool",
    "uint8_t",
    "int64_t",
    "const",
    "if",
    "else",
    "for",
    "while",
    "do",
    "switch",
    "case",
    "default",
    "break",
    "continue",
    "return",
    "goto",
    "static",
    "auto",
    "struct",
    "sizeof",
    "new",
    "asm",
    "exp",
    "pow",
    "fmin",
    "sqrt",
    "rand_uniform()",
    "rand_normal()",
    "rand_gamma(",
    "rand_binomial(",
    "addToPost(",
    "addToPostDelay(",
    "injectCurrent(",
    "addSynapse(",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ";",
    ",",
    "=",
    "+=",
    "-=",
    "*=",
    "/=",
    "%=",
    "<<=",
    "&=",
    "|=",
    "^=",
    "++",
    "--",
    "+",
    "-",
    "*",
    "/",
    "%",
    "<<",
    ">>",
    "<",
    ">",
    "<=",
    ">=",
    "==",
    "!=",
    "&&",
    "||",
    "!",
    "~",
    "&",
    "|",
    "^",
    "?",
    ":",
    "::",
    "->",
    ".",
    "#",
    "##",
    "%:",
    "%:%:",
    "<%",
    "%>",
    "<:",
    ":>",
    "?\?=",
    "?\?/",
    "?\?<",
    "?\?>",
    "?\?(",
    "?\?)",
    "\\",
    "\\\n",
    "//",
    "/*",
    "*/",
    "\"",
    "'",
    "\n",
    "\r\n",
    "\t",
    " ",
    "0",
    "1",
    "1.5",
    "0.5f",
    "1e-3",
    "1e39",
    "0x1F",
    "077",
    "1u",
    "2147483648",
    "4294967296",
    "1e400",
    ".5e",
    "1.f",
    "0b1",
    "'\\0'",
    "\"s\"",
    "\xef\xbb\xbf",
    "\xc3\xa9",
    std::string(1, '\0'),
    "\xff",
};

// Renders what scan accepted the way the code generator does, so a tree the checker let
// through is also printed. The closed-language front end (snippet/ast.hpp) needs the sizes of
// context arrays and an error flag for run-time index checks; the older scanner takes neither.
std::string renderAccepted(const snippet::Scanned& scanned, const snippet::Context& ctx) {
    const std::string label = ctx.group + "." + ctx.field;
#if __has_include("snippet/ast.hpp")
    snippet::RenderOptions options;
    options.precision = ctx.precision;
    options.lineLabel = label;
    for (const auto& [name, symbol] : ctx.names)
        if (symbol.array) options.arraySizes[name] = "size_" + name;
    if (scanned.needsIndexChecks()) options.errorFlag = "error_flag";
    return snippet::render(scanned, options);
#else
    return snippet::render(scanned, {}, ctx.precision, label);
#endif
}

} // namespace

int main(int argc, char** argv) {
    const fuzz::Options options = fuzz::parseOptions(
        argc, argv, "snippet",
        "Feeds random and mutated code strings to snippet::scan in every kind of code field.");
    const cli::Config cfg = cli::parseConfig(contextModel, "fuzz-context.toml");
    std::vector<snippet::Context> contexts;
    std::set<std::string> seedSet;
    for (const contexts::CodeField& field : contexts::allCodeFields(*cfg.model)) {
        contexts.push_back(field.context);
        if (field.code != nullptr && !field.code->empty()) seedSet.insert(*field.code);
    }
    for (const char* s : extraSeeds)
        seedSet.insert(s);
    std::vector<std::string> seeds(seedSet.begin(), seedSet.end());
    for (std::string& s : fuzz::readSeedFiles(options.seedPaths, options.maxLength))
        seeds.push_back(std::move(s));
    std::cerr << "fuzz_snippet: " << contexts.size() << " code-field contexts, " << seeds.size()
              << " seeds\n";

    uint64_t round = 0;
    const auto run = [&](const std::string& code) {
        const snippet::Context& ctx = contexts[round++ % contexts.size()];
        try {
            const snippet::Scanned scanned = snippet::scan(code, ctx);
            (void)renderAccepted(scanned, ctx);
            return fuzz::Outcome::Accepted;
        } catch (const ModelError& e) {
            // The documented user error; it must say where.
            if (std::string(e.what()).find(ctx.group) == std::string::npos)
                throw std::logic_error("ModelError without the group name: " +
                                       std::string(e.what()));
            return fuzz::Outcome::Rejected;
        }
    };
    if (options.replay)
        return fuzz::replayInputs("snippet", options,
                                  fuzz::readSeedFiles(options.seedPaths, options.maxLength),
                                  static_cast<unsigned>(contexts.size()), run);
    fuzz::Mutator mutator(options.seed, seeds, dictionary, options.maxLength);
    return fuzz::runFuzzer("snippet", options, mutator, run);
}
