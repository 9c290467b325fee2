/*
 * test_half.c — the 16-bit types' conversions (base/half.h) against
 * the definitions: every bfloat16 and float16 bit pattern widens to the
 * float32 its fields say (computed here with ldexp, not with bit
 * tricks), narrowing rounds to the nearest representable value with
 * ties to even (checked against a search of all 65536 patterns for
 * sampled float32s), NaN, infinities and float16's overflow and
 * subnormals behave as IEEE 754 says, and the kernels' vectorized
 * passes round exactly as these do.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

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

int main(void)
{
    Suite *s = suite_create("half");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, widening_is_exact);
    tcase_add_test(tc, narrowing_rounds_to_nearest_even);
    tcase_add_test(tc, specials);
    tcase_add_test(tc, passes_agree);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
