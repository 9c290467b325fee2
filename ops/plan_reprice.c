/*
 * plan_reprice.c — a plan's products priced again.  `meshrt validate`
 * times the products its plans run between its rounds of runs, as it
 * times the runs, each shape keeping its best (runtime/validate.c): the
 * rows then say the machine's speed over the same minutes as the runs,
 * not that of the moment before them.  The plans that ran are priced
 * again at those rows, not planned again: a new plan might choose other
 * steps than the ones measured.  Only the einsums' times change (no
 * other step reads a `products:` row), and what sums them: the ops' and
 * the plan's totals, and a pipelined plan's schedule, replayed.
 */
#include "planning.h"
#include "schedule.h"

mrt_status mrt_plan_reprice_products(mrt_plan *p, const mrt_spec *s,
                                     mrt_error *err)
{
    if (!p || !s)
        return mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0},
                             "mrt_plan_reprice_products: a NULL argument");
    for (int k = 0; k < p->nsteps; k++)
        if (p->step[k].kind == MRT_STEP_EINSUM)
            mrt_step_price_einsum(p, &p->step[k]);
    mrt_plan_tally(p);
    return mrt_schedule_plan(p, s, err);
}
