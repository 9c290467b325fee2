/*
 * half.h — the 16-bit floating types as bits: bfloat16 (float32's top
 * half: 1 sign, 8 exponent, 7 stored mantissa bits) and IEEE float16 (1,
 * 5, 10), converted to and from float32.
 *
 * meshrt stores and sends these types in 2 bytes and computes in
 * float32: a kernel widens its 16-bit operands (exact: every bfloat16
 * and float16 is a float32) and narrows its result by rounding to
 * nearest, ties to even (one rounding, at most half an ulp: 2^-8
 * relative for bfloat16, 2^-11 for float16).  A NaN stays a NaN (quiet);
 * a float32 beyond float16's range becomes an infinity, one below its
 * normals a subnormal or zero, as IEEE 754 rounds them.
 */
#ifndef MRT_HALF_H
#define MRT_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint32_t mrt_half_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static inline float mrt_half_float(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

static inline float mrt_bf16_to_f32(uint16_t h)
{
    return mrt_half_float((uint32_t)h << 16);
}

static inline uint16_t mrt_f32_to_bf16(float x)
{
    uint32_t u = mrt_half_bits(x);
    if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN: keep it a quiet NaN */
        return (uint16_t)((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1); /* to nearest, ties to even */
    return (uint16_t)(u >> 16);
}

static inline float mrt_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    if (exp == 0x1f) /* infinity, NaN */
        return mrt_half_float(sign | 0x7f800000u | (man << 13));
    if (exp == 0) { /* zero, subnormal: man * 2^-24, exact in float32 */
        float v = (float)man * 0x1p-24f;
        return sign ? -v : v;
    }
    return mrt_half_float(sign | ((exp + 112) << 23) | (man << 13));
}

static inline uint16_t mrt_f32_to_f16(float x)
{
    uint32_t u = mrt_half_bits(x);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) /* NaN */
        return (uint16_t)(sign | 0x7e00 | ((a >> 13) & 0x3ff));
    if (a >= 0x477ff000u) /* rounds past 65504: infinity */
        return (uint16_t)(sign | 0x7c00);
    if (a < 0x38800000u) { /* below 2^-14: a subnormal, in units 2^-24 */
        float f = mrt_half_float(a) * 0x1p24f; /* exact: a power of 2 */
        /* float32 rounds f + 2^23 to an integer, to nearest even */
        float r = (f + 0x1p23f) - 0x1p23f;
        return (uint16_t)(sign | (uint16_t)r);
    }
    uint32_t t = a - (112u << 23); /* rebias the exponent */
    t += 0xfffu + ((t >> 13) & 1); /* to nearest, ties to even */
    return (uint16_t)(sign | (t >> 13));
}

#endif
