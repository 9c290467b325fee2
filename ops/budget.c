/*
 * budget.c — the spec's `expect:` budgets against a plan, as data
 * (mrt_plan_check_budgets in meshrt.h).  `meshrt plan` prints what it
 * returns; `meshrt run` refuses to start a run over budget.
 *
 * The whole program's budgets are checked against the plan's totals;
 * an op's comm_bytes_max against the bytes its own steps hand to MPI,
 * and its peak_memory_max against the plan's peak (memory is shared by
 * every live value, so no op has a peak of its own).  Every exceeded
 * budget is one violation, its error at its `expect:` node.
 */
#include <inttypes.h>
#include <stdio.h>

#include "plan.h"
#include "spec.h"

/* What one check_one call walks: where violations go and how many. */
typedef struct sink {
    mrt_budget_violation *out;
    int max, n;
} sink;

static mrt_budget_violation *next(sink *k, int op, mrt_budget_kind kind,
                                  int64_t value, int64_t limit)
{
    mrt_budget_violation *v = k->n < k->max ? &k->out[k->n] : NULL;
    k->n++;
    if (v)
        *v = (mrt_budget_violation){
            .op = op, .kind = kind, .value = value, .limit = limit};
    return v;
}

/* Checks budget b against comm and peak.  who: "the plan" or "op 2
 * (y = einsum)"; needs: how its peak reads; op: 0 or the user op. */
static void check_one(sink *k, const mrt_spec *s, const mrt_budget *b, int op,
                      const char *who, const char *needs, int64_t comm,
                      int64_t peak)
{
    mrt_budget_violation *v;
    if (b->comm_bytes_max >= 0 && comm > b->comm_bytes_max &&
        (v = next(k, op, MRT_BUDGET_COMM_BYTES, comm, b->comm_bytes_max)))
        mrt_error_set(&v->error, MRT_E_SPEC, s->path, b->mark,
                      "%s hands %" PRId64
                      " bytes per rank to MPI, over the budget of %" PRId64
                      " (expect: comm_bytes_max)",
                      who, comm, b->comm_bytes_max);
    if (b->peak_memory_max >= 0 && peak > b->peak_memory_max &&
        (v = next(k, op, MRT_BUDGET_PEAK_MEMORY, peak, b->peak_memory_max)))
        mrt_error_set(&v->error, MRT_E_SPEC, s->path, b->mark,
                      "%s %s %" PRId64
                      " bytes per rank at its peak, over the budget "
                      "of %" PRId64 " (expect: peak_memory_max)",
                      who, needs, peak, b->peak_memory_max);
}

int mrt_plan_check_budgets(const mrt_spec *spec, const mrt_plan *plan,
                           mrt_budget_violation *out, int max)
{
    if (!spec || !plan)
        return -1;
    sink k = {out, out ? max : 0, 0};
    mrt_plan_totals t = mrt_plan_get_totals(plan);
    char who[MRT_NAME_MAX + 64];
    check_one(&k, spec, &spec->expect, 0, "the plan", "needs", t.comm_bytes,
              t.peak_memory);
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
        check_one(&k, spec, b, spec->op[i].user, who,
                  "runs in a plan that needs", bytes, t.peak_memory);
    }
    return k.n;
}
