/*
 * overlap.c — target 4: collectives in the background.  The same
 * training step planned twice with Mesh-TensorFlow's lowering (so every
 * weight gradient is one all-reduce): once as meshrt plans it, where a
 * collective whose result is read only some steps later runs in the
 * background (ops/overlap.c), and once with every collective blocking.
 * Runs alternate; the figure is the median ratio of back-to-back pairs,
 * blocking time / background time (above 1: overlap pays).  Beside it:
 * what those collectives cost blocking, what the rank still spent in MPI
 * for them in the background (issue, progress tests, wait), and the
 * difference, the time hidden.  (Open MPI moves a non-blocking
 * collective's data only inside MPI calls, so on shared memory most of
 * the copying still happens in the tests and the wait.)
 *
 * usage: mpirun -n 2 bench_overlap SPEC [REPS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "bench.h"
#include "kernel.h"
#include "runtime.h"

typedef struct side {
    mrt_plan *plan;
    mrt_comm *comm;
    mrt_exec *exec;
} side;

static mrt_status setup(side *x, const mrt_spec *s, int blocking,
                        mrt_error *err)
{
    mrt_plan_options o = {.planner = MRT_PLANNER_MESHTF, .blocking = blocking};
    memset(x, 0, sizeof *x);
    mrt_status st = mrt_plan_create(s, &o, &x->plan, err);
    if (st == MRT_OK)
        st = mrt_comm_create(x->plan, MPI_COMM_WORLD, &x->comm, err);
    if (st == MRT_OK)
        st = mrt_exec_create(x->plan, x->comm, &x->exec, err);
    const mrt_plan *p = x->plan;
    for (int i = 0; st == MRT_OK && i < p->ninputs; i++) {
        int t = p->input[i], v = p->tensor_value[t];
        st = mrt_shard_init(s, t, &p->value[v].layout, &p->mesh,
                            x->comm->coords, x->exec->buf[v], err);
    }
    return st;
}

static void teardown(side *x)
{
    mrt_exec_destroy(x->exec);
    mrt_comm_destroy(x->comm);
    mrt_plan_destroy(x->plan);
}

/* One run of x's plan: the slowest rank's seconds. */
static double timed_run(side *x, mrt_status *st, mrt_error *err)
{
    double dt, worst;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = mrt_bench_now();
    *st = mrt_comm_agree(MPI_COMM_WORLD, mrt_exec_run(x->exec, err), err);
    dt = mrt_bench_now() - t0;
    MPI_Allreduce(&dt, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

int main(int argc, char **argv)
{
    mrt_init(NULL); /* before MPI_Init (meshrt.h) */
    MPI_Init(&argc, &argv);
    mrt_kernel_init();
    int rank, reps = argc > 2 ? atoi(argv[2]) : 15;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 2 || reps < 1 || reps > MRT_BENCH_MAX_REPS) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -n 2 bench_overlap SPEC [REPS]\n");
        MPI_Finalize();
        return 2;
    }
    mrt_error err = {0};
    mrt_spec *spec = NULL;
    side bg, bl;
    memset(&bg, 0, sizeof bg);
    memset(&bl, 0, sizeof bl);
    mrt_status st = mrt_spec_load(argv[1], &spec, &err);
    if (st == MRT_OK)
        st = setup(&bg, spec, 0, &err);
    if (st == MRT_OK)
        st = setup(&bl, spec, 1, &err);
    double t_bg[MRT_BENCH_MAX_REPS], t_bl[MRT_BENCH_MAX_REPS];
    for (int r = -1; st == MRT_OK && r < reps; r++) { /* -1: warm-up */
        double a = timed_run(&bg, &st, &err);
        double b = st == MRT_OK ? timed_run(&bl, &st, &err) : 0;
        if (r >= 0) {
            t_bg[r] = a;
            t_bl[r] = b;
        }
    }
    int n = 0;
    double blocked = 0, exposed = 0, hidden, least;
    for (int k = 0; st == MRT_OK && k < bg.plan->nsteps; k++)
        if (bg.plan->step[k].wait >= 0) { /* the same step in both plans */
            n++;
            blocked += bl.exec->step_time[k] / (reps + 1);
            exposed += bg.exec->exposed[k] / (reps + 1);
        }
    hidden = blocked - exposed;
    MPI_Reduce(&hidden, &least, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    if (rank == 0 && st != MRT_OK) {
        char buf[1024];
        fprintf(stderr, "bench_overlap: %s\n",
                mrt_error_format(&err, buf, sizeof buf));
    } else if (rank == 0) {
        double ratio = mrt_bench_median_ratio(t_bl, t_bg, reps);
        mrt_bench_result(4, "overlap: blocking / background time", ratio, "-",
                         "%s, 2 ranks: one training step %.2f ms with "
                         "%d collectives in the background, %.2f ms all "
                         "blocking; those collectives: %.2f ms blocking, "
                         "%.2f ms still in MPI in the background, %.2f ms "
                         "hidden (the rank where least)",
                         argv[1], mrt_bench_median(t_bg, reps) * 1e3, n,
                         mrt_bench_median(t_bl, reps) * 1e3, blocked * 1e3,
                         exposed * 1e3, least * 1e3);
    }
    teardown(&bg);
    teardown(&bl);
    mrt_spec_destroy(spec);
    MPI_Finalize();
    return st == MRT_OK ? 0 : 1;
}
