/*
 * build_precision.c — `precision:`, the element type of each kind of
 * tensor (mixed precision as Megatron and DeepSpeed set it): params
 * (the parameters as stored and updated), compute (activations, the
 * inputs of the kernels, every tensor without a type of its own), grads
 * (the parameters' gradients, so the type their reductions run in) and
 * optimizer (its state and master weights; the optimizers read it).
 * Each defaults to the spec's dtype.  A 16-bit type is stored and sent
 * in 2 bytes and computed in float32 (ops/step_widen.h): a gradient made
 * by an einsum in float32 is rounded to grads before its reduction, so
 * a bfloat16 gradient all-reduce moves half the bytes of a float32 one.
 */
#include <stdlib.h>
#include <string.h>

#include "build.h"

static const char *const kind_names[MRT_PRECISION_KINDS] = {
    "params", "compute", "grads", "optimizer"};

/* One kind's type: a floating type, not int32. */
static mrt_status kind_type(mrt_ir_call *c, int k, const char *name,
                            mrt_mark at, mrt_dtype *out)
{
    static const mrt_dtype floats[] = {MRT_F32, MRT_F64, MRT_BF16, MRT_F16};
    char q[MRT_SPEC_QUOTE_MAX + 8];
    c->entry = at;
    mrt_ir_at(c, kind_names[k], &at);
    for (size_t i = 0; i < sizeof floats / sizeof floats[0]; i++)
        if (!strcmp(name, mrt_dtype_name(floats[i]))) {
            *out = floats[i];
            return MRT_OK;
        }
    if (!strcmp(name, mrt_dtype_name(MRT_I32)))
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "precision %s: int32 is an index type, not a "
                           "floating type (expected: float32, float64, "
                           "bfloat16, float16)",
                           kind_names[k]);
    return mrt_ir_fail(c, MRT_E_SPEC,
                       "unknown precision %s type '%s' (expected: float32, "
                       "float64, bfloat16, float16)",
                       kind_names[k], mrt_ir_quote(name, q, sizeof q));
}

mrt_status mrt_ir_set_precision_at(mrt_ir *ir,
                                   const char *const type[MRT_PRECISION_KINDS],
                                   const mrt_mark mark[MRT_PRECISION_KINDS],
                                   mrt_mark at, mrt_error *err)
{
    mrt_ir_call c;
    mrt_status st = mrt_ir_begin(&c, ir, "mrt_ir_set_precision");
    c.entry = at;
    c.arg = "precision";
    if (!st && ir->s->ntensors)
        st = mrt_ir_fail(&c, MRT_E_USAGE,
                         "the precision is set before the first tensor");
    mrt_spec *s = st ? NULL : ir->s;
    mrt_dtype t[MRT_PRECISION_KINDS];
    for (int k = 0; !st && k < MRT_PRECISION_KINDS; k++) {
        t[k] = s->dtype;
        if (type[k])
            st = kind_type(&c, k, type[k], mark[k], &t[k]);
    }
    if (!st) {
        s->precision = (mrt_precision){t[0], t[1], t[2], t[3], 1, at};
        s->dtype = t[MRT_PRECISION_COMPUTE]; /* every untyped tensor's */
    }
    return mrt_ir_end(&c, st, err);
}

/* Gives tensor t type d (its `stored`: 0 when it is the spec's). */
static void set_type(mrt_spec *s, int t, mrt_dtype d)
{
    if (t >= 0 && mrt_spec_tensor_dtype(s, t) != MRT_I32)
        s->tensor[t].stored = d == s->dtype ? 0 : 1 + (int)d;
}

void mrt_ir_precision_apply(mrt_spec *s)
{
    const mrt_train *tr = &s->train;
    const mrt_precision *q = &s->precision;
    if (!q->given || tr->loss < 0)
        return;
    char *is_param = calloc((size_t)s->ntensors + 1, 1);
    if (!is_param)
        return; /* (then every tensor keeps the compute type) */
    for (int k = 0; k < tr->nparams; k++)
        is_param[tr->param[k]] = 1;
    for (int t = 0; t < s->ntensors; t++) {
        int like = s->tensor[t].grad_like - 1;
        if (is_param[t])
            set_type(s, t, q->params);
        else if (like >= 0 && is_param[like])
            set_type(s, t, s->tensor[t].grad_piece ? q->grads : q->params);
    }
    free(is_param);
}
