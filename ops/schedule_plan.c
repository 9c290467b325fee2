/*
 * schedule_plan.c — a pipelined plan's schedule, replayed with the cost
 * model: each chunk's forward, backward and (zero_bubble) weight-gradient
 * time for one microbatch is the sum of the modeled times of its ops'
 * steps (schedule_ops.c says which slot an op is in) over the
 * microbatches, divided by their count; the p2p time of a boundary is
 * its SENDRECV steps' time over its transfers (two per microbatch: the
 * activation forward, its gradient back).  Only the repeated block's
 * ops count in a slot: the ops outside it (the loss, an embedding, a
 * head, and their backward ops) run in their slot but are priced apart,
 * with the steps of no slot (the update, the sum of the losses).  The
 * plan's modeled time is then the replay's makespan plus those steps of
 * the stage that has the most of them (outside_s), not the sum of every
 * step: for work on the last stage, exactly the replay with it in the
 * last stage's slots under gpipe and interleaved, and 1f1b without the
 * p2p time (the last stage is then the busiest and never waits once it
 * has started); a little more than that for 1f1b with it (a round
 * trip's transfers) and zero_bubble, whose bubbles absorb some of it.
 *
 * The bubble (pipe.bubble_fraction) is the replay's of the block's slots with
 * the p2p time left out, as the schedules' papers count it (a transfer
 * overlapped with the compute of the next slot): (p − 1)/m for uniform stages
 * under gpipe and 1f1b, (p − 1)/(m·v) interleaved.  The slots' times, the
 * makespan and the schedule's own bubble_fraction include the p2p time: the
 * figure the run should see with blocking transfers.
 */
#include <stdlib.h>

#include "plan.h"
#include "planning.h"
#include "schedule.h"

typedef struct chunk_times {
    double *f, *b, *w, *p2p; /* [chunks] each */
    double *rest;            /* [stages]: steps of no slot */
} chunk_times;

/* Step st's time on stage k, outside every slot. */
static void add_rest(const mrt_plan *p, const mrt_step *st, chunk_times *t)
{
    for (int k = 0; k < p->pipe.stages; k++)
        if (st->stage < 0 || st->stage == k ||
            (st->kind == MRT_STEP_SENDRECV && st->from_stage == k))
            t->rest[k] += st->time_s;
}

/* A step into its chunk's F, B or W time or its boundary's p2p time;
 * the steps of no slot, and those of the ops outside the repeated block
 * (the loss, an embedding, a head: their stage's, priced apart), into
 * the stage's rest. */
static void add_step(const mrt_plan *p, const mrt_spec *s, const mrt_step *st,
                     const int *chunk, const mrt_slot_phase *phase,
                     chunk_times *t)
{
    int c = chunk[st->op], P = p->pipe.stages;
    if (c < 0 || s->op[st->op].block < 0) {
        add_rest(p, st, t);
        return;
    }
    if (st->kind == MRT_STEP_SENDRECV) {
        int b = phase[st->op] == MRT_SLOT_F ? c - 1 : c;
        if (b >= 0 && b < P * p->pipe.virtual_stages - 1)
            t->p2p[b] += st->time_s;
        return;
    }
    double *into = phase[st->op] == MRT_SLOT_F   ? t->f
                   : phase[st->op] == MRT_SLOT_B ? t->b
                                                 : t->w;
    into[c] += st->time_s;
}

static void sum_times(const mrt_plan *p, const mrt_spec *s, const int *chunk,
                      const mrt_slot_phase *phase, chunk_times *t)
{
    int C = p->pipe.stages * p->pipe.virtual_stages;
    int m = p->pipe.microbatches > 1 ? p->pipe.microbatches : 1;
    for (int i = 0; i < p->nsteps; i++)
        add_step(p, s, &p->step[i], chunk, phase, t);
    for (int c = 0; c < C; c++) {
        t->f[c] /= m;
        t->b[c] /= m;
        t->w[c] /= m;
        t->p2p[c] /= 2.0 * m;
    }
}

static mrt_status replay(mrt_plan *p, const chunk_times *t, mrt_error *err)
{
    mrt_schedule *sc = p->schedule;
    mrt_schedule_times no_p2p = {t->f, t->b, t->w, NULL};
    mrt_status st = mrt_schedule_replay(sc, &no_p2p, err);
    if (st != MRT_OK)
        return st;
    p->pipe.bubble_fraction = sc->bubble_fraction;
    mrt_schedule_times with_p2p = {t->f, t->b, t->w, t->p2p};
    if ((st = mrt_schedule_replay(sc, &with_p2p, err)) != MRT_OK)
        return st;
    double rest = 0;
    for (int k = 0; k < p->pipe.stages; k++)
        rest = t->rest[k] > rest ? t->rest[k] : rest;
    p->totals.time_s = sc->makespan_s + rest;
    return MRT_OK;
}

/* Each op's slot index in sc, -1: none (malloc'd; NULL: no memory). */
static int *slots_of(mrt_schedule *sc, const mrt_spec *s, const int *chunk,
                     const mrt_slot_phase *phase)
{
    int *slot = malloc(((size_t)s->nops + 1) * sizeof *slot);
    for (int i = 0; slot && i < s->nops; i++)
        slot[i] = chunk[i] >= 0 && chunk[i] < sc->chunks &&
                          s->op[i].micro >= 0 &&
                          s->op[i].micro < sc->microbatches
                      ? mrt_schedule_find(sc, chunk[i], s->op[i].micro,
                                          phase[i])
                      : -1;
    sc->nops = slot ? s->nops : 0;
    return slot;
}

mrt_status mrt_schedule_plan(mrt_plan *p, const mrt_spec *s, mrt_error *err)
{
    const mrt_plan_pipeline *pp = &p->pipe;
    if (pp->stages < 2)
        return MRT_OK;
    int n = s->nops + 1, C = pp->stages * pp->virtual_stages;
    int *stage = malloc((size_t)n * sizeof *stage);
    int *chunk = malloc((size_t)n * sizeof *chunk);
    int *op_chunk = malloc((size_t)n * sizeof *op_chunk);
    mrt_slot_phase *phase = malloc((size_t)n * sizeof *phase);
    double *buf = calloc((size_t)5 * C + pp->stages, sizeof *buf);
    chunk_times t = {buf, buf + C, buf + 2 * C, buf + 3 * C, buf + 5 * C};
    mrt_status st = MRT_E_NOMEM;
    mrt_schedule_destroy(p->schedule);
    p->schedule = NULL;
    if (stage && chunk && op_chunk && phase && buf) {
        for (int i = 0; i < s->nops; i++)
            stage[i] = p->op[i].stage, op_chunk[i] = p->op[i].chunk;
        st = mrt_schedule_make(pp->schedule, pp->stages, pp->virtual_stages,
                               pp->microbatches > 1 ? pp->microbatches : 1,
                               &p->schedule, err);
        if (st == MRT_OK)
            st = mrt_schedule_op_slots(s, pp->schedule, stage, op_chunk, chunk,
                                       phase, err);
        if (st == MRT_OK &&
            !(p->schedule->op_slot = slots_of(p->schedule, s, chunk, phase)))
            st = MRT_E_NOMEM;
        if (st == MRT_OK) {
            sum_times(p, s, chunk, phase, &t);
            st = replay(p, &t, err);
        }
    }
    if (st == MRT_E_NOMEM)
        mrt_planning_nomem(s, err);
    free(stage);
    free(chunk);
    free(op_chunk);
    free(phase);
    free(buf);
    return st;
}
