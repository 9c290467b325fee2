/*
 * cmd_validate.c — `mpirun -n P meshrt validate SPEC [--machine FILE]
 * [--dim ...] [--repeat N] [--json]`: the cost model checked against
 * this machine.  Every rank loads the spec (a bad one is one error line
 * from rank 0 and exit 2 everywhere), then for the spec's own rules and
 * each alternative of its `layouts:`, in file order, plans it and hands
 * the plan to the library's validation (mrt_validation_add, runtime/
 * validate.c), which sets each up and then runs them taking turns; a
 * partitioning that does not plan or run here (its mesh is not P
 * ranks, say) is listed with why.
 * Rank 0 prints the comparison (validate_report.c).  Exit status 0 when
 * some partitioning ran, else that of the first failure.
 */
#include <stdio.h>

#include "cli.h"

#define MRT_CLI_VALIDATE_MAX 64 /* partitionings at most */

/* The specs and plans of the partitionings, kept until they ran. */
typedef struct kept {
    int n;
    mrt_spec *spec[MRT_CLI_VALIDATE_MAX];
    mrt_plan *plan[MRT_CLI_VALIDATE_MAX];
} kept;

/* Plans partitioning i (-1: the spec's own rules) of spec and adds it
 * to v (the validation lists a failure with its reason). */
static mrt_status add_one(mrt_validation *v, const mrt_spec *spec, int i,
                          const mrt_plan_options *popt, kept *k)
{
    mrt_error err = {0};
    const char *name = i < 0 ? "spec" : mrt_spec_get_alternative(spec, i);
    mrt_spec *chosen = NULL;
    mrt_plan *plan = NULL;
    mrt_status st = MRT_OK;
    if (i >= 0)
        st = mrt_spec_select_alternative(spec, name, &chosen, &err);
    const mrt_spec *s = i < 0 ? spec : chosen;
    if (st == MRT_OK)
        st = mrt_plan_create(s, popt, &plan, &err);
    st = mrt_comm_agree(MPI_COMM_WORLD, st, &err);
    if (st == MRT_OK)
        st = mrt_validation_add(v, name, s, plan, &err);
    else if (mrt_validation_add_failed(v, name, &err) != MRT_OK)
        st = MRT_E_NOMEM;
    k->spec[k->n] = chosen;
    k->plan[k->n++] = plan;
    return st;
}

/* Every partitioning of spec added to v, then run. */
static mrt_status add_all(mrt_validation *v, const mrt_spec *spec,
                          const mrt_plan_options *popt, kept *k, mrt_error *err)
{
    mrt_spec_info info;
    mrt_spec_get_info(spec, &info);
    int n = info.nalternatives + 1;
    if (n > MRT_CLI_VALIDATE_MAX)
        return mrt_cli_error(err, MRT_E_USAGE, info.path,
                             "validate runs at most %d partitionings, the "
                             "spec has %d",
                             MRT_CLI_VALIDATE_MAX, n);
    for (int i = -1; i < info.nalternatives; i++)
        if (add_one(v, spec, i, popt, k) == MRT_E_NOMEM)
            return mrt_cli_error(err, MRT_E_NOMEM, info.path, "out of memory");
    return mrt_validation_run(v, err);
}

int mrt_cli_validate(const mrt_cli_args *a)
{
    MPI_Init(NULL, NULL);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    mrt_cli_signals_install(a->cmd, rank); /* after MPI_Init's own */
    mrt_error err = {0};
    mrt_spec *spec = NULL;
    mrt_validation *v = NULL;
    kept k = {0};
    mrt_status st = mrt_cli_agree(mrt_cli_load_spec(a, NULL, &spec, &err),
                                  &err);
    if (st == MRT_OK)
        st = mrt_cli_agree(mrt_validation_create(MPI_COMM_WORLD,
                                                 a->repeat ? a->repeat : 3, &v,
                                                 &err),
                           &err);
    if (st == MRT_OK) {
        st = add_all(v, spec, &a->plan, &k, &err);
        mrt_validation_print(v, a->json, stdout);
        fflush(stdout);
        if (st != MRT_OK && rank == 0) /* none ran: the first reason */
            mrt_cli_print_error(&err);
    }
    mrt_validation_destroy(v);
    for (int i = 0; i < k.n; i++) {
        mrt_plan_destroy(k.plan[i]);
        mrt_spec_destroy(k.spec[i]);
    }
    mrt_spec_destroy(spec);
    mrt_cli_signals_done();
    MPI_Finalize();
    return mrt_cli_exit_code(st);
}
