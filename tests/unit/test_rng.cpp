// Host tests of the device random number code (src/backends/common/rng.h). The header is included
// twice, under the C++ backend's prelude, once per model precision, each in its own namespace.
//
// Statistical tolerances: each check compares a sample mean or variance of N draws with its exact
// value and allows 5 standard errors, where SE(mean) = sqrt(var / N) and SE(variance) =
// sqrt((mu4 - var^2) / N) with mu4 the exact fourth central moment. The seeds are fixed, so the
// tests are deterministic; a correct generator fails one check with probability ~6e-7.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <math.h>
#include <string>
#include <utility>
#include <vector>

#define SF_FN static inline

namespace f32 {
typedef std::uint32_t sf_u32;
typedef std::uint64_t sf_u64;
typedef float scalar;
#include "backends/common/rng.h"
} // namespace f32

#define SF_DOUBLE 1
namespace f64 {
typedef std::uint32_t sf_u32;
typedef std::uint64_t sf_u64;
typedef double scalar;
#include "backends/common/rng.h"
} // namespace f64
#undef SF_DOUBLE

namespace {

// One precision's functions behind one interface, for typed tests.
#define SF_TEST_PRECISION(NAME, NS)                                                                \
    struct NAME {                                                                                  \
        using Rng = NS::sf_rng;                                                                    \
        using Scalar = NS::scalar;                                                                 \
        static Rng make(std::uint64_t seed, std::uint32_t stream, std::uint32_t element,           \
                        std::uint32_t batch, std::uint32_t step) {                                 \
            Rng r;                                                                                 \
            NS::sf_rng_init(&r, seed, stream, element, batch, step);                               \
            return r;                                                                              \
        }                                                                                          \
        static std::uint32_t next(Rng* r) { return NS::sf_next_u32(r); }                           \
        static double uniform(Rng* r) { return NS::sf_uniform(r); }                                \
        static double normal(Rng* r) { return NS::sf_normal(r); }                                  \
        static double exponential(Rng* r) { return NS::sf_exponential(r); }                        \
        static double gamma(Rng* r, double a) { return NS::sf_gamma(r, (Scalar)a); }               \
        static std::uint32_t binomial(Rng* r, std::uint32_t n, double p) {                         \
            return NS::sf_binomial(r, n, (Scalar)p);                                               \
        }                                                                                          \
        static void philox(const std::uint32_t* c, const std::uint32_t* k, std::uint32_t* o) {     \
            NS::sf_philox4x32_10(c, k, o);                                                         \
        }                                                                                          \
    }

SF_TEST_PRECISION(F32, f32);
SF_TEST_PRECISION(F64, f64);
#undef SF_TEST_PRECISION

constexpr std::uint64_t kSeed = 0x0123456789ABCDEFull;

struct Sample {
    double mean = 0.0;
    double var = 0.0;
    double min = 0.0;
    double max = 0.0;
};

Sample draw(int n, const std::function<double()>& f) {
    std::vector<double> xs(n);
    for (double& x : xs) {
        x = f();
    }
    Sample s;
    s.min = s.max = xs[0];
    for (double x : xs) {
        s.mean += x;
        s.min = std::min(s.min, x);
        s.max = std::max(s.max, x);
    }
    s.mean /= n;
    for (double x : xs) {
        s.var += (x - s.mean) * (x - s.mean);
    }
    s.var /= (n - 1);
    return s;
}

// Within 5 standard errors (see the top of the file).
void expectMoments(const Sample& s, int n, double mean, double var, double mu4,
                   const std::string& what) {
    const double seMean = std::sqrt(var / n);
    const double seVar = std::sqrt((mu4 - var * var) / n);
    EXPECT_NEAR(s.mean, mean, 5.0 * seMean) << what << ": mean";
    EXPECT_NEAR(s.var, var, 5.0 * seVar) << what << ": variance";
}

// ---- Philox known answers (REFERENCE.md) ----

struct KnownAnswer {
    std::uint32_t ctr[4];
    std::uint32_t key[2];
    std::uint32_t out[4];
};

const KnownAnswer kKnownAnswers[] = {
    {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
     {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
     {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

template <typename P> class RngTest : public ::testing::Test {};
using Precisions = ::testing::Types<F32, F64>;
TYPED_TEST_SUITE(RngTest, Precisions);

TYPED_TEST(RngTest, PhiloxKnownAnswers) {
    for (const KnownAnswer& ka : kKnownAnswers) {
        std::uint32_t out[4] = {};
        TypeParam::philox(ka.ctr, ka.key, out);
        for (int i = 0; i < 4; i++) {
            EXPECT_EQ(out[i], ka.out[i]) << "word " << i;
        }
    }
}

TYPED_TEST(RngTest, KeyingAndBlockCounter) {
    const std::uint64_t seed = 0xA4093822299F31D0ull;
    const std::uint32_t stream = 7, element = 11, batch = 3, step = 1234;
    auto r = TypeParam::make(seed, stream, element, batch, step);
    const std::uint32_t key[2] = {0x299F31D0u, 0xA4093822u ^ stream};
    for (std::uint32_t block = 0; block < 3; block++) {
        const std::uint32_t ctr[4] = {element, batch, step, block};
        std::uint32_t expected[4];
        TypeParam::philox(ctr, key, expected);
        for (int i = 0; i < 4; i++) {
            EXPECT_EQ(TypeParam::next(&r), expected[i]) << "block " << block << " word " << i;
        }
    }
}

std::vector<std::uint32_t> words(typename F32::Rng r, int n) {
    std::vector<std::uint32_t> w(n);
    for (auto& x : w) {
        x = F32::next(&r);
    }
    return w;
}

TEST(Rng, SameTupleSameSequenceAnyChangeDiffers) {
    const auto base = words(F32::make(kSeed, 1, 2, 3, 4), 16);
    EXPECT_EQ(words(F32::make(kSeed, 1, 2, 3, 4), 16), base);
    EXPECT_NE(words(F32::make(kSeed + 1, 1, 2, 3, 4), 16), base);            // seed, low word
    EXPECT_NE(words(F32::make(kSeed + (1ull << 32), 1, 2, 3, 4), 16), base); // seed, high word
    EXPECT_NE(words(F32::make(kSeed, 9, 2, 3, 4), 16), base);                // stream
    EXPECT_NE(words(F32::make(kSeed, 1, 9, 3, 4), 16), base);                // element
    EXPECT_NE(words(F32::make(kSeed, 1, 2, 9, 4), 16), base);                // batch
    EXPECT_NE(words(F32::make(kSeed, 1, 2, 3, 9), 16), base);                // step
}

TEST(Rng, BothPrecisionsDrawTheSameWords) {
    auto a = F32::make(kSeed, 5, 6, 7, 8);
    auto b = F64::make(kSeed, 5, 6, 7, 8);
    for (int i = 0; i < 64; i++) {
        EXPECT_EQ(F32::next(&a), F64::next(&b));
    }
}

// Forces the next words of a generator, to test the word-to-uniform conversion at its ends.
template <typename P> void forceWords(typename P::Rng* r, std::uint32_t w) {
    for (int i = 0; i < 4; i++) {
        r->buf[i] = w;
    }
    r->used = 0;
}

TYPED_TEST(RngTest, UniformEndsAreZeroExclusiveOneInclusive) {
    auto r = TypeParam::make(kSeed, 0, 0, 0, 0);
    forceWords<TypeParam>(&r, 0u);
    const double smallest = TypeParam::uniform(&r);
    EXPECT_GT(smallest, 0.0);
    EXPECT_EQ(smallest, sizeof(typename TypeParam::Scalar) == 4 ? std::ldexp(1.0, -24)
                                                                : std::ldexp(1.0, -53));
    forceWords<TypeParam>(&r, 0xFFFFFFFFu);
    EXPECT_EQ(TypeParam::uniform(&r), 1.0);
    // u = 1 gives exponential +0, not -0
    forceWords<TypeParam>(&r, 0xFFFFFFFFu);
    const double e = TypeParam::exponential(&r);
    EXPECT_EQ(e, 0.0);
    EXPECT_FALSE(std::signbit(e));
}

constexpr int kN = 100000;

TYPED_TEST(RngTest, UniformMoments) {
    auto r = TypeParam::make(kSeed, 1, 0, 0, 0);
    const Sample s = draw(kN, [&] { return TypeParam::uniform(&r); });
    EXPECT_GT(s.min, 0.0);
    EXPECT_LE(s.max, 1.0);
    expectMoments(s, kN, 0.5, 1.0 / 12.0, 1.0 / 80.0, "uniform");
}

TYPED_TEST(RngTest, NormalMoments) {
    auto r = TypeParam::make(kSeed, 2, 0, 0, 0);
    const Sample s = draw(kN, [&] { return TypeParam::normal(&r); });
    expectMoments(s, kN, 0.0, 1.0, 3.0, "normal");
}

TYPED_TEST(RngTest, ExponentialMoments) {
    auto r = TypeParam::make(kSeed, 3, 0, 0, 0);
    const Sample s = draw(kN, [&] { return TypeParam::exponential(&r); });
    EXPECT_GE(s.min, 0.0);
    expectMoments(s, kN, 1.0, 1.0, 9.0, "exponential");
}

TYPED_TEST(RngTest, GammaMoments) {
    // Gamma(a, 1): mean a, variance a, mu4 = 3a^2 + 6a (excess kurtosis 6/a).
    for (double a : {0.5, 2.0, 9.0}) {
        auto r = TypeParam::make(kSeed, 4, static_cast<std::uint32_t>(a * 10), 0, 0);
        const Sample s = draw(kN, [&] { return TypeParam::gamma(&r, a); });
        EXPECT_GE(s.min, 0.0);
        expectMoments(s, kN, a, a, 3 * a * a + 6 * a, "gamma a=" + std::to_string(a));
    }
    auto r = TypeParam::make(kSeed, 4, 0, 0, 0);
    EXPECT_EQ(TypeParam::gamma(&r, 0.0), 0.0);
}

void checkBinomial(const std::function<std::uint32_t()>& f, int n, std::uint32_t trials, double p) {
    // mean np, variance npq, mu4 = npq (1 + 3pq (n - 2))
    const double q = 1.0 - p;
    const double var = trials * p * q;
    const double mu4 = var * (1.0 + 3.0 * p * q * (trials - 2.0));
    const Sample s = draw(n, [&] { return static_cast<double>(f()); });
    EXPECT_GE(s.min, 0.0);
    EXPECT_LE(s.max, trials);
    expectMoments(s, n, trials * p, var, mu4,
                  "binomial n=" + std::to_string(trials) + " p=" + std::to_string(p));
}

TYPED_TEST(RngTest, BinomialMoments) {
    struct Case {
        std::uint32_t n;
        double p;
        int draws;
    };
    // {10, 0.3} and {1000, 0.009} use inversion (n p < 10), the others BTRS; {5000, 0.4} has
    // q^n ~ 1e-1109, which underflows even in double; in {4e9, 2e-9}, 1 - p rounds to 1 in float.
    const Case cases[] = {{10, 0.3, kN},    {100, 0.9, kN},         {1000, 0.009, kN},
                          {1000, 0.01, kN}, {5000, 0.4, 5000},      {100000, 0.0005, kN},
                          {19, 0.55, kN},   {4000000000u, 0.5, kN}, {4000000000u, 2e-9, kN}};
    std::uint32_t element = 0;
    for (const Case& c : cases) {
        auto r = TypeParam::make(kSeed, 5, element++, 0, 0);
        checkBinomial([&] { return TypeParam::binomial(&r, c.n, c.p); }, c.draws, c.n, c.p);
    }
}

TYPED_TEST(RngTest, BinomialEdgeCases) {
    auto r = TypeParam::make(kSeed, 6, 0, 0, 0);
    EXPECT_EQ(TypeParam::binomial(&r, 10, 0.0), 0u);
    EXPECT_EQ(TypeParam::binomial(&r, 10, -0.5), 0u);
    EXPECT_EQ(TypeParam::binomial(&r, 10, 1.0), 10u);
    EXPECT_EQ(TypeParam::binomial(&r, 10, 1.5), 10u);
    EXPECT_EQ(TypeParam::binomial(&r, 0, 0.5), 0u);
    EXPECT_EQ(TypeParam::binomial(&r, 0xFFFFFFFFu, 1.0), 0xFFFFFFFFu);
    // a huge n with a tiny p: one short walk, no overflow in the chunk size
    const std::uint32_t x = TypeParam::binomial(&r, 0xFFFFFFFFu, 1e-9);
    EXPECT_LT(x, 30u);
    // the largest n with p just above 1/2: BTRS on the flipped p, result within n
    for (int i = 0; i < 100; i++) {
        const std::uint32_t y = TypeParam::binomial(&r, 0xFFFFFFFFu, 0.5000001);
        EXPECT_GT(y, 2100000000u);
        EXPECT_LT(y, 2200000000u);
    }
}

// log P(X = k) for X ~ Binomial(n, p), in double (lgamma's absolute error ~1e-5 at n = 4e9).
double logPmf(std::uint32_t n, double p, double k) {
    return std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0) +
           k * std::log(p) + (n - k) * std::log1p(-p);
}

// Pearson's chi-square of `draws` against the exact pmf, over bins of width ~sd/4 spanning +-6
// sd, plus the two tails. Returns {statistic, degrees of freedom}.
std::pair<double, int> binomialChiSquare(const std::vector<std::uint32_t>& draws, std::uint32_t n,
                                         double p) {
    const double mean = n * p, sd = std::sqrt(n * p * (1.0 - p));
    const double lo = std::max(0.0, std::floor(mean - 6.0 * sd));
    const double hi = std::min(double(n), std::ceil(mean + 6.0 * sd));
    const double width = std::max(1.0, std::floor(sd / 4.0));
    const int bins = static_cast<int>((hi - lo) / width) + 1;
    std::vector<double> expected(bins + 2, 0.0), observed(bins + 2, 0.0);
    auto binOf = [&](double k) {
        if (k < lo) return 0;
        if (k > hi) return bins + 1;
        return 1 + std::min(bins - 1, static_cast<int>((k - lo) / width));
    };
    double inside = 0.0;
    for (double k = lo; k <= hi; k++) {
        const double f = std::exp(logPmf(n, p, k));
        expected[binOf(k)] += f;
        inside += f;
    }
    // the tails beyond 6 sd hold < 1e-8: split what is left evenly
    expected[0] += (1.0 - inside) / 2;
    expected[bins + 1] += (1.0 - inside) / 2;
    for (std::uint32_t x : draws)
        observed[binOf(x)] += 1.0;
    double chi2 = 0.0;
    int df = -1;
    double pooledE = 0.0, pooledO = 0.0; // merge bins until each expects >= 5 draws
    for (int b = 0; b < bins + 2; b++) {
        pooledE += expected[b] * draws.size();
        pooledO += observed[b];
        if (pooledE >= 5.0 || b == bins + 1) {
            if (pooledE > 0.0) {
                chi2 += (pooledO - pooledE) * (pooledO - pooledE) / pooledE;
                df++;
            }
            pooledE = pooledO = 0.0;
        }
    }
    return {chi2, df};
}

// Upper 1e-6 point of the chi-square distribution (Wilson-Hilferty), so a correct sampler fails
// one case with probability ~1e-6.
double chiSquareLimit(int df) {
    const double z = 4.753, c = 2.0 / (9.0 * df);
    return df * std::pow(1.0 - c + z * std::sqrt(c), 3.0);
}

TYPED_TEST(RngTest, BinomialChiSquare) {
    struct Case {
        std::uint32_t n;
        double p;
    };
    // BTRS near its threshold, in the middle, with a small p and at the largest n; inversion just
    // below the threshold.
    const Case cases[] = {{100, 0.1},         {1000, 0.3},         {1000000, 0.25},
                          {4000000000u, 0.5}, {4000000000u, 1e-6}, {4000000000u, 0.97},
                          {99, 0.1}};
    std::uint32_t element = 0;
    for (const Case& c : cases) {
        const double p = static_cast<typename TypeParam::Scalar>(c.p); // the value the code sees
        auto r = TypeParam::make(kSeed, 7, element++, 0, 0);
        std::vector<std::uint32_t> draws(50000);
        for (auto& x : draws)
            x = TypeParam::binomial(&r, c.n, p);
        const auto [chi2, df] = binomialChiSquare(draws, c.n, p);
        EXPECT_LT(chi2, chiSquareLimit(df)) << "n=" << c.n << " p=" << c.p << " df=" << df;
        EXPECT_GT(df, 10) << "n=" << c.n << " p=" << c.p;
    }
}

// The cost of BTRS does not grow with n: count the Philox words drawn (no wall time).
TYPED_TEST(RngTest, BinomialUsesBoundedUniformsPerDraw) {
    const std::uint32_t wordsPerUniform = sizeof(typename TypeParam::Scalar) == 4 ? 1 : 2;
    for (std::uint32_t n : {20u, 1000u, 1000000u, 4000000000u}) {
        for (double p : {0.5, 0.01}) {
            if (n * p < 10.0) continue;
            auto r = TypeParam::make(kSeed, 8, n % 1000, 0, 0);
            const int draws = 20000;
            for (int i = 0; i < draws; i++)
                TypeParam::binomial(&r, n, p);
            const double words = 4.0 * r.ctr[3] - (4.0 - r.used);
            const double uniforms = words / wordsPerUniform / draws;
            EXPECT_GE(uniforms, 2.0) << "n=" << n << " p=" << p;
            EXPECT_LT(uniforms, 3.0) << "n=" << n << " p=" << p;
        }
    }
}

} // namespace
