/*
 * run_report.h — what one mrt_runner_execute measured and found, and the
 * report made of it.  runner_execute.c runs the plan and fills an
 * mrt_run_result; run_measure.c reduces the timings and the ledger of
 * every rank to rank 0 (collective); run_report.c writes the report from
 * the result alone, as text or as one JSON object, into a text that the
 * caller hands on in one piece.
 */
#ifndef MRT_RUN_REPORT_H
#define MRT_RUN_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "runtime.h"

/* The collectives that ran in the background, per run, on the rank where
 * other steps ran least meanwhile: the time at least one was in flight,
 * the part of it the rank spent in MPI for them (the issues, the
 * progress tests, the waits), and the rest, in which other steps ran.
 * Open MPI moves their data only inside MPI calls, so that rest bounds
 * the time hidden from above; bench_overlap measures what overlap saves
 * against a blocking run. */
typedef struct mrt_run_overlap {
    int count;
    double inflight, exposed, hidden;
} mrt_run_overlap;

/* One execution's figures; the reduced ones are valid on rank 0. */
typedef struct mrt_run_result {
    int runs;            /* runs of the plan (SGD steps with `train:`) */
    double *losses;      /* [runs + 1] the loss after each, `train:` */
    double *op_time;     /* [nops] seconds per run, slowest rank */
    int64_t mismatches;  /* steps whose bytes differ from the plan, on
                              any rank (every rank knows it) */
    int profiled;        /* the step figures and overlap were measured */
    double *step_time;   /* [nsteps] seconds per run, slowest rank */
    double *step_differ; /* [nsteps] ranks whose bytes handed to MPI
                              differ from the plan (last run) */
    mrt_run_overlap overlap;
    double pipe_span_s; /* pipelined and profiled, per run: the forward
                           and backward steps' time on the rank that
                           took longest, its waits in transfers included */
    double pipe_busy_s; /* the most one rank spent computing them (its
                           transfers left out): the measured bubble is
                           (span - busy) / busy */
    double *last;       /* --trace: [nsteps] this rank's step times
                              summed before the last run; NULL without */
    char *verify;       /* --verify's report (lines, or JSON members
                              after the run's), rank 0; NULL: none */
    size_t verify_len;
    double *scratch; /* [2 nsteps + nops] room for the reductions */
    double *work;    /* the one allocation of the arrays above */
} mrt_run_result;

/* Room for the figures of a plan of e's, runs runs (profile, trace: as
 * the options ask).  Local; MRT_E_NOMEM (err set) when out of memory. */
mrt_status mrt_run_result_init(mrt_run_result *r, const mrt_exec *e, int runs,
                               int profile, int trace, mrt_error *err);
void mrt_run_result_free(mrt_run_result *r);

/* After the runs: every rank's op times, bytes, ledger checks (and, when
 * profiled, step times and overlap) reduced into r (run_measure.c).
 * Collective over e's world. */
void mrt_run_measure(const mrt_exec *e, mrt_run_result *r);

/* The report of one execution as one text (run_report.c), from what
 * rank 0 holds: the per-op table, the losses, the profile and overlap,
 * verify's part; JSON (one object, a newline after it) when json.  A
 * new string the caller frees, its length in *len; NULL when out of
 * memory. */
char *mrt_run_report(const mrt_spec *s, const mrt_exec *e,
                     const mrt_run_result *r, int json, size_t *len);

#endif
