/*
 * kernel.c — target 1, local contraction efficiency: the local einsum
 * kernel (mrt_kernel_einsum: any packing or permutation plus BLIS, with
 * its workspace from mrt_einsum_workspace allocated once) against plain
 * BLIS gemm calls of the same M, N, K on operands already arranged for
 * them (row-major A: M x K, B: K x N, C: M x N; one call per batch
 * index, as the kernel also makes), in the same memory.
 *
 * Every operand of 4 MiB and up.  Repetitions alternate kernel and
 * reference; the figure is the median over back-to-back pairs of BLIS
 * time / kernel time, so 1 means the kernel costs nothing beyond the
 * gemm (goal >= 0.9).
 *
 * The 16-bit rows (bfloat16, float16): a square matmul of 16-bit
 * operands as the runtime runs it (runtime/widen.c ->
 * mrt_kernel_einsum16: A and B widened to float32 a panel at a time, C
 * accumulated in float32 and rounded back to the 16-bit type, every
 * conversion inside the timed call) against BLIS's sgemm of the same
 * sizes on float32 operands holding the same values, in the same
 * process, alternating; so the ratio is what the conversions cost (goal
 * >= 0.9 at 1024 and 2048 square).
 *
 * usage: bench_kernel [REPS [CASE]]   (CASE: only the cases of that name,
 *                                    e.g. "matmul"; "bf16", "f16": the
 *                                    16-bit rows)
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <blis.h>

#include "bench.h"
#include "blis_arch.h"
#include "kernel.h"
#include "kernel_plan.h"

#define SAMPLE_S 0.05 /* seconds per timed sample, at least */

typedef struct operand {
    int nd;
    int dim[MRT_MAX_DIMS];
    int64_t ext[MRT_MAX_DIMS];
    int64_t count;
} operand;

typedef struct bcase {
    const char *name;
    const char *einsum; /* one letter per dim: "ik,kj->ij" */
    const char *sizes;  /* "i1024k1024j1024" */
} bcase;

static const bcase cases[] = {
    {"matmul", "ik,kj->ij", "i1024k1024j1024"},
    {"batched matmul", "bik,bkj->bij", "b16i256k256j256"},
    {"bhqd,bhkd->bhqk", "bhqd,bhkd->bhqk", "b8h8q256k256d64"},
    {"abc,cbd->ad", "abc,cbd->ad", "a1024b32c32d1024"},
    {"tall-skinny M", "ik,kj->ij", "i16384k256j64"},
    {"tall-skinny K (X^T Y)", "ki,kj->ij", "k65536i64j64"},
};

static void operand_parse(operand *o, const char *s, int len,
                          const int64_t ext[26])
{
    memset(o, 0, sizeof *o);
    o->count = 1;
    for (int i = 0; i < len; i++) {
        o->dim[o->nd] = s[i] - 'a';
        o->ext[o->nd] = ext[s[i] - 'a'];
        o->count *= o->ext[o->nd++];
    }
}

static int has(const operand *o, int d)
{
    for (int i = 0; i < o->nd; i++)
        if (o->dim[i] == d)
            return 1;
    return 0;
}

/* The product's sizes: batch count, M, N, K. */
static void sizes_of(const operand *a, const operand *b, const operand *c,
                     int64_t *nb, int64_t *m, int64_t *n, int64_t *k)
{
    *nb = *m = *n = *k = 1;
    for (int i = 0; i < c->nd; i++) {
        int d = c->dim[i];
        if (has(a, d) && has(b, d))
            *nb *= c->ext[i];
        else if (has(a, d))
            *m *= c->ext[i];
        else
            *n *= c->ext[i];
    }
    for (int i = 0; i < a->nd; i++)
        if (has(b, a->dim[i]) && !has(c, a->dim[i]))
            *k *= a->ext[i];
}

static void ref_gemm(mrt_dtype t, int64_t nb, int64_t m, int64_t n, int64_t k,
                     const char *a, const char *b, char *c)
{
    int es = mrt_dtype_size(t);
    for (int64_t x = 0; x < nb; x++) {
        const char *ax = a + x * m * k * es, *bx = b + x * k * n * es;
        char *cx = c + x * m * n * es;
        if (t == MRT_F64) {
            double one = 1, zero = 0;
            bli_dgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, m, n, k, &one,
                      (double *)ax, k, 1, (double *)bx, n, 1, &zero,
                      (double *)cx, n, 1);
        } else {
            float one = 1, zero = 0;
            bli_sgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, m, n, k, &one,
                      (float *)ax, k, 1, (float *)bx, n, 1, &zero, (float *)cx,
                      n, 1);
        }
    }
}

/* The operands of case bc's einsum ("ab,bc->ac"), at its sizes. */
static void case_operands(const bcase *bc, operand *a, operand *b, operand *c)
{
    int64_t ext[26];
    for (int i = 0; i < 26; i++)
        ext[i] = 1;
    for (const char *s = bc->sizes; *s;) {
        int l = *s++ - 'a';
        ext[l] = strtoll(s, (char **)&s, 10);
    }
    const char *comma = strchr(bc->einsum, ','),
               *arrow = strstr(bc->einsum, "->");
    operand_parse(a, bc->einsum, (int)(comma - bc->einsum), ext);
    operand_parse(b, comma + 1, (int)(arrow - comma - 1), ext);
    operand_parse(c, arrow + 2, (int)strlen(arrow + 2), ext);
}

/* Returns 0, or 1 when out of memory. */
static int run_case(const bcase *bc, mrt_dtype t, int reps)
{
    operand a, b, c;
    case_operands(bc, &a, &b, &c);
    int64_t nb, m, n, k;
    sizes_of(&a, &b, &c, &nb, &m, &n, &k);

    size_t es = (size_t)mrt_dtype_size(t);
    mrt_kview va = {a.nd, a.dim, a.ext, NULL}, vb = {b.nd, b.dim, b.ext, NULL},
              vc = {c.nd, c.dim, c.ext, NULL};
    size_t ws_bytes = mrt_einsum_workspace(t, &va, &vb, &vc);
    /* The reference reads and writes the same memory as the kernel, as
     * if it were already arranged (M x K, K x N, M x N per batch index):
     * the values do not matter to the time, and where buffers lie does
     * (in one run of the suite, separate buffers for the reference made
     * identical gemm calls differ by 20%). */
    char *A = malloc((size_t)a.count * es), *B = malloc((size_t)b.count * es),
         *C = malloc((size_t)c.count * es), *W = malloc(ws_bytes + 64);
    char *RA = A, *RB = B, *RC = C;
    double *tk = malloc(2 * (size_t)reps * sizeof *tk), *tb = tk + reps;
    int fail = !A || !B || !C || !W || !tk;
    if (!fail) {
        assert(nb * m * k == a.count && nb * k * n == b.count &&
               nb * m * n == c.count);
        mrt_bench_fill(A, t, a.count, 1);
        mrt_bench_fill(B, t, b.count, 2);
        va.data = A;
        vb.data = B;
        vc.data = C;
        /* Warm both up (first touch of C and the workspace, BLIS's
         * pools), and time enough calls per sample to last SAMPLE_S. */
        double t0 = mrt_bench_now();
        mrt_kernel_einsum(t, &va, &vb, &vc, W);
        ref_gemm(t, nb, m, n, k, RA, RB, RC);
        int calls = (int)(2 * SAMPLE_S / (mrt_bench_now() - t0)) + 1;
        for (int r = 0; r < reps; r++) { /* pairs, in alternating order */
            for (int j = 0; j < 2; j++) {
                t0 = mrt_bench_now();
                for (int i = 0; i < calls; i++)
                    if ((r + j) % 2 == 0)
                        mrt_kernel_einsum(t, &va, &vb, &vc, W);
                    else
                        ref_gemm(t, nb, m, n, k, RA, RB, RC);
                *((r + j) % 2 == 0 ? &tk[r] : &tb[r]) = (mrt_bench_now() - t0) /
                                                        calls;
            }
        }
        double ratio = mrt_bench_median_ratio(tb, tk, reps);
        double mk = mrt_bench_median(tk, reps), mb = mrt_bench_median(tb, reps);
        double flops = 2.0 * (double)nb * (double)m * (double)n * (double)k;
        char name[96];
        snprintf(name, sizeof name, "%s %s", bc->name,
                 t == MRT_F64 ? "f64" : "f32");
        int64_t big = a.count > b.count ? a.count : b.count;
        mrt_bench_result(1, name, ratio, ">= 0.9",
                         "%s batch %lld M %lld N %lld K %lld, largest operand "
                         "%.0f MiB, workspace %.1f MiB; meshrt %.1f GFLOP/s, "
                         "BLIS %.1f GFLOP/s",
                         bc->einsum, (long long)nb, (long long)m, (long long)n,
                         (long long)k, (double)big * (double)es / (1 << 20),
                         (double)ws_bytes / (1 << 20), flops / mk * 1e-9,
                         flops / mb * 1e-9);
    }
    free(A);
    free(B);
    free(C);
    free(W);
    free(tk);
    return fail;
}

/* One 16-bit (type t) square matmul of n: returns 0, or 1 when out of
 * memory. */
static int run_half(mrt_dtype t, int64_t n, int reps)
{
    int dims_a[2] = {0, 1}, dims_b[2] = {1, 2}, dims_c[2] = {0, 2};
    int64_t ext[2] = {n, n};
    size_t nn = (size_t)(n * n);
    mrt_kview va = {2, dims_a, ext, NULL}, vb = {2, dims_b, ext, NULL},
              vc = {2, dims_c, ext, NULL};
    const mrt_dtype ts[3] = {t, t, t};
    size_t ws = mrt_einsum16_workspace(ts, &va, &vb, &vc);
    uint16_t *A = malloc(nn * 2), *B = malloc(nn * 2), *C = malloc(nn * 2);
    float *wa = malloc(3 * nn * sizeof(float)), *wb = wa + nn, *wc = wb + nn;
    char *W = aligned_alloc(64, ws + 64);
    double *tk = malloc(2 * (size_t)reps * sizeof *tk), *tb = tk + reps;
    int fail = !A || !B || !C || !wa || !W || !tk || ws == 0;
    if (!fail) {
        /* the reference's operands: the 16-bit values, widened */
        mrt_bench_fill(wa, MRT_F32, (int64_t)nn, 1);
        mrt_bench_fill(wb, MRT_F32, (int64_t)nn, 2);
        mrt_kernel_convert(t, A, MRT_F32, wa, (int64_t)nn);
        mrt_kernel_convert(t, B, MRT_F32, wb, (int64_t)nn);
        mrt_kernel_convert(MRT_F32, wa, t, A, (int64_t)nn);
        mrt_kernel_convert(MRT_F32, wb, t, B, (int64_t)nn);
        va.data = A;
        vb.data = B;
        vc.data = C;
        for (int r = 0; r < 2 * reps + 1; r++) { /* r = 0 warms up */
            int ours = r % 2;
            double t0 = mrt_bench_now();
            if (ours)
                mrt_kernel_einsum16(ts, &va, &vb, &vc, W);
            else
                ref_gemm(MRT_F32, 1, n, n, n, (char *)wa, (char *)wb,
                         (char *)wc);
            double dt = mrt_bench_now() - t0;
            if (r > 0)
                *(ours ? &tk[(r - 1) / 2] : &tb[(r - 1) / 2]) = dt;
        }
        double ratio = mrt_bench_median_ratio(tb, tk, reps);
        double flops = 2.0 * (double)n * (double)n * (double)n;
        char name[64];
        snprintf(name, sizeof name, "matmul %lld %s", (long long)n,
                 t == MRT_BF16 ? "bf16" : "f16");
        mrt_bench_result(1, name, ratio, ">= 0.9",
                         "ik,kj->ij M N K %lld, %s operands (%.0f MiB each) "
                         "converted in panels around sgemm "
                         "(mrt_kernel_einsum16, workspace %.1f MiB); meshrt "
                         "%.1f GFLOP/s, sgemm %.1f GFLOP/s",
                         (long long)n, mrt_dtype_name(t),
                         (double)nn * 2 / (1 << 20), (double)ws / (1 << 20),
                         flops / mrt_bench_median(tk, reps) * 1e-9,
                         flops / mrt_bench_median(tb, reps) * 1e-9);
    }
    free(A);
    free(B);
    free(C);
    free(wa);
    free(W);
    free(tk);
    return fail;
}

int main(int argc, char **argv)
{
    mrt_blis_select();
    mrt_kernel_init();
    int reps = argc > 1 ? atoi(argv[1]) : 11;
    if (reps < 1 || reps > MRT_BENCH_MAX_REPS)
        reps = 11;
    char fam[128];
    printf("# BLIS kernel family: %s; %d repetitions per case\n",
           mrt_blis_describe(fam, sizeof fam), reps);
    int fail = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int t = MRT_F32; t <= MRT_F64; t++)
            if (argc <= 2 || strcmp(argv[2], cases[i].name) == 0)
                fail |= run_case(&cases[i], (mrt_dtype)t, reps);
    for (int t = MRT_BF16; t <= MRT_F16; t++)
        for (int64_t n = 1024; n <= 2048; n *= 2)
            if (argc <= 2 ||
                strcmp(argv[2], t == MRT_BF16 ? "bf16" : "f16") == 0)
                fail |= run_half((mrt_dtype)t, n, reps);
    bli_finalize();
    if (fail)
        fprintf(stderr, "bench_kernel: out of memory\n");
    return fail;
}
