/*
 * validate.c — the measuring half of `meshrt validate`: each
 * partitioning's plan set up on the ranks (mrt_runner_create), run once
 * to warm up (first touches of the arena, MPI's first connections),
 * then `repeat` times, each run from a barrier.  Every rank's step
 * times (summed over the runs by the executor) are reduced to rank 0,
 * the slowest rank's per step and per op, and the wall time of the runs
 * end to end, the slowest rank's; rank 0 files each step under its kind
 * and size class next to the plan's modeled time.  The summing up and
 * printing is validate_report.c's.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"
#include "validate.h"

static mrt_status nomem(mrt_error *err)
{
    return mrt_error_set(err, MRT_E_NOMEM, "", (mrt_mark){0}, "out of memory");
}

mrt_status mrt_validation_create(MPI_Comm comm, int repeat,
                                 mrt_validation **out, mrt_error *err)
{
    if (comm == MPI_COMM_NULL || !out)
        return mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0},
                             "mrt_validation_create: a NULL argument");
    mrt_validation *v = calloc(1, sizeof *v);
    if (!v)
        return nomem(err);
    v->comm = comm;
    MPI_Comm_rank(comm, &v->rank);
    MPI_Comm_size(comm, &v->size);
    v->repeat = repeat < 1 ? 1 : repeat;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    v->cores = cores > 0 ? (int)cores : 0;
    v->load[0] = v->load[1] = -1;
    *out = v;
    return MRT_OK;
}

void mrt_validation_destroy(mrt_validation *v)
{
    if (!v)
        return;
    for (int i = 0; i < v->nalts; i++)
        free(v->alt[i].op);
    free(v->alt);
    free(v);
}

/* A new, zeroed partitioning named name; NULL when out of memory. */
static mrt_val_alt *new_alt(mrt_validation *v, const char *name)
{
    if (v->nalts == v->cap) {
        int cap = v->cap ? 2 * v->cap : 8;
        mrt_val_alt *a = realloc(v->alt, (size_t)cap * sizeof *a);
        if (!a)
            return NULL;
        v->alt = a;
        v->cap = cap;
    }
    mrt_val_alt *a = &v->alt[v->nalts++];
    memset(a, 0, sizeof *a);
    snprintf(a->name, sizeof a->name, "%s", name ? name : "");
    return a;
}

mrt_status mrt_validation_add_failed(mrt_validation *v, const char *name,
                                     const mrt_error *why)
{
    if (!v)
        return MRT_E_USAGE;
    mrt_val_alt *a = new_alt(v, name);
    if (!a)
        return MRT_E_NOMEM;
    if (why) {
        mrt_error one = *why;
        one.context[0] = '\0';
        mrt_error_format(&one, a->error, sizeof a->error);
    }
    return MRT_OK;
}

void mrt_val_classify(const mrt_step *s, int *kind, int *cls)
{
    *cls = 0;
    if (s->kind == MRT_STEP_EINSUM) {
        *kind = MRT_VAL_EINSUM;
        return;
    }
    if (!mrt_step_is_collective(s->kind)) {
        *kind = MRT_VAL_LOCAL;
        return;
    }
    static const mrt_coll coll[MRT_STEP_KIND_COUNT] = {
        [MRT_STEP_ALLGATHER] = MRT_COLL_ALLGATHER,
        [MRT_STEP_ALLTOALL] = MRT_COLL_ALLTOALL,
        [MRT_STEP_ALLREDUCE] = MRT_COLL_ALLREDUCE,
        [MRT_STEP_REDUCE_SCATTER] = MRT_COLL_REDUCE_SCATTER,
        [MRT_STEP_PERMUTE] = MRT_COLL_PERMUTE,
        [MRT_STEP_ALLTOALL_GROUP] = MRT_COLL_ALLTOALL,
    };
    *kind = MRT_VAL_COLL0 + (int)coll[s->kind];
    int64_t b = s->bytes;
    *cls = b < (64 << 10) ? 0 : b < (1 << 20) ? 1 : b < (16 << 20) ? 2 : 3;
}

/* Rank 0: the figures of plan p filed into a, from the slowest rank's
 * step times t[nsteps] and op times t[nsteps + i]. */
static void file_steps(mrt_val_alt *a, const mrt_plan *p, const double *t)
{
    for (int k = 0; k < p->nsteps; k++) {
        int kind, cls;
        mrt_val_classify(&p->step[k], &kind, &cls);
        mrt_val_cell *c = &a->cell[kind][cls];
        c->steps++;
        c->model += p->step[k].time_s;
        c->measured += t[k];
    }
    for (int i = 0; i < p->nops; i++) {
        const mrt_plan_op *o = &p->op[i];
        mrt_val_op *d = &a->op[i];
        d->user = o->user;
        snprintf(d->what, sizeof d->what, "%s", o->what ? o->what : "");
        int tensor = p->value[o->out_value].tensor;
        snprintf(d->tensor, sizeof d->tensor, "%s",
                 tensor >= 0 ? p->tensor_name[tensor] : "");
        d->model = o->time_s;
        d->measured = t[p->nsteps + i];
    }
    a->nops = p->nops;
    a->model = p->totals.time_s;
}

/* The warm-up run, then the timed ones; this rank's wall time per run
 * into *wall.  Collective. */
static mrt_status timed_runs(mrt_runner *r, int repeat, double *wall,
                             mrt_error *err)
{
    mrt_status st = mrt_runner_execute(r, NULL, err);
    if (st)
        return st;
    mrt_run_options opt = {.repeat = repeat};
    MPI_Barrier(r->comm->world);
    double t0 = MPI_Wtime();
    st = mrt_runner_execute(r, &opt, err);
    *wall = (MPI_Wtime() - t0) / repeat;
    return st;
}

/* Runs plan and reduces the timings into a (rank 0).  Collective. */
static mrt_status measure(mrt_validation *v, mrt_val_alt *a,
                          const mrt_spec *spec, const mrt_plan *plan,
                          mrt_error *err)
{
    mrt_runner *r = NULL;
    mrt_status st = mrt_runner_create(spec, plan, v->comm, &r, err);
    double wall = 0;
    if (st == MRT_OK)
        st = timed_runs(r, v->repeat, &wall, err);
    int n = plan->nsteps, nops = plan->nops;
    double *t = st ? NULL : calloc(2 * ((size_t)n + (size_t)nops) + 2, sizeof *t);
    st = mrt_comm_agree(v->comm, st ? st : t ? MRT_OK : nomem(err), err);
    if (st == MRT_OK) {
        double *mine = t + n + nops + 1;
        for (int k = 0; k < n; k++)
            mine[k] = r->exec->step_time[k] / v->repeat;
        for (int i = 0; i < nops; i++)
            for (int k = 0; k < plan->op[i].nsteps; k++)
                mine[n + i] += mine[plan->op[i].first_step + k];
        mine[n + nops] = wall;
        MPI_Reduce(mine, t, n + nops + 1, MPI_DOUBLE, MPI_MAX, 0, v->comm);
        if (v->rank == 0) {
            file_steps(a, plan, t);
            a->measured = t[n + nops];
            a->ok = 1;
        }
    }
    free(t);
    mrt_runner_destroy(r);
    return st;
}

mrt_status mrt_validation_add(mrt_validation *v, const char *name,
                              const mrt_spec *spec, const mrt_plan *plan,
                              mrt_error *err)
{
    if (!v)
        return mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0},
                             "mrt_validation_add: a NULL validation");
    mrt_val_alt *a = new_alt(v, name);
    mrt_val_op *ops = a && plan ? calloc((size_t)plan->nops + 1, sizeof *ops)
                                : NULL;
    mrt_status st = mrt_comm_agree(v->comm, ops ? MRT_OK : nomem(err), err);
    if (st) {
        free(ops);
        return st;
    }
    a->op = ops;
    if (getloadavg(&v->load[1], 1) != 1)
        v->load[1] = -1;
    if (v->load[0] < 0)
        v->load[0] = v->load[1];
    if (!v->spec[0]) {
        snprintf(v->spec, sizeof v->spec, "%s", spec->path);
        snprintf(v->machine, sizeof v->machine, "%s", plan->profile.source);
    }
    st = measure(v, a, spec, plan, err);
    if (getloadavg(&v->load[1], 1) != 1)
        v->load[1] = -1;
    if (st && v->rank == 0)
        mrt_error_format(err, a->error, sizeof a->error);
    return st;
}
