/*
 * lower_map.c — the local ops: maps, reduce_max and rename.
 *
 * A map runs where its result lives: each input is moved to the result's
 * home layout restricted to the dims it has (an input that lacks a dim is
 * replicated along the axes that split it; pending sums are resolved
 * first, since most maps are not linear), and the kernel then makes the
 * result's shard with no communication.
 *
 * reduce_max keeps the split of the dims it reduces when it can: each
 * rank takes the maximum of its block, and one all-reduce (op max) over
 * the axes of those dims finishes the job, as an all-reduce of a sum
 * finishes a contraction over a split dim.  That is what keeps a softmax
 * over a split dim cheap: max and sum each cost one all-reduce of the
 * small reduced tensor, not a gather of the big one.
 *
 * A pending sum rides through a map that is linear in it, as Mesh-
 * TensorFlow's lazy all-reduce rides through an add: copy, scale and neg
 * of a pending sum, mul or div of one by a resolved tensor, and add or
 * sub of two sums pending over the same axes are pending sums too.  The
 * result is resolved into its home layout at once, unless it may stay
 * pending for its one consumer: then an add of gradient contributions
 * followed by a relayout costs one reduce-scatter, not an all-reduce per
 * contribution.
 *
 * A copy (the relayout op) whose input had to move takes the moved value
 * as its result: the last move writes the result, with no copy after it.
 *
 * rename relabels the shard (its layout keeps its axes on the renamed
 * dim, pending sums included) and then moves to the result's home; a
 * pending sum stays pending there when the result may defer it (as
 * through copy).
 */
#include <string.h>

#include "planning.h"

/* l's dims with the axes `home` gives them (dims home lacks: unsplit,
 * or `keep`'s axes when they are free). */
static mrt_layout restrict_to(const mrt_layout *l, const mrt_layout *home,
                              const mrt_layout *keep, const mrt_mesh *m)
{
    mrt_layout r = *l;
    unsigned used = mrt_layout_used_axes(home);
    r.partial = 0;
    for (int i = 0; i < r.ndims; i++) {
        int j = mrt_layout_find_dim(home, r.dim[i]);
        r.naxes[i] = 0;
        if (j >= 0) {
            r.naxes[i] = home->naxes[j];
            memcpy(r.axes[i], home->axes[j], sizeof r.axes[i]);
            continue;
        }
        int k = keep ? mrt_layout_find_dim(keep, r.dim[i]) : -1;
        if (k < 0)
            continue;
        int free_axes = 1;
        for (int a = 0; a < keep->naxes[k]; a++)
            free_axes &= !(used & (1u << keep->axes[k][a]));
        if (free_axes) { /* uneven splits too: each rank reduces its block */
            r.naxes[i] = keep->naxes[k];
            memcpy(r.axes[i], keep->axes[k], sizeof r.axes[i]);
            for (int a = 0; a < keep->naxes[k]; a++)
                used |= 1u << keep->axes[k][a];
        }
    }
    return r;
}

static mrt_status nomem(const mrt_spec *s, int op, mrt_error *err)
{
    return mrt_error_set(err, MRT_E_NOMEM, s->path, s->op[op].mark,
                         "out of memory while planning");
}

/* The pending sums that may ride through map op o (0: none). */
static unsigned linear_sums(const mrt_plan *p, const mrt_spec_op *o)
{
    unsigned a = p->value[p->tensor_value[o->in[0]]].layout.partial;
    unsigned b = o->nin > 1 ? p->value[p->tensor_value[o->in[1]]].layout.partial
                            : 0;
    switch (o->fn) {
    case MRT_MAP_COPY:
    case MRT_MAP_SCALE:
    case MRT_MAP_NEG: return a;
    case MRT_MAP_ADD:
    case MRT_MAP_SUB: return a == b ? a : 0;
    case MRT_MAP_MUL: return a && !b ? a : b && !a ? b : 0;
    case MRT_MAP_DIV: return b ? 0 : a;
    default: return 0;
    }
}

/* l without the axes of mask on its dims, pending over mask. */
static mrt_layout pending_over(mrt_layout l, unsigned mask)
{
    for (int i = 0; i < l.ndims; i++) {
        int n = 0;
        for (int j = 0; j < l.naxes[i]; j++)
            if (!(mask & (1u << l.axes[i][j])))
                l.axes[i][n++] = l.axes[i][j];
        l.naxes[i] = n;
    }
    l.partial = mask;
    return l;
}

/* A copy whose input (value `from`) the relayout just moved (to value v,
 * made by the last step, in layout res) needs no copy of its own: v
 * becomes the result's value.  1 if it did. */
static int take_moved(mrt_planning *pl, const mrt_spec_op *o, int from, int v,
                      const mrt_layout *res)
{
    mrt_plan *p = pl->plan;
    mrt_value *val = &p->value[v];
    if (v == from || v != p->nvalues - 1 || !p->nsteps ||
        p->step[p->nsteps - 1].out != v || pl->last_value[val->tensor] != v ||
        !mrt_layout_equal(&val->layout, res) ||
        val->dtype != mrt_spec_tensor_dtype(pl->spec, o->out))
        return 0; /* (a copy to another type converts: a step of its own) */
    pl->last_value[val->tensor] = val->prev;
    val->tensor = o->out;
    val->prev = pl->last_value[o->out];
    pl->last_value[o->out] = v;
    return 1;
}

static mrt_status lower_map(mrt_planning *pl, int op, const mrt_layout *home,
                            int allreduce_only, int may_defer, mrt_error *err)
{
    const mrt_spec *s = pl->spec;
    mrt_plan *p = pl->plan;
    const mrt_spec_op *o = &s->op[op];
    int in[2] = {-1, -1};
    unsigned sums = linear_sums(p, o);
    for (int k = 0; k < o->nin; k++) {
        int from = p->tensor_value[o->in[k]];
        mrt_layout want = restrict_to(&p->value[from].layout, home, NULL,
                                      &p->mesh);
        if (sums && p->value[from].layout.partial == sums)
            want = pending_over(want, sums);
        if ((in[k] = mrt_relayout_emit(pl, op, from, &want, allreduce_only)) <
            0)
            return nomem(s, op, err);
    }
    mrt_layout res = pending_over(*home, sums);
    int v = in[0];
    if (o->fn != MRT_MAP_COPY ||
        !take_moved(pl, o, p->tensor_value[o->in[0]], v, &res)) {
        if ((v = mrt_planning_add_value(pl, o->out, &res)) < 0)
            return nomem(s, op, err);
        mrt_step st = {.kind = MRT_STEP_MAP,
                       .op = op,
                       .in = in[0],
                       .in2 = in[1],
                       .out = v,
                       .dim = -1,
                       .dim2 = -1,
                       .fn = o->fn,
                       .c = o->c,
                       .hot = o->fn == MRT_MAP_ONE_HOT
                                  ? mrt_layout_find_dim(home, o->from_dim)
                                  : -1,
                       .flops = (double)p->value[v].count};
        if (mrt_planning_add_step(pl, &st) < 0)
            return nomem(s, op, err);
    }
    if (sums && !may_defer) { /* resolve into the home layout */
        mrt_layout target = *home;
        target.partial = 0;
        if ((v = mrt_relayout_emit(pl, op, v, &target, allreduce_only)) < 0)
            return nomem(s, op, err);
    }
    p->tensor_value[o->out] = v;
    return MRT_OK;
}

static mrt_status lower_reduce_max(mrt_planning *pl, int op,
                                   const mrt_layout *home, int allreduce_only,
                                   mrt_error *err)
{
    const mrt_spec *s = pl->spec;
    mrt_plan *p = pl->plan;
    const mrt_spec_op *o = &s->op[op];
    int from = p->tensor_value[o->in[0]];
    const mrt_layout *cur = &p->value[from].layout;
    mrt_layout want = restrict_to(cur, home, cur, &p->mesh);
    int in = mrt_relayout_emit(pl, op, from, &want, allreduce_only);
    if (in < 0)
        return nomem(s, op, err);
    /* the axes of the reduced dims: the maximum is pending over them */
    unsigned pending = 0;
    want = p->value[in].layout;
    for (int i = 0; i < want.ndims; i++)
        if (mrt_layout_find_dim(home, want.dim[i]) < 0)
            for (int a = 0; a < want.naxes[i]; a++)
                if (p->mesh.size[want.axes[i][a]] > 1)
                    pending |= 1u << want.axes[i][a];
    mrt_layout res = *home;
    res.partial = pending;
    int v = mrt_planning_add_value(pl, o->out, &res);
    if (v < 0)
        return nomem(s, op, err);
    mrt_step st = {.kind = MRT_STEP_REDUCE_MAX,
                   .op = op,
                   .in = in,
                   .in2 = -1,
                   .out = v,
                   .dim = -1,
                   .dim2 = -1,
                   .flops = (double)p->value[in].count};
    if (mrt_planning_add_step(pl, &st) < 0)
        return nomem(s, op, err);
    if (pending) {
        res.partial = 0;
        int w = mrt_planning_add_value(pl, o->out, &res);
        mrt_step ar = {.kind = MRT_STEP_ALLREDUCE,
                       .op = op,
                       .in = v,
                       .in2 = -1,
                       .out = w,
                       .dim = -1,
                       .dim2 = -1,
                       .axes = pending,
                       .max = 1};
        if (w < 0 || mrt_planning_add_step(pl, &ar) < 0)
            return nomem(s, op, err);
        v = w;
    }
    p->tensor_value[o->out] = v;
    return MRT_OK;
}

static mrt_status lower_rename(mrt_planning *pl, int op, const mrt_layout *home,
                               int allreduce_only, int may_defer,
                               mrt_error *err)
{
    const mrt_spec *s = pl->spec;
    mrt_plan *p = pl->plan;
    const mrt_spec_op *o = &s->op[op];
    int from = p->tensor_value[o->in[0]];
    mrt_layout l = p->value[from].layout;
    for (int i = 0; i < l.ndims; i++)
        if (l.dim[i] == o->from_dim)
            l.dim[i] = o->to_dim;
    int v = mrt_planning_add_value(pl, o->out, &l);
    if (v < 0)
        return nomem(s, op, err);
    mrt_step st = {.kind = MRT_STEP_RENAME,
                   .op = op,
                   .in = from,
                   .in2 = -1,
                   .out = v,
                   .dim = -1,
                   .dim2 = -1};
    if (mrt_planning_add_step(pl, &st) < 0)
        return nomem(s, op, err);
    /* a rename is linear: a pending sum rides through it to its one
     * consumer (gradient contributions that reach a tensor through a
     * rename are then summed with the others before one reduction) */
    mrt_layout target = *home;
    target.partial = 0;
    if (may_defer && l.partial)
        target = pending_over(target, l.partial);
    int fin = mrt_relayout_emit(pl, op, v, &target, allreduce_only);
    if (fin < 0)
        return nomem(s, op, err);
    p->tensor_value[o->out] = fin;
    return MRT_OK;
}

mrt_status mrt_lower_local(mrt_planning *pl, int op, const mrt_layout *home,
                           int allreduce_only, int may_defer, mrt_error *err)
{
    const mrt_spec *s = pl->spec;
    switch (s->op[op].kind) {
    case MRT_OP_MAP:
        return lower_map(pl, op, home, allreduce_only, may_defer, err);
    case MRT_OP_REDUCE_MAX:
        return lower_reduce_max(pl, op, home, allreduce_only, err);
    case MRT_OP_RENAME:
        return lower_rename(pl, op, home, allreduce_only, may_defer, err);
    case MRT_OP_EINSUM:
    case MRT_OP_GATHER:
    case MRT_OP_SCATTER_ADD:
    case MRT_OP_KIND_COUNT: break;
    }
    return mrt_error_set(err, MRT_E_SPEC, s->path, s->op[op].mark,
                         "internal: op kind %d is not a local op",
                         (int)s->op[op].kind);
}
