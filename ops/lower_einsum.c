/*
 * lower_einsum.c — one einsum op becomes: each input moved to the
 * execution layout, the local kernel on the shards, and the move of the
 * result (a pending sum over the axes of split summed dims) to the
 * output's home layout, which resolves the sums by all-reduce or
 * reduce-scatter (ops/relayout.c).
 */
#include <stdio.h>
#include <stdlib.h>

#include "plan.h"

/* The layout of a tensor with dims like `shape` under exec. */
static mrt_layout under_exec(const mrt_layout *shape,
                             const mrt_exec_layout *e)
{
    mrt_layout l = *shape;
    l.partial = 0;
    for (int i = 0; i < l.ndims; i++) {
        int d = l.dim[i];
        l.naxes[i] = e->naxes[d];
        for (int j = 0; j < e->naxes[d]; j++)
            l.axes[i][j] = e->axes[d][j];
    }
    return l;
}

/* Axes of the exec layout on dims of the inputs that the output lacks. */
static unsigned summed_axes(const mrt_plan *p, const mrt_spec_op *o,
                            const mrt_layout *out, const mrt_exec_layout *e)
{
    unsigned mask = 0;
    for (int k = 0; k < o->nin; k++) {
        const mrt_layout *in = &p->value[p->tensor_value[o->in[k]]].layout;
        for (int i = 0; i < in->ndims; i++)
            if (mrt_layout_find_dim(out, in->dim[i]) < 0)
                for (int j = 0; j < e->naxes[in->dim[i]]; j++)
                    if (p->mesh.size[e->axes[in->dim[i]][j]] > 1)
                        mask |= 1u << e->axes[in->dim[i]][j];
    }
    return mask;
}

static mrt_kview view_of(const mrt_value *v)
{
    return (mrt_kview){.ndims = v->layout.ndims, .dim = v->layout.dim,
                       .ext = v->local, .data = NULL};
}

/* Emits the kernel step; returns the value id of its result or -1. */
static int emit_kernel(mrt_plan *p, const mrt_spec *s, int op,
                       const int in[2], const mrt_layout *res,
                       mrt_error *err, mrt_status *st)
{
    const mrt_spec_op *o = &s->op[op];
    int v = mrt_plan_add_value(p, o->out, res);
    if (v < 0)
        return -1;
    mrt_step k = {.kind = MRT_STEP_EINSUM, .op = op, .in = in[0],
                  .in2 = o->nin > 1 ? in[1] : -1, .out = v, .dim = -1,
                  .dim2 = -1, .group = 1};
    mrt_kview a = view_of(&p->value[in[0]]), c = view_of(&p->value[v]);
    mrt_kview b = o->nin > 1 ? view_of(&p->value[in[1]]) : a;
    *st = mrt_einsum_classify(&a, o->nin > 1 ? &b : NULL, &c, &k.cls, err);
    if (*st != MRT_OK)
        return -1;
    k.flops = mrt_einsum_flops(&k.cls);
    return mrt_plan_add_step(p, &k) < 0 ? -1 : v;
}

mrt_status mrt_lower_einsum(mrt_plan *p, const mrt_spec *s, int op,
                            mrt_error *err)
{
    const mrt_spec_op *o = &s->op[op];
    const mrt_layout *home = &s->tensor[o->out].layout;
    mrt_status st = MRT_E_NOMEM;
    mrt_exec_layout e = {.ndims = s->ndims};
    e.naxes = calloc((size_t)s->ndims + 1, sizeof *e.naxes);
    e.axes = calloc((size_t)s->ndims + 1, sizeof *e.axes);
    if (!e.naxes || !e.axes)
        goto fail;
    mrt_choose_einsum_layout(p, s, op, &e);

    int in[2];
    for (int k = 0; k < o->nin; k++) {
        const mrt_value *v = &p->value[p->tensor_value[o->in[k]]];
        mrt_layout want = under_exec(&v->layout, &e);
        in[k] = mrt_relayout_emit(p, op, p->tensor_value[o->in[k]], &want);
        if (in[k] < 0)
            goto fail;
    }
    mrt_layout res = under_exec(home, &e);
    res.partial = summed_axes(p, o, home, &e);
    st = MRT_E_NOMEM;
    int r = emit_kernel(p, s, op, in, &res, err, &st);
    if (r < 0)
        goto fail;
    st = MRT_E_NOMEM;
    int fin = mrt_relayout_emit(p, op, r, home);
    if (fin < 0)
        goto fail;
    p->tensor_value[o->out] = fin;
    free(e.naxes);
    free(e.axes);
    return MRT_OK;
fail:
    free(e.naxes);
    free(e.axes);
    if (st == MRT_E_NOMEM)
        return mrt_error_set(err, MRT_E_NOMEM, s->path, o->mark,
                             "out of memory while planning");
    if (err && err->line == 0) {
        err->line = o->mark.line;
        err->column = o->mark.column;
        snprintf(err->file, sizeof err->file, "%.255s", s->path);
    }
    return st;
}
