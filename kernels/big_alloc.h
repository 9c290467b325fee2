/*
 * big_alloc.h — the run's large buffers (the arena of every shard, a
 * tensor gathered whole), in huge pages where the system gives them.
 */
#ifndef MRT_BIG_ALLOC_H
#define MRT_BIG_ALLOC_H

#include <stddef.h>

/* malloc (calloc with zeroed) of a buffer of gigabytes, in huge pages
 * where the system has them; free() it. */
void *mrt_alloc_big(size_t bytes, int zeroed);

#endif
