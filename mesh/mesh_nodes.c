/*
 * mesh_nodes.c — the groups of the mesh on its nodes (mesh_nodes.h).
 *
 * On an aligned mesh each axis has an inner factor: the coordinates of
 * that axis one node holds (its whole size for the innermost axes, t for
 * the axis the node boundary cuts, 1 beyond).  A group over a mask then
 * has q = the product of its axes' inner factors on each node, and spans
 * k = size / q nodes.  A mesh that is not aligned is walked rank by rank
 * (up to a million ranks; beyond that a group over any axis of size > 1
 * is taken to cross nodes, the conservative answer).
 */
#include "mesh_nodes.h"

#define WALK_MAX (1 << 20)

static const char *const tier_names[MRT_TIER_COUNT] = {"intra", "inter",
                                                       "mixed"};
_Static_assert(MRT_TIER_COUNT == 3, "one name per tier");

const char *mrt_tier_name(mrt_tier t)
{
    return t < MRT_TIER_COUNT ? tier_names[t] : "?";
}

int64_t mrt_mesh_node_of(int64_t ranks_per_node, int64_t r)
{
    return ranks_per_node > 0 ? r / ranks_per_node : 0;
}

/* The inner factor of every axis; 0 when the mesh is not aligned. */
static int inner_factors(const mrt_mesh *m, int64_t rpn, int64_t f[])
{
    int64_t inner = 1;
    int i = m->naxes - 1;
    for (; i >= 0 && rpn % (inner * m->size[i]) == 0; i--) {
        f[i] = m->size[i];
        inner *= m->size[i];
    }
    if (i < 0)
        return 1;
    if (rpn % inner || m->size[i] % (rpn / inner))
        return 0;
    f[i] = rpn / inner;
    for (i--; i >= 0; i--)
        f[i] = 1;
    return 1;
}

/* 1 when some group over mask has ranks on two nodes (rank by rank). */
static int walk_spans(const mrt_mesh *m, int64_t rpn, unsigned mask)
{
    if (m->nranks > WALK_MAX)
        return mrt_mesh_group_size(m, mask) > 1;
    int64_t c[MRT_MAX_AXES];
    for (int64_t r = 0; r < m->nranks; r++) {
        mrt_mesh_coords(m, r, c);
        for (int a = 0; a < m->naxes; a++)
            if (mask & (1u << a))
                c[a] = 0;
        if (r / rpn != mrt_mesh_rank(m, c) / rpn)
            return 1;
    }
    return 0;
}

mrt_mesh_span mrt_mesh_span_of(const mrt_mesh *m, int64_t ranks_per_node,
                               unsigned mask)
{
    int64_t g = mrt_mesh_group_size(m, mask), f[MRT_MAX_AXES];
    mrt_mesh_span s = {MRT_TIER_INTRA, g, 1, 1};
    if (ranks_per_node <= 0 || ranks_per_node >= m->nranks || g == 1)
        return s;
    if (!inner_factors(m, ranks_per_node, f)) {
        int spans = walk_spans(m, ranks_per_node, mask);
        return (mrt_mesh_span){spans ? MRT_TIER_MIXED : MRT_TIER_INTRA,
                               spans ? 0 : g, spans ? 0 : 1, !spans};
    }
    s.per_node = 1;
    for (int a = 0; a < m->naxes; a++)
        if (mask & (1u << a))
            s.per_node *= f[a];
    s.nodes = g / s.per_node;
    s.tier = s.nodes == 1      ? MRT_TIER_INTRA
             : s.per_node == 1 ? MRT_TIER_INTER
                               : MRT_TIER_MIXED;
    return s;
}

int64_t mrt_mesh_node_index(const mrt_mesh *m, int64_t ranks_per_node,
                            unsigned mask, const int64_t coords[])
{
    int64_t f[MRT_MAX_AXES], r = 0;
    /* one node, or not aligned (then the walk found every group inside
     * one node, or the mesh_span is not aligned and this is not asked) */
    if (ranks_per_node <= 0 || ranks_per_node >= m->nranks ||
        !inner_factors(m, ranks_per_node, f))
        return mrt_mesh_group_index(m, mask, coords);
    for (int a = 0; a < m->naxes; a++)
        if (mask & (1u << a))
            r = r * f[a] + coords[a] % f[a];
    return r;
}
