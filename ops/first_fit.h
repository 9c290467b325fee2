/*
 * first_fit.h — first-fit placement of blocks that live for a while: the
 * arena of a run, where each value of the plan takes the lowest offset at
 * which it fits between the values still alive (plan_finish.c).
 *
 * Blocks are numbered 0..n-1 and come one at a time; each has a size and
 * the last time it is used.  Expiring frees the blocks whose last use is
 * before a time.  Both steps take O(log n) (expected): the live blocks are
 * a treap ordered by offset whose nodes know the largest free gap below
 * them, and a heap orders them by last use.  A long training program
 * keeps most activations alive until the backward pass, so a scan of the
 * live blocks per new block would be quadratic.
 */
#ifndef MRT_FIRST_FIT_H
#define MRT_FIRST_FIT_H

#include <stdint.h>

typedef struct mrt_fit mrt_fit;

/* Room for blocks 0..n-1; NULL when out of memory. */
mrt_fit *mrt_fit_create(int n);
void mrt_fit_destroy(mrt_fit *f);
/* Frees every placed block whose last use is before `now`. */
void mrt_fit_expire(mrt_fit *f, int now);
/* Places block id (not placed before) of `size` bytes at the lowest
 * offset where it overlaps no live block; it stays live until it expires
 * after `last_use`.  A block of size 0 takes offset 0 and no room.
 * Returns its offset. */
int64_t mrt_fit_place(mrt_fit *f, int id, int64_t size, int last_use);

#endif
