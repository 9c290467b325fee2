/*
 * test_verify.c — the rule by which --verify says a result agrees with
 * the unsharded reference (runtime/verify.c), on crafted arrays: an
 * infinity in the reference must not hide a mismatch elsewhere; NaN and
 * infinities agree only with themselves (same sign), whatever the
 * tolerance; the scale is the largest finite |reference|; subnormals are
 * compared relatively; an empty array agrees.  Also the report of the
 * worst element (index, both values, error) and the counts.  With the
 * reference's magnitudes (issue 17 item 4), a result that cancelled to
 * rounding noise is compared with the size of its terms, while a wrong
 * value still fails and a non-finite magnitude is ignored.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "half.h"
#include "kernel.h"
#include "local.h"

#define N(a) ((int64_t)(sizeof(a) / sizeof(a)[0]))

static mrt_verify_result cmp64(const double *x, const double *r, int64_t n,
                               double tol)
{
    mrt_verify_result v;
    mrt_verify_compare(MRT_F64, x, r, n, tol, 0, &v);
    return v;
}

/* The bug of issue 9: max|x - r| / max|r| is 0 when r holds an inf. */
START_TEST(inf_in_reference_does_not_hide_a_mismatch)
{
    double r[] = {INFINITY, 3, 1, -2};
    double x[] = {INFINITY, 0, 1, -2};
    mrt_verify_result v = cmp64(x, r, N(r), 1e-10);
    ck_assert_int_eq(v.ok, 0);
    ck_assert_int_eq(v.differ, 1);
    ck_assert_int_eq(v.worst, 1);
    ck_assert(v.value == 0 && v.reference == 3);
    ck_assert(v.scale == 3); /* the inf takes no part */
    ck_assert_double_eq_tol(v.error, 1, 1e-15);
    ck_assert_int_eq(v.nonfinite, 1);
    /* -inf too, and NaN in the reference */
    r[0] = x[0] = -INFINITY;
    ck_assert_int_eq(cmp64(x, r, N(r), 1e-10).ok, 0);
    r[0] = x[0] = NAN;
    ck_assert_int_eq(cmp64(x, r, N(r), 1e-10).ok, 0);
    /* and with the element restored they agree */
    x[1] = 3;
    v = cmp64(x, r, N(r), 1e-10);
    ck_assert_int_eq(v.ok, 1);
    ck_assert_int_eq(v.differ, 0);
}
END_TEST

START_TEST(all_nan_and_all_inf)
{
    double nan4[] = {NAN, NAN, NAN, NAN},
           inf4[] = {INFINITY, INFINITY, INFINITY, INFINITY};
    double fin[] = {1, 2, 3, 4};
    /* alike in both: they agree, and the counts say so */
    mrt_verify_result v = cmp64(nan4, nan4, 4, 1e-10);
    ck_assert(v.ok && v.nonfinite == 4 && v.scale == 1);
    v = cmp64(inf4, inf4, 4, 1e-10);
    ck_assert(v.ok && v.nonfinite == 4);
    /* against a finite reference, or the other way round: every element
     * differs, whatever the tolerance */
    const double *pairs[][2] = {{nan4, fin}, {fin, nan4},  {inf4, fin},
                                {fin, inf4}, {nan4, inf4}, {inf4, nan4}};
    for (int k = 0; k < 6; k++) {
        v = cmp64(pairs[k][0], pairs[k][1], 4, 1e300);
        ck_assert_msg(!v.ok && v.differ == 4 && v.nonfinite == 0, "pair %d", k);
        ck_assert(isinf(v.error) && v.worst == 0);
    }
}
END_TEST

START_TEST(sign_of_infinity)
{
    double x[] = {1, INFINITY, -INFINITY}, r[] = {1, -INFINITY, -INFINITY};
    mrt_verify_result v = cmp64(x, r, 3, 1e300);
    ck_assert_int_eq(v.ok, 0);
    ck_assert_int_eq(v.differ, 1);
    ck_assert_int_eq(v.worst, 1);
    ck_assert(v.value == INFINITY && v.reference == -INFINITY);
    ck_assert(isinf(v.error));
    ck_assert_int_eq(v.nonfinite, 1); /* the -inf pair */
}
END_TEST

START_TEST(nan_against_a_number)
{
    double x[] = {1, 2, NAN, 4}, r[] = {1, 2, 3, 4};
    mrt_verify_result v = cmp64(x, r, 4, 1e300);
    ck_assert(!v.ok && v.worst == 2 && isnan(v.value) && v.reference == 3);
    v = cmp64(r, x, 4, 1e300); /* NaN in the reference only */
    ck_assert(!v.ok && v.worst == 2 && v.value == 3 && isnan(v.reference));
    /* a NaN mismatch outranks any finite error */
    double y[] = {100, 2, NAN, 4};
    v = cmp64(y, r, 4, 1e-10);
    ck_assert(!v.ok && v.differ == 2 && v.worst == 2);
}
END_TEST

/* Relative to the largest finite |reference|, at the tolerance's edge. */
START_TEST(tolerance_and_scale)
{
    double r[] = {-8, 0.5, 2}, x[] = {-8, 0.5, 2};
    x[1] = 0.5 + 0.9e-6 * 8; /* under 1e-6 of 8 */
    mrt_verify_result v = cmp64(x, r, 3, 1e-6);
    ck_assert(v.ok && v.worst == 1 && v.scale == 8);
    ck_assert_double_eq_tol(v.error, 0.9e-6, 1e-12);
    x[1] = 0.5 + 1.1e-6 * 8; /* over it */
    v = cmp64(x, r, 3, 1e-6);
    ck_assert(!v.ok && v.differ == 1 && v.worst == 1);
    /* the worst of several is the largest, the first of equals */
    double a[] = {1, 1, 1, 1}, b[] = {1.5, 0.5, 2, -0.5};
    v = cmp64(a, b, 4, 1e-3);
    ck_assert(!v.ok && v.differ == 4 && v.worst == 3 && v.scale == 2);
    b[3] = 0; /* errors 0.25, 0.25, 0.5, 0.5 */
    v = cmp64(a, b, 4, 1e-3);
    ck_assert(!v.ok && v.worst == 2 && v.value == 1 && v.reference == 2);
    /* an all-zero reference is compared absolutely (scale 1) */
    double z[] = {0, 0}, e[] = {1e-12, -1e-12}, big[] = {1e-8, 0};
    v = cmp64(e, z, 2, 1e-10);
    ck_assert(v.ok && v.scale == 1);
    ck_assert_int_eq(cmp64(big, z, 2, 1e-10).ok, 0);
    /* a given scale replaces the computed one */
    mrt_verify_compare(MRT_F64, big, z, 2, 1e-10, 1e3, &v);
    ck_assert(v.ok && v.scale == 1e3);
    /* an overflowing difference is a (finite-pair) mismatch */
    double hi[] = {DBL_MAX}, lo[] = {-DBL_MAX};
    ck_assert_int_eq(cmp64(hi, lo, 1, 1e300).ok, 0);
}
END_TEST

/* Subnormals are numbers like others: relative to the finite scale. */
START_TEST(subnormals)
{
    double d = DBL_TRUE_MIN * 1000;
    double r[] = {d, d / 2, 0}, same[] = {d, d / 2, 0},
           twice[] = {2 * d, d / 2, 0};
    mrt_verify_result v = cmp64(same, r, 3, 1e-10);
    ck_assert(v.ok && v.scale == d && v.error == 0);
    v = cmp64(twice, r, 3, 1e-10);
    ck_assert(!v.ok && v.worst == 0);
    ck_assert_double_eq_tol(v.error, 1, 1e-12);
    /* float32: FLT_TRUE_MIN multiples, converted exactly */
    float fr[] = {FLT_TRUE_MIN * 8, FLT_TRUE_MIN},
          fx[] = {FLT_TRUE_MIN * 8, FLT_TRUE_MIN * 2};
    mrt_verify_compare(MRT_F32, fx, fr, 2, 1e-4, 0, &v);
    ck_assert(!v.ok && v.worst == 1 && v.scale == (double)FLT_TRUE_MIN * 8);
    ck_assert_double_eq_tol(v.error, 0.125, 1e-12);
    mrt_verify_compare(MRT_F32, fr, fr, 2, 1e-4, 0, &v);
    ck_assert(v.ok);
}
END_TEST

START_TEST(float32_nonfinite)
{
    float r[] = {INFINITY, 3, NAN, -1}, x[] = {INFINITY, 0, NAN, -1};
    mrt_verify_result v;
    mrt_verify_compare(MRT_F32, x, r, 4, 1e-4, 0, &v);
    ck_assert(!v.ok && v.differ == 1 && v.worst == 1 && v.nonfinite == 2);
    ck_assert(v.value == 0 && v.reference == 3 && v.scale == 3);
    x[1] = 3;
    mrt_verify_compare(MRT_F32, x, r, 4, 1e-4, 0, &v);
    ck_assert(v.ok);
}
END_TEST

START_TEST(empty)
{
    double none[1] = {0};
    mrt_verify_result v = cmp64(none, none, 0, 1e-10);
    ck_assert(v.ok && v.count == 0 && v.differ == 0 && v.worst == -1);
    ck_assert(v.scale == 1);
}
END_TEST

/* A gradient that is zero in exact arithmetic: noise of 1e-17 in both,
 * differing by 100%, from terms of size 0.5. */
START_TEST(magnitudes_widen_only_where_a_sum_cancelled)
{
    double r[] = {3e-17, 2e-17, 1e-17}, x[] = {-2e-17, 2e-17, 1e-17};
    double m[] = {0.5, 0.4, 0.3};
    mrt_verify_result v = cmp64(x, r, N(r), 1e-10);
    ck_assert_int_eq(v.ok, 0); /* the noise against itself: the old rule */
    mrt_verify_compare_mag(MRT_F64, x, r, m, N(r), 1e-10, 0, &v);
    ck_assert_int_eq(v.ok, 1);
    ck_assert_int_eq(v.worst, 0);
    ck_assert(v.scale == 3e-17 && v.element_scale == 0.5);
    /* a wrong value is still wrong against the size of its terms */
    x[1] = 1e-3;
    mrt_verify_compare_mag(MRT_F64, x, r, m, N(r), 1e-10, 0, &v);
    ck_assert_int_eq(v.ok, 0);
    ck_assert_int_eq(v.worst, 1);
    ck_assert_int_eq(v.differ, 1);
    /* no magnitude above the scale: the old rule exactly */
    double big[] = {1, 2, 4}, bx[] = {1, 2, 4 + 1e-9}, bm[] = {1, 2, 4};
    mrt_verify_compare_mag(MRT_F64, bx, big, bm, N(big), 1e-10, 0, &v);
    ck_assert_int_eq(v.ok, 0);
    ck_assert(v.element_scale == 4);
    /* a non-finite magnitude is ignored */
    x[1] = 2e-17;
    m[0] = INFINITY;
    mrt_verify_compare_mag(MRT_F64, x, r, m, N(r), 1e-10, 0, &v);
    ck_assert_int_eq(v.ok, 0);
    m[0] = NAN;
    mrt_verify_compare_mag(MRT_F64, x, r, m, N(r), 1e-10, 0, &v);
    ck_assert_int_eq(v.ok, 0);
    /* float32 magnitudes */
    float fr[] = {1e-8f, 2e-8f}, fx[] = {-1e-8f, 2e-8f}, fm[] = {1, 1};
    mrt_verify_compare(MRT_F32, fx, fr, 2, 1e-4, 0, &v);
    ck_assert_int_eq(v.ok, 0);
    mrt_verify_compare_mag(MRT_F32, fx, fr, fm, 2, 1e-4, 0, &v);
    ck_assert_int_eq(v.ok, 1);
}
END_TEST

START_TEST(scale_alone)
{
    double r[] = {NAN, -INFINITY, -5, 4};
    ck_assert(mrt_verify_scale(MRT_F64, r, 4) == 5);
    ck_assert(mrt_verify_scale(MRT_F64, r, 2) == 1);
    double z[] = {0, -0.0};
    ck_assert(mrt_verify_scale(MRT_F64, z, 2) == 1);
}
END_TEST

/* ---- 16-bit tolerances ---------------------------------------------- */

/* y = x . w (M x K times K x N) as a bfloat16 run on `parts` ranks splits
 * K: each rank's partial product in float32 from bfloat16 operands,
 * rounded to bfloat16, then summed in bfloat16 one hop at a time (the
 * reduction op of comm.c: mrt_kernel_add's rounding per add).  With
 * `bug`, rank 1's partial has the wrong sign. */
enum { M = 24, K = 64, N = 16, PARTS = 4 };
static void bf16_run(const uint16_t *x, const uint16_t *w, int bug, uint16_t *y)
{
    float xs[M * K / PARTS], ws[K / PARTS * N], part[M * N];
    uint16_t p16[M * N];
    int ek = K / PARTS;
    for (int r = 0; r < PARTS; r++) {
        for (int i = 0; i < M; i++)
            for (int k = 0; k < ek; k++)
                xs[i * ek + k] = mrt_bf16_to_f32(x[i * K + r * ek + k]);
        mrt_kernel_convert(MRT_F32, ws, MRT_BF16, w + r * ek * N, ek * N);
        for (int i = 0; i < M * N; i++) {
            double acc = 0;
            for (int k = 0; k < ek; k++)
                acc += (double)xs[i / N * ek + k] * ws[k * N + i % N];
            part[i] = (float)(bug && r == 1 ? -acc : acc);
        }
        mrt_kernel_convert(MRT_BF16, r ? p16 : y, MRT_F32, part, M * N);
        if (r)
            mrt_kernel_add(MRT_BF16, M * N, p16, y);
    }
}

/* A bfloat16 result verifies against the float32 reference within the
 * 16-bit tolerance, and a wrong sign in one rank's shard does not. */
START_TEST(bf16_tolerance_passes_rounding_and_fails_a_bug)
{
    static uint16_t x[M * K], w[K * N], y[M * N];
    static float ref[M * N], mag[M * N], y32[M * N];
    srand(3);
    for (int i = 0; i < M * K; i++)
        x[i] = mrt_f32_to_bf16((float)rand() / RAND_MAX * 2 - 1);
    for (int i = 0; i < K * N; i++)
        w[i] = mrt_f32_to_bf16((float)rand() / RAND_MAX * 2 - 1);
    for (int i = 0; i < M * N; i++) { /* float32 of the same bf16 inputs */
        double acc = 0, m = 0;
        for (int k = 0; k < K; k++) {
            double t = (double)mrt_bf16_to_f32(x[i / N * K + k]) *
                       mrt_bf16_to_f32(w[k * N + i % N]);
            acc += t;
            m += fabs(t);
        }
        ref[i] = (float)acc;
        mag[i] = (float)m;
    }
    mrt_spec s = {.dtype = MRT_BF16,
                  .precision = {MRT_BF16, MRT_BF16, MRT_BF16, MRT_BF16}};
    /* one product, summed over 4 ranks: 1 op and 2 hops in series */
    double tol = mrt_verify_tolerance(&s, 0, 3);
    ck_assert(tol > 1e-4 && tol < 0.05);
    mrt_verify_result r;
    for (int bug = 0; bug < 2; bug++) {
        bf16_run(x, w, bug, y);
        mrt_kernel_convert(MRT_F32, y32, MRT_BF16, y, M * N);
        mrt_verify_compare_mag(MRT_F32, y32, ref, mag, M * N, tol, 0, &r);
        ck_assert_msg(r.ok == !bug, "bug %d: error %g, tolerance %g", bug,
                      r.error, tol);
    }
    /* float16 is 8 times finer; a float32 program keeps 1e-4 */
    s = (mrt_spec){.dtype = MRT_F16,
                   .precision = {MRT_F16, MRT_F16, MRT_F16, MRT_F16}};
    ck_assert(fabs(mrt_verify_tolerance(&s, 0, 3) - 1e-4 - (tol - 1e-4) / 8) <
              1e-12);
    /* four times the roundings, twice the room (a random walk's) */
    ck_assert(fabs(mrt_verify_tolerance(&s, 0, 12) - 1e-4 -
                   2 * (mrt_verify_tolerance(&s, 0, 3) - 1e-4)) < 1e-12);
    s = (mrt_spec){.dtype = MRT_F32};
    ck_assert(mrt_verify_tolerance(&s, 0, 100) == 1e-4);
    s = (mrt_spec){.dtype = MRT_F64,
                   .precision = {MRT_F64, MRT_F64, MRT_F64, MRT_F64}};
    ck_assert(mrt_verify_tolerance(&s, 0, 100) == 1e-10);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("verify");
    TCase *tc = tcase_create("compare");
    tcase_add_test(tc, inf_in_reference_does_not_hide_a_mismatch);
    tcase_add_test(tc, all_nan_and_all_inf);
    tcase_add_test(tc, sign_of_infinity);
    tcase_add_test(tc, nan_against_a_number);
    tcase_add_test(tc, tolerance_and_scale);
    tcase_add_test(tc, subnormals);
    tcase_add_test(tc, float32_nonfinite);
    tcase_add_test(tc, empty);
    tcase_add_test(tc, scale_alone);
    tcase_add_test(tc, magnitudes_widen_only_where_a_sum_cancelled);
    tcase_add_test(tc, bf16_tolerance_passes_rounding_and_fails_a_bug);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
