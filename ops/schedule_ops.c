/*
 * schedule_ops.c — which slot of a pipeline's schedule (schedule.h) each op
 * of a pipelined program belongs to: its chunk, its microbatch (the op's own,
 * spec.h's micro) and its phase.  Forward ops are F.  Backward ops are B;
 * with zero_bubble, B is only what the input gradient sent to the chunk
 * before needs (the backward ops of the chunk whose results reach a backward
 * op of another chunk or a `grads:` input's gradient, and what they read from
 * their own chunk), and W the rest of the chunk's backward ops (the weight
 * gradients).  The update and the ops outside any microbatch belong to no
 * slot (chunk -1).
 */
#include <stdlib.h>

#include "planning.h"
#include "schedule.h"

/* Op i's chunk: its own, its forward op's for a backward op, else its
 * stage's first chunk; -1 outside the microbatches. */
static int op_chunk_of(const mrt_spec *s, const int *op_stage,
                       const int *op_chunk, int i)
{
    const mrt_spec_op *o = &s->op[i];
    if (o->micro < 0 || o->phase == MRT_PHASE_UPDATE)
        return -1;
    if (op_chunk && op_chunk[i] >= 0)
        return op_chunk[i];
    if (o->fwd > 0 && op_chunk && op_chunk[o->fwd - 1] >= 0)
        return op_chunk[o->fwd - 1];
    if (op_stage && op_stage[i] >= 0)
        return op_stage[i];
    return o->fwd > 0 && op_stage && op_stage[o->fwd - 1] >= 0
               ? op_stage[o->fwd - 1]
               : 0;
}

/* The backward ops the input gradient needs (zero_bubble's B): those
 * read by a backward op of another chunk, or making the gradient of a
 * `grads:` input (the first stage's input gradient, as a stage fed by an
 * earlier one sends back), and back through the ops of their own chunk
 * and microbatch they read.  Ops come after the ops that make their
 * inputs, so one pass from the last op back suffices. */
static void mark_input_gradient(const mrt_spec *s, const int *chunk,
                                char *need_b)
{
    for (int k = 0; k < s->train.nextra; k++) {
        int g = s->train.extra_grad ? s->train.extra_grad[k] : -1;
        int i = g >= 0 ? s->tensor[g].producer : -1;
        if (i >= 0 && s->op[i].phase == MRT_PHASE_BACKWARD)
            need_b[i] = 1;
    }
    for (int j = 0; j < s->nops; j++)
        for (int a = 0;
             s->op[j].phase == MRT_PHASE_BACKWARD && a < s->op[j].nin; a++) {
            int i = s->tensor[s->op[j].in[a]].producer;
            if (i >= 0 && s->op[i].phase == MRT_PHASE_BACKWARD &&
                chunk[i] != chunk[j])
                need_b[i] = 1;
        }
    for (int j = s->nops - 1; j >= 0; j--)
        for (int a = 0; need_b[j] && a < s->op[j].nin; a++) {
            int i = s->tensor[s->op[j].in[a]].producer;
            if (i >= 0 && s->op[i].phase == MRT_PHASE_BACKWARD &&
                chunk[i] == chunk[j] && s->op[i].micro == s->op[j].micro)
                need_b[i] = 1;
        }
}

mrt_status mrt_schedule_op_slots(const mrt_spec *s, mrt_schedule_kind kind,
                                 const int *op_stage, const int *op_chunk,
                                 int *chunk, mrt_slot_phase *phase,
                                 mrt_error *err)
{
    char *need_b = calloc((size_t)s->nops + 1, 1);
    if (!need_b)
        return mrt_planning_nomem(s, err);
    for (int i = 0; i < s->nops; i++) {
        chunk[i] = op_chunk_of(s, op_stage, op_chunk, i);
        phase[i] = s->op[i].phase == MRT_PHASE_FORWARD ? MRT_SLOT_F
                                                       : MRT_SLOT_B;
    }
    if (kind == MRT_SCHEDULE_ZERO_BUBBLE) {
        mark_input_gradient(s, chunk, need_b);
        for (int i = 0; i < s->nops; i++)
            if (phase[i] == MRT_SLOT_B && chunk[i] >= 0 && !need_b[i])
                phase[i] = MRT_SLOT_W;
    }
    free(need_b);
    return MRT_OK;
}
