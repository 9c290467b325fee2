/*
 * relayout_memo.c — the relayout paths already found while planning, by
 * (from, to) layout pair.
 *
 * The planner weighs many lowerings of every op (ops/cheapest.c) and a long
 * program repeats its layers, so the same pair of layouts comes back
 * again and again; the pathfinder (relayout_path.c) runs once per pair and
 * its answer is kept here: the moves it found, or that relayout.c's
 * greedy moves are as cheap.  Direct-mapped: a pair evicts the one
 * before it in its slot.  Only answers of at most MEMO_MOVES moves are
 * kept (the others are looked for again).  The planning context owns the
 * memo (mrt_planning.relayout_memo); it is freed when a build ends.
 */
#include <stdlib.h>
#include <string.h>

#include "planning.h"

#define SLOTS 256
#define MEMO_MOVES 8

typedef struct slot {
    int used;
    mrt_layout from, to;
    int n; /* -1: the greedy moves */
    mrt_move move[MEMO_MOVES];
} slot;

struct mrt_relayout_memo {
    slot s[SLOTS];
};

static uint64_t mix(uint64_t h, uint64_t v)
{
    return (h ^ v) * 0x100000001b3ull;
}

static uint64_t hash(const mrt_layout *l, uint64_t h)
{
    h = mix(h, (uint64_t)l->ndims);
    h = mix(h, l->partial);
    for (int i = 0; i < l->ndims; i++) {
        h = mix(h, (uint64_t)l->dim[i]);
        h = mix(h, (uint64_t)l->size[i]);
        for (int j = 0; j < l->naxes[i]; j++)
            h = mix(h, (uint64_t)l->axes[i][j] + 1);
        h = mix(h, 0xff);
    }
    return h;
}

static slot *slot_of(mrt_planning *pl, const mrt_layout *from,
                     const mrt_layout *to)
{
    if (!pl->relayout_memo &&
        !(pl->relayout_memo = calloc(1, sizeof *pl->relayout_memo)))
        return NULL;
    uint64_t h = hash(to, hash(from, 0xcbf29ce484222325ull));
    return &pl->relayout_memo->s[(h ^ (h >> 32)) % SLOTS];
}

int mrt_relayout_memo_get(mrt_planning *pl, const mrt_layout *from,
                          const mrt_layout *to, mrt_move moves[])
{
    slot *s = slot_of(pl, from, to);
    if (!s || !s->used || !mrt_layout_equal(&s->from, from) ||
        !mrt_layout_equal(&s->to, to))
        return -2;
    if (s->n > 0)
        memcpy(moves, s->move, (size_t)s->n * sizeof *moves);
    return s->n;
}

void mrt_relayout_memo_put(mrt_planning *pl, const mrt_layout *from,
                           const mrt_layout *to, const mrt_move moves[], int n)
{
    slot *s = slot_of(pl, from, to);
    if (!s || n > MEMO_MOVES)
        return;
    s->used = 1;
    s->from = *from;
    s->to = *to;
    s->n = n;
    if (n > 0)
        memcpy(s->move, moves, (size_t)n * sizeof *moves);
}

void mrt_relayout_memo_destroy(struct mrt_relayout_memo *m)
{
    free(m);
}
