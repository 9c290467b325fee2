/*
 * plan_blocks.c — what each repeated block keeps from its forward pass
 * for the backward pass (its activations), and what recomputation
 * (`recompute:`, ir/recompute.c) costs and saves: the plan's blocks[].
 *
 * A value is an activation of block b when memory_kind.c calls it one
 * (made in the forward pass, or an input, and read by a step of the
 * backward pass: it must stay live from the forward pass to that step)
 * and its tensor is made by a forward op of one of b's instances (or is
 * a dropout mask made inside one: the masks of causal softmaxes, shared
 * by every layer, are not counted).  Each value
 * counts once, at its largest shard (rank 0's).  In a recomputed block
 * the backward ops read the re-run's copies instead: `before` adds those
 * copies' values that the backward ops (not the re-run) read, which is
 * what the block would keep without recomputation, and leaves out the
 * forward values only the re-run reads (its input).  docs/memory.md
 * compares the figure with Korthikanti et al.'s per-layer formulas.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "output.h"
#include "plan.h"

/* The block instance whose tensor range holds input t (a mask made
 * inside an instance), or -1. */
static int input_block(const mrt_spec *s, int t, int *layer)
{
    for (int b = 0; b < s->nblocks; b++)
        for (int i = 0; i < s->block[b].count; i++)
            if (t >= s->block[b].first_tensor[i] &&
                t <= s->block[b].last_tensor[i]) {
                *layer = i;
                return b;
            }
    return -1;
}

/* The block and layer of tensor t if it is a forward activation (or a
 * re-run's copy of one: *copy), else -1: by the op that makes it (its
 * block instance), or for a dropout mask by the instance's tensor range. */
static int activation_block(const mrt_spec *s, int t, int *layer, int *copy)
{
    const mrt_spec_tensor *x = &s->tensor[t];
    int op = x->producer;
    *copy = x->recomputes != 0;
    if (op < 0)
        return x->init == MRT_INIT_DROPOUT ? input_block(s, t, layer) : -1;
    *layer = s->op[op].layer;
    if (s->op[op].phase == MRT_PHASE_FORWARD || *copy)
        return s->op[op].block;
    return -1;
}

/* 1 if value v was made in the forward pass (or is an input), or by a
 * re-run (*rerun). */
static int made_forward(const mrt_plan *p, int v, int *rerun)
{
    int op = p->value[v].made_by;
    *rerun = op >= 0 && p->op[op].recomputed;
    return op < 0 || p->op[op].phase == MRT_PHASE_FORWARD;
}

/* Value v read by step k (of op `op`): adds it to its block's figures
 * the first time (seen[v] bit 1: after, bit 2: before). */
static void count_read(mrt_plan *p, const mrt_spec *s, int v, int op,
                       unsigned char *seen)
{
    const mrt_plan_op *o = &p->op[op];
    int layer, copy, rerun;
    if (o->phase != MRT_PHASE_BACKWARD)
        return;
    int b = activation_block(s, p->value[v].tensor, &layer, &copy);
    if (b < 0)
        return;
    int fwd = made_forward(p, v, &rerun);
    int64_t bytes = p->value[v].count * p->value[v].elsize;
    mrt_plan_block *k = &p->blocks[b];
    if (p->value[v].kind == MRT_MEM_ACTIVATIONS && !(seen[v] & 1)) {
        seen[v] |= 1;
        k->saved_after += bytes;
        k->layer_after += layer == 0 ? bytes : 0;
        if (layer == 0)
            p->value[v].saved_by = 1 + b;
    }
    if ((fwd || (rerun && copy)) && !o->recomputed && !(seen[v] & 2)) {
        seen[v] |= 2;
        k->saved_before += bytes;
        k->layer_before += layer == 0 ? bytes : 0;
    }
}

mrt_status mrt_plan_blocks_tally(mrt_plan *p, const mrt_spec *s)
{
    free(p->blocks);
    p->blocks = NULL;
    if (!s->nblocks || s->train.loss < 0)
        return MRT_OK;
    p->blocks = calloc((size_t)s->nblocks, sizeof *p->blocks);
    unsigned char *seen = calloc((size_t)p->nvalues + 1, 1);
    if (!p->blocks || !seen) {
        free(seen);
        return MRT_E_NOMEM;
    }
    for (int v = 0; v < p->nvalues; v++)
        p->value[v].saved_by = 0;
    for (int b = 0; b < s->nblocks; b++) {
        p->blocks[b].count = s->block[b].count;
        p->blocks[b].recompute = s->block[b].recompute;
    }
    for (int i = 0; i < p->nops; i++)
        if (p->op[i].recomputed && p->op[i].block >= 0)
            p->blocks[p->op[i].block].rerun_flops += p->op[i].flops;
    for (int k = 0; k < p->nsteps; k++) {
        const mrt_step *st = &p->step[k];
        count_read(p, s, st->in, st->op, seen);
        if (st->in2 >= 0)
            count_read(p, s, st->in2, st->op, seen);
    }
    free(seen);
    return MRT_OK;
}

void mrt_plan_blocks_print(const mrt_plan *p, FILE *f)
{
    for (int b = 0; p->blocks && b < p->nblocks; b++) {
        const mrt_plan_block *k = &p->blocks[b];
        if (!k->recompute)
            continue;
        fprintf(f,
                "block %s recomputed: %.4g forward flops/rank re-run in the "
                "backward pass; activations saved %" PRId64
                " bytes/rank (%" PRId64 " per layer), %" PRId64 " (%" PRId64
                ") if kept\n",
                p->block_name[b], k->rerun_flops, k->saved_after,
                k->layer_after, k->saved_before, k->layer_before);
    }
}

/* ", "saved_per_layer_values": [...]': what instance 0 of block b
 * keeps, value by value (its tensor and bytes), in step order. */
static void saved_values_json(const mrt_plan *p, int b, FILE *f)
{
    int n = 0;
    fputs(", \"saved_per_layer_values\": [", f);
    for (int v = 0; v < p->nvalues; v++) {
        const mrt_value *x = &p->value[v];
        if (x->saved_by != 1 + b)
            continue;
        fputs(n++ ? ", {\"tensor\": " : "{\"tensor\": ", f);
        mrt_json_string(f, p->tensor_name[x->tensor]);
        fprintf(f, ", \"dtype\": \"%s\", \"bytes\": %" PRId64 "}",
                mrt_dtype_name(x->dtype), x->count * x->elsize);
    }
    fputs("]", f);
}

void mrt_plan_blocks_json(const mrt_plan *p, FILE *f)
{
    if (!p->blocks)
        return;
    fputs(",\n \"blocks\": [", f);
    for (int b = 0; b < p->nblocks; b++) {
        const mrt_plan_block *k = &p->blocks[b];
        fprintf(f, "%s\n    {\"name\": ", b ? "," : "");
        mrt_json_string(f, p->block_name[b]);
        fprintf(f,
                ", \"count\": %d, \"recompute\": %s, \"rerun_flops\": %.17g"
                ", \"activations\": {\"saved\": %" PRId64
                ", \"saved_per_layer\": %" PRId64
                ", \"without_recompute\": %" PRId64
                ", \"without_recompute_per_layer\": %" PRId64 "}",
                k->count, k->recompute ? "true" : "false", k->rerun_flops,
                k->saved_after, k->layer_after, k->saved_before,
                k->layer_before);
        saved_values_json(p, b, f);
        fputs("}", f);
    }
    fputs("]", f);
}
