/*
 * choose_pinned.c — policy of the pinned planner (MRT_STRATEGY_PINNED:
 * `--planner rules`, and an alternative with `pin: true`): the execution
 * layout of an einsum when every tensor must keep the layout its rules
 * and its own layouts give, whatever the machine.
 *
 * The computation follows the activations; the parameters move to it.
 * In order:
 *   1. Summed dims take the split they have in the first input that is
 *      not a trained parameter and splits them, so those inputs need not
 *      move; the result is then a pending sum over those axes.
 *   2. Output dims take the split of the output's home layout, minus any
 *      axis a summed dim already took; such an axis is resolved by a
 *      reduce-scatter straight into the output's split.
 * A parameter's split never shapes the execution layout: a parameter
 * sharded where the op's activations are not is gathered (ZeRO-3 /
 * FSDP), and a gradient computed on batch shards is reduced into its own
 * layout (all-reduce when replicated: DDP; reduce-scatter when sharded:
 * ZeRO).  On a program without `train:` this is ops/choose.c's rule.
 * The choice depends on the layouts alone, never on the profile, so the
 * collectives of a pinned plan (and their bytes) are the same on every
 * machine; only their modeled times differ.
 */
#include "planning.h"

/* 1 if tensor t is a parameter of the spec's `train:`. */
static int is_param(const mrt_spec *s, int t)
{
    for (int i = 0; s->train.loss >= 0 && i < s->train.nparams; i++)
        if (s->train.param[i] == t)
            return 1;
    return 0;
}

/* Appends to dim x of e the axes of dim i of l that no dim has taken. */
static void take_split(mrt_xlayout *e, unsigned *taken, int x,
                       const mrt_layout *l, int i)
{
    for (int j = 0; j < l->naxes[i]; j++) {
        int a = l->axes[i][j];
        if (*taken & (1u << a))
            continue;
        e->axes[x][e->naxes[x]++] = a;
        *taken |= 1u << a;
    }
}

void mrt_choose_pinned(const mrt_plan *p, const mrt_spec *s, int op,
                       const mrt_layout *home, mrt_xlayout *e)
{
    const mrt_spec_op *o = &s->op[op];
    unsigned taken = 0;
    mrt_xlayout_init(p, s, op, e);
    for (int k = 0; k < o->nin; k++) {
        if (is_param(s, o->in[k]))
            continue;
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
