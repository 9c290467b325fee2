/*
 * validate.h — what `meshrt validate` measured of each partitioning,
 * shared by validate.c (the runs, under MPI: every rank measures, rank
 * 0 keeps the figures) and validate_report.c (the figures summed up and
 * printed, as text or JSON, with no MPI).  Times are seconds per run;
 * a step's measured time is the slowest rank's.
 */
#ifndef MRT_VALIDATE_H
#define MRT_VALIDATE_H

#include <mpi.h>
#include <stdio.h>

#include "calibrate.h"
#include "cost.h"
#include "meshrt_mpi.h"
#include "plan.h"

/* Size classes of the bytes a collective hands to MPI per rank:
 * < 64 KiB, < 1 MiB, < 16 MiB, the rest; local steps have class 0. */
#define MRT_VAL_CLASSES 4
/* Kinds of the breakdown: the einsums, the memory-bound local steps,
 * and one per collective kind of the cost model. */
enum {
    MRT_VAL_EINSUM,
    MRT_VAL_LOCAL,
    MRT_VAL_COLL0,
    MRT_VAL_KINDS = MRT_VAL_COLL0 + MRT_COLL_COUNT
};

typedef struct mrt_val_cell {
    int steps;
    double model, measured;
} mrt_val_cell;

typedef struct mrt_val_op {
    int user;      /* the spec op, from 1 (0: added by train:) */
    char what[32]; /* "einsum", a map's function, ... */
    char tensor[MRT_NAME_MAX];
    double model, measured;
} mrt_val_op;

/* The probe of the machine's speed during the runs (validate_probe.c):
 * calibrate's pools, in which it times one of the profile's GEMM rows
 * again.  A speed is the probe's rate over the row's (1: as calibrated;
 * below 1: slower); NAN when unknown. */
typedef struct mrt_val_probe {
    int ready;
    mrt_calib_pools pools;
} mrt_val_probe;

/* The probe's buffers, on every rank (ready = 0 when out of memory on
 * any: no probe, speeds NAN).  Collective. */
mrt_status mrt_val_probe_create(MPI_Comm comm, mrt_val_probe *pr,
                                mrt_error *err);
void mrt_val_probe_destroy(mrt_val_probe *pr);
/* One probe: its GEMM rate, the slowest rank's.  Collective. */
double mrt_val_probe_run(MPI_Comm comm, const mrt_val_probe *pr);
/* A probe's rate against profile p on `ranks` ranks: the speed. */
double mrt_val_speed_of(const mrt_profile *p, int64_t ranks, double rate);

/* One partitioning: the spec's own rules, or a `layouts:` alternative. */
typedef struct mrt_val_alt {
    char name[64];
    int ok;      /* planned and ran; else error says why not */
    int same_as; /* the earlier partitioning whose plan is this one's
                    (mrt_plan_same_work): run once, as that one, and
                    ranked as one with it; -1: its own plan */
    char error[600];
    double model, measured; /* end to end, per run */
    double speed;           /* the machine's, against the profile: the
                               best probe after its runs (rank 0) */
    double spread;          /* its median timed run over its fastest,
                               minus 1: how far apart its own runs are
                               (rank 0) */
    mrt_val_cell cell[MRT_VAL_KINDS][MRT_VAL_CLASSES];
    int nops;
    mrt_val_op *op;
    /* while measuring (every rank): */
    mrt_runner *runner;   /* NULL once it failed or is done */
    mrt_plan *plan;       /* borrowed until mrt_validation_run, which
                             may price its products again */
    const mrt_spec *spec; /* the plan's, borrowed as long */
    double best;          /* the fastest run so far, the slowest rank's */
    double cpu;           /* in it, the ranks' CPU time over their wall
                             time, averaged (1: a core each throughout) */
    double *mine;         /* [nsteps] this rank's step times in it */
    double probed;        /* the best probe after its runs, flop/s */
    double *walls;        /* [repeat + 1] its runs' wall times so far
                             (the slowest rank's, per run) */
    int nwalls;
} mrt_val_alt;

struct mrt_validation {
    MPI_Comm comm;
    int rank, size, repeat;
    int steps;      /* runs of the plan per execution: a training spec's
                       SGD steps, else 1 (figures are per run) */
    int cores;      /* online on rank 0's host */
    double load[2]; /* its 1-minute load average before the first
                            run and after the last (-1: unknown) */
    char spec[4096], machine[4096];
    int products;     /* shapes timed before pricing; -1: gemm rows only */
    int collectives;  /* collective rows timed again; -1: not timed */
    double probe_ref; /* with products timed: the probe's best just
                         before the runs and after every one, the
                         speeds' reference (else NAN: the profile's
                         row is) */
    /* with products (collectives) timed, the same shapes (rows) timed
     * again between the rounds of runs (validate_retime.c): */
    mrt_calib_products *timer;         /* NULL: not timed again */
    mrt_calib_collectives *coll_timer; /* NULL: not timed again */
    const mrt_profile *coll_profile;   /* the plan's whose rows it times
                                          (borrowed, as the plans are) */
    mrt_product_row *rows;             /* [nrows] the shapes */
    int nrows, product_rounds;         /* rounds timed during the runs */
    int coll_rounds, colls_retimed;    /* rows priced by those rounds */
    int nalts, cap;
    mrt_val_alt *alt;
    mrt_error first; /* the first failure, for when none ran */
};

/* validate_retime.c: with v->products > 0, the product shapes of v's
 * plans (each plan that runs) sized for timing in pools (the probe's);
 * with v->collectives > 0, the profile's collective rows ready to time;
 * MRT_E_NOMEM on every rank when out of memory on any (then none are
 * timed again).  Collective. */
mrt_status mrt_val_retime_create(mrt_validation *v,
                                 const mrt_calib_pools *pools);
/* Each shape and row timed once more.  Collective. */
void mrt_val_retime_round(mrt_validation *v);
/* Every plan that ran priced again: at the faster of its own product
 * rows and the shapes' bests, and at the rows' medians over the rounds
 * (from 3 rounds on).  Local (every rank alike). */
mrt_status mrt_val_retime_reprice(mrt_validation *v, mrt_error *err);
void mrt_val_retime_destroy(mrt_validation *v);

/* The breakdown cell of step s: its kind and size class. */
void mrt_val_classify(const mrt_step *s, int *kind, int *cls);
/* The name of a breakdown kind and of a size class. */
const char *mrt_val_kind_name(int kind);
const char *mrt_val_class_name(int cls);

#endif
