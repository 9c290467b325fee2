/*
 * budget.c — prints the spec's `expect:` budgets a plan exceeds, for
 * `meshrt plan` and `meshrt run` (which refuses to start a run over
 * budget).  The checking is the library's: mrt_plan_check_budgets
 * (ops/budget.c) returns them as data.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

int mrt_cli_check_budgets(const mrt_spec *spec, const mrt_plan *plan, int print)
{
    int n = mrt_plan_check_budgets(spec, plan, NULL, 0);
    if (!print || n == 0)
        return n;
    mrt_budget_violation *v = calloc((size_t)n, sizeof *v);
    if (!v) {
        fprintf(stderr, "meshrt: error: out of memory\n");
        return n;
    }
    mrt_plan_check_budgets(spec, plan, v, n);
    for (int i = 0; i < n; i++)
        mrt_cli_print_error(&v[i].error);
    free(v);
    return n;
}

int mrt_cli_plan_fits(const mrt_spec *spec, const mrt_plan *plan, int print)
{
    mrt_plan_memory m;
    if (mrt_plan_get_memory(plan, -1, &m, NULL) != MRT_OK || m.fits)
        return 1;
    mrt_spec_info info;
    mrt_spec_get_info(spec, &info);
    if (print)
        fprintf(stderr,
                "%s: error: the plan's peak memory, %" PRId64
                " bytes per rank, is over the device memory of %" PRId64
                " bytes (%" PRId64 " over): it does not fit\n",
                info.path, m.peak, m.device_memory, m.peak - m.device_memory);
    return 0;
}
