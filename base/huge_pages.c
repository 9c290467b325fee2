/*
 * huge_pages.c — the hint of huge_pages.h.
 */
#include "huge_pages.h"

#include <stdint.h>
#include <sys/mman.h>

#define PAGE ((uintptr_t)4096)

void mrt_huge_pages_hint(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    if (!p || bytes < MRT_HUGE_PAGES_MIN)
        return;
    uintptr_t from = ((uintptr_t)p + PAGE - 1) & ~(PAGE - 1);
    uintptr_t to = ((uintptr_t)p + bytes) & ~(PAGE - 1);
    if (to > from)
        (void)madvise((void *)from, to - from, MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}
