/*
 * plan_reprice.c — a plan priced again.  `meshrt validate` times the
 * products its plans run and the profile's collective rows between its
 * rounds of runs, as it times the runs (runtime/validate_products.c):
 * the rows then say the machine's speed over the same minutes as the
 * runs, not that of the moment before them.  The plans that ran are
 * priced again at those rows, not planned again: a new plan might
 * choose other steps than the ones measured.  Only the einsums' and the
 * collectives' times change (no other step reads those rows), and what
 * sums them: the ops' and the plan's totals, and a pipelined plan's
 * schedule, replayed.
 */
#include "planning.h"
#include "schedule.h"

mrt_status mrt_plan_reprice(mrt_plan *p, const mrt_spec *s, mrt_error *err)
{
    if (!p || !s)
        return mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0},
                             "mrt_plan_reprice: a NULL argument");
    for (int k = 0; k < p->nsteps; k++)
        if (p->step[k].kind == MRT_STEP_EINSUM)
            mrt_step_price_einsum(p, &p->step[k]);
        else if (mrt_step_is_collective(p->step[k].kind))
            mrt_step_price_collective(p, &p->step[k]);
    mrt_plan_tally(p);
    return mrt_schedule_plan(p, s, err);
}
