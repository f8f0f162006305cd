// Built-in variable and sparse connectivity initialisers (models.hpp) and VarInit
// (snippets.hpp). Parameter names follow GeNN's InitVarSnippet and InitSparseConnectivitySnippet.
// The random functions return rand_uniform() in (0, 1], so Uniform gives values in (min, max].
#include "spikeforge/errors.hpp"
#include "spikeforge/models.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace spikeforge {

namespace {

double param(const ParamValues& values, const char* name, const std::string& snippet) {
    const auto it = values.find(name);
    if (it == values.end()) {
        throw ModelError(snippet + ": parameter '" + name + "' has no value");
    }
    return it->second;
}

constexpr const char* kConstantCode = "value = constant;\n";

// ---- variable initialisers ----

InitSnippet makeInit(const char* name, std::vector<std::string> params, const char* code) {
    InitSnippet s;
    s.name = name;
    s.params = std::move(params);
    s.code = code;
    return s;
}

const InitSnippet& constantSnippet() {
    // Exists for name lookups (TOML); VarInit turns it into a plain constant.
    static const InitSnippet s = makeInit("Constant", {"constant"}, kConstantCode);
    return s;
}

const InitSnippet& uniformSnippet() {
    static const InitSnippet s =
        makeInit("Uniform", {"min", "max"}, "value = min + (max - min) * rand_uniform();\n");
    return s;
}

const InitSnippet& normalSnippet() {
    static const InitSnippet s =
        makeInit("Normal", {"mean", "sd"}, "value = mean + sd * rand_normal();\n");
    return s;
}

const InitSnippet& normalClippedSnippet() {
    // Resampling, not clamping: the result is the normal truncated to [min, max]. Slow when
    // [min, max] holds little of the mass.
    static const InitSnippet s = makeInit("NormalClipped", {"mean", "sd", "min", "max"},
                                          "scalar normal;\n"
                                          "do {\n"
                                          "    normal = mean + sd * rand_normal();\n"
                                          "} while (normal > max || normal < min);\n"
                                          "value = normal;\n");
    return s;
}

const InitSnippet& exponentialSnippet() {
    // lambda is the rate: mean 1 / lambda
    static const InitSnippet s =
        makeInit("Exponential", {"lambda"}, "value = rand_exponential() / lambda;\n");
    return s;
}

const InitSnippet& gammaSnippet() {
    // shape a, scale b: mean a·b, variance a·b²
    static const InitSnippet s = makeInit("Gamma", {"a", "b"}, "value = b * rand_gamma(a);\n");
    return s;
}

const InitSnippet& binomialSnippet() {
    static const InitSnippet s =
        makeInit("Binomial", {"n", "p"}, "value = rand_binomial((unsigned int)n, p);\n");
    return s;
}

// ---- maximum row lengths ----

// Smallest m with P(X > m) <= alpha for X ~ Binomial(n, p). The tail is summed downwards from a
// point 12 sd + 40 above the mean, beyond which the mass is below e^-60 (Bernstein's
// inequality), far below any alpha used here; each term comes from lgamma in log space, so
// nothing underflows to a wrong answer and no CDF near 1 is formed (alpha may be ~1e-13).
unsigned binomialUpperBound(unsigned n, double p, double alpha) {
    if (n == 0 || !(p > 0.0)) {
        return 0;
    }
    if (p >= 1.0) {
        return n;
    }
    const double mean = n * p;
    const double sd = std::sqrt(n * p * (1.0 - p));
    const double start = std::ceil(mean + 12.0 * sd + 40.0);
    unsigned k = start >= static_cast<double>(n) ? n : static_cast<unsigned>(start);
    const double logP = std::log(p);
    const double logQ = std::log1p(-p);
    const double logNFact = std::lgamma(n + 1.0);
    double tail = 0.0; // P(k <= X <= start)
    for (;; k--) {
        tail += std::exp(logNFact - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0) + k * logP +
                         (n - k) * logQ);
        if (tail > alpha || k == 0) {
            return k; // P(X > k) <= alpha < P(X > k - 1)
        }
    }
}

// The bound on the longest of numPre independent rows: each row must stay within it with
// probability 0.9999^(1/numPre), so all rows do with probability 0.9999.
unsigned maxOfRowsBound(unsigned numPre, unsigned n, double p) {
    const double alpha = -std::expm1(std::log1p(-1e-4) / std::max(numPre, 1u));
    return binomialUpperBound(n, p, alpha);
}

// Never 0, so a row stride is never 0 (a group whose rows are all empty still allocates 1).
unsigned atLeastOne(unsigned length) {
    return std::max(length, 1u);
}

// 1 / log(1 - prob), for geometric skipping: the gap before the next synapse is
// floor(log(u) · probLogRecip) for u uniform. prob <= 0 (the code then makes no synapse) and
// prob >= 1 (a gap of 0 every time) give 0; the magnitude is capped at 1e30 so that the value
// can be folded into single-precision code.
DerivedParamDecl probLogRecip(const std::string& snippet) {
    return {"probLogRecip", [snippet](const ParamValues& values, double) {
                const double prob = param(values, "prob", snippet);
                if (!(prob > 0.0) || prob >= 1.0) {
                    return 0.0;
                }
                return std::max(1.0 / std::log1p(-prob), -1e30);
            }};
}

// Row of `count` targets drawn uniformly with replacement from [0, num_post), in ascending
// order: x runs through the order statistics of `count` uniforms on [0, 1), each the minimum of
// the c uniforms still to place above the previous one, 1 - u^(1/c) of the remaining length.
// In single precision targets above 2^24 are not all reachable.
std::string withReplacementRowCode(const std::string& count) {
    return "if (num_post > 0) {\n"
           "    scalar x = 0.0;\n"
           "    for (unsigned int c = " +
           count +
           "; c != 0; c--) {\n"
           "        x += (1.0 - x) * (1.0 - pow(rand_uniform(), 1.0 / (scalar)c));\n"
           "        unsigned int j = (unsigned int)(x * (scalar)num_post);\n"
           "        if (j >= num_post) {\n"
           "            j = num_post - 1;\n"
           "        }\n"
           "        addSynapse(j);\n"
           "    }\n"
           "}\n";
}

SparseInitSnippet makeOneToOne() {
    SparseInitSnippet s;
    s.name = "OneToOne";
    s.rowBuildCode = "if (id_pre < num_post) {\n"
                     "    addSynapse(id_pre);\n"
                     "}\n";
    s.calcMaxRowLength = [](unsigned, unsigned, const ParamValues&) { return 1u; };
    return s;
}

// Each (pre, post) pair independently with probability prob; the gaps between successive
// targets are geometric, so a row costs O(its length), not O(num_post).
SparseInitSnippet makeFixedProbability() {
    SparseInitSnippet s;
    s.name = "FixedProbability";
    s.params = {"prob"};
    s.derivedParams = {probLogRecip(s.name)};
    s.rowBuildCode = "if (prob > 0.0) {\n"
                     "    unsigned int j = 0;\n"
                     "    while (1) {\n"
                     "        const scalar skip = floor(log(rand_uniform()) * probLogRecip);\n"
                     "        if (skip >= (scalar)(num_post - j)) {\n"
                     "            break;\n"
                     "        }\n"
                     "        j += (unsigned int)skip;\n"
                     "        addSynapse(j);\n"
                     "        j++;\n"
                     "    }\n"
                     "}\n";
    s.calcMaxRowLength = [](unsigned numPre, unsigned numPost, const ParamValues& values) {
        const double prob = param(values, "prob", "FixedProbability");
        return atLeastOne(std::min(maxOfRowsBound(numPre, numPost, prob), numPost));
    };
    return s;
}

// As FixedProbability over the num_post - 1 targets other than id_pre (all num_post when
// id_pre >= num_post): candidate k maps to target k below id_pre and k + 1 from it on.
SparseInitSnippet makeFixedProbabilityNoAutapse() {
    SparseInitSnippet s;
    s.name = "FixedProbabilityNoAutapse";
    s.params = {"prob"};
    s.derivedParams = {probLogRecip(s.name)};
    s.rowBuildCode =
        "if (prob > 0.0) {\n"
        "    const unsigned int numTargets = (id_pre < num_post) ? num_post - 1 : num_post;\n"
        "    unsigned int k = 0;\n"
        "    while (1) {\n"
        "        const scalar skip = floor(log(rand_uniform()) * probLogRecip);\n"
        "        if (skip >= (scalar)(numTargets - k)) {\n"
        "            break;\n"
        "        }\n"
        "        k += (unsigned int)skip;\n"
        "        addSynapse((k < id_pre) ? k : k + 1);\n"
        "        k++;\n"
        "    }\n"
        "}\n";
    s.calcMaxRowLength = [](unsigned numPre, unsigned numPost, const ParamValues& values) {
        const double prob = param(values, "prob", "FixedProbabilityNoAutapse");
        const unsigned targets = (numPre > numPost || numPost == 0) ? numPost : numPost - 1;
        return atLeastOne(std::min(maxOfRowsBound(numPre, targets, prob), targets));
    };
    return s;
}

SparseInitSnippet makeFixedNumberPostWithReplacement() {
    SparseInitSnippet s;
    s.name = "FixedNumberPostWithReplacement";
    s.params = {"rowLength"};
    s.rowBuildCode = withReplacementRowCode("(unsigned int)rowLength");
    s.calcMaxRowLength = [](unsigned, unsigned, const ParamValues& values) {
        const double rowLength = param(values, "rowLength", "FixedNumberPostWithReplacement");
        return atLeastOne(static_cast<unsigned>(std::max(rowLength, 0.0)));
    };
    return s;
}

// `total` synapses, each with a presynaptic and a postsynaptic neuron drawn uniformly, with
// replacement. The row lengths are multinomial(total; 1/num_pre each), drawn serially as
// conditional binomials: row i gets Binomial(remaining, 1 / (num_pre - i)), the last row all
// that remains. Each row then draws its targets as FixedNumberPostWithReplacement.
SparseInitSnippet makeFixedNumberTotalWithReplacement() {
    SparseInitSnippet s;
    s.name = "FixedNumberTotalWithReplacement";
    s.params = {"total"};
    s.preCalcRowLengthCode =
        "unsigned int remaining = (unsigned int)total;\n"
        "for (unsigned int i = 0; i < num_pre; i++) {\n"
        "    const unsigned int n = rand_binomial(remaining, 1.0 / (scalar)(num_pre - i));\n"
        "    preCalcRowLength[i] = n;\n"
        "    remaining -= n;\n"
        "}\n";
    s.rowBuildCode = withReplacementRowCode("preCalcRowLength[id_pre]");
    s.calcMaxRowLength = [](unsigned numPre, unsigned, const ParamValues& values) {
        const double total = param(values, "total", "FixedNumberTotalWithReplacement");
        const unsigned n = static_cast<unsigned>(std::max(total, 0.0));
        if (numPre == 0) {
            return 1u;
        }
        return atLeastOne(std::min(maxOfRowsBound(numPre, n, 1.0 / numPre), n));
    };
    return s;
}

const SparseInitSnippet& oneToOneSnippet() {
    static const SparseInitSnippet s = makeOneToOne();
    return s;
}

const SparseInitSnippet& fixedProbabilitySnippet() {
    static const SparseInitSnippet s = makeFixedProbability();
    return s;
}

const SparseInitSnippet& fixedProbabilityNoAutapseSnippet() {
    static const SparseInitSnippet s = makeFixedProbabilityNoAutapse();
    return s;
}

const SparseInitSnippet& fixedNumberPostWithReplacementSnippet() {
    static const SparseInitSnippet s = makeFixedNumberPostWithReplacement();
    return s;
}

const SparseInitSnippet& fixedNumberTotalWithReplacementSnippet() {
    static const SparseInitSnippet s = makeFixedNumberTotalWithReplacement();
    return s;
}

constexpr std::pair<const char*, const InitSnippet& (*)()> kVarInitSnippets[] = {
    {"Constant", &constantSnippet},       {"Uniform", &uniformSnippet},
    {"Normal", &normalSnippet},           {"NormalClipped", &normalClippedSnippet},
    {"Exponential", &exponentialSnippet}, {"Gamma", &gammaSnippet},
    {"Binomial", &binomialSnippet},
};

constexpr std::pair<const char*, const SparseInitSnippet& (*)()> kSparseInitSnippets[] = {
    {"OneToOne", &oneToOneSnippet},
    {"FixedProbability", &fixedProbabilitySnippet},
    {"FixedProbabilityNoAutapse", &fixedProbabilityNoAutapseSnippet},
    {"FixedNumberPostWithReplacement", &fixedNumberPostWithReplacementSnippet},
    {"FixedNumberTotalWithReplacement", &fixedNumberTotalWithReplacementSnippet},
};

} // namespace

// ---- VarInit ----

VarInit::VarInit(double constant) : m_constant(constant) {}

// The built-in Constant snippet becomes a plain constant, so that `isConstant()` holds whether a
// constant was given as a number or by name (TOML). A snippet without code would silently read
// as the constant 0, so it is an error.
VarInit::VarInit(InitSnippet snippet, ParamValues params)
    : m_snippet(std::move(snippet)), m_params(std::move(params)) {
    if (m_snippet.code.empty()) {
        throw ModelError("variable initialiser '" + m_snippet.name +
                         "' has no code (use a number for a constant)");
    }
    if (m_snippet.name == "Constant" && m_snippet.code == kConstantCode) {
        m_constant = param(m_params, "constant", "Constant");
        m_snippet = InitSnippet{};
        m_params.clear();
    }
}

} // namespace spikeforge

namespace spikeforge::init {

VarInit Constant(double value) {
    return VarInit(value);
}

VarInit Uniform(double min, double max) {
    return VarInit(uniformSnippet(), {{"min", min}, {"max", max}});
}

VarInit Normal(double mean, double sd) {
    return VarInit(normalSnippet(), {{"mean", mean}, {"sd", sd}});
}

VarInit NormalClipped(double mean, double sd, double min, double max) {
    return VarInit(normalClippedSnippet(),
                   {{"mean", mean}, {"sd", sd}, {"min", min}, {"max", max}});
}

VarInit Exponential(double lambda) {
    return VarInit(exponentialSnippet(), {{"lambda", lambda}});
}

VarInit Gamma(double a, double b) {
    return VarInit(gammaSnippet(), {{"a", a}, {"b", b}});
}

VarInit Binomial(double n, double p) {
    return VarInit(binomialSnippet(), {{"n", n}, {"p", p}});
}

SparseConnectivityInit OneToOne() {
    return {oneToOneSnippet(), {}};
}

SparseConnectivityInit FixedProbability(double prob) {
    return {fixedProbabilitySnippet(), {{"prob", prob}}};
}

SparseConnectivityInit FixedProbabilityNoAutapse(double prob) {
    return {fixedProbabilityNoAutapseSnippet(), {{"prob", prob}}};
}

SparseConnectivityInit FixedNumberPostWithReplacement(unsigned rowLength) {
    return {fixedNumberPostWithReplacementSnippet(), {{"rowLength", rowLength}}};
}

SparseConnectivityInit FixedNumberTotalWithReplacement(unsigned total) {
    return {fixedNumberTotalWithReplacementSnippet(), {{"total", total}}};
}

const InitSnippet* findVarInitSnippet(const std::string& name) {
    for (const auto& [n, snippet] : kVarInitSnippets) {
        if (name == n) {
            return &snippet();
        }
    }
    return nullptr;
}

const SparseInitSnippet* findSparseInitSnippet(const std::string& name) {
    for (const auto& [n, snippet] : kSparseInitSnippets) {
        if (name == n) {
            return &snippet();
        }
    }
    return nullptr;
}

std::vector<std::string> varInitSnippetNames() {
    std::vector<std::string> names;
    for (const auto& entry : kVarInitSnippets) {
        names.emplace_back(entry.first);
    }
    return names;
}

std::vector<std::string> sparseInitSnippetNames() {
    std::vector<std::string> names;
    for (const auto& entry : kSparseInitSnippets) {
        names.emplace_back(entry.first);
    }
    return names;
}

} // namespace spikeforge::init
