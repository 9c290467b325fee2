/*
 * mpi_numerics.c — numbers a sharded run must get right however the
 * tensors are split, through meshrt.h only (issue 17).
 *
 *   nan_max: reduce_max over a split dim keeps NaN.  The row
 *     [1, 2, 3, 4] with a NaN at position 0, 1, 2 or 3, split over every
 *     rank of the world (and over two axes at 4 ranks), float32 and
 *     float64: the maximum is NaN, as unsharded (MPI's MPI_MAX gave
 *     nan, 4, 2, 3).  Rows without NaN must still give their maximum.
 *     Also run with MESHRT_MPI_MAX_COUNT=2 (the large-count path).
 *
 * Every rank counts its failures; the ranks sum them and all exit with
 * the same status.  Run at 1-4 ranks.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meshrt.h"

static int rank, nranks, failures;

#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        if (!(cond)) {                                                        \
            failures++;                                                       \
            fprintf(stderr, "rank %d: line %d: ", rank, __LINE__);            \
            fprintf(stderr, __VA_ARGS__);                                     \
            fputc('\n', stderr);                                              \
        }                                                                     \
    } while (0)

/* The first error wins in an mrt_error: a clean one for each call. */
static mrt_error *fresh(mrt_error *e)
{
    memset(e, 0, sizeof *e);
    return e;
}

static mrt_spec *load_text(const char *name, const char *text)
{
    mrt_spec *s = NULL;
    mrt_error err = {0};
    mrt_status st = mrt_spec_load_string(name, text, strlen(text), NULL, &s,
                                         fresh(&err));
    CHECK(st == MRT_OK, "load %s: %s", name, err.message);
    return s;
}

/* ---- nan_max ---------------------------------------------------------- */

/* m = max over f of x[b, f], f split by `split` over mesh `mesh`; x's
 * row 0 is [1, 2, 3, 4] with a NaN at nan_at, rows 1 and 2 [4, 3, 2, 1]
 * and [-1, -2, -3, -4]: three maxima, so that MESHRT_MPI_MAX_COUNT=2
 * takes the large-count path's op too. */
static void nan_max_case(const char *mesh, const char *split, int f64,
                         int nan_at)
{
    char text[1024];
    snprintf(text, sizeof text,
             "mesh: %s\n"
             "dtype: %s\n"
             "dims: {b: 3, f: 4}\n"
             "tensors:\n"
             "  x: {shape: [b, f], layout: {f: %s}}\n"
             "ops:\n"
             "  - {op: reduce_max, in: [x], out: m, dims: [f]}\n"
             "outputs: [m]\n",
             mesh, f64 ? "float64" : "float32", split);
    mrt_spec *s = load_text("nan_max.yaml", text);
    mrt_plan *p = NULL;
    mrt_runner *r = NULL;
    mrt_error err = {0};
    double x[12] = {1, 2, 3, 4, 4, 3, 2, 1, -1, -2, -3, -4}, m[3] = {0};
    float xf[12], mf[3] = {0};
    x[nan_at] = NAN;
    for (int i = 0; i < 12; i++)
        xf[i] = (float)x[i];
    if (!s || mrt_plan_create(s, NULL, &p, fresh(&err)) != MRT_OK ||
        mrt_runner_create(s, p, MPI_COMM_WORLD, &r, fresh(&err)) != MRT_OK ||
        mrt_runner_set_input(r, "x", f64 ? (void *)x : (void *)xf, MRT_WHOLE,
                             fresh(&err)) != MRT_OK ||
        mrt_runner_execute(r, NULL, fresh(&err)) != MRT_OK ||
        mrt_runner_get_output(r, "m", f64 ? (void *)m : (void *)mf,
                              MRT_WHOLE, fresh(&err)) != MRT_OK) {
        CHECK(0, "nan_max %s: %s", mesh, err.message);
    } else if (rank == 0) {
        double m0 = f64 ? m[0] : mf[0], m1 = f64 ? m[1] : mf[1],
               m2 = f64 ? m[2] : mf[2];
        CHECK(isnan(m0) && m1 == 4 && m2 == -1,
              "nan_max mesh %s, %s, NaN at %d: max %g, %g, %g, not nan, 4, "
              "-1", mesh, f64 ? "float64" : "float32", nan_at, m0, m1, m2);
    }
    mrt_runner_destroy(r);
    mrt_plan_destroy(p);
    mrt_spec_destroy(s);
}

static void nan_max(void)
{
    char mesh[64];
    snprintf(mesh, sizeof mesh, "{r: %d}", nranks);
    for (int f64 = 0; f64 < 2; f64++)
        for (int at = 0; at < 4; at++) {
            nan_max_case(mesh, "r", f64, at);
            if (nranks == 4)
                nan_max_case("{a: 2, c: 2}", "[a, c]", f64, at);
        }
}

int main(int argc, char **argv)
{
    (void)argc, (void)argv;
    mrt_error err = {0};
    if (mrt_init(&err) != MRT_OK) {
        fprintf(stderr, "mrt_init: %s\n", err.message);
        return 1;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    nan_max();
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_numerics at %d ranks: %d failure%s\n", nranks, total,
               total == 1 ? "" : "s");
    MPI_Finalize();
    return total ? 1 : 0;
}
