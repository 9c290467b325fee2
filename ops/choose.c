/*
 * choose.c — policy: which mesh axes split which dims of an einsum while
 * its local kernel runs (the execution layout), for the two fixed
 * strategies.  The cost-aware choice among all of them is in cheapest.c.
 *
 * The rule (MRT_STRATEGY_RULES), in order:
 *   1. Summed dims (in an input, not in the output) keep the split they
 *      have in the inputs (the first input that splits them wins), so the
 *      inputs need not move for them; the result is then a pending sum
 *      over those axes.
 *   2. Output dims take the split of the output's home layout, minus any
 *      axis a summed dim already took; such an axis is later resolved by a
 *      reduce-scatter straight into the output's split.
 * Mesh-TensorFlow (MRT_STRATEGY_MESHTF): every dim takes its global rule,
 * first come first served when two dims of the op share an axis.
 * Under the global rules alone the two agree, and every tensor already
 * sits in this layout: the plan is the local einsum plus one all-reduce
 * over the axes of split summed dims.
 */
#include <stdio.h>
#include <string.h>

#include "planning.h"

/* Appends to dim i the axes in `want` that no dim has taken yet. */
static void take(mrt_xlayout *e, unsigned *taken, int i, int n, const int *want)
{
    for (int j = 0; j < n; j++) {
        int a = want[j];
        if (*taken & (1u << a))
            continue;
        e->axes[i][e->naxes[i]++] = a;
        *taken |= 1u << a;
    }
}

/* take() of the axes that split dim j of layout l. */
static void take_split(mrt_xlayout *e, unsigned *taken, int i,
                       const mrt_layout *l, int j)
{
    int want[MRT_MAX_AXES];
    for (int k = 0; k < l->naxes[j]; k++)
        want[k] = l->axes[j][k];
    take(e, taken, i, l->naxes[j], want);
}

void mrt_choose_rules(const mrt_plan *p, const mrt_spec *s, int op,
                      const mrt_layout *home, mrt_xlayout *e)
{
    const mrt_spec_op *o = &s->op[op];
    unsigned taken = 0;
    mrt_xlayout_init(p, s, op, e);
    for (int k = 0; k < o->nin; k++) {
        const mrt_layout *in = &p->value[p->tensor_value[o->in[k]]].layout;
        for (int i = 0; i < in->ndims; i++) {
            int x = mrt_xlayout_find(e, in->dim[i]);
            if (mrt_layout_find_dim(home, in->dim[i]) >= 0 || e->naxes[x] > 0)
                continue;
            take_split(e, &taken, x, in, i);
        }
    }
    for (int i = 0; i < home->ndims; i++)
        take_split(e, &taken, mrt_xlayout_find(e, home->dim[i]), home, i);
}

void mrt_choose_meshtf(const mrt_plan *p, const mrt_spec *s, int op,
                       mrt_xlayout *e)
{
    unsigned taken = 0;
    mrt_xlayout_init(p, s, op, e);
    for (int i = 0; i < e->ndims; i++) {
        const mrt_rule *r = &s->rule[e->dim[i]];
        take(e, &taken, i, r->naxes, r->axes);
    }
}
