/*
 * kernel.h — the local einsum kernel: C = einsum(A, B) on one rank's dense
 * row-major buffers, with BLIS doing the products.
 *
 * The kernel classifies the dims (ops/classify.h), sums away dims that
 * appear in one input only, arranges operands so that each product is one
 * BLIS gemm per batch index (using BLIS's row and column strides where the
 * dims already sit right, a copy into the workspace only where they do
 * not), and writes C in its own dim order.  It never allocates: the
 * caller passes a workspace of at least mrt_einsum_workspace bytes
 * (ops/kernel_plan.h, which also plans the copies and strides the kernel
 * executes).  C is overwritten (beta = 0).
 */
#ifndef MRT_KERNEL_H
#define MRT_KERNEL_H

#include <stddef.h>

#include "classify.h"
#include "layout.h"

/* b may be NULL (one-input einsum: permute and sum).  Shapes must have
 * been accepted by mrt_einsum_classify (asserted). */
void mrt_kernel_einsum(mrt_dtype t, const mrt_kview *a, const mrt_kview *b,
                       const mrt_kview *c, void *workspace);
/* Makes BLIS single-threaded in this process (ranks are the parallelism).
 * Call once before the first kernel. */
void mrt_kernel_init(void);

#endif
