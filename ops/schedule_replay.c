/*
 * schedule_replay.c — a schedule's slots given their durations
 * (schedule.h): each slot starts as soon as its stage is free and its
 * dependencies have ended (plus the p2p time where a dependency ran on
 * another stage), in the order its stage runs them.  The orders are
 * fixed, so the replay is a longest-path walk: stages take turns running
 * their next slot while its dependencies are met.
 *
 * The bubble is the busiest stage's idle time over its ideal time: with
 * busy_k the sum of stage k's slot times and T the makespan,
 * (T − busy_k) / busy_k for the k of the largest busy_k.  For p uniform
 * stages with no p2p time that is (p − 1)/m for gpipe and 1f1b and
 * (p − 1)/(m·v) for interleaved.
 */
#include <assert.h>
#include <stdlib.h>

#include "schedule.h"

static double duration(const mrt_schedule *s, const mrt_schedule_times *t,
                       const mrt_slot *sl)
{
    if (!t)
        return 1;
    int c = sl->chunk;
    double w = t->w ? t->w[c] : 0;
    switch (sl->phase) {
    case MRT_SLOT_F: return t->f[c];
    case MRT_SLOT_B: return t->b[c] + (s->phases == 2 ? w : 0);
    default: return w;
    }
}

/* The time to move between chunk c and c + 1 (0 on one stage). */
static double hop(const mrt_schedule *s, const mrt_schedule_times *t, int c)
{
    if (!t || !t->p2p_s || c % s->stages == (c + 1) % s->stages)
        return 0;
    return t->p2p_s[c];
}

/* The end of dependency (c, j, ph) plus extra, folded into *at; 0 when
 * it has not run yet. */
static int after(const mrt_schedule *s, const char *done, int c, int j,
                 mrt_slot_phase ph, double extra, double *at)
{
    int i = mrt_schedule_find(s, c, j, ph);
    if (!done[i])
        return 0;
    double e = s->slot[i].end_s + extra;
    *at = e > *at ? e : *at;
    return 1;
}

/* When slot sl may start by its dependencies, or -1 when one has not
 * run yet. */
static double ready_at(const mrt_schedule *s, const mrt_schedule_times *t,
                       const char *done, const mrt_slot *sl)
{
    double at = 0;
    int c = sl->chunk, j = sl->micro, ok = 1;
    if (sl->phase == MRT_SLOT_F) {
        if (c > 0)
            ok = after(s, done, c - 1, j, MRT_SLOT_F, hop(s, t, c - 1), &at);
    } else if (sl->phase == MRT_SLOT_B) {
        ok = after(s, done, c, j, MRT_SLOT_F, 0, &at);
        if (ok && c < s->chunks - 1)
            ok = after(s, done, c + 1, j, MRT_SLOT_B, hop(s, t, c), &at);
    } else
        ok = after(s, done, c, j, MRT_SLOT_B, 0, &at);
    return ok ? at : -1;
}

/* Runs stage k's slots from *pos while their dependencies have run;
 * returns how many it ran. */
static int run_stage(mrt_schedule *s, const mrt_schedule_times *t, char *done,
                     int k, int *pos, double *free_at)
{
    int ran = 0;
    for (; *pos < s->per_stage; ++*pos, ran++) {
        int i = k * s->per_stage + *pos;
        mrt_slot *sl = &s->slot[i];
        double r = ready_at(s, t, done, sl);
        if (r < 0)
            break;
        sl->start_s = r > *free_at ? r : *free_at;
        double d = duration(s, t, sl);
        sl->end_s = sl->start_s + d;
        *free_at = sl->end_s;
        s->busy_s[k] += d;
        done[i] = 1;
    }
    return ran;
}

static void bubble(mrt_schedule *s)
{
    s->makespan_s = 0;
    s->busiest = 0;
    for (int k = 0; k < s->stages; k++) {
        const mrt_slot *last = &s->slot[(k + 1) * s->per_stage - 1];
        s->makespan_s = last->end_s > s->makespan_s ? last->end_s
                                                    : s->makespan_s;
        /* (equal up to rounding: the first, so identical stages name 0) */
        if (s->busy_s[k] > s->busy_s[s->busiest] * (1 + 1e-12))
            s->busiest = k;
    }
    double busy = s->busy_s[s->busiest];
    s->bubble_fraction = busy > 0 ? (s->makespan_s - busy) / busy : 0;
}

mrt_status mrt_schedule_replay(mrt_schedule *s, const mrt_schedule_times *t,
                               mrt_error *err)
{
    int p = s->stages, n = p * s->per_stage, left = n;
    char *done = calloc((size_t)n, 1);
    int *pos = calloc((size_t)p, sizeof *pos);
    double *free_at = calloc((size_t)p, sizeof *free_at);
    if (!done || !pos || !free_at) {
        free(done);
        free(pos);
        free(free_at);
        return mrt_error_set(err, MRT_E_NOMEM, NULL, (mrt_mark){0, 0},
                             "out of memory replaying a pipeline schedule");
    }
    for (int k = 0; k < p; k++)
        s->busy_s[k] = 0;
    for (int c = 0; c < s->chunks; c++) {
        double *d = &s->times[4 * c];
        d[0] = t ? t->f[c] : 1;
        d[1] = t ? t->b[c] : 1;
        d[2] = t && t->w ? t->w[c] : s->phases == 3 ? 1 : 0;
        d[3] = t && t->p2p_s ? t->p2p_s[c] : 0;
    }
    for (int ran = 1; ran && left > 0;) {
        ran = 0;
        for (int k = 0; k < p; k++)
            ran += run_stage(s, t, done, k, &pos[k], &free_at[k]);
        left -= ran;
    }
    assert(left == 0 && "a schedule's orders respect its dependencies");
    bubble(s);
    free(done);
    free(pos);
    free(free_at);
    return MRT_OK;
}

typedef struct keyed {
    double start;
    int stage, slot;
} keyed;

static int by_start(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->stage != y->stage)
        return x->stage - y->stage;
    return x->slot - y->slot;
}

int *mrt_schedule_linear(const mrt_schedule *s)
{
    int n = s->stages * s->per_stage;
    keyed *k = malloc((size_t)n * sizeof *k);
    int *order = malloc((size_t)n * sizeof *order);
    if (!k || !order) {
        free(k);
        free(order);
        return NULL;
    }
    for (int i = 0; i < n; i++)
        k[i] = (keyed){s->slot[i].start_s, s->slot[i].stage, i};
    qsort(k, (size_t)n, sizeof *k, by_start);
    for (int i = 0; i < n; i++)
        order[i] = k[i].slot;
    free(k);
    return order;
}
