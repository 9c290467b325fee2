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
 *      move; the result is then a pending sum over those axes — except
 *      over an axis another such input splits another dim over.
 *   2. Output dims take the split of the output's home layout, minus any
 *      axis a summed dim already took; such an axis is resolved by a
 *      reduce-scatter straight into the output's split.
    Then summed dims that no activation splits take the split of a
 *      parameter laid out by the global rules (Megatron's vocab-parallel
 *      embedding: `vocab: model` splits the table, the ids have no vocab
 *      dim; the lookup's result is a pending sum over `model`).
 * A parameter with a layout of its own never shapes the execution
 * layout: a parameter sharded where the op's activations are not is gathered (ZeRO-3 /
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

/* The axes a summed dim `dim` of input k must not take: those another
 * activation input of op holds `dim` unsplit over (it would have to
 * move; instead input k's split is gathered, as Megatron's sequence
 * parallelism all-gathers dL/dy over the sequence for dL/dw2 = g . dL/dy
 * and for the embedding's scatter of dL/de by the ids), and those another
 * such input splits another dim over. */
static unsigned others_axes(const mrt_plan *p, const mrt_spec *s,
                            const mrt_spec_op *o, int k, int dim)
{
    unsigned used = 0;
    for (int k2 = 0; k2 < o->nin; k2++) {
        if (k2 == k || o->in[k2] == o->in[k] || is_param(s, o->in[k2]))
            continue;
        const mrt_layout *l = &p->value[p->tensor_value[o->in[k2]]].layout;
        unsigned on_dim = 0, all = 0;
        for (int i = 0; i < l->ndims; i++)
            for (int j = 0; j < l->naxes[i]; j++) {
                all |= 1u << l->axes[i][j];
                if (l->dim[i] == dim)
                    on_dim |= 1u << l->axes[i][j];
            }
        if (mrt_layout_find_dim(l, dim) >= 0)
            used |= ~on_dim; /* it holds dim: only its own split of it */
        used |= all & ~on_dim;
    }
    return used;
}

void mrt_choose_pinned(const mrt_plan *p, const mrt_spec *s, int op,
                       const mrt_layout *home, mrt_xlayout *e)
{
    const mrt_spec_op *o = &s->op[op];
    unsigned taken = 0;
    mrt_xlayout_init(p, s, op, e);
    /* pass 0: the activations; pass 1: the parameters the global rules
     * lay out (not those with layouts of their own) */
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < o->nin; k++) {
            int param = is_param(s, o->in[k]);
            if (param != pass || (param && s->tensor[o->in[k]].own_layout))
                continue;
            const mrt_layout *in = &p->value[p->tensor_value[o->in[k]]].layout;
            for (int i = 0; i < in->ndims; i++) {
                int x = mrt_xlayout_find(e, in->dim[i]);
                if (mrt_layout_find_dim(home, in->dim[i]) >= 0 ||
                    e->naxes[x] > 0)
                    continue;
                unsigned blocked = others_axes(p, s, o, k, in->dim[i]);
                unsigned t = taken | blocked;
                take_split(e, &t, x, in, i);
                taken |= t & ~(taken | blocked); /* what dim x took */
            }
        }
    for (int i = 0; i < home->ndims; i++)
        take_split(e, &taken, mrt_xlayout_find(e, home->dim[i]), home, i);
}
