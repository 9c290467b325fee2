/*
 * pipeline_print.c — which layers each pipeline stage holds, in words,
 * for `meshrt check` (mrt_plan_stage_layers, meshrt.h): read off the
 * plan's forward ops of the pipelined block (their instance and stage),
 * so it says what the planner did, not what the rule meant to do.
 */
#include <stdio.h>
#include <string.h>

#include "plan.h"

/* Appends layers lo..hi of stage s's run to buf (at *n). */
static void put_run(char *buf, size_t size, size_t *n, int lo, int hi)
{
    if (*n >= size)
        return;
    int k = lo == hi ? snprintf(buf + *n, size - *n, " %d", lo)
                     : snprintf(buf + *n, size - *n, " %d-%d", lo, hi);
    *n += k > 0 ? (size_t)k : 0;
}

/* The layers of stage s, as runs of consecutive instances (the ops come
 * in order, microbatch by microbatch: a layer not above the last one
 * seen is a later microbatch's). */
static void stage_layers(const mrt_plan *p, int s, char *buf, size_t size,
                         size_t *n)
{
    int lo = -1, hi = -1, last = -1;
    for (int i = 0; i < p->nops; i++) {
        const mrt_plan_op *o = &p->op[i];
        if (o->phase != MRT_PHASE_FORWARD || o->block < 0 || o->stage != s ||
            o->layer <= last)
            continue;
        if (o->layer != hi + 1 || lo < 0) {
            if (lo >= 0)
                put_run(buf, size, n, lo, hi);
            lo = o->layer;
        }
        hi = last = o->layer;
    }
    if (lo >= 0)
        put_run(buf, size, n, lo, hi);
    else if (*n < size)
        *n += (size_t)snprintf(buf + *n, size - *n, " none");
}

int mrt_plan_stage_layers(const mrt_plan *plan, char *buf, size_t size)
{
    if (!plan || !buf || size == 0 || plan->pipe.stages < 2)
        return 0;
    const mrt_plan_pipeline *pp = &plan->pipe;
    int b = -1;
    for (int i = 0; i < plan->nops && b < 0; i++)
        if (plan->op[i].block >= 0 && plan->op[i].stage >= 0)
            b = plan->op[i].block;
    size_t n = (size_t)snprintf(
        buf, size, "pipeline over '%s': %d stages, %d microbatch%s (%s)",
        plan->mesh.name[pp->axis], pp->stages, pp->microbatches,
        pp->microbatches == 1 ? "" : "es",
        mrt_schedule_kind_name(pp->schedule));
    for (int s = 0; s < pp->stages && n < size; s++) {
        n += (size_t)snprintf(
            buf + n, size - n, "%s stage %d holds %s%s", s ? ";" : ":", s,
            b >= 0 ? plan->block_name[b] : "", b >= 0 ? " layers" : "");
        stage_layers(plan, s, buf, size, &n);
    }
    return 1;
}
