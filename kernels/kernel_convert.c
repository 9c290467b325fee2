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

/* The passes of float32 to and from bfloat16 are worth vectorizing: GCC's
 * -O2 cost model leaves these loops scalar (measured: narrowing at 2-3x a
 * memcpy's time), -O3's vectorizes them. */
#if defined(__GNUC__) && !defined(__clang__)
#define MRT_VECTORIZE __attribute__((optimize("O3")))
#else
#define MRT_VECTORIZE
#endif

/* Branch-free bfloat16 rounding (a NaN kept quiet), for the vectorized
 * pass: base/half.h's rule, as selects. */
static inline uint16_t bf16_of(float x)
{
    uint32_t u = mrt_half_bits(x);
    uint32_t r = (u + 0x7fffu + ((u >> 16) & 1)) >> 16;
    uint32_t q = (u >> 16) | 0x40;
    return (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? q : r);
}

/* float32 to and from the 16-bit types, the common case. */
MRT_VECTORIZE static void widen_f32(mrt_dtype from, float *restrict d,
                                    const uint16_t *restrict s, int64_t n)
{
    if (from == MRT_BF16)
        for (int64_t i = 0; i < n; i++)
            d[i] = mrt_bf16_to_f32(s[i]);
    else
        for (int64_t i = 0; i < n; i++)
            d[i] = mrt_f16_to_f32(s[i]);
}

MRT_VECTORIZE static void narrow_f32(mrt_dtype to, uint16_t *restrict d,
                                     const float *restrict s, int64_t n)
{
    if (to == MRT_BF16)
        for (int64_t i = 0; i < n; i++)
            d[i] = bf16_of(s[i]);
    else
        for (int64_t i = 0; i < n; i++)
            d[i] = mrt_f32_to_f16(s[i]);
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
    /* dst may be src only when the types are equal (above) */
    for (int64_t i = 0; i < n; i++)
        put(to, dst, i, get(from, src, i));
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
