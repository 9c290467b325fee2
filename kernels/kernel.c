/*
 * kernel.c — the local einsum kernel: C = einsum(A, B) on one rank's
 * dense row-major buffers.  It executes an mrt_kplan (ops/kernel_plan.c,
 * which explains the folding rule and the workspace layout) with BLIS:
 * packs the operands the plan copies (kernel_pack.c), runs one bli_?gemm
 * per batch index, and unpacks a copied C.  An operand the plan copies
 * one batch index at a time (mrt_kop.slice) is packed inside the batch
 * loop, just before each gemm.  With one input, C is a permuted sum of
 * A: a single strided pass, no product.
 */
#include "kernel.h"

#include "blis_arch.h"
#include "kernel_pack.h"
#include "kernel_plan.h"

#include <blis.h>
#if defined(__SSE2__)
#include <pmmintrin.h> /* the flush-to-zero and denormals-are-zero modes */
#endif

enum {
    OP_A = MRT_KOP_A,
    OP_B = MRT_KOP_B,
    OP_C = MRT_KOP_C,
    NOPS = MRT_KOP_COUNT
};

/* ---- the products --------------------------------------------------- */

static void gemm(mrt_dtype t, const mrt_kmat mt[NOPS], void *a, void *b,
                 void *c)
{
    const mrt_kmat *A = &mt[OP_A], *B = &mt[OP_B], *C = &mt[OP_C];
    /* One column: a matrix-vector product.  BLIS 0.9's sgemm with N = 1
     * reads past the end of B (row-stored A, M >= 16, K not a multiple
     * of 16); gemv reads exactly B's K elements. */
    if (C->cols == 1 && t == MRT_F64) {
        double one = 1, zero = 0;
        bli_dgemv(BLIS_NO_TRANSPOSE, BLIS_NO_CONJUGATE, C->rows, A->cols, &one,
                  a, A->rs, A->cs, b, B->rs, &zero, c, C->rs);
        return;
    }
    if (C->cols == 1) {
        float one = 1, zero = 0;
        bli_sgemv(BLIS_NO_TRANSPOSE, BLIS_NO_CONJUGATE, C->rows, A->cols, &one,
                  a, A->rs, A->cs, b, B->rs, &zero, c, C->rs);
        return;
    }
    if (t == MRT_F64) {
        double one = 1, zero = 0;
        bli_dgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, C->rows, C->cols,
                  A->cols, &one, a, A->rs, A->cs, b, B->rs, B->cs, &zero, c,
                  C->rs, C->cs);
    } else {
        float one = 1, zero = 0;
        bli_sgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, C->rows, C->cols,
                  A->cols, &one, a, A->rs, A->cs, b, B->rs, B->cs, &zero, c,
                  C->rs, C->cs);
    }
}

/* One gemm per batch index, batch dims looped as an odometer; src[x] is
 * the caller's buffer of input x, read here when x is copied one batch
 * index at a time (soff: its offset there). */
static void run_products(mrt_dtype t, const mrt_kplan *p, char *base[NOPS],
                         const char *src[NOPS])
{
    mrt_kmat mt[NOPS];
    for (int x = 0; x < NOPS; x++) {
        mt[x] = p->op[x].mat;
        mrt_kplan_blis_strides(mt[x].rows, mt[x].cols, &mt[x].rs, &mt[x].cs);
    }
    int64_t idx[MRT_MAX_DIMS] = {0}, off[NOPS] = {0}, soff[NOPS] = {0};
    int es = mrt_dtype_size(t);
    for (;;) {
        for (int x = 0; x < OP_C; x++) {
            const mrt_kslice *sl = &p->op[x].sl;
            if (p->op[x].slice)
                mrt_kernel_pack(t, sl->nd, sl->ext, src[x] + soff[x] * es,
                                sl->ss, base[x], sl->ds);
        }
        gemm(t, mt, base[OP_A] + off[OP_A] * es, base[OP_B] + off[OP_B] * es,
             base[OP_C] + off[OP_C] * es);
        int j = p->batch.n - 1;
        for (; j >= 0; j--) {
            for (int x = 0; x < NOPS; x++) {
                off[x] += mt[x].bs[j];
                soff[x] += p->op[x].sl.bs[j];
            }
            if (++idx[j] < p->batch.ext[j])
                break;
            for (int x = 0; x < NOPS; x++) {
                off[x] -= mt[x].bs[j] * p->batch.ext[j];
                soff[x] -= p->op[x].sl.bs[j] * p->batch.ext[j];
            }
            idx[j] = 0;
        }
        if (j < 0)
            return;
    }
}

/* ---- entry points --------------------------------------------------- */

void mrt_kernel_einsum(mrt_dtype t, const mrt_kview *a, const mrt_kview *b,
                       const mrt_kview *c, void *workspace)
{
    mrt_kplan p;
    mrt_kplan_make(t, a, b, c, &p);
    if (p.ninputs == 1) {
        const mrt_kop *x = &p.op[OP_A];
        mrt_kernel_pack(t, x->nd, x->ext, a->data, x->stride, c->data,
                        x->mstride);
        return;
    }
    const mrt_kview *v[NOPS] = {a, b, c};
    int es = mrt_dtype_size(t);
    char *base[NOPS];
    const char *src[NOPS];
    for (int x = 0; x < NOPS; x++) {
        const mrt_kop *o = &p.op[x];
        src[x] = v[x]->data;
        base[x] = o->copy ? (char *)workspace + o->ws_off * es
                          : (char *)v[x]->data;
        if (o->copy && !o->slice && x != OP_C)
            mrt_kernel_pack(t, o->nd, o->ext, v[x]->data, o->stride, base[x],
                            o->mstride);
    }
    run_products(t, &p, base, src);
    const mrt_kop *o = &p.op[OP_C];
    if (o->copy)
        mrt_kernel_pack(t, o->nd, o->ext, base[OP_C], o->mstride, c->data,
                        o->stride);
}

/* Subnormal numbers flushed to zero, as results (FTZ) and as operands
 * (DAZ), on the one thread that runs every kernel of a rank.  Training
 * makes them: a softmax probability of 1e-30 times a gradient of 1e-9 is
 * 1e-39.  On x86 each operation that reads or writes one takes a
 * microcode assist, and a BLIS float32 product whose B holds them ran 60
 * times slower here (256 x 1024 x 512: 6.2 ms, 361 ms with B scaled to
 * 1e-36); the weight gradients of examples/blocks.yaml ran 5-12 times
 * their modeled time until this was set, and at it afterwards
 * (docs/calibration.md, round K).  TensorFlow and XLA run their CPU
 * kernels the same way.  A value below FLT_MIN (DBL_MIN) is far below
 * every tolerance --verify uses, so the unsharded reference, which runs
 * in the same process under the same mode, still checks the sharded
 * result.  Elsewhere than x86 the mode is left as it is. */
static void flush_subnormals(void)
{
#if defined(__SSE2__)
    _MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_ON);
    _MM_SET_DENORMALS_ZERO_MODE(_MM_DENORMALS_ZERO_ON);
#endif
}

/* The kernel family first: BLIS fixes it at its first call. */
void mrt_kernel_init(void)
{
    mrt_blis_select();
    bli_thread_set_num_threads(1);
    flush_subnormals();
}

void mrt_kernel_add(mrt_dtype t, int64_t n, const void *x, void *y)
{
    if (mrt_dtype_is_16(t)) {
        mrt_kernel_add16(t, n, x, y);
    } else if (t == MRT_F64) {
        double one = 1;
        bli_daxpyv(BLIS_NO_CONJUGATE, n, &one, (double *)x, 1, y, 1);
    } else {
        float one = 1;
        bli_saxpyv(BLIS_NO_CONJUGATE, n, &one, (float *)x, 1, y, 1);
    }
}
