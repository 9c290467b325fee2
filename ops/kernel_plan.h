/*
 * kernel_plan.h — the plan of one local einsum, C = einsum(A, B) on one
 * rank's dense row-major buffers: which operands to copy into the
 * workspace, the order of each matrix group, and every stride the
 * executor (kernels/kernel.c) reads.  Pure: shapes in, plain data out,
 * no BLIS, no MPI, so the planner can size the workspace of any rank.
 * The folding rule and the workspace layout are explained in
 * ops/kernel_plan.c.
 */
#ifndef MRT_KERNEL_PLAN_H
#define MRT_KERNEL_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "classify.h"
#include "layout.h"

/* The three operands of the product. */
typedef enum mrt_kop_id {
    MRT_KOP_A = 0,
    MRT_KOP_B,
    MRT_KOP_C,
    MRT_KOP_COUNT
} mrt_kop_id;

/* The three matrix groups: C (M x N) = A (M x K) * B (K x N). */
typedef enum mrt_kgroup {
    MRT_KGROUP_M = 0,
    MRT_KGROUP_N,
    MRT_KGROUP_K,
    MRT_KGROUP_COUNT
} mrt_kgroup;

/* An ordered list of dims (all of extent > 1). */
typedef struct mrt_kdims {
    int n;
    int dim[MRT_MAX_DIMS];
    int64_t ext[MRT_MAX_DIMS];
    int64_t size; /* product of ext (1 when n == 0) */
} mrt_kdims;

/* One operand seen as a matrix for one gemm per batch index.  Strides
 * are in elements of the buffer the gemm reads (the caller's, or the
 * operand's block of the workspace when copied).  A group of no dims
 * has extent 1 and stride 1; BLIS-specific fix-ups of such strides are
 * the executor's business. */
typedef struct mrt_kmat {
    int64_t rows, cols;       /* sizes of the rows and cols groups */
    int64_t rs, cs;           /* strides of their innermost dims */
    int64_t bs[MRT_MAX_DIMS]; /* per dim of mrt_kplan.batch */
} mrt_kmat;

/* A copy made one batch index at a time (mrt_kop.slice): before the
 * gemm of each batch index, the operand's non-batch dims are packed from
 * the caller's buffer at that index into one reused block of the
 * workspace.  ext, ss and ds are those dims (ss in the caller's buffer,
 * ds in the block: what mrt_kernel_pack takes); bs is the caller's stride
 * of each dim of mrt_kplan.batch. */
typedef struct mrt_kslice {
    int nd;
    int64_t ext[MRT_MAX_DIMS], ss[MRT_MAX_DIMS], ds[MRT_MAX_DIMS];
    int64_t bs[MRT_MAX_DIMS];
} mrt_kslice;

/* An operand as the kernel sees it: dims of extent > 1 only, in the
 * caller's storage order. */
typedef struct mrt_kop {
    int nd;
    int dim[MRT_MAX_DIMS];
    int64_t ext[MRT_MAX_DIMS];
    int64_t stride[MRT_MAX_DIMS]; /* in the caller's buffer */
    /* Two inputs: where the gemm reads each dim (= stride in place,
     * else in the packed block; 0: summed away while packing, or a
     * batch dim of a block copied one batch index at a time).  One
     * input, A only: the dim's stride in C (0: summed away). */
    int64_t mstride[MRT_MAX_DIMS];
    mrt_kdims mem[2]; /* rows and cols groups in storage order */
    int folds;        /* both groups fold into one stride each */
    int copy;         /* packed into the workspace */
    int slice;        /* copied, one batch index at a time (B only) */
    int64_t ws_off;   /* elements into the workspace, when copied */
    mrt_kslice sl;    /* when slice */
    mrt_kmat mat;     /* the gemm's view (two inputs only) */
} mrt_kop;

/* Everything the executor needs to run one local einsum. */
typedef struct mrt_kplan {
    int ninputs;               /* 1: C = A permuted and summed, no gemm */
    mrt_kop op[MRT_KOP_COUNT]; /* with one input, op[MRT_KOP_B] is empty */
    mrt_kdims batch;           /* classifier's order */
    mrt_kdims group[MRT_KGROUP_COUNT]; /* the chosen order of M, N, K */
    int sums[2];                       /* A / B have dims to sum away */
    int64_t ws_elems; /* workspace elements (0 for one input) */
} mrt_kplan;

/* Plans C = einsum(A, B) from shapes alone (data pointers are ignored);
 * b may be NULL (one input).  Shapes must have been accepted by
 * mrt_einsum_classify (asserted).  Fills *out (caller-owned); never
 * allocates. */
void mrt_kplan_make(mrt_dtype t, const mrt_kview *a, const mrt_kview *b,
                    const mrt_kview *c, mrt_kplan *out);
/* The strides BLIS is handed for a rows x cols matrix: BLIS checks
 * strides even along an extent of 1, so such a dim gets the stride a
 * dense matrix would have.  The executor passes every matrix through
 * this, and the plan predicts BLIS's storage cases with it. */
void mrt_kplan_blis_strides(int64_t rows, int64_t cols, int64_t *rs,
                            int64_t *cs);
/* Workspace bytes the local kernel needs for these shapes (data
 * ignored): the plan's ws_elems times the element size; SIZE_MAX when
 * that does not fit in a size_t. */
size_t mrt_einsum_workspace(mrt_dtype t, const mrt_kview *a, const mrt_kview *b,
                            const mrt_kview *c);

#endif
