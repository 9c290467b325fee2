/*
 * calibrate_rates.c — the local rates `calibrate` measures the way a run
 * meets them (docs/calibration.md): the GEMM rate in float32 and float64
 * by the form of the operands and the size of the product, and the rate of every
 * elementwise function by the size of its shard.  They become the
 * profile's `gemm:` and `maps:` rows, which ops/step_cost.c prices plan
 * steps by.
 *
 * How, and why that way:
 *  - Products: n x n x n, BLIS single-threaded with general strides, as
 *    kernels/kernel.c calls it, in each form (A and B each stored by rows
 *    or by columns: the gradients' products take transposed operands,
 *    which BLIS packs differently).  The operands cycle through buffers
 *    of 64 MiB each, far larger than a core's cache, so a product finds
 *    them where a run does (written by an earlier step, not in the core's
 *    cache: the calibrate's peak, one product over the same operands, has
 *    them hot).  The same in float64 (dgemm), a fifth of the work a
 *    repetition: its rate by size is not sgemm's scaled by the peaks.
 *  - Maps: each function (kernels/kernel_map.c) over shards of 16 Ki,
 *    256 Ki and 4 Mi float32 elements (64 KiB to 16 MiB: in a core's
 *    cache and out of it), inputs as large as the output, the first in
 *    [-8, 8] (signs at random and magnitudes spread as activations'
 *    are, through both tails of gelu and tanh: the float32 kernels take
 *    the same time for any values, and these would show one that did
 *    not; the passes take turns over up to 8 inputs, which the largest
 *    shard's data holds, so that a branch on the data could not be
 *    learnt), the second in [0.5, 1.5] (log, rsqrt and sqrt_add take it
 *    as their first input).  Transcendentals (gelu, tanh, exp) run
 *    below the copy rate, simple maps on shards in cache above it.  One more row,
 *    `sum`, is the one-input einsum (a permuted sum: "r c -> c", per
 *    input element), which the GEMM rate does not price.
 *  - The same in float64, for the functions whose float64 time the
 *    bytes do not predict (timed_in_f64: libm's transcendentals, ~20
 *    times float32's vectorised ones, not 2), on the same values; the
 *    passes over a shard larger than 64 Ki take turns over its parts.
 *  - Every repetition is a fixed amount of work (products: about 10 ms,
 *    `--quick` 1 ms; maps a quarter of that, float64's an eighth,
 *    sized by timing one unit)
 *    timed from a barrier on every rank at once; the slowest rank counts,
 *    and the best repetition: a repetition that another process
 *    interrupted is not the machine's speed.  A type's products take
 *    turns, one repetition of each after another, so that each row's
 *    best is over the whole of its type's calibration, not a tenth of a
 *    second of it (gemm_rows_time).
 */
#include <assert.h>
#include <blis.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "error.h"
#include "kernel.h"
#include "mapfn.h"

double mrt_calib_best(MPI_Comm world, int reps, void (*run)(void *), void *arg)
{
    double best = INFINITY;
    for (int r = 0; r < reps; r++) {
        MPI_Barrier(world);
        double t0 = MPI_Wtime(), t, worst;
        run(arg);
        t = MPI_Wtime() - t0;
        MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, world);
        best = fmin(best, worst);
    }
    return fmax(best, 1e-9);
}

/* How many times (*count) run(arg) must repeat its unit of work for a
 * repetition to take about `target` seconds: one unit timed (which also
 * warms the caches and the code), on the slowest rank.  Collective. */
static void size_work(MPI_Comm world, double target, void (*run)(void *),
                      void *arg, int *count)
{
    *count = 1;
    double one = mrt_calib_best(world, 1, run, arg);
    *count = (int)fmin(1 << 24, fmax(1, target / one));
}

mrt_status mrt_calib_pools_create(MPI_Comm world, size_t bytes, int reps,
                                  double target, const char *what,
                                  mrt_calib_pools *pl, mrt_error *err)
{
    memset(pl, 0, sizeof *pl);
    pl->a = malloc(bytes);
    pl->b = malloc(bytes);
    pl->c = malloc(bytes);
    mrt_status st = pl->a && pl->b && pl->c
                        ? MRT_OK
                        : mrt_error_set(err, MRT_E_NOMEM, "", (mrt_mark){0},
                                        "out of memory for %s (%zu MiB per "
                                        "rank)",
                                        what, 3 * (bytes >> 20));
    st = mrt_comm_agree(world, st, err);
    if (st != MRT_OK) {
        mrt_calib_pools_destroy(pl);
        return st;
    }
    memset(pl->a, 0, bytes);
    memset(pl->b, 0, bytes);
    memset(pl->c, 0, bytes);
    pl->bytes = bytes;
    pl->reps = reps;
    pl->target_s = target;
    return MRT_OK;
}

mrt_status mrt_calib_check_plans(MPI_Comm comm, mrt_plan *const *plans, int n,
                                 int *timed, const char *fn, mrt_error *err)
{
    const char *why = comm == MPI_COMM_NULL || (n > 0 && !plans)
                          ? "a NULL argument"
                          : NULL;
    if (timed)
        *timed = 0;
    for (int i = 0; !why && i < n; i++)
        if (!plans[i])
            why = "a NULL plan";
    return why ? mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0}, "%s: %s",
                               fn, why)
               : MRT_OK;
}

void mrt_calib_pools_destroy(mrt_calib_pools *pl)
{
    free(pl->a);
    free(pl->b);
    free(pl->c);
    memset(pl, 0, sizeof *pl);
}

/* ---- products by form ----------------------------------------------- */

typedef struct gemm_job {
    int m, n, k, form, count; /* count products m x k by k x n in form */
    mrt_dtype t;              /* MRT_F32 or MRT_F64 */
    void *a, *b, *c;          /* the pools */
    size_t set, sets;         /* elements of one operand set (the largest of the
                         three), and the sets in each pool */
    size_t next;              /* the set the next product takes: each
                                 repetition goes on where the last one
                                 stopped, so that no product finds its
                                 operands in cache from a repetition
                                 before (a repetition of few large
                                 products would, starting at set 0) */
} gemm_job;

static void run_gemms(void *arg)
{
    gemm_job *j = arg;
    int64_t m = j->m, n = j->n, k = j->k;
    /* A (m x k), B (k x n) by rows or by columns; C by rows, or by
     * columns (a product row's MRT_PRODUCT_C_COLS) */
    int64_t ars = j->form & 2 ? 1 : k, acs = j->form & 2 ? m : 1;
    int64_t brs = j->form & 1 ? 1 : n, bcs = j->form & 1 ? k : 1;
    int64_t crs = j->form & MRT_PRODUCT_C_COLS ? 1 : n,
            ccs = j->form & MRT_PRODUCT_C_COLS ? m : 1;
    float one = 1, zero = 0;
    double one64 = 1, zero64 = 0;
    for (int i = 0; i < j->count; i++) {
        size_t s = j->next++ % j->sets * j->set;
        if (j->t == MRT_F64)
            bli_dgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, m, n, k, &one64,
                      (double *)j->a + s, ars, acs, (double *)j->b + s, brs,
                      bcs, &zero64, (double *)j->c + s, crs, ccs);
        else
            bli_sgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, m, n, k, &one,
                      (float *)j->a + s, ars, acs, (float *)j->b + s, brs, bcs,
                      &zero, (float *)j->c + s, crs, ccs);
    }
}

/* Job j for m x n x k products of type t in form f, operands cycling
 * through the pools; 0 when the pools cannot hold one operand set. */
static int gemm_job_of(const mrt_calib_pools *pl, mrt_dtype t, int f, int m,
                       int n, int k, gemm_job *j)
{
    size_t mk = (size_t)m * (size_t)k, kn = (size_t)k * (size_t)n,
           mn = (size_t)m * (size_t)n;
    size_t set = mk > kn ? (mk > mn ? mk : mn) : (kn > mn ? kn : mn);
    *j = (gemm_job){.m = m,
                    .n = n,
                    .k = k,
                    .form = f,
                    .count = 1,
                    .t = t,
                    .a = pl->a,
                    .b = pl->b,
                    .c = pl->c,
                    .set = set,
                    .sets = pl->bytes / (set * (size_t)mrt_dtype_size(t))};
    return j->sets > 0;
}

static double gemm_job_rate(const gemm_job *j, double seconds)
{
    return mrt_calib_sig4(2.0 * j->m * j->n * j->k * j->count / seconds);
}

double mrt_calib_gemm_rate(MPI_Comm world, const mrt_calib_pools *pl,
                           mrt_dtype t, double target, int f, int m, int n,
                           int k)
{
    gemm_job j;
    if (!gemm_job_of(pl, t, f, m, n, k, &j))
        return 0;
    size_work(world, target, run_gemms, &j, &j.count);
    return gemm_job_rate(&j, mrt_calib_best(world, pl->reps, run_gemms, &j));
}

/* The rows of one type, timed together: each job sized, then the
 * repetitions taking turns, one of every row after another, each row
 * keeping its best.  A row timed in one go (its repetitions back to
 * back, a tenth of a second) fell wholly inside a slow moment of a
 * shared host or wholly outside it, and one row of a profile then said
 * another speed than the next (docs/calibration.md, round J); taking
 * turns, every row's best is over the whole calibration of its type.
 * Collective. */
#define GEMM_JOBS 64
typedef struct gemm_rows {
    int n;
    gemm_job job[GEMM_JOBS];
    mrt_gemm_row row[GEMM_JOBS]; /* all but the rate */
    double best[GEMM_JOBS];
} gemm_rows;

static void gemm_rows_add(gemm_rows *g, const mrt_calib_pools *pl,
                          mrt_gemm_row row, int m, int n, int k)
{
    assert(g->n < GEMM_JOBS);
    if (gemm_job_of(pl, (mrt_dtype)row.dtype, row.form, m, n, k, &g->job[g->n]))
        g->row[g->n++] = row;
}

static void gemm_rows_time(MPI_Comm world, gemm_rows *g, int reps,
                           double target)
{
    for (int i = 0; i < g->n; i++) {
        size_work(world, target, run_gemms, &g->job[i], &g->job[i].count);
        g->best[i] = INFINITY;
    }
    for (int r = 0; r < reps; r++)
        for (int i = 0; i < g->n; i++)
            g->best[i] = fmin(g->best[i],
                              mrt_calib_best(world, 1, run_gemms, &g->job[i]));
}

/* The rows of type t: every form at each size, then the peak's product
 * (hot: one product over the same operands) as the largest nn row
 * when it is larger than those; then the thin products in form nn, the
 * short side of each size up to 256 and the other two of `other`
 * (cost_gemm.c says why the side matters). */
static void gemm_rows_of(MPI_Comm world, const mrt_calib_pools *pl, mrt_dtype t,
                         double target, mrt_profile *p)
{
    static const int full[] = {16, 32, 64, 128, 256, 512, 0};
    static const int quick[] = {16, 64, 256, 0};
    const int *sizes = pl->quick ? quick : full;
    gemm_rows *g = calloc(1, sizeof *g);
    if (!g)
        return; /* no rows: the model falls back on the peak */
    for (int f = 0; f < MRT_GEMM_FORM_COUNT; f++)
        for (int i = 0; sizes[i]; i++) {
            int n = sizes[i];
            gemm_rows_add(g, pl, (mrt_gemm_row){n, f, 0, t, MRT_GEMM_CUBE, 0},
                          n, n, n);
        }
    static const int thin_full[] = {16, 32, 64, 128, 256, 0};
    static const int thin_quick[] = {16, 64, 0};
    const int *thin = pl->quick ? thin_quick : thin_full;
    int other = pl->quick ? 256 : 1024;
    for (int side = MRT_GEMM_THIN_M; side < MRT_GEMM_THIN_COUNT; side++)
        for (int i = 0; thin[i]; i++) {
            int s = thin[i];
            int m = side == MRT_GEMM_THIN_M ? s : other,
                n = side == MRT_GEMM_THIN_N ? s : other,
                k = side == MRT_GEMM_THIN_K ? s : other;
            gemm_rows_add(g, pl,
                          (mrt_gemm_row){s, MRT_GEMM_NN, 0, t, side, other}, m,
                          n, k);
        }
    gemm_rows_time(world, g, pl->reps, target);
    for (int i = 0; i < g->n; i++) {
        p->gemm[p->ngemm] = g->row[i];
        p->gemm[p->ngemm++].flops = gemm_job_rate(&g->job[i], g->best[i]);
    }
    free(g);
    int last = 0;
    while (sizes[last + 1])
        last++;
    /* (not when the peak's size is one timed cold: --quick's float64
     * peak is 256, whose row is the cold one) */
    if (pl->peak_n[t] > sizes[last])
        p->gemm[p->ngemm++] = (mrt_gemm_row){
            pl->peak_n[t], MRT_GEMM_NN, p->gemm_flops[t], t, MRT_GEMM_CUBE, 0};
}

/* The shapes of a set of product rows, each sized once and then timed
 * in rounds, each keeping its best (mrt_calib_products_create). */
struct mrt_calib_products {
    int n;
    gemm_job *job; /* [n]; count 0: too large for the pools */
    double *best;  /* [n] seconds of a repetition, the best so far */
};

mrt_status mrt_calib_products_create(MPI_Comm world, const mrt_calib_pools *pl,
                                     int n, const mrt_product_row *rows,
                                     mrt_calib_products **out)
{
    mrt_calib_products *t = calloc(1, sizeof *t);
    if (t) {
        t->n = n > 0 ? n : 0;
        t->job = calloc((size_t)t->n + 1, sizeof *t->job);
        t->best = calloc((size_t)t->n + 1, sizeof *t->best);
    }
    int ok = t && t->job && t->best;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, world);
    if (!ok) {
        mrt_calib_products_destroy(t);
        *out = NULL;
        return MRT_E_NOMEM;
    }
    for (int i = 0; i < t->n; i++) {
        const mrt_product_row *r = &rows[i];
        /* (every rank decides alike: the shapes and pools are the same) */
        if (r->m > 1 << 30 || r->n > 1 << 30 || r->k > 1 << 30 ||
            !gemm_job_of(pl, (mrt_dtype)r->dtype, r->form, (int)r->m, (int)r->n,
                         (int)r->k, &t->job[i])) {
            t->job[i].count = 0; /* too large for the pools */
            continue;
        }
        size_work(world, pl->target_s, run_gemms, &t->job[i], &t->job[i].count);
        t->best[i] = INFINITY;
    }
    *out = t;
    return MRT_OK;
}

void mrt_calib_products_round(MPI_Comm world, mrt_calib_products *t)
{
    for (int i = 0; t && i < t->n; i++)
        if (t->job[i].count)
            t->best[i] = fmin(t->best[i],
                              mrt_calib_best(world, 1, run_gemms, &t->job[i]));
}

void mrt_calib_products_rates(const mrt_calib_products *t,
                              mrt_product_row *rows)
{
    for (int i = 0; t && i < t->n; i++)
        rows[i].flops = t->job[i].count && isfinite(t->best[i])
                            ? gemm_job_rate(&t->job[i], t->best[i])
                            : 0;
}

void mrt_calib_products_destroy(mrt_calib_products *t)
{
    if (!t)
        return;
    free(t->job);
    free(t->best);
    free(t);
}

void mrt_calib_product_rates(MPI_Comm world, const mrt_calib_pools *pl, int n,
                             mrt_product_row *rows)
{
    mrt_calib_products *t = NULL;
    if (mrt_calib_products_create(world, pl, n, rows, &t) == MRT_OK)
        for (int rep = 0; rep < pl->reps; rep++)
            mrt_calib_products_round(world, t);
    for (int i = 0; !t && i < n; i++)
        rows[i].flops = 0;
    mrt_calib_products_rates(t, rows);
    mrt_calib_products_destroy(t);
}

void mrt_calib_gemm_rows(MPI_Comm world, const mrt_calib_pools *pl,
                         mrt_profile *p)
{
    p->ngemm = 0;
    gemm_rows_of(world, pl, MRT_F32, pl->target_s, p);
    /* float64's at a fifth of the work a repetition (its 24 rows at
     * float32's 10 ms would add 4 s to the calibration; at 2 ms, about
     * 0.8 s): dgemm's rate by size is not sgemm's times the peaks' ratio
     * (docs/calibration.md, round G) */
    gemm_rows_of(world, pl, MRT_F64, pl->target_s / 5, p);
    mrt_profile_sort_rows(p);
}

/* ---- maps by function ----------------------------------------------- */

typedef struct map_job {
    mrt_map_fn fn;
    mrt_dtype t;      /* MRT_F32 or MRT_F64 */
    int64_t elements; /* of the shard */
    int64_t part;     /* of one pass: the shard's, or fewer (FLOAT64_PART) */
    int count;        /* passes */
    void *out, *a, *b;
    int sets; /* the passes take turns over this many inputs */
} map_job;

/* Element i of an array of type t. */
static void *at(const map_job *j, void *base, int64_t i)
{
    return (char *)base + (size_t)i * (size_t)mrt_dtype_size(j->t);
}

/* Float64's passes map at most this many elements: libm's gelu takes
 * 1.3 ms over 64 Ki, 80 ms over a 4 Mi shard, 60 times a repetition's
 * target (of which the best of 15 would take a second, on a loaded
 * machine each one interrupted), so a larger shard's passes take turns
 * over its parts (inputs and output: of 256 Ki, 4 MiB in all, in the
 * last level of cache as the whole shard is; of 4 Mi, 64 MiB, not in
 * cache, as the whole one is not). */
enum { FLOAT64_PART = 64 << 10 };

/* Pass i's first element: of input set i % sets for a whole shard, else
 * of part i % (elements / part) of the shard. */
static int64_t pass_first(const map_job *j, int i)
{
    if (j->part == j->elements)
        return i % j->sets * j->elements;
    return i % (j->elements / j->part) * j->part;
}

/* The one-input einsum "r c -> c" over j->elements (64 columns): the
 * kernel's strided sum (kernels/kernel_pack.c), the row `sum`. */
static void run_sum(const map_job *j)
{
    int dims[2] = {0, 1};
    int64_t ext[2] = {j->part / 64, 64};
    mrt_kview a = {2, dims, ext, j->a}, c = {1, dims + 1, ext + 1, j->out};
    for (int i = 0; i < j->count; i++) {
        a.data = at(j, j->a, j->part == j->elements ? 0 : pass_first(j, i));
        mrt_kernel_einsum(j->t, &a, NULL, &c, NULL);
    }
}

static void run_maps(void *arg)
{
    const map_job *j = arg;
    if (j->fn == MRT_MAP_FN_COUNT) {
        run_sum(j);
        return;
    }
    int dim = 0;
    int64_t ext = j->part, off = 0;
    int positive = j->fn == MRT_MAP_LOG || j->fn == MRT_MAP_RSQRT ||
                   j->fn == MRT_MAP_SQRT_ADD;
    mrt_kview o = {1, &dim, &ext, j->out}, a = {1, &dim, &ext, j->a},
              b = {1, &dim, &ext, j->b};
    for (int i = 0; i < j->count; i++) {
        int64_t first = pass_first(j, i);
        a.data = at(j, j->a, first);
        b.data = at(j, j->b, first);
        if (j->part < j->elements)
            o.data = at(j, j->out, first);
        mrt_kernel_map(j->t, j->fn, 0.5, &o, positive ? &b : &a,
                       mrt_map_arity(j->fn) == 2 ? &b : NULL, &off, 0);
    }
}

/* The inputs, `most` elements of type t each: the same values in either
 * type (the same seed). */
static void fill_inputs(mrt_dtype t, void *a, void *b, int64_t most)
{
    srand(12345);
    for (int64_t i = 0; i < most; i++) {
        float x = 16 * (float)rand() / (float)RAND_MAX - 8,
              y = 0.5f + (float)rand() / (float)RAND_MAX;
        if (t == MRT_F64) {
            ((double *)a)[i] = x;
            ((double *)b)[i] = y;
        } else {
            ((float *)a)[i] = x;
            ((float *)b)[i] = y;
        }
    }
}

/* Whether function f (MRT_MAP_FN_COUNT: sum) is timed in float64 too:
 * those whose float64 time is not float32's at twice the bytes (the
 * rule mrt_cost_map falls back to).  Libm's exp, log and tanh, and gelu
 * and its derivative made of tanh, against float32's vectorised
 * kernels/fast_math.h: 5 to 20 times float32's time, not 2; division
 * and square roots, which a vector unit does at a lower rate in float64
 * (fewer lanes, longer latency): 2.5 to 3.5 times in cache; one_hot
 * (a compare in double either way) and sum (bound by its additions, not
 * its bytes): about float32's time.  (Measured on an EPYC with every
 * function in both types: docs/calibration.md.)  Every other map is the
 * same loop in either type, bound by the bytes it moves, as the rule
 * says: timing it again would double the maps' part of the calibration
 * for rows that say what the rule says. */
static int timed_in_f64(int f)
{
    switch (f) {
    case MRT_MAP_GELU:
    case MRT_MAP_GELU_GRAD:
    case MRT_MAP_TANH:
    case MRT_MAP_EXP:
    case MRT_MAP_LOG:
    case MRT_MAP_DIV:
    case MRT_MAP_RSQRT:
    case MRT_MAP_SQRT_ADD:
    case MRT_MAP_ONE_HOT:
    case MRT_MAP_FN_COUNT: return 1;
    default: return 0;
    }
}

/* The seconds of one repetition of j, the best of pl->reps: float32's
 * repetitions a quarter of the target, float64's an eighth (its rows
 * are there for a few slow functions, and must not make the
 * calibration much longer). */
static double time_map(MPI_Comm world, const mrt_calib_pools *pl, map_job *j)
{
    size_work(world, pl->target_s / (j->t == MRT_F64 ? 8 : 4), run_maps, j,
              &j->count);
    return mrt_calib_best(world, pl->reps, run_maps, j);
}

void mrt_calib_map_rows(MPI_Comm world, const mrt_calib_pools *pl,
                        mrt_profile *p)
{
    static const int64_t full[] = {16 << 10, 256 << 10, 4 << 20, 0};
    static const int64_t quick[] = {4 << 10, 64 << 10, 0};
    const int64_t *sizes = pl->quick ? quick : full;
    int64_t most = sizes[pl->quick ? 1 : 2];
    assert((size_t)most * sizeof(double) <= pl->bytes);
    p->nmap = 0;
    for (int t = MRT_F32; t <= MRT_F64; t++) {
        fill_inputs((mrt_dtype)t, pl->a, pl->b, most);
        for (int f = 0; f <= MRT_MAP_FN_COUNT; f++) { /* the last: sum */
            if (t == MRT_F64 && !timed_in_f64(f))
                continue;
            for (int i = 0; sizes[i] && p->nmap < MRT_PROFILE_MAP_ROWS; i++) {
                /* up to 8 inputs in turn, so that a branch on the data
                 * (relu's sign) cannot be learnt from one pass to the
                 * next, as the next step of a run brings new data */
                map_job j = {(mrt_map_fn)f,
                             (mrt_dtype)t,
                             sizes[i],
                             t == MRT_F64 && sizes[i] > FLOAT64_PART
                                 ? FLOAT64_PART
                                 : sizes[i],
                             1,
                             pl->c,
                             pl->a,
                             pl->b,
                             (int)(most / sizes[i] < 8 ? most / sizes[i] : 8)};
                double s = time_map(world, pl, &j);
                mrt_map_row *r = &p->map[p->nmap++];
                snprintf(r->fn, sizeof r->fn, "%s",
                         f < MRT_MAP_FN_COUNT ? mrt_map_name((mrt_map_fn)f)
                                              : "sum");
                r->elements = sizes[i];
                r->dtype = t;
                r->s_per_elem = mrt_calib_sig4(
                                    s / ((double)j.count * (double)j.part) *
                                    1e9) *
                                1e-9;
            }
        }
    }
    mrt_profile_sort_rows(p);
}

/* ---- the report ----------------------------------------------------- */

void mrt_calib_print_rates(const mrt_profile *p, FILE *f)
{
    for (int t = MRT_F32, shown = 0; t <= MRT_F64; t++, shown = 0)
        for (int form = 0; form < MRT_GEMM_FORM_COUNT; form++) {
            int any = 0;
            for (int i = 0; i < p->ngemm; i++) {
                const mrt_gemm_row *g = &p->gemm[i];
                if (g->dtype != t || g->form != form ||
                    g->thin != MRT_GEMM_CUBE)
                    continue;
                if (!shown++)
                    fprintf(f,
                            "GEMM %s by form (A, B stored by rows n or "
                            "columns t; operands not in cache; GFLOP/s):\n",
                            t == MRT_F64 ? "float64" : "float32");
                fprintf(f, "%s n=%lld %.4g", any++ ? "," : " ", (long long)g->n,
                        g->flops / 1e9);
            }
            if (any)
                fprintf(f, "  (%s)\n", mrt_gemm_form_name((mrt_gemm_form)form));
        }
    for (int t = MRT_F32; t <= MRT_F64; t++)
        for (int side = MRT_GEMM_THIN_M; side < MRT_GEMM_THIN_COUNT; side++) {
            int any = 0;
            for (int i = 0; i < p->ngemm; i++) {
                const mrt_gemm_row *g = &p->gemm[i];
                if (g->dtype != t || g->thin != side)
                    continue;
                if (!any++)
                    fprintf(f, "GEMM %s, %s short, the others %lld:",
                            t == MRT_F64 ? "float64" : "float32",
                            mrt_gemm_thin_name((mrt_gemm_thin)side),
                            (long long)g->other);
                fprintf(f, "%s %s=%lld %.4g", any > 1 ? "," : "",
                        mrt_gemm_thin_name((mrt_gemm_thin)side),
                        (long long)g->n, g->flops / 1e9);
            }
            if (any)
                fputc('\n', f);
        }
    for (int t = MRT_F32; t <= MRT_F64; t++) {
        int any = 0;
        for (int i = 0; i < p->nmap; i++) {
            const mrt_map_row *r = &p->map[i];
            if (r->dtype != t)
                continue;
            if (!any++)
                fprintf(f, "maps (ns per %s element, by shard size):\n",
                        t == MRT_F64 ? "float64" : "float32");
            /* rows of one function and type are next to each other */
            int first = i == 0 || r[-1].dtype != t || strcmp(r->fn, r[-1].fn);
            int last = i + 1 == p->nmap || r[1].dtype != t ||
                       strcmp(r->fn, r[1].fn);
            if (first)
                fprintf(f, "  %-12s", r->fn);
            fprintf(f, " %lld: %.3g%s", (long long)r->elements,
                    r->s_per_elem * 1e9, last ? "\n" : ",");
        }
    }
}
