/*
 * relayout_path.c — the cheapest sequence of moves from one layout to
 * another under the cost model: Dijkstra's shortest path over the layouts
 * reachable by single moves.
 *
 * The moves (each one plan step) from a layout L towards the target T,
 * where a dim's "excess" is what follows its common prefix with T, and a
 * dim is "ready" when it holds just that prefix:
 *   slice           a free axis that T uses, appended to any dim where
 *                   no block is left empty (uneven blocks too:
 *                   layout/split.h), onto a ready dim in T's order, or
 *                   elsewhere to shrink the shard before it moves on, as
 *                   Shardy does
 *   reduce-scatter  a pending sum over the next axis of a ready dim
 *   all-reduce      the pending sums T neither keeps nor splits a dim over
 *   all-gather      the last axis of a dim's excess
 *   all-to-all      the last axis of a dim's excess, to the ready dim that
 *                   wants it next (one axis: MRT_STEP_ALLTOALL)
 *   all-to-all over a group
 *                   the last k >= 2 axes of a dim's excess, to the ready dim
 *                   that wants that set next, in its order; or, once L uses
 *                   every axis T uses, straight to T's split (every move
 *                   and reorder left, in one collective over the axes of
 *                   the dims that change: MRT_STEP_ALLTOALL_GROUP), with
 *                   the axes T does not use left at the minor end of their
 *                   dims, for all-gathers
 * Each edge costs the modeled time of its step at the shard size it moves
 * (slices their copy).  The pathfinder keeps at most MAX_STATES layouts (past
 * that it finishes among those it has, or finds nothing); relayout.c keeps
 * its greedy sequence whenever no cheaper path is found.
 */
#include <string.h>

#include "planning.h"
#include "split.h"

#define MAX_STATES 512

typedef struct node {
    mrt_layout l;
    uint64_t key; /* layout_key(l): most unequal layouts differ in it */
    double cost;
    int parent, done;
    mrt_move move; /* the move from the parent */
} node;

typedef struct pathfinder {
    const mrt_plan *p;
    const mrt_layout *to;
    node *n;
    int count;
} pathfinder;

static int prefix(const mrt_layout *a, const mrt_layout *b, int i)
{
    int n = 0;
    while (n < a->naxes[i] && n < b->naxes[i] && a->axes[i][n] == b->axes[i][n])
        n++;
    return n;
}

static int64_t parts(const mrt_plan *p, const mrt_layout *l, int i)
{
    int64_t k = 1;
    for (int j = 0; j < l->naxes[i]; j++)
        k *= p->mesh.size[l->axes[i][j]];
    return k;
}

/* What tells apart the layouts of one search (they share the tensor's
 * dims and sizes): the pending sums and each dim's axes, hashed. */
static uint64_t layout_key(const mrt_layout *l)
{
    uint64_t h = 0xcbf29ce484222325ull ^ l->partial;
    for (int i = 0; i < l->ndims; i++) {
        for (int j = 0; j < l->naxes[i]; j++)
            h = (h ^ (uint64_t)(l->axes[i][j] + 1)) * 0x100000001b3ull;
        h = (h ^ 0xff) * 0x100000001b3ull;
    }
    return h;
}

/* Records layout l reached from node `from` by move m.  The layout is
 * looked up before the move is priced: a layout already settled (done)
 * keeps its path whatever the move costs, and pricing a move (an
 * all-to-all over a group above all) is most of the search's time. */
static void reach(pathfinder *s, int from, mrt_step_kind kind, int dim,
                  int dim2, unsigned axes, const mrt_layout *l)
{
    uint64_t key = layout_key(l);
    int k = 0;
    while (k < s->count &&
           (s->n[k].key != key || !mrt_layout_equal(&s->n[k].l, l)))
        k++;
    if (k < s->count && s->n[k].done)
        return;
    if (k == s->count && s->count == MAX_STATES)
        return;
    mrt_move m = {
        .kind = kind, .dim = dim, .dim2 = dim2, .axes = axes, .after = *l};
    double c = s->n[from].cost + mrt_move_time(s->p, &s->n[from].l, &m);
    if (k < s->count) {
        if (c < s->n[k].cost) {
            s->n[k].cost = c;
            s->n[k].parent = from;
            s->n[k].move = m;
        }
        return;
    }
    s->n[s->count++] = (node){
        .l = *l, .key = key, .cost = c, .parent = from, .move = m};
}

/* The moves that remove axes: all-gathers and all-to-alls. */
static void expand_out(pathfinder *s, int k, const mrt_layout *l)
{
    const mrt_layout *to = s->to;
    for (int i = 0; i < l->ndims; i++) {
        int cp = prefix(l, to, i), nx = l->naxes[i];
        if (nx == cp)
            continue;
        mrt_layout g = *l;
        g.naxes[i]--;
        reach(s, k, MRT_STEP_ALLGATHER, i, -1, 1u << l->axes[i][nx - 1], &g);
        for (int j = 0; j < l->ndims; j++) {
            int have = l->naxes[j];
            if (j == i || prefix(l, to, j) != have)
                continue;
            /* the last q axes of i's excess, if j wants that set next */
            unsigned moved = 0, wanted = 0;
            for (int q = 1; q <= nx - cp && have + q <= to->naxes[j]; q++) {
                moved |= 1u << l->axes[i][nx - q];
                wanted |= 1u << to->axes[j][have + q - 1];
                if (moved != wanted)
                    continue;
                mrt_layout t = *l;
                t.naxes[i] -= q;
                for (int a = 0; a < q; a++)
                    t.axes[j][have + a] = to->axes[j][have + a];
                t.naxes[j] += q;
                reach(s, k,
                      q == 1 ? MRT_STEP_ALLTOALL : MRT_STEP_ALLTOALL_GROUP, i,
                      j, moved, &t);
            }
        }
    }
}

/* Once L uses every axis T does: one all-to-all over a group to T's
 * split, the axes T does not use (`extra`) kept at the minor end of the
 * dim they split, for all-gathers to remove later. */
static void jump(pathfinder *s, int k, const mrt_layout *l, unsigned extra)
{
    mrt_layout t = *s->to;
    t.partial = l->partial;
    for (int i = 0; i < l->ndims; i++)
        for (int j = 0; j < l->naxes[i]; j++)
            if (extra & (1u << l->axes[i][j]))
                t.axes[i][t.naxes[i]++] = l->axes[i][j];
    for (int i = 0; i < t.ndims; i++)
        if (!mrt_split_ok(t.size[i], parts(s->p, &t, i)))
            return;
    unsigned axes = mrt_exchange_axes(l, &t);
    if (axes && axes != ~0u)
        reach(s, k, MRT_STEP_ALLTOALL_GROUP, -1, -1, axes, &t);
}

static void expand(pathfinder *s, int k)
{
    const mrt_layout *l = &s->n[k].l, *to = s->to;
    const mrt_mesh *m = &s->p->mesh;
    unsigned used = mrt_layout_used_axes(l), want = mrt_layout_used_axes(to);
    unsigned resolve = l->partial & ~to->partial;
    unsigned free_axes = ~(used | l->partial) & want;
    for (int a = 0; a < m->naxes; a++) {
        if (!(free_axes & (1u << a)))
            continue;
        for (int i = 0; i < l->ndims; i++) {
            if (!mrt_split_ok(l->size[i], parts(s->p, l, i) * m->size[a]))
                continue;
            mrt_layout t = *l;
            t.axes[i][t.naxes[i]++] = (int8_t)a;
            reach(s, k, MRT_STEP_SLICE, i, -1, 1u << a, &t);
        }
    }
    for (int i = 0; i < l->ndims; i++) {
        int n = l->naxes[i];
        if (prefix(l, to, i) != n || n >= to->naxes[i] ||
            !(resolve & (1u << to->axes[i][n])))
            continue;
        mrt_layout t = *l;
        int a = to->axes[i][n];
        t.axes[i][t.naxes[i]++] = (int8_t)a;
        t.partial &= ~(1u << a);
        reach(s, k, MRT_STEP_REDUCE_SCATTER, i, -1, 1u << a, &t);
    }
    if (resolve & ~want) {
        mrt_layout t = *l;
        t.partial &= ~(resolve & ~want);
        reach(s, k, MRT_STEP_ALLREDUCE, -1, -1, resolve & ~want, &t);
    }
    expand_out(s, k, l);
    if ((used & want) == want)
        jump(s, k, l, used & ~want);
}

int mrt_relayout_path(const mrt_plan *p, const mrt_layout *from,
                      const mrt_layout *to, mrt_move moves[], int max,
                      double *cost)
{
    static node table[MAX_STATES]; /* the planner is single-threaded */
    pathfinder s = {.p = p, .to = to, .n = table, .count = 1};
    table[0] = (node){.l = *from, .key = layout_key(from), .parent = -1};
    for (;;) {
        int best = -1;
        for (int k = 0; k < s.count; k++)
            if (!table[k].done &&
                (best < 0 || table[k].cost < table[best].cost))
                best = k;
        if (best < 0)
            return -1;
        table[best].done = 1;
        if (mrt_layout_equal(&table[best].l, to)) {
            int n = 0;
            for (int k = best; k > 0; k = table[k].parent)
                n++;
            if (n > max)
                return -1;
            for (int k = best, j = n - 1; k > 0; k = table[k].parent, j--)
                moves[j] = table[k].move;
            *cost = table[best].cost;
            return n;
        }
        expand(&s, best);
    }
}
