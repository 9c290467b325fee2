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
 * (schedule_ops.c) in op order.  An op is preceded by any op it reads
 * that has not come yet (an op outside the slots, as the sum of the
 * microbatches' losses), so the order is valid whatever the slots say;
 * the ops of no slot (the update) come last, in op order.  So each
 * rank's steps follow its stage's schedule, and what is alive at once
 * (the activations in flight) follows from the values' lifetimes.
 */
#include <stdlib.h>

#include "planning.h"
#include "schedule.h"

typedef struct emitter {
    const mrt_spec *s;
    int *order, n;
    char *done;
    int *stack; /* [nops]: ops waiting for the ops they read */
} emitter;

/* Appends op i after every op it reads that has not come yet (a walk
 * with an explicit stack: the chains may be long). */
static void emit(emitter *e, int i)
{
    int top = 0;
    if (e->done[i])
        return;
    e->stack[top++] = i;
    e->done[i] = 1; /* on the stack */
    while (top > 0) {
        int j = e->stack[top - 1], pushed = 0;
        for (int a = 0; a < e->s->op[j].nin && !pushed; a++) {
            int k = e->s->tensor[e->s->op[j].in[a]].producer;
            if (k >= 0 && !e->done[k]) {
                e->done[k] = 1;
                e->stack[top++] = k;
                pushed = 1;
            }
        }
        if (!pushed)
            e->order[e->n++] = e->stack[--top];
    }
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
            int k = mrt_schedule_find(sc, chunk[i], s->op[i].micro,
                                      phase[i]);
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
    emitter e = {s, order, 0, calloc((size_t)s->nops + 1, 1),
                 malloc(((size_t)s->nops + 1) * sizeof(int))};
    int *first = malloc(((size_t)nslots + 1) * sizeof *first);
    int *by_slot = malloc(((size_t)s->nops + 1) * sizeof *by_slot);
    int *lin = mrt_schedule_linear(sc);
    if (e.done && e.stack && first && by_slot && lin) {
        bucket(sc, s, chunk, phase, first, by_slot);
        for (int q = 0; q < nslots; q++)
            for (int k = first[lin[q]]; k < first[lin[q] + 1]; k++)
                emit(&e, by_slot[k]);
        for (int i = 0; i < s->nops; i++)
            emit(&e, i);
        ok = 1;
    }
    free(e.done);
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
    mrt_status st = mrt_schedule_check(pp->schedule, p, v, m, s->path, at,
                                       err);
    if (st != MRT_OK) {
        free(order);
        free(chunk);
        free(phase);
        return NULL;
    }
    st = MRT_E_NOMEM;
    if (order && chunk && phase &&
        (st = mrt_schedule_make(pp->schedule, p, v, m, &sc, err)) == MRT_OK &&
        (st = mrt_schedule_op_slots(s, pp->schedule, op_stage, op_chunk,
                                    chunk, phase, err)) == MRT_OK &&
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
