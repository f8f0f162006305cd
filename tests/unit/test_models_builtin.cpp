// Host-side checks of the built-in model library: declarations, derived parameters, lookups,
// maximum row lengths and VarInit. The code strings themselves are exercised through the code
// generator by the backend tests.
#include "spikeforge/errors.hpp"
#include "spikeforge/model.hpp"
#include "spikeforge/models.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

using namespace spikeforge;

namespace {

// Every declared name obeys the naming rule (docs/names.md; parameters may be called min and
// max) and no name is declared twice within one model.
void expectNamesUnique(const std::string& model, const std::vector<std::string>& names) {
    std::set<std::string> seen;
    for (const std::string& n : names) {
        EXPECT_TRUE(identifierProblem(n).empty() || n == "min" || n == "max")
            << model << ": '" << n << "' " << identifierProblem(n);
        EXPECT_TRUE(seen.insert(n).second) << model << ": '" << n << "' declared twice";
    }
}

std::vector<std::string> baseNames(const SnippetBase& s) {
    std::vector<std::string> names = s.params;
    for (const auto& d : s.derivedParams) {
        names.push_back(d.name);
        EXPECT_TRUE(static_cast<bool>(d.func)) << s.name << "." << d.name;
    }
    for (const auto& e : s.egps) {
        names.push_back(e.name);
    }
    return names;
}

void addVars(std::vector<std::string>& names, const std::vector<VarDecl>& vars) {
    for (const auto& v : vars) {
        names.push_back(v.name);
        EXPECT_FALSE(v.type.empty()) << v.name;
    }
}

const ParamValues kLifParams = {{"C", 0.25},       {"TauM", 10.0},     {"Vrest", -65.0},
                                {"Vreset", -65.0}, {"Vthresh", -50.0}, {"Ioffset", 0.0},
                                {"TauRefrac", 2.0}};

double derived(const SnippetBase& s, const std::string& name, const ParamValues& p, double dt) {
    for (const auto& d : s.derivedParams) {
        if (d.name == name) {
            return d.func(p, dt);
        }
    }
    ADD_FAILURE() << s.name << " has no derived parameter " << name;
    return NAN;
}

// ---- declarations ----

TEST(BuiltinModels, NeuronDeclarations) {
    for (const std::string& name : models::neuronModelNames()) {
        const NeuronModel* m = models::findNeuronModel(name);
        ASSERT_NE(m, nullptr) << name;
        EXPECT_EQ(m->name, name);
        auto names = baseNames(*m);
        addVars(names, m->vars);
        expectNamesUnique(name, names);
        // SpikeSourceArray needs no per-step code; every model but the readout can spike
        EXPECT_EQ(m->simCode.empty(), name == "SpikeSourceArray") << name;
        EXPECT_EQ(m->thresholdConditionCode.empty(), name == "LeakyIntegrate") << name;
        EXPECT_EQ(m->resetCode.empty(), name == "LeakyIntegrate" || name == "Poisson") << name;
    }
    const auto& ssa = models::SpikeSourceArray();
    ASSERT_EQ(ssa.vars.size(), 2u);
    for (const auto& v : ssa.vars) {
        EXPECT_EQ(v.type, "unsigned int");
        EXPECT_EQ(v.access, VarAccess::ReadWrite) << v.name;
    }
    ASSERT_EQ(ssa.egps.size(), 1u);
    EXPECT_EQ(ssa.egps[0].name, "spikeTimes");
    EXPECT_EQ(models::LIF().params, (std::vector<std::string>{"C", "TauM", "Vrest", "Vreset",
                                                              "Vthresh", "Ioffset", "TauRefrac"}));
}

TEST(BuiltinModels, SynapseAndCurrentSourceDeclarations) {
    for (const std::string& name : models::postsynapticModelNames()) {
        const PostsynapticModel* m = models::findPostsynapticModel(name);
        ASSERT_NE(m, nullptr) << name;
        EXPECT_EQ(m->name, name);
        auto names = baseNames(*m);
        addVars(names, m->vars);
        expectNamesUnique(name, names);
        EXPECT_NE(m->simCode.find("injectCurrent"), std::string::npos) << name;
    }
    for (const std::string& name : models::weightUpdateModelNames()) {
        const WeightUpdateModel* m = models::findWeightUpdateModel(name);
        ASSERT_NE(m, nullptr) << name;
        EXPECT_EQ(m->name, name);
        auto names = baseNames(*m);
        addVars(names, m->vars);
        addVars(names, m->preVars);
        addVars(names, m->postVars);
        expectNamesUnique(name, names);
        EXPECT_NE(m->preSpikeSynCode.find("addToPost"), std::string::npos) << name;
        const bool plastic = name.rfind("STDP", 0) == 0;
        EXPECT_EQ(m->postSpikeSynCode.empty(), !plastic) << name;
        EXPECT_EQ(m->preSpikeCode.empty(), name != "STDPAllToAll") << name;
        EXPECT_EQ(m->postSpikeCode.empty(), name != "STDPAllToAll") << name;
        if (plastic) {
            EXPECT_EQ(m->params, (std::vector<std::string>{"tauPlus", "tauMinus", "Aplus", "Aminus",
                                                           "Wmin", "Wmax"}));
            ASSERT_EQ(m->vars.size(), 1u);
            EXPECT_EQ(m->vars[0].access, VarAccess::ReadWrite);
        } else {
            for (const auto& v : m->vars) {
                EXPECT_EQ(v.access, VarAccess::ReadOnly) << name << "." << v.name;
            }
        }
    }
    EXPECT_EQ(models::StaticPulseDendriticDelay().vars.at(1).type, "uint8_t");
    for (const std::string& name : models::currentSourceModelNames()) {
        const CurrentSourceModel* m = models::findCurrentSourceModel(name);
        ASSERT_NE(m, nullptr) << name;
        EXPECT_EQ(m->name, name);
        auto names = baseNames(*m);
        addVars(names, m->vars);
        expectNamesUnique(name, names);
        EXPECT_NE(m->injectionCode.find("injectCurrent"), std::string::npos) << name;
    }
}

TEST(BuiltinModels, InitSnippetDeclarations) {
    for (const std::string& name : init::varInitSnippetNames()) {
        const InitSnippet* s = init::findVarInitSnippet(name);
        ASSERT_NE(s, nullptr) << name;
        EXPECT_EQ(s->name, name);
        // Constant's parameter ("constant", an OpenCL keyword) never reaches generated code:
        // VarInit turns the snippet into a plain number.
        if (name != "Constant") expectNamesUnique(name, baseNames(*s));
        EXPECT_NE(s->code.find("value"), std::string::npos) << name;
    }
    for (const std::string& name : init::sparseInitSnippetNames()) {
        const SparseInitSnippet* s = init::findSparseInitSnippet(name);
        ASSERT_NE(s, nullptr) << name;
        EXPECT_EQ(s->name, name);
        expectNamesUnique(name, baseNames(*s));
        EXPECT_NE(s->rowBuildCode.find("addSynapse"), std::string::npos) << name;
        EXPECT_TRUE(static_cast<bool>(s->calcMaxRowLength)) << name;
        EXPECT_EQ(s->preCalcRowLengthCode.empty(), name != "FixedNumberTotalWithReplacement");
    }
    EXPECT_EQ(init::FixedProbability(0.1).snippet.params, std::vector<std::string>{"prob"});
    EXPECT_EQ(init::FixedNumberPostWithReplacement(3).params.at("rowLength"), 3.0);
    EXPECT_EQ(init::FixedNumberTotalWithReplacement(7).params.at("total"), 7.0);
}

// NormalClipped picks its proposal on the host (builtin_init.cpp): check the choice and the
// standardised, mirrored window it folds into the code.
TEST(BuiltinModels, NormalClippedProposalChoice) {
    const InitSnippet& s = *init::findVarInitSnippet("NormalClipped");
    auto plan = [&](double mean, double sd, double lo, double hi) {
        const ParamValues p = {{"mean", mean}, {"sd", sd}, {"min", lo}, {"max", hi}};
        return std::vector<double>{
            derived(s, "clipMethod", p, 0.1), derived(s, "clipLo", p, 0.1),
            derived(s, "clipHi", p, 0.1),     derived(s, "clipSign", p, 0.1),
            derived(s, "clipRef", p, 0.1),    derived(s, "clipRate", p, 0.1)};
    };
    // wide window around the mean: plain normal draws
    EXPECT_EQ(plan(0, 1, -5, 5), (std::vector<double>{0, -5, 5, 1, 0, 1}));
    // narrow window around the mean: uniform proposal, reference 0
    EXPECT_EQ(plan(1, 2, 0, 3), (std::vector<double>{1, -0.5, 1, 1, 0, 1}));
    // narrow tail window: uniform proposal with reference lo^2
    EXPECT_EQ(plan(0, 1, 3, 3.25), (std::vector<double>{1, 3, 3.25, 1, 9, 1}));
    // wide tail window: exponential proposal with the optimal rate
    EXPECT_EQ(plan(0, 1, 4, 6), (std::vector<double>{2, 4, 6, 1, 0, (4 + std::sqrt(20.0)) / 2}));
    // below the mean: mirrored; bounds cut at 20 sd
    EXPECT_EQ(plan(10, 0.5, -1e9, 8),
              (std::vector<double>{2, 4, 20, -1, 0, (4 + std::sqrt(20.0)) / 2}));
    // sd = 0: z = 0 with certainty (uniform proposal on [0, 0])
    EXPECT_EQ(plan(0.5, 0, 0, 1), (std::vector<double>{1, 0, 0, 1, 0, 1}));
}

TEST(BuiltinModels, ParamDomainsAcceptDefaultsAndNameTheParameter) {
    const NeuronModel& lif = models::LIF();
    ASSERT_TRUE(static_cast<bool>(lif.paramDomain));
    EXPECT_EQ(lif.paramDomain(kLifParams, Precision::Float), "");
    ParamValues bad = kLifParams;
    bad["TauM"] = -1.0;
    EXPECT_EQ(lif.paramDomain(bad, Precision::Float), "parameter 'TauM' must be > 0 (got -1)");
    bad.erase("TauM"); // a missing value is checkParams' to report, not the domain's
    EXPECT_EQ(lif.paramDomain(bad, Precision::Float), "");
    const InitSnippet& binomial = *init::findVarInitSnippet("Binomial");
    const ParamValues big = {{"n", 4294967295.0}, {"p", 0.5}};
    EXPECT_NE(binomial.paramDomain(big, Precision::Float), "");
    EXPECT_EQ(binomial.paramDomain(big, Precision::Double), "");
}

// ---- lookups ----

TEST(BuiltinModels, LookupsAndNameLists) {
    EXPECT_EQ(models::neuronModelNames(),
              (std::vector<std::string>{"LIF", "Izhikevich", "Poisson", "SpikeSourceArray",
                                        "LeakyIntegrate"}));
    EXPECT_EQ(models::postsynapticModelNames(),
              (std::vector<std::string>{"ExpCurr", "ExpCond", "DeltaCurr"}));
    EXPECT_EQ(
        models::weightUpdateModelNames(),
        (std::vector<std::string>{"StaticPulse", "StaticPulseConstantWeight",
                                  "StaticPulseDendriticDelay", "STDPNearest", "STDPAllToAll"}));
    EXPECT_EQ(models::currentSourceModelNames(), (std::vector<std::string>{"DC", "GaussianNoise"}));
    EXPECT_EQ(init::varInitSnippetNames(),
              (std::vector<std::string>{"Constant", "Uniform", "Normal", "NormalClipped",
                                        "Exponential", "Gamma", "Binomial"}));
    EXPECT_EQ(init::sparseInitSnippetNames(),
              (std::vector<std::string>{"OneToOne", "FixedProbability", "FixedProbabilityNoAutapse",
                                        "FixedNumberPostWithReplacement",
                                        "FixedNumberTotalWithReplacement"}));
    // a lookup returns the library's own object
    EXPECT_EQ(models::findNeuronModel("LIF"), &models::LIF());
    EXPECT_EQ(models::findPostsynapticModel("ExpCond"), &models::ExpCond());
    EXPECT_EQ(models::findWeightUpdateModel("STDPAllToAll"), &models::STDPAllToAll());
    EXPECT_EQ(models::findCurrentSourceModel("GaussianNoise"), &models::GaussianNoise());
    EXPECT_EQ(models::findNeuronModel("lif"), nullptr); // case matters
    EXPECT_EQ(models::findNeuronModel(""), nullptr);
    EXPECT_EQ(models::findPostsynapticModel("LIF"), nullptr);
    EXPECT_EQ(models::findWeightUpdateModel("StaticGraded"), nullptr);
    EXPECT_EQ(models::findCurrentSourceModel("AC"), nullptr);
    EXPECT_EQ(init::findVarInitSnippet("Poisson"), nullptr);
    EXPECT_EQ(init::findSparseInitSnippet("Dense"), nullptr);
    ASSERT_NE(init::findVarInitSnippet("Gamma"), nullptr);
    EXPECT_EQ(init::findVarInitSnippet("Gamma")->params, (std::vector<std::string>{"a", "b"}));
}

// ---- derived parameters ----

TEST(BuiltinModels, DerivedParameters) {
    const double dt = 0.1;
    EXPECT_DOUBLE_EQ(derived(models::LIF(), "ExpTC", kLifParams, dt), std::exp(-0.01));
    EXPECT_DOUBLE_EQ(derived(models::LIF(), "Rmembrane", kLifParams, dt), 40.0); // [MOhm]
    const ParamValues li = {{"C", 2.0}, {"TauM", 20.0}, {"Vrest", 0.0}};
    EXPECT_DOUBLE_EQ(derived(models::LeakyIntegrate(), "ExpTC", li, 0.5), std::exp(-0.025));
    EXPECT_DOUBLE_EQ(derived(models::LeakyIntegrate(), "Rmembrane", li, 0.5), 10.0);

    // 20 Hz at dt = 0.1 ms: one spike per 500 steps on average; rate 0 encodes "never" as 0
    EXPECT_DOUBLE_EQ(derived(models::Poisson(), "isiTimesteps", {{"rate", 20.0}}, dt), 500.0);
    EXPECT_EQ(derived(models::Poisson(), "isiTimesteps", {{"rate", 0.0}}, dt), 0.0);

    const ParamValues tau5 = {{"tau", 5.0}, {"E", 0.0}};
    EXPECT_DOUBLE_EQ(derived(models::ExpCurr(), "expDecay", tau5, dt), std::exp(-0.02));
    EXPECT_DOUBLE_EQ(derived(models::ExpCurr(), "init", tau5, dt),
                     5.0 * (1.0 - std::exp(-0.02)) / 0.1);
    EXPECT_DOUBLE_EQ(derived(models::ExpCond(), "expDecay", tau5, dt), std::exp(-0.02));
    // The ExpCurr scaling makes the total injected charge tau · weight for any dt.
    for (double step : {0.01, 0.1, 1.0}) {
        const double decay = derived(models::ExpCurr(), "expDecay", tau5, step);
        const double scale = derived(models::ExpCurr(), "init", tau5, step);
        EXPECT_NEAR(scale * step / (1.0 - decay), 5.0, 1e-12);
    }

    const auto& fp = *init::findSparseInitSnippet("FixedProbability");
    EXPECT_DOUBLE_EQ(derived(fp, "probLogRecip", {{"prob", 0.1}}, dt), 1.0 / std::log(0.9));
    EXPECT_EQ(derived(fp, "probLogRecip", {{"prob", 0.0}}, dt), 0.0);
    EXPECT_EQ(derived(fp, "probLogRecip", {{"prob", 1.0}}, dt), 0.0);
    EXPECT_GE(derived(fp, "probLogRecip", {{"prob", 1e-300}}, dt), -1e30); // foldable in float

    // a missing parameter is the user's error, not a crash
    EXPECT_THROW(derived(models::LIF(), "ExpTC", {{"C", 1.0}}, dt), ModelError);
    EXPECT_THROW(fp.calcMaxRowLength(10, 10, {}), ModelError);
}

// ---- maximum row lengths ----

// P(X > m) for X ~ Binomial(n, p), summed upwards over the tail in long double until the terms,
// past the mean and falling, no longer change the sum.
long double binomialTail(unsigned n, double p, unsigned m) {
    long double tail = 0.0L;
    for (unsigned k = m + 1; k <= n; k++) {
        const long double logPmf = std::lgamma(n + 1.0L) - std::lgamma(k + 1.0L) -
                                   std::lgamma(n - k + 1.0L) + k * std::log((long double)p) +
                                   (n - k) * std::log1p(-(long double)p);
        const long double term = std::exp(logPmf);
        tail += term;
        if (k > n * p && term < tail * 1e-25L) {
            break;
        }
    }
    return tail;
}

// P(some of numPre independent rows is longer than m).
long double anyRowLonger(unsigned numPre, unsigned n, double p, unsigned m) {
    return 1.0L - std::pow(1.0L - binomialTail(n, p, m), (long double)numPre);
}

// The bound must hold for all rows with probability >= 0.9999 and be the smallest such value.
void expectTightBound(unsigned bound, unsigned numPre, unsigned n, double p) {
    EXPECT_LE(anyRowLonger(numPre, n, p, bound), 1e-4L * (1.0L + 1e-6L));
    EXPECT_GT(anyRowLonger(numPre, n, p, bound - 1), 1e-4L * (1.0L - 1e-6L));
}

TEST(BuiltinModels, MaxRowLengths) {
    const auto fp = init::FixedProbability(0.1);
    const unsigned fpBound = fp.snippet.calcMaxRowLength(1000, 1000, fp.params);
    EXPECT_GT(fpBound, 100u);
    EXPECT_LT(fpBound, 200u);
    expectTightBound(fpBound, 1000, 1000, 0.1);

    const auto na = init::FixedProbabilityNoAutapse(0.1);
    const unsigned naBound = na.snippet.calcMaxRowLength(1000, 1000, na.params);
    EXPECT_LE(naBound, fpBound);
    expectTightBound(naBound, 1000, 999, 0.1);

    const auto total = init::FixedNumberTotalWithReplacement(100000);
    const unsigned totalBound = total.snippet.calcMaxRowLength(1000, 50, total.params);
    EXPECT_GT(totalBound, 100u); // more than numPost: targets repeat
    EXPECT_LT(totalBound, 200u);
    expectTightBound(totalBound, 1000, 100000, 1e-3);

    // large and small: a million-by-million projection at 1%, and a tiny probability
    const auto big = init::FixedProbability(0.01);
    const unsigned bigBound = big.snippet.calcMaxRowLength(1000000, 1000000, big.params);
    EXPECT_GT(bigBound, 10000u);
    EXPECT_LT(bigBound, 11000u);
    const auto tiny = init::FixedProbability(1e-9);
    EXPECT_EQ(tiny.snippet.calcMaxRowLength(10, 10, tiny.params), 1u); // never 0

    // edge cases
    const auto all = init::FixedProbability(1.0);
    EXPECT_EQ(all.snippet.calcMaxRowLength(20, 30, all.params), 30u);
    const auto none = init::FixedProbability(0.0);
    EXPECT_EQ(none.snippet.calcMaxRowLength(20, 30, none.params), 1u);
    const auto allNa = init::FixedProbabilityNoAutapse(1.0);
    EXPECT_EQ(allNa.snippet.calcMaxRowLength(30, 30, allNa.params), 29u);
    EXPECT_EQ(allNa.snippet.calcMaxRowLength(40, 30, allNa.params), 30u); // rows past num_post
    const auto post = init::FixedNumberPostWithReplacement(37);
    EXPECT_EQ(post.snippet.calcMaxRowLength(5, 10, post.params), 37u);
    const auto one = init::OneToOne();
    EXPECT_EQ(one.snippet.calcMaxRowLength(100, 100, one.params), 1u);
    const auto single = init::FixedNumberTotalWithReplacement(500);
    EXPECT_EQ(single.snippet.calcMaxRowLength(1, 10, single.params), 500u);
}

// ---- VarInit ----

TEST(BuiltinModels, VarInitConstantAndSnippet) {
    const VarInit c = -65.0; // implicit, as in {"V", -65.0}
    EXPECT_TRUE(c.isConstant());
    EXPECT_EQ(c.constant(), -65.0);
    EXPECT_TRUE(VarInit().isConstant());
    EXPECT_EQ(VarInit().constant(), 0.0);
    EXPECT_TRUE(init::Constant(3.5).isConstant());
    EXPECT_EQ(init::Constant(3.5).constant(), 3.5);

    const VarInitMap inits = {{"V", -65.0}, {"U", init::Uniform(-1.0, 1.0)}};
    EXPECT_TRUE(inits.at("V").isConstant());
    EXPECT_FALSE(inits.at("U").isConstant());

    const VarInit u = init::Uniform(2.0, 4.0);
    EXPECT_EQ(u.snippet().name, "Uniform");
    EXPECT_EQ(u.params(), (ParamValues{{"min", 2.0}, {"max", 4.0}}));
    EXPECT_EQ(init::NormalClipped(0, 1, -2, 2).params().size(), 4u);
    EXPECT_EQ(init::Exponential(2.0).params().at("lambda"), 2.0);
    EXPECT_EQ(init::Gamma(2.0, 3.0).params(), (ParamValues{{"a", 2.0}, {"b", 3.0}}));
    EXPECT_EQ(init::Binomial(10, 0.3).params(), (ParamValues{{"n", 10.0}, {"p", 0.3}}));
    EXPECT_EQ(init::Normal(1.0, 2.0).snippet().code.find("rand_normal") != std::string::npos, true);

    // the Constant snippet, as a TOML file names it, folds into a plain constant
    const VarInit byName(*init::findVarInitSnippet("Constant"), {{"constant", 2.5}});
    EXPECT_TRUE(byName.isConstant());
    EXPECT_EQ(byName.constant(), 2.5);
    EXPECT_THROW(VarInit(*init::findVarInitSnippet("Constant"), {}), ModelError);

    // a snippet without code would read as the constant 0
    InitSnippet empty;
    empty.name = "Empty";
    EXPECT_THROW(VarInit(empty, {}), ModelError);
}

} // namespace
