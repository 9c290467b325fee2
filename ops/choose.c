/*
 * choose.c — policy: which mesh axes split which dims of an einsum while
 * its local kernel runs (the execution layout).
 *
 * The rule, in order:
 *   1. Summed dims (in an input, not in the output) keep the split they
 *      have in the inputs (the first input that splits them wins), so the
 *      inputs need not move for them; the result is then a pending sum
 *      over those axes.
 *   2. Output dims take the split of the output's home layout, minus any
 *      axis a summed dim already took; such an axis is later resolved by a
 *      reduce-scatter straight into the output's split.
 * Under the global rules alone every tensor already sits in this layout,
 * so the plan is Mesh-TensorFlow's: local einsum plus one all-reduce over
 * the axes of split summed dims.  The cost-aware choice among several
 * execution layouts is a separate policy (see docs/).
 */
#include <string.h>

#include "plan.h"

/* Appends to dim d the axes in `want` that no dim has taken yet. */
static void take(mrt_exec_layout *e, unsigned *taken, int d, int n,
                 const int *want)
{
    for (int j = 0; j < n; j++) {
        int a = want[j];
        if (*taken & (1u << a))
            continue;
        e->axes[d][e->naxes[d]++] = a;
        *taken |= 1u << a;
    }
}

void mrt_choose_einsum_layout(const mrt_plan *p, const mrt_spec *s, int op,
                              mrt_exec_layout *e)
{
    const mrt_spec_op *o = &s->op[op];
    const mrt_layout *out = &s->tensor[o->out].layout;
    unsigned taken = 0;
    memset(e->naxes, 0, sizeof(int) * (size_t)e->ndims);

    for (int k = 0; k < o->nin; k++) {
        const mrt_layout *in = &p->value[p->tensor_value[o->in[k]]].layout;
        for (int i = 0; i < in->ndims; i++) {
            int d = in->dim[i];
            if (mrt_layout_find_dim(out, d) >= 0 || e->naxes[d] > 0)
                continue;
            take(e, &taken, d, in->naxes[i], in->axes[i]);
        }
    }
    for (int i = 0; i < out->ndims; i++)
        take(e, &taken, out->dim[i], out->naxes[i], out->axes[i]);
}
