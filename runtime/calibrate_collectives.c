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

/* The rows being timed, their groups and buffers, and the times so far
 * (mrt_calib_collectives_create). */
struct mrt_calib_collectives {
    MPI_Comm comm;
    timing t;
    void *send, *recv;
    int rounds, cap;
    double *times; /* [nrows][cap] the slowest rank's */
    double *sorted;
};

/* One repetition of every row, in turn, each from a barrier; into
 * round r of the times when r >= 0 (r < 0: a warm-up). */
static void time_round(mrt_calib_collectives *c, const mrt_profile *p, int r)
{
    timing *t = &c->t;
    double *mine = c->sorted;
    for (int i = 0; i < t->nrows; i++) {
        const mrt_coll_row *row = &p->coll[t->row[i]];
        MPI_Barrier(c->comm);
        double t0 = MPI_Wtime();
        mrt_calib_run_coll((mrt_coll)row->kind, t->comm[t->group_of[i]],
                           (int)row->group, row->bytes, c->send, c->recv);
        mine[i] = MPI_Wtime() - t0;
    }
    MPI_Allreduce(MPI_IN_PLACE, mine, t->nrows, MPI_DOUBLE, MPI_MAX, c->comm);
    for (int i = 0; r >= 0 && i < t->nrows; i++)
        c->times[(size_t)i * (size_t)c->cap + (size_t)r] = mine[i];
}

mrt_status mrt_calib_collectives_create(MPI_Comm comm, mrt_plan *const *plans,
                                        int n, int rounds,
                                        mrt_calib_collectives **out,
                                        mrt_error *err)
{
    *out = NULL;
    if (n == 0 || rounds < 1)
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
    mrt_calib_collectives *c = calloc(1, sizeof *c);
    timing t = {0};
    find_rows(p, mesh, &t);
    int ok = c != NULL;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (!ok || !t.nrows) {
        free(c);
        return ok ? MRT_OK
                  : mrt_error_set(err, MRT_E_NOMEM, "", (mrt_mark){0},
                                  "out of memory for timing the collectives");
    }
    c->comm = comm;
    c->t = t;
    c->cap = rounds;
    int rank;
    MPI_Comm_rank(comm, &rank);
    int64_t coords[MRT_MAX_AXES];
    mrt_mesh_coords(mesh, rank, coords);
    for (int g = 0; g < t.ngroups; g++)
        MPI_Comm_split(comm, (int)mrt_mesh_group_color(mesh, t.mask[g], coords),
                       (int)mrt_mesh_group_index(mesh, t.mask[g], coords),
                       &c->t.comm[g]);
    c->send = malloc(t.send_bytes);
    c->recv = malloc(t.recv_bytes);
    c->times = malloc(sizeof *c->times * (size_t)t.nrows * (size_t)rounds);
    c->sorted = malloc(sizeof *c->sorted *
                       (size_t)(t.nrows > rounds ? t.nrows : rounds));
    mrt_status st = mrt_comm_agree(
        comm,
        c->send && c->recv && c->times && c->sorted
            ? MRT_OK
            : mrt_error_set(err, MRT_E_NOMEM, "", (mrt_mark){0},
                            "out of memory for timing the collectives"),
        err);
    if (st != MRT_OK) {
        mrt_calib_collectives_destroy(c);
        return st;
    }
    memset(c->send, 0, t.send_bytes); /* zeros: no NaN to slow the sums */
    memset(c->recv, 0, t.recv_bytes);
    time_round(c, p, -1); /* a warm-up: the groups' first connections */
    *out = c;
    return MRT_OK;
}

void mrt_calib_collectives_round(mrt_calib_collectives *c, const mrt_profile *p)
{
    if (c && c->rounds < c->cap)
        time_round(c, p, c->rounds++);
}

int mrt_calib_collectives_set(mrt_calib_collectives *c, mrt_plan *const *plans,
                              int n)
{
    if (!c || !c->rounds)
        return 0;
    const mrt_profile *p = &plans[0]->profile;
    for (int i = 0; i < c->t.nrows; i++) {
        memcpy(c->sorted, c->times + (size_t)i * (size_t)c->cap,
               sizeof *c->sorted * (size_t)c->rounds);
        qsort(c->sorted, (size_t)c->rounds, sizeof *c->sorted, by_value);
        int m = c->rounds;
        double median = m % 2 ? c->sorted[m / 2]
                              : (c->sorted[m / 2 - 1] + c->sorted[m / 2]) / 2;
        mrt_coll_row row = p->coll[c->t.row[i]]; /* a copy: p changes */
        set_row(plans, n, &row, median);
    }
    return c->t.nrows;
}

void mrt_calib_collectives_destroy(mrt_calib_collectives *c)
{
    if (!c)
        return;
    for (int g = 0; g < c->t.ngroups; g++)
        if (c->t.comm[g] != MPI_COMM_NULL && c->t.comm[g])
            MPI_Comm_free(&c->t.comm[g]);
    free(c->send);
    free(c->recv);
    free(c->times);
    free(c->sorted);
    free(c);
}

mrt_status mrt_machine_time_collectives(MPI_Comm comm, mrt_plan *const *plans,
                                        int n, int *timed, mrt_error *err)
{
    mrt_status st = mrt_calib_check_plans(comm, plans, n, timed,
                                          "mrt_machine_time_collectives", err);
    mrt_calib_collectives *c = NULL;
    if (st == MRT_OK)
        st = mrt_calib_collectives_create(comm, plans, n, ROUNDS, &c, err);
    for (int r = 0; c && r < ROUNDS; r++)
        mrt_calib_collectives_round(c, &plans[0]->profile);
    int rows = mrt_calib_collectives_set(c, plans, n);
    if (timed && st == MRT_OK)
        *timed = rows;
    mrt_calib_collectives_destroy(c);
    return st;
}
