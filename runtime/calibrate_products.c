/*
 * calibrate_products.c — the products a set of plans runs, each shape
 * timed once on this machine (mrt_machine_time_products, meshrt_mpi.h).
 *
 * Why whole shapes: BLIS's rate is no smooth function of a product's
 * sides.  Below its small-matrix thresholds (float32 on zen3: m < 512,
 * n < 200 or k < 240) it runs unpacked, at a rate that moves with the
 * operands' strides; measured here, 256 x 1024 x 1024 ran at 35
 * GFLOP/s, 512 x 1024 x 1024 at 89, 300 x 300 x 300 at 86 and
 * 32 x 2048 x 512 at 30 against 32 x 512 x 2048 at 48 (docs/
 * calibration.md, round L); and it decides on the sides as handed, so
 * a C stored by columns is timed so (a products row's `c: columns`).
 * The profile's gemm rows, cubes and thin products of one other side,
 * priced the examples' products at 0.4 to 1.6 times what they took.  So, as FlexFlow's simulator times each
 * operator once on the device, each shape a plan prices is timed as
 * calibrate times its gemm rows (calibrate_rates.c: operands cycling
 * through pools larger than the caches, every rank at once, the shapes
 * taking turns over 8 rounds and each keeping its best: timed back to
 * back, the repetitions of one shape fell wholly inside a slow moment
 * of a shared host, which priced one partitioning's products 1.8 times
 * what they took; docs/calibration.md, round L) and priced at its own
 * rate.
 */
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "plan.h"
#include "runtime.h"

#define PRODUCT_POOL ((size_t)64 << 20) /* bytes per operand pool */
#define PRODUCT_TARGET 0.01             /* seconds of work per repetition */
#define PRODUCT_REPS 8 /* rounds, the shapes taking turns in each */

mrt_status mrt_machine_time_products(MPI_Comm comm, mrt_plan *const *plans,
                                     int n, int again, int *timed,
                                     mrt_error *err)
{
    mrt_status st = mrt_calib_check_plans(comm, plans, n, timed,
                                          "mrt_machine_time_products", err);
    if (st != MRT_OK)
        return st;
    mrt_product_row *rows = calloc(MRT_PROFILE_PRODUCT_ROWS, sizeof *rows);
    int count = 0;
    for (int i = 0; rows && i < n; i++)
        count = mrt_plan_products(plans[i], again, rows, count,
                                  MRT_PROFILE_PRODUCT_ROWS);
    st = mrt_comm_agree(
        comm,
        rows ? MRT_OK
             : mrt_error_set(err, MRT_E_NOMEM, "", (mrt_mark){0},
                             "out of memory for timing the plans' products"),
        err);
    mrt_calib_pools pl = {0};
    if (st == MRT_OK && count) /* (count is the same on every rank) */
        st = mrt_calib_pools_create(comm, PRODUCT_POOL, PRODUCT_REPS,
                                    PRODUCT_TARGET,
                                    "timing the plans' products", &pl, err);
    int done = 0;
    if (st == MRT_OK && count)
        mrt_calib_product_rates(comm, &pl, count, rows);
    for (int i = 0; st == MRT_OK && i < count; i++) {
        if (!(rows[i].flops > 0))
            continue; /* too large for the pools: the gemm rows price it */
        done++;
        for (int j = 0; j < n; j++)
            (void)mrt_profile_set_product(&plans[j]->profile, rows[i]);
    }
    mrt_calib_pools_destroy(&pl);
    free(rows);
    if (timed)
        *timed = done;
    return st;
}
