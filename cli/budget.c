/*
 * budget.c — the spec's `expect:` budgets against a plan, for `meshrt
 * plan` and `meshrt run` (which refuses to start a run over budget).
 *
 * The whole program's budgets are checked against the plan's totals;
 * an op's comm_bytes_max against the bytes its own steps hand to MPI,
 * and its peak_memory_max against the plan's peak (memory is shared by
 * every live value, so no op has a peak of its own).  Every exceeded
 * budget is one error line at its `expect:` node.
 */
#include <inttypes.h>
#include <stdio.h>

#include "cli.h"
#include "plan.h"
#include "spec.h"

/* Prints e, a budget error, as one line. */
static void report(const mrt_error *e)
{
    char buf[1024];
    fprintf(stderr, "%s\n", mrt_error_format(e, buf, sizeof buf));
}

/* Checks budget b against comm and peak; returns how many it exceeds.
 * who: "the plan" or "op 2 (y = einsum)"; needs: how its peak reads. */
static int check_one(const mrt_spec *s, const mrt_budget *b, const char *who,
                     const char *needs, int64_t comm, int64_t peak,
                     int print)
{
    int over = 0;
    if (b->comm_bytes_max >= 0 && comm > b->comm_bytes_max) {
        mrt_error e = {0};
        mrt_error_set(&e, MRT_E_SPEC, s->path, b->mark, "%s hands %" PRId64
                      " bytes per rank to MPI, over the budget of %" PRId64
                      " (expect: comm_bytes_max)", who, comm,
                      b->comm_bytes_max);
        if (print)
            report(&e);
        over++;
    }
    if (b->peak_memory_max >= 0 && peak > b->peak_memory_max) {
        mrt_error e = {0};
        mrt_error_set(&e, MRT_E_SPEC, s->path, b->mark, "%s %s %" PRId64
                      " bytes per rank at its peak, over the budget of %"
                      PRId64 " (expect: peak_memory_max)", who, needs, peak,
                      b->peak_memory_max);
        if (print)
            report(&e);
        over++;
    }
    return over;
}

int mrt_cli_check_budgets(const mrt_spec *spec, const mrt_plan *plan,
                          int print)
{
    mrt_plan_totals t = mrt_plan_get_totals(plan);
    char who[MRT_NAME_MAX + 64];
    int over = check_one(spec, &spec->expect, "the plan", "needs",
                         t.comm_bytes, t.peak_memory, print);
    /* An op's budget covers every primitive op the spec op expanded
     * into (softmax: five), forward only; the budget sits on the last. */
    int64_t bytes = 0;
    for (int i = 0; i < spec->nops && i < plan->nops; i++) {
        if (spec->op[i].phase != MRT_PHASE_FORWARD)
            continue;
        if (i == 0 || spec->op[i - 1].user != spec->op[i].user)
            bytes = 0;
        bytes += plan->op[i].comm_bytes;
        const mrt_budget *b = &spec->op[i].expect;
        if (b->comm_bytes_max < 0 && b->peak_memory_max < 0)
            continue; /* no budget: no message to word */
        snprintf(who, sizeof who, "op %d (%s = %s)", spec->op[i].user,
                 spec->tensor[spec->op[i].out].name, plan->op[i].what);
        over += check_one(spec, &spec->op[i].expect, who,
                          "runs in a plan that needs", bytes,
                          t.peak_memory, print);
    }
    return over;
}
