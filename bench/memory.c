/*
 * memory.c — target 5, memory per rank during `run`: the largest
 * resident set of any rank (getrusage's ru_maxrss, which counts
 * everything: MPI's and BLIS's own memory too) against the plan's
 * predicted peak memory per rank (live shards plus workspace), for
 * SPEC run once through mrt_run (goal <= 1.2).  The resident set before
 * the spec is loaded (MPI and BLIS started) is reported beside it.
 *
 * usage: mpirun -n P bench_memory SPEC
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include <mpi.h>

#include "meshrt_mpi.h"
#include "bench.h"
#include "kernel.h"
#include "plan.h"

/* Largest resident set so far of this process, in bytes. */
static double max_rss(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_maxrss * 1024;
}

int main(int argc, char **argv)
{
    mrt_init(NULL); /* before MPI_Init, as mrt_run requires */
    MPI_Init(&argc, &argv);
    mrt_kernel_init(); /* BLIS started, as in a run, before the baseline */
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -n P bench_memory SPEC\n");
        MPI_Finalize();
        return 2;
    }
    double base = max_rss(), base_max;
    mrt_error err = {0};
    mrt_spec *spec = NULL;
    mrt_plan *plan = NULL;
    FILE *devnull = fopen("/dev/null", "w");
    mrt_status st = mrt_spec_load(argv[1], &spec, &err);
    if (st == MRT_OK)
        st = mrt_plan_create(spec, NULL, &plan, &err);
    if (st == MRT_OK) {
        mrt_run_options opt = {.report = devnull};
        st = mrt_run(spec, plan, &opt, &err);
    }
    double rss = max_rss(), rss_max;
    MPI_Reduce(&rss, &rss_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&base, &base_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0 && st != MRT_OK) {
        char buf[1024];
        fprintf(stderr, "bench_memory: %s\n",
                mrt_error_format(&err, buf, sizeof buf));
    } else if (rank == 0) {
        double peak = (double)mrt_plan_get_totals(plan).peak_memory;
        mrt_bench_result(5, "max RSS / planned peak", rss_max / peak, "<= 1.2",
                         "%s: largest resident set of any rank %.1f MiB, "
                         "plan's peak %.1f MiB per rank (the executor "
                         "allocates an arena of %.1f MiB and a workspace "
                         "of %.1f MiB); before loading the spec %.1f MiB "
                         "(MPI, BLIS, the program)",
                         argv[1], rss_max / (1 << 20), peak / (1 << 20),
                         (double)plan->arena_bytes / (1 << 20),
                         (double)plan->max_workspace / (1 << 20),
                         base_max / (1 << 20));
    }
    if (devnull)
        fclose(devnull);
    mrt_plan_destroy(plan);
    mrt_spec_destroy(spec);
    MPI_Finalize();
    return st == MRT_OK ? 0 : 1;
}
