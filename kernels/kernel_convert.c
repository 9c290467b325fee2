/*
 * kernel_convert.c — converting values between the floating types, and
 * the sums of 16-bit values.
 *
 * The kernels compute in float32 or float64 only (BLIS has no 16-bit
 * gemm in Debian's build): a step whose operands are 16-bit gets them
 * widened into its workspace (exact), computes, and has its result
 * narrowed back, rounded to nearest even (base/half.h; the runtime's
 * widen.c does this around every kernel).  The loops are plain and
 * contiguous, so the compiler vectorises them: a conversion is a pass
 * over memory, small against a GEMM of the same operands.
 */
#include "kernel.h"

#include <assert.h>
#include <string.h>

#include "half.h"

/* The passes between float32 and the 16-bit types run around every
 * 16-bit einsum (kernel_einsum16.c) and every other 16-bit step, so they
 * must run at memory speed.  Each is a loop over blocks of CHUNK
 * elements, branch-free: GCC 12 at -O2 vectorizes only loops whose
 * vector code replaces the scalar code whole (the "very cheap" cost
 * model), and a block of a constant count is such a loop; the rest of
 * a pass (under CHUNK elements) runs the same expression scalar.  The
 * rounding is base/half.h's, written as selects (tests/unit/test_half.c
 * checks the two agree on every 16-bit pattern and on sampled float32
 * ones). */
enum { CHUNK = 64 };

/* c ? x : y for a condition c of 0 or 1, as masks: a ternary here can
 * come out of GCC's early passes as a branch, which stops the
 * vectorizer. */
static inline uint32_t pick(uint32_t c, uint32_t x, uint32_t y)
{
    uint32_t m = 0u - c;
    return (x & m) | (y & ~m);
}

/* bfloat16 rounding, to nearest even; a NaN kept a quiet NaN. */
static inline uint16_t bf16_of(float x)
{
    uint32_t u = mrt_half_bits(x);
    uint32_t r = (u + 0x7fffu + ((u >> 16) & 1)) >> 16;
    uint32_t q = (u >> 16) | 0x40;
    return (uint16_t)pick((u & 0x7fffffffu) > 0x7f800000u, q, r);
}

/* float16 to float32: a normal or infinite/NaN pattern moves its fields
 * (the exponent rebiased by 112, or set to all ones); a subnormal or
 * zero is its mantissa times 2^-24, exact in float32. */
static inline float f16_to(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, em = h & 0x7fffu;
    uint32_t normal = (em << 13) + (112u << 23);
    uint32_t special = (em << 13) | 0x7f800000u;
    uint32_t sub = mrt_half_bits((float)(int32_t)em * 0x1p-24f);
    uint32_t v = pick(em >= 0x7c00u, special, pick(em < 0x400u, sub, normal));
    return mrt_half_float(sign | v);
}

/* float32 to float16, to nearest even: NaN stays NaN (quiet, the top of
 * its payload kept), from 65520 up rounds to infinity, and below 2^-14
 * (float16's subnormals) adding 0.5 makes float32's own rounding put
 * the value in units of 2^-24 into the mantissa, the carry into the
 * smallest normal included. */
static inline uint16_t f16_of(float x)
{
    uint32_t u = mrt_half_bits(x), a = u & 0x7fffffffu;
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t t = a - (112u << 23);
    uint32_t normal = (t + 0xfffu + ((t >> 13) & 1)) >> 13;
    uint32_t sub = mrt_half_bits(mrt_half_float(a) + 0.5f) - 0x3f000000u;
    uint32_t nan = 0x7e00u | ((a >> 13) & 0x3ffu);
    uint32_t v = pick(
        a > 0x7f800000u, nan,
        pick(a >= 0x477ff000u, 0x7c00u, pick(a < 0x38800000u, sub, normal)));
    return (uint16_t)(sign | v);
}

/* On x86-64 each pass is also built for AVX2, picked at load time where
 * the processor has it (an ifunc): 8 lanes and packing instructions that
 * SSE2 lacks halve the narrowing's time where the data is in cache. */
#if defined(__x86_64__) && defined(__ELF__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define MRT_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef MRT_CLONES
#define MRT_CLONES
#endif

#define MRT_PASS(name, dtype, stype, expr)                                     \
    MRT_CLONES static void name(dtype *restrict d, const stype *restrict s,    \
                                int64_t n)                                     \
    {                                                                          \
        int64_t i = 0;                                                         \
        for (; i + CHUNK <= n; i += CHUNK) {                                   \
            dtype *restrict dc = d + i;                                        \
            const stype *restrict sc = s + i;                                  \
            for (int j = 0; j < CHUNK; j++)                                    \
                dc[j] = expr(sc[j]);                                           \
        }                                                                      \
        for (; i < n; i++)                                                     \
            d[i] = expr(s[i]);                                                 \
    }

MRT_PASS(widen_bf16, float, uint16_t, mrt_bf16_to_f32)
MRT_PASS(widen_f16, float, uint16_t, f16_to)
MRT_PASS(narrow_bf16, uint16_t, float, bf16_of)
MRT_PASS(narrow_f16, uint16_t, float, f16_of)

/* float16 on x86-64 processors with F16C: its conversions are IEEE
 * 754's, eight elements an instruction: to nearest even with rounding
 * control 0, subnormals and infinities exact, a NaN narrowed quiet with
 * the top of its payload kept, as base/half.h has them; widened, a
 * signalling NaN comes out quieted (half.h keeps its bits).
 * tests/unit/test_half.c checks every pattern. */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

static int has_f16c(void)
{
    static int has = -1;
    if (has < 0) {
        __builtin_cpu_init();
        has = __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
    }
    return has;
}

__attribute__((target("avx,f16c"))) static int64_t
widen_f16c(float *d, const uint16_t *s, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(d + i, _mm256_cvtph_ps(_mm_loadu_si128(
                                    (const __m128i *)(const void *)(s + i))));
    return i;
}

__attribute__((target("avx,f16c"))) static int64_t
narrow_f16c(uint16_t *d, const float *s, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(void *)(d + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(s + i), 0));
    return i;
}
#else
static int has_f16c(void)
{
    return 0;
}
static int64_t widen_f16c(float *d, const uint16_t *s, int64_t n)
{
    return 0;
}
static int64_t narrow_f16c(uint16_t *d, const float *s, int64_t n)
{
    return 0;
}
#endif

/* float32 to and from the 16-bit types, the common case. */
static void widen_f32(mrt_dtype from, float *d, const uint16_t *s, int64_t n)
{
    if (from == MRT_BF16) {
        widen_bf16(d, s, n);
    } else {
        int64_t i = has_f16c() ? widen_f16c(d, s, n) : 0;
        widen_f16(d + i, s + i, n - i);
    }
}

static void narrow_f32(mrt_dtype to, uint16_t *d, const float *s, int64_t n)
{
    if (to == MRT_BF16) {
        narrow_bf16(d, s, n);
    } else {
        int64_t i = has_f16c() ? narrow_f16c(d, s, n) : 0;
        narrow_f16(d + i, s + i, n - i);
    }
}

/* Element i of a floating array of type t, as a double (exact). */
static double get(mrt_dtype t, const void *a, int64_t i)
{
    switch (t) {
    case MRT_F64: return ((const double *)a)[i];
    case MRT_BF16: return mrt_bf16_to_f32(((const uint16_t *)a)[i]);
    case MRT_F16: return mrt_f16_to_f32(((const uint16_t *)a)[i]);
    case MRT_I32: return ((const int32_t *)a)[i];
    case MRT_U8: return ((const uint8_t *)a)[i];
    default: return ((const float *)a)[i];
    }
}

/* x rounded to type t into element i (float64 to a 16-bit type goes
 * through float32: two roundings, as a float64 program's cast does). */
static void put(mrt_dtype t, void *a, int64_t i, double x)
{
    switch (t) {
    case MRT_F64: ((double *)a)[i] = x; return;
    case MRT_BF16: ((uint16_t *)a)[i] = mrt_f32_to_bf16((float)x); return;
    case MRT_F16: ((uint16_t *)a)[i] = mrt_f32_to_f16((float)x); return;
    case MRT_I32: ((int32_t *)a)[i] = (int32_t)x; return;
    case MRT_U8: ((uint8_t *)a)[i] = x != 0; return; /* (a 0/1 mask) */
    default: ((float *)a)[i] = (float)x; return;
    }
}

/* The pairs a run converts in bulk, one typed loop each (which
 * vectorizes) instead of a switch per element through a double: a 1-byte
 * dropout mask into the compute type around every dropout (the generic
 * loop took 1.5 ns per element, more than the dropout itself), a
 * float32 step of a float64 plan.  1 when the pair is one of them. */
#define CONVERT_LOOP(D, S, EXPR)                                               \
    do {                                                                       \
        D *d_ = dst;                                                           \
        const S *s_ = src;                                                     \
        for (int64_t i = 0; i < n; i++)                                        \
            d_[i] = EXPR(s_[i]);                                               \
    } while (0)
#define AS_FLOAT(x) ((float)(x))
#define AS_DOUBLE(x) ((double)(x))
#define AS_MASK(x) ((uint8_t)((x) != 0))
static int convert_typed(mrt_dtype to, void *dst, mrt_dtype from,
                         const void *src, int64_t n)
{
    if (to == MRT_F32 && from == MRT_U8)
        CONVERT_LOOP(float, uint8_t, AS_FLOAT);
    else if (to == MRT_F64 && from == MRT_U8)
        CONVERT_LOOP(double, uint8_t, AS_DOUBLE);
    else if (to == MRT_U8 && from == MRT_F32)
        CONVERT_LOOP(uint8_t, float, AS_MASK);
    else if (to == MRT_U8 && from == MRT_F64)
        CONVERT_LOOP(uint8_t, double, AS_MASK);
    else if (to == MRT_F64 && from == MRT_F32)
        CONVERT_LOOP(double, float, AS_DOUBLE);
    else if (to == MRT_F32 && from == MRT_F64)
        CONVERT_LOOP(float, double, AS_FLOAT);
    else
        return 0;
    return 1;
}

void mrt_kernel_convert(mrt_dtype to, void *dst, mrt_dtype from,
                        const void *src, int64_t n)
{
    if (to == from) {
        memmove(dst, src, (size_t)n * (size_t)mrt_dtype_size(to));
        return;
    }
    if (to == MRT_F32 && mrt_dtype_is_16(from)) {
        widen_f32(from, dst, src, n);
        return;
    }
    if (from == MRT_F32 && mrt_dtype_is_16(to)) {
        narrow_f32(to, dst, src, n);
        return;
    }
    if (convert_typed(to, dst, from, src, n))
        return;
    /* dst may be src only when the types are equal (above) */
    for (int64_t i = 0; i < n; i++)
        put(to, dst, i, get(from, src, i));
}

/* A block of general strides, in tiles of TILE x TILE so that the cache
 * lines of both sides are used whole (a transposing copy); the
 * conversion expression per pair of types, not a switch per element. */
enum { TILE = 32 };

#define MRT_TILES(name, dtype, stype, expr)                                    \
    static void name(dtype *d, int64_t drs, int64_t dcs, const stype *s,       \
                     int64_t srs, int64_t scs, int64_t rows, int64_t cols)     \
    {                                                                          \
        for (int64_t r0 = 0; r0 < rows; r0 += TILE)                            \
            for (int64_t c0 = 0; c0 < cols; c0 += TILE) {                      \
                int64_t r1 = r0 + TILE < rows ? r0 + TILE : rows;              \
                int64_t c1 = c0 + TILE < cols ? c0 + TILE : cols;              \
                for (int64_t r = r0; r < r1; r++)                              \
                    for (int64_t c = c0; c < c1; c++)                          \
                        d[r * drs + c * dcs] = expr(s[r * srs + c * scs]);     \
            }                                                                  \
    }

MRT_TILES(tiles_widen_bf16, float, uint16_t, mrt_bf16_to_f32)
MRT_TILES(tiles_widen_f16, float, uint16_t, f16_to)
MRT_TILES(tiles_narrow_bf16, uint16_t, float, bf16_of)
MRT_TILES(tiles_narrow_f16, uint16_t, float, f16_of)

static void convert_tiles(mrt_dtype to, void *dst, int64_t drs, int64_t dcs,
                          mrt_dtype from, const void *src, int64_t srs,
                          int64_t scs, int64_t rows, int64_t cols)
{
    if (to == MRT_F32 && from == MRT_BF16)
        tiles_widen_bf16(dst, drs, dcs, src, srs, scs, rows, cols);
    else if (to == MRT_F32 && from == MRT_F16)
        tiles_widen_f16(dst, drs, dcs, src, srs, scs, rows, cols);
    else if (to == MRT_BF16 && from == MRT_F32)
        tiles_narrow_bf16(dst, drs, dcs, src, srs, scs, rows, cols);
    else if (to == MRT_F16 && from == MRT_F32)
        tiles_narrow_f16(dst, drs, dcs, src, srs, scs, rows, cols);
    else
        for (int64_t r = 0; r < rows; r++)
            for (int64_t c = 0; c < cols; c++)
                put(to, dst, r * drs + c * dcs,
                    get(from, src, r * srs + c * scs));
}

/* A strided rows x cols block: the vectorized passes along rows or
 * columns where both sides have unit stride, tiles otherwise. */
void mrt_kernel_convert2d(mrt_dtype to, void *dst, int64_t drs, int64_t dcs,
                          mrt_dtype from, const void *src, int64_t srs,
                          int64_t scs, int64_t rows, int64_t cols)
{
    int64_t dn = mrt_dtype_size(to), sn = mrt_dtype_size(from);
    if ((dcs != 1 || scs != 1) && drs == 1 && srs == 1) { /* transposed */
        mrt_kernel_convert2d(to, dst, dcs, drs, from, src, scs, srs, cols,
                             rows);
        return;
    }
    if (dcs == 1 && scs == 1) {
        for (int64_t r = 0; r < rows; r++)
            mrt_kernel_convert(to, (char *)dst + r * drs * dn, from,
                               (const char *)src + r * srs * sn, cols);
        return;
    }
    convert_tiles(to, dst, drs, dcs, from, src, srs, scs, rows, cols);
}

double mrt_kernel_get(mrt_dtype t, const void *a, int64_t i)
{
    return get(t, a, i);
}

void mrt_kernel_put(mrt_dtype t, void *a, int64_t i, double x)
{
    put(t, a, i, x);
}

void mrt_kernel_add16(mrt_dtype t, int64_t n, const void *x, void *y)
{
    assert(mrt_dtype_is_16(t));
    const uint16_t *a = x;
    uint16_t *b = y;
    if (t == MRT_BF16)
        for (int64_t i = 0; i < n; i++)
            b[i] = mrt_f32_to_bf16(mrt_bf16_to_f32(a[i]) +
                                   mrt_bf16_to_f32(b[i]));
    else
        for (int64_t i = 0; i < n; i++)
            b[i] = mrt_f32_to_f16(mrt_f16_to_f32(a[i]) + mrt_f16_to_f32(b[i]));
}
