/*
 * collectives.c — target 3: each collective meshrt issues, as the
 * executor issues it (packing and unpacking included, through
 * runtime/comm.c's mrt_comm_* layer and its ledger), against the raw MPI
 * call on the same bytes and the same communicator.
 *
 * The plan of bench/specs/collectives.yaml has one op per kind (and a
 * packed variant where the executor packs); each collective step is run
 * alone, through mrt_exec_run on a one-step view of the plan, so what is
 * timed is exactly the executor's code for that step.  The raw call
 * moves the same bytes: from the step's input buffer straight into its
 * output buffer (buffers matter here: the same call on other, freshly
 * allocated memory ran up to 2x slower or faster).  Repetitions
 * alternate meshrt and raw MPI; each time is the slowest rank's from a
 * barrier; the figure is the median over back-to-back pairs of meshrt
 * time / MPI time (goal <= 1.05).
 *
 * bench/specs/relayout.yaml (4 ranks) is a relayout of the multi-axis
 * kind: one all-to-all over a group of two axes, against the one
 * MPI_Alltoall with block datatypes that makes the same move by hand.
 * bench/specs/relayout_uneven.yaml (4 ranks) is a relayout over uneven
 * splits: one all-to-all that the executor runs as an MPI_Alltoallw with
 * per-peer types (made once, at mrt_exec_create), against the one
 * MPI_Alltoallw with subarray types that makes the same move by hand
 * (raw_uneven.c).  For these hand-written references the bench first
 * checks that the raw call and meshrt's leave the same bytes in the
 * output shard; a row whose results differ is not timed (n/a, and the
 * exit status is 1).
 *
 * usage: mpirun -n 2 bench_collectives SPEC [REPS [KIND]]
 * (KIND: only the steps of that kind, e.g. alltoall, for profiling)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "bench.h"
#include "kernel.h"
#include "raw_uneven.h"
#include "runtime.h"

#define TIMED(out, call)                                                       \
    do {                                                                       \
        MPI_Barrier(MPI_COMM_WORLD);                                           \
        double t0_ = mrt_bench_now();                                          \
        call;                                                                  \
        double dt_ = mrt_bench_now() - t0_;                                    \
        MPI_Allreduce(&dt_, &(out), 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);   \
    } while (0)

/* An all-to-all over a group that moves the minor axes of one dim to
 * another (dim -> dim2, in mesh order) is, by hand, one MPI_Alltoall
 * whose blocks are those of the input along dim2 and of the output along
 * dim: these types, made once before the timing (the executor makes its
 * per-peer types in every call, and that is part of what is timed). */
static MPI_Datatype group_type[2] = {MPI_DATATYPE_NULL, MPI_DATATYPE_NULL};
/* An all-to-all over uneven splits, by hand (raw_uneven.c); g = 0 when
 * the step is not one. */
static mrt_bench_uneven raw_uneven;

static int make_group_types(const mrt_exec *e, const mrt_step *s)
{
    const mrt_plan *p = e->plan;
    const mrt_value *in = &p->value[s->in], *out = &p->value[s->out];
    if (s->dim < 0 || s->dim2 < 0)
        return MPI_ERR_ARG;
    int rc = mrt_block_type(in->layout.ndims, in->local, s->dim2, s->group,
                            p->dtype, &group_type[0]);
    if (rc == MPI_SUCCESS)
        rc = mrt_block_type(out->layout.ndims, out->local, s->dim, s->group,
                            p->dtype, &group_type[1]);
    return rc;
}

/* The raw MPI call for step s: from its input value's buffer into its
 * output value's, the very bytes the executor's call moves. */
static int raw_call(const mrt_exec *e, const mrt_step *s, MPI_Comm comm)
{
    const mrt_plan *p = e->plan;
    MPI_Datatype t = p->dtype == MRT_F64 ? MPI_DOUBLE : MPI_FLOAT;
    void *send = e->buf[s->in], *recv = e->buf[s->out];
    int count = (int)p->value[s->in].count, g = (int)s->group;
    if (raw_uneven.g > 0)
        return mrt_bench_uneven_call(&raw_uneven, send, recv, comm);
    switch (s->kind) {
    case MRT_STEP_ALLGATHER:
        return MPI_Allgather(send, count, t, recv, count, t, comm);
    case MRT_STEP_ALLTOALL:
        return MPI_Alltoall(send, count / g, t, recv, count / g, t, comm);
    case MRT_STEP_ALLREDUCE:
        return MPI_Allreduce(send, recv, count, t, MPI_SUM, comm);
    case MRT_STEP_REDUCE_SCATTER:
        return MPI_Reduce_scatter_block(send, recv, count / g, t, MPI_SUM,
                                        comm);
    case MRT_STEP_PERMUTE: { /* one peer each way */
        int me;
        MPI_Comm_rank(comm, &me);
        int peer = (me ^ 1) < g ? me ^ 1 : me;
        return MPI_Sendrecv(send, count, t, peer, 0, recv, count, t, peer, 0,
                            comm, MPI_STATUS_IGNORE);
    }
    case MRT_STEP_ALLTOALL_GROUP:
        return MPI_Alltoall(send, 1, group_type[0], recv, 1, group_type[1],
                            comm);
    default: return MPI_ERR_OTHER;
    }
}

/* A view of the plan and the executor with step k alone. */
static void one_step(const mrt_exec *e, int k, mrt_plan *one, mrt_exec *ex)
{
    *one = *e->plan;
    one->step = e->plan->step + k;
    one->nsteps = 1;
    *ex = *e;
    ex->plan = one;
    ex->step_time = e->step_time + k;
    ex->step_bytes = e->step_bytes + k;
    ex->type = e->type + k;
    ex->uneven = e->uneven + k; /* the executor indexes it by step */
    ex->blocking = 1; /* the step alone: it completes before the next */
}

/* 1 on every rank if one raw call and one meshrt run of step k leave the
 * same bytes in this rank's output shard, on every rank of the world
 * (the output is overwritten with 0xff before each). */
static int same_result(const mrt_exec *e, int k, MPI_Comm comm)
{
    const mrt_plan *p = e->plan;
    const mrt_step *s = &p->step[k];
    size_t n = (size_t)mrt_layout_shard_count_at(&p->value[s->out].layout,
                                                 &p->mesh, e->comm->coords) *
               (size_t)p->elsize;
    mrt_plan one;
    mrt_exec ex;
    one_step(e, k, &one, &ex);
    mrt_error err = {0};
    char *raw = malloc(n + 1);
    int ok = raw != NULL;
    if (ok) {
        memset(e->buf[s->out], 0xff, n);
        ok = raw_call(e, s, comm) == MPI_SUCCESS;
        memcpy(raw, e->buf[s->out], n);
        memset(e->buf[s->out], 0xff, n);
        ok = mrt_exec_run(&ex, &err) == MRT_OK && ok &&
             memcmp(raw, e->buf[s->out], n) == 0;
    }
    free(raw);
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return ok;
}

static int bench_step(mrt_exec *e, int k, int reps, double *t)
{
    const mrt_step *s = &e->plan->step[k];
    mrt_plan one;
    mrt_exec ex;
    one_step(e, k, &one, &ex);
    MPI_Comm comm = e->comm->group[s->axes];
    mrt_error err = {0};
    int rc = MPI_SUCCESS;
    double *tm = t, *tr = t + reps, dt;
    for (int r = -1; r < reps; r++) { /* r = -1: warm-up, not kept */
        TIMED(dt, mrt_exec_run(&ex, &err));
        if (r >= 0)
            tm[r] = dt;
        TIMED(dt, rc |= raw_call(e, s, comm));
        if (r >= 0)
            tr[r] = dt;
    }
    return rc != MPI_SUCCESS || err.code != MRT_OK;
}

/* Into name: how the report names step s ("all_gather uneven (x)"). */
static void step_name(const mrt_plan *plan, const mrt_step *s, char *name,
                      size_t size)
{
    char over[160], axes[64] = "";
    int uneven = mrt_step_is_uneven(plan, s);
    if (s->kind == MRT_STEP_ALLTOALL_GROUP) /* "over x,y" */
        snprintf(axes, sizeof axes, " over %s",
                 mrt_mesh_axes_str(&plan->mesh, s->axes, over, sizeof over));
    snprintf(name, size, "%s%s%s (%s)",
             s->kind == MRT_STEP_PERMUTE ? "permute"
                                         : mrt_step_kind_name(s->kind),
             axes,
             uneven                         ? " uneven"
             : mrt_step_is_strided(plan, s) ? " packed"
                                            : "",
             plan->tensor_name[plan->value[s->out].tensor]);
}

/* Check and time collective step k against its raw MPI call, and report
 * it (t: room for 2 * reps times); 1 if it failed. */
static int run_step(mrt_exec *e, mrt_comm *comm, int k, int reps, double *t,
                    int rank)
{
    const mrt_plan *plan = e->plan;
    const mrt_step *s = &plan->step[k];
    int uneven = mrt_step_is_uneven(plan, s), fails = 0;
    MPI_Comm group = comm->group[s->axes];
    char name[160];
    step_name(plan, s, name, sizeof name);
    if (uneven && s->kind == MRT_STEP_REDUCE_SCATTER) {
        if (rank == 0)
            mrt_bench_result(3, name, -1, "<= 1.05",
                             "no raw reference for a reduce-scatter over "
                             "uneven splits");
        return 0;
    }
    int rc = MPI_SUCCESS;
    if (s->kind == MRT_STEP_ALLTOALL_GROUP)
        rc = make_group_types(e, s);
    else if (uneven)
        rc = mrt_bench_uneven_make(plan, s, comm->coords, group, &raw_uneven);
    MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    int checked = rc == MPI_SUCCESS &&
                  (s->kind != MRT_STEP_ALLTOALL_GROUP && !uneven
                       ? 1
                       : same_result(e, k, group));
    if (checked)
        fails += bench_step(e, k, reps, t);
    for (int j = 0; j < 2; j++)
        if (group_type[j] != MPI_DATATYPE_NULL)
            MPI_Type_free(&group_type[j]);
    mrt_bench_uneven_free(&raw_uneven);
    if (!checked) {
        if (rank == 0)
            mrt_bench_result(3, name, -1, "<= 1.05", "%s",
                             rc != MPI_SUCCESS
                                 ? "the raw reference's datatypes could "
                                   "not be made"
                                 : "FAILED: raw MPI and meshrt left "
                                   "different bytes in the output");
        return 1;
    }
    double ratio = mrt_bench_median_ratio(t, t + reps, reps);
    double m = mrt_bench_median(t, reps), r = mrt_bench_median(t + reps, reps);
    if (rank == 0)
        mrt_bench_result(3, name, ratio, "<= 1.05",
                         "%.1f MiB per rank%s over %lld ranks: meshrt "
                         "%.2f ms, MPI %.2f ms",
                         (double)s->bytes / (1 << 20),
                         uneven ? " (the largest)" : "", (long long)s->group,
                         m * 1e3, r * 1e3);
    return fails;
}

/* Load the spec at path, plan it and make its executor; aborts the job
 * if any of it fails. */
static void setup(const char *path, int rank, mrt_spec **spec, mrt_plan **plan,
                  mrt_comm **comm, mrt_exec **e)
{
    mrt_error err = {0};
    mrt_status st = mrt_spec_load(path, spec, &err);
    if (st == MRT_OK)
        st = mrt_plan_create(*spec, NULL, plan, &err);
    if (st == MRT_OK)
        st = mrt_comm_create(*plan, MPI_COMM_WORLD, comm, &err);
    if (st == MRT_OK)
        st = mrt_exec_create(*plan, *comm, e, &err);
    if (st != MRT_OK) {
        char buf[1024];
        if (rank == 0)
            fprintf(stderr, "bench_collectives: %s\n",
                    mrt_error_format(&err, buf, sizeof buf));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv)
{
    mrt_init(NULL); /* before MPI_Init (meshrt.h) */
    MPI_Init(&argc, &argv);
    mrt_kernel_init();
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2) {
        if (rank == 0)
            fprintf(
                stderr,
                "usage: mpirun -n P bench_collectives SPEC [REPS [KIND]]\n");
        MPI_Finalize();
        return 2;
    }
    int reps = argc > 2 ? atoi(argv[2]) : 21;
    if (reps < 1 || reps > MRT_BENCH_MAX_REPS)
        reps = 21;
    mrt_spec *spec = NULL;
    mrt_plan *plan = NULL;
    mrt_comm *comm = NULL;
    mrt_exec *e = NULL;
    setup(argv[1], rank, &spec, &plan, &comm, &e);
    /* Inputs and every intermediate value get data (values do not change
     * the time of a copy or a sum, but denormals or NaNs might). */
    for (int v = 0; v < plan->nvalues; v++)
        mrt_bench_fill(e->buf[v], plan->dtype, plan->value[v].count,
                       (uint64_t)v);
    double *t = malloc(2 * (size_t)reps * sizeof *t);
    int fails = 0, permutes = 0;
    for (int k = 0; k < plan->nsteps && t; k++) {
        const mrt_step *s = &plan->step[k];
        if (!mrt_step_is_collective(s->kind) ||
            (argc > 3 && strcmp(argv[3], mrt_step_kind_name(s->kind)) != 0))
            continue;
        permutes += s->kind == MRT_STEP_PERMUTE;
        fails += run_step(e, comm, k, reps, t, rank);
    }
    if (rank == 0 && permutes == 0 && argc <= 3)
        mrt_bench_result(3, "permute", -1, "<= 1.05",
                         "not issued on %d ranks (it reorders two mesh axes "
                         "of more than one rank each: 4 ranks and up)",
                         size);
    free(t);
    mrt_exec_destroy(e);
    mrt_comm_destroy(comm);
    mrt_plan_destroy(plan);
    mrt_spec_destroy(spec);
    MPI_Finalize();
    return fails || !t ? 1 : 0;
}
