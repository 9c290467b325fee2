/*
 * plan.c — the plan as its readers hold it: freeing it, and the getters
 * of meshrt.h that read its totals.  Building one is ops/planning.h's.
 */
#include <stdlib.h>

#include "plan.h"

void mrt_plan_destroy(mrt_plan *p)
{
    if (!p)
        return;
    if (p->dim_names)
        for (int i = 0; i < p->ndims; i++)
            free(p->dim_names[i]);
    free(p->dim_names);
    free(p->tensor_name);
    free(p->block_name);
    free(p->blocks);
    free(p->tensor_value);
    free(p->input);
    free(p->value);
    free(p->step);
    free(p->op);
    free(p->output);
    free(p->alt);
    mrt_schedule_destroy(p->schedule);
    free(p);
}

mrt_plan_totals mrt_plan_get_totals(const mrt_plan *p)
{
    return p ? p->totals : (mrt_plan_totals){0};
}
