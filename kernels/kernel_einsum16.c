/*
 * kernel_einsum16.c — the local einsum of 16-bit operands: C = einsum(A,
 * B) where any of A, B and C is bfloat16 or float16 (the others
 * float32), computed in float32 by BLIS's sgemm.
 *
 * Converting whole operands around the float32 kernel costs three passes
 * over memory, with the float32 copies written out and read back: at
 * 1024 square, some 15% of the sgemm.  Here the product runs over panels
 * of K (and of N when C is wide), in the order BLIS blocks its own
 * loops: each panel of A and of B is widened into a cache-sized float32
 * block just before the sgemm that reads it, C accumulates in float32
 * (beta 1 after the first panel), and in the last panel of K each block
 * of MC rows of C is narrowed, rounded to nearest even, right after the
 * sgemm that completes it, while it is still in cache.  BLIS does every
 * multiply; the result is the float32 kernel's, rounded once.
 *
 * It applies when the float32 plan of the shapes (mrt_kplan) copies no
 * operand, so that every gemm reads the operands in place through
 * strides; others convert whole operands around mrt_kernel_einsum
 * (runtime/widen.c).  Every panel is a block of one operand at one batch
 * index, so the workspace is at most the float32 copies of the 16-bit
 * operands that the planner counts (ops/step_widen.c).
 */
#include "kernel.h"

#include "kernel_plan.h"

#include <blis.h>
#include <string.h>

/* Panel sizes, in elements.  KC is BLIS's own blocking of K for sgemm
 * (skx's: 384), so that each sgemm here is one pass of BLIS's K loop:
 * it packs its B panel once and updates C once, as one big sgemm would.
 * Measured on an AMD EPYC with skx kernels, idle, 4 runs of
 * bench_kernel's bf16 rows: 0.92-0.97 of sgemm at 2048 against
 * 0.89-0.93 with a KC of 256 (8 updates of C instead of 6).  NC: wide
 * enough that C is one column block at the sizes of a shard.  MC rows of
 * C stay in L2 between the last panel's sgemm and the narrowing. */
enum { NC = 4096, MC = 256 };

static int64_t kc_blocking(void)
{
    dim_t kc = bli_cntx_get_blksz_def_dt(BLIS_FLOAT, BLIS_KC,
                                         bli_gks_query_cntx());
    return kc > 0 ? (int64_t)kc : 256;
}

enum { OP_A = MRT_KOP_A, OP_B = MRT_KOP_B, OP_C = MRT_KOP_C, NOPS = 3 };

/* An operand at one batch index: its type and strides, in elements;
 * row: its panels row-stored whatever its own strides. */
typedef struct mat16 {
    mrt_dtype t;
    char *data;
    int64_t rs, cs;
    int row;
} mat16;

/* A float32 view of a block, for one sgemm. */
typedef struct fview {
    float *data;
    int64_t rs, cs;
} fview;

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static char *block_at(const mat16 *x, int64_t r0, int64_t c0)
{
    return x->data + (r0 * x->rs + c0 * x->cs) * mrt_dtype_size(x->t);
}

/* x's rows x cols block at (r0, c0) as float32: x itself when float32,
 * else buf, dense, with unit stride along the dim where x has it (rows
 * by default, and always when row), widened when fill. */
static fview as_f32(const mat16 *x, int64_t r0, int64_t c0, int64_t rows,
                    int64_t cols, float *buf, int fill, int row)
{
    if (x->t == MRT_F32)
        return (fview){(float *)block_at(x, r0, c0), x->rs, x->cs};
    fview v = {buf, cols, 1};
    if (x->rs == 1 && x->cs != 1 && !row)
        v.rs = 1, v.cs = rows;
    if (fill)
        mrt_kernel_convert2d(MRT_F32, buf, v.rs, v.cs, x->t,
                             block_at(x, r0, c0), x->rs, x->cs, rows, cols);
    return v;
}

/* c = a b + beta c (m x n, inner k); gemv for one column, as kernel.c
 * (BLIS 0.9's sgemm with N = 1 may read past B). */
static void sgemm(int64_t m, int64_t n, int64_t k, fview a, fview b, float beta,
                  fview c)
{
    mrt_kplan_blis_strides(m, k, &a.rs, &a.cs);
    mrt_kplan_blis_strides(k, n, &b.rs, &b.cs);
    mrt_kplan_blis_strides(m, n, &c.rs, &c.cs);
    float one = 1;
    if (n == 1)
        bli_sgemv(BLIS_NO_TRANSPOSE, BLIS_NO_CONJUGATE, m, k, &one, a.data,
                  a.rs, a.cs, b.data, b.rs, &beta, c.data, c.rs);
    else
        bli_sgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, m, n, k, &one, a.data,
                  a.rs, a.cs, b.data, b.rs, b.cs, &beta, c.data, c.rs, c.cs);
}

static fview offset(fview v, int64_t r0)
{
    v.data += r0 * v.rs;
    return v;
}

/* The panels' float32 blocks in the workspace, each 64-byte aligned. */
typedef struct panels {
    float *a, *b, *c;
} panels;

static size_t round64(size_t bytes)
{
    return (bytes + 63) & ~(size_t)63;
}

/* The bytes of the panels of an m x n x k product (per batch index),
 * and, with ws, where they lie. */
static size_t panels_bytes(const mat16 x[NOPS], int64_t m, int64_t n, int64_t k,
                           char *ws, panels *pn)
{
    int64_t kc = min64(kc_blocking(), k), nc = min64(NC, n);
    int64_t elems[NOPS] = {m * kc, kc * nc, m * nc};
    float **at[NOPS] = {&pn->a, &pn->b, &pn->c};
    size_t bytes = 0;
    for (int i = 0; i < NOPS; i++) {
        if (ws)
            *at[i] = (float *)(ws + bytes);
        if (x[i].t != MRT_F32)
            bytes += round64((size_t)elems[i] * sizeof(float));
    }
    return bytes;
}

/* The last panel of K for C's columns j .. j + nb: the sgemm in blocks of
 * MC rows, each narrowed into C while in cache. */
static void last_panel(const mat16 *C, int64_t j, int64_t m, int64_t nb,
                       int64_t kb, fview a, fview b, float beta, fview c)
{
    for (int64_t i = 0; i < m; i += MC) {
        int64_t mb = min64(MC, m - i);
        fview ci = offset(c, i);
        sgemm(mb, nb, kb, offset(a, i), b, beta, ci);
        mrt_kernel_convert2d(C->t, block_at(C, i, j), C->rs, C->cs, MRT_F32,
                             ci.data, ci.rs, ci.cs, mb, nb);
    }
}

/* One product, C (m x n) = A (m x k) B (k x n), over panels. */
static void product(const mat16 x[NOPS], int64_t m, int64_t n, int64_t k,
                    const panels *pn)
{
    const mat16 *A = &x[OP_A], *B = &x[OP_B], *C = &x[OP_C];
    for (int64_t j = 0; j < n; j += NC) {
        int64_t nb = min64(NC, n - j);
        fview c = as_f32(C, 0, j, m, nb, pn->c, 0, C->row);
        for (int64_t p = 0, kc = kc_blocking(); p < k; p += kc) {
            int64_t kb = min64(kc, k - p);
            fview a = as_f32(A, 0, p, m, kb, pn->a, 1, A->row);
            fview b = as_f32(B, p, j, kb, nb, pn->b, 1, B->row);
            float beta = p ? 1.0f : 0.0f;
            if (p + kb == k && C->t != MRT_F32)
                last_panel(C, j, m, nb, kb, a, b, beta, c);
            else
                sgemm(m, nb, kb, a, b, beta, c);
        }
    }
}

/* The plan of the shapes, and whether it reads every operand in place.
 * The plan is float64's, the dims' folding alone: float32's also copies
 * a column-stored B against the grain of BLIS's small-matrix path (ops/
 * kernel_plan.c), which a 16-bit B needs no copy for: its panels are
 * then widened row-stored (*b_row). */
static int plan_in_place(const mrt_dtype t[NOPS], const mrt_kview *a,
                         const mrt_kview *b, const mrt_kview *c, mrt_kplan *p,
                         int *b_row)
{
    mrt_kplan_make(MRT_F64, a, b, c, p);
    if (p->ninputs != 2 || p->op[OP_A].copy || p->op[OP_B].copy ||
        p->op[OP_C].copy)
        return 0;
    mrt_kplan f;
    mrt_kplan_make(MRT_F32, a, b, c, &f);
    *b_row = f.op[OP_B].copy;
    return !*b_row || t[OP_B] != MRT_F32;
}

/* The operands at batch index 0, and the product's m, n, k. */
static void load(const mrt_kplan *p, const mrt_dtype t[NOPS],
                 const mrt_kview *v[NOPS], int b_row, mat16 x[NOPS],
                 int64_t mnk[3])
{
    for (int i = 0; i < NOPS; i++)
        x[i] = (mat16){t[i], v[i]->data, p->op[i].mat.rs, p->op[i].mat.cs,
                       i == OP_B && b_row};
    mnk[0] = p->op[OP_C].mat.rows;
    mnk[1] = p->op[OP_C].mat.cols;
    mnk[2] = p->op[OP_A].mat.cols;
}

size_t mrt_einsum16_workspace(const mrt_dtype t[3], const mrt_kview *a,
                              const mrt_kview *b, const mrt_kview *c)
{
    mrt_kplan p;
    int b_row;
    if (!plan_in_place(t, a, b, c, &p, &b_row))
        return 0;
    const mrt_kview *v[NOPS] = {a, b, c};
    mat16 x[NOPS];
    int64_t mnk[3];
    load(&p, t, v, b_row, x, mnk);
    return panels_bytes(x, mnk[0], mnk[1], mnk[2], NULL, &(panels){0});
}

int mrt_kernel_einsum16(const mrt_dtype t[3], const mrt_kview *a,
                        const mrt_kview *b, const mrt_kview *c, void *workspace)
{
    mrt_kplan p;
    int b_row;
    if (!plan_in_place(t, a, b, c, &p, &b_row))
        return 0;
    const mrt_kview *v[NOPS] = {a, b, c};
    mat16 x0[NOPS], x[NOPS];
    int64_t mnk[3];
    load(&p, t, v, b_row, x0, mnk);
    panels pn;
    panels_bytes(x0, mnk[0], mnk[1], mnk[2], workspace, &pn);
    for (int64_t bi = 0; bi < p.batch.size; bi++) {
        /* batch index bi's offsets, its digits the last dim fastest */
        memcpy(x, x0, sizeof x);
        for (int64_t j = p.batch.n - 1, rem = bi; j >= 0; j--) {
            int64_t at = rem % p.batch.ext[j];
            rem /= p.batch.ext[j];
            for (int i = 0; i < NOPS; i++)
                x[i].data += at * p.op[i].mat.bs[j] * mrt_dtype_size(t[i]);
        }
        product(x, mnk[0], mnk[1], mnk[2], &pn);
    }
    return 1;
}
