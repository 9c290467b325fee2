/*
 * choose.c — policy: which mesh axes split which dims of an einsum while
 * its local kernel runs (the execution layout), for the two fixed
 * strategies.  The cost-aware search over all of them is in search.c.
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

#include "plan.h"

static void add_dim(mrt_exec_layout *e, int dim, int64_t size)
{
    if (mrt_exec_find(e, dim) >= 0)
        return;
    e->dim[e->ndims] = dim;
    e->size[e->ndims] = size;
    e->naxes[e->ndims++] = 0;
}

void mrt_exec_init(const mrt_plan *p, const mrt_spec *s, int op,
                   mrt_exec_layout *e)
{
    const mrt_spec_op *o = &s->op[op];
    const mrt_layout *out = &s->tensor[o->out].layout;
    memset(e, 0, sizeof *e);
    for (int i = 0; i < out->ndims; i++)
        add_dim(e, out->dim[i], out->size[i]);
    for (int k = 0; k < o->nin; k++) {
        const mrt_layout *in = &p->value[p->tensor_value[o->in[k]]].layout;
        for (int i = 0; i < in->ndims; i++)
            add_dim(e, in->dim[i], in->size[i]);
    }
}

int mrt_exec_find(const mrt_exec_layout *e, int dim)
{
    for (int i = 0; i < e->ndims; i++)
        if (e->dim[i] == dim)
            return i;
    return -1;
}

char *mrt_exec_str(const mrt_plan *p, const mrt_exec_layout *e, char *buf,
                   int size)
{
    int n = 0;
    buf[0] = '\0';
    for (int i = 0; i < e->ndims && n < size; i++) {
        if (!e->naxes[i])
            continue;
        n += snprintf(buf + n, (size_t)(size - n), "%s%s", n ? " " : "",
                      p->dim_names[e->dim[i]]);
        for (int j = 0; j < e->naxes[i] && n < size; j++)
            n += snprintf(buf + n, (size_t)(size - n), "%c%s", j ? '+' : '/',
                          p->mesh.name[e->axes[i][j]]);
    }
    if (!n)
        snprintf(buf, (size_t)size, "(all replicated)");
    return buf;
}

/* Appends to dim i the axes in `want` that no dim has taken yet. */
static void take(mrt_exec_layout *e, unsigned *taken, int i, int n,
                 const int *want)
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
static void take_split(mrt_exec_layout *e, unsigned *taken, int i,
                       const mrt_layout *l, int j)
{
    int want[MRT_MAX_AXES];
    for (int k = 0; k < l->naxes[j]; k++)
        want[k] = l->axes[j][k];
    take(e, taken, i, l->naxes[j], want);
}

void mrt_choose_rules(const mrt_plan *p, const mrt_spec *s, int op,
                      const mrt_layout *home, mrt_exec_layout *e)
{
    const mrt_spec_op *o = &s->op[op];
    unsigned taken = 0;
    mrt_exec_init(p, s, op, e);
    for (int k = 0; k < o->nin; k++) {
        const mrt_layout *in = &p->value[p->tensor_value[o->in[k]]].layout;
        for (int i = 0; i < in->ndims; i++) {
            int x = mrt_exec_find(e, in->dim[i]);
            if (mrt_layout_find_dim(home, in->dim[i]) >= 0 || e->naxes[x] > 0)
                continue;
            take_split(e, &taken, x, in, i);
        }
    }
    for (int i = 0; i < home->ndims; i++)
        take_split(e, &taken, mrt_exec_find(e, home->dim[i]), home, i);
}

void mrt_choose_meshtf(const mrt_plan *p, const mrt_spec *s, int op,
                       mrt_exec_layout *e)
{
    unsigned taken = 0;
    mrt_exec_init(p, s, op, e);
    for (int i = 0; i < e->ndims; i++) {
        const mrt_rule *r = &s->rule[e->dim[i]];
        take(e, &taken, i, r->naxes, r->axes);
    }
}
