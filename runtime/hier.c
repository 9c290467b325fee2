/*
 * hier.c — the hierarchical all-reduce: over a group of the mesh whose q
 * ranks on each of k nodes (mesh_nodes.h) make a flat all-reduce pay the
 * slow inter-node link for all its bytes, a reduce-scatter inside each
 * node (q ranks: each ends with the sum over its node of one block of
 * 1/q), an all-reduce of that block across the nodes (k ranks, one per
 * node, that hold the same block) and an all-gather of the blocks inside
 * the node.  Only a 1/q shard crosses the nodes.  The plan makes a step
 * hierarchical when the model says that is faster (ops/step_cost.c).
 *
 * Blocks follow the block rule (the first count mod q ranks of the node
 * hold one more element), which is how the plan counts the bytes of each
 * rank (ops/step_query.c): the ledger records the reduce-scatter's whole
 * input and the block twice, the block across nodes as inter-node bytes.
 *
 * Nodes are the plan's (its profile's ranks_per_node: ranks fill nodes in
 * order), not the real ones: every rank must split the groups the same
 * way the plan counted them.  mrt_hier_check_placement says when the two
 * differ, for the report to warn.  The real nodes are the ranks with the
 * same host name and network namespace (mrt_hier_node_comm; not
 * MPI_COMM_TYPE_SHARED, which Open MPI 4.1 answers inconsistently for
 * hosts made as network namespaces of one machine, and then crashes in
 * the first collective over the result).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"

#define HOST_KEY_MAX 320 /* a host name and a namespace's "net:[N]" */

mrt_status mrt_hier_make(mrt_comm *c, unsigned axes, mrt_error *err)
{
    if (c->node_group[axes] != MPI_COMM_NULL)
        return MRT_OK;
    /* colours and keys below the rank count, an int */
    int node = (int)mrt_mesh_node_of(c->ranks_per_node, c->rank);
    int key = (int)mrt_mesh_group_index(&c->mesh, axes, c->coords), place;
    int rc = MPI_Comm_split(c->group[axes], node, key, &c->node_group[axes]);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_rank(c->node_group[axes], &place);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_split(c->group[axes], place, key, &c->cross_group[axes]);
    if (rc != MPI_SUCCESS)
        return mrt_error_set(err, MRT_E_RUNTIME, "", (mrt_mark){0},
                             "MPI_Comm_split failed for the nodes of axes "
                             "mask %u",
                             axes);
    return MRT_OK;
}

/* What names this rank's host: its host name and its network namespace
 * (hosts made as namespaces of one machine share the name). */
static void host_key(char key[HOST_KEY_MAX])
{
    char ns[64] = "";
    ssize_t n = readlink("/proc/self/ns/net", ns, sizeof ns - 1);
    ns[n > 0 ? n : 0] = '\0';
    memset(key, 0, HOST_KEY_MAX);
    gethostname(key, HOST_KEY_MAX - sizeof ns - 2);
    size_t len = strlen(key);
    snprintf(key + len, HOST_KEY_MAX - len, "/%s", ns);
}

int mrt_hier_node_comm(MPI_Comm world, MPI_Comm *out)
{
    int rank, size, color;
    char key[HOST_KEY_MAX];
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    char *all = malloc((size_t)size * HOST_KEY_MAX);
    host_key(key);
    int rc = MPI_Allgather(key, HOST_KEY_MAX, MPI_CHAR, all ? all : key,
                           all ? HOST_KEY_MAX : 0, MPI_CHAR, world);
    /* (a rank short of memory takes a node of its own: still a split
     * every rank agrees on, as each colours itself) */
    for (color = 0; all && color < rank; color++)
        if (!memcmp(all + (size_t)color * HOST_KEY_MAX, key, HOST_KEY_MAX))
            break;
    if (!all)
        color = rank;
    free(all);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_split(world, color, rank, out);
    return rc;
}

void mrt_hier_check_placement(mrt_comm *c)
{
    MPI_Comm shared;
    int n = 0, mine = 0, any = 0;
    int64_t node = mrt_mesh_node_of(c->ranks_per_node, c->rank);
    if (mrt_hier_node_comm(c->world, &shared) != MPI_SUCCESS)
        return;
    MPI_Comm_size(shared, &n);
    int *who = malloc((size_t)n * sizeof *who);
    if (who) {
        MPI_Allgather(&c->rank, 1, MPI_INT, who, 1, MPI_INT, shared);
        int64_t expect = c->ranks_per_node;
        if (c->size - node * c->ranks_per_node < expect)
            expect = c->size - node * c->ranks_per_node;
        mine = n != expect;
        for (int i = 0; i < n; i++)
            mine |= mrt_mesh_node_of(c->ranks_per_node, who[i]) != node;
    }
    free(who);
    MPI_Comm_free(&shared);
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_LOR, c->world);
    c->placement_differs = any;
}

int mrt_hier_allreduce(mrt_comm *c, unsigned axes, const void *in, void *out,
                       int64_t count, MPI_Datatype base, int elsize, int max)
{
    MPI_Comm local = c->node_group[axes], cross = c->cross_group[axes];
    int q, me;
    mrt_count op;
    MPI_Comm_size(local, &q);
    MPI_Comm_rank(local, &me);
    /* the op only (a maximum is a user-defined op: large_count.c); the
     * counts are ints, as the planner makes only those hierarchical */
    int rc = mrt_count_make(1, base, max ? MPI_MAX : MPI_SUM, &op);
    int *counts = malloc(2 * (size_t)q * sizeof *counts);
    if (rc != MPI_SUCCESS || !counts) {
        free(counts);
        if (rc == MPI_SUCCESS)
            mrt_count_free(&op);
        return rc != MPI_SUCCESS ? rc : MPI_ERR_NO_MEM;
    }
    int *displs = counts + q;
    for (int j = 0, at = 0; j < q; j++) {
        counts[j] = (int)(count / q + (j < count % q));
        displs[j] = at;
        at += counts[j];
    }
    char *mine = (char *)out + (size_t)displs[me] * (size_t)elsize;
    int64_t block = (int64_t)counts[me] * elsize;
    mrt_comm_ledger(c, 0, count * elsize); /* inside the node */
    rc = MPI_Reduce_scatter(in, mine, counts, base, op.op, local);
    if (rc == MPI_SUCCESS) {
        c->ledger_inter += block;
        mrt_comm_ledger(c, 0, block);
        rc = MPI_Allreduce(MPI_IN_PLACE, mine, counts[me], base, op.op, cross);
    }
    if (rc == MPI_SUCCESS) {
        mrt_comm_ledger(c, 0, block);
        rc = MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, counts,
                            displs, base, local);
    }
    mrt_count_free(&op);
    free(counts);
    return rc;
}
