/*
 * microbatch.c — microbatches by unrolling the program, and the names of
 * a pipeline's schedules.
 *
 *   train: {loss: L, params: [...], microbatches: 4, microbatch_dim: batch}
 *
 * Before reverse mode runs, the forward program is made m times, once
 * per microbatch, on slices of the microbatch dim (by default `batch`),
 * whose size becomes b / m in the program.  Microbatch 0 is the program
 * as written (its tensors keep their names); microbatch j > 0 is a copy
 * of every forward op, its tensors named "<name>@j" (h3.attn.q@2).  An
 * input with the dim becomes m inputs, j holding rows [j·b/m, (j+1)·b/m)
 * of the full one (tensor.micro: its init reads them, so random values,
 * labels, masks and files are the full batch's); inputs without it (the
 * parameters) are shared.  The loss is then the sum of the microbatches'
 * losses: every mean over the batch was expanded with the full batch's
 * count (ir/expand.c), so microbatch j's loss is its rows' share of the
 * full-batch loss, and the sum equals it — provided nothing after the
 * batch is summed away is non-linear, which mrt_ir_microbatch checks.
 * Microbatch 0's loss is renamed "<L>@0"; the sum takes the name L.
 * Reverse mode (grad.c) then sums each parameter's gradient over the
 * microbatches by itself (a tensor read by several ops sums their
 * contributions), and the data-parallel reduction stays one per step
 * (ops/lazy_sum.c adds the pending pieces before reducing).  A `grads:`
 * input with the dim (a pipeline stage's input, whose gradient an
 * earlier stage would read) is m inputs in the list, x .. x@m-1, each
 * with its gradient: grad:x@j holds microbatch j's rows of the full
 * gradient.  (A parameter with the dim is an error: build_train.c.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grad_names.h"
#include "ir.h"

static const char *const schedule_names[] = {
    [MRT_SCHEDULE_GPIPE] = "gpipe",
    [MRT_SCHEDULE_1F1B] = "1f1b",
    [MRT_SCHEDULE_INTERLEAVED] = "interleaved",
    [MRT_SCHEDULE_ZERO_BUBBLE] = "zero_bubble",
};
_Static_assert(sizeof schedule_names / sizeof schedule_names[0] ==
                   MRT_SCHEDULE_COUNT,
               "a name per schedule");

const char *mrt_schedule_kind_name(mrt_schedule_kind k)
{
    return k >= 0 && k < MRT_SCHEDULE_COUNT ? schedule_names[k] : "?";
}

int mrt_schedule_kind_find(const char *name)
{
    for (int k = 0; k < MRT_SCHEDULE_COUNT; k++)
        if (!strcmp(name, schedule_names[k]))
            return k;
    return -1;
}

static int has_dim(const mrt_spec_tensor *t, int d)
{
    return mrt_layout_find_dim(&t->layout, d) >= 0;
}

/* The linearity check: after the microbatch dim is summed away, every op
 * that reads such a sum must be linear in it (an einsum with a factor
 * of no microbatch, a linear map), or the sum of the microbatches'
 * results is not the full batch's.  reduced[t]: t depends on the batch
 * and lacks its dim.  An error names the first op that breaks it. */
static mrt_status check_linear(const mrt_spec *s, int d, mrt_error *err)
{
    int nf = s->nops, *dep = calloc((size_t)s->ntensors + 1, sizeof *dep);
    mrt_status st = MRT_OK;
    if (!dep)
        return mrt_ir_nomem(s, err);
    for (int t = 0; t < s->ntensors; t++)
        dep[t] = s->tensor[t].producer < 0 && has_dim(&s->tensor[t], d);
    for (int i = 0; i < nf && !st; i++) {
        const mrt_spec_op *o = &s->op[i];
        int nred = 0, ndep = 0, k_red = -1;
        for (int k = 0; k < o->nin; k++) {
            int t = o->in[k];
            ndep += dep[t] != 0;
            if (dep[t] && !has_dim(&s->tensor[t], d))
                nred++, k_red = k;
        }
        dep[o->out] = ndep > 0;
        int ok = nred == 0 || o->kind == MRT_OP_RENAME ||
                 (o->kind == MRT_OP_EINSUM && ndep == 1) ||
                 (o->kind == MRT_OP_MAP && o->nin == 1 &&
                  mrt_map_linear_in(o->fn, 0)) ||
                 (o->kind == MRT_OP_MAP && o->nin == 2 && ndep == 1 &&
                  mrt_map_linear_in(o->fn, k_red)) ||
                 (o->kind == MRT_OP_MAP && nred == 2 &&
                  (o->fn == MRT_MAP_ADD || o->fn == MRT_MAP_SUB));
        if (!ok)
            st = mrt_error_set(
                err, MRT_E_SPEC, s->path, o->mark,
                "op %d reads '%s', a sum over the microbatch dim '%s', "
                "non-linearly: the sum of the microbatches' results would "
                "not be the full batch's (train: microbatches)",
                o->user, s->tensor[o->in[k_red]].name, s->dim_name[d]);
    }
    free(dep);
    return st;
}

/* The dim shrinks to its microbatch's size in every tensor. */
static void shrink_dim(mrt_spec *s, int d, int64_t bm)
{
    s->dim_size[d] = bm;
    for (int t = 0; t < s->ntensors; t++) {
        int i = mrt_layout_find_dim(&s->tensor[t].layout, d);
        if (i >= 0)
            s->tensor[t].layout.size[i] = bm;
    }
}

/* A copy of tensor t for microbatch j ("<name>@j", made by op `producer`
 * or an input), or -1 when out of memory. */
static int copy_tensor(mrt_spec *s, int t, int j, int producer)
{
    char suffix[16], name[MRT_NAME_MAX];
    snprintf(suffix, sizeof suffix, "@%d", j);
    mrt_ir_name(s, "", s->tensor[t].name, suffix, 0, name);
    int id = mrt_spec_add_tensor(s, name, s->tensor[t].layout.dim,
                                 s->tensor[t].layout.ndims, producer,
                                 s->tensor[t].mark);
    if (id < 0)
        return -1;
    mrt_spec_tensor *c = &s->tensor[id];
    char keep[MRT_NAME_MAX];
    memcpy(keep, c->name, sizeof keep);
    *c = s->tensor[t];
    memcpy(c->name, keep, sizeof keep);
    c->producer = producer;
    c->micro = j;
    if (c->file && !(c->file = strdup(c->file)))
        return -1;
    return id;
}

/* Microbatch j's copy of the forward ops 0 .. nf - 1, which read
 * tensors 0 .. nt - 1; map[t] is the tensor microbatch j reads for t. */
static mrt_status copy_program(mrt_spec *s, int nf, int nt, int j, int *map,
                               mrt_error *err)
{
    int d = s->train.micro_dim;
    for (int t = 0; t < nt; t++)
        map[t] = t;
    for (int t = 0; t < nt; t++)
        if (s->tensor[t].producer < 0 && has_dim(&s->tensor[t], d) &&
            s->tensor[t].grad_like == 0 &&
            (map[t] = copy_tensor(s, t, j, -1)) < 0)
            return mrt_ir_nomem(s, err);
    for (int i = 0; i < nf; i++) {
        mrt_spec_op o = s->op[i];
        for (int k = 0; k < o.nin; k++)
            o.in[k] = map[o.in[k]];
        if (o.softmax_in) /* (what a softmax normalizes: grad.c) */
            o.softmax_in = 1 + map[o.softmax_in - 1];
        int out = copy_tensor(s, o.out, j, s->nops);
        if (out < 0)
            return mrt_ir_nomem(s, err);
        map[o.out] = out;
        o.out = out;
        o.micro = j;
        int k = mrt_spec_add_op(s, &o);
        if (k < 0)
            return mrt_ir_nomem(s, err);
        s->op[k].block = s->op[i].block;
        s->op[k].layer = s->op[i].layer;
    }
    return MRT_OK;
}

/* The loss: microbatch 0's renamed "<L>@0", the sum of the m losses
 * (one add per microbatch after the first, outside every microbatch)
 * named L and made the train's loss. */
static mrt_status sum_losses(mrt_spec *s, const int *loss, int m,
                             mrt_error *err)
{
    mrt_spec_tensor *l0 = &s->tensor[loss[0]];
    char name[MRT_NAME_MAX];
    memcpy(name, l0->name, sizeof name);
    snprintf(l0->name, sizeof l0->name, "%.*s@0", MRT_NAME_MAX - 4, name);
    if (mrt_spec_index_tensor(s, loss[0]))
        return mrt_ir_nomem(s, err);
    int acc = loss[0];
    for (int j = 1; j < m; j++) {
        char part[MRT_NAME_MAX];
        snprintf(part, sizeof part, "%.*s@+%d", MRT_NAME_MAX - 16, name, j);
        int t = mrt_spec_add_tensor(s, j == m - 1 ? name : part, NULL, 0,
                                    s->nops, s->tensor[loss[0]].mark);
        mrt_spec_op o = {.kind = MRT_OP_MAP,
                         .mark = s->op[s->tensor[loss[0]].producer].mark,
                         .nin = 2,
                         .in = {acc, loss[j]},
                         .out = t,
                         .expect = {-1, -1, {0, 0}},
                         .fn = MRT_MAP_ADD,
                         .from_dim = -1,
                         .to_dim = -1,
                         .phase = MRT_PHASE_FORWARD,
                         .user = s->op[s->tensor[loss[0]].producer].user,
                         .micro = -1};
        if (t < 0 || mrt_spec_add_op(s, &o) < 0)
            return mrt_ir_nomem(s, err);
        acc = t;
    }
    s->train.loss = acc;
    return MRT_OK;
}

/* The `grads:` inputs with the microbatch dim are m inputs each: the
 * list takes every microbatch's, in order (x, x@1, ..., x@m-1), so each
 * gets its gradient (grad:x@j, microbatch j's rows of the full one).
 * copy[k * m + j] is microbatch j's copy of extra k (j = 0: itself). */
static mrt_status extra_copies(mrt_spec *s, const int *copy, mrt_error *err)
{
    mrt_train *tr = &s->train;
    int m = tr->microbatches, n = 0;
    for (int k = 0; k < tr->nextra; k++)
        n += copy[k * m + 1] != tr->extra[k] ? m : 1;
    if (n == tr->nextra)
        return MRT_OK;
    int *x = calloc((size_t)n + 1, sizeof *x);
    int *g = calloc((size_t)n + 1, sizeof *g);
    mrt_mark *at = calloc((size_t)n + 1, sizeof *at);
    if (!x || !g || !at) {
        free(x);
        free(g);
        free(at);
        return mrt_ir_nomem(s, err);
    }
    for (int k = 0, i = 0; k < tr->nextra; k++)
        for (int j = 0; j < (copy[k * m + 1] != tr->extra[k] ? m : 1); j++) {
            x[i] = copy[k * m + j];
            g[i] = -1;
            at[i++] = tr->extra_mark[k];
        }
    free(tr->extra);
    free(tr->extra_grad);
    free(tr->extra_mark);
    tr->extra = x, tr->extra_grad = g, tr->extra_mark = at;
    tr->nextra = n;
    return MRT_OK;
}

/* Microbatches 1 .. m - 1: copies of the program; loss[j] their losses,
 * copy[k * m + j] their copies of `grads:` input k. */
static mrt_status copy_programs(mrt_spec *s, int nf, int nt, int *loss,
                                int *copy, mrt_error *err)
{
    mrt_train *tr = &s->train;
    int m = tr->microbatches;
    mrt_status st = MRT_OK;
    loss[0] = tr->loss;
    for (int k = 0; k < tr->nextra; k++)
        copy[k * m] = tr->extra[k];
    for (int j = 1; j < m && !st; j++) {
        int *mj = malloc(((size_t)nt + 1) * sizeof *mj);
        st = mj ? copy_program(s, nf, nt, j, mj, err) : mrt_ir_nomem(s, err);
        if (!st)
            loss[j] = mj[tr->loss];
        for (int k = 0; !st && k < tr->nextra; k++)
            copy[k * m + j] = mj[tr->extra[k]];
        free(mj);
    }
    return st;
}

mrt_status mrt_ir_microbatch(mrt_spec *s, mrt_error *err)
{
    mrt_train *tr = &s->train;
    int m = tr->microbatches, d = tr->micro_dim, nf = s->nops;
    int nt = s->ntensors;
    if (m <= 1)
        return MRT_OK;
    mrt_status st = check_linear(s, d, err);
    if (st)
        return st;
    shrink_dim(s, d, s->dim_size[d] / m);
    int *loss = malloc(((size_t)m + 1) * sizeof *loss);
    int *copy = malloc(((size_t)m * tr->nextra + 1) * sizeof *copy);
    if (!loss || !copy)
        st = mrt_ir_nomem(s, err);
    if (!st)
        st = copy_programs(s, nf, nt, loss, copy, err);
    if (!st)
        st = sum_losses(s, loss, m, err);
    if (!st)
        st = extra_copies(s, copy, err);
    free(loss);
    free(copy);
    return st;
}
