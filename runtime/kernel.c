/*
 * kernel.c — the local einsum kernel: C = einsum(A, B) on one rank's
 * dense row-major buffers, as batched matrix products done by BLIS.
 *
 * The dims are classified (ops/classify.c) into batch, M, N, K, sum_a and
 * sum_b; dims of extent 1 are dropped at once, since they move nothing.
 * Each product is then one bli_?gemm per batch index:
 *     C[b] (M x N) = A[b] (M x K) * B[b] (K x N),   alpha = 1, beta = 0,
 * where each operand is seen as a matrix through BLIS's general strides
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
 * which operands to copy, the kernel takes the feasible one that copies
 * the fewest elements (ties: fewer copies).  Examples: a plain or
 * transposed matmul, and "b h q d, b h k d -> b h q k", copy nothing;
 * "a b c, c b d -> a d" copies the smaller input, since K is (b, c) in
 * one and (c, b) in the other.
 *
 * Workspace: the sum over the copied operands of their packed sizes,
 *     A': batch*M*K,  B': batch*K*N,  C': batch*M*N  elements,
 * laid out A', B', C' back to back (0 bytes when nothing is copied, and
 * always 0 for one input).  mrt_kernel_einsum_workspace runs the same
 * planning code as the kernel, so the two always agree.
 *
 * With one input, C is a permuted sum of A: a single strided pass
 * (kernel_pack.c) with no product and no workspace.
 */
#include "kernel.h"

#include <assert.h>
#include <string.h>

#include "kernel_pack.h"

#include <blis.h>

enum { OP_A, OP_B, OP_C, NOPS };
enum { G_M, G_N, G_K, NGROUPS };

/* The rows and columns group of each operand's matrix. */
static const int op_group[NOPS][2] = {
    [OP_A] = {G_M, G_K}, [OP_B] = {G_K, G_N}, [OP_C] = {G_M, G_N}};
static const mrt_idx_class group_class[NGROUPS] = {
    [G_M] = MRT_IDX_M, [G_N] = MRT_IDX_N, [G_K] = MRT_IDX_K};

/* An ordered list of dims (all of extent > 1). */
typedef struct kdims {
    int n;
    int dim[MRT_MAX_DIMS];
    int64_t ext[MRT_MAX_DIMS];
    int64_t size;
} kdims;

/* An operand as the kernel sees it: dims of extent > 1 only. */
typedef struct kop {
    int nd;
    int dim[MRT_MAX_DIMS];
    int64_t ext[MRT_MAX_DIMS];
    int64_t stride[MRT_MAX_DIMS];  /* in the caller's buffer */
    int64_t mstride[MRT_MAX_DIMS]; /* where the gemm reads it; 0: summed */
    kdims mem[2];   /* rows and cols groups in storage order */
    int folds;      /* both groups fold into one stride each */
    int copy;       /* packed into the workspace */
    int64_t ws_off; /* elements into the workspace */
} kop;

typedef struct kplan {
    kop op[NOPS];
    kdims batch;           /* class order */
    kdims group[NGROUPS];  /* the chosen order of M, N and K */
    int sums[2];           /* A / B have dims to sum away */
    int64_t ws_elems;
} kplan;

/* ---- planning ------------------------------------------------------- */

static void load_op(kop *x, const mrt_kview *v)
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

static int pos_of(const kop *x, int dim)
{
    for (int i = 0; i < x->nd; i++)
        if (x->dim[i] == dim)
            return i;
    return -1;
}

static int in_dims(const kdims *d, int dim)
{
    for (int i = 0; i < d->n; i++)
        if (d->dim[i] == dim)
            return 1;
    return 0;
}

/* The dims of class c with extent > 1, in the classifier's order. */
static void load_dims(kdims *d, const mrt_einsum_class *k, mrt_idx_class c)
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
static int mem_order(const kop *x, const kdims *g, kdims *out)
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

static int same_order(const kdims *a, const kdims *b)
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
static int feasible(const kplan *p, unsigned copy)
{
    for (int x = 0; x < NOPS; x++)
        if (!(copy >> x & 1) &&
            (!p->op[x].folds || (x != OP_C && p->sums[x])))
            return 0;
    for (int g = 0; g < NGROUPS; g++) {
        const kdims *first = NULL;
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

static int64_t packed_elems(const kplan *p, int x)
{
    return p->batch.size * p->group[op_group[x][0]].size *
           p->group[op_group[x][1]].size;
}

/* The feasible set of copies moving the fewest elements. */
static void choose_copies(kplan *p)
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
static void choose_orders(kplan *p)
{
    for (int g = 0; g < NGROUPS; g++)
        for (int x = 0; x < NOPS; x++)
            if (slot(x, g) >= 0 && !p->op[x].copy) {
                p->group[g] = p->op[x].mem[slot(x, g)];
                break;
            }
}

/* Strides of x as the gemm reads it: its own in place, else those of a
 * dense [batch][rows][cols] block (0 for dims summed away). */
static void set_mstrides(kplan *p, int x)
{
    kop *o = &p->op[x];
    if (!o->copy) {
        memcpy(o->mstride, o->stride, sizeof o->stride);
        return;
    }
    memset(o->mstride, 0, sizeof o->mstride);
    const kdims *inner_first[3] = {&p->group[op_group[x][1]],
                                   &p->group[op_group[x][0]], &p->batch};
    int64_t s = 1;
    for (int l = 0; l < 3; l++)
        for (int j = inner_first[l]->n - 1; j >= 0; j--) {
            int i = pos_of(o, inner_first[l]->dim[j]);
            assert(i >= 0);
            o->mstride[i] = s;
            s *= inner_first[l]->ext[j];
        }
    o->ws_off = p->ws_elems;
    p->ws_elems += s;
}

static void plan(kplan *p, const mrt_kview *a, const mrt_kview *b,
                 const mrt_kview *c)
{
    mrt_einsum_class k;
    mrt_status st = mrt_einsum_classify(a, b, c, &k, NULL);
    assert(st == MRT_OK);
    (void)st;
    memset(p, 0, sizeof *p);
    const mrt_kview *v[NOPS] = {a, b, c};
    for (int x = 0; x < NOPS; x++)
        load_op(&p->op[x], v[x]);
    load_dims(&p->batch, &k, MRT_IDX_BATCH);
    for (int g = 0; g < NGROUPS; g++)
        load_dims(&p->group[g], &k, group_class[g]);
    kdims sa, sb;
    load_dims(&sa, &k, MRT_IDX_SUM_A);
    load_dims(&sb, &k, MRT_IDX_SUM_B);
    p->sums[OP_A] = sa.n > 0;
    p->sums[OP_B] = sb.n > 0;
    for (int x = 0; x < NOPS; x++) {
        kop *o = &p->op[x];
        o->folds = mem_order(o, &p->group[op_group[x][0]], &o->mem[0]) &
                   mem_order(o, &p->group[op_group[x][1]], &o->mem[1]);
    }
    choose_copies(p);
    choose_orders(p);
    for (int x = 0; x < NOPS; x++)
        set_mstrides(p, x);
}

/* ---- the products --------------------------------------------------- */

/* A group's stride in x's gemm view: that of its innermost dim. */
static int64_t group_stride(const kop *o, const kdims *g)
{
    return g->n ? o->mstride[pos_of(o, g->dim[g->n - 1])] : 1;
}

/* BLIS checks strides even along an extent of 1; give such a dim the
 * stride a dense matrix would have so the check always passes. */
static void blis_strides(int64_t rows, int64_t cols, int64_t *rs,
                         int64_t *cs)
{
    if (rows == 1)
        *rs = cols * *cs;
    if (cols == 1)
        *cs = rows * *rs;
}

typedef struct kmat {
    int64_t rows, cols, rs, cs;
    int64_t bs[MRT_MAX_DIMS]; /* per batch dim */
} kmat;

static void gemm(mrt_dtype t, const kmat mt[NOPS], void *a, void *b,
                 void *c)
{
    const kmat *A = &mt[OP_A], *B = &mt[OP_B], *C = &mt[OP_C];
    if (t == MRT_F64) {
        double one = 1, zero = 0;
        bli_dgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, C->rows, C->cols,
                  A->cols, &one, a, A->rs, A->cs, b, B->rs, B->cs, &zero,
                  c, C->rs, C->cs);
    } else {
        float one = 1, zero = 0;
        bli_sgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, C->rows, C->cols,
                  A->cols, &one, a, A->rs, A->cs, b, B->rs, B->cs, &zero,
                  c, C->rs, C->cs);
    }
}

/* One gemm per batch index, batch dims looped as an odometer. */
static void run_products(mrt_dtype t, const kplan *p, char *base[NOPS])
{
    kmat mt[NOPS];
    for (int x = 0; x < NOPS; x++) {
        const kop *o = &p->op[x];
        const kdims *rg = &p->group[op_group[x][0]];
        const kdims *cg = &p->group[op_group[x][1]];
        kmat *m = &mt[x];
        m->rows = rg->size, m->cols = cg->size;
        m->rs = group_stride(o, rg), m->cs = group_stride(o, cg);
        blis_strides(m->rows, m->cols, &m->rs, &m->cs);
        for (int j = 0; j < p->batch.n; j++)
            m->bs[j] = o->mstride[pos_of(o, p->batch.dim[j])];
    }
    int64_t idx[MRT_MAX_DIMS] = {0}, off[NOPS] = {0};
    int es = mrt_dtype_size(t);
    for (;;) {
        gemm(t, mt, base[OP_A] + off[OP_A] * es, base[OP_B] + off[OP_B] * es,
             base[OP_C] + off[OP_C] * es);
        int j = p->batch.n - 1;
        for (; j >= 0; j--) {
            for (int x = 0; x < NOPS; x++)
                off[x] += mt[x].bs[j];
            if (++idx[j] < p->batch.ext[j])
                break;
            for (int x = 0; x < NOPS; x++)
                off[x] -= mt[x].bs[j] * p->batch.ext[j];
            idx[j] = 0;
        }
        if (j < 0)
            return;
    }
}

/* ---- entry points --------------------------------------------------- */

/* One input: C = A permuted, summed over the dims C lacks. */
static void permute_sum(mrt_dtype t, const mrt_kview *a, const mrt_kview *c)
{
    mrt_einsum_class k;
    mrt_status st = mrt_einsum_classify(a, NULL, c, &k, NULL);
    assert(st == MRT_OK);
    (void)st;
    kop x, y;
    load_op(&x, a);
    load_op(&y, c);
    int64_t ds[MRT_MAX_DIMS];
    for (int i = 0; i < x.nd; i++) {
        int j = pos_of(&y, x.dim[i]);
        ds[i] = j >= 0 ? y.stride[j] : 0;
    }
    mrt_kernel_pack(t, x.nd, x.ext, a->data, x.stride, c->data, ds);
}

size_t mrt_kernel_einsum_workspace(mrt_dtype t, const mrt_kview *a,
                                   const mrt_kview *b, const mrt_kview *c)
{
    if (!b)
        return 0;
    kplan p;
    plan(&p, a, b, c);
    return (size_t)p.ws_elems * (size_t)mrt_dtype_size(t);
}

void mrt_kernel_einsum(mrt_dtype t, const mrt_kview *a, const mrt_kview *b,
                       const mrt_kview *c, void *workspace)
{
    if (!b) {
        permute_sum(t, a, c);
        return;
    }
    kplan p;
    plan(&p, a, b, c);
    const mrt_kview *v[NOPS] = {a, b, c};
    int es = mrt_dtype_size(t);
    char *base[NOPS];
    for (int x = 0; x < NOPS; x++) {
        const kop *o = &p.op[x];
        base[x] = o->copy ? (char *)workspace + o->ws_off * es
                          : (char *)v[x]->data;
        if (o->copy && x != OP_C)
            mrt_kernel_pack(t, o->nd, o->ext, v[x]->data, o->stride,
                            base[x], o->mstride);
    }
    run_products(t, &p, base);
    const kop *o = &p.op[OP_C];
    if (o->copy)
        mrt_kernel_pack(t, o->nd, o->ext, base[OP_C], o->mstride, c->data,
                        o->stride);
}

void mrt_kernel_init(void) { bli_thread_set_num_threads(1); }
