/*
 * test_validate_speed.c — validate's probe of the machine's speed
 * (runtime/validate_probe.c) against the profile: a probe that runs as
 * fast as the profile's own row of the same work is speed 1, one at
 * half its rate 0.5, whatever else the profile holds; ranks that share
 * cores are expected to be slower by the share the cost model assumes;
 * unknown probes are unknown speeds.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "validate.h"

static int close_to(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b));
}

/* A profile with GEMM rows around the probe's 256^3 product, none of
 * them at the probe's rates by accident of the defaults; a thin row of the same short side, slower,
 * which prices a 256^3 product of a plan (cost_gemm.c) but is not the
 * row the probe measures again. */
/* A float32 GEMM row: an n x n x n product in form f, or with `thin`
 * its short side of n and the other two of 1024. */
static mrt_gemm_row row(int64_t n, int f, double flops, int thin)
{
    return (mrt_gemm_row){n, f, flops, MRT_F32, thin, thin ? 1024 : 0};
}

static mrt_profile rows(void)
{
    mrt_profile p;
    mrt_profile_default(&p);
    p.gemm[p.ngemm++] = row(16, MRT_GEMM_NN, 2e9, MRT_GEMM_CUBE);
    p.gemm[p.ngemm++] = row(256, MRT_GEMM_NN, 150e9, MRT_GEMM_CUBE);
    p.gemm[p.ngemm++] = row(1024, MRT_GEMM_NN, 210e9, MRT_GEMM_CUBE);
    p.gemm[p.ngemm++] = row(256, MRT_GEMM_NT, 90e9, MRT_GEMM_CUBE);
    p.gemm[p.ngemm++] = row(256, MRT_GEMM_NN, 100e9, MRT_GEMM_THIN_M);
    mrt_profile_sort_rows(&p);
    return p;
}

START_TEST(speed_against_the_rows)
{
    mrt_profile p = rows();
    ck_assert(close_to(mrt_val_speed_of(&p, 2, 150e9), 1));
    ck_assert(close_to(mrt_val_speed_of(&p, 2, 75e9), 0.5));
    ck_assert(close_to(mrt_val_speed_of(&p, 2, 180e9), 1.2));
}
END_TEST

/* Calibrated at 2 ranks on 2 cores, run at 4: each rank has half a
 * core, so half the rates is the profile's speed. */
START_TEST(speed_of_shared_cores)
{
    mrt_profile p = rows();
    p.ranks = 2;
    p.cores = 2;
    ck_assert(close_to(mrt_val_speed_of(&p, 4, 75e9), 1));
    ck_assert(close_to(mrt_val_speed_of(&p, 2, 75e9), 0.5));
}
END_TEST

/* Without the probe, no speed; without GEMM rows, the rate a plan's
 * product of the probe's shape is priced at (the peak). */
START_TEST(unknown_and_without_rows)
{
    mrt_profile p = rows();
    ck_assert(isnan(mrt_val_speed_of(&p, 2, NAN)));
    ck_assert(isnan(mrt_val_speed_of(&p, 2, 0)));
    mrt_profile_default(&p);
    p.ngemm = 0;
    p.gemm_flops[MRT_F32] = 100e9;
    ck_assert(close_to(mrt_val_speed_of(&p, 2, 50e9), 0.5));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("validate_speed");
    TCase *tc = tcase_create("validate_speed");
    tcase_add_test(tc, speed_against_the_rows);
    tcase_add_test(tc, speed_of_shared_cores);
    tcase_add_test(tc, unknown_and_without_rows);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
