// Built-in variable and sparse connectivity initialisers (models.hpp) and VarInit
// (snippets.hpp). Parameter names follow GeNN's InitVarSnippet and InitSparseConnectivitySnippet.
// The random functions return rand_uniform() in (0, 1], so Uniform gives values in (min, max].
#include "spikeforge/errors.hpp"
#include "spikeforge/models.hpp"

#include "model/builtin_common.hpp"

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

using models::detail::Domain;

// Integer-valued parameters are folded into code as `scalar` and converted with (unsigned int):
// a count must fit and, in single precision, be exact as a float (4294967295 rounds to 2^32,
// whose conversion is undefined).
Domain& countParam(Domain& d, const ParamValues& values, const char* name, Precision precision) {
    d.count(name, 4294967295.0);
    const auto it = values.find(name);
    if (precision == Precision::Float && it != values.end())
        d.require(static_cast<double>(static_cast<float>(it->second)) == it->second,
                  std::string("parameter '") + name + "' (" + Domain::format(it->second) +
                      ") is not exactly representable in single precision");
    return d;
}

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
    static const InitSnippet s = [] {
        auto i =
            makeInit("Uniform", {"min", "max"}, "value = min + (max - min) * rand_uniform();\n");
        i.paramDomain = [](const ParamValues& v, Precision) {
            return Domain(v).ordered("min", "max", false).problem();
        };
        return i;
    }();
    return s;
}

const InitSnippet& normalSnippet() {
    static const InitSnippet s = [] {
        auto i = makeInit("Normal", {"mean", "sd"}, "value = mean + sd * rand_normal();\n");
        i.paramDomain = [](const ParamValues& v, Precision) {
            return Domain(v).nonNegative("sd").problem();
        };
        return i;
    }();
    return s;
}

// NormalClipped: the normal N(mean, sd) truncated to [min, max] (resampled, never clamped), in
// the standardised variable z = (x - mean) / sd on [lo, hi]. Rejection from the proposal that
// suits the interval (Robert, "Simulation of truncated normal variables", Stat. Comput. 5,
// 1995), chosen on the host so that every try is accepted with probability >= 0.37:
//   0: lo < 0 < hi, hi - lo >= sqrt(2 pi): plain normal draws (acceptance >= 0.49);
//   1: a narrow interval: z uniform on [lo, hi], accepted with exp((ref - z^2) / 2) where ref is
//      the smallest z^2 on the interval (acceptance >= e^-1 by the choice below);
//   2: a tail, 0 <= lo: z = lo + Exp(rate) with rate = (lo + sqrt(lo^2 + 4)) / 2, accepted with
//      exp(-(z - rate)^2 / 2) and z <= hi (acceptance >= 0.76 (1 - e^-1)).
// An interval entirely below the mean is mirrored (sign -1). Bounds beyond 20 sd are cut there
// (the mass beyond is < 1e-88), and an interval lying entirely beyond them is refused. The loop
// stops after 1000 tries (probability < 1e-200) and the result is clamped to [min, max], so the
// sampler is bounded for every input it accepts.
constexpr double kClipSd = 20.0;

struct ClipPlan {
    double lo = 0.0, hi = 0.0, sign = 1.0, method = 1.0, ref = 0.0, rate = 1.0;
};

ClipPlan clipPlan(const ParamValues& values) {
    const double mean = param(values, "mean", "NormalClipped");
    const double sd = param(values, "sd", "NormalClipped");
    ClipPlan c;
    if (!(sd > 0.0)) return c; // z = 0: the value is the mean
    double a = std::max((param(values, "min", "NormalClipped") - mean) / sd, -kClipSd);
    double b = std::min((param(values, "max", "NormalClipped") - mean) / sd, kClipSd);
    if (!(a < b)) return c; // refused by the domain check
    if (b <= 0.0) {
        c.sign = -1.0;
        std::swap(a, b);
        a = -a;
        b = -b;
    }
    c.lo = a;
    c.hi = b;
    if (a < 0.0) {
        c.method = (b - a >= 2.5066282746310002) ? 0.0 : 1.0; // sqrt(2 pi)
    } else if (b * b - a * a <= 2.0) {
        c.ref = a * a;
    } else {
        c.method = 2.0;
        c.rate = (a + std::sqrt(a * a + 4.0)) / 2.0;
    }
    return c;
}

std::string normalClippedDomain(const ParamValues& v, Precision) {
    Domain d(v);
    d.nonNegative("sd").ordered("min", "max", true);
    if (!d.problem().empty() || !v.count("mean") || !v.count("sd") || !v.count("min") ||
        !v.count("max"))
        return d.problem();
    const double mean = v.at("mean"), sd = v.at("sd"), lo = v.at("min"), hi = v.at("max");
    if (sd == 0.0)
        d.require(lo <= mean && mean <= hi,
                  "with sd = 0 every value is the mean (" + Domain::format(mean) +
                      "), which lies outside [min, max] = [" + Domain::format(lo) + ", " +
                      Domain::format(hi) + "]");
    else
        d.require((hi - mean) / sd > -kClipSd && (lo - mean) / sd < kClipSd,
                  "[min, max] = [" + Domain::format(lo) + ", " + Domain::format(hi) +
                      "] lies more than 20 standard deviations from the mean (probability "
                      "below 1e-88): it cannot be sampled");
    return d.problem();
}

const InitSnippet& normalClippedSnippet() {
    static const InitSnippet s = [] {
        auto i = makeInit(
            "NormalClipped", {"mean", "sd", "min", "max"},
            "scalar z = clipLo;\n"
            "int accepted = 0;\n"
            "for (int k = 0; k < 1000 && accepted == 0; k++) {\n"
            "    if (clipMethod == 0.0) {\n"
            "        z = rand_normal();\n"
            "        accepted = z >= clipLo && z <= clipHi;\n"
            "    } else if (clipMethod == 1.0) {\n"
            "        z = clipLo + (clipHi - clipLo) * rand_uniform();\n"
            "        accepted = rand_uniform() <= exp(0.5 * (clipRef - z * z));\n"
            "    } else {\n"
            "        z = clipLo + rand_exponential() / clipRate;\n"
            "        accepted = z <= clipHi &&\n"
            "                   rand_uniform() <= exp(-0.5 * (z - clipRate) * (z - clipRate));\n"
            "    }\n"
            "}\n"
            "value = fmin(fmax(mean + sd * clipSign * z, min), max);\n");
        auto derived = [](const char* name, double ClipPlan::*field) {
            return DerivedParamDecl{
                name, [field](const ParamValues& v, double) { return clipPlan(v).*field; }};
        };
        i.derivedParams = {
            derived("clipLo", &ClipPlan::lo),     derived("clipHi", &ClipPlan::hi),
            derived("clipSign", &ClipPlan::sign), derived("clipMethod", &ClipPlan::method),
            derived("clipRef", &ClipPlan::ref),   derived("clipRate", &ClipPlan::rate)};
        i.paramDomain = normalClippedDomain;
        return i;
    }();
    return s;
}

const InitSnippet& exponentialSnippet() {
    // lambda is the rate: mean 1 / lambda
    static const InitSnippet s = [] {
        auto i = makeInit("Exponential", {"lambda"}, "value = rand_exponential() / lambda;\n");
        i.paramDomain = [](const ParamValues& v, Precision) {
            return Domain(v).positive("lambda").problem();
        };
        return i;
    }();
    return s;
}

const InitSnippet& gammaSnippet() {
    // shape a, scale b: mean a·b, variance a·b²
    static const InitSnippet s = [] {
        auto i = makeInit("Gamma", {"a", "b"}, "value = b * rand_gamma(a);\n");
        i.paramDomain = [](const ParamValues& v, Precision) {
            return Domain(v).positive("a").positive("b").problem();
        };
        return i;
    }();
    return s;
}

const InitSnippet& binomialSnippet() {
    static const InitSnippet s = [] {
        auto i = makeInit("Binomial", {"n", "p"}, "value = rand_binomial((unsigned int)n, p);\n");
        i.paramDomain = [](const ParamValues& v, Precision precision) {
            Domain d(v);
            return countParam(d, v, "n", precision).probability("p").problem();
        };
        return i;
    }();
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

std::string probDomain(const ParamValues& v, Precision) {
    return Domain(v).probability("prob").problem();
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
    s.paramDomain = probDomain;
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
    s.paramDomain = probDomain;
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
    s.paramDomain = [](const ParamValues& v, Precision precision) {
        Domain d(v);
        return countParam(d, v, "rowLength", precision).problem();
    };
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
    s.paramDomain = [](const ParamValues& v, Precision precision) {
        Domain d(v);
        return countParam(d, v, "total", precision).problem();
    };
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

VarInit::VarInit(std::vector<double> values) : m_values(std::move(values)), m_hasValues(true) {
    if (m_values.empty()) throw ModelError("variable initialiser: an empty list of values");
}

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
