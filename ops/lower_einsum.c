/*
 * lower_einsum.c — one einsum op becomes: each input moved to the
 * execution layout, the local kernel on the shards, and the move of the
 * result (a pending sum over the axes of split summed dims) to the
 * output's home layout, which resolves the sums by all-reduce or
 * reduce-scatter (ops/relayout.c).  Which lowering: choose.c's fixed
 * rules, or the cheapest of all (cheapest.c).
 *
 * An embedding's GATHER (and its gradient's SCATTER_ADD) is lowered as
 * the einsum onehot(ids)[b.., vocab] . table[vocab, d..] would be (and
 * onehot(ids) . g for the gradient): the same execution layouts and
 * moves, the one-hot operand virtual (the ids lack the vocab dim, so any
 * split of vocab leaves them whole), only the local step differs.
 */
#include <stdio.h>
#include <stdlib.h>

#include "planning.h"

/* The layout of a tensor with dims like `shape` under exec. */
static mrt_layout under_exec(const mrt_layout *shape, const mrt_xlayout *e,
                             unsigned partial)
{
    mrt_layout l = *shape;
    l.partial = partial;
    for (int i = 0; i < l.ndims; i++) {
        int x = mrt_xlayout_find(e, l.dim[i]);
        l.naxes[i] = e->naxes[x];
        for (int j = 0; j < e->naxes[x]; j++)
            l.axes[i][j] = e->axes[x][j];
    }
    return l;
}

/* Axes of the exec layout on dims of the op that the output lacks. */
static unsigned summed_axes(const mrt_plan *p, const mrt_layout *out,
                            const mrt_xlayout *e)
{
    unsigned mask = 0;
    for (int i = 0; i < e->ndims; i++)
        if (mrt_layout_find_dim(out, e->dim[i]) < 0)
            for (int j = 0; j < e->naxes[i]; j++)
                if (p->mesh.size[e->axes[i][j]] > 1)
                    mask |= 1u << e->axes[i][j];
    return mask;
}

static mrt_kview view_of(const mrt_value *v)
{
    return (mrt_kview){.ndims = v->layout.ndims,
                       .dim = v->layout.dim,
                       .ext = v->local,
                       .data = NULL};
}

/* Emits the kernel step; returns the value id of its result or -1. */
static int emit_kernel(mrt_planning *pl, int op, const int in[2],
                       const mrt_layout *res, mrt_error *err, mrt_status *st)
{
    const mrt_spec *s = pl->spec;
    mrt_plan *p = pl->plan;
    const mrt_spec_op *o = &s->op[op];
    int v = mrt_planning_add_value(pl, o->out, res);
    if (v < 0)
        return -1;
    mrt_step k = {.kind = MRT_STEP_EINSUM,
                  .op = op,
                  .in = in[0],
                  .in2 = o->nin > 1 ? in[1] : -1,
                  .out = v,
                  .dim = -1,
                  .dim2 = -1,
                  .group = 1};
    if (o->kind == MRT_OP_GATHER || o->kind == MRT_OP_SCATTER_ADD) {
        /* a lookup or a sum of rows: a copy, no flops (step_cost.c) */
        const mrt_layout *t = o->kind == MRT_OP_GATHER
                                  ? &p->value[in[0]].layout
                                  : &p->value[v].layout;
        k.kind = o->kind == MRT_OP_GATHER ? MRT_STEP_GATHER
                                          : MRT_STEP_SCATTER_ADD;
        k.dim = mrt_layout_find_dim(t, o->from_dim);
        return mrt_planning_add_step(pl, &k) < 0 ? -1 : v;
    }
    mrt_kview a = view_of(&p->value[in[0]]), c = view_of(&p->value[v]);
    mrt_kview b = o->nin > 1 ? view_of(&p->value[in[1]]) : a;
    mrt_einsum_class cls;
    *st = mrt_einsum_classify(&a, o->nin > 1 ? &b : NULL, &c, &cls, err);
    if (*st != MRT_OK)
        return -1;
    k.cls = mrt_einsum_shape_of(&cls);
    k.flops = mrt_einsum_flops(&cls);
    return mrt_planning_add_step(pl, &k) < 0 ? -1 : v;
}

static mrt_status fail_at(const mrt_spec *s, int op, mrt_status st,
                          mrt_error *err)
{
    if (st == MRT_E_NOMEM)
        return mrt_error_set(err, MRT_E_NOMEM, s->path, s->op[op].mark,
                             "out of memory while planning");
    if (err && err->line == 0) { /* classify's errors have no position */
        err->line = s->op[op].mark.line;
        err->column = s->op[op].mark.column;
        snprintf(err->file, sizeof err->file, "%.255s", s->path);
    }
    return st;
}

mrt_status mrt_lower_emit(mrt_planning *pl, int op, const mrt_layout *home,
                          const mrt_lowering *lw, int allreduce_only,
                          mrt_error *err)
{
    const mrt_spec *s = pl->spec;
    mrt_plan *p = pl->plan;
    const mrt_spec_op *o = &s->op[op];
    mrt_status st = MRT_E_NOMEM;
    int in[2];
    unsigned kept = 0;
    for (int k = 0; k < o->nin; k++) {
        int from = p->tensor_value[o->in[k]];
        mrt_layout want = under_exec(&p->value[from].layout, &lw->exec,
                                     lw->keep_in[k]);
        in[k] = mrt_relayout_emit(pl, op, from, &want, allreduce_only);
        if (in[k] < 0)
            return fail_at(s, op, st, err);
        kept |= lw->keep_in[k];
    }
    mrt_layout res = under_exec(home, &lw->exec, 0);
    res.partial = summed_axes(p, home, &lw->exec) | kept;
    int r = emit_kernel(pl, op, in, &res, err, &st);
    if (r < 0)
        return fail_at(s, op, st, err);
    mrt_layout target = *home;
    target.partial = lw->keep_out;
    for (int i = 0; i < target.ndims; i++) { /* kept pending: not split */
        int n = 0;
        for (int j = 0; j < target.naxes[i]; j++)
            if (!(lw->keep_out & (1u << target.axes[i][j])))
                target.axes[i][n++] = target.axes[i][j];
        target.naxes[i] = n;
    }
    int fin = mrt_relayout_emit(pl, op, r, &target, allreduce_only);
    if (fin < 0)
        return fail_at(s, op, MRT_E_NOMEM, err);
    p->tensor_value[o->out] = fin;
    return MRT_OK;
}

mrt_status mrt_lower_einsum(mrt_planning *pl, int op, const mrt_layout *home,
                            mrt_strategy strategy, int may_defer,
                            mrt_error *err)
{
    const mrt_spec *s = pl->spec;
    mrt_plan *p = pl->plan;
    mrt_lowering lw = {0};
    switch (strategy) {
    case MRT_STRATEGY_MESHTF:
    case MRT_STRATEGY_RULES:
    case MRT_STRATEGY_PINNED:
        if (strategy == MRT_STRATEGY_MESHTF)
            mrt_choose_meshtf(p, s, op, &lw.exec);
        else if (strategy == MRT_STRATEGY_PINNED)
            mrt_choose_pinned(p, s, op, home, &lw.exec);
        else
            mrt_choose_rules(p, s, op, home, &lw.exec);
        /* Mesh-TF's lazy all-reduce: the sums home does not split over
         * stay pending for the add that reads the result (lazy_sum.c) */
        if (may_defer)
            lw.keep_out = summed_axes(p, home, &lw.exec) &
                          ~mrt_layout_used_axes(home);
        /* pinned: also those home splits over (the result stays unsplit
         * over them), so the add of a gradient's pieces makes ONE
         * reduce-scatter into home: sequence parallelism's dL/dxn of the
         * q, k and v projections */
        if (may_defer && strategy == MRT_STRATEGY_PINNED)
            lw.keep_out = summed_axes(p, home, &lw.exec);
        return mrt_lower_emit(pl, op, home, &lw,
                              strategy == MRT_STRATEGY_MESHTF, err);
    case MRT_STRATEGY_CHEAPEST:
    case MRT_STRATEGY_COUNT: break;
    }
    return mrt_cheapest_einsum(pl, op, home, may_defer, err);
}
