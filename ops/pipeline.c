/*
 * pipeline.c — pipeline stages from a layout.  A global rule on a
 * repeated block's dim (`layers: pipe`) makes that mesh axis the pipe
 * axis: the block's instances are dealt to its coordinates by the block
 * rule (layout.h: 12 layers over 5 stages are 3, 3, 2, 2, 2), and with
 * train.virtual_stages v to p·v chunks, chunk c on stage c mod p (the
 * interleaved schedule's round robin).  Every op gets a stage:
 *
 *   an op of the block           its instance's stage
 *   a forward op outside it      the first stage when the spec wrote it
 *                                before the block, else the last
 *   a backward op                its forward op's (spec_op.fwd)
 *   a parameter's update, and    the parameter's stage: the stage of its
 *   the sums of its gradient     first reader (GPT-2's tied wte lives on
 *                                the first stage, is sent to the last
 *                                for the head, and the head's piece of
 *                                its gradient comes back)
 *
 * Inputs that are not parameters (tokens, labels, masks: functions of the
 * seed and the index) are made by every stage that reads them, with no
 * transfer: one read on one stage only (a microbatch's rows, a layer's mask)
 * belongs to that stage, whose ranks alone hold it; one read on several is
 * held by every stage (-1).  A value read on a stage other than its own is
 * sent there once (one SENDRECV step before its first reader on that stage,
 * in its own layout, pending sums included, from each rank of its stage to
 * the rank of the reader's stage with the same coordinates on every other
 * axis).  No other collective crosses stages: the pipe axis splits no dim
 * (the planner weighs no execution layout over it), so every group is inside
 * one stage.  Stages are computed at plan time from the spec's rules, so each
 * alternative of `compare` has its own.
 */
#include <stdlib.h>
#include <string.h>

#include "planning.h"

/* The block whose repeat dim a global rule splits (its axis in *axis),
 * or -1; an error when the rule is not one axis of size > 1, or when
 * two blocks are split. */
static int pipe_block(const mrt_spec *s, int *axis, mrt_error *err,
                      mrt_status *st)
{
    int found = -1;
    for (int b = 0; b < s->nblocks && !*st; b++) {
        const mrt_rule *r = &s->rule[s->block[b].dim];
        if (r->naxes == 0)
            continue;
        if (r->naxes > 1 || found >= 0)
            *st = mrt_error_set(
                err, MRT_E_SPEC, s->path, r->mark,
                r->naxes > 1 ? "a pipeline splits the repeat dim '%s' over "
                               "one mesh axis"
                             : "the repeat dim '%s' of a second block is "
                               "split: one block makes the pipeline",
                s->dim_name[s->block[b].dim]);
        found = b;
        *axis = r->axes[0];
    }
    return *st ? -1 : found;
}

/* No tensor may split a dim over the pipe axis. */
static mrt_status check_axis(const mrt_spec *s, int axis, mrt_error *err)
{
    for (int t = 0; t < s->ntensors; t++) {
        const mrt_layout *l = &s->tensor[t].layout;
        for (int i = 0; i < l->ndims; i++)
            for (int j = 0; j < l->naxes[i]; j++)
                if (l->axes[i][j] == axis)
                    return mrt_error_set(
                        err, MRT_E_SPEC, s->path, s->tensor[t].split_mark[i],
                        "mesh axis '%s' is the pipeline's: tensor '%s' "
                        "may not split its dim '%s' over it",
                        s->mesh.name[axis], s->tensor[t].name,
                        s->dim_name[l->dim[i]]);
    }
    return MRT_OK;
}

/* The chunk (0 .. n - 1) holding index `layer` of count by the block
 * rule. */
static int chunk_of(int64_t count, int64_t n, int64_t layer)
{
    for (int64_t c = 0; c < n; c++)
        if (layer < mrt_layout_block_start(count, n, c) +
                        mrt_layout_block_extent(count, n, c))
            return (int)c;
    return (int)n - 1;
}

/* The user numbers of the block's ops: before it is below lo. */
static void block_users(const mrt_spec *s, int b, int *lo, int *hi)
{
    *lo = 1 << 30, *hi = -1;
    for (int i = 0; i < s->nops; i++)
        if (s->op[i].block == b && s->op[i].phase == MRT_PHASE_FORWARD) {
            *lo = s->op[i].user < *lo ? s->op[i].user : *lo;
            *hi = s->op[i].user > *hi ? s->op[i].user : *hi;
        }
}

/* The chunk of every forward op, and of the parameters (their first
 * reader's: param_chunk[t], -1 for other tensors). */
static void forward_chunks(const mrt_spec *s, int b, int n, int *chunk,
                           int *param_chunk)
{
    int lo, hi;
    block_users(s, b, &lo, &hi);
    for (int i = 0; i < s->nops; i++) {
        const mrt_spec_op *o = &s->op[i];
        if (o->phase != MRT_PHASE_FORWARD)
            continue;
        chunk[i] = o->block == b  ? chunk_of(s->block[b].count, n, o->layer)
                   : o->user < lo ? 0
                                  : n - 1;
        for (int k = 0; k < o->nin; k++)
            if (param_chunk[o->in[k]] == -2)
                param_chunk[o->in[k]] = chunk[i];
    }
}

/* The parameter whose update or gradient sum op i is, or -1. */
static int param_of(const mrt_spec *s, int i, const int *param_chunk)
{
    const mrt_spec_op *o = &s->op[i];
    int like = s->tensor[o->out].grad_like - 1;
    if (like < 0 || param_chunk[like] < 0)
        return -1;
    if (o->phase == MRT_PHASE_UPDATE)
        return like;
    if (o->phase == MRT_PHASE_BACKWARD && o->kind == MRT_OP_MAP &&
        o->fn == MRT_MAP_ADD)
        return like;
    return -1;
}

/* Every op's chunk: forward, then backward (its forward op's), updates
 * and gradient sums (their parameter's). */
static void op_chunks(const mrt_spec *s, int b, int n, int *chunk,
                      int *param_chunk)
{
    for (int t = 0; t < s->ntensors; t++)
        param_chunk[t] = -1;
    for (int k = 0; k < s->train.nparams; k++)
        param_chunk[s->train.param[k]] = -2; /* not read yet */
    forward_chunks(s, b, n, chunk, param_chunk);
    for (int t = 0; t < s->ntensors; t++)
        if (param_chunk[t] == -2)
            param_chunk[t] = 0;
    for (int i = 0; i < s->nops; i++) {
        const mrt_spec_op *o = &s->op[i];
        int w = param_of(s, i, param_chunk);
        if (w >= 0)
            chunk[i] = param_chunk[w];
        else if (o->phase != MRT_PHASE_FORWARD)
            chunk[i] = o->fwd > 0 ? chunk[o->fwd - 1] : n - 1;
    }
}

/* The stage of an input that is not a parameter (tokens, labels, masks,
 * a microbatch's rows): its readers' when they are all on one stage,
 * which alone makes and holds it; -1 (every stage makes its own) when
 * they are on several.  in_stage[t] is -1 for other tensors. */
static void input_stages(const mrt_spec *s, const int *op_stage, int *in_stage)
{
    /* while reading: UNREAD, SEVERAL, or ONE - k for stage k alone */
    enum { UNREAD = -3, SEVERAL = -2, ONE = -4 };
    for (int t = 0; t < s->ntensors; t++)
        if (s->tensor[t].producer < 0 && in_stage[t] < 0)
            in_stage[t] = UNREAD;
    for (int i = 0; i < s->nops; i++)
        for (int k = 0; k < s->op[i].nin; k++) {
            int *at = &in_stage[s->op[i].in[k]];
            if (*at == UNREAD)
                *at = ONE - op_stage[i];
            else if (*at <= ONE && *at != ONE - op_stage[i])
                *at = SEVERAL;
        }
    for (int t = 0; t < s->ntensors; t++)
        if (in_stage[t] < -1)
            in_stage[t] = in_stage[t] <= ONE ? ONE - in_stage[t] : -1;
}

mrt_status mrt_pipeline_setup(mrt_planning *pl, mrt_error *err)
{
    const mrt_spec *s = pl->spec;
    mrt_plan *p = pl->plan;
    mrt_status st = MRT_OK;
    int axis = -1, b = pipe_block(s, &axis, err, &st);
    pl->cur_stage = -1;
    if (st || b < 0 || s->mesh.size[axis] < 2)
        return st;
    if ((st = check_axis(s, axis, err)))
        return st;
    int P = (int)s->mesh.size[axis], v = s->train.virtual_stages;
    v = v > 1 ? v : 1;
    p->pipe = (mrt_plan_pipeline){.axis = axis,
                                  .stages = P,
                                  .microbatches = s->train.microbatches,
                                  .virtual_stages = v,
                                  .schedule = s->train.schedule};
    size_t n = (size_t)s->nops + 1, nt = (size_t)s->ntensors + 1;
    free(pl->op_stage);
    free(pl->op_chunk);
    free(pl->param_stage);
    free(pl->sent);
    pl->op_stage = malloc(n * sizeof(int));
    pl->op_chunk = malloc(n * sizeof(int));
    pl->param_stage = malloc(nt * sizeof(int));
    pl->sent = malloc(nt * (size_t)P * sizeof(int));
    if (!pl->op_stage || !pl->op_chunk || !pl->param_stage || !pl->sent)
        return mrt_planning_nomem(s, err);
    op_chunks(s, b, P * v, pl->op_chunk, pl->param_stage);
    for (int i = 0; i < s->nops; i++)
        pl->op_stage[i] = pl->op_chunk[i] % P;
    for (int t = 0; t < s->ntensors; t++)
        pl->param_stage[t] = pl->param_stage[t] < 0 ? -1
                                                    : pl->param_stage[t] % P;
    input_stages(s, pl->op_stage, pl->param_stage);
    for (size_t k = 0; k < nt * (size_t)P; k++)
        pl->sent[k] = -1;
    return MRT_OK;
}

int mrt_pipeline_input_stage(const mrt_planning *pl, int t)
{
    return pl->param_stage && pl->plan->pipe.stages > 1 ? pl->param_stage[t]
                                                        : -1;
}

/* The value of tensor t on stage b: its own when held there (or by every
 * stage), else the copy sent there (one SENDRECV the first time); -1
 * when out of memory. */
static int value_on(mrt_planning *pl, int op, int t, int b)
{
    mrt_plan *p = pl->plan;
    int v = p->tensor_value[t], P = p->pipe.stages;
    int a = p->value[v].stage;
    if (a < 0 || a == b)
        return v;
    int *slot = &pl->sent[(size_t)t * (size_t)P + (size_t)b];
    if (*slot >= 0 && p->value[*slot].tensor == t)
        return *slot;
    mrt_layout l = p->value[v].layout;
    int w = mrt_planning_add_value(pl, t, &l);
    if (w < 0)
        return -1;
    p->value[w].stage = b;
    mrt_step s = {.kind = MRT_STEP_SENDRECV,
                  .op = op,
                  .in = v,
                  .in2 = -1,
                  .out = w,
                  .dim = -1,
                  .dim2 = -1,
                  .axes = 1u << p->pipe.axis,
                  .wait = -1,
                  .stage = b,
                  .from_stage = a};
    if (mrt_planning_add_step(pl, &s) < 0)
        return -1;
    p->pipe.p2p_bytes += p->step[p->nsteps - 1].bytes;
    return *slot = w;
}

mrt_status mrt_pipeline_receive(mrt_planning *pl, int op, int saved[2],
                                mrt_error *err)
{
    const mrt_spec_op *o = &pl->spec->op[op];
    mrt_plan *p = pl->plan;
    saved[0] = saved[1] = -1;
    if (p->pipe.stages < 2)
        return MRT_OK;
    pl->cur_stage = pl->op_stage[op];
    for (int k = 0; k < o->nin; k++) {
        int t = o->in[k], v = p->tensor_value[t];
        int w = value_on(pl, op, t, pl->cur_stage);
        if (w < 0)
            return mrt_planning_nomem(pl->spec, err);
        saved[k] = v;
        p->tensor_value[t] = w;
    }
    return MRT_OK;
}

void mrt_pipeline_restore(mrt_planning *pl, int op, const int saved[2])
{
    const mrt_spec_op *o = &pl->spec->op[op];
    for (int k = o->nin - 1; k >= 0; k--)
        if (saved[k] >= 0 && o->in[k] != o->out)
            pl->plan->tensor_value[o->in[k]] = saved[k];
}
