/*
 * raw_uneven.c — the raw MPI reference of a collective over uneven
 * splits (bench/collectives.c, target 3): what a programmer would write
 * by hand to make the same move as meshrt's executor, with nothing of
 * runtime/uneven.c or runtime/datatype.c.
 *
 * Every rank of the group learns the others' mesh coordinates once (an
 * MPI_Allgather over the group communicator, so member q is rank q of
 * that communicator), and from them, by the block rule of layout.h, the
 * box each member holds before the step and the box it holds after.  It
 * sends member q the part of its input box inside q's output box and
 * receives from q the part of q's input box inside its own output box:
 * one MPI_Type_create_subarray per peer and direction, over this rank's
 * own shard extents (row-major), made once before the timing; then each
 * repetition is one MPI_Alltoallw.
 */
#include "raw_uneven.h"

#include <limits.h>
#include <stdlib.h>

/* The box the rank at coords holds of layout l: its first global index
 * and its extent in each dim. */
static void box_at(const mrt_layout *l, const mrt_mesh *m,
                   const int64_t coords[], int64_t at[], int64_t ext[])
{
    mrt_layout_shard_offset(l, m, coords, at);
    mrt_layout_shard_shape_at(l, m, coords, ext);
}

/* The subarray of the shard (at, ext) where it meets the box (bat,
 * bext): count 1 and its type, or count 0 and MPI_BYTE when they do not
 * meet. */
static int meet_type(int n, const int64_t at[], const int64_t ext[],
                     const int64_t bat[], const int64_t bext[],
                     MPI_Datatype base, int *count, MPI_Datatype *t)
{
    int size[MRT_MAX_DIMS], sub[MRT_MAX_DIMS], start[MRT_MAX_DIMS];
    *count = 0;
    *t = MPI_BYTE;
    for (int i = 0; i < n; i++) {
        int64_t lo = at[i] > bat[i] ? at[i] : bat[i];
        int64_t hi = at[i] + ext[i] < bat[i] + bext[i] ? at[i] + ext[i]
                                                       : bat[i] + bext[i];
        if (hi <= lo)
            return MPI_SUCCESS;
        if (ext[i] > INT_MAX)
            return MPI_ERR_ARG;
        size[i] = (int)ext[i];
        sub[i] = (int)(hi - lo);
        start[i] = (int)(lo - at[i]);
    }
    int rc = MPI_Type_create_subarray(n, size, sub, start, MPI_ORDER_C, base,
                                      t);
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_commit(t);
    if (rc == MPI_SUCCESS)
        *count = 1;
    else
        *t = MPI_BYTE;
    return rc;
}

int mrt_bench_uneven_make(const mrt_plan *p, const mrt_step *s,
                          const int64_t coords[], MPI_Comm comm,
                          mrt_bench_uneven *u)
{
    const mrt_mesh *m = &p->mesh;
    const mrt_layout *li = &p->value[s->in].layout,
                     *lo = &p->value[s->out].layout;
    MPI_Datatype base = p->dtype == MRT_F64 ? MPI_DOUBLE : MPI_FLOAT;
    int g, n = li->ndims, rc = MPI_SUCCESS;
    MPI_Comm_size(comm, &g);
    *u = (mrt_bench_uneven){0};
    int64_t *all = malloc((size_t)g * MRT_MAX_AXES * sizeof *all);
    u->count = calloc(3 * (size_t)g, sizeof *u->count);
    u->type = malloc(2 * (size_t)g * sizeof *u->type);
    if (!all || !u->count || !u->type) {
        free(all);
        mrt_bench_uneven_free(u);
        return MPI_ERR_NO_MEM;
    }
    u->g = g;
    for (int j = 0; j < 2 * g; j++)
        u->type[j] = MPI_BYTE;
    int64_t mine[MRT_MAX_AXES] = {0};
    for (int a = 0; a < m->naxes; a++)
        mine[a] = coords[a];
    rc = MPI_Allgather(mine, MRT_MAX_AXES, MPI_INT64_T, all, MRT_MAX_AXES,
                       MPI_INT64_T, comm);
    int64_t iat[MRT_MAX_DIMS], iext[MRT_MAX_DIMS], oat[MRT_MAX_DIMS],
        oext[MRT_MAX_DIMS];
    box_at(li, m, coords, iat, iext);
    box_at(lo, m, coords, oat, oext);
    for (int q = 0; q < g && rc == MPI_SUCCESS; q++) {
        const int64_t *cq = all + (size_t)q * MRT_MAX_AXES;
        int64_t at[MRT_MAX_DIMS], ext[MRT_MAX_DIMS];
        box_at(lo, m, cq, at, ext); /* q's output box */
        rc = meet_type(n, iat, iext, at, ext, base, &u->count[q], &u->type[q]);
        box_at(li, m, cq, at, ext); /* q's input box */
        if (rc == MPI_SUCCESS)
            rc = meet_type(n, oat, oext, at, ext, base, &u->count[g + q],
                           &u->type[g + q]);
    }
    free(all);
    if (rc != MPI_SUCCESS)
        mrt_bench_uneven_free(u);
    return rc;
}

int mrt_bench_uneven_call(const mrt_bench_uneven *u, const void *in, void *out,
                          MPI_Comm comm)
{
    const int *zero = u->count + 2 * u->g;
    return MPI_Alltoallw(in, u->count, zero, u->type, out, u->count + u->g,
                         zero, u->type + u->g, comm);
}

void mrt_bench_uneven_free(mrt_bench_uneven *u)
{
    for (int j = 0; u->type && j < 2 * u->g; j++)
        if (u->type[j] != MPI_BYTE)
            MPI_Type_free(&u->type[j]);
    free(u->type);
    free(u->count);
    *u = (mrt_bench_uneven){0};
}
