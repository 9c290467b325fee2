/*
 * classify.h — the first pass of einsum planning (as in TBLIS): sort the
 * dims of C = einsum(A, B) into classes by where they appear.
 *
 *   batch  in A, B and C          M (free in A)   in A and C, not B
 *   K      in A and B, not C      N (free in B)   in B and C, not A
 *   sum_a  in A only (summed before the product)
 *   sum_b  in B only
 *
 * With one input (B == NULL), every dim of A in C is M, every other dim of
 * A is sum_a, and N = K = 1.  Dims are matched by spec dim id; each list
 * keeps the order the dims have in C (for batch, M, N) or in A (for K,
 * sum_a) or B (sum_b).
 */
#ifndef MRT_CLASSIFY_H
#define MRT_CLASSIFY_H

#include <stdint.h>

#include "layout.h"
#include "meshrt.h"

#define MRT_MAX_EINSUM_DIMS (3 * MRT_MAX_DIMS)

/* An operand: its dims (spec ids), their extents, and (for kernels) data. */
typedef struct mrt_kview {
    int ndims;
    const int *dim;
    const int64_t *ext;
    void *data; /* row-major, dense; NULL when only shapes matter */
} mrt_kview;

typedef enum mrt_idx_class {
    MRT_IDX_BATCH = 0,
    MRT_IDX_M,
    MRT_IDX_N,
    MRT_IDX_K,
    MRT_IDX_SUM_A,
    MRT_IDX_SUM_B,
    MRT_IDX_CLASS_COUNT
} mrt_idx_class;

typedef struct mrt_einsum_class {
    int ninputs;                                       /* 1 or 2 */
    int n[MRT_IDX_CLASS_COUNT];                        /* dims per class */
    int dim[MRT_IDX_CLASS_COUNT][MRT_MAX_EINSUM_DIMS]; /* spec dim ids */
    int64_t ext[MRT_IDX_CLASS_COUNT][MRT_MAX_EINSUM_DIMS];
    int64_t size[MRT_IDX_CLASS_COUNT]; /* product of each class's extents */
} mrt_einsum_class;

/* What a plan keeps of a classification (a step of every op of a long
 * program holds one: the dim lists would make it 30 times larger). */
typedef struct mrt_einsum_shape {
    int ninputs;
    int n[MRT_IDX_CLASS_COUNT];
    int64_t size[MRT_IDX_CLASS_COUNT];
} mrt_einsum_shape;

/* Name of a class ("batch", "M", ...). */
const char *mrt_idx_class_name(mrt_idx_class c);
/* Classifies.  Fails (MRT_E_SPEC, message only, no position) if a dim of C
 * is in neither input, a dim appears twice in one operand, or the extents
 * of one dim differ between operands. */
mrt_status mrt_einsum_classify(const mrt_kview *a, const mrt_kview *b,
                               const mrt_kview *c, mrt_einsum_class *out,
                               mrt_error *err);
/* Flops of the local product: 2 * batch * M * N * K with two inputs (none
 * with one: a permutation is no arithmetic), plus the adds that sum away
 * sum_a / sum_b (s - 1 adds for s elements). */
double mrt_einsum_flops(const mrt_einsum_class *k);
/* The counts and sizes of k. */
mrt_einsum_shape mrt_einsum_shape_of(const mrt_einsum_class *k);

#endif
