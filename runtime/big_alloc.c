/*
 * big_alloc.c — the run's large buffers (the arena of every shard, a
 * tensor gathered whole for --verify or --save) in transparent huge
 * pages where the kernel gives them on request only (transparent_hugepage
 * set to "madvise").  Each 4 KiB page costs a page fault the first time
 * it is written, and on a virtual machine a fault is dear: filling 2 GiB
 * took about 10 s of CPU here in 4 KiB pages and 3 s in 2 MiB pages.
 * The buffers are written whole, so huge pages waste nothing.  Free them
 * with free().
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "runtime.h"

#define HUGE_PAGE ((size_t)2 << 20)
#define PAGE ((size_t)4096)

void *mrt_alloc_big(size_t bytes, int zeroed)
{
    void *p = zeroed ? calloc(1, bytes) : malloc(bytes);
#ifdef MADV_HUGEPAGE
    /* before any page is touched (calloc's large blocks are fresh,
     * already zero mappings); a failure only costs speed */
    if (p && bytes >= 4 * HUGE_PAGE) {
        uintptr_t from = ((uintptr_t)p + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
        uintptr_t to = ((uintptr_t)p + bytes) & ~(uintptr_t)(PAGE - 1);
        madvise((void *)from, to - from, MADV_HUGEPAGE);
    }
#endif
    return p;
}
