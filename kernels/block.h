/*
 * block.h — copying a rectangular block between two dense row-major
 * arrays (the shard of a whole tensor, a tensor's block in a bigger one).
 */
#ifndef MRT_BLOCK_H
#define MRT_BLOCK_H

#include <stddef.h>
#include <stdint.h>

/* Copies a block of extents ext[0..n) from src (row-major, extents
 * sext, block starting at soff) to dst (extents dext, at doff). */
void mrt_block_copy(int n, const int64_t ext[], void *dst, const int64_t dext[],
                    const int64_t doff[], const void *src, const int64_t sext[],
                    const int64_t soff[], size_t elsize);

#endif
