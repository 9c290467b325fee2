/*
 * matmul.c — target 2, distributed matmul against the classic peer:
 * C = A B in float64 for n = 2048 and 4096 on 2 ranks, meshes 2x1 and
 * 1x2, every operand split as ScaLAPACK's process grid splits it
 * (bench/specs/matmulN.yaml), so each rank holds half of every matrix.
 *
 * Three things are timed in the same run, repetitions interleaved:
 *  - meshrt: the spec's plan (normal planner) run by the executor
 *    (mrt_exec_run: the collectives and the local kernel);
 *  - ScaLAPACK's PDGEMM on a 2x1 and a 1x2 BLACS grid, block size NB,
 *    on the same global matrices (its dgemm is BLIS's too, one thread);
 *  - one rank's BLIS dgemm of the whole problem (the other rank waits),
 *    for the parallel efficiency T1 / (2 T2).
 * Each time is the slowest rank's, from a barrier; each figure is the
 * median over repetitions of that repetition's ratio.
 * The sums of every C are compared, so all three compute the same thing.
 *
 * usage: mpirun -n 2 bench_matmul SPEC_DIR [REPS [N,N...]]
 * (specs SPEC_DIR/matmulN.yaml; default N: 2048,4096)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <blis.h>
#include <mpi.h>

#include "bench.h"
#include "blis_arch.h"
#include "init.h"
#include "kernel.h"
#include "runtime.h"

#define NMESH 2
static const char *const mesh_override[NMESH] = {"r=2,c=1", "r=1,c=2"};
static const int grid_rows[NMESH] = {2, 1};
/* PDGEMM's block size: the best of 64, 128 and 256 here (see
 * docs/performance.md); MRT_BENCH_NB=N tries another. */
static int pd_nb = 128;

/* ---- meshrt --------------------------------------------------------- */

typedef struct meshrt_run {
    mrt_spec *spec;
    mrt_plan *plan;
    mrt_comm *comm;
    mrt_exec *exec;
} meshrt_run;

static mrt_status meshrt_setup(meshrt_run *r, const char *path,
                               const char *mesh, mrt_error *err)
{
    memset(r, 0, sizeof *r);
    mrt_status st = mrt_spec_load_ex(
        path, &(mrt_spec_load_options){.mesh = mesh}, &r->spec, err);
    if (st == MRT_OK)
        st = mrt_plan_create(r->spec, NULL, &r->plan, err);
    if (st == MRT_OK)
        st = mrt_comm_create(r->plan, MPI_COMM_WORLD, &r->comm, err);
    if (st == MRT_OK)
        st = mrt_exec_create(r->plan, r->comm, &r->exec, err);
    const mrt_plan *p = r->plan;
    for (int i = 0; st == MRT_OK && i < p->ninputs; i++) {
        int t = p->input[i];
        int v = p->tensor_value[t];
        st = mrt_shard_init(r->spec, t, &p->value[v].layout, &p->mesh,
                            r->comm->coords, r->exec->buf[v], err);
    }
    return st;
}

static void meshrt_teardown(meshrt_run *r)
{
    mrt_exec_destroy(r->exec);
    mrt_comm_destroy(r->comm);
    mrt_plan_destroy(r->plan);
    mrt_spec_destroy(r->spec);
}

/* The sum of every element of output c, on every rank. */
static double meshrt_checksum(const meshrt_run *r)
{
    const mrt_plan *p = r->plan;
    int v = p->tensor_value[p->output[0]];
    const double *c = r->exec->buf[v];
    double s = 0, all;
    for (int64_t i = 0; i < p->value[v].count; i++)
        s += c[i];
    MPI_Allreduce(&s, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return all;
}

/* ---- ScaLAPACK ------------------------------------------------------ */

#ifdef MRT_HAVE_SCALAPACK
void Cblacs_get(int ctxt, int what, int *val);
void Cblacs_gridinit(int *ctxt, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int ctxt);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc,
            const int *nprocs);
void descinit_(int *desc, const int *m, const int *n, const int *mb,
               const int *nb, const int *irsrc, const int *icsrc,
               const int *ictxt, const int *lld, int *info);
void pdgemm_(const char *transa, const char *transb, const int *m, const int *n,
             const int *k, const double *alpha, const double *a, const int *ia,
             const int *ja, const int *desca, const double *b, const int *ib,
             const int *jb, const int *descb, const double *beta, double *c,
             const int *ic, const int *jc, const int *descc);
#endif

typedef struct pd_run {
    int ctxt, rows, cols, lld, desc[9];
    double *a, *b, *c;
} pd_run;

#ifdef MRT_HAVE_SCALAPACK
/* Fills the local block-cyclic part of the n x n matrix whose element
 * (i, j) is mrt_init_random_value(seed, i * n + j), as the spec's. */
static void pd_fill(const pd_run *r, int n, int myrow, int mycol, int nprow,
                    int npcol, uint64_t seed, double *m)
{
    for (int lj = 0; lj < r->cols; lj++) {
        int64_t gj = (int64_t)((lj / pd_nb) * npcol + mycol) * pd_nb +
                     lj % pd_nb;
        for (int li = 0; li < r->rows; li++) {
            int64_t gi = (int64_t)((li / pd_nb) * nprow + myrow) * pd_nb +
                         li % pd_nb;
            m[li + (int64_t)lj * r->lld] = mrt_init_random_value(
                seed, (uint64_t)(gi * n + gj));
        }
    }
}
#endif

/* 0 when ScaLAPACK is not built in or memory ran out. */
static int pd_setup(pd_run *r, int n, int nprow, int npcol, uint64_t sa,
                    uint64_t sb)
{
    memset(r, 0, sizeof *r);
#ifdef MRT_HAVE_SCALAPACK
    int myrow, mycol, zero = 0, info, nb = pd_nb;
    Cblacs_get(0, 0, &r->ctxt);
    Cblacs_gridinit(&r->ctxt, "Row", nprow, npcol);
    Cblacs_gridinfo(r->ctxt, &nprow, &npcol, &myrow, &mycol);
    r->rows = numroc_(&n, &nb, &myrow, &zero, &nprow);
    r->cols = numroc_(&n, &nb, &mycol, &zero, &npcol);
    r->lld = r->rows > 1 ? r->rows : 1;
    descinit_(r->desc, &n, &n, &nb, &nb, &zero, &zero, &r->ctxt, &r->lld,
              &info);
    size_t bytes = (size_t)r->lld * (size_t)r->cols * sizeof(double);
    r->a = malloc(bytes);
    r->b = malloc(bytes);
    r->c = calloc(1, bytes);
    if (info != 0 || !r->a || !r->b || !r->c)
        return 0;
    pd_fill(r, n, myrow, mycol, nprow, npcol, sa, r->a);
    pd_fill(r, n, myrow, mycol, nprow, npcol, sb, r->b);
    return 1;
#else
    (void)n, (void)nprow, (void)npcol, (void)sa, (void)sb;
    return 0;
#endif
}

static void pd_run_once(pd_run *r, int n)
{
#ifdef MRT_HAVE_SCALAPACK
    double one = 1, zero = 0;
    int i1 = 1;
    pdgemm_("N", "N", &n, &n, &n, &one, r->a, &i1, &i1, r->desc, r->b, &i1, &i1,
            r->desc, &zero, r->c, &i1, &i1, r->desc);
#else
    (void)r, (void)n;
#endif
}

static double pd_checksum(const pd_run *r)
{
    double s = 0, all;
    for (int j = 0; j < r->cols; j++)
        for (int i = 0; i < r->rows; i++)
            s += r->c[i + (int64_t)j * r->lld];
    MPI_Allreduce(&s, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return all;
}

static void pd_teardown(pd_run *r)
{
#ifdef MRT_HAVE_SCALAPACK
    if (r->a)
        Cblacs_gridexit(r->ctxt);
#endif
    free(r->a);
    free(r->b);
    free(r->c);
}

/* ---- one rank ------------------------------------------------------- */

static void one_rank_dgemm(int n, const double *a, const double *b, double *c)
{
    double one = 1, zero = 0;
    bli_dgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, n, n, n, &one, (double *)a,
              n, 1, (double *)b, n, 1, &zero, c, n, 1);
}

/* ---- timing --------------------------------------------------------- */

/* Seconds from a barrier until the slowest rank is done. */
#define TIMED(out, call)                                                       \
    do {                                                                       \
        MPI_Barrier(MPI_COMM_WORLD);                                           \
        double t0_ = mrt_bench_now();                                          \
        call;                                                                  \
        double dt_ = mrt_bench_now() - t0_;                                    \
        MPI_Allreduce(&dt_, &(out), 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);   \
    } while (0)

static int close_to(double x, double y)
{
    return fabs(x - y) <= 1e-8 * (fabs(x) + fabs(y) + 1);
}

/* "allgather 12.3 ms, einsum 1.93 s": each step's time per run, the
 * slowest rank's (collective: every rank calls it). */
static void step_times(const meshrt_run *r, int runs, char *buf, size_t size)
{
    const mrt_plan *p = r->plan;
    size_t used = 0;
    buf[0] = 0;
    for (int k = 0; k < p->nsteps; k++) {
        double t = r->exec->step_time[k] / runs, tmax;
        MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (used < size)
            used += (size_t)snprintf(
                buf + used, size - used, "%s%s %.1f ms", k ? ", " : "",
                mrt_step_kind_name(p->step[k].kind), tmax * 1e3);
    }
}

/* The figures of one mesh, reported as two rows; returns 1 if the
 * results of meshrt, PDGEMM and one rank differ. */
static int report(int n, int g, meshrt_run *mr, pd_run *pd, int have_pd,
                  double *tm, double *tp, double *t1, double sum1, int reps,
                  int rank)
{
    double sm = meshrt_checksum(mr), sp = have_pd ? pd_checksum(pd) : sum1;
    int ok = close_to(sm, sum1) && close_to(sp, sum1);
    double m = mrt_bench_median(tm, reps), flops = 2.0 * n * n * (double)n;
    double eff[MRT_BENCH_MAX_REPS];
    for (int r = 0; r < reps; r++)
        eff[r] = t1[r] / (2 * tm[r]);
    char name[64], steps[256];
    snprintf(name, sizeof name, "n=%d mesh %dx%d", n, grid_rows[g],
             2 / grid_rows[g]);
    step_times(mr, reps + 1, steps, sizeof steps);
    if (rank != 0)
        return !ok;
    if (!ok)
        fprintf(stderr,
                "bench_matmul: %s: the sums of C differ: meshrt "
                "%.12g, PDGEMM %.12g, one rank %.12g\n",
                name, sm, sp, sum1);
    double one = mrt_bench_median(t1, reps);
    if (have_pd) {
        double p = mrt_bench_median(tp, reps);
        mrt_bench_result(2, name, mrt_bench_median_ratio(tm, tp, reps),
                         "<= 0.85",
                         "meshrt/PDGEMM time: meshrt %.3f s (%.1f GFLOP/s), "
                         "PDGEMM %.3f s (%.1f GFLOP/s, NB %d; speed-up over "
                         "one rank %.2f)%s",
                         m, flops / m * 1e-9, p, flops / p * 1e-9, pd_nb,
                         one / p, ok ? "" : "; RESULTS DIFFER");
    } else {
        mrt_bench_result(2, name, -1, "<= 0.85",
                         "ScaLAPACK not built in (install "
                         "libscalapack-openmpi-dev and rebuild)");
    }
    snprintf(name + strlen(name), sizeof name - strlen(name), " efficiency");
    mrt_bench_result(2, name, mrt_bench_median(eff, reps), ">= 0.9",
                     "T1/(2 T2): one rank's dgemm %.3f s (%.1f GFLOP/s), "
                     "meshrt on 2 ranks %.3f s (%s)",
                     one, flops / one * 1e-9, m, steps);
    return !ok;
}

/* The whole problem on rank 0 (NULL elsewhere), for T1. */
static double *one_rank_setup(int n, int rank, const mrt_spec *s)
{
    if (rank != 0)
        return NULL;
    size_t full = (size_t)n * (size_t)n;
    double *a = malloc(3 * full * sizeof *a);
    if (!a) {
        fprintf(stderr, "bench_matmul: out of memory\n");
        exit(1);
    }
    mrt_bench_fill(a, MRT_F64, (int64_t)full,
                   s->tensor[mrt_spec_find_tensor(s, "a")].seed);
    mrt_bench_fill(a + full, MRT_F64, (int64_t)full,
                   s->tensor[mrt_spec_find_tensor(s, "b")].seed);
    return a;
}

/* Benchmarks size n; returns the number of failures. */
static int bench_n(const char *dir, int n, int reps, int rank)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/matmul%d.yaml", dir, n);
    mrt_error err = {0};
    meshrt_run mr[NMESH];
    pd_run pd[NMESH];
    int fails = 0, have_pd = 1;
    for (int g = 0; g < NMESH; g++) {
        if (meshrt_setup(&mr[g], path, mesh_override[g], &err) != MRT_OK) {
            char buf[1024];
            if (rank == 0)
                fprintf(stderr, "bench_matmul: %s\n",
                        mrt_error_format(&err, buf, sizeof buf));
            return 1;
        }
        const mrt_spec *s = mr[g].spec;
        uint64_t sa = s->tensor[mrt_spec_find_tensor(s, "a")].seed,
                 sb = s->tensor[mrt_spec_find_tensor(s, "b")].seed;
        have_pd &= pd_setup(&pd[g], n, grid_rows[g], 2 / grid_rows[g], sa, sb);
    }
    size_t full = (size_t)n * (size_t)n;
    double *a1 = one_rank_setup(n, rank, mr[0].spec);
    double *b1 = a1 ? a1 + full : NULL, *c1 = a1 ? a1 + 2 * full : NULL;

    double *t = calloc((size_t)(2 * NMESH + 1) * (size_t)reps, sizeof *t);
    double *tm = t, *tp = t + NMESH * reps, *t1 = t + 2 * NMESH * reps;
    for (int r = -1; r < reps; r++) { /* r = -1: warm-up, not kept */
        double dt;
        for (int g = 0; g < NMESH; g++) {
            TIMED(dt, mrt_exec_run(mr[g].exec, &err));
            if (r >= 0)
                tm[g * reps + r] = dt;
        }
        for (int g = 0; have_pd && g < NMESH; g++) {
            TIMED(dt, pd_run_once(&pd[g], n));
            if (r >= 0)
                tp[g * reps + r] = dt;
        }
        TIMED(dt, if (rank == 0) one_rank_dgemm(n, a1, b1, c1));
        if (r >= 0)
            t1[r] = dt;
    }
    double sum1 = 0;
    for (size_t i = 0; c1 && i < full; i++)
        sum1 += c1[i];
    MPI_Bcast(&sum1, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    for (int g = 0; g < NMESH; g++)
        fails += report(n, g, &mr[g], &pd[g], have_pd, tm + g * reps,
                        tp + g * reps, t1, sum1, reps, rank);
    free(t);
    free(a1);
    for (int g = 0; g < NMESH; g++) {
        pd_teardown(&pd[g]);
        meshrt_teardown(&mr[g]);
    }
    return fails;
}

int main(int argc, char **argv)
{
    mrt_blis_select(); /* before MPI starts threads and BLIS starts */
    MPI_Init(&argc, &argv);
    mrt_kernel_init();
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2 || argc < 2) {
        if (rank == 0)
            fprintf(
                stderr,
                "usage: mpirun -n 2 bench_matmul SPEC_DIR [REPS [N,N...]]\n");
        MPI_Finalize();
        return 2;
    }
    int reps = argc > 2 ? atoi(argv[2]) : 3;
    if (getenv("MRT_BENCH_NB") && atoi(getenv("MRT_BENCH_NB")) > 0)
        pd_nb = atoi(getenv("MRT_BENCH_NB"));
    if (reps < 1)
        reps = 1;
    if (rank == 0) {
        char fam[128];
        printf("# BLIS kernel family: %s; %d repetitions\n",
               mrt_blis_describe(fam, sizeof fam), reps);
    }
    /* n = 2048 is quick: more repetitions for the same noise. */
    const char *sizes = argc > 3 ? argv[3] : "2048,4096";
    int fails = 0;
    for (const char *p = sizes; *p; p += *p == ',') {
        int n = (int)strtol(p, (char **)&p, 10);
        if (n > 0)
            fails += bench_n(argv[1], n, n <= 2048 ? reps + 2 : reps, rank);
        else
            break;
    }
    MPI_Finalize();
    return fails ? 1 : 0;
}
