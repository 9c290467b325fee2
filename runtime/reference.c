/*
 * reference.c — the unsharded computation that --verify compares with:
 * every tensor whole on one rank, every op one call of the local kernel
 * on the full tensors.  No mesh, no layouts, no collectives.  With
 * `train:` it runs the same SGD steps, and it can check the gradients
 * of the backward program against central finite differences of the
 * forward one.
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

static mrt_kview full_view(const mrt_spec *s, int t, void **bufs)
{
    const mrt_layout *l = &s->tensor[t].layout;
    return (mrt_kview){.ndims = l->ndims, .dim = l->dim, .ext = l->size,
                       .data = bufs[t]};
}

static int64_t full_count(const mrt_spec *s, int t)
{
    int64_t n = 1;
    for (int i = 0; i < s->tensor[t].layout.ndims; i++)
        n *= s->tensor[t].layout.size[i];
    return n;
}

static size_t full_bytes(const mrt_spec *s, int t)
{
    return (size_t)full_count(s, t) * (size_t)mrt_dtype_size(s->dtype);
}

static mrt_status run_op(const mrt_spec *s, int i, void **bufs)
{
    const mrt_spec_op *o = &s->op[i];
    mrt_kview a = full_view(s, o->in[0], bufs), c = full_view(s, o->out, bufs);
    mrt_kview b = o->nin > 1 ? full_view(s, o->in[1], bufs) : a;
    const mrt_kview *bp = o->nin > 1 ? &b : NULL;
    switch (o->kind) {
    case MRT_OP_MAP: {
        int64_t zero[MRT_MAX_DIMS] = {0};
        int hot = o->fn == MRT_MAP_ONE_HOT
                      ? mrt_layout_find_dim(&s->tensor[o->out].layout,
                                            o->from_dim)
                      : -1;
        mrt_kernel_map(s->dtype, o->fn, o->c, &c, &a, bp, zero, hot);
        return MRT_OK;
    }
    case MRT_OP_REDUCE_MAX:
        mrt_kernel_reduce_max(s->dtype, &a, &c);
        return MRT_OK;
    case MRT_OP_RENAME:
        memcpy(c.data, a.data, full_bytes(s, o->out));
        return MRT_OK;
    case MRT_OP_EINSUM:
    case MRT_OP_KIND_COUNT:
        break;
    }
    size_t bytes = mrt_einsum_workspace(s->dtype, &a, bp, &c);
    void *ws = bytes < SIZE_MAX - 64 ? malloc(bytes + 64) : NULL;
    if (!ws)
        return MRT_E_NOMEM;
    mrt_kernel_einsum(s->dtype, &a, bp, &c, ws);
    free(ws);
    return MRT_OK;
}

static double get(const mrt_spec *s, const void *buf, int64_t i)
{
    return s->dtype == MRT_F64 ? ((const double *)buf)[i]
                               : ((const float *)buf)[i];
}

static void set(const mrt_spec *s, void *buf, int64_t i, double x)
{
    if (s->dtype == MRT_F64)
        ((double *)buf)[i] = x;
    else
        ((float *)buf)[i] = (float)x;
}

/* Every tensor of s, whole, inputs initialised. */
static mrt_status alloc_all(const mrt_spec *s, void ***out, mrt_error *err)
{
    void **bufs = calloc((size_t)s->ntensors + 1, sizeof *bufs);
    mrt_mesh one = {.naxes = 0, .nranks = 1};
    mrt_status st = bufs ? MRT_OK : MRT_E_NOMEM;
    for (int t = 0; st == MRT_OK && t < s->ntensors; t++) {
        if (!(bufs[t] = mrt_alloc_big(full_bytes(s, t), 0)))
            st = MRT_E_NOMEM;
        else if (s->tensor[t].producer < 0) {
            mrt_layout w = whole(&s->tensor[t].layout);
            st = mrt_shard_init(s, t, &w, &one, NULL, bufs[t], err);
        }
    }
    *out = bufs;
    return st;
}

static void free_all(const mrt_spec *s, void **bufs)
{
    if (bufs)
        for (int t = 0; t < s->ntensors; t++)
            free(bufs[t]);
    free(bufs);
}

static mrt_status run_ops(const mrt_spec *s, int from, int to, void **bufs)
{
    mrt_status st = MRT_OK;
    for (int i = from; i < to && st == MRT_OK; i++)
        st = run_op(s, i, bufs);
    return st;
}

/* One training step (or the whole program): every op, then each
 * parameter takes its updated value. */
static mrt_status step(const mrt_spec *s, void **bufs, double *loss)
{
    mrt_status st = run_ops(s, 0, s->nops, bufs);
    const mrt_train *tr = &s->train;
    if (st != MRT_OK || tr->loss < 0)
        return st;
    *loss = get(s, bufs[tr->loss], 0);
    for (int k = 0; k < tr->nparams; k++)
        memcpy(bufs[tr->param[k]], bufs[tr->updated[k]],
               full_bytes(s, tr->param[k]));
    return MRT_OK;
}

mrt_status mrt_reference_run(const mrt_spec *s, int64_t steps, double *losses,
                             void ***out, mrt_error *err)
{
    void **bufs = NULL;
    void **res = calloc((size_t)s->noutputs + 1, sizeof *res);
    *out = NULL;
    mrt_status st = res ? alloc_all(s, &bufs, err) : MRT_E_NOMEM;
    for (int64_t k = 0; k < steps && st == MRT_OK; k++) {
        double loss = 0;
        st = step(s, bufs, &loss);
        if (losses)
            losses[k] = loss;
    }
    if (st == MRT_OK) {
        for (int k = 0; k < s->noutputs; k++) { /* outputs are distinct */
            res[k] = bufs[s->output[k]];
            bufs[s->output[k]] = NULL;
        }
        free_all(s, bufs);
        *out = res;
        return MRT_OK;
    }
    free_all(s, bufs);
    free(res);
    if (st == MRT_E_NOMEM)
        mrt_error_set(err, st, s->path, (mrt_mark){0},
                      "out of memory in the unsharded reference");
    return st;
}

/* The loss of the forward program with x[i] moved by h. */
static double loss_at(const mrt_spec *s, void **bufs, int x, int64_t i,
                      double h, mrt_status *st)
{
    double keep = get(s, bufs[x], i);
    set(s, bufs[x], i, keep + h);
    *st = run_ops(s, 0, s->train.nforward, bufs);
    set(s, bufs[x], i, keep);
    return get(s, bufs[s->train.loss], 0);
}

mrt_status mrt_reference_gradcheck(const mrt_spec *s, int per_tensor,
                                   mrt_gradcheck *out, int max_out,
                                   int *nout, mrt_error *err)
{
    const mrt_train *tr = &s->train;
    void **bufs = NULL;
    *nout = 0;
    if (per_tensor > MRT_GRADCHECK_MAX)
        per_tensor = MRT_GRADCHECK_MAX;
    mrt_status st = alloc_all(s, &bufs, err);
    if (st == MRT_OK)
        st = run_ops(s, 0, s->nops, bufs); /* the gradients at the start */
    for (int k = 0; st == MRT_OK && k < tr->nparams + tr->nextra &&
                    *nout < max_out;
         k++) {
        int x = k < tr->nparams ? tr->param[k] : tr->extra[k - tr->nparams];
        int gt = k < tr->nparams ? tr->grad[k] : tr->extra_grad[k - tr->nparams];
        int64_t n = full_count(s, x), picks = n < per_tensor ? n : per_tensor;
        mrt_gradcheck *g = &out[(*nout)++];
        memset(g, 0, sizeof *g);
        g->tensor = x;
        g->scale = mrt_verify_scale(s->dtype, bufs[gt], n);
        for (int64_t j = 0; j < picks && st == MRT_OK; j++) {
            int64_t i = (j * 7919 + 13) % n; /* spread over the tensor */
            double x0 = get(s, bufs[x], i);
            double h = 1e-5 * fmax(1.0, fabs(x0));
            double up = loss_at(s, bufs, x, i, h, &st);
            double down = st == MRT_OK ? loss_at(s, bufs, x, i, -h, &st) : 0;
            if (!isfinite(up) || !isfinite(down)) { /* no difference to take */
                g->unchecked++;
                continue;
            }
            g->index[g->checked] = i;
            g->diff[g->checked] = (up - down) / (2 * h);
            g->grad[g->checked] = get(s, bufs[gt], i);
            g->checked++;
        }
    }
    free_all(s, bufs);
    if (st == MRT_E_NOMEM)
        mrt_error_set(err, st, s->path, (mrt_mark){0},
                      "out of memory in the gradient check");
    return st;
}
