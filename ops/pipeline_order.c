/*
 * pipeline_order.c — the order the planner walks the ops of a pipelined
 * program in, which is the order of the plan's steps and so the order
 * every rank runs its stage's steps in.  Any order in which each op
 * comes after the ops that make its inputs is a valid plan; the
 * schedule picks one.  A rank runs only its stage's steps, and a
 * transfer (SENDRECV) sits where its value is first read, so blocking
 * sends and receives meet in the same global order on every rank.
 *
 * The order follows the schedule (schedule.h): its slots, every stage's
 * in one sequence by the start times of a replay with unit times (ties
 * by stage: mrt_schedule_linear), and within a slot its ops
 * (schedule_ops.c) in op order.  An op that reads what an op of no slot
 * makes (the sum of the microbatches' losses) has that op pulled in
 * ahead of it; one that reads what a slot still to come makes waits for
 * it and comes right after it (a weight gradient summed over the
 * microbatches in another order than the schedule runs them), so the
 * order is valid whatever the slots say and each slot's compute stays
 * in its turn; the ops of no slot (the update) come last, in op order.  So each
 * rank's steps follow its stage's schedule, and what is alive at once
 * (the activations in flight) follows from the values' lifetimes.
 */
#include <assert.h>
#include <stdlib.h>

#include "planning.h"
#include "schedule.h"

typedef struct emitter {
    const mrt_spec *s;
    const int *slot; /* [nops] each op's slot, -1: none */
    int *order, n;
    char *state;     /* [nops] 0 not come yet, 1 waiting, 2 placed */
    int *missing;    /* [nops] inputs whose op is not placed yet */
    int *first, *by; /* consumers of op i: by[first[i] .. first[i + 1]) */
    int *stack;      /* [nops] */
} emitter;

/* Places op i, then every waiting op this lets go (the consumers whose
 * last missing input it was), with an explicit stack. */
static void place(emitter *e, int i)
{
    int top = 0;
    e->stack[top++] = i;
    e->state[i] = 2;
    while (top > 0) {
        int j = e->stack[--top];
        e->order[e->n++] = j;
        for (int q = e->first[j]; q < e->first[j + 1]; q++) {
            int c = e->by[q];
            if (--e->missing[c] == 0 && e->state[c] == 1) {
                e->state[c] = 2;
                e->stack[top++] = c;
            }
        }
    }
}

/* Op i's turn: its inputs made by ops of no slot come first (pulled in
 * ahead of it); an input made in a slot still to come makes it wait for
 * that (place lets it go), so every slot's own ops run in its turn. */
static void request(emitter *e, int i)
{
    if (e->state[i])
        return;
    for (int a = 0; a < e->s->op[i].nin; a++) {
        int k = e->s->tensor[e->s->op[i].in[a]].producer;
        if (k >= 0 && !e->state[k] && e->slot[k] < 0)
            request(e, k);
    }
    if (e->missing[i] == 0)
        place(e, i);
    else
        e->state[i] = 1;
}

/* Who reads each op's result: e->first and e->by (CSR), and e->missing. */
static int consumers(emitter *e)
{
    const mrt_spec *s = e->s;
    int n = s->nops, edges = 0;
    e->first = calloc((size_t)n + 2, sizeof *e->first);
    for (int j = 0; e->first && j < n; j++)
        for (int a = 0; a < s->op[j].nin; a++) {
            int k = s->tensor[s->op[j].in[a]].producer;
            if (k >= 0) {
                e->first[k + 2]++;
                e->missing[j]++;
                edges++;
            }
        }
    e->by = malloc(((size_t)edges + 1) * sizeof *e->by);
    if (!e->first || !e->by)
        return -1;
    for (int k = 0; k < n; k++)
        e->first[k + 2] += e->first[k + 1];
    for (int j = 0; j < n; j++)
        for (int a = 0; a < s->op[j].nin; a++) {
            int k = s->tensor[s->op[j].in[a]].producer;
            if (k >= 0)
                e->by[e->first[k + 1]++] = j;
        }
    return 0;
}

/* The ops of each slot, in op order: first[slot] .. first[slot + 1] of
 * by_slot. */
static int bucket(const mrt_schedule *sc, const mrt_spec *s, const int *chunk,
                  const mrt_slot_phase *phase, int *first, int *by_slot)
{
    int nslots = sc->stages * sc->per_stage;
    for (int i = 0; i <= nslots; i++)
        first[i] = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < s->nops; i++) {
            if (chunk[i] < 0 || chunk[i] >= sc->chunks ||
                s->op[i].micro >= sc->microbatches)
                continue;
            int k = mrt_schedule_find(sc, chunk[i], s->op[i].micro, phase[i]);
            if (pass == 0)
                first[k + 1]++;
            else
                by_slot[first[k]++] = i;
        }
        for (int k = 0; pass == 0 && k < nslots; k++)
            first[k + 1] += first[k];
    }
    for (int k = nslots; k > 0; k--) /* back to the starts */
        first[k] = first[k - 1];
    first[0] = 0;
    return 0;
}

static int walk(const mrt_spec *s, const mrt_schedule *sc, const int *chunk,
                const mrt_slot_phase *phase, int *order)
{
    int nslots = sc->stages * sc->per_stage, ok = 0;
    size_t n = (size_t)s->nops + 1;
    int *slot = malloc(n * sizeof *slot);
    emitter e = {s,    slot,         order,
                 0,    calloc(n, 1), calloc(n, sizeof(int)),
                 NULL, NULL,         malloc(n * sizeof(int))};
    int *first = malloc(((size_t)nslots + 1) * sizeof *first);
    int *by_slot = malloc(n * sizeof *by_slot);
    int *lin = mrt_schedule_linear(sc);
    if (slot && e.state && e.missing && e.stack && first && by_slot && lin &&
        consumers(&e) == 0) {
        bucket(sc, s, chunk, phase, first, by_slot);
        for (int i = 0; i < s->nops; i++)
            slot[i] = -1;
        for (int q = 0; q < nslots; q++)
            for (int k = first[q]; k < first[q + 1]; k++)
                slot[by_slot[k]] = q;
        for (int q = 0; q < nslots; q++)
            for (int k = first[lin[q]]; k < first[lin[q] + 1]; k++)
                request(&e, by_slot[k]);
        for (int i = 0; i < s->nops; i++)
            request(&e, i);
        assert(e.n == s->nops && "the ops of a program form no cycle");
        ok = 1;
    }
    free(slot);
    free(e.state);
    free(e.missing);
    free(e.first);
    free(e.by);
    free(e.stack);
    free(first);
    free(by_slot);
    free(lin);
    return ok ? 0 : -1;
}

int *mrt_pipeline_op_order(const mrt_spec *s, const mrt_plan_pipeline *pp,
                           const int *op_stage, const int *op_chunk,
                           mrt_error *err)
{
    int *order = malloc(((size_t)s->nops + 1) * sizeof *order);
    int *chunk = malloc(((size_t)s->nops + 1) * sizeof *chunk);
    mrt_slot_phase *phase = malloc(((size_t)s->nops + 1) * sizeof *phase);
    mrt_schedule *sc = NULL;
    int m = pp->microbatches > 1 ? pp->microbatches : 1;
    int p = pp->stages > 1 ? pp->stages : 1;
    int v = pp->virtual_stages > 1 ? pp->virtual_stages : 1;
    const mrt_train *tr = &s->train;
    mrt_mark at = tr->schedule_mark.line ? tr->schedule_mark
                  : tr->micro_mark.line  ? tr->micro_mark
                                         : tr->mark;
    mrt_status st = mrt_schedule_check(pp->schedule, p, v, m, s->path, at, err);
    if (st != MRT_OK) {
        free(order);
        free(chunk);
        free(phase);
        return NULL;
    }
    st = MRT_E_NOMEM;
    if (order && chunk && phase &&
        (st = mrt_schedule_make(pp->schedule, p, v, m, &sc, err)) == MRT_OK &&
        (st = mrt_schedule_op_slots(s, pp->schedule, op_stage, op_chunk, chunk,
                                    phase, err)) == MRT_OK &&
        walk(s, sc, chunk, phase, order) != 0)
        st = MRT_E_NOMEM;
    mrt_schedule_destroy(sc);
    free(chunk);
    free(phase);
    if (st != MRT_OK) {
        if (st == MRT_E_NOMEM)
            mrt_planning_nomem(s, err);
        free(order);
        return NULL;
    }
    return order;
}
