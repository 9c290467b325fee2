/*
 * calibrate_rates.c — the local rates `calibrate` measures the way a run
 * meets them (docs/calibration.md): the float32 GEMM rate by the form of
 * the operands and the size of the product, and the rate of every
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
 *    them hot).
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
 *    interrupted is not the machine's speed.
 */
#include <assert.h>
#include <blis.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
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

/* ---- products by form ----------------------------------------------- */

typedef struct gemm_job {
    int n, form, count; /* count products of n x n x n in form */
    float *a, *b, *c;   /* the pools */
    size_t sets;        /* operand sets in each pool */
} gemm_job;

static void run_gemms(void *arg)
{
    const gemm_job *j = arg;
    int64_t n = j->n, nn = n * n;
    /* by rows: (rs, cs) = (n, 1); by columns: (1, n) */
    int64_t ars = j->form & 2 ? 1 : n, acs = j->form & 2 ? n : 1;
    int64_t brs = j->form & 1 ? 1 : n, bcs = j->form & 1 ? n : 1;
    float one = 1, zero = 0;
    for (int i = 0; i < j->count; i++) {
        size_t s = (size_t)i % j->sets * (size_t)nn;
        bli_sgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, n, n, n, &one, j->a + s,
                  ars, acs, j->b + s, brs, bcs, &zero, j->c + s, n, 1);
    }
}

void mrt_calib_gemm_rows(MPI_Comm world, const mrt_calib_pools *pl,
                         mrt_profile *p)
{
    static const int full[] = {16, 32, 64, 128, 256, 512, 0};
    static const int quick[] = {16, 64, 256, 0};
    const int *sizes = pl->quick ? quick : full;
    p->ngemm = 0;
    for (int f = 0; f < MRT_GEMM_FORM_COUNT; f++)
        for (int i = 0; sizes[i]; i++) {
            double n = sizes[i], flops = 2 * n * n * n;
            gemm_job j = {sizes[i],
                          f,
                          1,
                          pl->a,
                          pl->b,
                          pl->c,
                          pl->bytes / ((size_t)sizes[i] * sizes[i] * 4)};
            size_work(world, pl->target_s, run_gemms, &j, &j.count);
            double t = mrt_calib_best(world, pl->reps, run_gemms, &j);
            p->gemm[p->ngemm++] = (mrt_gemm_row){
                sizes[i], f, mrt_calib_sig4(flops * j.count / t)};
        }
    /* the peak's product, hot, as the largest nn row */
    p->gemm[p->ngemm++] = (mrt_gemm_row){pl->peak_n, MRT_GEMM_NN,
                                         p->gemm_flops[MRT_F32]};
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
    if (p->ngemm)
        fprintf(f, "GEMM float32 by form (A, B stored by rows n or columns "
                   "t; operands not in cache; GFLOP/s):\n");
    for (int form = 0; form < MRT_GEMM_FORM_COUNT; form++) {
        int any = 0;
        for (int i = 0; i < p->ngemm; i++)
            if (p->gemm[i].form == form) {
                fprintf(f, "%s n=%lld %.4g", any++ ? "," : " ",
                        (long long)p->gemm[i].n, p->gemm[i].flops / 1e9);
            }
        if (any)
            fprintf(f, "  (%s)\n", mrt_gemm_form_name((mrt_gemm_form)form));
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
