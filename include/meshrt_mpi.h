/*
 * meshrt_mpi.h — the MPI-facing half of meshrt's public API: running a
 * plan on the ranks of a communicator (mrt_init, mrt_runner_*, mrt_run),
 * measuring the machine (mrt_calibration_*) and agreeing on a status
 * across ranks (mrt_comm_agree).  It includes <mpi.h> and meshrt.h,
 * which holds everything else (loading, building, planning, inspecting,
 * searching, files) and needs no <mpi.h>: a planning-only program
 * includes meshrt.h alone and builds with a plain C compiler and
 * `pkg-config --cflags --libs meshrt`; a program that runs includes this
 * header and builds with `pkg-config --cflags --libs meshrt-mpi` (or
 * mpicc with meshrt's flags).  docs/api.md is the guide.
 */
#ifndef MESHRT_MPI_H
#define MESHRT_MPI_H

#include <stdio.h>

#include <mpi.h>

#include "meshrt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- calibration -------------------------------------------------- */

/* A measurement of the machine for the cost model (`meshrt calibrate`,
 * docs/calibration.md): links per mesh axis, GEMM, reduction and copy
 * rates, and each collective timed next to the model's prediction. */
typedef struct mrt_calibration mrt_calibration;
/* Measures on the ranks of comm laid out as mesh (NULL: one axis
 * "world" of all of them; else its nranks must be comm's size, or
 * MRT_E_MESH).  quick: smaller sizes, a few seconds.  Collective: every
 * rank returns the same status and error, and on success its own *out,
 * which the caller owns (mrt_calibration_destroy); a NULL out, or a mesh
 * or quick that differs, on any rank is MRT_E_USAGE on every rank, and
 * MPI_COMM_NULL is MRT_E_USAGE at once. */
MRT_API mrt_status mrt_calibration_create(MPI_Comm comm,
                                          const mrt_mesh_info *mesh, int quick,
                                          mrt_calibration **out,
                                          mrt_error *err);
MRT_API void mrt_calibration_destroy(mrt_calibration *c);
/* The figures as a table, with the model's predictions next to them;
 * nothing for a NULL c or f. */
MRT_API void mrt_calibration_print(const mrt_calibration *c, FILE *f);
/* Writes the measured profile to path (as mrt_file_write does: "-" is
 * the standard output), with what was measured in its `measured:`
 * block.  Local: call it on one rank. */
MRT_API mrt_status mrt_calibration_save(const mrt_calibration *c,
                                        const char *path, mrt_error *err);

/* Times, on every rank of comm at once (as the runs share the cores),
 * each product shape that the plans run and their machine profile has
 * no `products:` row of (again: every one, those rows set anew):
 * float32 or float64 products as BLIS runs them in the form the plan
 * prices, operands not in cache, repetitions of about 10 ms, the shapes
 * taking turns over 8 rounds, each its best, the slowest rank's.  Adds
 * the rows to every plan's profile; the plans' prices stay as they
 * were: plan again with mrt_plan_options.machine_of = plans[0] to price
 * on them (`meshrt validate` does, docs/calibration.md).  A shape whose operands do not
 * fit in 64 MiB is left to the profile's gemm rows.  *timed (may be
 * NULL): the shapes timed.  Collective; every plan's profile must be
 * the same on every rank. */
MRT_API mrt_status mrt_machine_time_products(MPI_Comm comm,
                                             mrt_plan *const *plans, int n,
                                             int again, int *timed,
                                             mrt_error *err);
/* Times, on every rank of comm at once, each collective row of the
 * plans' machine profile again (its kind, group size and bytes per rank,
 * over a group of that size on the plans' mesh: an axis, or all of
 * them), the rows taking turns over 9 rounds, each the median of the
 * slowest rank's times, as calibrate measures them; and sets them in
 * every plan's profile.  The prices stay as they were until planned
 * again (machine_of, as above).  Rows are of collectives inside a node:
 * when comm spans several hosts, when the plans' mesh is not comm's
 * ranks, or when no group of a row's size exists, the row is left as it
 * is.  *timed (may be NULL): the rows timed.  Collective; every plan's
 * mesh and profile the same on every rank. */
MRT_API mrt_status mrt_machine_time_collectives(MPI_Comm comm,
                                                mrt_plan *const *plans, int n,
                                                int *timed, mrt_error *err);

/* ---- validating the cost model ------------------------------------ */

/* The cost model checked against this machine (`meshrt validate`,
 * docs/calibration.md): each partitioning of a spec run and timed, per
 * step, per op and end to end, next to what its plan modeled; then how
 * well the model orders them.  Create (local), add each partitioning
 * (collective), run them (collective: they take turns, the fastest run
 * of each counts), print on rank 0, destroy. */
typedef struct mrt_validation mrt_validation;
/* repeat: timed runs per partitioning (after one run to warm up; < 1:
 * 1).  MPI_COMM_NULL or a NULL out: MRT_E_USAGE. */
MRT_API mrt_status mrt_validation_create(MPI_Comm comm, int repeat,
                                         mrt_validation **out, mrt_error *err);
MRT_API void mrt_validation_destroy(mrt_validation *v);
/* Sets plan (of spec, as mrt_runner_create takes them) up to run under
 * name; both are borrowed until mrt_validation_run returns, which may
 * price plan's products again (mrt_validation_set_products).  Collective
 * over the validation's comm: every rank returns the same status (a
 * failure is listed with its reason). */
MRT_API mrt_status mrt_validation_add(mrt_validation *v, const char *name,
                                      const mrt_spec *spec, mrt_plan *plan,
                                      mrt_error *err);
/* Keeps name as a partitioning that did not plan, why saying why.
 * Local. */
MRT_API mrt_status mrt_validation_add_failed(mrt_validation *v,
                                             const char *name,
                                             const mrt_error *why);
/* Records how many product shapes were timed on this machine before
 * the plans were priced (mrt_machine_time_products; -1: none, every
 * product priced by the profile's gemm rows).  When some were, the run
 * times every product shape of the plans again after each round of
 * runs and prices each plan again (mrt_plan_reprice) at the
 * faster of each shape's rates: the rates then come from the minutes
 * the runs took.  Local. */
MRT_API void mrt_validation_set_products(mrt_validation *v, int timed);
/* Records, for the report, how many of the profile's collective rows
 * were timed again before the plans were priced
 * (mrt_machine_time_collectives; -1: none were).  Local. */
MRT_API void mrt_validation_set_collectives(mrt_validation *v, int timed);
/* Runs every partitioning added: one run each to warm up, then `repeat`
 * rounds of one run each.  Collective.  MRT_OK when some partitioning
 * ran; else the first failure (of any add too), in err. */
MRT_API mrt_status mrt_validation_run(mrt_validation *v, mrt_error *err);
/* The comparison as text, or one JSON object (json), on rank 0. */
MRT_API void mrt_validation_print(const mrt_validation *v, int json, FILE *f);

/* Every rank of comm gets the status and error of the lowest rank whose
 * st is not MRT_OK (MRT_OK when none): call it, collectively, before
 * a collective that some rank might otherwise not reach.  err may be
 * NULL (the status alone).  MPI_COMM_NULL: MRT_E_USAGE. */
MRT_API mrt_status mrt_comm_agree(MPI_Comm comm, mrt_status st, mrt_error *err);

/* ---- running ------------------------------------------------------ */

/* Prepares the process for running: picks BLIS's kernel family for this
 * CPU (it may start a short-lived child process and set BLIS_ARCH_TYPE,
 * which is safe only before MPI and threads start).  Call it once, at the
 * top of main(), BEFORE MPI_Init; later calls do nothing.  Returns
 * MRT_E_USAGE when MPI is initialised already.  mrt_runner_create and
 * mrt_run refuse to run before it. */
MRT_API mrt_status mrt_init(mrt_error *err);

/* Receives rank 0's report, once per execution, as one text of len bytes
 * (NUL-terminated); ctx is the options' report_ctx. */
typedef void (*mrt_report_fn)(const char *text, size_t len, void *ctx);

typedef struct mrt_run_options {
    int verify;              /* recompute unsharded on rank 0 and compare
                             (inputs from the spec only: not after
                             mrt_runner_set_input or a training run) */
    const char *save_dir;    /* NULL, or write each output as DIR/NAME.npy */
    int repeat;              /* 0 or 1: run once; N: time N runs */
    int json;                /* report as JSON instead of text */
    FILE *report;            /* where rank 0 writes its report; NULL and no
                             report_fn: no report (quiet) */
    int profile;             /* also report each op and step: modeled against
                             measured time, planned against measured
                             bytes, GFLOP/s of the einsums */
    const char *trace;       /* NULL, or write a Chrome trace-event JSON file
                             of the last run here (one track per rank;
                             "-": the standard output) */
    mrt_report_fn report_fn; /* NULL, or receives the report (rank 0) */
    void *report_ctx;
    MPI_Comm comm; /* mrt_run only: the ranks to run on; 0 (a
                             zeroed struct) or MPI_COMM_NULL: world */
} mrt_run_options;

/* A plan made ready to run on the ranks of a communicator: its
 * sub-communicators, its shard buffers, its inputs.  Create it, set
 * inputs (or keep the spec's `init:`), execute as often as wanted, read
 * outputs, destroy. */
typedef struct mrt_runner mrt_runner;

/* Whole tensor, or this rank's shard of it (row-major, the shape given by
 * mrt_runner_tensor_info). */
typedef enum mrt_placement {
    MRT_WHOLE = 0,
    MRT_SHARD,
    MRT_PLACEMENT_COUNT
} mrt_placement;

/* Collective over comm: comm's size must equal the plan's mesh size
 * (else MRT_E_MESH, on every rank); rank r of comm is mesh rank r.  The
 * runner borrows spec, plan and comm (keep them until destroy) and fills
 * every input from the spec's `init:`.  The caller owns *out.
 *
 * Running needs the spec as well as the plan: the plan says how to
 * compute, the spec what the data is, and the runner reads it for the
 * inputs' `init:`, `train:` (steps, rate, loss), verify's unsharded
 * reference, and names in reports and errors.  spec must be the one plan
 * was made from (with a `layouts:` alternative, the spec made under it):
 * a plan of another program (its fingerprint of the program differs) is
 * MRT_E_USAGE on every rank.  The ranks agree on their arguments first:
 * a NULL spec, plan or out on any rank is MRT_E_USAGE on every rank;
 * MPI_COMM_NULL is MRT_E_USAGE at once. */
MRT_API mrt_status mrt_runner_create(const mrt_spec *spec, const mrt_plan *plan,
                                     MPI_Comm comm, mrt_runner **out,
                                     mrt_error *err);
MRT_API void mrt_runner_destroy(mrt_runner *r);

/* What a tensor (an input or output of the spec) looks like. */
typedef struct mrt_tensor_info {
    int dtype_size; /* bytes per element: 4 (float32) or 8 (float64) */
    int ndims;
    int64_t shape[MRT_API_MAX_DIMS];        /* the whole tensor */
    int64_t shard_shape[MRT_API_MAX_DIMS];  /* this rank's shard */
    int64_t shard_offset[MRT_API_MAX_DIMS]; /* where it starts */
    int64_t count, shard_count;             /* elements */
} mrt_tensor_info;
/* Local: no communication. */
MRT_API mrt_status mrt_runner_tensor_info(const mrt_runner *r, const char *name,
                                          mrt_tensor_info *out, mrt_error *err);

/* Copies an input's values in, replacing its `init:`: with MRT_WHOLE,
 * data is the whole tensor on every rank (each copies its shard out);
 * with MRT_SHARD, this rank's shard.  The caller keeps data.  Local: no
 * communication (call it alike on every rank). */
MRT_API mrt_status mrt_runner_set_input(mrt_runner *r, const char *name,
                                        const void *data, mrt_placement how,
                                        mrt_error *err);

/* Runs the plan (opt->repeat times, or the spec's `train:` steps; each
 * training run updates the parameters in place), then reports, verifies
 * and saves as opt asks; opt may be NULL (one quiet run).  opt->comm is
 * ignored.  Collective: every rank returns the same status; options that
 * differ between ranks (all but report, report_fn and report_ctx) are
 * MRT_E_USAGE on every rank.  A NULL r is MRT_E_USAGE at once. */
MRT_API mrt_status mrt_runner_execute(mrt_runner *r, const mrt_run_options *opt,
                                      mrt_error *err);

/* Back to where mrt_runner_create left r: every input refilled from the
 * spec's `init:` (undoing mrt_runner_set_input and the updates of
 * training runs: parameters, optimizer state, step count), so that the
 * next execute trains from step 1 and may verify again.  Collective.  A
 * NULL r is MRT_E_USAGE at once. */
MRT_API mrt_status mrt_runner_restart(mrt_runner *r, mrt_error *err);

/* Copies a tensor's values out (an output, or an input such as a trained
 * parameter): with MRT_SHARD, this rank's shard into data (local); with
 * MRT_WHOLE, the whole tensor gathered into data on rank 0 of comm (data
 * is ignored, and may be NULL, elsewhere; collective).  A tensor an op
 * computes is MRT_E_USAGE until an execute has run every step. */
MRT_API mrt_status mrt_runner_get_output(mrt_runner *r, const char *name,
                                         void *data, mrt_placement how,
                                         mrt_error *err);

/* One call: create a runner on opt->comm, execute with opt, destroy.
 * Collective: every rank calls it and every rank returns the same
 * status. */
MRT_API mrt_status mrt_run(const mrt_spec *spec, const mrt_plan *plan,
                           const mrt_run_options *opt, mrt_error *err);

#ifdef __cplusplus
}
#endif
#endif
