/*
 * fast_math.h — float32 exp, log and tanh, and the logistic pair that
 * gelu is made of, written so that a loop over them vectorises: no
 * branches, no calls, no tables, the same work for every input value.
 * kernels/kernel_map.c's float32 maps use them; the float64 maps keep
 * libm, as the reference a float32 run is verified against.
 *
 * Accuracy (tests/unit/test_fast_math.c sweeps them against float64
 * libm): a few ulp, relative error under 1e-6 over the whole float
 * range.  NaN gives NaN, and the infinities their limits: exp(-inf) = 0,
 * exp(+inf) = +inf, log(0) = -inf, log(x < 0) = NaN, tanh(+-inf) = +-1.
 * Results that would be subnormal are 0 (exp x for x < ln FLT_MIN, and
 * what is made of it): an operation that makes or reads a subnormal
 * takes a microcode assist on x86, 100 cycles or more, and inputs that
 * reach them (exp of a large negative, as softmax and the tails of
 * gelu and tanh are) made the kernels several times slower.  For the
 * same reason an input under 2^-30 in magnitude counts as 0 where it
 * is squared (e^x = 1 there).
 *
 * How:
 *  - exp x = 2^k e^r, k = round(x / ln2), r = x - k ln2 with ln2 split
 *    in two (Cody and Waite: k ln2_hi is exact for |k| < 512), so r is
 *    accurate for any x; |r| <= ln2/2.  e^r = 1 + r + r^2 P(r), P of
 *    degree 4.  k is rounded by adding 1.5 * 2^23 (the sum's low bits
 *    are k), and 2^k is built in the exponent field, in two halves so
 *    that k = 128 gives +inf: x is first clamped to [ln FLT_MIN, 89].
 *  - log x = e ln2 + log m, x = m 2^e with m in [sqrt(1/2), sqrt 2)
 *    taken from the bits (a subnormal x first scaled by 2^23), and
 *    log m = 2s + s^3 R(s^2), s = (m - 1) / (m + 1), R of degree 2.
 *  - tanh a (a = |u|) = (1 - e) / (1 + e), e = exp(-2a) in (0, 1], for
 *    a >= 1/2, where 1 - e does not cancel; below, a + a^3 Q(a^2), Q of
 *    degree 4.  Both are computed and one is selected; the sign is put
 *    back by copysign.
 *  - The logistic pair of v: e = exp(-2|v|), q = 1 / (1 + e), p = e q;
 *    then sigmoid(2v) = q when v >= 0, p otherwise, and
 *    sigmoid(2v) sigmoid(-2v) = p q for any v.  e <= 1 never overflows
 *    and 1 + e never cancels, so gelu's tails are accurate.
 * P, Q and R are weighted minimax fits of the relative error (a Remez
 * exchange: kernels/fast_math_fit.py prints them), rounded to float.
 * Their fitting errors (3e-9, 4e-10, 3e-9) are far below float's ulp;
 * what is left is the rounding of the float operations.
 *
 * Every choice is a select by masks (mrt_fast_select), clamps too; NaN
 * passes through each clamp, as `NaN < lo` is false.
 */
#ifndef MRT_FAST_MATH_H
#define MRT_FAST_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Inlined whatever their size: a call in a row loop stops GCC from
 * vectorising it. */
#if defined(__GNUC__)
#define MRT_FAST_INLINE static inline __attribute__((always_inline))
#else
#define MRT_FAST_INLINE static inline
#endif

MRT_FAST_INLINE uint32_t mrt_fast_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

MRT_FAST_INLINE float mrt_fast_float(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* c ? a : b, both computed, by masks: GCC keeps it a select (a `?:`
 * on floats it may turn into branches, duplicate the code behind them
 * for a constant clamp, and then not vectorise the loop). */
MRT_FAST_INLINE float mrt_fast_select(int c, float a, float b)
{
    uint32_t m = 0u - (uint32_t)(c != 0);
    return mrt_fast_float((mrt_fast_bits(a) & m) | (mrt_fast_bits(b) & ~m));
}

/* The same for doubles (the float64 maps' relu), where a plain `?:`
 * vectorises and a mask from an int does not. */
MRT_FAST_INLINE double mrt_fast_select_f64(int c, double a, double b)
{
    return c ? a : b;
}

/* 2^k for -126 <= k <= 127, from its exponent field (k as the low bits
 * of an int32 in unsigned arithmetic: no overflow to define). */
MRT_FAST_INLINE float mrt_fast_pow2(uint32_t k)
{
    return mrt_fast_float((k + 127u) << 23);
}

/* e^r for the reduced argument of x (|x| <= 89), and k (in *k, as
 * int32 bits): e^x = e^r 2^k. */
MRT_FAST_INLINE float mrt_fast_exp_reduced(float x, uint32_t *k)
{
    const float shift = 0x1.8p23f;        /* 1.5 * 2^23: x / ln2 + it rounds */
    float t = x * 0x1.715476p+0f + shift; /* x log2(e) */
    float kf = t - shift;
    *k = mrt_fast_bits(t) - mrt_fast_bits(shift);
    float r = x - kf * 0x1.62e4p-1f; /* ln2_hi: 9 trailing zero bits */
    r = r - kf * 0x1.7f7d1cp-20f;    /* ln2_lo = ln2 - ln2_hi */
    float p = 0x1.6a241ap-10f;
    p = p * r + 0x1.1239f2p-7f;
    p = p * r + 0x1.5558f2p-5f;
    p = p * r + 0x1.555492p-3f;
    p = p * r + 0x1.fffffcp-2f;
    return 1.0f + (r + r * r * p);
}

/* -87.33654, the float just above ln FLT_MIN: e^lo = FLT_MIN (1 + 4.5e-6),
 * so a result computed from it is normal */
#define MRT_FAST_EXP_LO (-0x1.5d589ep+6f)

MRT_FAST_INLINE float mrt_fast_expf(float x)
{
    int flush = x < MRT_FAST_EXP_LO; /* a subnormal result: 0 */
    x = mrt_fast_select(fabsf(x) < 0x1p-30f, 0.0f, x); /* e^x = 1 */
    x = mrt_fast_select(flush, MRT_FAST_EXP_LO, x);
    x = mrt_fast_select(x > 89.0f, 89.0f, x); /* e^89 = +inf */
    uint32_t k;
    float p = mrt_fast_exp_reduced(x, &k);
    /* 2^k in two halves (k = 128 must give +inf): k1 = floor(k / 2) */
    uint32_t k1 = (uint32_t)((int32_t)k >> 1), k2 = k - k1;
    return mrt_fast_select(flush, 0.0f,
                           p * mrt_fast_pow2(k1) * mrt_fast_pow2(k2));
}

/* e^x for x <= 0 (or NaN) that is 0 or at least 2^-30 in magnitude, as
 * tanh and the logistic pair call it: the same results as
 * mrt_fast_expf with fewer operations (no upper clamp, one scale, the
 * flush a mask on it). */
MRT_FAST_INLINE float mrt_fast_exp_neg(float x)
{
    uint32_t flush = 0u - (uint32_t)(x < MRT_FAST_EXP_LO), k;
    x = mrt_fast_select(flush, MRT_FAST_EXP_LO, x);
    float p = mrt_fast_exp_reduced(x, &k);
    return p * mrt_fast_float(((k + 127u) << 23) & ~flush);
}

MRT_FAST_INLINE float mrt_fast_logf(float x)
{
    const uint32_t sqrt_half = 0x3f3504f3u; /* the bits of sqrt(1/2) */
    int tiny = x < 0x1p-126f;               /* subnormal (or <= 0) */
    float xs = mrt_fast_select(tiny, x * 0x1p23f, x);
    uint32_t ix = mrt_fast_bits(xs) - sqrt_half;
    float e = (float)((int32_t)ix >> 23) - mrt_fast_select(tiny, 23.0f, 0.0f);
    float m = mrt_fast_float((ix & 0x7fffffu) + sqrt_half);
    float f = m - 1.0f; /* exact: m in [0.7, 1.42) */
    float s = f / (2.0f + f), z = s * s;
    float rr = 0x1.2fca32p-2f;
    rr = rr * z + 0x1.9976f2p-2f;
    rr = rr * z + 0x1.55555cp-1f;
    float lm = 2.0f * s + s * z * rr;
    float y = e * 0x1.62e4p-1f + (e * 0x1.7f7d1cp-20f + lm);
    y = mrt_fast_select(x < INFINITY, y, x); /* +inf, and NaN kept */
    y = mrt_fast_select(x == 0.0f, -INFINITY, y);
    return mrt_fast_select(x < 0.0f, NAN, y);
}

MRT_FAST_INLINE float mrt_fast_tanhf(float u)
{
    float a = fabsf(u);
    float at = mrt_fast_select(a < 0x1p-30f, 0.0f, a);
    float e = mrt_fast_exp_neg(-2.0f * at);
    float big = (1.0f - e) / (1.0f + e);
    float s = at * at;
    float q = -0x1.b3a654p-8f;
    q = q * s + 0x1.5cf24p-6f;
    q = q * s - 0x1.b98accp-5f;
    q = q * s + 0x1.110f22p-3f;
    q = q * s - 0x1.555552p-2f;
    float small = a + at * s * q;
    return copysignf(mrt_fast_select(a < 0.5f, small, big), u);
}

/* The logistic pair of v (above): *q = 1 / (1 + e), *p = e *q with
 * e = exp(-2|v|); v must be 0 or at least 2^-31 in magnitude (what
 * mrt_fast_exp_neg takes). */
MRT_FAST_INLINE void mrt_fast_logistic(float v, float *q, float *p)
{
    float e = mrt_fast_exp_neg(-2.0f * fabsf(v));
    *q = 1.0f / (1.0f + e);
    *p = e * *q;
}

#endif
