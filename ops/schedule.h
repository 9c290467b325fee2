/*
 * schedule.h — a pipeline's schedule: which slot each stage runs in
 * which order, and when each slot runs given its duration.
 *
 * A pipeline of p stages with v virtual stages per rank has p·v chunks:
 * chunk c runs on stage c mod p and holds block c of the layer dim dealt
 * over p·v (v = 1: chunk k is stage k).  Each of the m microbatches
 * passes forward through chunks 0, 1, …, p·v−1 and backward the other
 * way.  A slot is one (chunk, microbatch, phase): F the forward, B the
 * backward (with zero_bubble: the input gradient only), W the weight
 * gradient (zero_bubble only; else part of B).  A slot's dependencies:
 * F(c, j) after F(c−1, j); B(c, j) after B(c+1, j) and F(c, j); W(c, j)
 * after B(c, j); a transfer between chunks on different stages takes
 * the p2p time in between.
 *
 * The orders (schedule.c) are the textbook ones: gpipe (all forwards,
 * then all backwards), 1f1b (PipeDream-Flush: p−k−1 forwards of warm-up
 * on stage k, then one forward one backward, then the cool-down),
 * interleaved (Narayanan et al. 2021's interleaved 1F1B, as Megatron-LM
 * runs it; m a multiple of p), zero_bubble (ZB-H1 of Qi et al. 2023:
 * 1F1B's order with each backward split into B and W, the W passes
 * deferred into the bubbles, at most p microbatches in flight per stage,
 * 1F1B's peak).  The replay (schedule_replay.c) gives each slot its start
 * and end, the makespan and the bubble.
 */
#ifndef MRT_SCHEDULE_H
#define MRT_SCHEDULE_H

#include <stdio.h>

#include "error.h"
#include "spec.h"

typedef enum mrt_slot_phase {
    MRT_SLOT_F = 0,
    MRT_SLOT_B,
    MRT_SLOT_W,
    MRT_SLOT_PHASE_COUNT
} mrt_slot_phase;

typedef struct mrt_slot {
    int stage, chunk, micro;
    mrt_slot_phase phase;
    double start_s, end_s; /* the last replay's */
} mrt_slot;

typedef struct mrt_schedule {
    mrt_schedule_kind kind;
    int stages, virtual_stages, microbatches;
    int chunks;     /* stages * virtual_stages */
    int phases;     /* 2 (F, B); 3 (F, B, W) for zero_bubble */
    int per_stage;  /* slots per stage: virtual_stages * microbatches *
                       phases */
    mrt_slot *slot; /* [stages * per_stage]: stage k's in the order it
                       runs them, from k * per_stage */
    int *index;     /* [chunks * microbatches * phases]: the slot of
                       (chunk, micro, phase) (mrt_schedule_find) */
    int *in_flight; /* [stages]: activations in flight, the most
                       (chunk, micro) pairs of the stage whose F has run
                       and whose last backward slot (B; W with
                       zero_bubble) has not: gpipe m, 1f1b p − k (at most
                       m), counted in chunks (a chunk holds 1/v of the
                       stage's layers) */
    /* The replay's (mrt_schedule_replay; mrt_schedule_create replays
     * with every slot 1 long and no p2p time): */
    double makespan_s;
    double *busy_s;         /* [stages]: the sum of its slots' times */
    int busiest;            /* the stage with the most busy time (the
                               first of equals up to 1e-12 relative) */
    double bubble_fraction; /* idle over ideal for the busiest stage:
                               (makespan - busy) / busy */
    int nops;               /* a plan's schedule (mrt_schedule_plan): */
    int *op_slot;           /* [nops] the slot each op of the plan is in, -1:
                      none (the update); NULL for a schedule of no plan */
    double *times; /* [4 * chunks]: the last replay's durations, per chunk
                      c: f at 4c, b, w, p2p (all 1 and 0 with unit
                      times) */
} mrt_schedule;

/* The durations of a replay, per chunk, for one microbatch. */
typedef struct mrt_schedule_times {
    const double *f;     /* [chunks] forward */
    const double *b;     /* [chunks] backward (zero_bubble: input gradient) */
    const double *w;     /* [chunks] weight gradient, or NULL: none (0);
                        other schedules add it to b */
    const double *p2p_s; /* [chunks]: chunk c's output to chunk c + 1,
                            and its gradient back (each way); NULL: 0 */
} mrt_schedule_times;

/* The schedule of kind for p stages, v virtual stages per stage and m
 * microbatches, replayed with unit times, into *out (the caller's:
 * mrt_schedule_destroy).  Errors (MRT_E_SPEC, no position: the caller
 * checks what the user wrote first, with its position): p, v or m below
 * 1; v > 1 but with interleaved; interleaved with m not a multiple of
 * p; zero_bubble with v > 1. */
mrt_status mrt_schedule_make(mrt_schedule_kind kind, int stages,
                             int virtual_stages, int microbatches,
                             mrt_schedule **out, mrt_error *err);
void mrt_schedule_destroy(mrt_schedule *s);
/* mrt_schedule_make's errors, in file at `at` (what the user wrote). */
mrt_status mrt_schedule_check(mrt_schedule_kind kind, int stages,
                              int virtual_stages, int microbatches,
                              const char *file, mrt_mark at, mrt_error *err);

/* The slot index of (chunk, micro, phase); W with a schedule of 2
 * phases: its B. */
int mrt_schedule_find(const mrt_schedule *s, int chunk, int micro,
                      mrt_slot_phase phase);

/* Replays s with times t: every slot's start_s and end_s (as early as
 * its dependencies and its stage's order allow), the makespan, the busy
 * times and the bubble.  MRT_E_NOMEM only. */
mrt_status mrt_schedule_replay(mrt_schedule *s, const mrt_schedule_times *t,
                               mrt_error *err);

/* The slots of every stage in one order, by the last replay's start
 * times, ties by stage (malloc'd, [stages * per_stage] slot indices;
 * NULL when out of memory). */
int *mrt_schedule_linear(const mrt_schedule *s);

/* Each op's slot (schedule_ops.c): chunk[i] (-1: none, the update and
 * the ops outside the microbatches) and phase[i], from the ops' stages
 * and chunks as the planner assigned them (op_chunk -1 or NULL: the
 * forward op's, else the stage's); the caller's arrays of nops.
 * MRT_E_NOMEM only. */
mrt_status mrt_schedule_op_slots(const mrt_spec *s, mrt_schedule_kind kind,
                                 const int *op_stage, const int *op_chunk,
                                 int *chunk, mrt_slot_phase *phase,
                                 mrt_error *err);

/* A pipelined plan's schedule (schedule_plan.c): p->schedule replayed
 * with the modeled times of the block's steps, p->pipe.bubble_fraction
 * (p2p time left out), p->totals.time_s (the makespan, and the update and
 * the ops outside the block of the stage with the most); nothing
 * for a plan that is not pipelined.  Call it once the steps are costed
 * and totalled. */
mrt_status mrt_schedule_plan(mrt_plan *p, const mrt_spec *s, mrt_error *err);

/* A pipelined plan's schedule in the printed plan (after the totals: the
 * figures and a time x stage grid) and as the JSON object's "pipeline"
 * member (",\n \"pipeline\": {...}"); nothing when not pipelined
 * (schedule_print.c). */
void mrt_schedule_print(const mrt_plan *p, FILE *f);
void mrt_schedule_print_json(const mrt_plan *p, FILE *f);

#endif
