/*
 * classify.c — the first pass of einsum planning: sort the dims of
 * C = einsum(A, B) into batch, M, N, K, sum_a and sum_b by where they
 * appear (see classify.h), and check that the operands agree.
 *
 * Dims are matched by spec dim id; the operands are tiny (at most
 * MRT_MAX_DIMS dims each), so plain linear scans are the clearest code.
 * Errors are MRT_E_SPEC with no file and no position: the caller knows
 * which op of which spec this was and re-positions the message there.
 */
#include "classify.h"

#include <string.h>

#include "spec.h"

static const char *const class_names[] = {
    [MRT_IDX_BATCH] = "batch", [MRT_IDX_M] = "M",
    [MRT_IDX_N] = "N",         [MRT_IDX_K] = "K",
    [MRT_IDX_SUM_A] = "sum_a", [MRT_IDX_SUM_B] = "sum_b",
};
_Static_assert(sizeof class_names / sizeof class_names[0] ==
                   MRT_IDX_CLASS_COUNT,
               "one name per index class");

const char *mrt_idx_class_name(mrt_idx_class c)
{
    return c >= 0 && c < MRT_IDX_CLASS_COUNT ? class_names[c] : "unknown";
}

static const mrt_mark no_mark = {0, 0};

/* Position of dim in v, or -1 (v may be NULL: the missing input B). */
static int find(const mrt_kview *v, int dim)
{
    if (!v)
        return -1;
    for (int i = 0; i < v->ndims; i++)
        if (v->dim[i] == dim)
            return i;
    return -1;
}

/* Checks one operand on its own: dim count, positive extents, no dim
 * twice. */
static mrt_status check_operand(const mrt_kview *v, const char *what,
                                mrt_error *err)
{
    if (v->ndims < 0 || v->ndims > MRT_MAX_DIMS)
        return mrt_error_set(err, MRT_E_SPEC, NULL, no_mark,
                             "einsum %s has %d dims (at most %d allowed)", what,
                             v->ndims, MRT_MAX_DIMS);
    for (int i = 0; i < v->ndims; i++) {
        if (v->ext[i] < 1)
            return mrt_error_set(err, MRT_E_SPEC, NULL, no_mark,
                                 "einsum %s: dim #%d has extent %lld "
                                 "(extents must be at least 1)",
                                 what, v->dim[i], (long long)v->ext[i]);
        for (int j = 0; j < i; j++)
            if (v->dim[j] == v->dim[i])
                return mrt_error_set(err, MRT_E_SPEC, NULL, no_mark,
                                     "einsum %s: dim #%d appears twice "
                                     "(positions %d and %d)",
                                     what, v->dim[i], j + 1, i + 1);
    }
    return MRT_OK;
}

/* Checks that dim (at position i of x) has the same extent in y. */
static mrt_status check_extent(const mrt_kview *x, const char *xn, int i,
                               const mrt_kview *y, const char *yn,
                               mrt_error *err)
{
    int j = find(y, x->dim[i]);
    if (j < 0 || y->ext[j] == x->ext[i])
        return MRT_OK;
    return mrt_error_set(err, MRT_E_SPEC, NULL, no_mark,
                         "einsum: dim #%d has extent %lld in %s but %lld "
                         "in %s",
                         x->dim[i], (long long)x->ext[i], xn,
                         (long long)y->ext[j], yn);
}

static void add(mrt_einsum_class *k, mrt_idx_class c, int dim, int64_t ext)
{
    k->dim[c][k->n[c]] = dim;
    k->ext[c][k->n[c]] = ext;
    k->n[c]++;
    k->size[c] *= ext;
}

/* The output's dims: batch, M or N by which inputs hold them. */
static mrt_status classify_c(const mrt_kview *a, const mrt_kview *b,
                             const mrt_kview *c, mrt_einsum_class *k,
                             mrt_error *err)
{
    for (int i = 0; i < c->ndims; i++) {
        int ia = find(a, c->dim[i]), ib = find(b, c->dim[i]);
        if (ia < 0 && ib < 0)
            return mrt_error_set(err, MRT_E_SPEC, NULL, no_mark,
                                 "einsum: output dim #%d is in neither "
                                 "input",
                                 c->dim[i]);
        mrt_status st = check_extent(c, "the output", i, a, "input A", err);
        if (!st)
            st = check_extent(c, "the output", i, b, "input B", err);
        if (st)
            return st;
        mrt_idx_class cl = ia >= 0 && ib >= 0 ? MRT_IDX_BATCH
                           : ia >= 0          ? MRT_IDX_M
                                              : MRT_IDX_N;
        add(k, cl, c->dim[i], c->ext[i]);
    }
    return MRT_OK;
}

mrt_status mrt_einsum_classify(const mrt_kview *a, const mrt_kview *b,
                               const mrt_kview *c, mrt_einsum_class *out,
                               mrt_error *err)
{
    mrt_einsum_class k; /* the lists are filled up to n[c] */
    for (int cl = 0; cl < MRT_IDX_CLASS_COUNT; cl++) {
        k.n[cl] = 0;
        k.size[cl] = 1;
    }
    k.ninputs = b ? 2 : 1;
    mrt_status st = check_operand(a, "input A", err);
    if (!st && b)
        st = check_operand(b, "input B", err);
    if (!st)
        st = check_operand(c, "output", err);
    if (!st)
        st = classify_c(a, b, c, &k, err);
    for (int i = 0; !st && i < a->ndims; i++) {
        if (find(c, a->dim[i]) >= 0)
            continue;
        st = check_extent(a, "input A", i, b, "input B", err);
        if (!st)
            add(&k, find(b, a->dim[i]) >= 0 ? MRT_IDX_K : MRT_IDX_SUM_A,
                a->dim[i], a->ext[i]);
    }
    for (int i = 0; !st && b && i < b->ndims; i++)
        if (find(c, b->dim[i]) < 0 && find(a, b->dim[i]) < 0)
            add(&k, MRT_IDX_SUM_B, b->dim[i], b->ext[i]);
    if (st)
        return st;
    /* only what was filled: the lists are 2.6 kB, the planner classifies
     * every einsum it weighs */
    out->ninputs = k.ninputs;
    for (int cl = 0; cl < MRT_IDX_CLASS_COUNT; cl++) {
        out->n[cl] = k.n[cl];
        out->size[cl] = k.size[cl];
        memcpy(out->dim[cl], k.dim[cl], (size_t)k.n[cl] * sizeof k.dim[cl][0]);
        memcpy(out->ext[cl], k.ext[cl], (size_t)k.n[cl] * sizeof k.ext[cl][0]);
    }
    return MRT_OK;
}

mrt_einsum_shape mrt_einsum_shape_of(const mrt_einsum_class *k)
{
    mrt_einsum_shape s = {.ninputs = k->ninputs};
    for (int c = 0; c < MRT_IDX_CLASS_COUNT; c++) {
        s.n[c] = k->n[c];
        s.size[c] = k->size[c];
    }
    return s;
}

double mrt_einsum_flops(const mrt_einsum_class *k)
{
    double batch = (double)k->size[MRT_IDX_BATCH];
    double m = (double)k->size[MRT_IDX_M], n = (double)k->size[MRT_IDX_N];
    double kk = (double)k->size[MRT_IDX_K];
    /* Summing s elements into one takes s - 1 adds. */
    double adds_a = batch * m * kk * ((double)k->size[MRT_IDX_SUM_A] - 1);
    double adds_b = batch * kk * n * ((double)k->size[MRT_IDX_SUM_B] - 1);
    double product = k->ninputs == 2 ? 2 * batch * m * n * kk : 0;
    return product + adds_a + adds_b;
}
