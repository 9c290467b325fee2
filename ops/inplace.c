/*
 * inplace.c — the in-place updates of a training step: the updated
 * parameter (w:next) and each optimizer state's result (w:m:next) share
 * the buffer of the value they replace, so a plan holds one copy of a
 * parameter and of its state, not two, and the runner has nothing to
 * copy after a step (runner_execute.c's take_step compares buffers).
 *
 * A value b may share the buffer of value a when nothing can tell: the
 * same tensor shape and layout (so the same bytes), and every read of a
 * done before the step that makes b — or at that step itself, when it
 * is an elementwise map reading a element for element (kernel_map.c's
 * kernels read element i before they write it).  A collective in the
 * background reads its input until its wait: that counts as a read.
 * Otherwise the pair keeps two buffers and the runner copies.
 *
 * The result is a property of the value (mrt_value.alias_of), which
 * plan_finish.c's placement and peak read: b takes a's offset and adds
 * no bytes of its own.
 */
#include <stdlib.h>

#include "planning.h"

/* The last step that reads value a (its wait, for a collective in the
 * background), or -1: from last[] when there is one (read_ends), else
 * by a walk of the steps. */
static int last_read(const mrt_plan *p, const int *last, int a)
{
    if (last)
        return last[a];
    int end = -1;
    for (int k = 0; k < p->nsteps; k++) {
        const mrt_step *s = &p->step[k];
        if (s->in != a && s->in2 != a)
            continue;
        int e = s->wait > 0 ? s->wait - 1 : k;
        end = e > end ? e : end;
    }
    return end;
}

/* Every value's last read in one walk of the steps (a plan of 96 layers
 * and their microbatches has ~10^5 steps and ~10^4 updates: a walk per
 * update was most of its planning time); NULL when out of memory. */
static int *read_ends(const mrt_plan *p)
{
    int *last = malloc(((size_t)p->nvalues + 1) * sizeof *last);
    if (!last)
        return NULL;
    for (int v = 0; v < p->nvalues; v++)
        last[v] = -1;
    for (int k = 0; k < p->nsteps; k++) {
        const mrt_step *s = &p->step[k];
        int e = s->wait > 0 ? s->wait - 1 : k;
        if (s->in >= 0 && e > last[s->in])
            last[s->in] = e;
        if (s->in2 >= 0 && e > last[s->in2])
            last[s->in2] = e;
    }
    return last;
}

/* 1 if value b, made by its step, may be written over value a. */
static int may_share(const mrt_plan *p, const int *ends, int a, int b)
{
    const mrt_value *x = &p->value[a], *y = &p->value[b];
    if (a < 0 || b < 0 || a == b || x->alias_of || y->def < 0 ||
        x->count != y->count || x->dtype != y->dtype ||
        !mrt_layout_equal(&x->layout, &y->layout))
        return 0;
    int k = y->def, last = last_read(p, ends, a);
    if (last < k)
        return 1;
    const mrt_step *s = &p->step[k];
    return last == k && s->kind == MRT_STEP_MAP && s->out == b &&
           (s->in == a || s->in2 == a) && (s->wait < 0 || s->wait <= k + 1);
}

void mrt_plan_alias_updates(mrt_plan *p, const mrt_spec *s)
{
    const mrt_train *tr = &s->train;
    if (tr->loss < 0)
        return;
    int *ends = read_ends(p);
    for (int k = 0; k < tr->nparams + tr->nstate; k++) {
        int from = k < tr->nparams ? tr->param[k] : tr->state[k - tr->nparams];
        int to = k < tr->nparams ? tr->updated[k]
                                 : tr->state_next[k - tr->nparams];
        int a = p->tensor_value[from], b = p->tensor_value[to];
        if (may_share(p, ends, a, b))
            p->value[b].alias_of = 1 + a;
    }
    free(ends);
}
