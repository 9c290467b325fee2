/*
 * cmd_plan.c — `meshrt plan SPEC [--mesh ...] [--json]`: the plan, with
 * no MPI, for a mesh of any size.  The plan is printed even when it is
 * over a budget of the spec's `expect:` (so the user sees why); the
 * budget errors then go to stderr and the exit status is 1.  A plan whose
 * peak memory per rank is over this machine's memory is printed with a
 * warning on stderr (mrt_plan_warnings); the exit status stays as it
 * was.  One over the device memory (--device-memory, or the profile's
 * device_memory:) is printed, said so on stderr, and exits 1, as a
 * budget would.
 */
#include <stdio.h>

#include "cli.h"

int mrt_cli_plan(const mrt_cli_args *a)
{
    mrt_error err = {0};
    mrt_spec *spec = NULL;
    mrt_plan *plan = NULL;
    int over = 0;
    mrt_status st = mrt_cli_load(a, &spec, &plan, &err);
    if (st == MRT_OK) {
        if (a->json)
            mrt_plan_print_json(plan, stdout);
        else
            mrt_plan_print(plan, stdout);
        if (a->plan.explain && !a->json) {
            fputc('\n', stdout);
            mrt_plan_print_explain(plan, stdout);
        }
        fflush(stdout);
        /* this machine's memory, the one warning plan gives */
        mrt_warning_options o = {.kinds = 1u << MRT_WARN_MEMORY};
        mrt_warning w;
        if (mrt_plan_warnings(spec, plan, &o, &w, 1))
            fprintf(stderr, "%s: warning: %s\n", w.file, w.message);
        over = mrt_cli_check_budgets(spec, plan, 1);
        over |= !mrt_cli_plan_fits(spec, plan, 1);
    } else {
        mrt_cli_print_error(&err);
    }
    mrt_plan_destroy(plan);
    mrt_spec_destroy(spec);
    return over ? 1 : mrt_cli_exit_code(st);
}
