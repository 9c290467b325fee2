/*
 * kernel_plan.c — plans the local einsum kernel: C = einsum(A, B) on one
 * rank's dense row-major buffers, as batched matrix products.  Pure: the
 * executor (kernels/kernel.c) runs the plan with BLIS; the planner calls
 * mrt_einsum_workspace to model each rank's peak memory.
 *
 * The dims are classified (ops/classify.c) into batch, M, N, K, sum_a and
 * sum_b; dims of extent 1 are dropped at once, since they move nothing.
 * Each product is then one gemm per batch index:
 *     C[b] (M x N) = A[b] (M x K) * B[b] (K x N),   alpha = 1, beta = 0,
 * where each operand is seen as a matrix through general strides
 * (rs, cs) and each batch dim through its own stride.
 *
 * Folding rule.  An operand is used in place, with no copy, when
 *   (1) each of its two matrix groups (A: M and K; B: K and N; C: M and
 *       N) *folds*: the group's dims are adjacent in the operand's
 *       storage order (batch dims may sit anywhere around them), so the
 *       group is one index of extent prod(ext) and stride = the stride of
 *       its innermost dim;
 *   (2) its dims of each group are in the same relative order as in the
 *       other operand sharing the group, when that one is in place too
 *       (both must enumerate, say, K = (b, c) the same way); and
 *   (3) it is an input with no dims to sum away.
 * Dims of extent 1 are ignored throughout, so [m][1][k] still folds.
 * Any operand may be copied instead: an input is packed (permuted, and
 * reduced over its sum dims in the same pass) into the workspace as a
 * dense [batch][rows][cols] block, a copied C is computed there as
 * [batch][M][N] and then permuted into C.  A copied operand takes each
 * group's order from the in-place operand sharing it (or the classifier's
 * order if there is none), so it always fits.  Of the eight choices of
 * which operands to copy, the planner takes the feasible one that copies
 * the fewest elements (ties: fewer copies).  Examples: a plain or
 * transposed matmul, and "b h q d, b h k d -> b h q k", copy nothing;
 * "a b c, c b d -> a d" copies the smaller input, since K is (b, c) in
 * one and (c, b) in the other.
 *
 * BLIS's grain.  One more copy is made for speed, not for fit: BLIS 0.9
 * runs a float32 product whose A is row-stored (column stride 1) and B
 * column-stored (row stride 1) through the dot-product kernels of its
 * small-matrix path, measured at 0.6-0.8 times the speed of the same
 * product with B row-stored (float64's keep up: the einsum below runs at
 * 1.07-1.17 times the reference in float64, uncopied).
 * "b h q d, b h k d -> b h q k" is such a product: K = d is the unit
 * stride of both inputs.  So in float32, when the plan would hand BLIS
 * that pair on its small-matrix path (BLIS_GRAIN_* below), B is copied
 * too, row-stored, *one batch index at a time*: the executor packs the
 * batch index's K x N block into one reused block of the workspace just
 * before its gemm, so the copy is read from memory once (as the gemm
 * would read B anyway) and the gemm finds it in cache.  Only when M is
 * large enough for the copy (K*N moves) to be small beside the product
 * (2*M*N*K flops); the limits are measured, below.
 *
 * Workspace: the sum over the copied operands of their packed sizes,
 *     A': batch*M*K,  B': batch*K*N (about K*N when copied one batch
 *     index at a time: its row stride may be padded),  C': batch*M*N
 *     elements,
 * laid out A', B', C' back to back (0 bytes when nothing is copied, and
 * always 0 for one input).  mrt_einsum_workspace and the kernel run the
 * same mrt_kplan_make, so the two always agree.
 *
 * With one input, C is a permuted sum of A: a single strided pass
 * (kernels/kernel_pack.c) with no product and no workspace.
 */
#include "kernel_plan.h"

#include <assert.h>
#include <string.h>

#include "checked.h"

enum { NOPS = MRT_KOP_COUNT, NGROUPS = MRT_KGROUP_COUNT };

/* BLIS's grain (above).  B is copied only on BLIS 0.9's small-matrix
 * path, which it takes for float32 when M < 512, N < 200 or K < 240 (the
 * thresholds BLIS reports for its zen3 family; other families may draw
 * the line elsewhere, and there a product near it may be copied for
 * nothing, at a cost of a few percent, or left uncopied), and only when
 * M is large enough to pay for the copy: 32 when the copied block (K x N)
 * fits in BLIS_GRAIN_CACHE bytes and is read back from cache, 128 when it
 * does not (measured: M = 16 and 32 with a 4 MiB block lost 10-40%;
 * M = 32 with a 64 KiB one ran 1.5 times as fast).  The block's row stride is padded by one cache line when it is a
 * multiple of BLIS_GRAIN_ALIAS bytes, so its rows do not all fall in the
 * same cache sets (N = 1024 float32: 55 GFLOP/s padded, 30 not). */
#define BLIS_SUP_MT 512
#define BLIS_SUP_NT 200
#define BLIS_SUP_KT 240
#define BLIS_GRAIN_MIN_M_CACHED 32
#define BLIS_GRAIN_MIN_M 128
#define BLIS_GRAIN_CACHE (256 << 10)
#define BLIS_GRAIN_ALIAS 1024
#define CACHE_LINE 64

/* The rows and columns group of each operand's matrix. */
static const int op_group[NOPS][2] = {
    [MRT_KOP_A] = {MRT_KGROUP_M, MRT_KGROUP_K},
    [MRT_KOP_B] = {MRT_KGROUP_K, MRT_KGROUP_N},
    [MRT_KOP_C] = {MRT_KGROUP_M, MRT_KGROUP_N}};
static const mrt_idx_class group_class[NGROUPS] = {[MRT_KGROUP_M] = MRT_IDX_M,
                                                   [MRT_KGROUP_N] = MRT_IDX_N,
                                                   [MRT_KGROUP_K] = MRT_IDX_K};

static void load_op(mrt_kop *x, const mrt_kview *v)
{
    int64_t stride[MRT_MAX_DIMS], s = 1;
    for (int i = v->ndims - 1; i >= 0; i--) {
        stride[i] = s;
        s *= v->ext[i];
    }
    memset(x, 0, sizeof *x);
    for (int i = 0; i < v->ndims; i++) {
        if (v->ext[i] == 1)
            continue;
        x->dim[x->nd] = v->dim[i];
        x->ext[x->nd] = v->ext[i];
        x->stride[x->nd] = stride[i];
        x->nd++;
    }
}

static int pos_of(const mrt_kop *x, int dim)
{
    for (int i = 0; i < x->nd; i++)
        if (x->dim[i] == dim)
            return i;
    return -1;
}

static int in_dims(const mrt_kdims *d, int dim)
{
    for (int i = 0; i < d->n; i++)
        if (d->dim[i] == dim)
            return 1;
    return 0;
}

/* The dims of class c with extent > 1, in the classifier's order. */
static void load_dims(mrt_kdims *d, const mrt_einsum_class *k, mrt_idx_class c)
{
    d->n = 0;
    d->size = 1;
    for (int i = 0; i < k->n[c]; i++) {
        if (k->ext[c][i] == 1)
            continue;
        d->dim[d->n] = k->dim[c][i];
        d->ext[d->n++] = k->ext[c][i];
        d->size *= k->ext[c][i];
    }
}

/* Group g's dims in x's storage order; returns whether they fold. */
static int mem_order(const mrt_kop *x, const mrt_kdims *g, mrt_kdims *out)
{
    int first = -1, last = -1;
    out->n = 0;
    out->size = g->size;
    for (int i = 0; i < x->nd; i++) {
        if (!in_dims(g, x->dim[i]))
            continue;
        if (first < 0)
            first = i;
        last = i;
        out->dim[out->n] = x->dim[i];
        out->ext[out->n++] = x->ext[i];
    }
    return out->n == 0 || last - first + 1 == out->n;
}

static int same_order(const mrt_kdims *a, const mrt_kdims *b)
{
    return a->n == b->n && !memcmp(a->dim, b->dim, sizeof(int) * (size_t)a->n);
}

/* Slot (0: rows, 1: cols) of group g in operand x, or -1. */
static int slot(int x, int g)
{
    return op_group[x][0] == g ? 0 : op_group[x][1] == g ? 1 : -1;
}

/* Whether copying the operands in mask `copy` (bit x) leaves the rest
 * usable in place. */
static int feasible(const mrt_kplan *p, unsigned copy)
{
    for (int x = 0; x < NOPS; x++)
        if (!(copy >> x & 1) &&
            (!p->op[x].folds || (x != MRT_KOP_C && p->sums[x])))
            return 0;
    for (int g = 0; g < NGROUPS; g++) {
        const mrt_kdims *first = NULL;
        for (int x = 0; x < NOPS; x++) {
            int s = slot(x, g);
            if (s < 0 || copy >> x & 1)
                continue;
            if (first && !same_order(first, &p->op[x].mem[s]))
                return 0;
            first = &p->op[x].mem[s];
        }
    }
    return 1;
}

static int64_t packed_elems(const mrt_kplan *p, int x)
{
    return p->batch.size * p->group[op_group[x][0]].size *
           p->group[op_group[x][1]].size;
}

/* The feasible set of copies moving the fewest elements. */
static void choose_copies(mrt_kplan *p)
{
    unsigned best = (1u << NOPS) - 1; /* copying all is always feasible */
    int64_t best_cost = INT64_MAX;
    int best_n = NOPS + 1;
    for (unsigned copy = 0; copy < 1u << NOPS; copy++) {
        if (!feasible(p, copy))
            continue;
        int64_t cost = 0;
        int n = 0;
        for (int x = 0; x < NOPS; x++)
            if (copy >> x & 1)
                cost += packed_elems(p, x), n++;
        if (cost < best_cost || (cost == best_cost && n < best_n))
            best = copy, best_cost = cost, best_n = n;
    }
    for (int x = 0; x < NOPS; x++)
        p->op[x].copy = best >> x & 1;
}

/* Each group takes the order of an in-place operand holding it. */
static void choose_orders(mrt_kplan *p)
{
    for (int g = 0; g < NGROUPS; g++)
        for (int x = 0; x < NOPS; x++)
            if (slot(x, g) >= 0 && !p->op[x].copy) {
                p->group[g] = p->op[x].mem[slot(x, g)];
                break;
            }
}

/* Strides of x as the gemm reads it: its own in place, else those of a
 * dense [batch][rows][cols] block (0 for dims summed away), or, copied
 * one batch index at a time, of one dense [rows][cols] block (0 for the
 * batch dims too, so every gemm reads the same block). */
static void set_mstrides(mrt_kplan *p, int x, int es)
{
    mrt_kop *o = &p->op[x];
    if (!o->copy) {
        memcpy(o->mstride, o->stride, sizeof o->stride);
        return;
    }
    memset(o->mstride, 0, sizeof o->mstride);
    const mrt_kdims *inner_first[3] = {&p->group[op_group[x][1]],
                                       &p->group[op_group[x][0]], &p->batch};
    int64_t s = 1;
    for (int l = 0; l < (o->slice ? 2 : 3); l++) {
        for (int j = inner_first[l]->n - 1; j >= 0; j--) {
            int i = pos_of(o, inner_first[l]->dim[j]);
            assert(i >= 0);
            o->mstride[i] = s;
            s *= inner_first[l]->ext[j];
        }
        if (o->slice && l == 0 && s > 1 && s * es % BLIS_GRAIN_ALIAS == 0)
            s += CACHE_LINE / es; /* the row stride, padded */
    }
    o->ws_off = p->ws_elems;
    p->ws_elems += s;
    if (!o->slice)
        return;
    mrt_kslice *sl = &o->sl;
    sl->nd = 0;
    for (int i = 0; i < o->nd; i++)
        if (!in_dims(&p->batch, o->dim[i])) {
            sl->ext[sl->nd] = o->ext[i];
            sl->ss[sl->nd] = o->stride[i];
            sl->ds[sl->nd++] = o->mstride[i];
        }
    for (int j = 0; j < p->batch.n; j++)
        sl->bs[j] = o->stride[pos_of(o, p->batch.dim[j])];
}

/* A group's stride in x's gemm view: that of its innermost dim. */
static int64_t group_stride(const mrt_kop *o, const mrt_kdims *g)
{
    return g->n ? o->mstride[pos_of(o, g->dim[g->n - 1])] : 1;
}

static void set_matrix(mrt_kplan *p, int x)
{
    mrt_kop *o = &p->op[x];
    const mrt_kdims *rg = &p->group[op_group[x][0]];
    const mrt_kdims *cg = &p->group[op_group[x][1]];
    mrt_kmat *m = &o->mat;
    m->rows = rg->size, m->cols = cg->size;
    m->rs = group_stride(o, rg), m->cs = group_stride(o, cg);
    for (int j = 0; j < p->batch.n; j++)
        m->bs[j] = o->mstride[pos_of(o, p->batch.dim[j])];
}

/* Every operand's strides and matrix view, and the workspace. */
static void set_views(mrt_kplan *p, mrt_dtype t)
{
    p->ws_elems = 0;
    for (int x = 0; x < NOPS; x++)
        set_mstrides(p, x, mrt_dtype_size(t));
    for (int x = 0; x < NOPS; x++)
        set_matrix(p, x);
}

void mrt_kplan_blis_strides(int64_t rows, int64_t cols, int64_t *rs,
                            int64_t *cs)
{
    if (rows == 1)
        *rs = cols * *cs;
    if (cols == 1)
        *cs = rows * *rs;
}

/* Whether the planned gemm is against BLIS's grain (above): float32, A
 * row-stored and B column-stored as BLIS sees them (it calls a matrix
 * column-stored when its row stride is 1, row-stored when only its
 * column stride is), C not general, on the small-matrix path, with M
 * large enough to pay for copying B. */
static int against_grain(mrt_dtype t, const mrt_kplan *p)
{
    if (t != MRT_F32 || p->op[MRT_KOP_B].copy)
        return 0;
    mrt_kmat a = p->op[MRT_KOP_A].mat, b = p->op[MRT_KOP_B].mat,
             c = p->op[MRT_KOP_C].mat;
    mrt_kplan_blis_strides(a.rows, a.cols, &a.rs, &a.cs);
    mrt_kplan_blis_strides(b.rows, b.cols, &b.rs, &b.cs);
    mrt_kplan_blis_strides(c.rows, c.cols, &c.rs, &c.cs);
    int64_t m = c.rows, n = c.cols, k = a.cols;
    int64_t min_m = k * n * mrt_dtype_size(t) <= BLIS_GRAIN_CACHE
                        ? BLIS_GRAIN_MIN_M_CACHED
                        : BLIS_GRAIN_MIN_M;
    /* N > 1: a K x 1 block with unit row stride is column-stored to
     * BLIS however it is laid out. */
    return a.rs != 1 && a.cs == 1 && b.rs == 1 && (c.rs == 1 || c.cs == 1) &&
           n > 1 && m >= min_m &&
           (m < BLIS_SUP_MT || n < BLIS_SUP_NT || k < BLIS_SUP_KT);
}

/* One input: C = A permuted, summed over the dims C lacks. */
static void plan_permute_sum(mrt_kplan *p, const mrt_kview *a,
                             const mrt_kview *c)
{
    mrt_kop *x = &p->op[MRT_KOP_A], *y = &p->op[MRT_KOP_C];
    load_op(x, a);
    load_op(y, c);
    for (int i = 0; i < x->nd; i++) {
        int j = pos_of(y, x->dim[i]);
        x->mstride[i] = j >= 0 ? y->stride[j] : 0;
    }
    memcpy(y->mstride, y->stride, sizeof y->stride);
}

void mrt_kplan_make(mrt_dtype t, const mrt_kview *a, const mrt_kview *b,
                    const mrt_kview *c, mrt_kplan *p)
{
    mrt_einsum_class k;
    mrt_status st = mrt_einsum_classify(a, b, c, &k, NULL);
    assert(st == MRT_OK);
    (void)st;
    memset(p, 0, sizeof *p);
    p->ninputs = b ? 2 : 1;
    if (!b) {
        plan_permute_sum(p, a, c);
        return;
    }
    const mrt_kview *v[NOPS] = {a, b, c};
    for (int x = 0; x < NOPS; x++)
        load_op(&p->op[x], v[x]);
    load_dims(&p->batch, &k, MRT_IDX_BATCH);
    for (int g = 0; g < NGROUPS; g++)
        load_dims(&p->group[g], &k, group_class[g]);
    mrt_kdims sa, sb;
    load_dims(&sa, &k, MRT_IDX_SUM_A);
    load_dims(&sb, &k, MRT_IDX_SUM_B);
    p->sums[MRT_KOP_A] = sa.n > 0;
    p->sums[MRT_KOP_B] = sb.n > 0;
    for (int x = 0; x < NOPS; x++) {
        mrt_kop *o = &p->op[x];
        o->folds = mem_order(o, &p->group[op_group[x][0]], &o->mem[0]) &
                   mem_order(o, &p->group[op_group[x][1]], &o->mem[1]);
    }
    choose_copies(p);
    choose_orders(p);
    set_views(p, t);
    if (against_grain(t, p)) {
        p->op[MRT_KOP_B].copy = p->op[MRT_KOP_B].slice = 1;
        set_views(p, t);
    }
}

size_t mrt_einsum_workspace(mrt_dtype t, const mrt_kview *a, const mrt_kview *b,
                            const mrt_kview *c)
{
    if (!b)
        return 0;
    mrt_kplan p;
    size_t bytes;
    mrt_kplan_make(t, a, b, c, &p);
    if (mrt_checked_size((size_t)p.ws_elems, (size_t)mrt_dtype_size(t), &bytes))
        return SIZE_MAX;
    return bytes;
}
