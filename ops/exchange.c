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

/* Where each member's block of every dim starts and how long it is,
 * under a and under b: what mrt_exchange_box reads, found once per
 * member (the planner weighs thousands of these steps; the peers are
 * counted over every pair of members). */
typedef struct member_blocks {
    int64_t sa[MRT_MAX_DIMS], la[MRT_MAX_DIMS];
    int64_t sb[MRT_MAX_DIMS], lb[MRT_MAX_DIMS];
} member_blocks;

/* The block of one dim under one layout, for every coordinate of the
 * group's axes that split it (the other axes at 0, as for every member):
 * entry sum(c[ax[k]] * stride[k]) is (start, extent). */
typedef struct dim_table {
    int n, ax[MRT_MAX_AXES];
    int64_t stride[MRT_MAX_AXES];
    int64_t (*range)[2];
} dim_table;

/* Fills t for dim i of l over the group axes; room: where its entries
 * go (advanced past them). */
static void table_fill(dim_table *t, const mrt_layout *l, const mrt_mesh *m,
                       int i, unsigned axes, int64_t (**room)[2])
{
    int64_t c[MRT_MAX_AXES] = {0}, count = 1;
    t->n = 0;
    for (int k = l->naxes[i] - 1; k >= 0; k--) /* the last one fastest */
        if (axes & (1u << l->axes[i][k])) {
            t->ax[t->n] = l->axes[i][k];
            t->stride[t->n++] = count;
            count *= m->size[l->axes[i][k]];
        }
    t->range = *room;
    *room += count;
    for (int64_t e = 0; e < count; e++) {
        for (int k = 0; k < t->n; k++)
            c[t->ax[k]] = e / t->stride[k] % m->size[t->ax[k]];
        mrt_layout_dim_range(l, m, i, c, &t->range[e][0], &t->range[e][1]);
    }
}

static const int64_t *table_at(const dim_table *t, const int64_t c[])
{
    int64_t e = 0;
    for (int k = 0; k < t->n; k++)
        e += c[t->ax[k]] * t->stride[k];
    return t->range[e];
}

/* x[j] for every member j of the group over axes (numbered as
 * mrt_exchange_member numbers them); 0, or -1 when out of memory. */
static int members_blocks(const mrt_mesh *m, const mrt_layout *a,
                          const mrt_layout *b, unsigned axes, int64_t g,
                          member_blocks *x)
{
    dim_table ta[MRT_MAX_DIMS], tb[MRT_MAX_DIMS];
    /* each table has at most g entries */
    int64_t(*room)[2] = malloc(2 * (size_t)(a->ndims + 1) * (size_t)g *
                               sizeof *room);
    if (!room)
        return -1;
    int64_t(*at)[2] = room, c[MRT_MAX_AXES] = {0};
    for (int i = 0; i < a->ndims; i++) {
        table_fill(&ta[i], a, m, i, axes, &at);
        table_fill(&tb[i], b, m, i, axes, &at);
    }
    for (int64_t j = 0; j < g; j++) {
        for (int i = 0; i < a->ndims; i++) {
            const int64_t *ra = table_at(&ta[i], c), *rb = table_at(&tb[i], c);
            x[j].sa[i] = ra[0];
            x[j].la[i] = ra[1];
            x[j].sb[i] = rb[0];
            x[j].lb[i] = rb[1];
        }
        for (int k = m->naxes - 1; k >= 0; k--) /* the next member */
            if (axes & (1u << k)) {
                if (++c[k] < m->size[k])
                    break;
                c[k] = 0;
            }
    }
    free(room);
    return 0;
}

/* The elements of mrt_exchange_box(a, b, m, src, dst, ...) from the
 * members' blocks. */
static int64_t box_of(int ndims, const member_blocks *src,
                      const member_blocks *dst)
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

int64_t mrt_exchange_volume(const mrt_mesh *m, const mrt_layout *a,
                            const mrt_layout *b, unsigned axes,
                            int64_t *peers_out)
{
    int64_t g = mrt_mesh_group_size(m, axes), n = mrt_layout_shard_count(a, m);
    int64_t most = g > EXACT_GROUP ? n : 0, peers = g - 1;
    member_blocks *x = g <= EXACT_GROUP ? malloc((size_t)g * sizeof *x) : NULL;
    if (g <= EXACT_GROUP && !x) { /* out of memory: the bound */
        *peers_out = peers;
        return n;
    }
    if (x && members_blocks(m, a, b, axes, g, x)) {
        free(x);
        *peers_out = peers;
        return n;
    }
    for (int64_t j = 0; x && j < g; j++) {
        int64_t held = 1;
        for (int i = 0; i < a->ndims; i++)
            held *= x[j].la[i];
        int64_t sent = held - box_of(a->ndims, &x[j], &x[j]);
        most = sent > most ? sent : most;
    }
    if (g <= EXACT_PEERS) {
        peers = 0;
        for (int64_t j = 0; j < g; j++) {
            int64_t k = 0;
            for (int64_t q = 0; q < g; q++)
                k += q != j && box_of(a->ndims, &x[j], &x[q]);
            peers = k > peers ? k : peers;
        }
    }
    free(x);
    *peers_out = peers;
    return most;
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
