/*
 * comm.c — the mesh on MPI: one sub-communicator per set of mesh axes
 * that the plan uses (made once, up front, by MPI_Comm_split with the
 * group's colour and the rank's position in the group as key), and the
 * thin layer every collective goes through.  That layer keeps the ledger:
 * the bytes of the send buffer handed to each MPI call, which run
 * --repeat compares with what the plan predicted, and of those the
 * bytes handed over groups that cross nodes (the plan's profile places
 * ranks on nodes: mesh_nodes.h).  An all-reduce the plan made
 * hierarchical runs in hier.c.
 *
 * The 16-bit types travel as 2-byte MPI types: MPI has no bfloat16 or
 * float16 (MPI 4.1 has no float16 in C either), so bfloat16 is handed
 * over as MPI_UINT16_T and float16 as MPI_INT16_T.  A move (gather,
 * all-to-all, permute, the derived types of datatype.c and uneven.c)
 * never looks inside an element; a reduction over them takes a
 * user-defined op (large_count.c) that widens both operands to float32,
 * adds (or takes the maximum) and rounds back to nearest even.  The two
 * integer types only tell that op which 16-bit type it holds.  Rounding
 * happens at every hop of MPI's algorithm: a sum over p ranks in 16 bits
 * is rounded up to p - 1 times (ring, recursive halving: each partial
 * sum once), where a float32 reduction would keep 16 more bits, so
 * --verify's 16-bit tolerances allow for them (verify_run.c).  The
 * ledger counts 2 bytes per element, as the plan does.
 */
#include <stdlib.h>

#include "runtime.h"

MPI_Datatype mrt_mpi_type(mrt_dtype t)
{
    switch (t) {
    case MRT_F64: return MPI_DOUBLE;
    case MRT_I32: return MPI_INT32_T;
    case MRT_BF16: return MPI_UINT16_T; /* (see above) */
    case MRT_F16: return MPI_INT16_T;
    case MRT_U8: return MPI_UINT8_T; /* (masks: moved, never reduced) */
    default: return MPI_FLOAT;
    }
}

static MPI_Datatype mpi_type(mrt_dtype t)
{
    return mrt_mpi_type(t);
}

static mrt_status make_group(mrt_comm *c, unsigned mask, mrt_error *err)
{
    if (c->group[mask] != MPI_COMM_NULL)
        return MRT_OK;
    /* colour and key are below the mesh's rank count, an int (the spec
     * loader refuses larger meshes) */
    int64_t color = mrt_mesh_group_color(&c->mesh, mask, c->coords);
    int64_t key = mrt_mesh_group_index(&c->mesh, mask, c->coords);
    if (MPI_Comm_split(c->world, (int)color, (int)key, &c->group[mask]) !=
        MPI_SUCCESS)
        return mrt_error_set(err, MRT_E_RUNTIME, "", (mrt_mark){0},
                             "MPI_Comm_split failed for axes mask %u", mask);
    c->inter[mask] = mrt_mesh_span_of(&c->mesh, c->ranks_per_node, mask).tier !=
                     MRT_TIER_INTRA;
    return MRT_OK;
}

mrt_status mrt_comm_create(const mrt_plan *plan, MPI_Comm world, mrt_comm **out,
                           mrt_error *err)
{
    *out = NULL;
    mrt_comm *c = calloc(1, sizeof *c);
    if (!c)
        return mrt_error_set(err, MRT_E_NOMEM, "", (mrt_mark){0},
                             "out of memory");
    for (unsigned i = 0; i < (1u << MRT_MAX_AXES); i++)
        c->group[i] = c->node_group[i] = c->cross_group[i] = MPI_COMM_NULL;
    c->world = world;
    c->mesh = plan->mesh;
    c->ranks_per_node = plan->profile.ranks_per_node;
    MPI_Comm_rank(world, &c->rank);
    MPI_Comm_size(world, &c->size);
    mrt_mesh_coords(&c->mesh, c->rank, c->coords);
    mrt_status st = MRT_OK;
    /* Every rank walks the same plan, so the splits match up. */
    for (int k = 0; k < plan->nsteps && st == MRT_OK; k++)
        if (mrt_step_is_collective(plan->step[k].kind))
            st = make_group(c, plan->step[k].axes, err);
    for (int k = 0; k < plan->nsteps && st == MRT_OK; k++)
        if (plan->step[k].hier)
            st = mrt_hier_make(c, plan->step[k].axes, err);
    if (st == MRT_OK && c->ranks_per_node > 0)
        mrt_hier_check_placement(c);
    if (st != MRT_OK) {
        mrt_comm_destroy(c);
        return st;
    }
    *out = c;
    return MRT_OK;
}

void mrt_comm_destroy(mrt_comm *c)
{
    if (!c)
        return;
    for (unsigned i = 0; i < (1u << MRT_MAX_AXES); i++) {
        MPI_Comm *all[] = {&c->group[i], &c->node_group[i], &c->cross_group[i]};
        for (int j = 0; j < 3; j++)
            if (*all[j] != MPI_COMM_NULL)
                MPI_Comm_free(all[j]);
    }
    free(c);
}

void mrt_comm_ledger(mrt_comm *c, unsigned axes, int64_t bytes)
{
    c->ledger_bytes += bytes;
    c->ledger_calls++;
    if (c->inter[axes])
        c->ledger_inter += bytes;
}

static void ledger(mrt_comm *c, unsigned axes, int64_t count, mrt_dtype t)
{
    mrt_comm_ledger(c, axes, count * mrt_dtype_size(t));
}

/* A pipeline's transfer: the rank at position `from` of the group over
 * axes sends count elements of in to the one at position `to`, which
 * receives them into out; the sender's bytes go to the ledger.  A rank
 * that is neither does nothing. */
int mrt_comm_sendrecv(mrt_comm *c, unsigned axes, const void *in, void *out,
                      int64_t count, mrt_dtype t, int64_t from, int64_t to)
{
    int64_t me = mrt_mesh_group_index(&c->mesh, axes, c->coords);
    mrt_count n;
    if (me != from && me != to)
        return MPI_SUCCESS;
    int rc = mrt_count_make(count, mpi_type(t), MPI_OP_NULL, &n);
    if (rc != MPI_SUCCESS)
        return rc;
    if (me == from) {
        ledger(c, axes, count, t);
        rc = MPI_Send(in, n.count, n.type, (int)to, 0, c->group[axes]);
    } else {
        rc = MPI_Recv(out, n.count, n.type, (int)from, 0, c->group[axes],
                      MPI_STATUS_IGNORE);
    }
    mrt_count_free(&n);
    return rc;
}

/* Counts go through mrt_count_make (large_count.c): a shard of more
 * elements than an int holds is handed to MPI as one element of a
 * derived type, never cast to int. */

int mrt_comm_allreduce(mrt_comm *c, unsigned axes, const void *in, void *out,
                       int64_t count, mrt_dtype t, int max, MPI_Request *req)
{
    mrt_count n;
    int rc = mrt_count_make(count, mpi_type(t), max ? MPI_MAX : MPI_SUM, &n);
    if (rc != MPI_SUCCESS)
        return rc;
    ledger(c, axes, count, t);
    if (req)
        rc = MPI_Iallreduce(in, out, n.count, n.type, n.op, c->group[axes],
                            req);
    else
        rc = MPI_Allreduce(in, out, n.count, n.type, n.op, c->group[axes]);
    mrt_count_free(&n);
    return rc;
}

int mrt_comm_allgather(mrt_comm *c, unsigned axes, const void *in, void *out,
                       int64_t count, mrt_dtype t, MPI_Request *req)
{
    mrt_count n;
    int rc = mrt_count_make(count, mpi_type(t), MPI_OP_NULL, &n);
    if (rc != MPI_SUCCESS)
        return rc;
    ledger(c, axes, count, t);
    if (req)
        rc = MPI_Iallgather(in, n.count, n.type, out, n.count, n.type,
                            c->group[axes], req);
    else
        rc = MPI_Allgather(in, n.count, n.type, out, n.count, n.type,
                           c->group[axes]);
    mrt_count_free(&n);
    return rc;
}

int mrt_comm_reduce_scatter(mrt_comm *c, unsigned axes, const void *in,
                            void *out, int64_t count_per_rank, mrt_dtype t,
                            MPI_Request *req)
{
    int p;
    mrt_count n;
    int rc = mrt_count_make(count_per_rank, mpi_type(t), MPI_SUM, &n);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Comm_size(c->group[axes], &p);
    ledger(c, axes, count_per_rank * p, t);
    if (req)
        rc = MPI_Ireduce_scatter_block(in, out, n.count, n.type, n.op,
                                       c->group[axes], req);
    else
        rc = MPI_Reduce_scatter_block(in, out, n.count, n.type, n.op,
                                      c->group[axes]);
    mrt_count_free(&n);
    return rc;
}

int mrt_comm_exchange(mrt_comm *c, unsigned axes, const void *in, void *out,
                      int64_t count, int dest, int src, mrt_dtype t)
{
    int p;
    mrt_count n;
    int rc = mrt_count_make(count, mpi_type(t), MPI_OP_NULL, &n);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Comm_size(c->group[axes], &p);
    /* the displacements are all 0: one block each way */
    int *counts = calloc(4 * (size_t)p, sizeof *counts);
    if (!counts) {
        mrt_count_free(&n);
        return MPI_ERR_NO_MEM;
    }
    int *scount = counts, *rcount = counts + p, *displ = counts + 2 * p;
    scount[dest] = n.count;
    rcount[src] = n.count;
    ledger(c, axes, count, t);
    rc = MPI_Alltoallv(in, scount, displ, n.type, out, rcount, displ, n.type,
                       c->group[axes]);
    free(counts);
    mrt_count_free(&n);
    return rc;
}

/* All ranks end up with the first failing rank's status and error: no rank
 * goes on into a collective that another rank will never reach. */
mrt_status mrt_comm_agree(MPI_Comm w, mrt_status st, mrt_error *err)
{
    int rank, size, who;
    if (w == MPI_COMM_NULL) /* no ranks to agree with */
        return mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0},
                             "mrt_comm_agree: argument 'comm': "
                             "MPI_COMM_NULL");
    MPI_Comm_rank(w, &rank);
    MPI_Comm_size(w, &size);
    int mine = st != MRT_OK ? rank : size;
    MPI_Allreduce(&mine, &who, 1, MPI_INT, MPI_MIN, w);
    if (who == size)
        return MRT_OK;
    mrt_error e = {0};
    if (rank == who && err)
        e = *err;
    e.code = st;
    MPI_Bcast(&e, (int)sizeof e, MPI_BYTE, who, w);
    if (err)
        *err = e;
    return e.code;
}

int mrt_comm_alltoall_typed(mrt_comm *c, unsigned axes, const void *in,
                            MPI_Datatype send_type, void *out,
                            MPI_Datatype recv_type, int64_t bytes,
                            MPI_Request *req, int64_t recv_count)
{
    /* one block of send_type to each rank: an int count of 1 whatever
     * its size; recv_count elements of recv_type may be any number */
    mrt_count n;
    int rc = mrt_count_make(recv_count, recv_type, MPI_OP_NULL, &n);
    if (rc != MPI_SUCCESS)
        return rc;
    mrt_comm_ledger(c, axes, bytes);
    if (req)
        rc = MPI_Ialltoall(in, 1, send_type, out, n.count, n.type,
                           c->group[axes], req);
    else
        rc = MPI_Alltoall(in, 1, send_type, out, n.count, n.type,
                          c->group[axes]);
    mrt_count_free(&n);
    return rc;
}

int mrt_comm_allgather_typed(mrt_comm *c, unsigned axes, const void *in,
                             int64_t count, mrt_dtype t, void *out,
                             MPI_Datatype recv_type, MPI_Request *req)
{
    mrt_count n;
    int rc = mrt_count_make(count, mpi_type(t), MPI_OP_NULL, &n);
    if (rc != MPI_SUCCESS)
        return rc;
    ledger(c, axes, count, t);
    if (req)
        rc = MPI_Iallgather(in, n.count, n.type, out, 1, recv_type,
                            c->group[axes], req);
    else
        rc = MPI_Allgather(in, n.count, n.type, out, 1, recv_type,
                           c->group[axes]);
    mrt_count_free(&n);
    return rc;
}

int mrt_comm_alltoallw(mrt_comm *c, unsigned axes, const void *in, void *out,
                       const mrt_uneven *u, mrt_dtype t, MPI_Request *req)
{
    int *zero = u->count + 2 * u->g;
    mrt_comm_ledger(c, axes, u->in_count * mrt_dtype_size(t));
    if (req)
        return MPI_Ialltoallw(in, u->count, zero, u->type, out, u->count + u->g,
                              zero, u->type + u->g, c->group[axes], req);
    return MPI_Alltoallw(in, u->count, zero, u->type, out, u->count + u->g,
                         zero, u->type + u->g, c->group[axes]);
}
