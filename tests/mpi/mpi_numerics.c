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
 *     softmax and softmax_cross_entropy (whose maxima are reduce_max
 *     ops) over the same split dim: the row with a NaN is NaN throughout
 *     (and its loss NaN), the others sum to 1.
 *
 *   swap: an init file replaced or rewritten after the spec was loaded
 *     (the loader checked its header; each rank reads it again to fill
 *     its shard, and rank 0 for --verify's reference) is refused with
 *     MRT_E_RUNTIME on every rank and a message that names the file:
 *     a smaller valid .npy renamed over it before mrt_runner_create (it
 *     overflowed a heap buffer), the same shape with other values
 *     rewritten in place, and a same-shape replacement after create,
 *     before a verified execute (it blamed a correct run: MRT_E_VERIFY).
 *     The file left alone runs and verifies.
 *
 * Every rank counts its failures; the ranks sum them and all exit with
 * the same status.  Run at 1-4 ranks.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "meshrt_mpi.h"
#include "mpi_agree.h"

static int rank, nranks, failures;

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

static mrt_spec *load_text(const char *name, const char *text)
{
    mrt_spec *s = NULL;
    mrt_error err = {0};
    mrt_status st = mrt_spec_load_string(name, text, strlen(text), &s,
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
        mrt_runner_get_output(r, "m", f64 ? (void *)m : (void *)mf, MRT_WHOLE,
                              fresh(&err)) != MRT_OK) {
        CHECK(0, "nan_max %s: %s", mesh, err.message);
    } else if (rank == 0) {
        double m0 = f64 ? m[0] : mf[0], m1 = f64 ? m[1] : mf[1],
               m2 = f64 ? m[2] : mf[2];
        CHECK(isnan(m0) && m1 == 4 && m2 == -1,
              "nan_max mesh %s, %s, NaN at %d: max %g, %g, %g, not nan, 4, "
              "-1",
              mesh, f64 ? "float64" : "float32", nan_at, m0, m1, m2);
    }
    mrt_runner_destroy(r);
    mrt_plan_destroy(p);
    mrt_spec_destroy(s);
}

/* p = softmax over f of x (NaN at nan_at of row 0), f split by split;
 * l = softmax_cross_entropy of x against p's row-wise targets q. */
static void nan_softmax_case(const char *mesh, const char *split, int nan_at)
{
    char text[1024];
    snprintf(text, sizeof text,
             "mesh: %s\n"
             "dtype: float64\n"
             "dims: {b: 3, f: 4}\n"
             "tensors:\n"
             "  x: {shape: [b, f], layout: {f: %s}}\n"
             "  q: {shape: [b, f], layout: {f: %s}, init: {fill: 0.25}}\n"
             "ops:\n"
             "  - {op: softmax, in: [x], out: p, dim: f}\n"
             "  - {op: softmax_cross_entropy, in: [x, q], out: l, dim: f}\n"
             "outputs: [p, l]\n",
             mesh, split, split);
    mrt_spec *s = load_text("nan_softmax.yaml", text);
    mrt_plan *p = NULL;
    mrt_runner *r = NULL;
    mrt_error err = {0};
    double x[12] = {1, 2, 3, 4, 4, 3, 2, 1, -1, -2, -3, -4}, y[12], l = 0;
    x[nan_at] = NAN;
    if (!s || mrt_plan_create(s, NULL, &p, fresh(&err)) != MRT_OK ||
        mrt_runner_create(s, p, MPI_COMM_WORLD, &r, fresh(&err)) != MRT_OK ||
        mrt_runner_set_input(r, "x", x, MRT_WHOLE, fresh(&err)) != MRT_OK ||
        mrt_runner_execute(r, NULL, fresh(&err)) != MRT_OK ||
        mrt_runner_get_output(r, "p", y, MRT_WHOLE, fresh(&err)) != MRT_OK ||
        mrt_runner_get_output(r, "l", &l, MRT_WHOLE, fresh(&err)) != MRT_OK) {
        CHECK(0, "nan_softmax %s: %s", mesh, err.message);
    } else if (rank == 0) {
        int ok = isnan(l);
        for (int j = 0; j < 4; j++)
            ok = ok && isnan(y[j]);
        for (int i = 1; i < 3; i++) {
            double sum = 0;
            for (int j = 0; j < 4; j++)
                sum += y[i * 4 + j];
            ok = ok && fabs(sum - 1) < 1e-12;
        }
        CHECK(ok,
              "nan_softmax mesh %s, NaN at %d: row 0 %g %g %g %g, "
              "loss %g",
              mesh, nan_at, y[0], y[1], y[2], y[3], l);
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
    for (int at = 0; at < 4; at++) {
        nan_softmax_case(mesh, "r", at);
        if (nranks == 4)
            nan_softmax_case("{a: 2, c: 2}", "[a, c]", at);
    }
}

/* ---- swap ------------------------------------------------------------- */

enum { SB = 4, SF = 8 }; /* x is [SB, SF] */

/* A float64 .npy of the given shape (n dims) and values v[i] = i + add,
 * written to path in place (O_TRUNC: the same inode when it exists). */
static void write_npy(const char *path, int n, const int *shape, double add)
{
    char dict[128], hdr[160];
    int count = 1, len = snprintf(dict, sizeof dict,
                                  "{'descr': '<f8', 'fortran_order': False, "
                                  "'shape': (");
    for (int i = 0; i < n; i++) {
        len += snprintf(dict + len, sizeof dict - (size_t)len, "%d,%s",
                        shape[i], i + 1 < n ? " " : "");
        count *= shape[i];
    }
    snprintf(dict + len, sizeof dict - (size_t)len, "), }");
    int hlen = 118; /* 10 + 118 = 128 bytes before the data */
    snprintf(hdr, sizeof hdr, "%-*s\n", hlen - 1, dict);
    FILE *f = fopen(path, "wb");
    fwrite("\x93NUMPY\x01\x00", 1, 8, f);
    unsigned char l[2] = {(unsigned char)(hlen & 255),
                          (unsigned char)(hlen >> 8)};
    fwrite(l, 1, 2, f);
    fwrite(hdr, 1, (size_t)hlen, f);
    for (int i = 0; i < count; i++) {
        double v = i + add;
        fwrite(&v, sizeof v, 1, f);
    }
    fclose(f);
}

static char swap_dir[256];

/* x.npy as the spec names it, fresh: [SB, SF], values i. */
static void fresh_file(void)
{
    char path[300];
    int shape[2] = {SB, SF};
    snprintf(path, sizeof path, "%s/x.npy", swap_dir);
    if (rank == 0) {
        unlink(path);
        write_npy(path, 2, shape, 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Rank 0 changes x.npy: `how` 0 renames a smaller file over it, 1
 * rewrites it in place with other values, 2 renames a same-shape file
 * with other values over it. */
static void change_file(int how)
{
    char path[300], tmp[300];
    int small[1] = {3}, shape[2] = {SB, SF};
    snprintf(path, sizeof path, "%s/x.npy", swap_dir);
    snprintf(tmp, sizeof tmp, "%s/new.npy", swap_dir);
    MPI_Barrier(MPI_COMM_WORLD); /* every rank has loaded the spec */
    if (rank == 0 && how == 1) {
        usleep(20000); /* a later modification time than the load's */
        write_npy(path, 2, shape, 0.5);
    } else if (rank == 0) {
        write_npy(tmp, how == 0 ? 1 : 2, how == 0 ? small : shape, 0.5);
        rename(tmp, path);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* y = tanh(x), x from the file, split over every rank. */
static mrt_spec *swap_spec(void)
{
    char text[1024];
    snprintf(text, sizeof text,
             "mesh: {r: %d}\n"
             "dtype: float64\n"
             "dims: {b: %d, f: %d}\n"
             "tensors:\n"
             "  x: {shape: [b, f], layout: {f: r}, init: {file: %s/x.npy}}\n"
             "ops:\n"
             "  - {op: tanh, in: [x], out: y}\n"
             "outputs: [y]\n",
             nranks, SB, SF, swap_dir);
    return load_text("swap.yaml", text);
}

/* The status every rank got is want, and the message names x.npy and
 * says it changed. */
static void expect_changed(const char *what, mrt_status st, mrt_status want,
                           const mrt_error *err)
{
    int ok = st == want;
    if (want != MRT_OK)
        ok = ok && strstr(err->message, "x.npy") &&
             strstr(err->message, "changed");
    CHECK(ok, "swap, %s: status %d (want %d): %s", what, (int)st, (int)want,
          err->message);
}

/* how: as change_file, before mrt_runner_create (before = 1) or after
 * it, before a verified execute; -1: the file is left alone. */
static void swap_case(const char *what, int how, int before)
{
    fresh_file();
    mrt_spec *s = swap_spec();
    mrt_plan *p = NULL;
    mrt_runner *r = NULL;
    mrt_error err = {0};
    int ok = s && mrt_plan_create(s, NULL, &p, fresh(&err)) == MRT_OK;
    if (!all(ok)) { /* every rank leaves, or none */
        CHECK(ok, "swap, %s: set-up: %s", what, err.message);
        goto done;
    }
    if (before && how >= 0)
        change_file(how);
    mrt_status st = mrt_runner_create(s, p, MPI_COMM_WORLD, &r, fresh(&err));
    if (before && how >= 0) {
        expect_changed(what, st, MRT_E_RUNTIME, &err);
        goto done;
    }
    if (st != MRT_OK) { /* on every rank */
        CHECK(0, "swap, %s: create: %s", what, err.message);
        goto done;
    }
    if (how >= 0)
        change_file(how);
    mrt_run_options opt = {.verify = 1};
    st = mrt_runner_execute(r, &opt, fresh(&err));
    expect_changed(what, st, how >= 0 ? MRT_E_RUNTIME : MRT_OK, &err);
done:
    mrt_runner_destroy(r);
    mrt_plan_destroy(p);
    mrt_spec_destroy(s);
}

static void swap(void)
{
    if (rank == 0 && !mkdtemp(strcpy(swap_dir, "/tmp/mrt_swap_XXXXXX")))
        swap_dir[0] = '\0';
    MPI_Bcast(swap_dir, sizeof swap_dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (!swap_dir[0]) {
        CHECK(0, "swap: cannot make a temporary folder");
        return;
    }
    swap_case("left alone", -1, 0);
    swap_case("a smaller file before create", 0, 1);
    swap_case("rewritten in place before create", 1, 1);
    swap_case("a same-shape file before a verified execute", 2, 0);
    swap_case("rewritten in place before a verified execute", 1, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        char path[300];
        snprintf(path, sizeof path, "%s/x.npy", swap_dir);
        unlink(path);
        rmdir(swap_dir);
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
    swap();
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_numerics at %d ranks: %d failure%s\n", nranks, total,
               total == 1 ? "" : "s");
    MPI_Finalize();
    return total ? 1 : 0;
}
