/*
 * relayout.c — moving a tensor from one layout to another: the greedy
 * sequence, one mesh axis at a time, and the choice between it and the
 * cheapest path's (relayout_path.c).
 *
 * For each dim, the axes that split it in both layouts form a common
 * prefix; axes after the prefix must go, the target's remaining axes must
 * come, in order (only the minor end of a split can change without
 * reshuffling the blocks).  The moves, cheapest first:
 *   slice           a free axis is appended to a dim that is ready for it
 *                   (local, no communication: less data for what follows)
 *   reduce-scatter  a pending sum over axis a, where a dim is ready for a
 *   all-reduce      the pending sums no dim of the target wants, in one
 *                   collective over all their axes (Mesh-TensorFlow)
 *   permute         a dim keeps the same axes beyond its common prefix but
 *                   in another nesting order: one exchange of whole shards
 *                   over those axes (gathering them would cost far more)
 *   all-to-all      axis a leaves the minor end of one dim for another dim
 *                   that is ready for it
 *   all-gather      axis a leaves the minor end of a dim
 * "Ready" means the dim holds exactly its common prefix plus the target
 * axes already added, and a is the next one.  Each move frees or places
 * one axis, so the loop ends; when it does the value has the target
 * layout.  Pending sums that a target dim wants wait until that dim is
 * ready and become a reduce-scatter (never an all-reduce and a slice).
 * Axes of size 1 are ignored throughout: moving along them moves nothing.
 * Pending sums the target keeps are left alone; with allreduce_only
 * (Mesh-TensorFlow), every sum resolved is all-reduced, then sliced.
 *
 * That greedy sequence is what Mesh-TensorFlow's planner keeps.  When it
 * needs more than one collective, or an all-to-all or a permute, the
 * pathfinder of relayout_path.c (which also moves several axes in one
 * all-to-all, and slices onto dims that move anyway) looks for a cheaper
 * one under the cost model, and its sequence is emitted instead when it
 * costs less; the answer is kept per pair of layouts (relayout_memo.c).
 */
#include <assert.h>

#include "planning.h"
#include "work.h"

typedef struct relayout {
    mrt_layout l; /* the layout so far */
    const mrt_layout *to;
    int allreduce_only; /* Mesh-TF: no reduce-scatter */
    int n;              /* moves so far */
    mrt_move move[MRT_MAX_MOVES];
} relayout;

static int common_prefix(const mrt_layout *a, const mrt_layout *b, int i)
{
    int n = 0;
    while (n < a->naxes[i] && n < b->naxes[i] && a->axes[i][n] == b->axes[i][n])
        n++;
    return n;
}

/* The axis dim i is ready to receive next, or -1. */
static int ready_for(const relayout *r, int i)
{
    int n = r->l.naxes[i];
    if (common_prefix(&r->l, r->to, i) != n || n >= r->to->naxes[i])
        return -1;
    return r->to->axes[i][n];
}

/* Records one move; the new layout is r->l. */
static int emit(relayout *r, mrt_step_kind kind, int dim, int dim2,
                unsigned axes)
{
    assert(r->n < MRT_MAX_MOVES);
    r->move[r->n++] = (mrt_move){
        .kind = kind, .dim = dim, .dim2 = dim2, .axes = axes, .after = r->l};
    return 0;
}

/* The axes of dim i beyond its common prefix, if the target has the same
 * ones in another order (0 otherwise). */
static unsigned reordered_axes(const relayout *r, int i)
{
    const mrt_layout *l = &r->l;
    int n = common_prefix(l, r->to, i);
    if (n == l->naxes[i] || l->naxes[i] != r->to->naxes[i])
        return 0;
    unsigned have = 0, want = 0;
    for (int j = n; j < l->naxes[i]; j++) {
        have |= 1u << l->axes[i][j];
        want |= 1u << r->to->axes[i][j];
    }
    return have == want ? have : 0;
}

static void append_axis(mrt_layout *l, int i, int a)
{
    l->axes[i][l->naxes[i]++] = a;
}

/* One move of the kinds above, cheapest first: 1 if it recorded one, 0
 * if the layout is final. */
static int one_move(relayout *r)
{
    mrt_layout *l = &r->l;
    unsigned busy = mrt_layout_used_axes(l) | l->partial;
    unsigned wanted = mrt_layout_used_axes(r->to);
    unsigned resolve = l->partial & ~r->to->partial;

    for (int i = 0; i < l->ndims; i++) {
        int a = ready_for(r, i);
        if (a >= 0 && !(busy & (1u << a))) {
            append_axis(l, i, a);
            return emit(r, MRT_STEP_SLICE, i, -1, 1u << a) ? -1 : 1;
        }
    }
    for (int i = 0; i < l->ndims && !r->allreduce_only; i++) {
        int a = ready_for(r, i);
        if (a >= 0 && (resolve & (1u << a))) {
            append_axis(l, i, a);
            l->partial &= ~(1u << a);
            return emit(r, MRT_STEP_REDUCE_SCATTER, i, -1, 1u << a) ? -1 : 1;
        }
    }
    unsigned reduce = r->allreduce_only ? resolve : resolve & ~wanted;
    if (reduce) {
        l->partial &= ~reduce;
        return emit(r, MRT_STEP_ALLREDUCE, -1, -1, reduce) ? -1 : 1;
    }
    for (int i = 0; i < l->ndims; i++) {
        unsigned axes = reordered_axes(r, i);
        if (axes) {
            for (int j = 0; j < r->to->naxes[i]; j++)
                l->axes[i][j] = r->to->axes[i][j];
            return emit(r, MRT_STEP_PERMUTE, i, -1, axes) ? -1 : 1;
        }
    }
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < l->ndims; i++) {
            if (l->naxes[i] == common_prefix(l, r->to, i))
                continue;
            int a = l->axes[i][l->naxes[i] - 1];
            for (int j = 0; pass == 0 && j < l->ndims; j++) {
                if (j != i && ready_for(r, j) == a) {
                    l->naxes[i]--;
                    append_axis(l, j, a);
                    return emit(r, MRT_STEP_ALLTOALL, i, j, 1u << a) ? -1 : 1;
                }
            }
            if (pass == 1) {
                l->naxes[i]--;
                return emit(r, MRT_STEP_ALLGATHER, i, -1, 1u << a) ? -1 : 1;
            }
        }
    }
    return 0;
}

/* l without the axes of size 1: they split nothing and sum nothing, and
 * a collective over a group of one rank is no collective. */
static mrt_layout without_unit_axes(const mrt_layout *l, const mrt_mesh *m)
{
    mrt_layout n = *l;
    for (int i = 0; i < n.ndims; i++) {
        n.naxes[i] = 0;
        for (int j = 0; j < l->naxes[i]; j++)
            if (m->size[l->axes[i][j]] > 1)
                n.axes[i][n.naxes[i]++] = l->axes[i][j];
    }
    for (int a = 0; a < m->naxes; a++)
        if (m->size[a] == 1)
            n.partial &= ~(1u << a);
    return n;
}

/* A value made after `from` that already holds the same tensor in
 * layout `to` because an earlier consumer moved it there, or -1.  Values
 * of one tensor in one layout are interchangeable, so a second consumer
 * reads it instead of moving the data again.  (Only consumers' moves:
 * the first reader of a tensor then always pays its own move, which the
 * layout search's time bound relies on, search/search_bound.c.)  Looks
 * back a bounded way (the last 4096 values), through the tensor's own values
 * only, newest first.  A parameter with reshard_after_forward is the
 * exception: a reader `op` of the backward pass or the update does not
 * take a copy moved in the forward pass, so that copy's life ends at its
 * last forward reader and the parameter is moved again (FSDP's second
 * all-gather: wire bytes traded for memory). */
static int already_moved(const mrt_planning *pl, int op, int from,
                         const mrt_layout *to)
{
    const mrt_plan *p = pl->plan;
    int t = p->value[from].tensor;
    const mrt_spec_tensor *st = &pl->spec->tensor[t];
    int again = st->reshard && p->op[op].phase != MRT_PHASE_FORWARD;
    for (int v = pl->last_value[t]; v > from && v >= p->nvalues - 4096;
         v = p->value[v].prev) {
        const mrt_value *x = &p->value[v];
        MRT_WORK(1);
        if (x->made_by == st->producer || !mrt_layout_equal(&x->layout, to))
            continue;
        if (p->pipe.stages > 1 && x->stage != pl->cur_stage)
            continue; /* another pipeline stage's copy */
        if (again && x->made_by >= 0 &&
            p->op[x->made_by].phase == MRT_PHASE_FORWARD)
            continue;
        return v;
    }
    return -1;
}

/* 1 if the greedy moves may be beaten: more than one collective, or an
 * all-to-all or permute (a slice before it may shrink what it moves). */
static int worth_a_path(const relayout *r)
{
    int coll = 0;
    for (int k = 0; k < r->n; k++) {
        mrt_step_kind kind = r->move[k].kind;
        coll += mrt_step_is_collective(kind);
        if (kind == MRT_STEP_ALLTOALL || kind == MRT_STEP_PERMUTE)
            return 1;
    }
    return coll > 1;
}

static double moves_time(const mrt_plan *p, const mrt_layout *from,
                         const mrt_move *m, int n)
{
    double t = 0;
    for (int k = 0; k < n; k++)
        t += mrt_move_time(p, k ? &m[k - 1].after : from, &m[k]);
    return t;
}

int mrt_relayout_emit(mrt_planning *pl, int op, int from, const mrt_layout *to,
                      int allreduce_only)
{
    mrt_plan *p = pl->plan;
    if (mrt_layout_equal(&p->value[from].layout, to))
        return from;
    int again = already_moved(pl, op, from, to);
    if (again >= 0)
        return again;
    mrt_layout target = without_unit_axes(to, &p->mesh);
    mrt_layout start = without_unit_axes(&p->value[from].layout, &p->mesh);
    relayout r; /* not zeroed: move[] is read only up to n (zeroing its
                   64 moves was a fifth of planning a long program) */
    r.l = start;
    r.to = &target;
    r.allreduce_only = allreduce_only;
    r.n = 0;
    assert(r.l.ndims == to->ndims);
    assert((target.partial & ~r.l.partial) == 0);
    assert((target.partial & mrt_layout_used_axes(&target)) == 0);
    while (one_move(&r) > 0)
        ;
    assert(mrt_layout_equal(&r.l, &target));
    const mrt_move *move = r.move;
    int n = r.n;
    mrt_move alt[MRT_MAX_MOVES];
    if (!allreduce_only && worth_a_path(&r)) {
        int k = mrt_relayout_memo_get(pl, &start, &target, alt);
        if (k == -2) {
            double t;
            k = mrt_relayout_path(p, &start, &target, alt, MRT_MAX_MOVES, &t);
            if (k < 0 || t >= moves_time(p, &start, r.move, r.n) * (1 - 1e-9))
                k = -1;
            mrt_relayout_memo_put(pl, &start, &target, alt, k);
        }
        if (k >= 0) {
            move = alt;
            n = k;
        }
    }
    int cur = from;
    for (int k = 0; k < n; k++) {
        int v = mrt_planning_add_value(pl, p->value[from].tensor,
                                       &move[k].after);
        if (v < 0)
            return -1;
        mrt_step s = {.kind = move[k].kind,
                      .op = op,
                      .in = cur,
                      .in2 = -1,
                      .out = v,
                      .dim = move[k].dim,
                      .dim2 = move[k].dim2,
                      .axes = move[k].axes};
        if (mrt_planning_add_step(pl, &s) < 0)
            return -1;
        cur = v;
    }
    /* A value made here shows the layout as the user wrote it. */
    if (cur != from)
        p->value[cur].layout = *to;
    return cur;
}
