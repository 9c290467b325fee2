/*
 * reference.c — the unsharded computation that --verify compares with:
 * every tensor whole on one rank, every op one call of the local kernel
 * on the full tensors.  No mesh, no layouts, no collectives.  With
 * `train:` it runs the same SGD steps, and it can check the gradients
 * of the backward program against central finite differences of the
 * forward one.
 *
 * Alongside each tensor it computes its magnitudes (reference_mag.c):
 * per element, the size of the rounding noise it carries, the larger of
 * the sum of |terms| summed into it and what its inputs' magnitudes
 * carry in.  --verify scales its tolerance by them (verify.c): a result
 * that is zero in exact arithmetic is rounding noise of the size of its
 * terms, not of itself.
 *
 * It computes in float64 when the program has a float64 type anywhere
 * (its dtype or a `precision:` type), else in float32: a 16-bit tensor
 * is held here in float32 (mrt_reference_dtype), its inputs rounded to
 * their own type first so that both runs start from the same values,
 * and never rounded again but where the program casts (precision:'s
 * 16-bit copies of the parameters: the program's meaning), so the
 * reference is the float32 answer that --verify's 16-bit tolerances
 * measure the run against.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "big_alloc.h"
#include "kernel.h"
#include "kernel_plan.h"
#include "local.h"

/* The tensor's layout with every split removed. */
static mrt_layout whole(const mrt_layout *l)
{
    mrt_layout w = *l;
    for (int i = 0; i < w.ndims; i++)
        w.naxes[i] = 0;
    w.partial = 0;
    return w;
}

/* Tensor t whole, at data. */
static mrt_kview view_of(const mrt_spec *s, int t, void *data)
{
    const mrt_layout *l = &s->tensor[t].layout;
    return (mrt_kview){
        .ndims = l->ndims, .dim = l->dim, .ext = l->size, .data = data};
}

mrt_dtype mrt_reference_dtype(const mrt_spec *s)
{
    const mrt_precision *q = &s->precision;
    return s->dtype == MRT_F64 || q->params == MRT_F64 ||
                   q->compute == MRT_F64 || q->grads == MRT_F64 ||
                   q->optimizer == MRT_F64
               ? MRT_F64
               : MRT_F32;
}

/* Tensor t's type here: int32 indices as they are, every float tensor
 * in the reference's type. */
static mrt_dtype ref_type(const mrt_spec *s, int t)
{
    return mrt_spec_tensor_dtype(s, t) == MRT_I32 ? MRT_I32
                                                  : mrt_reference_dtype(s);
}

int64_t mrt_reference_count(const mrt_spec *s, int t)
{
    int64_t n = 1;
    for (int i = 0; i < s->tensor[t].layout.ndims; i++)
        n *= s->tensor[t].layout.size[i];
    return n;
}

static size_t full_bytes(const mrt_spec *s, int t)
{
    return (size_t)mrt_reference_count(s, t) *
           (size_t)mrt_dtype_size(ref_type(s, t));
}

double mrt_reference_get(const mrt_spec *s, const void *buf, int64_t i)
{
    return mrt_reference_dtype(s) == MRT_F64 ? ((const double *)buf)[i]
                                             : ((const float *)buf)[i];
}

void mrt_reference_set(const mrt_spec *s, void *buf, int64_t i, double x)
{
    if (mrt_reference_dtype(s) == MRT_F64)
        ((double *)buf)[i] = x;
    else
        ((float *)buf)[i] = (float)x;
}

/* The n values of buf (type rt) rounded to type t, kept in rt: a cast
 * to a 16-bit type is part of the program (precision:'s copies of the
 * parameters), so the reference rounds there as the run does; what it
 * does not round is every op's result. */
static void round_to(mrt_dtype t, mrt_dtype rt, void *buf, int64_t n)
{
    char tmp[8];
    for (int64_t i = 0; t != rt && i < n; i++) {
        mrt_kernel_put(t, tmp, 0, mrt_kernel_get(rt, buf, i));
        mrt_kernel_put(rt, buf, i, mrt_kernel_get(t, tmp, 0));
    }
}

mrt_status mrt_reference_op(const mrt_spec *s, int i, void *in0, void *in1,
                            void *out)
{
    const mrt_spec_op *o = &s->op[i];
    mrt_dtype rt = mrt_reference_dtype(s);
    mrt_kview a = view_of(s, o->in[0], in0), c = view_of(s, o->out, out);
    mrt_kview b = o->nin > 1 ? view_of(s, o->in[1], in1) : a;
    const mrt_kview *bp = o->nin > 1 ? &b : NULL;
    int vdim = mrt_layout_find_dim(
        &s->tensor[o->kind == MRT_OP_GATHER ? o->in[0] : o->out].layout,
        o->from_dim);
    switch (o->kind) {
    case MRT_OP_GATHER:
        mrt_kernel_gather(rt, &a, vdim, 0, ref_type(s, o->in[1]), &b, &c);
        return MRT_OK;
    case MRT_OP_SCATTER_ADD:
        mrt_kernel_scatter_add(rt, ref_type(s, o->in[0]), &a, &b, vdim, 0, &c);
        return MRT_OK;
    case MRT_OP_MAP: {
        int64_t zero[MRT_MAX_DIMS] = {0};
        int hot = o->fn == MRT_MAP_ONE_HOT
                      ? mrt_layout_find_dim(&s->tensor[o->out].layout,
                                            o->from_dim)
                      : -1;
        if (o->fn == MRT_MAP_ONE_HOT &&
            mrt_spec_tensor_dtype(s, o->in[0]) == MRT_I32)
            mrt_kernel_one_hot_index(rt, &a, &c, hot, 0);
        else
            mrt_kernel_map(rt, o->fn, o->c, &c, &a, bp, zero, hot);
        if (o->fn == MRT_MAP_CAST) /* the program's own rounding */
            round_to(mrt_spec_tensor_dtype(s, o->out), rt, c.data,
                     mrt_reference_count(s, o->out));
        return MRT_OK;
    }
    case MRT_OP_REDUCE_MAX: mrt_kernel_reduce_max(rt, &a, &c); return MRT_OK;
    case MRT_OP_RENAME: memcpy(out, in0, full_bytes(s, o->out)); return MRT_OK;
    case MRT_OP_EINSUM:
    case MRT_OP_KIND_COUNT: break;
    }
    size_t bytes = mrt_einsum_workspace(rt, &a, bp, &c);
    void *ws = bytes < SIZE_MAX - 64 ? malloc(bytes + 64) : NULL;
    if (!ws)
        return MRT_E_NOMEM;
    mrt_kernel_einsum(rt, &a, bp, &c, ws);
    free(ws);
    return MRT_OK;
}

static mrt_status run_op(const mrt_spec *s, int i, void **bufs)
{
    const mrt_spec_op *o = &s->op[i];
    return mrt_reference_op(s, i, bufs[o->in[0]],
                            o->nin > 1 ? bufs[o->in[1]] : NULL, bufs[o->out]);
}

/* Input t whole, in its own type (16-bit values rounded as the run's
 * are), then in the reference's. */
static mrt_status init_input(const mrt_spec *s, int t, const mrt_layout *w,
                             const mrt_mesh *one, void *buf, mrt_error *err)
{
    mrt_dtype own = mrt_spec_tensor_dtype(s, t), rt = ref_type(s, t);
    if (own == rt)
        return mrt_shard_init(s, t, w, one, NULL, buf, err);
    int64_t n = mrt_reference_count(s, t);
    void *tmp = mrt_alloc_big((size_t)n * (size_t)mrt_dtype_size(own) + 1, 0);
    if (!tmp)
        return MRT_E_NOMEM;
    mrt_status st = mrt_shard_init(s, t, w, one, NULL, tmp, err);
    if (st == MRT_OK)
        mrt_kernel_convert(rt, buf, own, tmp, n);
    free(tmp);
    return st;
}

/* Every tensor of s, whole, inputs initialised; with m, their
 * magnitudes too (the inputs' set). */
static mrt_status alloc_all(const mrt_spec *s, void ***out, void ***m,
                            mrt_error *err)
{
    void **bufs = calloc((size_t)s->ntensors + 1, sizeof *bufs);
    void **mags = m ? calloc((size_t)s->ntensors + 1, sizeof *mags) : NULL;
    mrt_mesh one = {.naxes = 0, .nranks = 1};
    mrt_status st = bufs && (mags || !m) ? MRT_OK : MRT_E_NOMEM;
    for (int t = 0; st == MRT_OK && t < s->ntensors; t++) {
        if (!(bufs[t] = mrt_alloc_big(full_bytes(s, t), 0)) ||
            (m && !(mags[t] = mrt_alloc_big(full_bytes(s, t), 0))))
            st = MRT_E_NOMEM;
        else if (s->tensor[t].producer < 0) {
            mrt_layout w = whole(&s->tensor[t].layout);
            st = init_input(s, t, &w, &one, bufs[t], err);
            if (st == MRT_OK && m)
                mrt_reference_input_magnitude(s, t, bufs, mags);
        }
    }
    *out = bufs;
    if (m)
        *m = mags;
    return st;
}

static void free_all(const mrt_spec *s, void **bufs)
{
    if (bufs)
        for (int t = 0; t < s->ntensors; t++)
            free(bufs[t]);
    free(bufs);
}

/* Ops from .. to - 1, with their magnitudes when m is not NULL. */
static mrt_status run_ops(const mrt_spec *s, int from, int to, void **bufs,
                          void **m)
{
    mrt_status st = MRT_OK;
    for (int i = from; i < to && st == MRT_OK; i++) {
        st = run_op(s, i, bufs);
        if (st == MRT_OK && m)
            st = mrt_reference_op_magnitude(s, i, bufs, m);
    }
    return st;
}

/* Tensor `to`'s value (and magnitude) into tensor `from`'s buffer. */
static void carry(const mrt_spec *s, void **bufs, void **m, int from, int to)
{
    size_t n = full_bytes(s, from);
    memcpy(bufs[from], bufs[to], n);
    if (m)
        memcpy(m[from], m[to], n);
}

/* The optimizer's scalars for step t (from 1), as the runner sets them. */
static void set_scalars(const mrt_spec *s, void **bufs, void **m, int64_t t)
{
    const mrt_train *tr = &s->train;
    double x[2];
    if (tr->loss < 0 || tr->step_scalar[0] < 0)
        return;
    mrt_optimizer_scalars(tr, t, x);
    for (int i = 0; i < 2; i++) {
        mrt_reference_set(s, bufs[tr->step_scalar[i]], 0, x[i]);
        if (m)
            mrt_reference_set(s, m[tr->step_scalar[i]], 0, fabs(x[i]));
    }
}

/* Training step t (from 1; or the whole program): every op, then each
 * parameter and optimizer state takes its updated value (and
 * magnitude). */
static mrt_status step(const mrt_spec *s, int64_t t, void **bufs, void **m,
                       double *loss)
{
    set_scalars(s, bufs, m, t);
    mrt_status st = run_ops(s, 0, s->nops, bufs, m);
    const mrt_train *tr = &s->train;
    if (st != MRT_OK || tr->loss < 0)
        return st;
    *loss = mrt_reference_get(s, bufs[tr->loss], 0);
    for (int k = 0; k < tr->nparams; k++)
        carry(s, bufs, m, tr->param[k], tr->updated[k]);
    for (int k = 0; k < tr->nstate; k++)
        carry(s, bufs, m, tr->state[k], tr->state_next[k]);
    return MRT_OK;
}

/* The outputs of bufs, taken out of it into a new array. */
static void **take_outputs(const mrt_spec *s, void **bufs)
{
    void **res = calloc((size_t)s->noutputs + 1, sizeof *res);
    for (int k = 0; res && k < s->noutputs; k++) { /* outputs are distinct */
        res[k] = bufs[s->output[k]];
        bufs[s->output[k]] = NULL;
    }
    return res;
}

mrt_status mrt_reference_run(const mrt_spec *s, int64_t steps, double *losses,
                             void ***out, void ***mags, mrt_error *err)
{
    void **bufs = NULL, **m = NULL;
    *out = *mags = NULL;
    mrt_status st = alloc_all(s, &bufs, &m, err);
    for (int64_t k = 0; k < steps && st == MRT_OK; k++) {
        double loss = 0;
        st = step(s, k + 1, bufs, m, &loss);
        if (losses)
            losses[k] = loss;
    }
    if (st == MRT_OK &&
        (!(*out = take_outputs(s, bufs)) || !(*mags = take_outputs(s, m)))) {
        mrt_reference_free(s, *out);
        *out = NULL;
        st = MRT_E_NOMEM;
    }
    free_all(s, bufs);
    free_all(s, m);
    if (st == MRT_E_NOMEM)
        mrt_error_set(err, st, s->path, (mrt_mark){0},
                      "out of memory in the unsharded reference");
    return st;
}

void mrt_reference_free(const mrt_spec *s, void **outputs)
{
    for (int k = 0; outputs && k < s->noutputs; k++)
        free(outputs[k]);
    free(outputs);
}

/* The loss of the forward program with x[i] moved by h. */
static double loss_at(const mrt_spec *s, void **bufs, int x, int64_t i,
                      double h, mrt_status *st)
{
    double keep = mrt_reference_get(s, bufs[x], i);
    mrt_reference_set(s, bufs[x], i, keep + h);
    *st = run_ops(s, 0, s->train.nforward, bufs, NULL);
    mrt_reference_set(s, bufs[x], i, keep);
    return mrt_reference_get(s, bufs[s->train.loss], 0);
}

mrt_status mrt_reference_gradcheck(const mrt_spec *s, int per_tensor,
                                   mrt_gradcheck *out, int max_out, int *nout,
                                   mrt_error *err)
{
    const mrt_train *tr = &s->train;
    void **bufs = NULL, **m = NULL;
    *nout = 0;
    if (per_tensor > MRT_GRADCHECK_MAX)
        per_tensor = MRT_GRADCHECK_MAX;
    mrt_status st = alloc_all(s, &bufs, &m, err);
    if (st == MRT_OK) /* the gradients at the start, and their magnitudes */
        st = run_ops(s, 0, s->nops, bufs, m);
    for (int k = 0;
         st == MRT_OK && k < tr->nparams + tr->nextra && *nout < max_out; k++) {
        int x = k < tr->nparams ? tr->param[k] : tr->extra[k - tr->nparams];
        int gt = k < tr->nparams ? tr->grad[k]
                                 : tr->extra_grad[k - tr->nparams];
        int64_t n = mrt_reference_count(s, x),
                picks = n < per_tensor ? n : per_tensor;
        mrt_gradcheck *g = &out[(*nout)++];
        memset(g, 0, sizeof *g);
        g->tensor = x;
        g->scale = mrt_verify_scale(mrt_reference_dtype(s), bufs[gt], n);
        for (int64_t j = 0; j < picks && st == MRT_OK; j++) {
            int64_t i = (j * 7919 + 13) % n; /* spread over the tensor */
            double x0 = mrt_reference_get(s, bufs[x], i);
            double h = 1e-5 * fmax(1.0, fabs(x0));
            double up = loss_at(s, bufs, x, i, h, &st);
            double down = st == MRT_OK ? loss_at(s, bufs, x, i, -h, &st) : 0;
            if (!isfinite(up) || !isfinite(down)) { /* no difference to take */
                g->unchecked++;
                continue;
            }
            g->index[g->checked] = i;
            g->diff[g->checked] = (up - down) / (2 * h);
            g->grad[g->checked] = mrt_reference_get(s, bufs[gt], i);
            g->mag[g->checked] = mrt_reference_get(s, m[gt], i);
            g->checked++;
        }
    }
    free_all(s, bufs);
    free_all(s, m);
    if (st == MRT_E_NOMEM)
        mrt_error_set(err, st, s->path, (mrt_mark){0},
                      "out of memory in the gradient check");
    return st;
}
