/*
 * overlap.c — which collectives run in the background.
 *
 * A collective need not finish before the next step: only before the
 * first step that reads its result.  When other steps come in between
 * (the all-reduce of one weight's gradient, say, while the backward
 * kernels of the layer below run, as data parallelism's gradient
 * all-reduces usually can), the executor issues it non-blocking and waits
 * for it just before that reader (runtime/exec.c), so its time can hide
 * behind theirs.  Its input must then stay untouched until the wait, so
 * its lifetime is extended to it (plan_finish.c places buffers by
 * lifetime).  A collective that packs through the shared workspace
 * (a strided reduce-scatter) stays blocking: the next step reuses the
 * workspace; so does a hierarchical all-reduce (three calls in a row,
 * runtime/hier.c).  A value no step reads that is not its tensor's
 * result (the pinned planner's second gather of a parameter whose
 * gradient does not read it, regather.c) counts as read by the next
 * step: its collective blocks, as FSDP's gather before the unit's
 * backward does, rather than holding its buffer to the end.
 */
#include <stdlib.h>

#include "planning.h"

void mrt_plan_schedule_overlap(mrt_plan *p, int blocking)
{
    int *first_reader = malloc(((size_t)p->nvalues + 1) * sizeof(int));
    for (int v = 0; first_reader && v < p->nvalues; v++)
        first_reader[v] = -1;
    for (int k = p->nsteps - 1; first_reader && k >= 0; k--) {
        first_reader[p->step[k].in] = k;
        if (p->step[k].in2 >= 0)
            first_reader[p->step[k].in2] = k;
    }
    for (int v = 0; first_reader && v < p->nvalues; v++)
        if (first_reader[v] < 0) /* outputs: read after the last step */
            first_reader[v] = p->tensor_value[p->value[v].tensor] == v
                                  ? p->nsteps
                                  : 0;
    for (int k = 0; k < p->nsteps; k++) {
        mrt_step *s = &p->step[k];
        s->wait = -1;
        /* (an all-to-all over a group builds its per-peer types for the
         * call only: it blocks) */
        if (blocking || !first_reader || !mrt_step_is_collective(s->kind) ||
            mrt_step_needs_packing(p, s) ||
            s->kind == MRT_STEP_ALLTOALL_GROUP || s->hier)
            continue;
        if (first_reader[s->out] > k + 1)
            s->wait = first_reader[s->out];
    }
    free(first_reader);
}
