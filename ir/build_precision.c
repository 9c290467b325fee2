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
 *
 * Where compute differs from params, the forward pass reads a cast copy
 * of each parameter (mrt_ir_precision_cast, before reverse mode): a map
 * "cast" makes "<w>:cast" in the compute type, placed before the ops
 * that read it (first of the program for a parameter outside blocks,
 * first of its block instance for one inside), and every forward op
 * reads it instead of w.  Its gradient is a copy (grad.c), in grads like
 * every gradient of the parameter, so the gradient is reduced in grads
 * and the copy of a gathered or moved weight is the compute type's.
 */
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "grad_names.h"

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
    for (int i = 0; i < s->nops; i++) /* a parameter's cast copy */
        if (s->op[i].kind == MRT_OP_MAP && s->op[i].fn == MRT_MAP_CAST)
            is_param[s->op[i].out] = 2;
    for (int t = 0; t < s->ntensors; t++) {
        int like = s->tensor[t].grad_like - 1;
        if (is_param[t] == 1)
            set_type(s, t, q->params);
        else if (like >= 0 && is_param[like])
            set_type(s, t, s->tensor[t].grad_piece ? q->grads : q->params);
    }
    free(is_param);
}

/* Where parameter w's cast goes: before the first op of its block
 * instance, or of the program. */
static int cast_position(const mrt_spec *s, int w)
{
    const mrt_spec_tensor *t = &s->tensor[w];
    return t->block >= 0 ? s->block[t->block].first_op[t->layer] : 0;
}

/* Appends the cast op of parameter k (its tensor "<w>:cast"); -1 when out
 * of memory. */
static int add_cast(mrt_spec *s, int k, mrt_dtype compute)
{
    int w = s->train.param[k];
    char name[MRT_NAME_MAX];
    mrt_ir_name(s, "", s->tensor[w].name, ":cast", 0, name);
    int c = mrt_spec_add_tensor(s, name, s->tensor[w].layout.dim,
                                s->tensor[w].layout.ndims, -1,
                                s->train.param_mark[k]);
    if (c < 0)
        return -1;
    mrt_spec_tensor *ct = &s->tensor[c], *wt = &s->tensor[w];
    ct->layout = wt->layout;
    ct->own_layout = wt->own_layout;
    memcpy(ct->split_mark, wt->split_mark, sizeof ct->split_mark);
    ct->block = wt->block;
    ct->layer = wt->layer;
    ct->stored = compute == s->dtype ? 0 : 1 + (int)compute;
    mrt_spec_op op = {.kind = MRT_OP_MAP,
                      .mark = s->train.param_mark[k],
                      .nin = 1,
                      .in = {w, -1},
                      .out = c,
                      .expect = {-1, -1, {0, 0}},
                      .fn = MRT_MAP_CAST,
                      .from_dim = -1,
                      .to_dim = -1,
                      .phase = MRT_PHASE_FORWARD};
    int at = mrt_spec_add_op(s, &op);
    if (at >= 0) {
        s->op[at].block = wt->block;
        s->op[at].layer = wt->layer;
    }
    return at;
}

/* The program's ops in the order: for each old op j, the casts placed
 * before it (those outside blocks first), then op j, which reads the
 * casts instead of the parameters; producers and block ranges follow. */
static mrt_status reorder(mrt_spec *s, int nold, const int *cast_of)
{
    int n = s->nops, ncast = n - nold, at = 0;
    mrt_spec_op *op = malloc((size_t)n * sizeof *op);
    int *remap = malloc((size_t)(nold + 1) * sizeof *remap);
    int *before = calloc((size_t)nold + 1, sizeof *before); /* block casts */
    if (!op || !remap || !before) {
        free(op);
        free(remap);
        free(before);
        return MRT_E_NOMEM;
    }
    for (int j = 0; j < nold; j++) {
        for (int pass = 0; pass < 2; pass++)
            for (int k = 0; k < ncast; k++) {
                const mrt_spec_op *c = &s->op[nold + k];
                int w = c->in[0];
                if (cast_position(s, w) == j && (c->block >= 0) == pass) {
                    op[at++] = *c;
                    before[j] += pass;
                }
            }
        remap[j] = at;
        op[at] = s->op[j];
        for (int i = 0; i < op[at].nin; i++)
            if (op[at].in[i] >= 0 && cast_of[op[at].in[i]] >= 0)
                op[at].in[i] = cast_of[op[at].in[i]];
        at++;
    }
    memcpy(s->op, op, (size_t)n * sizeof *op);
    for (int i = 0; i < n; i++)
        s->tensor[s->op[i].out].producer = i;
    for (int b = 0; b < s->nblocks; b++)
        for (int l = 0; l < s->block[b].count; l++) {
            int f = s->block[b].first_op[l];
            s->block[b].first_op[l] = remap[f] - before[f];
            s->block[b].last_op[l] = remap[s->block[b].last_op[l]];
        }
    free(op);
    free(remap);
    free(before);
    return MRT_OK;
}

mrt_status mrt_ir_precision_cast(mrt_spec *s, mrt_error *err)
{
    const mrt_precision *q = &s->precision;
    mrt_train *tr = &s->train;
    if (!q->given || q->params == q->compute || tr->nparams == 0)
        return MRT_OK;
    int nold = s->nops, nt = s->ntensors;
    int *cast_of = malloc(((size_t)nt + (size_t)tr->nparams + 1) *
                          sizeof *cast_of);
    mrt_status st = cast_of ? MRT_OK : MRT_E_NOMEM;
    for (int t = 0; cast_of && t < nt + tr->nparams; t++)
        cast_of[t] = -1;
    for (int k = 0; !st && k < tr->nparams; k++) {
        int at = add_cast(s, k, q->compute);
        if (at < 0)
            st = MRT_E_NOMEM;
        else
            cast_of[tr->param[k]] = s->op[at].out;
    }
    if (!st)
        st = reorder(s, nold, cast_of);
    free(cast_of);
    if (st)
        return mrt_ir_nomem(s, err);
    return MRT_OK;
}
