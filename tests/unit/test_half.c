/*
 * test_half.c — the 16-bit types' conversions (base/half.h) against
 * the definitions: every bfloat16 and float16 bit pattern widens to the
 * float32 its fields say (computed here with ldexp, not with bit
 * tricks), narrowing rounds to the nearest representable value with
 * ties to even (checked against a search of all 65536 patterns for
 * sampled float32s), NaN, infinities and float16's overflow and
 * subnormals behave as IEEE 754 says, and the kernels' vectorized
 * passes (whole arrays, and strided blocks: rows, transposed, tiles)
 * convert exactly as these do: every 16-bit pattern widened, and
 * narrowed every float32 whose top 16 bits are any pattern and whose
 * low bits sit at or beside each type's rounding boundaries.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "half.h"
#include "kernel.h"
#include "layout.h"

/* The value of a float16 pattern from its fields. */
static double f16_value(uint16_t h)
{
    int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0    ? ldexp(m, -24)
               : e == 31 ? (m ? NAN : INFINITY)
                         : ldexp(1024 + m, e - 25);
    return s ? -v : v;
}

static double bf16_value(uint16_t h)
{
    int s = h >> 15, e = (h >> 7) & 255, m = h & 127;
    double v = e == 0     ? ldexp(m, -133)
               : e == 255 ? (m ? NAN : INFINITY)
                          : ldexp(128 + m, e - 134);
    return s ? -v : v;
}

START_TEST(widening_is_exact)
{
    for (uint32_t h = 0; h < 65536; h++) {
        double f = f16_value((uint16_t)h), b = bf16_value((uint16_t)h);
        float wf = mrt_f16_to_f32((uint16_t)h),
              wb = mrt_bf16_to_f32((uint16_t)h);
        if (isnan(f))
            ck_assert(isnan(wf));
        else
            ck_assert_msg((double)wf == f, "f16 %04x", h);
        if (isnan(b))
            ck_assert(isnan(wb));
        else
            ck_assert_msg((double)wb == b, "bf16 %04x", h);
    }
}
END_TEST

/* The nearest pattern to x by search (ties: the even one), over the
 * finite non-negative patterns of a type; x >= 0 within range. */
static uint16_t nearest(double x, double (*value)(uint16_t), uint16_t top)
{
    uint16_t best = 0;
    double bd = INFINITY;
    for (uint32_t h = 0; h <= top; h++) {
        double d = fabs(value((uint16_t)h) - x);
        if (d < bd || (d == bd && !(h & 1))) {
            bd = d;
            best = (uint16_t)h;
        }
    }
    return best;
}

START_TEST(narrowing_rounds_to_nearest_even)
{
    srand(19);
    for (int k = 0; k < 400; k++) {
        /* magnitudes from float16's subnormals to its largest normal */
        double x = ldexp((double)rand() / RAND_MAX, -26 + rand() % 42);
        float xf = (float)x;
        if (xf > 65504.0f)
            continue;
        ck_assert_uint_eq(mrt_f32_to_f16(xf), nearest(xf, f16_value, 0x7bff));
        ck_assert_uint_eq(mrt_f32_to_f16(-xf),
                          0x8000 | nearest(xf, f16_value, 0x7bff));
        ck_assert_uint_eq(mrt_f32_to_bf16(xf), nearest(xf, bf16_value, 0x7f7f));
    }
    /* ties, exactly: 1 + 2^-8 is halfway between bfloat16's 1 and
     * 1 + 2^-7 (to 1, even); 1 + 3 * 2^-8 to 1 + 2^-6 */
    ck_assert_uint_eq(mrt_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);
    ck_assert_uint_eq(mrt_f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);
    ck_assert_uint_eq(mrt_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);
    ck_assert_uint_eq(mrt_f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02);
}
END_TEST

/* The kernels' passes (kernels/kernel_convert.c, branch-free and
 * vectorized) round exactly as base/half.h does, element by element. */
START_TEST(passes_agree)
{
    enum { N = 4099 };
    static float x[N], back[N];
    static uint16_t h[N];
    srand(7);
    for (int i = 0; i < N; i++) {
        uint32_t u = ((uint32_t)rand() << 16) ^ (uint32_t)rand();
        x[i] = mrt_half_float(u); /* every pattern: NaNs, infinities too */
    }
    x[0] = NAN;
    x[1] = -INFINITY;
    mrt_kernel_convert(MRT_BF16, h, MRT_F32, x, N);
    for (int i = 0; i < N; i++)
        ck_assert_msg(h[i] == mrt_f32_to_bf16(x[i]), "bf16 %d", i);
    mrt_kernel_convert(MRT_F32, back, MRT_BF16, h, N);
    for (int i = 0; i < N; i++)
        ck_assert(mrt_half_bits(back[i]) == (uint32_t)h[i] << 16);
    mrt_kernel_convert(MRT_F16, h, MRT_F32, x, N);
    for (int i = 0; i < N; i++)
        ck_assert_msg(h[i] == mrt_f32_to_f16(x[i]), "f16 %d", i);
    /* y += x in bfloat16: each sum in float32, rounded once */
    uint16_t a[3] = {0x3f80, 0x3f80, 0x4000}, b[3] = {0x3b80, 0x3f80, 0xc000};
    mrt_kernel_add(MRT_BF16, 3, a, b); /* 1 + 2^-8 ties to 1; 2; 0 */
    ck_assert(b[0] == 0x3f80 && b[1] == 0x4000 && b[2] == 0x0000);
}
END_TEST

/* The low 16 bits of float32s at and beside the rounding points: half
 * of bfloat16's dropped 16 bits (0x8000), of float16's dropped 13
 * (0x1000, with either parity of the kept bit). */
static const uint16_t lows[] = {0x0000, 0x0001, 0x0fff, 0x1000, 0x1001,
                                0x2fff, 0x3000, 0x3001, 0x7fff, 0x8000,
                                0x8001, 0xe000, 0xf000, 0xffff};
enum { NLOWS = sizeof lows / sizeof lows[0] };

START_TEST(passes_exhaustive)
{
    static uint16_t h[65536], back[65536 * NLOWS];
    static float w[65536], x[65536 * NLOWS];
    for (uint32_t i = 0; i < 65536; i++)
        h[i] = (uint16_t)i;
    mrt_kernel_convert(MRT_F32, w, MRT_BF16, h, 65536);
    int wrong = 0;
    for (uint32_t i = 0; i < 65536; i++)
        wrong += mrt_half_bits(w[i]) != mrt_half_bits(mrt_bf16_to_f32(h[i]));
    mrt_kernel_convert(MRT_F32, w, MRT_F16, h, 65536);
    for (uint32_t i = 0; i < 65536; i++) { /* a NaN may come out quieted */
        float want = mrt_f16_to_f32(h[i]);
        wrong += isnan(want) ? !isnan(w[i]) || signbit(w[i]) != signbit(want)
                             : mrt_half_bits(w[i]) != mrt_half_bits(want);
    }
    ck_assert_int_eq(wrong, 0);
    for (uint32_t i = 0; i < 65536; i++)
        for (int l = 0; l < NLOWS; l++)
            x[i * NLOWS + l] = mrt_half_float(i << 16 | lows[l]);
    int64_t n = 65536 * NLOWS, bad = -1;
    mrt_kernel_convert(MRT_BF16, back, MRT_F32, x, n);
    for (int64_t i = n - 1; i >= 0; i--)
        if (back[i] != mrt_f32_to_bf16(x[i]))
            bad = i;
    ck_assert_msg(bad < 0, "bf16 of %08x", mrt_half_bits(x[bad < 0 ? 0 : bad]));
    mrt_kernel_convert(MRT_F16, back, MRT_F32, x, n);
    for (int64_t i = n - 1; i >= 0; i--)
        if (back[i] != mrt_f32_to_f16(x[i]))
            bad = i;
    ck_assert_msg(bad < 0, "f16 of %08x", mrt_half_bits(x[bad < 0 ? 0 : bad]));
}
END_TEST

/* Blocks of rows x cols with strides: row-stored on both sides, both
 * column-stored, transposed, and a general stride; each element as
 * half.h converts it, nothing outside the block written. */
static void check_block(mrt_dtype t, int64_t rows, int64_t cols,
                        const int64_t st[4])
{
    enum { CAP = 40000 };
    static float x[CAP], y[CAP];
    static uint16_t h[CAP];
    srand((unsigned)(rows * 31 + cols));
    for (int i = 0; i < CAP; i++) {
        uint32_t u = ((uint32_t)rand() << 16) ^ (uint32_t)rand();
        x[i] = mrt_half_float(i % 7 == 0 ? u & 0x807fffffu
                                         : u); /* +-0, subnormals */
    }
    memset(h, 0xab, sizeof h);
    mrt_kernel_convert2d(t, h, st[2], st[3], MRT_F32, x, st[0], st[1], rows,
                         cols);
    int64_t written = 0;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) {
            float v = x[r * st[0] + c * st[1]];
            uint16_t want = t == MRT_BF16 ? mrt_f32_to_bf16(v)
                                          : mrt_f32_to_f16(v);
            ck_assert_msg(h[r * st[2] + c * st[3]] == want, "%lld,%lld",
                          (long long)r, (long long)c);
            written++;
        }
    int64_t untouched = 0;
    for (int i = 0; i < CAP; i++)
        untouched += h[i] == 0xabab;
    ck_assert_int_ge(untouched, CAP - written); /* a 0xabab may be written */
    /* and back: the widened values at y's strides (swapped roles) */
    mrt_kernel_convert2d(MRT_F32, y, st[0], st[1], t, h, st[2], st[3], rows,
                         cols);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) {
            uint16_t b = h[r * st[2] + c * st[3]];
            float want = t == MRT_BF16 ? mrt_bf16_to_f32(b) : mrt_f16_to_f32(b);
            ck_assert(mrt_half_bits(y[r * st[0] + c * st[1]]) ==
                      mrt_half_bits(want));
        }
}

START_TEST(blocks_strided)
{
    /* strides: source rs, cs; destination rs, cs */
    const int64_t rowst[4] = {150, 1, 133, 1}, colst[4] = {1, 140, 1, 131},
                  trans[4] = {1, 130, 131, 1}, trans2[4] = {135, 1, 1, 137},
                  general[4] = {260, 2, 3, 390};
    for (int t = MRT_BF16; t <= MRT_F16; t++) {
        check_block((mrt_dtype)t, 97, 129, rowst);
        check_block((mrt_dtype)t, 129, 97, colst);
        check_block((mrt_dtype)t, 100, 77, trans);
        check_block((mrt_dtype)t, 77, 100, trans2);
        check_block((mrt_dtype)t, 33, 65, general);
        check_block((mrt_dtype)t, 1, 1, general);
    }
}
END_TEST

START_TEST(specials)
{
    ck_assert(isnan(mrt_bf16_to_f32(mrt_f32_to_bf16(NAN))));
    ck_assert(isnan(mrt_f16_to_f32(mrt_f32_to_f16(NAN))));
    ck_assert_uint_eq(mrt_f32_to_bf16(INFINITY), 0x7f80);
    ck_assert_uint_eq(mrt_f32_to_f16(-INFINITY), 0xfc00);
    ck_assert_uint_eq(mrt_f32_to_f16(65504.0f), 0x7bff);
    ck_assert_uint_eq(mrt_f32_to_f16(65520.0f), 0x7c00); /* the tie: inf */
    ck_assert_uint_eq(mrt_f32_to_f16(1e6f), 0x7c00);
    ck_assert_uint_eq(mrt_f32_to_f16(0x1p-24f), 0x0001);
    ck_assert_uint_eq(mrt_f32_to_f16(0x1p-26f), 0x0000);
    ck_assert_uint_eq(mrt_f32_to_bf16(3.4e38f), 0x7f80); /* rounds up: inf */
    ck_assert_int_eq(mrt_dtype_size(MRT_BF16), 2);
    ck_assert_int_eq(mrt_dtype_size(MRT_F16), 2);
    ck_assert_str_eq(mrt_dtype_name(MRT_BF16), "bfloat16");
    ck_assert_str_eq(mrt_dtype_name(MRT_F16), "float16");
}
END_TEST

/* The typed loops of mrt_kernel_convert (masks, float32 <-> float64)
 * against the element-by-element rule they replace: get/put through a
 * double (mrt_kernel_get, mrt_kernel_put). */
START_TEST(typed_pairs_agree)
{
    enum { N = 37 };
    const mrt_dtype pairs[][2] = {{MRT_F32, MRT_U8},  {MRT_F64, MRT_U8},
                                  {MRT_U8, MRT_F32},  {MRT_U8, MRT_F64},
                                  {MRT_F64, MRT_F32}, {MRT_F32, MRT_F64}};
    const double vals[] = {
        0, 1, 2, 255, 0.5, -1, -0.0, 1e-40, 3.1415926535, 1e300, NAN, INFINITY};
    const int nvals = (int)(sizeof vals / sizeof vals[0]);
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        mrt_dtype to = pairs[k][0], from = pairs[k][1];
        double src[N], got[N], want[N];
        for (int i = 0; i < N; i++) {
            double v = vals[i % nvals];
            if (from == MRT_U8) /* bytes: 0..255 */
                v = (double)((i * 37) % 256);
            mrt_kernel_put(from, src, i, v);
        }
        mrt_kernel_convert(to, got, from, src, N);
        for (int i = 0; i < N; i++)
            mrt_kernel_put(to, want, i, mrt_kernel_get(from, src, i));
        for (int i = 0; i < N; i++) {
            double g = mrt_kernel_get(to, got, i),
                   w = mrt_kernel_get(to, want, i);
            ck_assert_msg((isnan(g) && isnan(w)) || g == w,
                          "%s from %s, element %d: %.17g, expected %.17g",
                          mrt_dtype_name(to), mrt_dtype_name(from), i, g, w);
        }
    }
    /* a mask is 0 or 1 whatever it is converted from */
    float f[4] = {0, 0.25f, -3, NAN};
    uint8_t m[4];
    mrt_kernel_convert(MRT_U8, m, MRT_F32, f, 4);
    ck_assert(m[0] == 0 && m[1] == 1 && m[2] == 1 && m[3] == 1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("half");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, widening_is_exact);
    tcase_add_test(tc, narrowing_rounds_to_nearest_even);
    tcase_add_test(tc, specials);
    tcase_add_test(tc, passes_agree);
    tcase_add_test(tc, passes_exhaustive);
    tcase_add_test(tc, blocks_strided);
    tcase_add_test(tc, typed_pairs_agree);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
