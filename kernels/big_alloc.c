/*
 * big_alloc.c — the run's large buffers (the arena of every shard, a
 * tensor gathered whole for --verify or --save), in huge pages where the
 * system gives them (base/huge_pages.h).  The buffers are written whole,
 * so huge pages waste nothing.  Free them with free().
 */
#include <stdlib.h>

#include "huge_pages.h"
#include "big_alloc.h"

void *mrt_alloc_big(size_t bytes, int zeroed)
{
    void *p = zeroed ? calloc(1, bytes) : malloc(bytes);
    /* before any page is touched (calloc's large blocks are fresh, already
     * zero mappings) */
    mrt_huge_pages_hint(p, bytes);
    return p;
}
