/*
 * grow.c — growable arrays (grow.h).
 */
#include "grow.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "huge_pages.h"

int mrt_grow(void **buf, int *cap, int n, size_t elsize)
{
    if (n <= *cap)
        return 0;
    int ncap = *cap > 8 ? *cap : 8;
    while (ncap < n) {
        if (ncap > INT_MAX / 2)
            return -1;
        ncap *= 2;
    }
    if ((size_t)ncap > SIZE_MAX / elsize)
        return -1;
    void *nb = realloc(*buf, (size_t)ncap * elsize);
    if (!nb)
        return -1;
    /* the new room of a large table in huge pages (a no-op for small
     * ones; the part already written keeps its pages) */
    mrt_huge_pages_hint(nb, (size_t)ncap * elsize);
    *buf = nb;
    *cap = ncap;
    return 0;
}
