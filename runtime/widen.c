/*
 * widen.c — a compute step's 16-bit (or otherwise converted) operands
 * around its kernel: the rule is ops/step_widen.h's, the layout the one
 * the planner counted in the step's workspace (plan_finish.c): a copy
 * of each converted operand, in the order in, in2, out, each 64-byte
 * aligned and sized for the largest shard, then the kernel's own
 * workspace.  The inputs are widened exactly; the result is computed in
 * its copy and narrowed once, rounded to nearest even.  An einsum of
 * 16-bit operands computed in float32 converts them panel by panel
 * instead (kernels/kernel_einsum16.c), in the same bytes: no float32
 * copy of a whole operand goes to memory and back.
 */
#include <assert.h>

#include "kernel.h"
#include "runtime.h"
#include "step_widen.h"

void mrt_widen_inputs(mrt_exec *e, const mrt_step *s, mrt_widen *w)
{
    const mrt_plan *p = e->plan;
    const int v[MRT_WIDEN_OPERANDS] = {s->in, s->in2, s->out};
    char *at = e->workspace;
    w->t = mrt_step_compute_dtype(p, s);
    for (int k = 0; k < MRT_WIDEN_OPERANDS; k++) {
        w->data[k] = v[k] >= 0 ? e->buf[v[k]] : NULL;
        if (!mrt_step_widens(p, s, v[k]))
            continue;
        w->data[k] = at;
        at += mrt_widen_round(p->value[v[k]].count, w->t);
        if (k < 2) /* an input: widened now */
            mrt_kernel_convert(w->t, w->data[k], p->value[v[k]].dtype,
                               e->buf[v[k]], mrt_exec_mine(e, v[k], NULL));
    }
    w->rest = at;
}

void mrt_widen_output(mrt_exec *e, const mrt_step *s, const mrt_widen *w)
{
    const mrt_plan *p = e->plan;
    if (mrt_step_widens(p, s, s->out))
        mrt_kernel_convert(p->value[s->out].dtype, e->buf[s->out], w->t,
                           w->data[2], mrt_exec_mine(e, s->out, NULL));
}

int mrt_widen_einsum(mrt_exec *e, const mrt_step *s, const mrt_kview *a,
                     const mrt_kview *b, const mrt_kview *c)
{
    const mrt_plan *p = e->plan;
    /* an update in place (its result in an input's buffer) reads the
     * input's copy while the result is written */
    if (!b || mrt_step_compute_dtype(p, s) != MRT_F32 ||
        mrt_step_widen_bytes(p, s) == 0 || c->data == a->data ||
        c->data == b->data)
        return 0;
    const mrt_dtype t[3] = {p->value[s->in].dtype, p->value[s->in2].dtype,
                            p->value[s->out].dtype};
    /* the panels are blocks of the converted operands: they fit in the
     * bytes planned for those operands' copies */
    assert(mrt_einsum16_workspace(t, a, b, c) <=
           (size_t)mrt_step_widen_bytes(p, s));
    return mrt_kernel_einsum16(t, a, b, c, e->workspace);
}
