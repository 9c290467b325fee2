/*
 * grad_names.c — the names ir/ makes up (grad_names.h): each unique
 * however long the name it is made from, and the numbered names of the
 * backward program's pieces.
 */
#include "grad_names.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "work.h"

/* prefix base[0, keep) '~' hex(h) suffix into name. */
static void shortened(char name[MRT_NAME_MAX], const char *prefix,
                      const char *base, int keep, uint32_t h,
                      const char *suffix)
{
    snprintf(name, MRT_NAME_MAX, "%s%.*s~%08x%s", prefix, keep, base,
             (unsigned)h, suffix);
}

void mrt_ir_name(const mrt_spec *s, const char *prefix, const char *base,
                 const char *suffix, int reserve, char name[MRT_NAME_MAX])
{
    int room = MRT_NAME_MAX - 1 - reserve;
    int fixed = (int)(strlen(prefix) + strlen(suffix));
    int len = fixed + (int)strlen(base);
    assert(fixed + 9 < room); /* the '~', the hash and a character */
    if (len <= room) {
        snprintf(name, MRT_NAME_MAX, "%s%s%s", prefix, base, suffix);
        if (!s || mrt_spec_find_tensor(s, name) < 0)
            return;
    }
    /* the hash of the whole name, so that names cut to the same start
     * differ; the next value when taken: at most ntensors + 1 tries */
    char whole[3 * MRT_NAME_MAX];
    snprintf(whole, sizeof whole, "%s%s%s", prefix, base, suffix);
    uint64_t h64 = mrt_name_hash(whole);
    uint32_t h = (uint32_t)(h64 ^ (h64 >> 32));
    int keep = room - fixed - 9;
    if (keep > (int)strlen(base))
        keep = (int)strlen(base);
    for (;; h++) {
        MRT_WORK(1);
        shortened(name, prefix, base, keep, h, suffix);
        if (!s || mrt_spec_find_tensor(s, name) < 0)
            return;
    }
}

struct mrt_grad_stem {
    char stem[MRT_NAME_MAX];
    int next;   /* the numbers below it were handed out (1: the stem) */
    int *freed; /* a min-heap of numbers handed out and free again */
    int nfreed, cap_freed;
};

static const char *stem_name(const void *ctx, int i)
{
    return ((const mrt_grad_names *)ctx)->stem[i].stem;
}

/* The entry of stem, added if new (with add); NULL when there is none or
 * out of memory. */
static mrt_grad_stem *find_stem(mrt_grad_names *g, const char *stem, int add)
{
    int i = mrt_name_index_find(&g->index, stem, stem_name, g);
    if (i >= 0 || !add)
        return i >= 0 ? &g->stem[i] : NULL;
    i = g->nstems;
    if (strlen(stem) >= MRT_NAME_MAX ||
        mrt_grow((void **)&g->stem, &g->cap_stems, i + 1, sizeof *g->stem))
        return NULL;
    g->stem[i] = (mrt_grad_stem){.next = 1};
    snprintf(g->stem[i].stem, sizeof g->stem[i].stem, "%s", stem);
    if (mrt_name_index_add(&g->index, stem, i, stem_name, g))
        return NULL;
    g->nstems++;
    return &g->stem[i];
}

static void heap_push(mrt_grad_stem *e, int n)
{
    int i = e->nfreed++;
    for (; i > 0 && e->freed[(i - 1) / 2] > n; i = (i - 1) / 2) {
        MRT_WORK(1);
        e->freed[i] = e->freed[(i - 1) / 2];
    }
    e->freed[i] = n;
}

static int heap_pop(mrt_grad_stem *e)
{
    int top = e->freed[0], last = e->freed[--e->nfreed], i = 0;
    for (;;) {
        int c = 2 * i + 1;
        MRT_WORK(1);
        if (c >= e->nfreed)
            break;
        if (c + 1 < e->nfreed && e->freed[c + 1] < e->freed[c])
            c++;
        if (e->freed[c] >= last)
            break;
        e->freed[i] = e->freed[c];
        i = c;
    }
    if (e->nfreed)
        e->freed[i] = last;
    return top;
}

static void numbered(char name[MRT_NAME_MAX], const char *stem, int n)
{
    if (n == 1)
        snprintf(name, MRT_NAME_MAX, "%s", stem);
    else /* stems are short enough for the digits */
        snprintf(name, MRT_NAME_MAX, "%.*s%d", MRT_NAME_MAX - 12, stem, n);
}

int mrt_grad_names_make(mrt_grad_names *g, const mrt_spec *s, const char *stem,
                        int first, char name[MRT_NAME_MAX])
{
    mrt_grad_stem *e = find_stem(g, stem, 1);
    if (!e)
        return -1;
    for (;;) {
        int n;
        if (first == 1 && e->nfreed > 0) {
            n = heap_pop(e);
        } else {
            n = e->next > first ? e->next : first;
            e->next = n + 1;
        }
        numbered(name, stem, n);
        if (mrt_spec_find_tensor(s, name) < 0)
            return 0;
    }
}

int mrt_grad_names_release(mrt_grad_names *g, const char *name)
{
    /* name is a stem and a number: the digits at its end (a stem ends in
     * a letter, the <what>) */
    char stem[MRT_NAME_MAX];
    size_t len = strlen(name), k = len;
    if (len >= sizeof stem)
        return 0;
    while (k > 0 && name[k - 1] >= '0' && name[k - 1] <= '9')
        k--;
    if (len - k > 9) /* not a number we handed out */
        return 0;
    int n = k < len ? atoi(name + k) : 1;
    memcpy(stem, name, k);
    stem[k] = '\0';
    mrt_grad_stem *e = find_stem(g, stem, 0);
    if (!e || n < 1 || n >= e->next) /* not one of its numbers */
        return 0;
    if (mrt_grow((void **)&e->freed, &e->cap_freed, e->nfreed + 1,
                 sizeof *e->freed))
        return -1;
    heap_push(e, n);
    return 0;
}

void mrt_grad_names_free(mrt_grad_names *g)
{
    for (int i = 0; i < g->nstems; i++)
        free(g->stem[i].freed);
    free(g->stem);
    mrt_name_index_free(&g->index);
    *g = (mrt_grad_names){0};
}
