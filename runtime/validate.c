/*
 * validate.c — the measuring half of `meshrt validate`: each
 * partitioning's plan set up on the ranks (mrt_runner_create) as it is
 * added; then, in mrt_validation_run, each run once to warm up (first
 * touches of the arena, MPI's first connections), then `repeat` rounds
 * in which the partitionings take turns, one run each from a barrier
 * (a change in the machine's load falls on all of them alike), each
 * from the spec's initial values (mrt_runner_restart: a training run
 * that diverged would time the next on other values); after each
 * round, the plans' products and collective rows timed again, and the
 * plans priced at those rates at the end (validate_retime.c).  Each
 * keeps its fastest run (the slowest rank's wall time), and of that run
 * every rank's step times, reduced to rank 0: the slowest rank's per
 * step and per op; rank 0 files each step under its kind and size class
 * next to the plan's modeled time.  The summing up and
 * printing is validate_report.c's.  A partitioning whose plan an
 * earlier one already has (mrt_plan_same_work) is not run again: it
 * takes that one's figures.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtime.h"
#include "validate.h"

static mrt_status nomem(mrt_error *err)
{
    return mrt_error_set(err, MRT_E_NOMEM, "", (mrt_mark){0}, "out of memory");
}

/* *best raised to rate when rate is a rate and faster. */
static void keep_best(double *best, double rate)
{
    if (rate > 0 && !(*best >= rate))
        *best = rate;
}

/* The first failure of any partitioning, for when none ran. */
static void keep_first(mrt_validation *v, const mrt_error *e)
{
    if (e && e->code && !v->first.code)
        v->first = *e;
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
    v->products = -1;
    v->collectives = -1;
    *out = v;
    return MRT_OK;
}

void mrt_validation_destroy(mrt_validation *v)
{
    if (!v)
        return;
    for (int i = 0; i < v->nalts; i++) {
        mrt_runner_destroy(v->alt[i].runner);
        free(v->alt[i].op);
        free(v->alt[i].mine);
        free(v->alt[i].walls);
    }
    free(v->alt);
    mrt_val_retime_destroy(v);
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
    a->same_as = -1;
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
    keep_first(v, why);
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
        [MRT_STEP_SENDRECV] = MRT_COLL_PERMUTE,
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

/* The CPU time this process has used, seconds. */
static double cpu_seconds(void)
{
    struct timespec t;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) != 0)
        return 0;
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* How many times one mrt_runner_execute runs the plan: a training spec
 * runs its `steps` SGD steps (runner_execute.c), anything else once.  The
 * plan's modeled time is that of one run. */
static int runs_per_execute(const mrt_runner *r)
{
    const mrt_train *t = &r->spec->train;
    return t->loss >= 0 && t->steps > 1 ? (int)t->steps : 1;
}

/* Runs a's plan from a barrier; when that execution was its fastest yet
 * (the slowest rank's wall time), keeps this rank's step times of it.
 * All figures are per run: an execution of a training spec is `steps`
 * runs, whose times the executor sums.  Collective. */
static mrt_status run_once(mrt_validation *v, mrt_val_alt *a, mrt_error *err)
{
    int runs = runs_per_execute(a->runner);
    /* every run from the spec's initial values (mrt_runner_restart) */
    mrt_status st = mrt_runner_restart(a->runner, err);
    if (st != MRT_OK)
        return st;
    MPI_Barrier(v->comm);
    double c0 = cpu_seconds(), t0 = MPI_Wtime(), wall, cpu;
    st = mrt_runner_execute(a->runner, NULL, err);
    double mine = MPI_Wtime() - t0, share = (cpu_seconds() - c0) / mine;
    MPI_Allreduce(&mine, &wall, 1, MPI_DOUBLE, MPI_MAX, v->comm);
    MPI_Allreduce(&share, &cpu, 1, MPI_DOUBLE, MPI_SUM, v->comm);
    wall /= runs;
    if (st == MRT_OK && a->nwalls <= v->repeat)
        a->walls[a->nwalls++] = wall;
    if (st == MRT_OK && (a->best < 0 || wall < a->best)) {
        a->best = wall;
        a->cpu = cpu / v->size;
        for (int k = 0; k < a->plan->nsteps; k++)
            a->mine[k] = a->runner->exec->step_time[k] / runs;
    }
    return st;
}

static int by_value(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The median of t[0..n) (sorted in place); NAN when n is 0. */
static double median(double *t, int n)
{
    if (n < 1)
        return NAN;
    qsort(t, (size_t)n, sizeof *t, by_value);
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

/* The fastest run's step and op times, the slowest rank's, filed into
 * a on rank 0.  Collective. */
static mrt_status reduce_alt(mrt_validation *v, mrt_val_alt *a, mrt_error *err)
{
    const mrt_plan *plan = a->plan;
    int n = plan->nsteps, nops = plan->nops;
    double *t = calloc(2 * ((size_t)n + (size_t)nops) + 1, sizeof *t);
    mrt_status st = mrt_comm_agree(v->comm, t ? MRT_OK : nomem(err), err);
    if (st)
        return st;
    double *mine = t + n + nops;
    memcpy(mine, a->mine, (size_t)n * sizeof *mine);
    for (int i = 0; i < nops; i++)
        for (int k = 0; k < plan->op[i].nsteps; k++)
            mine[n + i] += mine[plan->op[i].first_step + k];
    MPI_Reduce(mine, t, n + nops, MPI_DOUBLE, MPI_MAX, 0, v->comm);
    if (v->rank == 0) {
        file_steps(a, plan, t);
        a->measured = a->best;
        a->speed = v->probe_ref > 0
                       ? a->probed / v->probe_ref
                       : mrt_val_speed_of(&plan->profile, v->size, a->probed);
        a->spread = median(a->walls, a->nwalls) / a->best - 1;
        a->ok = 1;
    }
    free(t);
    return MRT_OK;
}

/* Drops a's runner after a failure, keeping why on rank 0. */
static void drop(mrt_validation *v, mrt_val_alt *a, const mrt_error *err)
{
    if (v->rank == 0)
        mrt_error_format(err, a->error, sizeof a->error);
    mrt_runner_destroy(a->runner);
    a->runner = NULL;
}

/* a, whose plan is that of the partitioning `of`, given of's figures
 * (its error too, should that one have failed). */
static void copy_same(mrt_val_alt *a, const mrt_val_alt *of)
{
    a->ok = of->ok;
    memcpy(a->error, of->error, sizeof a->error);
    a->model = of->model;
    a->measured = of->measured;
    a->cpu = of->cpu;
    a->speed = of->speed;
    a->probed = of->probed;
    a->spread = of->spread;
    memcpy(a->cell, of->cell, sizeof a->cell);
    a->nops = of->nops;
    memcpy(a->op, of->op, (size_t)of->nops * sizeof *a->op);
}

void mrt_validation_set_products(mrt_validation *v, int timed)
{
    if (v)
        v->products = timed < 0 ? -1 : timed;
}

void mrt_validation_set_collectives(mrt_validation *v, int timed)
{
    if (v)
        v->collectives = timed < 0 ? -1 : timed;
}

mrt_status mrt_validation_run(mrt_validation *v, mrt_error *err)
{
    if (!v)
        return mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0},
                             "mrt_validation_run: a NULL validation");
    if (getloadavg(&v->load[0], 1) != 1)
        v->load[0] = -1;
    /* the machine's speed after every timed run (validate_probe.c); none
     * when its buffers do not fit: the ratios are then only as measured */
    mrt_val_probe probe;
    mrt_error none = {0};
    (void)mrt_val_probe_create(v->comm, &probe, &none);
    for (int i = 0; i < v->nalts; i++)
        v->alt[i].probed = NAN;
    /* Products timed just before (mrt_machine_time_products) price the
     * einsums at the speed of that moment, not of the profile's rows:
     * the speed is then against a probe of that moment, the best of as
     * many as the products had rounds (a host that ran 20% faster than
     * at its calibration counted twice otherwise: docs/calibration.md,
     * round L). */
    v->probe_ref = NAN;
    for (int r = 0; v->products > 0 && r < 8; r++)
        keep_best(&v->probe_ref, mrt_val_probe_run(v->comm, &probe));
    /* ... and timed again after every round, with the collective rows,
     * the plans priced again at the end (validate_retime.c): the speed
     * is then against the probe's best over the same rounds */
    if ((v->products > 0 && probe.ready) || v->collectives > 0)
        (void)mrt_val_retime_create(v, probe.ready ? &probe.pools : NULL);
    /* a warm-up run each, then the timed runs taking turns, so that a
     * change of the machine's load falls on every partitioning alike */
    for (int r = -1; r < v->repeat; r++)
        for (int i = 0; i < v->nalts; i++) {
            mrt_val_alt *a = &v->alt[i];
            mrt_error e = {0};
            mrt_status st = a->runner ? run_once(v, a, &e) : MRT_OK;
            if (r < 0 && a->runner) {
                a->best = -1; /* the warm-up does not count */
                a->nwalls = 0;
            }
            if (st != MRT_OK) {
                drop(v, a, &e);
                keep_first(v, &e);
            }
            if (r >= 0 && a->runner) {
                double rate = mrt_val_probe_run(v->comm, &probe);
                keep_best(&a->probed, rate); /* as calibrate's rows */
                if (v->timer)
                    keep_best(&v->probe_ref, rate);
            }
            if (r >= 0 && i == v->nalts - 1)
                mrt_val_retime_round(v);
        }
    mrt_error re = {0};
    if (mrt_val_retime_reprice(v, &re) != MRT_OK)
        keep_first(v, &re); /* (only out of memory: as priced before) */
    mrt_val_retime_destroy(v);
    mrt_val_probe_destroy(&probe);
    if (getloadavg(&v->load[1], 1) != 1)
        v->load[1] = -1;
    int ran = 0;
    for (int i = 0; i < v->nalts; i++) {
        mrt_val_alt *a = &v->alt[i];
        if (a->same_as >= 0)
            continue; /* its figures are its plan's (copy_same) */
        mrt_error e = {0};
        mrt_status st = a->runner ? reduce_alt(v, a, &e) : MRT_E_RUNTIME;
        ran += st == MRT_OK;
        if (a->runner && st != MRT_OK)
            drop(v, a, &e);
        keep_first(v, &e);
        mrt_runner_destroy(a->runner);
        a->runner = NULL;
    }
    for (int i = 0; i < v->nalts; i++)
        if (v->alt[i].same_as >= 0)
            copy_same(&v->alt[i], &v->alt[v->alt[i].same_as]);
    if (ran)
        return MRT_OK;
    if (err)
        *err = v->first;
    return v->first.code ? v->first.code : MRT_E_RUNTIME;
}

mrt_status mrt_validation_add(mrt_validation *v, const char *name,
                              const mrt_spec *spec, mrt_plan *plan,
                              mrt_error *err)
{
    if (!v || !spec || !plan)
        return mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0},
                             "mrt_validation_add: a NULL argument");
    mrt_val_alt *a = new_alt(v, name);
    mrt_val_op *ops = a ? calloc((size_t)plan->nops + 1, sizeof *ops) : NULL;
    double *mine = ops ? calloc((size_t)plan->nsteps + 1, sizeof *mine) : NULL;
    double *walls = mine ? calloc((size_t)v->repeat + 1, sizeof *walls) : NULL;
    mrt_status st = mrt_comm_agree(v->comm, walls ? MRT_OK : nomem(err), err);
    if (st) {
        free(ops);
        free(mine);
        free(walls);
        return st;
    }
    a->op = ops;
    a->mine = mine;
    a->walls = walls;
    a->plan = plan;
    a->spec = spec;
    a->best = -1;
    /* a plan an earlier partitioning already has is run once, as that */
    for (int j = 0; j < v->nalts - 1 && a->same_as < 0; j++)
        if (v->alt[j].same_as < 0 && v->alt[j].plan &&
            mrt_plan_same_work(plan, v->alt[j].plan))
            a->same_as = j;
    if (a->same_as >= 0)
        return MRT_OK;
    if (!v->spec[0]) {
        const mrt_train *t = &spec->train;
        v->steps = t->loss >= 0 && t->steps > 1 ? (int)t->steps : 1;
        snprintf(v->spec, sizeof v->spec, "%s", spec->path);
        snprintf(v->machine, sizeof v->machine, "%s", plan->profile.source);
    }
    st = mrt_runner_create(spec, plan, v->comm, &a->runner, err);
    if (st) {
        a->runner = NULL;
        if (v->rank == 0)
            mrt_error_format(err, a->error, sizeof a->error);
        keep_first(v, err);
    }
    return st;
}
