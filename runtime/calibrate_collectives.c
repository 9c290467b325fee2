/*
 * calibrate_collectives.c — the profile's collective rows timed again,
 * now, on this machine (mrt_machine_time_collectives, meshrt_mpi.h).
 *
 * Why again: on a shared host the time of one collective moves by
 * several times from one stretch of seconds to the next.  Measured on
 * one host, a 1 MiB all-reduce between two ranks took 150-190 us for
 * some stretches and 700-800 us for others, in plain MPI as in
 * calibrate, which read 200, 437 and 1060 us in three calibrations
 * minutes apart (docs/calibration.md, round M).  A row measured in one
 * stretch then prices the runs of another.  So `meshrt validate` times
 * the rows again just before its runs, as it times the plans'
 * products: the same kinds, group sizes and bytes as calibrate's rows,
 * with calibrate's statistic (the median over repetitions of the
 * slowest rank's time, each after a barrier), but the rows taking turns
 * over the rounds, so that every row sees the same window of the host.
 */
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "plan.h"
#include "runtime.h"

#define ROUNDS 9 /* repetitions of each row, the rows taking turns */

/* The mesh axes of a group of `group` ranks: the first axis of that
 * size, else all axes of more than one rank when together they are
 * that size; 0 when there is none. */
static unsigned mask_of(const mrt_mesh *m, int64_t group)
{
    unsigned all = 0;
    for (int a = 0; a < m->naxes; a++)
        if (m->size[a] > 1) {
            if (m->size[a] == group)
                return 1u << a;
            all |= 1u << a;
        }
    return all && mrt_mesh_group_size(m, all) == group ? all : 0;
}

/* 1 when every rank of comm is on one host (one shared-memory node). */
static int one_node(MPI_Comm comm)
{
    MPI_Comm shared;
    int size, here, fewest;
    MPI_Comm_size(comm, &size);
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
    MPI_Comm_size(shared, &here);
    MPI_Comm_free(&shared);
    MPI_Allreduce(&here, &fewest, 1, MPI_INT, MPI_MIN, comm);
    return fewest == size;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* What the rows are timed with: a group per distinct set of axes. */
typedef struct timing {
    int nrows;
    int row[MRT_PROFILE_ROWS];      /* index into the profile's rows */
    int group_of[MRT_PROFILE_ROWS]; /* index into comm[] */
    int ngroups;
    unsigned mask[MRT_MAX_AXES + 1];
    MPI_Comm comm[MRT_MAX_AXES + 1];
    size_t send_bytes, recv_bytes;
} timing;

/* The rows of profile p that a group of mesh m can time, into *t. */
static void find_rows(const mrt_profile *p, const mrt_mesh *m, timing *t)
{
    for (int i = 0; i < p->ncoll; i++) {
        const mrt_coll_row *r = &p->coll[i];
        unsigned mask = r->group > 1 ? mask_of(m, r->group) : 0;
        if (!mask || r->bytes < 4 * r->group || r->bytes % (4 * r->group) ||
            r->bytes > ((int64_t)1 << 26))
            continue; /* whole floats per member, at most 64 MiB */
        int g = 0;
        while (g < t->ngroups && t->mask[g] != mask)
            g++;
        if (g == t->ngroups)
            t->mask[t->ngroups++] = mask;
        t->row[t->nrows] = i;
        t->group_of[t->nrows++] = g;
        size_t in = (size_t)r->bytes,
               out = r->kind == MRT_COLL_ALLGATHER ? in * (size_t)r->group : in;
        if (in > t->send_bytes)
            t->send_bytes = in;
        if (out > t->recv_bytes)
            t->recv_bytes = out;
    }
}

/* Every row of t timed over the rounds into times[row * ROUNDS + r],
 * the slowest rank's. */
static void time_rows(MPI_Comm comm, const mrt_profile *p, const timing *t,
                      void *send, void *recv, double *times)
{
    for (int r = -1; r < ROUNDS; r++) /* round -1 warms up */
        for (int i = 0; i < t->nrows; i++) {
            const mrt_coll_row *row = &p->coll[t->row[i]];
            MPI_Barrier(comm);
            double t0 = MPI_Wtime();
            mrt_calib_run_coll((mrt_coll)row->kind, t->comm[t->group_of[i]],
                               (int)row->group, row->bytes, send, recv);
            if (r >= 0)
                times[i * ROUNDS + r] = MPI_Wtime() - t0;
        }
    MPI_Allreduce(MPI_IN_PLACE, times, t->nrows * ROUNDS, MPI_DOUBLE, MPI_MAX,
                  comm);
}

/* Row (kind, group, bytes) of every plan's profile set to seconds. */
static void set_row(mrt_plan *const *plans, int n, const mrt_coll_row *row,
                    double seconds)
{
    for (int j = 0; j < n; j++) {
        mrt_profile *q = &plans[j]->profile;
        for (int i = 0; i < q->ncoll; i++)
            if (q->coll[i].kind == row->kind &&
                q->coll[i].group == row->group &&
                q->coll[i].bytes == row->bytes)
                q->coll[i].time_s = seconds;
    }
}

mrt_status mrt_machine_time_collectives(MPI_Comm comm, mrt_plan *const *plans,
                                        int n, int *timed, mrt_error *err)
{
    mrt_status st = mrt_calib_check_plans(comm, plans, n, timed,
                                          "mrt_machine_time_collectives", err);
    if (st != MRT_OK)
        return st;
    if (n == 0)
        return MRT_OK;
    int size;
    MPI_Comm_size(comm, &size);
    const mrt_mesh *mesh = &plans[0]->mesh;
    if (mesh->nranks != size)
        return MRT_OK; /* no group of the mesh to time them on: the runs
                          will say why the plans do not run here */
    if (!one_node(comm))
        return MRT_OK; /* the rows are of collectives inside a node */
    const mrt_profile *p = &plans[0]->profile;
    timing t = {0};
    find_rows(p, mesh, &t);
    if (!t.nrows)
        return MRT_OK;
    int rank;
    MPI_Comm_rank(comm, &rank);
    int64_t coords[MRT_MAX_AXES];
    mrt_mesh_coords(mesh, rank, coords);
    for (int g = 0; g < t.ngroups; g++)
        MPI_Comm_split(comm, (int)mrt_mesh_group_color(mesh, t.mask[g], coords),
                       (int)mrt_mesh_group_index(mesh, t.mask[g], coords),
                       &t.comm[g]);
    void *send = malloc(t.send_bytes), *recv = malloc(t.recv_bytes);
    double *times = malloc(sizeof *times * (size_t)t.nrows * ROUNDS);
    st = mrt_comm_agree(
        comm,
        send && recv && times
            ? MRT_OK
            : mrt_error_set(err, MRT_E_NOMEM, "", (mrt_mark){0},
                            "out of memory for timing the collectives"),
        err);
    if (st == MRT_OK) {
        memset(send, 0, t.send_bytes); /* zeros: no NaN to slow the sums */
        memset(recv, 0, t.recv_bytes);
        time_rows(comm, p, &t, send, recv, times);
        for (int i = 0; i < t.nrows; i++) {
            double *own = times + (size_t)i * ROUNDS;
            qsort(own, ROUNDS, sizeof *own, by_value);
            mrt_coll_row row = p->coll[t.row[i]]; /* a copy: p changes */
            set_row(plans, n, &row, own[ROUNDS / 2]);
        }
        if (timed)
            *timed = t.nrows;
    }
    for (int g = 0; g < t.ngroups; g++)
        MPI_Comm_free(&t.comm[g]);
    free(times);
    free(recv);
    free(send);
    return st;
}
