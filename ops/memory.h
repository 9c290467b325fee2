/*
 * memory.h — a plan's memory by kind (meshrt.h's mrt_memory_kind): the
 * classification of its values (memory_kind.c) and the walk over its
 * steps that totals what is live by kind (memory_timeline.c), which the
 * peak, the printers, `compare` and the pictures all read.
 */
#ifndef MRT_MEMORY_H
#define MRT_MEMORY_H

#include <stdint.h>
#include <stdio.h>

#include "plan.h"

/* Sets every value's kind (plan.h's mrt_value.kind) from the spec the
 * plan was made from; needs the lifetimes (def).  MRT_E_NOMEM. */
mrt_status mrt_memory_classify(mrt_plan *p, const mrt_spec *s);

/* What the walk over the steps found, for the values and steps of one
 * stage (-1: all). */
typedef struct mrt_memory_walk {
    int64_t peak;                         /* the most live at one step */
    int64_t by_kind[MRT_MEM_KIND_COUNT];  /* of it */
    int peak_step;                        /* 0..nsteps */
    int64_t scratch_max;                  /* the most MPI scratch at once */
    int64_t values_max;                   /* the most value bytes live at
                                             once (the arena's floor) */
    int64_t kind_max[MRT_MEM_KIND_COUNT]; /* the most of each kind live at
                                             once (at any step: a
                                             pipeline's activations in
                                             flight peak apart from the
                                             total) */
    int64_t (*rows)[MRT_MEM_KIND_COUNT];  /* NULL, or [nops]: per op, the
                                             bytes at its step with most */
} mrt_memory_walk;

/* Walks the plan's steps (after mrt_planning_finish has set lifetimes,
 * workspaces and kinds); fills w (w->rows: the caller's array or NULL).
 * MRT_E_NOMEM. */
mrt_status mrt_memory_walk_plan(const mrt_plan *p, int stage,
                                mrt_memory_walk *w);

/* Plans of at most this many values are packed twice (memory_pack.c). */
#define MRT_PACK_MAX_VALUES 4000
/* Packs the values by size into an arena (each rounded up to align):
 * their offsets into off[nvalues]; returns the arena's bytes, or -1 when
 * out of memory.  Needs the lifetimes. */
int64_t mrt_memory_pack(const mrt_plan *p, int64_t align, int64_t *off);

/* The breakdown as `plan` prints it after the totals (memory_print.c),
 * and as the value of `plan --json`'s "memory" key. */
void mrt_memory_print(const mrt_plan *p, FILE *f);
void mrt_memory_print_json(const mrt_plan *p, FILE *f);

#endif
