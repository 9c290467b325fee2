/*
 * step_widen.c — which operands of a compute step are converted around
 * its kernel, and the bytes of their copies (step_widen.h).
 */
#include "step_widen.h"

static int computes(mrt_step_kind k)
{
    return k == MRT_STEP_EINSUM || k == MRT_STEP_MAP ||
           k == MRT_STEP_REDUCE_MAX || k == MRT_STEP_GATHER ||
           k == MRT_STEP_SCATTER_ADD;
}

mrt_dtype mrt_step_compute_dtype(const mrt_plan *p, const mrt_step *s)
{
    if (!computes(s->kind))
        return p->value[s->in].dtype;
    const int v[MRT_WIDEN_OPERANDS] = {s->in, s->in2, s->out};
    for (int k = 0; k < MRT_WIDEN_OPERANDS; k++)
        if (v[k] >= 0 && p->value[v[k]].dtype == MRT_F64)
            return MRT_F64;
    return MRT_F32;
}

int mrt_step_widens(const mrt_plan *p, const mrt_step *s, int v)
{
    if (v < 0 || !computes(s->kind))
        return 0;
    mrt_dtype t = p->value[v].dtype;
    return t != MRT_I32 && t != mrt_step_compute_dtype(p, s);
}

int64_t mrt_step_widen_bytes(const mrt_plan *p, const mrt_step *s)
{
    const int v[MRT_WIDEN_OPERANDS] = {s->in, s->in2, s->out};
    mrt_dtype ct = mrt_step_compute_dtype(p, s);
    int64_t bytes = 0;
    for (int k = 0; k < MRT_WIDEN_OPERANDS; k++)
        if (mrt_step_widens(p, s, v[k]))
            bytes += mrt_widen_round(p->value[v[k]].count, ct);
    return bytes;
}
