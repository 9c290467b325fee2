/*
 * lazy_sum.c — which results the fixed strategies (the rule and
 * Mesh-TensorFlow's lowering) leave as pending sums for their consumer:
 * Mesh-TF's lazy all-reduce.  Mesh-TF lowers an einsum over a split
 * summed dim to a LazyAllreduceSum, which an add of another one pending
 * over the same axes adds locally and keeps lazy; anything else reduces
 * it first.  So C1 + C2 of two such results costs one all-reduce, not two,
 * and a gradient summed over several uses of a tensor (tied weights, an
 * input read by the q, k and v projections: ir/grad.c adds the
 * contributions that may be pending before the others) is reduced once.
 *
 * Here a result may stay pending when its one reader is an add whose
 * other input may be pending too: made by an einsum (or an op lowered as
 * one), or by such an add.
 * Whether the two are pending over the same axes is known only as the
 * add is lowered (lower_map.c): if not, it resolves both there, for the
 * same bytes as resolving each where it was made.  The cost-aware choice
 * (cheapest.c) weighs deferral itself and does not use this table.
 */
#include <stdlib.h>

#include "planning.h"

/* 1 if tensor t may be a pending sum under the fixed strategies: made by
 * an op lowered as an einsum (lower_einsum.c: every kind that is not
 * lower_map.c's local op, so an embedding's lookup and its gradient's
 * sum of rows too), or by an add of two such (pend[] of earlier tensors). */
static int may_pend(const mrt_spec *s, const int *pend, int t)
{
    int op = s->tensor[t].producer;
    if (op < 0)
        return 0;
    const mrt_spec_op *o = &s->op[op];
    if (o->kind != MRT_OP_MAP && o->kind != MRT_OP_REDUCE_MAX &&
        o->kind != MRT_OP_RENAME)
        return 1;
    return o->kind == MRT_OP_MAP && o->fn == MRT_MAP_ADD && o->nin == 2 &&
           pend[o->in[0]] && pend[o->in[1]];
}

int *mrt_lazy_sums(const mrt_spec *s, const int *deferrable)
{
    int n = s->ntensors + 1;
    int *pend = calloc((size_t)n, sizeof *pend);
    int *lazy = calloc((size_t)n, sizeof *lazy);
    if (!pend || !lazy) {
        free(pend);
        free(lazy);
        return NULL;
    }
    for (int i = 0; i < s->nops; i++) /* ops in order: inputs come first */
        pend[s->op[i].out] = may_pend(s, pend, s->op[i].out);
    for (int i = 0; i < s->nops; i++) {
        const mrt_spec_op *o = &s->op[i];
        if (o->kind != MRT_OP_MAP || o->fn != MRT_MAP_ADD || o->nin != 2)
            continue;
        for (int k = 0; k < 2; k++) {
            int t = o->in[k], other = o->in[1 - k];
            lazy[t] = deferrable[t] && pend[t] && pend[other];
        }
    }
    free(pend);
    return lazy;
}
