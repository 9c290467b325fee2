/*
 * plan_steps.c — a plan's steps as plain data for callers of meshrt.h
 * (mrt_plan_step_count, mrt_plan_get_step), and the names of the
 * public enums a plan is described with (step kinds, planners).
 *
 * A plan is printed for people (plan_print.c, plan_json.c); tests and
 * programs that want to check a figure of one step (its kind, the axes a
 * collective runs over, the bytes it hands to MPI) read it here instead
 * of reaching into ops/plan.h.  The copy is by value: nothing returned
 * points into the plan.
 */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "plan.h"

/* The public kind of each of the planner's step kinds (meshrt.h). */
static const mrt_plan_step_kind public_kind[] = {
    [MRT_STEP_EINSUM] = MRT_PLAN_STEP_EINSUM,
    [MRT_STEP_SLICE] = MRT_PLAN_STEP_SLICE,
    [MRT_STEP_ALLGATHER] = MRT_PLAN_STEP_ALLGATHER,
    [MRT_STEP_ALLTOALL] = MRT_PLAN_STEP_ALLTOALL,
    [MRT_STEP_ALLREDUCE] = MRT_PLAN_STEP_ALLREDUCE,
    [MRT_STEP_REDUCE_SCATTER] = MRT_PLAN_STEP_REDUCE_SCATTER,
    [MRT_STEP_PERMUTE] = MRT_PLAN_STEP_PERMUTE,
    [MRT_STEP_MAP] = MRT_PLAN_STEP_MAP,
    [MRT_STEP_REDUCE_MAX] = MRT_PLAN_STEP_REDUCE_MAX,
    [MRT_STEP_RENAME] = MRT_PLAN_STEP_RENAME,
    [MRT_STEP_ALLTOALL_GROUP] = MRT_PLAN_STEP_ALLTOALL_GROUP,
    [MRT_STEP_GATHER] = MRT_PLAN_STEP_GATHER,
    [MRT_STEP_SCATTER_ADD] = MRT_PLAN_STEP_SCATTER_ADD,
    [MRT_STEP_SENDRECV] = MRT_PLAN_STEP_SENDRECV,
};
_Static_assert(sizeof public_kind / sizeof public_kind[0] ==
                       MRT_STEP_KIND_COUNT &&
                   (int)MRT_STEP_KIND_COUNT == (int)MRT_PLAN_STEP_KIND_COUNT,
               "one public kind per step kind");

const char *mrt_plan_step_kind_name(mrt_plan_step_kind k)
{
    for (int i = 0; i < MRT_STEP_KIND_COUNT; i++)
        if (public_kind[i] == k)
            return mrt_step_kind_id((mrt_step_kind)i);
    return NULL;
}

static const char *const planner_names[] = {
    [MRT_PLANNER_AUTO] = "auto",
    [MRT_PLANNER_MESHTF] = "meshtf",
    [MRT_PLANNER_RULES] = "rules",
};
_Static_assert(sizeof planner_names / sizeof planner_names[0] ==
                   MRT_PLANNER_COUNT,
               "one name per planner");

const char *mrt_planner_name(mrt_planner p)
{
    return p >= 0 && p < MRT_PLANNER_COUNT ? planner_names[p] : NULL;
}

int mrt_plan_step_count(const mrt_plan *plan)
{
    return plan ? plan->nsteps : 0;
}

/* "my,mz": the names of the axes in mask, in mesh order. */
static int axis_names(const mrt_mesh *m, unsigned mask, char *out, size_t size)
{
    int n = 0;
    size_t len = 0;
    out[0] = '\0';
    for (int a = 0; a < m->naxes; a++) {
        if (!(mask & (1u << a)))
            continue;
        int k = snprintf(out + len, size - len, "%s%s", n ? "," : "",
                         m->name[a]);
        if (k > 0 && (size_t)k < size - len)
            len += (size_t)k;
        n++;
    }
    return n;
}

mrt_status mrt_plan_get_step(const mrt_plan *plan, int i,
                             mrt_plan_step_info *out, mrt_error *err)
{
    if (!plan || !out)
        return mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0},
                             "mrt_plan_get_step: argument '%s': NULL",
                             plan ? "out" : "plan");
    if (i < 0 || i >= plan->nsteps)
        return mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0},
                             "mrt_plan_get_step: argument 'i': %d is not a "
                             "step (the plan has %d)",
                             i, plan->nsteps);
    const mrt_step *s = &plan->step[i];
    assert(s->op >= 0 && s->op < plan->nops); /* every step is an op's */
    const mrt_plan_op *o = &plan->op[s->op];
    memset(out, 0, sizeof *out);
    out->kind = public_kind[s->kind];
    out->collective = mrt_step_is_collective(s->kind);
    out->op = o->user;
    out->phase = (int)o->phase;
    out->naxes = axis_names(&plan->mesh, s->axes, out->axes, sizeof out->axes);
    out->group = s->group;
    out->bytes = s->bytes;
    out->wire_bytes = out->collective ? s->cost.wire_bytes : 0;
    out->flops = s->flops;
    out->time_s = s->time_s;
    out->stage = plan->pipe.stages > 1 ? s->stage : -1;
    out->from_stage = s->kind == MRT_STEP_SENDRECV ? s->from_stage : -1;
    return MRT_OK;
}
