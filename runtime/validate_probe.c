/*
 * validate_probe.c — how fast the machine runs while `validate` times
 * the partitionings, against the profile it prices them with.
 *
 * A profile is measured once; the runs come minutes later.  On a shared
 * host the same core does not keep one speed: here (docs/calibration.md,
 * round J) one calibration's 256^3 products ran at 123 to 166 GFLOP/s
 * five seconds apart, with nothing else running in this machine, as
 * other tenants took the cores' siblings and the memory bus.  A ratio of
 * measured to modeled time then mixes two things: what the model gets
 * wrong, and how much slower the machine ran than when it was
 * calibrated.  So after every timed run, every rank at once times two of
 * the profile's own rows again, with calibrate's code
 * (calibrate_rates.c): the copy map over shards of 4 Mi float32
 * elements, then 256 x 256 x 256 float32 products in form nn, operands
 * not in cache.  Each takes a few milliseconds.  (The copy first: timed
 * after the products, it ran 1.5 times slower, writing back the
 * products' results from the cache.)  A partitioning's speed is the
 * best probe after its runs (the profile's rows are the best
 * repetitions, its time the fastest run) over what the profile says of
 * the same work on as many ranks: 1 when the machine runs as
 * calibrated, 0.8 when it runs 20% slower.  validate_report.c prints
 * the ratios as measured and, beside them, at the machine's speed.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "validate.h"

#define PROBE_N 256                    /* the product's sides */
#define PROBE_COPY (4 << 20)           /* the copy's elements */
#define PROBE_BYTES ((size_t)64 << 20) /* per pool, as calibrate's */
#define PROBE_TARGET 0.002             /* seconds of work per repetition */
#define PROBE_REPS 3

mrt_status mrt_val_probe_create(MPI_Comm comm, mrt_val_probe *pr,
                                mrt_error *err)
{
    memset(pr, 0, sizeof *pr);
    mrt_calib_pools *pl = &pr->pools;
    pl->a = malloc(PROBE_BYTES);
    pl->b = malloc(PROBE_BYTES);
    pl->c = malloc(PROBE_BYTES);
    mrt_status st = pl->a && pl->b && pl->c
                        ? MRT_OK
                        : mrt_error_set(err, MRT_E_NOMEM, "", (mrt_mark){0},
                                        "out of memory for validate's "
                                        "probe of the machine's speed "
                                        "(192 MiB per rank)");
    st = mrt_comm_agree(comm, st, err);
    if (st != MRT_OK) {
        mrt_val_probe_destroy(pr);
        return st;
    }
    /* every page touched before timing; values that make no denormals */
    memset(pl->a, 0, PROBE_BYTES);
    memset(pl->b, 0, PROBE_BYTES);
    memset(pl->c, 0, PROBE_BYTES);
    pl->bytes = PROBE_BYTES;
    pl->reps = PROBE_REPS;
    pl->target_s = PROBE_TARGET;
    pr->ready = 1;
    return MRT_OK;
}

void mrt_val_probe_destroy(mrt_val_probe *pr)
{
    free(pr->pools.a);
    free(pr->pools.b);
    free(pr->pools.c);
    memset(pr, 0, sizeof *pr);
}

mrt_val_speed mrt_val_probe_run(MPI_Comm comm, const mrt_val_probe *pr)
{
    mrt_val_speed s = {NAN, NAN};
    if (!pr->ready)
        return s;
    s.copy = mrt_calib_copy_rate(comm, &pr->pools, PROBE_COPY);
    s.gemm = mrt_calib_gemm_rate(comm, &pr->pools, MRT_F32, PROBE_TARGET,
                                 MRT_GEMM_NN, PROBE_N, PROBE_N, PROBE_N);
    return s;
}

mrt_val_speed mrt_val_speed_of(const mrt_profile *p, int64_t ranks,
                               mrt_val_speed probe)
{
    double n = PROBE_N, flops = 2 * n * n * n;
    double share = mrt_cost_share(p, ranks);
    /* the row the probe measures again, as calibrate measured it (the
     * price of a plan's product of that shape may take other rows too);
     * a profile without rows: the rate a step would be priced at */
    double rate = mrt_cost_gemm_cube(p, MRT_F32, n);
    double gemm_s = rate > 0 ? flops / rate
                             : mrt_cost_gemm_form(p, MRT_F32, flops, n, n, n,
                                                  MRT_GEMM_NN);
    double copy_s = mrt_cost_map(p, "copy", PROBE_COPY, MRT_F32, 4);
    if (copy_s <= 0)
        copy_s = mrt_cost_local(p, PROBE_COPY, PROBE_COPY, 4);
    gemm_s *= share;
    copy_s *= share;
    mrt_val_speed s = {NAN, NAN};
    if (probe.gemm > 0 && gemm_s > 0)
        s.gemm = probe.gemm * gemm_s / flops;
    if (probe.copy > 0 && copy_s > 0)
        s.copy = copy_s / PROBE_COPY / probe.copy;
    return s;
}

void mrt_val_speed_keep(mrt_val_speed *best, mrt_val_speed probe)
{
    if (probe.gemm > 0 && !(best->gemm >= probe.gemm))
        best->gemm = probe.gemm;
    if (probe.copy > 0 && !(best->copy <= probe.copy))
        best->copy = probe.copy;
}
