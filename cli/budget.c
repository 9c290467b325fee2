/*
 * budget.c — prints the spec's `expect:` budgets a plan exceeds, for
 * `meshrt plan` and `meshrt run` (which refuses to start a run over
 * budget).  The checking is the library's: mrt_plan_check_budgets
 * (ops/budget.c) returns them as data.
 */
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
