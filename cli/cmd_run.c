/*
 * cmd_run.c — `mpirun -n P meshrt run SPEC ...`: every rank loads and
 * plans the spec, the ranks agree on the outcome (so a bad spec gives one
 * error line from rank 0 and exit 2 on every rank, never a hang), then
 * checks the plan against the spec's `expect:` budgets (over budget: rank
 * 0 says why, every rank exits 1 without running), then mrt_run executes
 * and prints its report on the standard output.  Through meshrt.h only
 * (the budgets too: mrt_plan_check_budgets, printed by budget.c; the
 * ranks agree with mrt_comm_agree).  With --report FILE the report is
 * kept in memory and rank 0 writes it to FILE atomically, even when the
 * run failed (a failed --verify's report is its verdict).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h" /* which includes meshrt.h, and mpi.h through it */

mrt_status mrt_cli_agree(mrt_status st, mrt_error *err)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    st = mrt_comm_agree(MPI_COMM_WORLD, st, err);
    if (st != MRT_OK && rank == 0)
        mrt_cli_print_error(err);
    return st;
}

/* The number of exceeded budgets, the same on every rank (the plans are
 * the same, but agreeing costs one allreduce and rules out a hang);
 * rank 0 prints them. */
static int over_budget(const mrt_spec *spec, const mrt_plan *plan)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int mine = mrt_cli_check_budgets(spec, plan, rank == 0);
    return mrt_comm_agree(MPI_COMM_WORLD, mine ? MRT_E_SPEC : MRT_OK, NULL) !=
           MRT_OK;
}

/* The report of rank 0, for --report FILE. */
typedef struct kept_report {
    char *text;
    size_t len;
} kept_report;

static void keep_report(const char *text, size_t len, void *ctx)
{
    kept_report *k = ctx;
    free(k->text);
    k->len = 0;
    if ((k->text = malloc(len + 1))) {
        memcpy(k->text, text, len + 1);
        k->len = len;
    }
}

static void write_report(FILE *f, const void *ctx)
{
    const kept_report *k = ctx;
    fwrite(k->text, 1, k->len, f);
}

/* Rank 0 writes the kept report to path; every rank gets the outcome
 * (rank 0 prints its error). */
static mrt_status save_report(const char *path, const kept_report *k, int rank)
{
    mrt_error err = {0};
    mrt_status st = MRT_OK;
    if (rank == 0 && k->text)
        st = mrt_file_write(path, "the report", write_report, k, &err);
    return mrt_cli_agree(st, &err);
}

int mrt_cli_run(const mrt_cli_args *a)
{
    MPI_Init(NULL, NULL);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    mrt_cli_signals_install(a->cmd, rank); /* after MPI_Init's own */
    mrt_error err = {0};
    mrt_spec *spec = NULL;
    mrt_plan *plan = NULL;
    mrt_status st = mrt_cli_load(a, &spec, &plan, &err);
    st = mrt_cli_agree(st, &err);
    int over = st == MRT_OK && over_budget(spec, plan);
    kept_report kept = {0};
    mrt_status saved = MRT_OK;
    if (st == MRT_OK && !over) {
        mrt_run_options opt = {.verify = a->verify,
                               .save_dir = a->save,
                               .repeat = a->repeat,
                               .json = a->json,
                               .profile = a->profile,
                               .trace = a->trace,
                               .report = a->report ? NULL : stdout,
                               .report_fn = a->report ? keep_report : NULL,
                               .report_ctx = &kept,
                               .comm = MPI_COMM_WORLD};
        st = mrt_run(spec, plan, &opt, &err);
        if (st != MRT_OK && rank == 0) /* mrt_run's errors agree already */
            mrt_cli_print_error(&err);
        if (a->report)
            saved = save_report(a->report, &kept, rank);
    }
    free(kept.text);
    mrt_plan_destroy(plan);
    mrt_spec_destroy(spec);
    mrt_cli_signals_done();
    MPI_Finalize();
    return over ? 1 : mrt_cli_exit_code(st ? st : saved);
}
