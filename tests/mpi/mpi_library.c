/*
 * mpi_library.c — meshrt as a library, through meshrt.h only: a runner on
 * the caller's communicator (the world, and a sub-communicator that
 * leaves a rank out), the caller's input arrays (whole and as shards),
 * outputs read back (gathered whole on rank 0, and each rank's shard),
 * quiet by default (nothing on the standard output), the report to a
 * callback or a FILE, and the errors: a mesh that is not the
 * communicator's size, a plan made from another program, names that are
 * not inputs, --verify after the caller's inputs (and again after
 * mrt_runner_restart), mrt_init forgotten
 * (`mpi_library noinit`, which never calls it) or called after MPI_Init.
 *
 * Run at 1-4 ranks.  Every rank counts its failures; the ranks sum them
 * and all exit with the same status.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "meshrt_mpi.h"

enum { K = 5, N = 60 }; /* batch is 3 per mesh rank; N divisible by 1-5 */

static int rank, failures;

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            failures++;                                                        \
            fprintf(stderr, "rank %d: line %d: ", rank, __LINE__);             \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
        }                                                                      \
    } while (0)

/* The first error wins in an mrt_error: a clean one for each call. */
static mrt_error *fresh(mrt_error *e)
{
    memset(e, 0, sizeof *e);
    return e;
}

/* y = x w over a mesh of `ranks` rows; w's columns split over rows too
 * (its own layout), so the planner moves it. */
static mrt_spec *load(int ranks)
{
    char text[1024];
    int len = snprintf(
        text, sizeof text,
        "mesh: {rows: %d}\n"
        "dtype: float64\n"
        "dims: {batch: %d, k: %d, n: %d}\n"
        "layout: {batch: rows}\n"
        "tensors:\n"
        "  x: {shape: [batch, k]}\n"
        "  w: {shape: [k, n], layout: {n: rows}}\n"
        "ops:\n"
        "  - {op: einsum, in: [x, w], out: y, shape: [batch, n]}\n"
        "outputs: [y]\n",
        ranks, 3 * ranks, K, N);
    mrt_spec *s = NULL;
    mrt_error err = {0};
    mrt_status st = mrt_spec_load_string("lib.yaml", text, (size_t)len, &s,
                                         fresh(&err));
    CHECK(st == MRT_OK, "load: %s", err.message);
    return s;
}

static double xval(int64_t i)
{
    return sin(0.3 * (double)i) + 0.5;
}
static double wval(int64_t i)
{
    return cos(0.7 * (double)i);
}

static double yref(int64_t b, int64_t j)
{
    double y = 0;
    for (int k = 0; k < K; k++)
        y += xval(b * K + k) * wval(k * N + j);
    return y;
}

static void collect(const char *text, size_t len, void *ctx)
{
    int *calls = ctx;
    calls[0]++;
    calls[1] = strstr(text, "bytes match the plan") != NULL &&
               strlen(text) == len;
}

/* Runs with opt and returns how many bytes the process wrote on its
 * standard output meanwhile (fd 1 goes to a temporary file). */
static long stdout_during(mrt_runner *r, const mrt_run_options *opt,
                          mrt_status *st, mrt_error *err)
{
    FILE *tmp = tmpfile();
    fflush(stdout);
    int saved = dup(1);
    dup2(fileno(tmp), 1);
    *st = mrt_runner_execute(r, opt, err);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    struct stat sb;
    fstat(fileno(tmp), &sb);
    fclose(tmp);
    return (long)sb.st_size;
}

/* The whole program on comm (whose size is the mesh's). */
static void run_on(MPI_Comm comm)
{
    int size, crank;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &crank);
    mrt_spec *spec = load(size);
    mrt_plan *plan = NULL;
    mrt_runner *r = NULL;
    mrt_error err = {0};
    if (!spec || mrt_plan_create(spec, NULL, &plan, fresh(&err)) != MRT_OK ||
        mrt_runner_create(spec, plan, comm, &r, fresh(&err)) != MRT_OK) {
        CHECK(0, "set-up: %s", err.message);
        goto done;
    }
    int B = 3 * size;
    double *x = malloc(sizeof(double) * (size_t)(B * K));
    double *w = malloc(sizeof(double) * K * N);
    for (int i = 0; i < B * K; i++)
        x[i] = xval(i);
    for (int i = 0; i < K * N; i++)
        w[i] = wval(i);
    /* w as this rank's shard: columns [off, off + n) */
    mrt_tensor_info wi, yi;
    CHECK(mrt_runner_tensor_info(r, "w", &wi, fresh(&err)) == MRT_OK, "%s",
          err.message);
    CHECK(wi.ndims == 2 && wi.shape[0] == K && wi.shape[1] == N &&
              wi.dtype_size == 8 && wi.shard_shape[0] == K &&
              wi.shard_count == wi.shard_shape[0] * wi.shard_shape[1],
          "w's info");
    double *ws = malloc(sizeof(double) * (size_t)wi.shard_count);
    for (int64_t i = 0; i < wi.shard_shape[0]; i++)
        for (int64_t j = 0; j < wi.shard_shape[1]; j++)
            ws[i * wi.shard_shape[1] + j] =
                w[(wi.shard_offset[0] + i) * N + wi.shard_offset[1] + j];
    CHECK(mrt_runner_set_input(r, "x", x, MRT_WHOLE, fresh(&err)) == MRT_OK,
          "%s", err.message);
    CHECK(mrt_runner_set_input(r, "w", ws, MRT_SHARD, fresh(&err)) == MRT_OK,
          "%s", err.message);
    CHECK(mrt_runner_set_input(r, "y", x, MRT_WHOLE, fresh(&err)) ==
              MRT_E_USAGE,
          "setting an output");
    CHECK(mrt_runner_set_input(r, "nope", x, MRT_WHOLE, fresh(&err)) ==
                  MRT_E_USAGE &&
              strstr(err.message, "'nope'"),
          "an unknown name");

    /* quiet: no options, nothing printed */
    mrt_status st;
    long printed = stdout_during(r, NULL, &st, fresh(&err));
    CHECK(st == MRT_OK, "execute: %s", err.message);
    CHECK(printed == 0, "a quiet run printed %ld bytes", printed);

    /* outputs: whole on rank 0, the shard everywhere */
    double *y = malloc(sizeof(double) * (size_t)(B * N));
    CHECK(mrt_runner_get_output(r, "y", crank == 0 ? y : NULL, MRT_WHOLE,
                                fresh(&err)) == MRT_OK,
          "%s", err.message);
    for (int64_t i = 0; crank == 0 && i < B * N; i++)
        CHECK(fabs(y[i] - yref(i / N, i % N)) < 1e-12, "y[%ld] = %g, not %g",
              (long)i, y[i], yref(i / N, i % N));
    CHECK(mrt_runner_tensor_info(r, "y", &yi, fresh(&err)) == MRT_OK, "%s",
          err.message);
    CHECK(yi.shard_shape[0] == 3 && yi.shard_offset[0] == 3 * crank,
          "y's shard: %ld rows at %ld", (long)yi.shard_shape[0],
          (long)yi.shard_offset[0]);
    CHECK(mrt_runner_get_output(r, "y", y, MRT_SHARD, fresh(&err)) == MRT_OK,
          "%s", err.message);
    for (int64_t i = 0; i < yi.shard_shape[0]; i++)
        for (int64_t j = 0; j < yi.shard_shape[1]; j++)
            CHECK(fabs(y[i * yi.shard_shape[1] + j] -
                       yref(yi.shard_offset[0] + i, yi.shard_offset[1] + j)) <
                      1e-12,
                  "y's shard at %ld,%ld", (long)i, (long)j);

    /* the report to a callback: rank 0 only, once, nothing printed */
    int calls[2] = {0, 0};
    mrt_run_options opt = {
        .report_fn = collect, .report_ctx = calls, .repeat = 2};
    printed = stdout_during(r, &opt, &st, fresh(&err));
    CHECK(st == MRT_OK && printed == 0, "callback run: %s, %ld bytes printed",
          err.message, printed);
    CHECK(crank == 0 ? calls[0] == 1 && calls[1] : calls[0] == 0,
          "callback: %d calls, report %s", calls[0],
          calls[1] ? "complete" : "missing");

    /* verify compares with the spec's inputs: not after set_input */
    opt = (mrt_run_options){.verify = 1};
    CHECK(mrt_runner_execute(r, &opt, fresh(&err)) == MRT_E_USAGE &&
              strstr(err.message, "mrt_runner_set_input"),
          "verify after set_input: %s", err.message);
    /* restarted: the spec's inputs again (verify compares the run with
     * them, so it fails if x or w kept the caller's values) */
    CHECK(mrt_runner_restart(r, fresh(&err)) == MRT_OK, "restart: %s",
          err.message);
    CHECK(mrt_runner_execute(r, &opt, fresh(&err)) == MRT_OK,
          "verify after restart: %s", err.message);
    CHECK(mrt_runner_restart(NULL, fresh(&err)) == MRT_E_USAGE,
          "restart of NULL");
    free(x), free(w), free(ws), free(y);
done:
    mrt_runner_destroy(r);

    /* mrt_run on comm, with the spec's own inputs, verified, the report
     * in a FILE */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    mrt_run_options ropt = {.verify = 1, .report = f, .comm = comm};
    st = plan ? mrt_run(spec, plan, &ropt, fresh(&err)) : MRT_E_USAGE;
    fclose(f);
    CHECK(st == MRT_OK, "mrt_run: %s", err.message);
    CHECK(crank == 0 ? strstr(text, "verify y:") != NULL : len == 0,
          "mrt_run's report: %s", text);
    free(text);
    mrt_plan_destroy(plan);
    mrt_spec_destroy(spec);

    /* a plan made from another program: a usage error on every rank, not
     * a crash (the runner reads the spec by the plan's ids); the same
     * program loaded twice is the same program */
    static const char other[] = "mesh: {rows: %d}\n"
                                "dims: {i: %d}\n"
                                "tensors: {a: {shape: [i]}}\n"
                                "ops: [{op: relu, in: [a], out: b}]\n";
    char text2[256];
    int len2 = snprintf(text2, sizeof text2, other, size, 4 * size);
    mrt_spec *spec2 = NULL;
    spec = load(size);
    plan = NULL;
    r = NULL;
    if (spec && mrt_plan_create(spec, NULL, &plan, fresh(&err)) == MRT_OK &&
        mrt_spec_load_string("other.yaml", text2, (size_t)len2, &spec2,
                             fresh(&err)) == MRT_OK) {
        st = mrt_runner_create(spec2, plan, comm, &r, fresh(&err));
        CHECK(st == MRT_E_USAGE && !r && strstr(err.message, "not made from"),
              "a plan of another program: %s", err.message);
        mrt_spec *again = load(size);
        st = again ? mrt_runner_create(again, plan, comm, &r, fresh(&err))
                   : MRT_E_SPEC;
        CHECK(st == MRT_OK && r, "the same program loaded again: %s",
              err.message);
        mrt_runner_destroy(r);
        mrt_spec_destroy(again);
    }
    mrt_spec_destroy(spec2);
    mrt_plan_destroy(plan);
    mrt_spec_destroy(spec);

    /* a mesh one rank larger than comm: a mesh error on every rank */
    spec = load(size + 1);
    plan = NULL;
    r = NULL;
    if (spec && mrt_plan_create(spec, NULL, &plan, fresh(&err)) == MRT_OK) {
        st = mrt_runner_create(spec, plan, comm, &r, fresh(&err));
        CHECK(st == MRT_E_MESH && !r, "a mesh of %d on %d ranks: %s", size + 1,
              size, err.message);
    }
    mrt_plan_destroy(plan);
    mrt_spec_destroy(spec);
}

int main(int argc, char **argv)
{
    int noinit = argc > 1 && strcmp(argv[1], "noinit") == 0;
    mrt_error err = {0};
    if (!noinit && mrt_init(&err) != MRT_OK) {
        fprintf(stderr, "mrt_init: %s\n", err.message);
        return 1;
    }
    MPI_Init(&argc, &argv);
    int P, total;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    if (noinit) {
        mrt_spec *spec = load(P);
        mrt_plan *plan = NULL;
        mrt_runner *r = NULL;
        if (spec && mrt_plan_create(spec, NULL, &plan, fresh(&err)) == MRT_OK) {
            CHECK(mrt_runner_create(spec, plan, MPI_COMM_WORLD, &r,
                                    fresh(&err)) == MRT_E_USAGE &&
                      strstr(err.message, "mrt_init"),
                  "a runner without mrt_init: %s", err.message);
            CHECK(mrt_run(spec, plan, NULL, fresh(&err)) == MRT_E_USAGE,
                  "mrt_run without mrt_init");
        }
        mrt_runner_destroy(r);
        mrt_plan_destroy(plan);
        mrt_spec_destroy(spec);
        CHECK(mrt_init(fresh(&err)) == MRT_E_USAGE &&
                  strstr(err.message, "MPI_Init"),
              "mrt_init after MPI_Init: %s", err.message);
    } else {
        run_on(MPI_COMM_WORLD);
        /* a communicator that leaves the last rank out (at 1 rank: a
         * duplicate of the world) */
        MPI_Comm sub;
        if (P > 1)
            MPI_Comm_split(MPI_COMM_WORLD, rank < P - 1 ? 0 : MPI_UNDEFINED,
                           rank, &sub);
        else
            MPI_Comm_dup(MPI_COMM_WORLD, &sub);
        if (sub != MPI_COMM_NULL) {
            run_on(sub);
            MPI_Comm_free(&sub);
        }
        CHECK(strcmp(mrt_version(), MESHRT_VERSION) == 0, "version %s",
              mrt_version());
    }
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return total ? 1 : 0;
}
