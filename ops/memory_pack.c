/*
 * memory_pack.c — a second packing of the arena, tried beside first fit
 * (plan_finish.c keeps whichever is smaller): values by size, largest
 * first (longest-lived first among equals), each at the offset of the
 * smallest gap it fits between the values already placed whose lifetimes
 * overlap its own (best fit), else above them.
 *
 * First fit in the order values are made leaves holes where a short-lived
 * value sat under a long-lived one (the MLP's arena was 16% over its
 * largest live total, the examples' up to 14%); placing the large values
 * first, as TensorFlow Lite's greedy-by-size arena planner does, leaves
 * the holes to the small ones.  Each value scans the values placed before
 * it, so the pass is quadratic: it runs for plans of at most
 * MRT_PACK_MAX_VALUES values (first fit alone beyond).  A value updated
 * in place (alias_of: inplace.c) takes the offset of the one it replaces,
 * which is held until the later of their last uses.
 */
#include <stdlib.h>

#include "memory.h"

typedef struct pack_item {
    int v;
    int life; /* last use - def */
    int64_t size;
} pack_item;

static int cmp_item(const void *x, const void *y)
{
    const pack_item *a = x, *b = y;
    if (a->size != b->size)
        return a->size > b->size ? -1 : 1;
    if (a->life != b->life)
        return a->life > b->life ? -1 : 1;
    return (a->v > b->v) - (a->v < b->v);
}

/* last[v]: v's last use, or its in-place successors' when later. */
static int overlap(const mrt_plan *p, const int *last, int a, int b)
{
    return p->value[a].def <= last[b] && p->value[b].def <= last[a];
}

/* The offset for item it, given the items placed[0..n) sorted by offset
 * (off[v]). */
static int64_t best_gap(const mrt_plan *p, const int *last,
                        const pack_item *it, const pack_item *placed, int n,
                        const int64_t *off)
{
    int64_t end = 0, best = -1, best_gap = INT64_MAX;
    for (int k = 0; k < n; k++) {
        const pack_item *q = &placed[k];
        if (!overlap(p, last, it->v, q->v))
            continue;
        int64_t gap = off[q->v] - end;
        if (gap >= it->size && gap < best_gap) {
            best = end;
            best_gap = gap;
        }
        if (off[q->v] + q->size > end)
            end = off[q->v] + q->size;
    }
    return best >= 0 ? best : end;
}

int64_t mrt_memory_pack(const mrt_plan *p, int64_t align, int64_t *off)
{
    int n = 0;
    pack_item *item = malloc(((size_t)p->nvalues + 1) * sizeof *item);
    pack_item *placed = malloc(((size_t)p->nvalues + 1) * sizeof *placed);
    if (!item || !placed) {
        free(item);
        free(placed);
        return -1;
    }
    int *last = malloc(((size_t)p->nvalues + 1) * sizeof *last);
    if (!last) {
        free(item);
        free(placed);
        return -1;
    }
    for (int v = 0; v < p->nvalues; v++)
        last[v] = p->value[v].last_use;
    for (int v = 0; v < p->nvalues; v++) { /* in place: one buffer */
        int a = p->value[v].alias_of - 1;
        if (a >= 0 && last[v] > last[a])
            last[a] = last[v];
    }
    for (int v = 0; v < p->nvalues; v++) {
        int64_t b = p->value[v].count * p->value[v].elsize;
        off[v] = 0;
        if (b > 0 && !p->value[v].alias_of)
            item[n++] = (pack_item){v, last[v] - p->value[v].def,
                                    (b + align - 1) / align * align};
    }
    qsort(item, (size_t)n, sizeof *item, cmp_item);
    int64_t arena = 0;
    for (int i = 0; i < n; i++) {
        int64_t at = best_gap(p, last, &item[i], placed, i, off);
        off[item[i].v] = at;
        int k = i; /* insert by offset */
        while (k > 0 && off[placed[k - 1].v] > at) {
            placed[k] = placed[k - 1];
            k--;
        }
        placed[k] = item[i];
        arena = at + item[i].size > arena ? at + item[i].size : arena;
    }
    for (int v = 0; v < p->nvalues; v++) /* made after what it replaces */
        if (p->value[v].alias_of)
            off[v] = off[p->value[v].alias_of - 1];
    free(item);
    free(placed);
    free(last);
    return arena;
}
