/* spikeforge device-side random numbers: Philox4x32-10 and the distributions built on it.
 *
 * Portable C subset: this text compiles unchanged as C++ (g++), CUDA C++ and OpenCL C 1.2. It is
 * embedded as a string into generated code after a prelude that defines SF_FN (function
 * qualifier), the types sf_u32, sf_u64 and scalar (float or double), SF_DOUBLE (defined only for
 * double precision) and the maths functions log, sqrt, cos, sin, exp, pow and floor for scalar.
 * No includes, no globals, no include guard (embedded once per generated file; the host test
 * includes it once per precision); every floating constant is written for the model precision
 * (OpenCL devices without fp64 reject double literals).
 *
 * Keying scheme. Every random sequence is fixed by (seed, stream, element, batch, step):
 *   key     = (lo32(seed) ^ hi32(step), hi32(seed) ^ stream)
 *   counter = (element, batch, lo32(step), block)
 * seed is the model's 64-bit seed; stream is a number the code generator gives each (group,
 * purpose) pair, e.g. one per group's simulation code and one per initialised variable, so no
 * two groups or purposes share a key; element is the neuron, synapse or row index within the
 * group; batch is the batch index; step is the 64-bit count of steps run since the simulation was
 * built or reset (SFStepArgs::rngStep: it keeps counting across resetState, so each trial draws
 * fresh numbers; below 2^32 steps the key is the seed's alone); initialisation uses its own
 * streams, so step is 0 there. block counts the Philox calls made for this tuple: each call
 * yields 4 words, so one tuple gives 2^34 words, far more than one step of one element needs.
 * Two (seed, stream) pairs give the same key only when the seeds' low words are equal and
 * hi32(seed) ^ stream is equal, i.e. when the seeds' high words differ by exactly the XOR of the
 * two streams. Philox is
 * exact integer arithmetic and the word-to-uniform conversion below is exact, so every backend
 * draws the same uniforms; values passed through log/cos/pow may differ in the last bits.
 *
 * Costs: sf_uniform 1 word (float) or 2 words (double); sf_normal and sf_exponential are built
 * from uniforms; sf_gamma is a rejection method (about 1.05 normals per value for a >= 1);
 * sf_binomial is inversion (one uniform, O(n p) steps) while n * min(p, 1 - p) < 10 and BTRS
 * rejection above (2.3 to 2.8 uniforms per value on average, independent of n). Every loop has a
 * fixed cap on its tries, far beyond what any input reaches in practice, so no input can make a
 * sampler run forever. Besides the functions above, the prelude must provide fabs and log1p.
 */

#ifdef SF_DOUBLE
#define SF_RNG_C(x) x
#else
#define SF_RNG_C(x) x##f
#endif

typedef struct {
    sf_u32 ctr[4];
    sf_u32 key[2];
    sf_u32 buf[4];
    sf_u32 used; /* words of buf already returned; 4 = empty */
} sf_rng;

/* Philox4x32-10 (Salmon, Moraes, Dror & Shaw, SC'11): 10 rounds, key bumped between rounds. */
SF_FN void sf_philox4x32_10(const sf_u32* ctr, const sf_u32* key, sf_u32* out) {
    sf_u32 c0 = ctr[0];
    sf_u32 c1 = ctr[1];
    sf_u32 c2 = ctr[2];
    sf_u32 c3 = ctr[3];
    sf_u32 k0 = key[0];
    sf_u32 k1 = key[1];
    for (int rnd = 0; rnd < 10; rnd++) {
        const sf_u64 p0 = (sf_u64)0xD2511F53u * (sf_u64)c0;
        const sf_u64 p1 = (sf_u64)0xCD9E8D57u * (sf_u64)c2;
        c0 = (sf_u32)(p1 >> 32) ^ c1 ^ k0;
        c2 = (sf_u32)(p0 >> 32) ^ c3 ^ k1;
        c1 = (sf_u32)p1;
        c3 = (sf_u32)p0;
        /* the bump after the last round is unused; keeping the loop uniform helps unrolling */
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

SF_FN void sf_rng_init(sf_rng* r, sf_u64 seed, sf_u32 stream, sf_u32 element, sf_u32 batch,
                       sf_u64 step) {
    r->key[0] = (sf_u32)seed ^ (sf_u32)(step >> 32);
    r->key[1] = (sf_u32)(seed >> 32) ^ stream;
    r->ctr[0] = element;
    r->ctr[1] = batch;
    r->ctr[2] = (sf_u32)step;
    r->ctr[3] = 0u;
    r->buf[0] = 0u;
    r->buf[1] = 0u;
    r->buf[2] = 0u;
    r->buf[3] = 0u;
    r->used = 4u;
}

/* One Philox call per 4 words; the block counter ctr[3] does not carry (2^32 blocks suffice). */
SF_FN sf_u32 sf_next_u32(sf_rng* r) {
    if (r->used >= 4u) {
        sf_philox4x32_10(r->ctr, r->key, r->buf);
        r->ctr[3] += 1u;
        r->used = 0u;
    }
    const sf_u32 w = r->buf[r->used];
    r->used += 1u;
    return w;
}

/* Uniform on (0, 1], never 0 so that log() is safe. Float: k / 2^24 for k = 1 .. 2^24 from the top
 * 24 bits of one word. Double: k / 2^53 for k = 1 .. 2^53 from 27 + 26 bits of two words. Both
 * conversions are exact. */
SF_FN scalar sf_uniform(sf_rng* r) {
#ifdef SF_DOUBLE
    const sf_u64 hi = (sf_u64)(sf_next_u32(r) >> 5);
    const sf_u64 lo = (sf_u64)(sf_next_u32(r) >> 6);
    const sf_u64 k = ((hi << 26) | lo) + (sf_u64)1;
    return (scalar)k * SF_RNG_C(1.1102230246251565404236316680908203125e-16); /* 2^-53 */
#else
    const sf_u32 k = (sf_next_u32(r) >> 8) + 1u;
    return (scalar)k * SF_RNG_C(5.9604644775390625e-08); /* 2^-24 */
#endif
}

/* Standard normal by Box-Muller; one value per call (the sine partner is discarded). */
SF_FN scalar sf_normal(sf_rng* r) {
    const scalar u1 = sf_uniform(r);
    const scalar u2 = sf_uniform(r);
    const scalar radius = sqrt((scalar)(-2) * log(u1));
    return radius * cos(SF_RNG_C(6.283185307179586476925286766559) * u2);
}

/* Exponential with rate 1 (mean 1), by inversion; values in [0, inf). */
SF_FN scalar sf_exponential(sf_rng* r) {
    return (scalar)0 - log(sf_uniform(r));
}

/* Gamma(a, 1) for a >= 1: Marsaglia & Tsang, ACM TOMS 26(3), 2000. Each try is accepted with
 * probability >= 0.95, so the cap of 1000 tries (then d, the distribution's centre, is returned)
 * is reached with probability below 1e-1000: it only keeps the loop bounded on any input. */
SF_FN scalar sf_gamma_ge1(sf_rng* r, scalar a) {
    const scalar d = a - (scalar)1 / (scalar)3;
    const scalar c = (scalar)1 / sqrt((scalar)9 * d);
    for (int tries = 0; tries < 1000; tries++) {
        const scalar x = sf_normal(r);
        scalar v = (scalar)1 + c * x;
        if (v <= (scalar)0) {
            continue;
        }
        v = v * v * v;
        const scalar u = sf_uniform(r);
        const scalar x2 = x * x;
        /* cheap squeeze first, then the exact log test */
        if (u < (scalar)1 - SF_RNG_C(0.0331) * x2 * x2) {
            return d * v;
        }
        if (log(u) < SF_RNG_C(0.5) * x2 + d * ((scalar)1 - v + log(v))) {
            return d * v;
        }
    }
    return d;
}

/* Gamma(a, 1) (shape a, scale 1). For a < 1 uses Gamma(a) = Gamma(a + 1) * U^(1/a). a <= 0 or
 * NaN (degenerate; refused by the model's parameter checks) gives 0. */
SF_FN scalar sf_gamma(sf_rng* r, scalar a) {
    if (!(a > (scalar)0)) {
        return (scalar)0;
    }
    if (a < (scalar)1) {
        const scalar g = sf_gamma_ge1(r, a + (scalar)1);
        return g * pow(sf_uniform(r), (scalar)1 / a);
    }
    return sf_gamma_ge1(r, a);
}

/* Binomial(m, p) by sequential inversion for p <= 1/2 and m p < 10, so that P(X = 0) = q^m >=
 * e^-20 cannot underflow, even in float. Walks the CDF from 0: O(m p + 1) steps, one uniform. */
SF_FN sf_u32 sf_binomial_inversion(sf_rng* r, sf_u32 m, scalar p) {
    const scalar q = (scalar)1 - p;
    const scalar s = p / q;
    const scalar a = ((scalar)m + (scalar)1) * s;
    /* P(X = 0) = q^m, through log1p: in float, 1 - p rounds to 1 for p < 3e-8 */
    const scalar f0 = exp((scalar)m * log1p((scalar)0 - p));
    sf_u32 x = 0u;
    for (int tries = 0; tries < 64; tries++) {
        scalar f = f0;
        scalar u = sf_uniform(r);
        x = 0u;
        /* P(X = x) / P(X = x - 1) = (m - x + 1) p / (x q) = a / x - s */
        while (u > f && x < m && f > (scalar)0) {
            u -= f;
            x += 1u;
            f *= a / (scalar)x - s;
        }
        if (u <= f) {
            return x;
        }
        /* Rounding left u above the summed mass (pow(q, m) in float is off by ~m * 2^-25
         * relative): draw again, which samples the computed pmf renormalised, instead of
         * returning the end of the walk. A retry has probability ~1e-5, so the cap of 64 only
         * bounds the loop. */
    }
    return x;
}

/* log(1 + x) - x for x > -1, accurate near 0 (its Taylor series below |x| = 0.01, where
 * log1p(x) - x would lose digits to cancellation). */
SF_FN scalar sf_log1pmx(scalar x) {
    if (x > SF_RNG_C(-0.01) && x < SF_RNG_C(0.01)) {
        const scalar c = SF_RNG_C(-0.125) + x / (scalar)9;
        const scalar s = SF_RNG_C(0.142857142857142857) + x * c;
        const scalar t = SF_RNG_C(-0.166666666666666667) + x * s;
        const scalar w = SF_RNG_C(0.2) + x * t;
        const scalar y = SF_RNG_C(-0.25) + x * w;
        const scalar z = SF_RNG_C(0.333333333333333333) + x * y;
        return x * x * (SF_RNG_C(-0.5) + x * z);
    }
    return log1p(x) - x;
}

/* Stirling's tail: log(k!) - [(k + 1/2) log(k + 1) - (k + 1) + log(2 pi) / 2], tabulated below 10
 * and from the asymptotic series (error < 1e-12) above. */
SF_FN scalar sf_stirling_tail(sf_u32 k) {
    const scalar table[10] = {SF_RNG_C(0.08106146679532726),  SF_RNG_C(0.04134069595540929),
                              SF_RNG_C(0.02767792568499834),  SF_RNG_C(0.02079067210376509),
                              SF_RNG_C(0.01664469118982119),  SF_RNG_C(0.01387612882307075),
                              SF_RNG_C(0.01189670994589177),  SF_RNG_C(0.01041126526197209),
                              SF_RNG_C(0.009255462182712733), SF_RNG_C(0.008330563433362871)};
    if (k < 10u) {
        return table[k];
    }
    const scalar y = (scalar)k + (scalar)1;
    const scalar y2 = y * y;
    const scalar inner = SF_RNG_C(1.0) / SF_RNG_C(1260.0) - SF_RNG_C(1.0) / (SF_RNG_C(1680.0) * y2);
    const scalar mid = SF_RNG_C(1.0) / SF_RNG_C(360.0) - inner / y2;
    return (SF_RNG_C(1.0) / SF_RNG_C(12.0) - mid / y2) / y;
}

/* log(P(X = k) / P(X = m)) for X ~ Binomial(n, p), q = 1 - p, d = k - m. Written with Stirling's
 * formula around m so that no large lgamma values are subtracted (n may be 4e9, where lgamma is
 * ~1e11 and float keeps no digit of the difference): every term is O(d^2 / n) or O(d). */
SF_FN scalar sf_binomial_log_ratio(sf_u32 n, sf_u32 m, sf_u32 k, scalar d, scalar p, scalar q) {
    const scalar m1 = (scalar)m + (scalar)1;
    const scalar nm1 = (scalar)(n - m) + (scalar)1;
    const scalar halfOne = SF_RNG_C(0.5);
    const scalar ratio = ((scalar)(n - k) + (scalar)1) * p / (((scalar)k + (scalar)1) * q);
    return ((scalar)0 - ((scalar)m + halfOne) * sf_log1pmx(d / m1)) -
           ((scalar)(n - m) + halfOne) * sf_log1pmx((scalar)0 - d / nm1) +
           halfOne * d * ((scalar)1 / m1 - (scalar)1 / nm1) + d * log(ratio) +
           sf_stirling_tail(m) +
           sf_stirling_tail(n - m) - sf_stirling_tail(k) - sf_stirling_tail(n - k);
}

/* Binomial(n, p) for p <= 1/2 and n p >= 10: BTRS, transformed rejection with squeeze (W.
 * Hoermann, "The generation of binomial random variates", J. Statist. Comput. Simul. 46, 1993).
 * Two uniforms per try; a try is accepted with probability ~0.7 near n p = 10 and ~0.89 for large
 * n p (most by the squeeze, without a logarithm), so a draw costs 2.3 to 2.8 uniforms on average
 * whatever n is. k is formed as the mode m
 * plus a small offset so that it is exact even where float cannot hold n; in float the hat's
 * centre n p is rounded (~n * 2^-24 away), which the hat's slack absorbs. The cap of 1000 tries
 * (then m is returned) is reached with probability < 1e-500. */
SF_FN sf_u32 sf_binomial_btrs(sf_rng* r, sf_u32 n, scalar p) {
    const scalar q = (scalar)1 - p;
    const scalar nf = (scalar)n;
    const scalar spq = sqrt(nf * p * q);
    const scalar b = SF_RNG_C(1.15) + SF_RNG_C(2.53) * spq;
    const scalar a = SF_RNG_C(-0.0873) + SF_RNG_C(0.0248) * b + SF_RNG_C(0.01) * p;
    const scalar alpha = (SF_RNG_C(2.83) + SF_RNG_C(5.1) / b) * spq;
    const scalar vr = SF_RNG_C(0.92) - SF_RNG_C(4.2) / b;
    const scalar mf = floor((nf + (scalar)1) * p); /* the mode; < 2^31 since p <= 1/2 */
    const sf_u32 m = (sf_u32)mf;
    const scalar cRel = nf * p - mf + SF_RNG_C(0.5); /* the hat's centre n p + 1/2, minus m */
    for (int tries = 0; tries < 1000; tries++) {
        const scalar u = sf_uniform(r) - SF_RNG_C(0.5);
        const scalar v = sf_uniform(r);
        const scalar us = SF_RNG_C(0.5) - fabs(u);
        if (!(us > (scalar)0)) {
            continue;
        }
        const scalar off = floor((SF_RNG_C(2.0) * a / us + b) * u + cRel); /* k - m */
        sf_u32 k;
        if (off < (scalar)0) {
            if ((scalar)0 - off > mf) {
                continue; /* k < 0 */
            }
            const sf_u64 below = (sf_u64)((scalar)0 - off);
            if (below > (sf_u64)m) {
                continue;
            }
            k = m - (sf_u32)below;
        } else {
            if (off > nf) {
                continue;
            }
            const sf_u64 above = (sf_u64)off;
            if ((sf_u64)m + above > (sf_u64)n) {
                continue; /* k > n */
            }
            k = m + (sf_u32)above;
        }
        if (us >= SF_RNG_C(0.07) && v <= vr) {
            return k;
        }
        const scalar lhs = log(v * alpha / (a / (us * us) + b));
        if (lhs <= sf_binomial_log_ratio(n, m, k, off, p, q)) {
            return k;
        }
    }
    return m;
}

/* Binomial(n, p), exact up to rounding. Uses the symmetry X(n, p) = n - X(n, 1 - p) so that the
 * sampler runs with min(p, 1 - p), then inversion when n min(p, 1 - p) < 10 (O(n p + 1) steps,
 * one uniform) and BTRS above (O(1): 2.3 to 2.8 uniforms on average). p <= 0 gives 0, p >= 1
 * gives n (out-of-domain values are refused by the model's parameter checks first). */
SF_FN sf_u32 sf_binomial(sf_rng* r, sf_u32 n, scalar p) {
    if (n == 0u || !(p > (scalar)0)) {
        return 0u;
    }
    if (p >= (scalar)1) {
        return n;
    }
    const int flip = p > SF_RNG_C(0.5);
    const scalar pp = flip ? (scalar)1 - p : p;
    const sf_u32 x = (scalar)n * pp < SF_RNG_C(10.0) ? sf_binomial_inversion(r, n, pp)
                                                     : sf_binomial_btrs(r, n, pp);
    return flip ? n - x : x;
}

#undef SF_RNG_C
