/*
 * cmd_validate.c — `mpirun -n P meshrt validate SPEC [--machine FILE]
 * [--dim ...] [--repeat N] [--json] [--gemm-rows]`: the cost model
 * checked against this machine.  Every rank loads the spec (a bad one
 * is one error line from rank 0 and exit 2 everywhere), then plans the
 * spec's own rules and each alternative of its `layouts:`, in file
 * order; times the product shapes those plans run and the profile's
 * collective rows again (unless --gemm-rows: runtime/
 * calibrate_products.c and calibrate_collectives.c say why) and plans
 * them again priced at those rates; and hands the plans to the
 * library's validation (mrt_validation_add, runtime/validate.c), which
 * sets each up and then runs them taking turns, timing both again
 * between its rounds and pricing the plans at those rates at the end
 * (runtime/validate_retime.c); a
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

/* Plans partitioning i (-1: the spec's own rules) of spec into k's
 * next slot (a NULL plan, with err, when it does not plan).  Collective:
 * every rank agrees on the status. */
static mrt_status plan_one(const mrt_spec *spec, int i,
                           const mrt_plan_options *popt, kept *k,
                           mrt_error *err)
{
    const char *name = i < 0 ? "spec" : mrt_spec_get_alternative(spec, i);
    mrt_spec *chosen = NULL;
    mrt_plan *plan = NULL;
    mrt_status st = MRT_OK;
    if (i >= 0)
        st = mrt_spec_select_alternative(spec, name, &chosen, err);
    const mrt_spec *s = i < 0 ? spec : chosen;
    if (st == MRT_OK)
        st = mrt_plan_create(s, popt, &plan, err);
    st = mrt_comm_agree(MPI_COMM_WORLD, st, err);
    k->spec[k->n] = chosen;
    k->plan[k->n++] = plan;
    return st;
}

/* Every partitioning of spec planned into k; err[i] says why
 * partitioning i did not. */
static void plan_all(const mrt_spec *spec, int n, const mrt_plan_options *popt,
                     kept *k, mrt_error *err)
{
    for (int i = -1; i < n - 1; i++) {
        err[i + 1] = (mrt_error){0};
        (void)plan_one(spec, i, popt, k, &err[i + 1]);
    }
}

/* The products of k's plans timed (all: those with rows too), and
 * with colls (non-NULL) the profile's collective rows too, *colls of
 * them; then every partitioning planned again on the first plan's
 * profile, which now has their rates.  *more: the shapes timed (0 and
 * no collectives: nothing planned again). */
static mrt_status time_and_replan(const mrt_spec *spec, int n,
                                  const mrt_plan_options *popt, int all,
                                  int *colls, kept *k, mrt_error *why,
                                  int *more, mrt_error *err)
{
    mrt_plan *have[MRT_CLI_VALIDATE_MAX] = {0};
    int nhave = 0;
    *more = 0;
    for (int i = 0; i < k->n; i++)
        if (k->plan[i])
            have[nhave++] = k->plan[i];
    mrt_status st = MRT_OK;
    if (colls)
        st = mrt_machine_time_collectives(MPI_COMM_WORLD, have, nhave, colls,
                                          err);
    if (st == MRT_OK)
        st = mrt_machine_time_products(MPI_COMM_WORLD, have, nhave, all, more,
                                       err);
    if (st != MRT_OK || (!*more && !(colls && *colls)) || !nhave)
        return st;
    kept again = {0};
    mrt_plan_options o = *popt;
    o.machine_of = have[0];
    plan_all(spec, n, &o, &again, why);
    for (int i = 0; i < k->n; i++) {
        mrt_plan_destroy(k->plan[i]);
        mrt_spec_destroy(k->spec[i]);
    }
    *k = again;
    return MRT_OK;
}

/* The partitionings' products timed on this machine and every one
 * planned again at their rates; the auto planner may then choose other
 * products: those timed too, up to three rounds.  Then the profile's
 * collective rows are timed again (runtime/calibrate_collectives.c says
 * why) and, after more than one round, the final plans' products once
 * more all together, so that one window of the machine's speed prices
 * every partitioning alike (a slow moment during a later round priced
 * pipeline's pp at 1.8 times what it ran in; docs/calibration.md, round
 * L), and the partitionings planned a last time.  *timed: the shapes;
 * *colls: the collective rows. */
static mrt_status time_products(const mrt_spec *spec, int n,
                                const mrt_plan_options *popt, kept *k,
                                mrt_error *why, int *timed, int *colls,
                                mrt_error *err)
{
    *timed = *colls = 0;
    int rounds = 0, more = 1;
    mrt_status st = MRT_OK;
    while (st == MRT_OK && more && rounds < 3) {
        st = time_and_replan(spec, n, popt, 0, NULL, k, why, &more, err);
        *timed += more;
        rounds += more > 0;
    }
    if (st == MRT_OK)
        st = time_and_replan(spec, n, popt, rounds > 1, colls, k, why, &more,
                             err);
    return st;
}

/* Every partitioning of spec planned, its products timed (unless
 * gemm_rows), added to v, then run. */
static mrt_status add_all(mrt_validation *v, const mrt_spec *spec,
                          const mrt_plan_options *popt, int gemm_rows, kept *k,
                          mrt_error *err)
{
    mrt_spec_info info;
    mrt_spec_get_info(spec, &info);
    int n = info.nalternatives + 1;
    if (n > MRT_CLI_VALIDATE_MAX)
        return mrt_cli_error(err, MRT_E_USAGE, info.path,
                             "validate runs at most %d partitionings, the "
                             "spec has %d",
                             MRT_CLI_VALIDATE_MAX, n);
    mrt_error why[MRT_CLI_VALIDATE_MAX];
    plan_all(spec, n, popt, k, why);
    int timed = 0, colls = 0;
    mrt_status st = gemm_rows ? MRT_OK
                              : time_products(spec, n, popt, k, why, &timed,
                                              &colls, err);
    if (st != MRT_OK)
        return st;
    mrt_validation_set_products(v, gemm_rows ? -1 : timed);
    mrt_validation_set_collectives(v, gemm_rows ? -1 : colls);
    for (int i = 0; i < n; i++) {
        const char *name = i == 0 ? "spec"
                                  : mrt_spec_get_alternative(spec, i - 1);
        const mrt_spec *s = i == 0 ? spec : k->spec[i];
        mrt_error e = {0};
        st = k->plan[i] ? mrt_validation_add(v, name, s, k->plan[i], &e)
                        : mrt_validation_add_failed(v, name, &why[i]);
        if (st == MRT_E_NOMEM)
            return mrt_cli_error(err, MRT_E_NOMEM, info.path, "out of memory");
    }
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
        st = add_all(v, spec, &a->plan, a->gemm_rows, &k, &err);
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
