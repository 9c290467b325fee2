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
#include "mapfn.h"

/* b may be NULL (one-input einsum: permute and sum).  Shapes must have
 * been accepted by mrt_einsum_classify (asserted). */
void mrt_kernel_einsum(mrt_dtype t, const mrt_kview *a, const mrt_kview *b,
                       const mrt_kview *c, void *workspace);
/* C = einsum(A, B) with two inputs whose operands are float32 or 16-bit
 * (t: the types of A, B, C), computed in float32 with the 16-bit ones
 * converted panel by panel around BLIS's sgemm (kernel_einsum16.c), C
 * rounded once to nearest even.  Returns 1, or 0 without touching
 * anything when the float32 plan of these shapes copies an operand (the
 * caller then converts whole operands around mrt_kernel_einsum).  The
 * workspace: mrt_einsum16_workspace bytes, 64-byte aligned, at most the
 * float32 copies of the 16-bit operands. */
int mrt_kernel_einsum16(const mrt_dtype t[3], const mrt_kview *a,
                        const mrt_kview *b, const mrt_kview *c,
                        void *workspace);
size_t mrt_einsum16_workspace(const mrt_dtype t[3], const mrt_kview *a,
                              const mrt_kview *b, const mrt_kview *c);
/* Elementwise map (kernels/kernel_map.c): out = fn(a, b) for every
 * element of out, with the inputs broadcast by dim id (every dim of a and
 * b is a dim of out with the same local extent; an input is repeated
 * along the out dims it lacks).  b is NULL for one-input functions.  The
 * dims of a and b may come in any order.  offset[i] is the global index of
 * out's first element along out dim i (only MRT_MAP_ONE_HOT reads it, on
 * dim `hot`, the class dim; otherwise offset may be NULL).  out may be
 * the same buffer as a or b only when that input has out's dims in out's
 * order. */
void mrt_kernel_map(mrt_dtype t, mrt_map_fn fn, double c, const mrt_kview *out,
                    const mrt_kview *a, const mrt_kview *b,
                    const int64_t *offset, int hot);
/* out = the maximum of in over the dims of in that out lacks (every dim of
 * out is a dim of in with the same extent, in any order). */
void mrt_kernel_reduce_max(mrt_dtype t, const mrt_kview *in,
                           const mrt_kview *out);

/* An embedding's lookup (kernel_gather.c): out[b.., d..] =
 * table[ids[b..] - voff, d..] where the id falls in the table's block of
 * its vocab dim (index vdim in table), else 0.  ids are of type idt
 * (MRT_I32, or t holding integers); out's dims are those of ids and of
 * table but vocab, in any order. */
void mrt_kernel_gather(mrt_dtype t, const mrt_kview *table, int vdim,
                       int64_t voff, mrt_dtype idt, const mrt_kview *ids,
                       const mrt_kview *out);
/* Its gradient: out (zeroed first; dim vdim the vocab block starting at
 * voff) += the rows g[b.., d..] at vocab ids[b..], for the ids in the
 * block. */
void mrt_kernel_scatter_add(mrt_dtype t, mrt_dtype idt, const mrt_kview *ids,
                            const mrt_kview *g, int vdim, int64_t voff,
                            const mrt_kview *out);
/* one_hot of int32 labels: out = 1 where ids == off + the index along
 * out's dim `hot` (off: the global index of out's first class), else 0;
 * ids has out's dims but `hot`, in any order. */
void mrt_kernel_one_hot_index(mrt_dtype t, const mrt_kview *ids,
                              const mrt_kview *out, int hot, int64_t off);

/* y += x, n elements (BLIS's axpy; for a 16-bit type, in float32 and
 * rounded back per element: mrt_kernel_add16). */
void mrt_kernel_add(mrt_dtype t, int64_t n, const void *x, void *y);

/* The floating types' conversions (kernel_convert.c): n elements of src
 * (type from) into dst (type to), rounded to nearest even where to is
 * narrower; dst may be src only when to == from.  I32 converts as
 * integers (ids held in a float type). */
void mrt_kernel_convert(mrt_dtype to, void *dst, mrt_dtype from,
                        const void *src, int64_t n);
/* The same, over a rows x cols block with strides (rs, cs) in elements
 * on each side; the blocks must not overlap. */
void mrt_kernel_convert2d(mrt_dtype to, void *dst, int64_t drs, int64_t dcs,
                          mrt_dtype from, const void *src, int64_t srs,
                          int64_t scs, int64_t rows, int64_t cols);
/* Element i of a of type t as a double (exact), and x stored there
 * rounded to t. */
double mrt_kernel_get(mrt_dtype t, const void *a, int64_t i);
void mrt_kernel_put(mrt_dtype t, void *a, int64_t i, double x);
/* y += x in a 16-bit type t: each sum in float32, rounded back. */
void mrt_kernel_add16(mrt_dtype t, int64_t n, const void *x, void *y);

/* Makes BLIS single-threaded in this process (ranks are the parallelism)
 * and, on x86, flushes subnormal numbers to zero on the calling thread
 * (kernel.c says why).  Call once, on the thread that runs the kernels,
 * before the first kernel. */
void mrt_kernel_init(void);

#endif
