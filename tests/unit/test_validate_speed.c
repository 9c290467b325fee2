/*
 * test_validate_speed.c — validate's probe of the machine's speed
 * (runtime/validate_probe.c) against the profile: a probe that runs as
 * fast as the profile's own rows of the same work is speed 1, one at
 * half their rate 0.5, whatever else the profile holds; ranks that share
 * cores are expected to be slower by the share the cost model assumes;
 * unknown probes are unknown speeds; and a partitioning keeps its best
 * probe.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "validate.h"

static int close_to(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b));
}

/* A profile with GEMM rows around the probe's 256^3 product and copy
 * rows around its 4 Mi elements, none of them at the probe's rates by
 * accident of the defaults; a thin row of the same short side, slower,
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
    p.map[p.nmap++] = (mrt_map_row){"copy", 16 << 10, 0.07e-9, MRT_F32};
    p.map[p.nmap++] = (mrt_map_row){"copy", 4 << 20, 0.2e-9, MRT_F32};
    p.map[p.nmap++] = (mrt_map_row){"gelu", 4 << 20, 1e-9, MRT_F32};
    mrt_profile_sort_rows(&p);
    return p;
}

START_TEST(speed_against_the_rows)
{
    mrt_profile p = rows();
    mrt_val_speed s = mrt_val_speed_of(&p, 2, (mrt_val_speed){150e9, 0.2e-9});
    ck_assert(close_to(s.gemm, 1) && close_to(s.copy, 1));
    s = mrt_val_speed_of(&p, 2, (mrt_val_speed){75e9, 0.4e-9});
    ck_assert(close_to(s.gemm, 0.5) && close_to(s.copy, 0.5));
    s = mrt_val_speed_of(&p, 2, (mrt_val_speed){180e9, 0.16e-9});
    ck_assert(close_to(s.gemm, 1.2) && close_to(s.copy, 1.25));
}
END_TEST

/* Calibrated at 2 ranks on 2 cores, run at 4: each rank has half a
 * core, so half the rates is the profile's speed. */
START_TEST(speed_of_shared_cores)
{
    mrt_profile p = rows();
    p.ranks = 2;
    p.cores = 2;
    mrt_val_speed s = mrt_val_speed_of(&p, 4, (mrt_val_speed){75e9, 0.4e-9});
    ck_assert(close_to(s.gemm, 1) && close_to(s.copy, 1));
    s = mrt_val_speed_of(&p, 2, (mrt_val_speed){75e9, 0.4e-9});
    ck_assert(close_to(s.gemm, 0.5) && close_to(s.copy, 0.5));
}
END_TEST

START_TEST(unknown_and_best)
{
    mrt_profile p = rows();
    mrt_val_speed s = mrt_val_speed_of(&p, 2, (mrt_val_speed){NAN, 0});
    ck_assert(isnan(s.gemm) && isnan(s.copy));
    mrt_val_speed best = {NAN, NAN};
    mrt_val_speed_keep(&best, (mrt_val_speed){100e9, 0.3e-9});
    mrt_val_speed_keep(&best, (mrt_val_speed){140e9, 0.4e-9});
    mrt_val_speed_keep(&best, (mrt_val_speed){NAN, 0.25e-9});
    mrt_val_speed_keep(&best, (mrt_val_speed){120e9, NAN});
    ck_assert(close_to(best.gemm, 140e9) && close_to(best.copy, 0.25e-9));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("validate_speed");
    TCase *tc = tcase_create("validate_speed");
    tcase_add_test(tc, speed_against_the_rows);
    tcase_add_test(tc, speed_of_shared_cores);
    tcase_add_test(tc, unknown_and_best);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
