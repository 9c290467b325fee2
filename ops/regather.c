/*
 * regather.c — FSDP's second all-gather under the pinned planner: a
 * parameter with `reshard_after_forward: true` is gathered again in the
 * backward pass even when no backward op reads it.
 *
 * relayout.c already moves such a parameter again for each backward
 * reader (the copy moved for the forward pass is not kept).  A parameter
 * whose gradient does not read it — a bias or a position table, only
 * added — has no backward reader, so the cost-aware planner never
 * gathers it again.  FSDP (and DeepSpeed's ZeRO-3) gather every
 * parameter of a unit before the unit's backward pass, read or not, and
 * a named ZeRO-3 alternative must move what ZeRO-3 moves: 3(n-1)/n of
 * the parameters per step.  So under MRT_STRATEGY_PINNED the first
 * backward op that makes a piece of such a parameter's gradient (the
 * sum of dL/dy over the batch, for a bias) first gathers the parameter
 * again into the layout its forward copy had; nothing reads that copy,
 * and its life ends at that step.  The auto planner skips it, and
 * `compare`'s "auto saves" column shows the saving.
 */
#include "planning.h"

#include <stdlib.h>

/* For each op of s, the parameter it gathers again before it runs, or
 * -1: a trained parameter with tensor.reshard that no backward op reads,
 * at the first backward op whose result is a piece of its gradient.
 * NULL when s has no such parameter or when out of memory (*nomem). */
int *mrt_regather_table(const mrt_spec *s, int *nomem)
{
    const mrt_train *tr = &s->train;
    *nomem = 0;
    int any = 0;
    for (int i = 0; tr->loss >= 0 && i < tr->nparams; i++)
        any |= s->tensor[tr->param[i]].reshard;
    if (!any)
        return NULL;
    int *read = calloc((size_t)s->ntensors + 1, sizeof *read);
    int *table = malloc(((size_t)s->nops + 1) * sizeof *table);
    if (!read || !table) {
        free(read);
        free(table);
        *nomem = 1;
        return NULL;
    }
    for (int i = 0; i < s->nops; i++)
        for (int k = 0; k < s->op[i].nin; k++)
            if (s->op[i].phase == MRT_PHASE_BACKWARD)
                read[s->op[i].in[k]] = 1;
    for (int i = 0; i < tr->nparams; i++)
        if (!s->tensor[tr->param[i]].reshard)
            read[tr->param[i]] = 1; /* as if read: no second gather */
    for (int i = 0; i < s->nops; i++) {
        const mrt_spec_tensor *t = &s->tensor[s->op[i].out];
        int w = t->grad_like - 1;
        table[i] = -1;
        if (s->op[i].phase != MRT_PHASE_BACKWARD || w < 0 || !t->grad_piece ||
            read[w])
            continue;
        table[i] = w;
        read[w] = 1; /* once */
    }
    free(read);
    return table;
}

/* The layout of the newest copy of tensor t moved in the forward pass,
 * or NULL when the forward pass read it where it lives. */
static const mrt_layout *forward_copy(const mrt_planning *pl, int t)
{
    const mrt_plan *p = pl->plan;
    for (int v = pl->last_value[t]; v >= 0; v = p->value[v].prev) {
        int by = p->value[v].made_by;
        if (by >= 0 && p->op[by].phase == MRT_PHASE_FORWARD &&
            by != pl->spec->tensor[t].producer)
            return &p->value[v].layout;
    }
    return NULL;
}

int mrt_regather_emit(mrt_planning *pl, int op)
{
    if (pl->strategy != MRT_STRATEGY_PINNED || !pl->regather ||
        pl->regather[op] < 0)
        return 0;
    int w = pl->regather[op];
    const mrt_layout *to = forward_copy(pl, w);
    if (!to)
        return 0;
    mrt_layout l = *to; /* the value table may grow under it */
    return mrt_relayout_emit(pl, op, pl->plan->tensor_value[w], &l, 0) < 0 ? -1
                                                                           : 0;
}
