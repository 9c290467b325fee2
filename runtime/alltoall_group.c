/*
 * alltoall_group.c — running an ALLTOALL_GROUP step: one MPI_Alltoallw
 * over the sub-communicator of the step's axes.
 *
 * Rank s sends rank r the box where its block under the input's layout
 * meets r's block under the output's (ops/exchange.c computes the boxes
 * for the planner's cost too), read in place from the input shard and
 * written in place into the output shard through one MPI datatype per
 * peer and direction: no packing pass, and peers whose blocks do not meet
 * get a count of 0.  Blocks are each rank's own (uneven splits: layout.h).
 * The ledger records this rank's whole input shard, as for every
 * all-to-all.  The call is blocking (ops/overlap.c keeps it so):
 * the per-peer arrays live only for the call.
 */
#include <stdlib.h>

#include "runtime.h"

/* The committed type of the box of extents ext at `at` in a row-major
 * shard of extents local (the box's offset built in, so the call's int
 * displacements stay 0). */
static int box_type(int n, const int64_t local[], const int64_t at[],
                    const int64_t ext[], int elsize, MPI_Datatype base,
                    MPI_Datatype *out)
{
    MPI_Datatype sub;
    int rc = mrt_subarray_type(n, local, ext, base, &sub);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Aint off = 0;
    for (int i = 0; i < n; i++)
        off = off * (MPI_Aint)local[i] + (MPI_Aint)at[i];
    off *= elsize;
    int one = 1;
    rc = MPI_Type_create_struct(1, &one, &off, &sub, out);
    MPI_Type_free(&sub);
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_commit(out);
    return rc;
}

int mrt_exec_alltoall_group(mrt_exec *e, const mrt_step *s)
{
    const mrt_plan *p = e->plan;
    const mrt_mesh *m = &p->mesh;
    const mrt_value *in = &p->value[s->in], *out = &p->value[s->out];
    const int64_t *me = e->comm->coords;
    MPI_Datatype base = mrt_mpi_type(in->dtype);
    int g = (int)s->group, n = in->layout.ndims, rc = MPI_SUCCESS;
    int64_t il[MRT_MAX_DIMS], ol[MRT_MAX_DIMS]; /* this rank's extents */
    mrt_layout_shard_shape_at(&in->layout, m, me, il);
    mrt_layout_shard_shape_at(&out->layout, m, me, ol);
    int *cnt = calloc(4 * (size_t)g, sizeof *cnt);
    MPI_Datatype *type = malloc(2 * (size_t)g * sizeof *type);
    if (!cnt || !type) {
        free(cnt);
        free(type);
        return MPI_ERR_NO_MEM;
    }
    int *scnt = cnt, *rcnt = cnt + g, *displ = cnt + 2 * g;
    MPI_Datatype *stype = type, *rtype = type + g;
    for (int j = 0; j < 2 * g; j++)
        type[j] = MPI_DATATYPE_NULL;
    for (int j = 0; j < g && rc == MPI_SUCCESS; j++) {
        int64_t q[MRT_MAX_AXES], a[MRT_MAX_DIMS], b[MRT_MAX_DIMS],
            ext[MRT_MAX_DIMS];
        mrt_exchange_member(m, s->axes, me, j, q);
        stype[j] = rtype[j] = base;
        if (mrt_exchange_box(&in->layout, &out->layout, m, me, q, a, b, ext)) {
            scnt[j] = 1;
            rc = box_type(n, il, a, ext, in->elsize, base, &stype[j]);
        }
        if (rc == MPI_SUCCESS &&
            mrt_exchange_box(&in->layout, &out->layout, m, q, me, a, b, ext)) {
            rcnt[j] = 1;
            rc = box_type(n, ol, b, ext, in->elsize, base, &rtype[j]);
        }
    }
    if (rc == MPI_SUCCESS) {
        mrt_comm_ledger(e->comm, s->axes,
                        mrt_layout_shard_count_at(&in->layout, m, me) *
                            in->elsize);
        rc = MPI_Alltoallw(e->buf[s->in], scnt, displ, stype, e->buf[s->out],
                           rcnt, displ, rtype, e->comm->group[s->axes]);
    }
    for (int j = 0; j < 2 * g; j++)
        if (type[j] != MPI_DATATYPE_NULL && type[j] != base)
            MPI_Type_free(&type[j]);
    free(cnt);
    free(type);
    return rc;
}
