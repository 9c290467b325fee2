/*
 * grow.h — growable arrays: the one helper the spec's and the plan's
 * tables (and the loader's scratch tables) grow with.
 *
 * An array is a pointer and a capacity in elements; it grows by doubling,
 * so appending n elements one at a time costs O(n) copies in all.  The
 * room it adds is not initialised (nor touched: a long program's tables
 * are hundreds of MB, and the memory is mapped only where it is used;
 * a table of 8 MiB or more asks for huge pages, base/huge_pages.h).
 */
#ifndef MRT_GROW_H
#define MRT_GROW_H

#include <stddef.h>

/* Makes *buf (room for *cap elements of elsize bytes) hold at least n
 * elements: reallocated, *cap updated.  Returns 0,
 * or -1 when out of memory or n is beyond what an int counts (*buf and
 * *cap are then unchanged). */
int mrt_grow(void **buf, int *cap, int n, size_t elsize);

#endif
