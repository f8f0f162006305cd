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
 *   key     = (lo32(seed), hi32(seed) ^ stream)
 *   counter = (element, batch, step, block)
 * seed is the model's 64-bit seed; stream is a number the code generator gives each (group,
 * purpose) pair, e.g. one per group's simulation code and one per initialised variable, so no
 * two groups or purposes share a key; element is the neuron, synapse or row index within the
 * group; batch is the batch index; step is the time step index (initialisation uses its own
 * streams, so step may be 0 there). block counts the Philox calls made for this tuple: each call
 * yields 4 words, so one tuple gives 2^34 words, far more than one step of one element needs.
 * Two (seed, stream) pairs give the same key only when the seeds' low words are equal and
 * hi32(seed) ^ stream is equal, i.e. when the seeds' high words differ by exactly the XOR of the
 * two streams. Philox is
 * exact integer arithmetic and the word-to-uniform conversion below is exact, so every backend
 * draws the same uniforms; values passed through log/cos/pow may differ in the last bits.
 *
 * Costs: sf_uniform 1 word (float) or 2 words (double); sf_normal and sf_exponential are built
 * from uniforms; sf_gamma is a rejection method (about 1.05 normals per value for a >= 1);
 * sf_binomial is exact inversion: O(n * min(p, 1 - p)) arithmetic steps plus one uniform per
 * chunk of about 20 / min(p, 1 - p) trials.
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
                       sf_u32 step) {
    r->key[0] = (sf_u32)seed;
    r->key[1] = (sf_u32)(seed >> 32) ^ stream;
    r->ctr[0] = element;
    r->ctr[1] = batch;
    r->ctr[2] = step;
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

/* Gamma(a, 1) for a >= 1: Marsaglia & Tsang, ACM TOMS 26(3), 2000. */
SF_FN scalar sf_gamma_ge1(sf_rng* r, scalar a) {
    const scalar d = a - (scalar)1 / (scalar)3;
    const scalar c = (scalar)1 / sqrt((scalar)9 * d);
    for (;;) {
        scalar x;
        scalar v;
        do {
            x = sf_normal(r);
            v = (scalar)1 + c * x;
        } while (v <= (scalar)0);
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
}

/* Gamma(a, 1) (shape a, scale 1). For a < 1 uses Gamma(a) = Gamma(a + 1) * U^(1/a). a <= 0
 * (degenerate) gives 0. */
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

/* Binomial(m, p) by sequential inversion for p <= 1/2 and q^m >= e^-40, so that P(X = 0) =
 * q^m cannot underflow, even in float. Walks the CDF from 0: O(m p + 1) steps. */
SF_FN sf_u32 sf_binomial_inversion(sf_rng* r, sf_u32 m, scalar p) {
    const scalar q = (scalar)1 - p;
    const scalar s = p / q;
    const scalar a = ((scalar)m + (scalar)1) * s;
    const scalar f0 = pow(q, (scalar)m); /* P(X = 0) */
    for (;;) {
        scalar f = f0;
        scalar u = sf_uniform(r);
        sf_u32 x = 0u;
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
         * relative, 1e-3 for m = 40000): draw again, which samples the computed pmf
         * renormalised, instead of returning the end of the walk (m, or far in the tail). */
    }
}

/* Binomial(n, p), exact up to rounding. Uses the symmetry X(n, p) = n - X(n, 1 - p) so that the
 * walk runs over min(p, 1 - p), and splits the n trials into chunks of m trials with
 * m * min(p, 1 - p) <= 20 (since -log(1 - p) <= 2p for p <= 1/2, q^m >= e^-40); a sum of
 * independent binomials with the same p is binomial. Cost O(n * min(p, 1 - p)) steps plus one
 * uniform per chunk. p <= 0 gives 0, p >= 1 gives n. */
SF_FN sf_u32 sf_binomial(sf_rng* r, sf_u32 n, scalar p) {
    if (n == 0u || !(p > (scalar)0)) {
        return 0u;
    }
    if (p >= (scalar)1) {
        return n;
    }
    const int flip = p > SF_RNG_C(0.5);
    const scalar pp = flip ? (scalar)1 - p : p;
    sf_u32 chunk = n;
    const scalar chunkLimit = SF_RNG_C(20.0) / pp;
    if (chunkLimit < (scalar)n) {
        /* chunkLimit < (scalar)n <= 2^32, so the conversion is in range; chunk >= 40 */
        chunk = (sf_u32)chunkLimit;
    }
    sf_u32 x = 0u;
    sf_u32 left = n;
    while (left > 0u) {
        const sf_u32 m = left < chunk ? left : chunk;
        x += sf_binomial_inversion(r, m, pp);
        left -= m;
    }
    return flip ? n - x : x;
}

#undef SF_RNG_C
