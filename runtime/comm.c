/*
 * comm.c — the mesh on MPI: one sub-communicator per set of mesh axes
 * that the plan uses (made once, up front, by MPI_Comm_split with the
 * group's colour and the rank's position in the group as key), and the
 * thin layer every collective goes through.  That layer keeps the ledger:
 * the bytes of the send buffer handed to each MPI call, which run
 * --repeat compares with what the plan predicted.
 */
#include <limits.h>
#include <stdlib.h>

#include "runtime.h"

static MPI_Datatype mpi_type(mrt_dtype t)
{
    return t == MRT_F64 ? MPI_DOUBLE : MPI_FLOAT;
}

static mrt_status make_group(mrt_comm *c, unsigned mask, mrt_error *err)
{
    if (c->group[mask] != MPI_COMM_NULL)
        return MRT_OK;
    int64_t color = mrt_mesh_group_color(&c->mesh, mask, c->coords);
    int64_t key = mrt_mesh_group_index(&c->mesh, mask, c->coords);
    if (MPI_Comm_split(c->world, (int)color, (int)key, &c->group[mask]) !=
        MPI_SUCCESS)
        return mrt_error_set(err, MRT_E_RUNTIME, "", (mrt_mark){0},
                             "MPI_Comm_split failed for axes mask %u", mask);
    return MRT_OK;
}

mrt_status mrt_comm_create(const mrt_plan *plan, MPI_Comm world,
                           mrt_comm **out, mrt_error *err)
{
    *out = NULL;
    mrt_comm *c = calloc(1, sizeof *c);
    if (!c)
        return mrt_error_set(err, MRT_E_NOMEM, "", (mrt_mark){0},
                             "out of memory");
    for (unsigned i = 0; i < (1u << MRT_MAX_AXES); i++)
        c->group[i] = MPI_COMM_NULL;
    c->world = world;
    c->mesh = plan->mesh;
    MPI_Comm_rank(world, &c->rank);
    MPI_Comm_size(world, &c->size);
    mrt_mesh_coords(&c->mesh, c->rank, c->coords);
    mrt_status st = MRT_OK;
    /* Every rank walks the same plan, so the splits match up. */
    for (int k = 0; k < plan->nsteps && st == MRT_OK; k++)
        if (mrt_step_is_collective(plan->step[k].kind))
            st = make_group(c, plan->step[k].axes, err);
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
    for (unsigned i = 0; i < (1u << MRT_MAX_AXES); i++)
        if (c->group[i] != MPI_COMM_NULL)
            MPI_Comm_free(&c->group[i]);
    free(c);
}

static void ledger(mrt_comm *c, int64_t count, mrt_dtype t)
{
    c->ledger_bytes += count * mrt_dtype_size(t);
    c->ledger_calls++;
}

/* MPI counts are ints: larger shards are refused, not truncated. */
#define CHECK_COUNT(n)                                                      \
    do {                                                                    \
        if ((n) > INT_MAX)                                                  \
            return MPI_ERR_COUNT;                                           \
    } while (0)

int mrt_comm_allreduce(mrt_comm *c, unsigned axes, const void *in,
                       void *out, int64_t count, mrt_dtype t, int max,
                       MPI_Request *req)
{
    CHECK_COUNT(count);
    ledger(c, count, t);
    MPI_Op op = max ? MPI_MAX : MPI_SUM;
    if (req)
        return MPI_Iallreduce(in, out, (int)count, mpi_type(t), op,
                              c->group[axes], req);
    return MPI_Allreduce(in, out, (int)count, mpi_type(t), op,
                         c->group[axes]);
}

int mrt_comm_allgather(mrt_comm *c, unsigned axes, const void *in,
                       void *out, int64_t count, mrt_dtype t,
                       MPI_Request *req)
{
    CHECK_COUNT(count);
    ledger(c, count, t);
    if (req)
        return MPI_Iallgather(in, (int)count, mpi_type(t), out, (int)count,
                              mpi_type(t), c->group[axes], req);
    return MPI_Allgather(in, (int)count, mpi_type(t), out, (int)count,
                         mpi_type(t), c->group[axes]);
}

int mrt_comm_reduce_scatter(mrt_comm *c, unsigned axes, const void *in,
                            void *out, int64_t count_per_rank, mrt_dtype t,
                            MPI_Request *req)
{
    CHECK_COUNT(count_per_rank);
    int p;
    MPI_Comm_size(c->group[axes], &p);
    ledger(c, count_per_rank * p, t);
    if (req)
        return MPI_Ireduce_scatter_block(in, out, (int)count_per_rank,
                                         mpi_type(t), MPI_SUM,
                                         c->group[axes], req);
    return MPI_Reduce_scatter_block(in, out, (int)count_per_rank,
                                    mpi_type(t), MPI_SUM, c->group[axes]);
}

int mrt_comm_exchange(mrt_comm *c, unsigned axes, const void *in, void *out,
                      int64_t count, int dest, int src, mrt_dtype t)
{
    CHECK_COUNT(count);
    int p;
    MPI_Comm_size(c->group[axes], &p);
    int *counts = calloc(4 * (size_t)p, sizeof *counts);
    if (!counts)
        return MPI_ERR_NO_MEM;
    int *scount = counts, *rcount = counts + p, *displ = counts + 2 * p;
    scount[dest] = (int)count;
    rcount[src] = (int)count;
    ledger(c, count, t);
    int rc = MPI_Alltoallv(in, scount, displ, mpi_type(t), out, rcount, displ,
                           mpi_type(t), c->group[axes]);
    free(counts);
    return rc;
}

/* All ranks end up with the first failing rank's status and error: no rank
 * goes on into a collective that another rank will never reach. */
mrt_status mrt_comm_agree(MPI_Comm w, mrt_status st, mrt_error *err)
{
    int rank, size, who;
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
    CHECK_COUNT(recv_count);
    c->ledger_bytes += bytes;
    c->ledger_calls++;
    if (req)
        return MPI_Ialltoall(in, 1, send_type, out, (int)recv_count,
                             recv_type, c->group[axes], req);
    return MPI_Alltoall(in, 1, send_type, out, (int)recv_count, recv_type,
                        c->group[axes]);
}

int mrt_comm_allgather_typed(mrt_comm *c, unsigned axes, const void *in,
                             int64_t count, mrt_dtype t, void *out,
                             MPI_Datatype recv_type, MPI_Request *req)
{
    CHECK_COUNT(count);
    ledger(c, count, t);
    if (req)
        return MPI_Iallgather(in, (int)count, mpi_type(t), out, 1, recv_type,
                              c->group[axes], req);
    return MPI_Allgather(in, (int)count, mpi_type(t), out, 1, recv_type,
                         c->group[axes]);
}
