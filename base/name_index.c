/*
 * name_index.c — the hash index of name_index.h.
 */
#include "name_index.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "work.h"

uint64_t mrt_name_hash(const char *name)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *name; name++)
        h = (h ^ (unsigned char)*name) * 1099511628211ull;
    return h;
}

/* The slot hash: FNV-1a's low bits depend only on the low bits of the
 * characters, so names that differ in a digit or two crowd together in a
 * table indexed by them; a finaliser (MurmurHash3's) spreads them. */
static uint32_t slot_hash(const char *name)
{
    uint64_t h = mrt_name_hash(name);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return (uint32_t)h;
}

int mrt_name_index_find(const mrt_name_index *ix, const char *name,
                        mrt_name_of name_of, const void *ctx)
{
    if (!ix->cap)
        return -1;
    uint32_t hash = slot_hash(name);
    unsigned mask = (unsigned)ix->cap - 1;
    for (unsigned h = hash & mask;; h = (h + 1) & mask) {
        const mrt_name_slot *e = &ix->slot[h];
        MRT_WORK(1);
        if (!e->id)
            return -1;
        if (e->hash == hash && strcmp(name_of(ctx, e->id - 1), name) == 0)
            return e->id - 1;
    }
}

/* Puts an entry into a table of cap slots (a power of two, not full). */
static void put(mrt_name_slot *slot, int cap, uint32_t hash, int id1)
{
    unsigned mask = (unsigned)cap - 1, h = hash & mask;
    while (MRT_WORK(1), slot[h].id)
        h = (h + 1) & mask;
    slot[h] = (mrt_name_slot){hash, id1};
}

int mrt_name_index_add(mrt_name_index *ix, const char *name, int id,
                       mrt_name_of name_of, const void *ctx)
{
    /* A name already there keeps its entry: entries of one name would all
     * hash to one place, and a long run of them would slow every lookup
     * that lands in it. */
    if (mrt_name_index_find(ix, name, name_of, ctx) >= 0)
        return 0;
    if (ix->count >= INT_MAX / 4)
        return -1;
    if (2 * (ix->count + 1) > ix->cap) { /* grow: rehash the stored hashes */
        int cap = ix->cap ? 2 * ix->cap : 64;
        mrt_name_slot *t = calloc((size_t)cap, sizeof *t);
        if (!t)
            return -1;
        for (int i = 0; i < ix->cap; i++)
            if (ix->slot[i].id)
                put(t, cap, ix->slot[i].hash, ix->slot[i].id);
        free(ix->slot);
        ix->slot = t;
        ix->cap = cap;
    }
    put(ix->slot, ix->cap, slot_hash(name), id + 1);
    ix->count++;
    return 0;
}

int mrt_name_index_copy(mrt_name_index *dst, const mrt_name_index *src)
{
    *dst = *src;
    dst->slot = NULL;
    if (!src->cap)
        return 0;
    dst->slot = malloc((size_t)src->cap * sizeof *dst->slot);
    if (!dst->slot) {
        *dst = (mrt_name_index){0};
        return -1;
    }
    memcpy(dst->slot, src->slot, (size_t)src->cap * sizeof *dst->slot);
    return 0;
}

void mrt_name_index_free(mrt_name_index *ix)
{
    free(ix->slot);
    *ix = (mrt_name_index){0};
}
