/*
 * first_fit.c — first-fit placement of blocks (first_fit.h).
 *
 * The live blocks never overlap, so ordered by offset they are also
 * ordered by end, and the free space is the gaps between neighbours (and
 * everything after the last).  Each treap node keeps, for its subtree,
 * the lowest offset, the highest end and the largest gap between two
 * neighbours inside it; the first gap of at least `size` is then found on
 * one path from the root.  Priorities are a hash of the block's number,
 * so the shape (and the placement, which does not depend on it) is the
 * same on every run.
 */
#include "first_fit.h"

#include <stdlib.h>

#include "work.h"

typedef struct fit_node {
    int64_t off, end;         /* the block: [off, end) */
    int64_t min_off, max_end; /* of the subtree */
    int64_t gap;              /* largest gap between neighbours in it */
    uint64_t prio;
    int left, right; /* block numbers, -1: none */
    int last_use;
    int in_tree;
} fit_node;

struct mrt_fit {
    fit_node *node; /* [n] */
    int *heap;      /* placed blocks, a min-heap by last_use */
    int nheap;
    int root;
};

static uint64_t mix(uint64_t x) /* splitmix64's finaliser */
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

mrt_fit *mrt_fit_create(int n)
{
    mrt_fit *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->node = malloc(((size_t)n + 1) * sizeof *f->node);
    f->heap = malloc(((size_t)n + 1) * sizeof *f->heap);
    f->root = -1;
    if (!f->node || !f->heap) {
        mrt_fit_destroy(f);
        return NULL;
    }
    return f;
}

void mrt_fit_destroy(mrt_fit *f)
{
    if (!f)
        return;
    free(f->node);
    free(f->heap);
    free(f);
}

static int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/* Recomputes x's subtree figures from its children's. */
static void pull(fit_node *t, int x)
{
    fit_node *n = &t[x];
    int l = n->left, r = n->right;
    n->min_off = l >= 0 ? t[l].min_off : n->off;
    n->max_end = r >= 0 ? t[r].max_end : n->end;
    n->gap = 0;
    if (l >= 0)
        n->gap = max64(t[l].gap, n->off - t[l].max_end);
    if (r >= 0)
        n->gap = max64(n->gap, max64(t[r].gap, t[r].min_off - n->end));
}

/* Rotations: the child c of x takes x's place (x's figures first, since
 * x is now below c). */
static int rotate_right(fit_node *t, int x)
{
    int c = t[x].left;
    t[x].left = t[c].right;
    t[c].right = x;
    pull(t, x);
    pull(t, c);
    return c;
}

static int rotate_left(fit_node *t, int x)
{
    int c = t[x].right;
    t[x].right = t[c].left;
    t[c].left = x;
    pull(t, x);
    pull(t, c);
    return c;
}

/* Subtree root with block x (a leaf, pulled) added; its new root. */
static int insert(fit_node *t, int root, int x)
{
    MRT_WORK(1);
    if (root < 0)
        return x;
    if (t[x].off < t[root].off) {
        t[root].left = insert(t, t[root].left, x);
        if (t[t[root].left].prio > t[root].prio)
            return rotate_right(t, root);
    } else {
        t[root].right = insert(t, t[root].right, x);
        if (t[t[root].right].prio > t[root].prio)
            return rotate_left(t, root);
    }
    pull(t, root);
    return root;
}

/* Joins subtrees a and b, every block of a below every block of b (the
 * two children of a removed node: their inner spines are short). */
static int merge(fit_node *t, int a, int b)
{
    MRT_WORK(1);
    if (a < 0)
        return b;
    if (b < 0)
        return a;
    if (t[a].prio > t[b].prio) {
        t[a].right = merge(t, t[a].right, b);
        pull(t, a);
        return a;
    }
    t[b].left = merge(t, a, t[b].left);
    pull(t, b);
    return b;
}

/* Subtree root without the block at offset off (which it holds); its
 * new root. */
static int erase(fit_node *t, int root, int64_t off)
{
    MRT_WORK(1);
    if (t[root].off == off)
        return merge(t, t[root].left, t[root].right);
    if (off < t[root].off)
        t[root].left = erase(t, t[root].left, off);
    else
        t[root].right = erase(t, t[root].right, off);
    pull(t, root);
    return root;
}

/* The lowest offset at which `size` bytes fit between the live blocks. */
static int64_t first_gap(const fit_node *t, int x, int64_t size)
{
    int64_t prev_end = 0; /* the end of what precedes subtree x */
    while (x >= 0) {
        MRT_WORK(1);
        int l = t[x].left;
        if (l >= 0 && (t[l].min_off - prev_end >= size || t[l].gap >= size)) {
            x = l;
            continue;
        }
        int64_t before = l >= 0 ? t[l].max_end : prev_end;
        if (t[x].off - before >= size)
            return before;
        prev_end = t[x].end;
        x = t[x].right;
    }
    return prev_end;
}

static void heap_swap(mrt_fit *f, int i, int j)
{
    int v = f->heap[i];
    f->heap[i] = f->heap[j];
    f->heap[j] = v;
}

static int heap_less(const mrt_fit *f, int i, int j)
{
    return f->node[f->heap[i]].last_use < f->node[f->heap[j]].last_use;
}

static void heap_push(mrt_fit *f, int id)
{
    int i = f->nheap++;
    f->heap[i] = id;
    for (; i > 0 && heap_less(f, i, (i - 1) / 2); i = (i - 1) / 2) {
        MRT_WORK(1);
        heap_swap(f, i, (i - 1) / 2);
    }
}

static int heap_pop(mrt_fit *f)
{
    int top = f->heap[0];
    f->heap[0] = f->heap[--f->nheap];
    for (int i = 0;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        MRT_WORK(1);
        if (l < f->nheap && heap_less(f, l, m))
            m = l;
        if (r < f->nheap && heap_less(f, r, m))
            m = r;
        if (m == i)
            break;
        heap_swap(f, i, m);
        i = m;
    }
    return top;
}

void mrt_fit_expire(mrt_fit *f, int now)
{
    while (f->nheap > 0 && f->node[f->heap[0]].last_use < now) {
        int x = heap_pop(f);
        if (!f->node[x].in_tree)
            continue;
        f->root = erase(f->node, f->root, f->node[x].off);
        f->node[x].in_tree = 0;
    }
}

int64_t mrt_fit_place(mrt_fit *f, int id, int64_t size, int last_use)
{
    int64_t at = first_gap(f->node, f->root, size);
    fit_node *n = &f->node[id];
    *n = (fit_node){.off = at,
                    .end = at + size,
                    .prio = mix((uint64_t)id),
                    .left = -1,
                    .right = -1,
                    .last_use = last_use,
                    .in_tree = size > 0};
    pull(f->node, id);
    heap_push(f, id);
    if (n->in_tree) /* a block of size 0 takes no room */
        f->root = insert(f->node, f->root, id);
    return at;
}
