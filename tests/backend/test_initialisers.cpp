// Variable and sparse connectivity initialisers against the distributions they claim to draw
// from, run in generated code on every backend.
//
// Statistical tolerances: every check compares a sample statistic with its exact expectation
// (computed here from closed forms) and allows kZ = 5 standard errors of that statistic, where
//   SE(sample mean)     = sqrt(var / n)
//   SE(sample variance) = sqrt((mu4 - var^2 (n - 3) / (n - 1)) / n)  (exact for iid samples;
//                         mu4 is the exact fourth central moment)
// and Kolmogorov-Smirnov tests allow sqrt(n) D < 2.69 (P ≈ 2 exp(-2 · 2.69²) ≈ 1e-6). A correct
// initialiser fails one check with probability of order 1e-6 for a random seed; the seed is fixed,
// so the outcome is reproducible. A wrong scale, shift, shape or support fails by many SE.
#include "backend_fixture.hpp"
#include "spikeforge/models.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numbers>
#include <span>
#include <string>
#include <vector>

using namespace spikeforge;

namespace {

constexpr double kZ = 5.0;
constexpr double kKsLambda = 2.69;
constexpr unsigned kSamples = 20000;

// ---- distributions -----------------------------------------------------------------------------

struct Dist {
    double mean = 0.0, var = 0.0, mu4 = 0.0;              // mean, variance, fourth central moment
    double lo = -std::numeric_limits<double>::infinity(); // support, closed
    double hi = std::numeric_limits<double>::infinity();
    bool integer = false;
    std::function<double(double)> cdf; // empty: no Kolmogorov-Smirnov test
};

double normalCdf(double z) {
    return 0.5 * std::erfc(-z / std::numbers::sqrt2);
}
double normalPdf(double z) {
    return std::exp(-0.5 * z * z) / std::sqrt(2.0 * std::numbers::pi);
}

Dist uniform(double a, double b) {
    const double w = b - a;
    return {(a + b) / 2, w * w / 12, w * w * w * w / 80, a, b, false, [=](double x) {
                return std::clamp((x - a) / w, 0.0, 1.0);
            }};
}

Dist normal(double m, double s) {
    return {m,
            s * s,
            3 * s * s * s * s,
            -std::numeric_limits<double>::infinity(),
            std::numeric_limits<double>::infinity(),
            false,
            [=](double x) { return normalCdf((x - m) / s); }};
}

// The normal N(m, s²) truncated to [lo, hi]. Raw moments of the standard normal truncated to
// [a, b] follow from integration by parts: m_0 = 1, m_k = (k - 1) m_{k-2} +
// (a^{k-1} φ(a) - b^{k-1} φ(b)) / Z with Z = Φ(b) - Φ(a); so the mean is
// m + s (φ(a) - φ(b)) / Z, the closed form for the truncated normal.
Dist normalClipped(double m, double s, double lo, double hi) {
    const double a = (lo - m) / s, b = (hi - m) / s;
    const double Z = normalCdf(b) - normalCdf(a);
    double r[5] = {1.0, (normalPdf(a) - normalPdf(b)) / Z, 0, 0, 0};
    for (int k = 2; k <= 4; k++)
        r[k] = (k - 1) * r[k - 2] +
               (std::pow(a, k - 1) * normalPdf(a) - std::pow(b, k - 1) * normalPdf(b)) / Z;
    const double mean = r[1], var = r[2] - mean * mean;
    const double mu4 = r[4] - 4 * mean * r[3] + 6 * mean * mean * r[2] - 3 * std::pow(mean, 4);
    return {m + s * mean, s * s * var, std::pow(s, 4) * mu4, lo, hi, false, [=](double x) {
                return std::clamp((normalCdf((x - m) / s) - normalCdf(a)) / Z, 0.0, 1.0);
            }};
}

Dist exponential(double lambda) {
    return {1 / lambda,
            1 / (lambda * lambda),
            9 / std::pow(lambda, 4),
            0.0,
            std::numeric_limits<double>::infinity(),
            false,
            [=](double x) { return x <= 0 ? 0.0 : -std::expm1(-lambda * x); }};
}

// Regularised lower incomplete gamma P(a, x) by its power series (Abramowitz & Stegun 6.5.29):
// P(a, x) = x^a e^-x / Γ(a + 1) · Σ_n x^n / ((a + 1)…(a + n)), convergent for every x.
double gammaP(double a, double x) {
    if (x <= 0) return 0.0;
    double term = std::exp(a * std::log(x) - x - std::lgamma(a + 1));
    double sum = term;
    for (int n = 1; n < 100000 && term > 1e-17 * sum; n++) {
        term *= x / (a + n);
        sum += term;
    }
    return std::min(sum, 1.0);
}

// Shape a, scale b: mean ab, variance ab², excess kurtosis 6/a, so mu4 = 3a(a + 2)b⁴.
Dist gamma(double a, double b) {
    return {a * b,
            a * b * b,
            3 * a * (a + 2) * std::pow(b, 4),
            0.0,
            std::numeric_limits<double>::infinity(),
            false,
            [=](double x) { return gammaP(a, x / b); }};
}

// mu4 = npq (1 + 3 (n - 2) pq)
Dist binomial(double n, double p) {
    const double q = 1 - p;
    return {n * p, n * p * q, n * p * q * (1 + 3 * (n - 2) * p * q), 0.0, n, true, {}};
}

// ---- sample checks -----------------------------------------------------------------------------

struct Moments {
    double mean, var; // var with divisor n - 1
};

Moments sampleMoments(std::span<const double> x) {
    double s = 0;
    for (double v : x)
        s += v;
    const double mean = s / double(x.size());
    double ss = 0;
    for (double v : x)
        ss += (v - mean) * (v - mean);
    return {mean, ss / double(x.size() - 1)};
}

double ksStatistic(std::span<const double> x, const std::function<double(double)>& cdf) {
    std::vector<double> s(x.begin(), x.end());
    std::sort(s.begin(), s.end());
    const double n = double(s.size());
    double d = 0;
    for (size_t i = 0; i < s.size(); i++) {
        const double f = cdf(s[i]);
        d = std::max({d, f - double(i) / n, double(i + 1) / n - f});
    }
    return d;
}

// Support, integrality, mean, variance and (where the CDF is known) the whole distribution.
void expectDistributed(std::span<const double> x, const Dist& d) {
    const double n = double(x.size());
    size_t outside = 0, fractional = 0;
    for (double v : x) {
        if (!(v >= d.lo && v <= d.hi)) outside++;
        if (d.integer && v != std::floor(v)) fractional++;
    }
    EXPECT_EQ(outside, 0u) << "values outside [" << d.lo << ", " << d.hi << "]";
    EXPECT_EQ(fractional, 0u) << "non-integer values";
    const auto m = sampleMoments(x);
    EXPECT_NEAR(m.mean, d.mean, kZ * std::sqrt(d.var / n)) << "sample mean";
    const double seVar = std::sqrt((d.mu4 - d.var * d.var * (n - 3) / (n - 1)) / n);
    EXPECT_NEAR(m.var, d.var, kZ * seVar) << "sample variance";
    if (d.cdf) {
        EXPECT_LT(std::sqrt(n) * ksStatistic(x, d.cdf), kKsLambda) << "Kolmogorov-Smirnov";
    }
}

// ---- variable initialisers ---------------------------------------------------------------------

// A neuron that does nothing: it only holds the variables under test.
NeuronModel holder(std::vector<VarDecl> vars = {{"x"}}) {
    NeuronModel m;
    m.name = "Holder";
    m.vars = std::move(vars);
    return m;
}

std::vector<double> pullScalar(Simulation& sim, Precision p, const std::string& group,
                               const std::string& var) {
    sim.pull(group, var);
    if (p == Precision::Float) {
        const auto v = sim.view<float>(group, var);
        return {v.begin(), v.end()};
    }
    const auto v = sim.view<double>(group, var);
    return {v.begin(), v.end()};
}

class VarInitialiserTest : public sftest::BackendTest {
protected:
    // kSamples neurons whose `x` is drawn from `init`; returns the pulled values.
    std::vector<double> sample(const VarInit& init, Precision p = Precision::Float) {
        Model m("var_init");
        m.setPrecision(p);
        m.addNeuronGroup("Pop", kSamples, holder(), {}, {{"x", init}});
        Simulation sim(m, prefs());
        auto x = pullScalar(sim, p, "Pop", "x");
        EXPECT_EQ(x.size(), kSamples);
        return x;
    }
};

TEST_P(VarInitialiserTest, Uniform) {
    expectDistributed(sample(init::Uniform(-2.0, 3.0)), uniform(-2.0, 3.0));
}

TEST_P(VarInitialiserTest, Normal) {
    expectDistributed(sample(init::Normal(1.5, 0.7)), normal(1.5, 0.7));
}

TEST_P(VarInitialiserTest, NormalClippedIsTruncatedNormal) {
    // Asymmetric window around the mean: clamping instead of resampling would put mass on the
    // bounds and shift the mean; a symmetric truncation would hide a wrong mean.
    const auto x = sample(init::NormalClipped(0.5, 2.0, -1.0, 2.5));
    expectDistributed(x, normalClipped(0.5, 2.0, -1.0, 2.5));
    // Resampling never lands exactly on a bound (probability ~1e-7 per value in float).
    EXPECT_LT(std::count(x.begin(), x.end(), -1.0) + std::count(x.begin(), x.end(), 2.5), 3);
}

// Each proposal of the bounded NormalClipped sampler: a narrow window around the mean (uniform
// proposal), narrow and wide windows in a far tail (uniform and exponential proposals), a tail
// below the mean (mirrored), one bound at the mean, and one side unbounded in effect. A tail
// window of [4, 6] sd holds 3e-5 of the mass: plain resampling would need ~30000 tries a value.
TEST_P(VarInitialiserTest, NormalClippedEveryProposal) {
    struct Case {
        double mean, sd, lo, hi;
    };
    const Case cases[] = {{1.0, 2.0, 0.0, 3.0},   {0.0, 1.0, 3.0, 3.2},  {0.0, 1.0, 4.0, 6.0},
                          {10.0, 0.5, 5.0, 8.0},  {0.0, 1.0, 0.0, 1e30}, {0.0, 1.0, -3.0, -2.9},
                          {2.0, 1.0, -100.0, 2.1}};
    for (const Case& c : cases) {
        SCOPED_TRACE(std::to_string(c.mean) + " " + std::to_string(c.sd) + " [" +
                     std::to_string(c.lo) + ", " + std::to_string(c.hi) + "]");
        const auto x = sample(init::NormalClipped(c.mean, c.sd, c.lo, c.hi), Precision::Double);
        expectDistributed(x, normalClipped(c.mean, c.sd, c.lo, c.hi));
    }
}

TEST_P(VarInitialiserTest, NormalClippedWithZeroSdIsTheMean) {
    const auto x = sample(init::NormalClipped(0.25, 0.0, 0.0, 1.0));
    EXPECT_EQ(std::count(x.begin(), x.end(), 0.25), std::ptrdiff_t(kSamples));
}

// rand_log_normal(m, s) (GeNN's gennrand_log_normal) is exp of a normal of mean m and standard
// deviation s: the logarithms of the samples are that normal.
TEST_P(VarInitialiserTest, LogNormalIsTheExponentialOfANormal) {
    InitSnippet logNormal;
    logNormal.name = "LogNormal";
    logNormal.params = {"m", "s"};
    logNormal.code = "value = rand_log_normal(m, s);";
    std::vector<double> logs = sample(VarInit(logNormal, {{"m", 0.3}, {"s", 0.4}}));
    for (double& v : logs)
        v = std::log(v);
    expectDistributed(logs, normal(0.3, 0.4));
}

TEST_P(VarInitialiserTest, Exponential) {
    expectDistributed(sample(init::Exponential(2.5)), exponential(2.5));
}

TEST_P(VarInitialiserTest, GammaShapeAboveOne) {
    expectDistributed(sample(init::Gamma(2.5, 1.5)), gamma(2.5, 1.5));
}

TEST_P(VarInitialiserTest, GammaShapeBelowOne) {
    // a < 1 takes a different path (Gamma(a + 1) · U^(1/a)).
    expectDistributed(sample(init::Gamma(0.4, 2.0)), gamma(0.4, 2.0));
}

TEST_P(VarInitialiserTest, Binomial) {
    // n p = 60 >= 10: BTRS.
    expectDistributed(sample(init::Binomial(200, 0.3)), binomial(200, 0.3));
}

TEST_P(VarInitialiserTest, BinomialAboveHalf) {
    // p > 1/2 draws n - Binomial(n, 1 - p).
    expectDistributed(sample(init::Binomial(40, 0.85)), binomial(40, 0.85));
}

TEST_P(VarInitialiserTest, BinomialManyTrials) {
    // n = 100000, p = 1/2000 (the row-length draw of FixedNumberTotalWithReplacement): BTRS with
    // n p = 50.
    expectDistributed(sample(init::Binomial(100000, 1.0 / 2000)), binomial(100000, 1.0 / 2000));
}

TEST_P(VarInitialiserTest, BinomialHugeNIsFast) {
    // n = 4e9: inversion took about a minute for these draws; BTRS takes ~2.3 uniforms each.
    // Float holds 4e9 exactly; the double run checks the same in the other precision.
    for (const Precision p : {Precision::Float, Precision::Double}) {
        SCOPED_TRACE(toString(p));
        expectDistributed(sample(init::Binomial(4e9, 0.5), p), binomial(4e9, 0.5));
    }
    expectDistributed(sample(init::Binomial(4e9, 1e-6), Precision::Double), binomial(4e9, 1e-6));
}

TEST_P(VarInitialiserTest, Constant) {
    for (const Precision p : {Precision::Float, Precision::Double}) {
        SCOPED_TRACE(toString(p));
        const auto x = sample(init::Constant(0.1), p);
        const double expected = p == Precision::Float ? double(0.1f) : 0.1;
        EXPECT_EQ(std::count(x.begin(), x.end(), expected), std::ptrdiff_t(kSamples));
    }
}

TEST_P(VarInitialiserTest, NormalDoublePrecision) {
    expectDistributed(sample(init::Normal(-3.0, 0.25), Precision::Double), normal(-3.0, 0.25));
}

TEST_P(VarInitialiserTest, GammaDoublePrecision) {
    expectDistributed(sample(init::Gamma(2.5, 1.5), Precision::Double), gamma(2.5, 1.5));
}

// Sample correlation of two independent samples: SD ≈ 1/sqrt(n).
double correlation(std::span<const double> a, std::span<const double> b) {
    const auto ma = sampleMoments(a), mb = sampleMoments(b);
    double c = 0;
    for (size_t i = 0; i < a.size(); i++)
        c += (a[i] - ma.mean) * (b[i] - mb.mean);
    return c / double(a.size() - 1) / std::sqrt(ma.var * mb.var);
}

TEST_P(VarInitialiserTest, BatchCopiesAreIndependentAndReadOnlyIsShared) {
    constexpr unsigned kBatch = 3;
    Model m("var_init_batch");
    m.setBatchSize(kBatch);
    m.addNeuronGroup(
        "Pop", kSamples,
        holder({{"x", "scalar", VarAccess::ReadWrite}, {"y", "scalar", VarAccess::ReadOnly}}), {},
        {{"x", init::Normal(2.0, 0.5)}, {"y", init::Uniform(0.0, 4.0)}});
    Simulation sim(m, prefs());
    const auto x = pullScalar(sim, Precision::Float, "Pop", "x");
    ASSERT_EQ(x.size(), size_t(kBatch) * kSamples); // one copy per batch element
    const std::span<const double> all(x);
    for (unsigned b = 0; b < kBatch; b++) {
        SCOPED_TRACE("batch " + std::to_string(b));
        expectDistributed(all.subspan(size_t(b) * kSamples, kSamples), normal(2.0, 0.5));
        for (unsigned c = b + 1; c < kBatch; c++) {
            const auto xb = all.subspan(size_t(b) * kSamples, kSamples);
            const auto xc = all.subspan(size_t(c) * kSamples, kSamples);
            EXPECT_FALSE(std::equal(xb.begin(), xb.end(), xc.begin())) << "batch " << c;
            // Independent streams: element i of two copies uncorrelated (5 SD).
            EXPECT_LT(std::abs(correlation(xb, xc)), kZ / std::sqrt(double(kSamples)))
                << "batch " << c;
        }
    }
    const auto y = pullScalar(sim, Precision::Float, "Pop", "y");
    ASSERT_EQ(y.size(), size_t(kSamples)); // ReadOnly: one copy shared by the batch
    expectDistributed(y, uniform(0.0, 4.0));
}

SF_INSTANTIATE_BACKEND_TESTS(VarInitialiserTest);

// ---- sparse connectivity initialisers ----------------------------------------------------------

struct Connectivity {
    unsigned numPre = 0, numPost = 0, stride = 0;
    std::vector<uint32_t> rowLength, ind;
    std::span<const uint32_t> row(unsigned i) const {
        return {ind.data() + size_t(i) * stride, rowLength[i]};
    }
    size_t total() const {
        size_t t = 0;
        for (auto r : rowLength)
            t += r;
        return t;
    }
    std::vector<double> columnCounts() const {
        std::vector<double> c(numPost, 0.0);
        for (unsigned i = 0; i < numPre; i++)
            for (auto j : row(i))
                if (j < numPost) c[j]++;
        return c;
    }
};

// Pre → Post (or Pop → Pop when recurrent), Sparse, StaticPulse with a constant weight.
Connectivity connect(const BackendPreferences& prefs, unsigned numPre, unsigned numPost,
                     const SparseConnectivityInit& init, bool recurrent = false) {
    Model m("sparse_init");
    m.addNeuronGroup("Pre", numPre, holder(), {}, {{"x", 0.0}});
    if (!recurrent) m.addNeuronGroup("Post", numPost, holder(), {}, {{"x", 0.0}});
    m.addSynapseGroup("Syn", MatrixType::Sparse, 0, "Pre", recurrent ? "Pre" : "Post",
                      {models::StaticPulse(), {}, {{"g", 1.0}}, {}, {}},
                      {models::DeltaCurr(), {}, {}}, init);
    Simulation sim(m, prefs);
    sim.pullConnectivity("Syn");
    Connectivity c{numPre, numPost, sim.rowStride("Syn"), sim.rowLengths("Syn"),
                   sim.columnIndices("Syn")};
    EXPECT_EQ(c.rowLength.size(), numPre);
    EXPECT_EQ(c.ind.size(), size_t(numPre) * c.stride);
    return c;
}

// Rows fit their stride, every index names a target, rows are sorted (strictly: no multapses).
void expectRowsWellFormed(const Connectivity& c, bool strictlyIncreasing) {
    size_t tooLong = 0, outOfRange = 0, unsorted = 0;
    for (unsigned i = 0; i < c.numPre; i++) {
        if (c.rowLength[i] > c.stride) {
            tooLong++;
            continue;
        }
        const auto r = c.row(i);
        for (size_t k = 0; k < r.size(); k++) {
            if (r[k] >= c.numPost) outOfRange++;
            if (k > 0 && (strictlyIncreasing ? r[k] <= r[k - 1] : r[k] < r[k - 1])) unsorted++;
        }
    }
    EXPECT_EQ(tooLong, 0u) << "rows longer than the stride " << c.stride;
    EXPECT_EQ(outOfRange, 0u) << "indices >= " << c.numPost;
    EXPECT_EQ(unsorted, 0u) << (strictlyIncreasing ? "rows not strictly increasing"
                                                   : "rows not non-decreasing");
}

// No count is far from its mean mu, so no target is starved or favoured (the dispersion test
// below would not notice one dead target among a thousand). Each count is binomial, so by
// Chernoff's bounds P(c <= mu / 3) <= exp(-2 mu / 9) and P(c >= 2 mu) <= exp(-mu / 3); for
// mu >= 100 and up to 2000 counts a correct initialiser fails with probability below 1e-6.
void expectNoExtremeCounts(std::span<const double> counts, double mu, const char* what) {
    ASSERT_GE(mu, 100.0) << "the bounds below need mu >= 100";
    ASSERT_LE(counts.size(), 2000u);
    const auto [lo, hi] = std::minmax_element(counts.begin(), counts.end());
    EXPECT_GT(*lo, mu / 3) << what << ": smallest count, at " << lo - counts.begin();
    EXPECT_LT(*hi, 2 * mu) << what << ": largest count, at " << hi - counts.begin();
}

// Counts c_j that are independent with mean mu, variance var and fourth central moment mu4:
// X = Σ (c_j - mu)² / var has mean k and variance k (mu4 / var² - 1).
void expectIndependentCounts(std::span<const double> counts, double mu, double var, double mu4,
                             const char* what) {
    expectNoExtremeCounts(counts, mu, what);
    const double k = double(counts.size());
    double x = 0;
    for (double c : counts)
        x += (c - mu) * (c - mu) / var;
    EXPECT_NEAR(x, k, kZ * std::sqrt(k * (mu4 / (var * var) - 1))) << what << " dispersion";
}

// Counts that are multinomial(n; 1/k each): Pearson's X = Σ (c_j - n/k)² / (n/k) has mean k - 1
// and variance 2 (k - 1)(1 - 1/n) exactly.
void expectMultinomialCounts(std::span<const double> counts, double n, const char* what) {
    const double k = double(counts.size()), e = n / k;
    expectNoExtremeCounts(counts, e, what);
    double sum = 0, x = 0;
    for (double c : counts) {
        sum += c;
        x += (c - e) * (c - e) / e;
    }
    EXPECT_EQ(sum, n) << what;
    EXPECT_NEAR(x, k - 1, kZ * std::sqrt(2 * (k - 1) * (1 - 1 / n))) << what << " dispersion";
}

// Mean target index over all synapses vs (numPost - 1) / 2, with the SE of the mean of that many
// independent uniform indices (variance (numPost² - 1) / 12): sensitive to a drift along the row.
void expectTargetsCentred(const Connectivity& c) {
    double sum = 0, n = 0;
    for (unsigned i = 0; i < c.numPre; i++)
        for (auto j : c.row(i)) {
            sum += j;
            n++;
        }
    const double m = c.numPost;
    EXPECT_NEAR(sum / n, (m - 1) / 2, kZ * std::sqrt((m * m - 1) / 12 / n)) << "mean target";
}

class SparseInitialiserTest : public sftest::BackendTest {};

TEST_P(SparseInitialiserTest, OneToOne) {
    // Square: the identity. Fewer targets than sources: rows past the last target are empty.
    for (const unsigned numPost : {1000u, 600u}) {
        SCOPED_TRACE("1000 -> " + std::to_string(numPost));
        const auto c = connect(prefs(), 1000, numPost, init::OneToOne());
        ASSERT_EQ(c.stride, 1u);
        for (unsigned i = 0; i < c.numPre; i++) {
            ASSERT_EQ(c.rowLength[i], i < numPost ? 1u : 0u) << "row " << i;
            if (i < numPost) {
                ASSERT_EQ(c.ind[i], i) << "row " << i;
            }
        }
    }
}

TEST_P(SparseInitialiserTest, FixedProbability) {
    constexpr unsigned kPre = 2000, kPost = 1000;
    constexpr double kP = 0.1;
    const auto c = connect(prefs(), kPre, kPost, init::FixedProbability(kP));
    expectRowsWellFormed(c, true);
    // Row lengths iid Binomial(numPost, p): mean np = 100, variance np(1 - p) = 90.
    std::vector<double> rows(c.rowLength.begin(), c.rowLength.end());
    expectDistributed(rows, binomial(kPost, kP));
    // Column counts independent Binomial(numPre, p): uniform over targets, right dispersion.
    const auto col = binomial(kPre, kP);
    expectIndependentCounts(c.columnCounts(), col.mean, col.var, col.mu4, "column counts");
    expectTargetsCentred(c);
}

TEST_P(SparseInitialiserTest, FixedProbabilityNoAutapse) {
    constexpr unsigned kN = 1500;
    constexpr double kP = 0.1;
    const auto c = connect(prefs(), kN, kN, init::FixedProbabilityNoAutapse(kP), true);
    expectRowsWellFormed(c, true);
    size_t autapses = 0;
    double above = 0, below = 0; // synapses i → i + 1 and i → i - 1
    for (unsigned i = 0; i < kN; i++)
        for (auto j : c.row(i)) {
            autapses += j == i;
            above += j == i + 1;
            below += j + 1 == i;
        }
    EXPECT_EQ(autapses, 0u);
    // Row i chooses among the n - 1 other neurons: lengths Binomial(n - 1, p), mean (n - 1)p.
    std::vector<double> rows(c.rowLength.begin(), c.rowLength.end());
    expectDistributed(rows, binomial(kN - 1, kP));
    // Column j is reached from the n - 1 other rows, each with probability p.
    const auto col = binomial(kN - 1, kP);
    expectIndependentCounts(c.columnCounts(), col.mean, col.var, col.mu4, "column counts");
    // The diagonal's neighbours are ordinary targets (the skip over i is off by none):
    // i → i + 1 occurs Binomial(n - 1, p) times over the n - 1 rows that have it; so does i → i
    // - 1.
    const auto nb = binomial(kN - 1, kP);
    EXPECT_NEAR(above, nb.mean, kZ * std::sqrt(nb.var)) << "synapses i -> i + 1";
    EXPECT_NEAR(below, nb.mean, kZ * std::sqrt(nb.var)) << "synapses i -> i - 1";
    expectTargetsCentred(c);
}

// Expected number and variance of repeated targets among r uniform draws from m, from the
// occupancy distribution: empty bins E = m (1 - 1/m)^r, Var = m (1 - 1/m)^r +
// m (m - 1)(1 - 2/m)^r - m² (1 - 1/m)^{2r}; repeats = r - (m - empty).
std::pair<double, double> repeatsMoments(double r, double m) {
    const double q1 = std::pow(1 - 1 / m, r), q2 = std::pow(1 - 2 / m, r);
    return {r - m + m * q1, m * q1 + m * (m - 1) * q2 - m * m * q1 * q1};
}

TEST_P(SparseInitialiserTest, FixedNumberPostWithReplacement) {
    constexpr unsigned kPre = 2000, kPost = 1000, kRow = 50;
    const auto c = connect(prefs(), kPre, kPost, init::FixedNumberPostWithReplacement(kRow));
    EXPECT_EQ(c.stride, kRow);
    EXPECT_EQ(std::count(c.rowLength.begin(), c.rowLength.end(), kRow), std::ptrdiff_t(kPre))
        << "every row has exactly rowLength synapses";
    expectRowsWellFormed(c, false);
    // Every synapse's target uniform and independent: column counts multinomial.
    expectMultinomialCounts(c.columnCounts(), double(kPre) * kRow, "column counts");
    expectTargetsCentred(c);
    // With replacement: repeated targets within a row as often as for independent draws
    // (about 1.2 per row here; a draw without replacement would give none).
    double repeats = 0;
    for (unsigned i = 0; i < kPre; i++) {
        const auto r = c.row(i);
        for (size_t k = 1; k < r.size(); k++)
            repeats += r[k] == r[k - 1];
    }
    const auto [mean, var] = repeatsMoments(kRow, kPost);
    EXPECT_NEAR(repeats, kPre * mean, kZ * std::sqrt(kPre * var)) << "repeated targets";
}

TEST_P(SparseInitialiserTest, FixedNumberTotalWithReplacement) {
    constexpr unsigned kPre = 2000, kPost = 1000, kTotal = 100000;
    const auto c = connect(prefs(), kPre, kPost, init::FixedNumberTotalWithReplacement(kTotal));
    expectRowsWellFormed(c, false);
    ASSERT_EQ(c.total(), size_t(kTotal)); // exactly, so the mean row length is total / numPre
    // Row lengths multinomial(total; 1/numPre each): marginals Binomial(total, 1/numPre), so the
    // variance about the (exact) mean e = total/numPre is total (1/numPre)(1 - 1/numPre) ≈ 49.98.
    // numPre · var / e is Pearson's statistic, whose multinomial SD is sqrt(2 (k - 1)(1 - 1/n)).
    std::vector<double> rows(c.rowLength.begin(), c.rowLength.end());
    double var = 0;
    for (double r : rows)
        var += (r - double(kTotal) / kPre) * (r - double(kTotal) / kPre);
    var /= kPre;
    const double p = 1.0 / kPre, e = kTotal * p;
    EXPECT_NEAR(var, kTotal * p * (1 - p),
                kZ * (e / kPre) * std::sqrt(2.0 * (kPre - 1) * (1 - 1.0 / kTotal)))
        << "row-length variance";
    // The rows are drawn serially (conditional binomials): no drift along the rows. The first
    // half of the rows holds Binomial(total, 1/2) synapses.
    double firstHalf = 0;
    for (unsigned i = 0; i < kPre / 2; i++)
        firstHalf += rows[i];
    EXPECT_NEAR(firstHalf, kTotal / 2.0, kZ * std::sqrt(kTotal / 4.0)) << "first half of rows";
    // Targets independent and uniform: column counts multinomial(total; 1/numPost).
    expectMultinomialCounts(c.columnCounts(), kTotal, "column counts");
    expectTargetsCentred(c);
}

SF_INSTANTIATE_BACKEND_TESTS(SparseInitialiserTest);

} // namespace
