/*
 * schedule.c — the orders of a pipeline's schedules (schedule.h): for
 * each stage, the slots it runs, in the order it runs them.
 *
 * gpipe, 1f1b and interleaved are written out as their papers give them
 * (interleaved as Megatron-LM's forward_backward_pipelining_with_
 * interleaving numbers its virtual microbatches); zero_bubble is ZB-H1
 * (Qi et al. 2023): with every slot one time unit long its makespan is
 * 3m + p − 1, a third of 1f1b's bubble, at 1f1b's peak of activations.
 */
#include <stdlib.h>

#include "schedule.h"

typedef struct order {
    mrt_schedule *s;
    int stage, n; /* slots written for stage */
} order;

static void put(order *o, int chunk, int micro, mrt_slot_phase ph)
{
    mrt_schedule *s = o->s;
    int at = o->stage * s->per_stage + o->n++;
    s->slot[at] = (mrt_slot){
        .stage = o->stage, .chunk = chunk, .micro = micro, .phase = ph};
    s->index[(chunk * s->microbatches + micro) * s->phases + (int)ph] = at;
}

static int min_int(int a, int b)
{
    return a < b ? a : b;
}

static void order_gpipe(order *o)
{
    int m = o->s->microbatches;
    for (int j = 0; j < m; j++)
        put(o, o->stage, j, MRT_SLOT_F);
    for (int j = 0; j < m; j++)
        put(o, o->stage, j, MRT_SLOT_B);
}

/* The virtual microbatch i of stage k (interleaved numbering; with v =
 * 1 simply microbatch i of chunk k): groups of p microbatches go through
 * the stage's chunks in turn, forward in chunk order, backward in the
 * reverse. */
static void virtual_micro(const mrt_schedule *s, int k, int i, int forward,
                          int *chunk, int *micro)
{
    int p = s->stages, v = s->virtual_stages;
    int local = (i % (p * v)) / p;
    if (!forward)
        local = v - 1 - local;
    *chunk = local * p + k;
    *micro = v == 1 ? i : (i / (p * v)) * p + i % p;
}

/* Warm-up forwards, then one forward one backward, then the cool-down
 * backwards, over the stage's virtual microbatches. */
static void order_1f1b_like(order *o, int warm)
{
    const mrt_schedule *s = o->s;
    int total = s->virtual_stages * s->microbatches, c, j;
    warm = min_int(warm, total);
    for (int i = 0; i < warm; i++) {
        virtual_micro(s, o->stage, i, 1, &c, &j);
        put(o, c, j, MRT_SLOT_F);
    }
    for (int i = 0; i < total - warm; i++) {
        virtual_micro(s, o->stage, warm + i, 1, &c, &j);
        put(o, c, j, MRT_SLOT_F);
        virtual_micro(s, o->stage, i, 0, &c, &j);
        put(o, c, j, MRT_SLOT_B);
    }
    for (int i = total - warm; i < total; i++) {
        virtual_micro(s, o->stage, i, 0, &c, &j);
        put(o, c, j, MRT_SLOT_B);
    }
}

static void order_1f1b(order *o)
{
    order_1f1b_like(o, o->s->stages - o->stage - 1);
}

/* Megatron-LM's warm-up: 2(p − k − 1) + (v − 1)p virtual microbatches,
 * every one when m = p. */
static void order_interleaved(order *o)
{
    const mrt_schedule *s = o->s;
    int p = s->stages, total = s->virtual_stages * s->microbatches;
    int warm = s->microbatches == p
                   ? total
                   : 2 * (p - o->stage - 1) + (s->virtual_stages - 1) * p;
    order_1f1b_like(o, warm);
}

/* ZB-H1: 1f1b's order with each backward split into B and W; stage k
 * runs W(j) right after B(j + k) (the first k W passes deferred), the
 * deferred ones at the end: at most p microbatches in flight on every
 * stage (1f1b's peak, on its first stage). */
static void order_zero_bubble(order *o)
{
    int m = o->s->microbatches, k = o->stage;
    int warm = min_int(o->s->stages - k - 1, m), w = 0;
    for (int j = 0; j < warm; j++)
        put(o, k, j, MRT_SLOT_F);
    for (int i = 0; i < m; i++) {
        if (warm + i < m)
            put(o, k, warm + i, MRT_SLOT_F);
        put(o, k, i, MRT_SLOT_B);
        if (i >= k)
            put(o, k, w++, MRT_SLOT_W);
    }
    while (w < m)
        put(o, k, w++, MRT_SLOT_W);
}

static void count_in_flight(mrt_schedule *s)
{
    mrt_slot_phase last = s->phases == 3 ? MRT_SLOT_W : MRT_SLOT_B;
    for (int k = 0; k < s->stages; k++) {
        int now = 0, most = 0;
        for (int i = 0; i < s->per_stage; i++) {
            const mrt_slot *sl = &s->slot[k * s->per_stage + i];
            now += sl->phase == MRT_SLOT_F ? 1 : sl->phase == last ? -1 : 0;
            most = now > most ? now : most;
        }
        s->in_flight[k] = most;
    }
}

mrt_status mrt_schedule_check(mrt_schedule_kind kind, int p, int v, int m,
                              const char *file, mrt_mark none, mrt_error *err)
{
    const char *name = mrt_schedule_kind_name(kind);
    if ((unsigned)kind >= MRT_SCHEDULE_COUNT)
        return mrt_error_set(err, MRT_E_SPEC, file, none,
                             "unknown schedule kind %d", (int)kind);
    if (p < 1 || v < 1 || m < 1)
        return mrt_error_set(err, MRT_E_SPEC, file, none,
                             "a pipeline needs at least 1 stage, virtual "
                             "stage and microbatch (got %d, %d, %d)",
                             p, v, m);
    if (v > 1 && kind != MRT_SCHEDULE_INTERLEAVED)
        return mrt_error_set(err, MRT_E_SPEC, file, none,
                             "%d virtual stages need schedule interleaved "
                             "(not %s)",
                             v, name);
    if (kind == MRT_SCHEDULE_INTERLEAVED && m % p != 0)
        return mrt_error_set(err, MRT_E_SPEC, file, none,
                             "schedule interleaved needs the microbatches "
                             "(%d) to be a multiple of the stages (%d)",
                             m, p);
    return MRT_OK;
}

mrt_status mrt_schedule_make(mrt_schedule_kind kind, int p, int v, int m,
                             mrt_schedule **out, mrt_error *err)
{
    *out = NULL;
    mrt_status st = mrt_schedule_check(kind, p, v, m, NULL, (mrt_mark){0, 0},
                                       err);
    if (st)
        return st;
    st = MRT_E_NOMEM;
    mrt_schedule *s = calloc(1, sizeof *s);
    if (!s)
        goto nomem;
    *s = (mrt_schedule){.kind = kind,
                        .stages = p,
                        .virtual_stages = v,
                        .microbatches = m,
                        .chunks = p * v,
                        .phases = kind == MRT_SCHEDULE_ZERO_BUBBLE ? 3 : 2};
    s->per_stage = v * m * s->phases;
    size_t n = (size_t)p * s->per_stage;
    s->slot = calloc(n, sizeof *s->slot);
    s->index = calloc(n, sizeof *s->index);
    s->in_flight = calloc((size_t)p, sizeof *s->in_flight);
    s->busy_s = calloc((size_t)p, sizeof *s->busy_s);
    s->times = calloc((size_t)4 * p * v, sizeof *s->times);
    if (!s->slot || !s->index || !s->in_flight || !s->busy_s || !s->times)
        goto nomem;
    for (int k = 0; k < p; k++) {
        order o = {s, k, 0};
        if (kind == MRT_SCHEDULE_GPIPE)
            order_gpipe(&o);
        else if (kind == MRT_SCHEDULE_1F1B)
            order_1f1b(&o);
        else if (kind == MRT_SCHEDULE_INTERLEAVED)
            order_interleaved(&o);
        else
            order_zero_bubble(&o);
    }
    count_in_flight(s);
    if ((st = mrt_schedule_replay(s, NULL, err)) != MRT_OK)
        goto fail;
    *out = s;
    return MRT_OK;
nomem:
    mrt_error_set(err, MRT_E_NOMEM, NULL, (mrt_mark){0, 0},
                  "out of memory making a pipeline schedule");
fail:
    mrt_schedule_destroy(s);
    return st;
}

void mrt_schedule_destroy(mrt_schedule *s)
{
    if (!s)
        return;
    free(s->slot);
    free(s->index);
    free(s->in_flight);
    free(s->busy_s);
    free(s->times);
    free(s->op_slot);
    free(s);
}

int mrt_schedule_find(const mrt_schedule *s, int chunk, int micro,
                      mrt_slot_phase phase)
{
    if ((int)phase >= s->phases)
        phase = MRT_SLOT_B;
    return s->index[(chunk * s->microbatches + micro) * s->phases + (int)phase];
}
