/*
 * kernel_pack.h — the one data-movement primitive of the local einsum
 * kernel (kernels/kernel.c): a strided copy that may also sum.
 */
#ifndef MRT_KERNEL_PACK_H
#define MRT_KERNEL_PACK_H

#include <stdint.h>

#include "layout.h"

/* For every index vector i over ext[0..nd): dst[i . ds] = the sum of
 * src[j . ss] over all j that share that destination offset.  A dim with
 * ds == 0 is summed away; dims with ds != 0 must address distinct
 * elements.  Strides are in elements; src and dst must not overlap.
 * nd may be 0 (one element).  Never allocates. */
void mrt_kernel_pack(mrt_dtype t, int nd, const int64_t ext[], const void *src,
                     const int64_t ss[], void *dst, const int64_t ds[]);

#endif
