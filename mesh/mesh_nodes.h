/*
 * mesh_nodes.h — where the mesh's ranks sit on nodes, and what that makes
 * of each group of ranks: inside one node, across nodes, or mixed.
 *
 * Ranks fill nodes in order: ranks 0 .. R-1 on node 0, R .. 2R-1 on node
 * 1, and so on (R = ranks per node; mpirun's default placement, by slot).
 * With the mesh's row-major numbering (the last axis varies fastest) the
 * last axes of the mesh are the innermost: they stay inside a node.  To
 * put an axis inside the nodes, write it last in `mesh:`.
 *
 * The mesh is *aligned* with the nodes when a node holds whole groups of
 * the last axes and a contiguous run of t coordinates of the next axis,
 * t dividing that axis's size (R = 8 on {data: 4, model: 4}: model and
 * half of data).  Then every group over a set of axes spans the same
 * number of nodes k, with the same number of ranks q on each: the group
 * can run a collective hierarchically (inside each node, then across).
 * Otherwise (R = 3 on {a: 2, b: 2}) only whether a group crosses nodes
 * is known.  Plain data, no MPI.
 */
#ifndef MRT_MESH_NODES_H
#define MRT_MESH_NODES_H

#include <stdint.h>

#include "mesh.h"

typedef enum mrt_tier {
    MRT_TIER_INTRA = 0, /* every group inside one node */
    MRT_TIER_INTER,     /* ranks of a group on distinct nodes */
    MRT_TIER_MIXED,     /* several nodes, several ranks on some */
    MRT_TIER_COUNT
} mrt_tier;

/* How the groups over a set of axes sit on the nodes. */
typedef struct mrt_mesh_span {
    mrt_tier tier;
    int64_t per_node; /* q: ranks of a group on each of its nodes (aligned) */
    int64_t nodes;    /* k: nodes a group spans (aligned); q * k = group */
    int aligned;      /* q and k hold for every group */
} mrt_mesh_span;

/* "intra", "inter", "mixed". */
const char *mrt_tier_name(mrt_tier t);
/* The groups over mask with ranks_per_node ranks on each node (0 or a
 * count >= nranks: one node). */
mrt_mesh_span mrt_mesh_span_of(const mrt_mesh *m, int64_t ranks_per_node,
                               unsigned mask);
/* The position of the rank at coords among the ranks of its group over
 * mask that share its node, in group order (aligned meshes only). */
int64_t mrt_mesh_node_index(const mrt_mesh *m, int64_t ranks_per_node,
                            unsigned mask, const int64_t coords[]);
/* The node of rank r. */
int64_t mrt_mesh_node_of(int64_t ranks_per_node, int64_t r);

#endif
