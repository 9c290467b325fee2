/*
 * pipeline_order.c — the order the planner walks the ops of a pipelined
 * program in, which is the order of the plan's steps and so the order
 * every rank runs its stage's steps in.  Any order in which each op
 * comes after the ops that make its inputs is a valid plan; the
 * schedule picks one.  A rank runs only its stage's steps, and a
 * transfer (SENDRECV) sits where its value is first read, so blocking
 * sends and receives meet in the same global order on every rank.
 *
 * GPipe's order: the forward ops of every microbatch, microbatch by
 * microbatch, then the rest (the sum of the microbatches' losses, the
 * backward ops, the updates) in op order.  (microbatch.c makes every
 * forward op of the program once per microbatch, so no forward op
 * outside a microbatch comes before one inside.)  (The other schedules are the `sched` work: they replace this
 * body and keep its signature.)
 */
#include <stdlib.h>

#include "planning.h"

int *mrt_pipeline_op_order(const mrt_spec *s, const mrt_plan_pipeline *pp,
                           const int *op_stage, const int *op_chunk,
                           mrt_error *err)
{
    (void)pp;
    (void)op_stage;
    (void)op_chunk;
    int *order = malloc(((size_t)s->nops + 1) * sizeof *order);
    if (!order) {
        mrt_planning_nomem(s, err);
        return NULL;
    }
    int n = 0, m = s->train.microbatches > 1 ? s->train.microbatches : 1;
    for (int j = 0; j < m; j++)
        for (int i = 0; i < s->nops; i++)
            if (s->op[i].phase == MRT_PHASE_FORWARD && s->op[i].micro == j)
                order[n++] = i;
    for (int i = 0; i < s->nops; i++)
        if (s->op[i].phase != MRT_PHASE_FORWARD || s->op[i].micro < 0 ||
            s->op[i].micro >= m)
            order[n++] = i;
    return order;
}
