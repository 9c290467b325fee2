/*
 * exchange.c — the geometry of an all-to-all over a group of
 * several mesh axes (MRT_STEP_ALLTOALL_GROUP).  The figures its cost
 * depends on are counted here; ops/step_cost.c prices them.
 *
 * Such a step takes a value from layout A to layout B where both split
 * their dims over the same set of axes (the shard keeps its size): inside
 * each group over the step's axes, the shards of A are one copy of the
 * group's part of the tensor, and so are the shards of B.  Rank s sends
 * rank r the box where s's block under A meets r's block under B; that
 * covers a multi-axis all-to-all ([l/[y, z]] -> [j/[y, z]]), a change of
 * nesting order ([a, b] -> [b, a]) and any mix of them in one collective.
 * The runtime (runtime/alltoall_group.c) and the cost model share the
 * boxes computed here, so the bytes the plan predicts are the bytes that
 * move.
 */
#include "exchange.h"

#include <stdlib.h>

/* Group members are numbered row-major over the mask's axes in mesh
 * order (mesh.h); member j's coordinates, the others as in c. */
void mrt_exchange_member(const mrt_mesh *m, unsigned mask, const int64_t c[],
                         int64_t j, int64_t out[])
{
    for (int a = 0; a < m->naxes; a++)
        out[a] = c[a];
    for (int a = m->naxes - 1; a >= 0; a--)
        if (mask & (1u << a)) {
            out[a] = j % m->size[a];
            j /= m->size[a];
        }
}

int64_t mrt_exchange_box(const mrt_layout *a, const mrt_layout *b,
                         const mrt_mesh *m, const int64_t src[],
                         const int64_t dst[], int64_t at_src[],
                         int64_t at_dst[], int64_t ext[])
{
    int64_t oa[MRT_MAX_DIMS], ob[MRT_MAX_DIMS], la[MRT_MAX_DIMS],
        lb[MRT_MAX_DIMS], n = 1;
    mrt_layout_shard_offset(a, m, src, oa);
    mrt_layout_shard_offset(b, m, dst, ob);
    mrt_layout_shard_shape_at(a, m, src, la); /* uneven splits: each */
    mrt_layout_shard_shape_at(b, m, dst, lb); /* rank's own block */
    for (int i = 0; i < a->ndims; i++) {
        int64_t lo = oa[i] > ob[i] ? oa[i] : ob[i];
        int64_t hi = oa[i] + la[i] < ob[i] + lb[i] ? oa[i] + la[i]
                                                   : ob[i] + lb[i];
        ext[i] = hi > lo ? hi - lo : 0;
        at_src[i] = lo - oa[i];
        at_dst[i] = lo - ob[i];
        n *= ext[i];
    }
    return n;
}

/* Past this many ranks in the group, the cost assumes every rank sends
 * all its shard to g - 1 peers rather than counting. */
#define EXACT_GROUP 4096
#define EXACT_PEERS 64

/* The figures are found without visiting every member (the planner
 * weighs thousands of these steps, over groups of hundreds of ranks).
 * A dim's block under a layout depends only on the coordinates of the
 * axes that split it; dims linked by an axis (one that splits one dim
 * under a and another under b) form a component, and the components
 * have disjoint axes.  What a member holds is then the product of what
 * it holds of each component, and so are the elements it keeps (the
 * box it sends itself) and the peers whose block meets its own.  Each
 * component's points are visited (its axes' coordinates; the others at
 * 0, as for every member) and only the points no other beats in both
 * factors are kept: the figure is larger with more held and less kept
 * (more met, fewer of them itself), so its maximum over the members is
 * at a combination of those. */

/* One dim's blocks under a and under b at one point of its component:
 * what mrt_exchange_box reads. */
typedef struct point_blocks {
    int64_t sa[MRT_MAX_DIMS], la[MRT_MAX_DIMS];
    int64_t sb[MRT_MAX_DIMS], lb[MRT_MAX_DIMS];
} point_blocks;

typedef struct component {
    int ndims, dims[MRT_MAX_DIMS];
    int naxes, axes[MRT_MAX_AXES];
    int64_t points;
} component;

/* The components of a's dims over the group axes; returns how many.
 * *free_ranks: the product of the group axes that split no dim. */
static int components(const mrt_mesh *m, const mrt_layout *a,
                      const mrt_layout *b, unsigned axes, component *c,
                      int64_t *free_ranks)
{
    int label[MRT_MAX_DIMS], owner[MRT_MAX_AXES], nc = 0;
    for (int i = 0; i < a->ndims; i++)
        label[i] = i;
    for (int k = 0; k < MRT_MAX_AXES; k++)
        owner[k] = -1;
    for (int side = 0; side < 2; side++) {
        const mrt_layout *l = side ? b : a;
        for (int i = 0; i < l->ndims; i++)
            for (int j = 0; j < l->naxes[i]; j++) {
                int ax = l->axes[i][j];
                if (!(axes & (1u << ax)))
                    continue;
                if (owner[ax] < 0) {
                    owner[ax] = i;
                    continue;
                }
                int from = label[i], to = label[owner[ax]];
                for (int d = 0; d < a->ndims; d++) /* merge i's into ax's */
                    label[d] = label[d] == from ? to : label[d];
            }
    }
    *free_ranks = 1;
    for (int ax = 0; ax < m->naxes; ax++)
        if ((axes & (1u << ax)) && owner[ax] < 0)
            *free_ranks *= m->size[ax];
    for (int i = 0; i < a->ndims; i++) {
        if (label[i] != i)
            continue; /* not the label of a component */
        component *x = &c[nc++];
        x->ndims = x->naxes = 0;
        x->points = 1;
        for (int d = 0; d < a->ndims; d++)
            if (label[d] == i)
                x->dims[x->ndims++] = d;
        for (int ax = 0; ax < m->naxes; ax++)
            if (owner[ax] >= 0 && label[owner[ax]] == i) {
                x->axes[x->naxes++] = ax;
                x->points *= m->size[ax];
            }
    }
    return nc;
}

/* The blocks of component x's dims at each of its points (the last of
 * its axes fastest). */
static void component_blocks(const mrt_mesh *m, const mrt_layout *a,
                             const mrt_layout *b, const component *x,
                             point_blocks *pt)
{
    int64_t c[MRT_MAX_AXES] = {0};
    for (int64_t p = 0; p < x->points; p++) {
        for (int k = 0; k < x->ndims; k++) {
            int i = x->dims[k];
            mrt_layout_dim_range(a, m, i, c, &pt[p].sa[k], &pt[p].la[k]);
            mrt_layout_dim_range(b, m, i, c, &pt[p].sb[k], &pt[p].lb[k]);
        }
        for (int k = x->naxes - 1; k >= 0; k--) {
            int ax = x->axes[k];
            if (++c[ax] < m->size[ax])
                break;
            c[ax] = 0;
        }
    }
}

/* The elements of mrt_exchange_box(a, b, ...) over the dims of one
 * component, from the blocks of the sender's and the receiver's points. */
static int64_t box_of(int ndims, const point_blocks *src,
                      const point_blocks *dst)
{
    int64_t n = 1;
    for (int i = 0; i < ndims && n; i++) {
        int64_t lo = src->sa[i] > dst->sb[i] ? src->sa[i] : dst->sb[i];
        int64_t ea = src->sa[i] + src->la[i], eb = dst->sb[i] + dst->lb[i];
        int64_t hi = ea < eb ? ea : eb;
        n *= hi > lo ? hi - lo : 0;
    }
    return n;
}

/* A point's two factors: up (more is a larger figure), down (less is). */
typedef struct pair {
    int64_t up, down;
} pair;

/* Adds p to the front f[*n] unless a kept pair is as good in both. */
static void front_add(pair *f, int *n, pair p)
{
    int k = 0;
    for (int i = 0; i < *n; i++)
        if (f[i].up >= p.up && f[i].down <= p.down)
            return;
    for (int i = 0; i < *n; i++)
        if (!(p.up >= f[i].up && p.down <= f[i].down))
            f[k++] = f[i];
    f[k++] = p;
    *n = k;
}

/* The front of component x's points: (held, kept), or with peers
 * (blocks met, whether its own is among them). */
static int component_front(int nd, const point_blocks *pt, int64_t np,
                           int peers, pair *f)
{
    int n = 0;
    for (int64_t j = 0; j < np; j++) {
        pair p = {1, box_of(nd, &pt[j], &pt[j])};
        if (peers) {
            p.up = 0;
            p.down = p.down > 0;
            for (int64_t q = 0; q < np; q++)
                p.up += box_of(nd, &pt[j], &pt[q]) > 0;
        } else {
            for (int k = 0; k < nd; k++)
                p.up *= pt[j].la[k];
        }
        front_add(f, &n, p);
    }
    return n;
}

/* The largest scale * prod(up) - prod(down) over one pair of each
 * front (front c has n[c] pairs from f[c]). */
static int64_t best_combination(pair *const *f, const int *n, int nc,
                                int64_t scale)
{
    int pick[MRT_MAX_DIMS] = {0};
    int64_t best = 0;
    for (;;) {
        int64_t up = scale, down = 1;
        for (int c = 0; c < nc; c++) {
            up *= f[c][pick[c]].up;
            down *= f[c][pick[c]].down;
        }
        best = up - down > best ? up - down : best;
        int c = 0;
        while (c < nc && ++pick[c] == n[c])
            pick[c++] = 0;
        if (c == nc)
            return best;
    }
}

/* The most elements a member sends (peers 0) or the most peers it sends
 * to (peers 1); -1 when out of memory. */
static int64_t exchange_max(const mrt_mesh *m, const mrt_layout *a,
                            const mrt_layout *b, unsigned axes, int peers)
{
    component c[MRT_MAX_DIMS];
    int64_t free_ranks, best = -1;
    int nc = components(m, a, b, axes, c, &free_ranks), n[MRT_MAX_DIMS];
    pair *f[MRT_MAX_DIMS] = {0};
    point_blocks *pt = NULL;
    int c_ok = 0;
    for (; c_ok < nc; c_ok++) {
        pt = malloc((size_t)c[c_ok].points * sizeof *pt);
        f[c_ok] = malloc((size_t)c[c_ok].points * sizeof *f[c_ok]);
        if (!pt || !f[c_ok])
            break;
        component_blocks(m, a, b, &c[c_ok], pt);
        n[c_ok] = component_front(c[c_ok].ndims, pt, c[c_ok].points, peers,
                                  f[c_ok]);
        free(pt);
        pt = NULL;
    }
    if (c_ok == nc)
        best = best_combination(f, n, nc, peers ? free_ranks : 1);
    free(pt);
    for (int k = 0; k < nc; k++)
        free(f[k]);
    return best;
}

int64_t mrt_exchange_volume(const mrt_mesh *m, const mrt_layout *a,
                            const mrt_layout *b, unsigned axes,
                            int64_t *peers_out)
{
    int64_t g = mrt_mesh_group_size(m, axes), n = mrt_layout_shard_count(a, m);
    int64_t most = g <= EXACT_GROUP ? exchange_max(m, a, b, axes, 0) : n;
    int64_t peers = g <= EXACT_PEERS ? exchange_max(m, a, b, axes, 1) : g - 1;
    *peers_out = peers < 0 ? g - 1 : peers; /* out of memory: the bounds */
    return most < 0 ? n : most;
}

/* The axes of the dims whose split differs between a and b (0 when none
 * does); -1u if b cannot be reached from a by one such step: the axes used
 * differ, or the pending sums do. */
unsigned mrt_exchange_axes(const mrt_layout *a, const mrt_layout *b)
{
    unsigned mask = 0;
    if (a->partial != b->partial ||
        mrt_layout_used_axes(a) != mrt_layout_used_axes(b))
        return ~0u;
    for (int i = 0; i < a->ndims; i++) {
        int same = a->naxes[i] == b->naxes[i];
        for (int j = 0; same && j < a->naxes[i]; j++)
            same = a->axes[i][j] == b->axes[i][j];
        for (int j = 0; !same && j < a->naxes[i]; j++)
            mask |= 1u << a->axes[i][j];
        for (int j = 0; !same && j < b->naxes[i]; j++)
            mask |= 1u << b->axes[i][j];
    }
    return mask;
}
