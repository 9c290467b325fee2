/*
 * validate_probe.c — how fast the machine runs while `validate` times
 * the partitionings, against the profile it prices them with.
 *
 * A profile is measured once; the runs come minutes later.  On a shared
 * host the same core does not keep one speed: here (docs/calibration.md,
 * round J) 256^3 products ran at 123 to 166 GFLOP/s in calibrations five
 * seconds apart, with nothing else running in this machine, as other
 * tenants took the cores' siblings and the memory bus.  A ratio of
 * measured to modeled time then mixes two things: what the model gets
 * wrong, and how much slower or faster the machine ran than when it was
 * calibrated.  So after every timed run, every rank at once times one of
 * the profile's own rows again, with calibrate's code and budget
 * (calibrate_rates.c): 256 x 256 x 256 float32 products in form nn,
 * operands not in cache, one repetition of about 10 ms.  A
 * partitioning's speed is its best probe (as the row is the best of
 * calibrate's repetitions, and its time its fastest run) over the row,
 * with ranks sharing cores as the model shares them: 1 when the machine
 * runs as calibrated, 0.8 when 20% slower.  validate_report.c prints
 * the ratios as measured and, beside them, at that speed.
 *
 * One probe of the cores, not of memory too: a copy of 4 Mi elements
 * timed the same way moved by 0.4 to 2.9 times its row from one run to
 * the next, while the runs' memory-bound steps (shards mostly in cache)
 * did not follow it; priced by it, the ratios at the machine's speed
 * came out worse than those as measured (round J).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "validate.h"

#define PROBE_N 256                    /* the product's sides */
#define PROBE_BYTES ((size_t)64 << 20) /* per pool, as calibrate's */
#define PROBE_TARGET 0.01 /* seconds of work per repetition, as calibrate's */
#define PROBE_REPS                                                             \
    1 /* per run: the best of `repeat`, as calibrate's
                             rows are the best of 15 (more, shorter ones
                             would find quieter moments than it did) */

mrt_status mrt_val_probe_create(MPI_Comm comm, mrt_val_probe *pr,
                                mrt_error *err)
{
    memset(pr, 0, sizeof *pr);
    mrt_status st = mrt_calib_pools_create(
        comm, PROBE_BYTES, PROBE_REPS, PROBE_TARGET,
        "validate's probe of the machine's speed", &pr->pools, err);
    pr->ready = st == MRT_OK;
    return st;
}

void mrt_val_probe_destroy(mrt_val_probe *pr)
{
    mrt_calib_pools_destroy(&pr->pools);
    memset(pr, 0, sizeof *pr);
}

double mrt_val_probe_run(MPI_Comm comm, const mrt_val_probe *pr)
{
    if (!pr->ready)
        return NAN;
    return mrt_calib_gemm_rate(comm, &pr->pools, MRT_F32, PROBE_TARGET,
                               MRT_GEMM_NN, PROBE_N, PROBE_N, PROBE_N);
}

double mrt_val_speed_of(const mrt_profile *p, int64_t ranks, double rate)
{
    double n = PROBE_N, flops = 2 * n * n * n;
    /* the row the probe measures again, as calibrate measured it (the
     * price of a plan's product of that shape may take other rows too);
     * a profile without rows: the rate a step would be priced at */
    double row = mrt_cost_gemm_cube(p, MRT_F32, n);
    double model_s = row > 0 ? flops / row
                             : mrt_cost_gemm_form(p, MRT_F32, flops, n, n, n,
                                                  MRT_GEMM_NN);
    model_s *= mrt_cost_share(p, ranks);
    return rate > 0 && model_s > 0 ? rate * model_s / flops : NAN;
}
