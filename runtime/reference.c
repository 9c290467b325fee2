/*
 * reference.c — the unsharded computation that --verify compares with:
 * every tensor whole on one rank, every op one call of the local kernel
 * (BLIS) on the full tensors.  No mesh, no layouts, no collectives.
 */
#include <stdlib.h>

#include "kernel.h"
#include "kernel_plan.h"
#include "runtime.h"

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

static size_t full_bytes(const mrt_spec *s, int t)
{
    size_t n = (size_t)mrt_dtype_size(s->dtype);
    for (int i = 0; i < s->tensor[t].layout.ndims; i++)
        n *= (size_t)s->tensor[t].layout.size[i];
    return n;
}

static mrt_status run_op(const mrt_spec *s, int i, void **bufs)
{
    const mrt_spec_op *o = &s->op[i];
    mrt_kview a = full_view(s, o->in[0], bufs), c = full_view(s, o->out, bufs);
    mrt_kview b = o->nin > 1 ? full_view(s, o->in[1], bufs) : a;
    const mrt_kview *bp = o->nin > 1 ? &b : NULL;
    void *ws = malloc(mrt_einsum_workspace(s->dtype, &a, bp, &c) + 64);
    if (!ws)
        return MRT_E_NOMEM;
    mrt_kernel_einsum(s->dtype, &a, bp, &c, ws);
    free(ws);
    return MRT_OK;
}

mrt_status mrt_reference_run(const mrt_spec *s, void ***out, mrt_error *err)
{
    mrt_status st = MRT_E_NOMEM;
    void **bufs = calloc((size_t)s->ntensors + 1, sizeof *bufs);
    void **res = calloc((size_t)s->noutputs + 1, sizeof *res);
    *out = NULL;
    if (!bufs || !res)
        goto fail;
    mrt_mesh one = {.naxes = 0, .nranks = 1};
    for (int t = 0; t < s->ntensors; t++) {
        if (!(bufs[t] = malloc(full_bytes(s, t))))
            goto fail;
        if (s->tensor[t].producer < 0) {
            mrt_layout w = whole(&s->tensor[t].layout);
            if ((st = mrt_shard_init(s, t, &w, &one, NULL, bufs[t], err)))
                goto fail;
        }
    }
    for (int i = 0; i < s->nops; i++)
        if ((st = run_op(s, i, bufs)) != MRT_OK)
            goto fail;
    for (int k = 0; k < s->noutputs; k++) { /* outputs are distinct */
        res[k] = bufs[s->output[k]];
        bufs[s->output[k]] = NULL;
    }
    for (int t = 0; t < s->ntensors; t++)
        free(bufs[t]);
    free(bufs);
    *out = res;
    return MRT_OK;
fail:
    if (bufs)
        for (int t = 0; t < s->ntensors; t++)
            free(bufs[t]);
    free(bufs);
    free(res);
    if (st == MRT_E_NOMEM)
        mrt_error_set(err, st, s->path, (mrt_mark){0},
                      "out of memory in the unsharded reference");
    return st;
}
