/*
 * plan.h — the plan: what every rank does, as plain data.
 *
 * The planner (ops/) turns each op of a spec into steps over *values*.
 * A value is one tensor in one layout at one point of the program; every
 * step reads one or two values and makes a new one, so the plan is a
 * straight-line program in SSA form that the executor (runtime/) walks
 * from first step to last.  Nothing here calls MPI; a plan can be built,
 * printed and compared for a mesh of any size.
 *
 * This header is what the plan's readers see (the runtime, the printers,
 * the getters, layout search): the plan's data and what a step does.
 * How a plan is built (the planning context, the lowerings, the moves
 * between layouts) is ops/planning.h's.
 *
 * Step kinds and what they do to the layout of their input value:
 *   EINSUM          local kernel; the output is a pending sum (partial)
 *                   over the axes of split summed dims
 *   SLICE           appends axis to the split of `dim` (local, no bytes)
 *   ALLGATHER       removes axis, the minor end of `dim`'s split
 *   ALLTOALL        moves axis from the minor end of `dim` to the minor
 *                   end of `dim2`
 *   ALLREDUCE       resolves the pending sum over `axes`
 *   REDUCE_SCATTER  resolves the pending sum over axis into a split of dim
 *   MAP             local elementwise function (fn, c) of one or two
 *                   inputs, broadcast by dim name
 *   REDUCE_MAX      local maximum over the dims the output lacks; the
 *                   result is a pending maximum over `axes`, which the
 *                   ALLREDUCE (op max) right after it resolves
 *   RENAME          local: the same shard under another dim name
 *   PERMUTE         reorders the nesting of the axes that split `dim`
 *                   (e.g. [data, model] -> [model, data]): every rank
 *                   sends its whole shard to one rank of the group over
 *                   `axes` (an MPI_Alltoallv with one peer; reported as
 *                   an alltoall)
 *   ALLTOALL_GROUP  any move between two layouts that split over the same
 *                   axes (so the shard keeps its size): one all-to-all over
 *                   the group of the axes of the dims that change (`axes`),
 *                   each rank sending each peer the part of its shard the
 *                   peer holds afterwards (ops/exchange.c; an MPI_Alltoallw,
 *                   reported as an alltoall).  Moves several axes at once
 *                   (l/[y, z] -> j/[y, z]) and mixes of moves and reorders
 *   GATHER          an embedding's local lookup (in: table, in2: ids; dim:
 *                   the vocab dim's index in the table): the rows of the
 *                   rank's vocab block for the ids inside it, zeros for
 *                   the others, so the result is a pending sum over the
 *                   vocab's axes (as the einsum onehot(ids) . table would
 *                   be); no flops, no one-hot tensor
 *   SCATTER_ADD     its gradient (in: ids, in2: the output's gradient;
 *                   dim: the vocab dim's index in out): the rows of the
 *                   gradient added at the ids inside the rank's vocab
 *                   block; a pending sum over the axes that split ids
 *   SENDRECV        a pipeline's point-to-point transfer: the value `in`
 *                   made on stage `from_stage` is sent by each of its
 *                   ranks to the rank of stage `stage` with the same
 *                   coordinates on every other axis (along the pipe axis,
 *                   `axes`), in the same layout; `bytes` is the sender's
 *                   shard (the receiver hands MPI nothing to send)
 * `bytes` is what each rank hands to the MPI call: the element count of
 * the send buffer times the element size of its value (4 for an int32
 * value, else the plan's dtype's; the whole local input value in
 * every kind of collective).  With uneven splits (layout.h) shards differ
 * from rank to rank: `bytes` is then the largest rank's figure (rank 0
 * holds the largest block of every dim, so it is rank 0's, and the sum of
 * the steps' `bytes` is rank 0's total), `bytes_total` the sum over all
 * ranks, and mrt_step_rank_bytes any one rank's.
 */
#ifndef MRT_PLAN_H
#define MRT_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "classify.h"
#include "cost.h"
#include "exchange.h"
#include "layout.h"
#include "meshrt.h"
#include "spec.h"

typedef enum mrt_step_kind {
    MRT_STEP_EINSUM = 0,
    MRT_STEP_SLICE,
    MRT_STEP_ALLGATHER,
    MRT_STEP_ALLTOALL,
    MRT_STEP_ALLREDUCE,
    MRT_STEP_REDUCE_SCATTER,
    MRT_STEP_PERMUTE,
    MRT_STEP_MAP,
    MRT_STEP_REDUCE_MAX,
    MRT_STEP_RENAME,
    MRT_STEP_ALLTOALL_GROUP,
    MRT_STEP_GATHER,
    MRT_STEP_SCATTER_ADD,
    MRT_STEP_SENDRECV,
    MRT_STEP_KIND_COUNT
} mrt_step_kind;

/* "einsum", "slice", "allgather", "alltoall", "allreduce",
 * "reduce_scatter" (PERMUTE is named "alltoall": that is its MPI call). */
const char *mrt_step_kind_name(mrt_step_kind k);
/* Its own name: "permute" and "alltoall_group" where the printed plan
 * says "alltoall" (mrt_plan_get_step's kind). */
const char *mrt_step_kind_id(mrt_step_kind k);
/* 1 for the kinds that call MPI. */
int mrt_step_is_collective(mrt_step_kind k);

typedef struct mrt_value {
    int tensor; /* spec tensor id */
    mrt_layout layout;
    int64_t local[MRT_MAX_DIMS]; /* extents of the largest shard (rank
                          0's; with uneven splits other ranks may hold
                          less: mrt_layout_shard_shape_at) */
    int64_t count;   /* elements of the largest shard (memory and costs
                          are sized for it) */
    mrt_dtype dtype; /* its element type: its tensor's (the plan's
                          dtype, or MRT_I32 for ids and labels) */
    int elsize;      /* bytes per element of dtype */
    int made_by;     /* the op whose step made it; -1 for an input */
    int prev;        /* the value made before it for the same tensor,
                          or -1 (the planning context's last_value[tensor]
                          heads the list) */
    /* Filled by mrt_planning_finish: */
    int def;        /* the step that makes it; -1 for an input */
    int last_use;   /* the last step that reads it; nsteps for inputs
                          and outputs, which live through the program */
    int64_t offset; /* where it lives in the run's arena, bytes */
    int alias_of;   /* 1 + the value whose buffer it shares (an
                          in-place update: ops/inplace.c), 0: none; it
                          then adds no bytes of its own */
    int kind;       /* its mrt_memory_kind (memory_kind.c) */
    int stage;      /* the pipeline stage whose ranks hold it; -1: every
                          stage (not pipelined, or an input every stage
                          makes for itself) */
    int saved_by;   /* 1 + the block whose instance 0 keeps it for the
                          backward pass (an activation: plan_blocks.c),
                          0: none */
} mrt_value;

typedef struct mrt_step {
    mrt_step_kind kind;
    int op;               /* spec op index */
    int in, in2;          /* value ids (in2 = -1 unless a 2-input einsum) */
    int out;              /* value id */
    int dim, dim2;        /* dim indices in the input's layout (-1: none) */
    unsigned axes;        /* mesh axes of the collective or slice */
    int64_t group;        /* ranks per group (1 for local steps) */
    int64_t bytes;        /* per rank handed to MPI (0 for local steps):
                          the largest rank's */
    int64_t bytes_total;  /* handed to MPI by all ranks together */
    double flops;         /* per rank (EINSUM) */
    mrt_einsum_shape cls; /* EINSUM only */
    mrt_comm_cost cost;   /* collectives: modeled wire bytes, messages */
    double time_s;        /* modeled: collective, kernel or copy time */
    int64_t workspace;    /* scratch bytes the step needs while it runs */
    int64_t mpi_scratch;  /* collectives: what MPI allocates meanwhile */
    mrt_map_fn fn;        /* MAP */
    double c;             /* MAP: the function's constant */
    int hot;              /* MAP one_hot: the class dim's index in out */
    int max;              /* ALLREDUCE: the maximum, not the sum */
    int hier;             /* ALLREDUCE: hierarchical over the nodes
                          (reduce-scatter inside each node, all-reduce
                          across, all-gather inside: cost.h); `bytes`
                          is then what its three calls hand to MPI */
    int64_t bytes_inter;  /* of `bytes`, handed to calls whose group
                          crosses nodes (the profile's nodes:) */
    int wait;             /* collectives run in the background: the step
                          before which it completes (nsteps: the end);
                          -1: blocking (overlap.c) */
    int stage;            /* the pipeline stage whose ranks run it; -1:
                          every rank.  SENDRECV: the receiving stage */
    int from_stage;       /* SENDRECV: the sending stage; else -1 */
} mrt_step;

/* One alternative weighed for an op (kept with explain). */
typedef struct mrt_alt {
    char exec[256]; /* the execution layout, e.g. "batch/data k/model" */
    char keep[64];  /* pending sums left for the consumer, or "" */
    double time_s, comm_time_s, kernel_time_s;
    int64_t comm_bytes;
    int nsteps;
} mrt_alt;

typedef struct mrt_plan_op {
    mrt_phase phase;        /* forward, backward or update */
    int user;               /* the spec op it comes from (from 1) */
    const char *what;       /* "einsum", a map's function, "reduce_max",
                               "rename" */
    int first_step, nsteps; /* the op's steps, contiguous */
    int out_value;          /* its result (home layout, or pending sums) */
    int64_t comm_bytes;
    double flops, time_s, comm_time_s;
    int nin, in_value[2];     /* the inputs as the op found them */
    double lower_bound_bytes; /* matmul-like ops: the communication lower
                                 bound per rank; -1 when not applicable */
    int bound_replicated;     /* an input started replicated, so the
                                 bound (one copy of each operand) does
                                 not bind this op */
    int first_alt, nalts;     /* explain: alternatives, best first */
    int block, layer;         /* the spec op's block instance (spec.h),
                                 or -1: the printed plan summarizes
                                 instances that plan alike */
    int recomputed;           /* a forward op re-run in the backward
                                 pass (its block's recompute:) */
    int stage;                /* its pipeline stage, -1: not pipelined */
    int chunk;                /* its virtual stage (0 .. stages *
                                 virtual_stages - 1), -1: none */
} mrt_plan_op;

/* A repeated block's activations (plan_blocks.c): what its forward pass
 * keeps for the backward pass, bytes per rank (rank 0's shards).  An
 * activation is a value made by a forward step (or a dropout mask, an
 * input) of a tensor of the block, read by a step of the backward pass;
 * `before` counts, in a recomputed block, the re-run's values read by
 * the backward ops in their place (what keeping them would cost). */
typedef struct mrt_plan_block {
    int count;           /* instances */
    int recompute;       /* its forward ops re-run in the backward pass */
    double rerun_flops;  /* per rank, of those re-runs (every instance) */
    int64_t saved_after; /* the activations saved, every instance */
    int64_t saved_before;
    int64_t layer_after; /* of instance 0 */
    int64_t layer_before;
} mrt_plan_block;

/* A pipeline (a block's repeat dim split over a mesh axis: ops/
 * pipeline.c): its stages, the microbatches of train:, the schedule. */
typedef struct mrt_plan_pipeline {
    int axis;           /* the pipe mesh axis, -1: none */
    int stages;         /* the axis's size; below 2: not pipelined (a
                           zeroed plan is not) */
    int microbatches;   /* train.microbatches */
    int virtual_stages; /* train.virtual_stages */
    mrt_schedule_kind schedule;
    int64_t p2p_bytes;      /* the SENDRECV steps' bytes, summed */
    double bubble_fraction; /* idle time over ideal time (sched) */
    int peak_stage;         /* the stage whose ranks hold the most at
                               their peak (plan_finish.c) */
} mrt_plan_pipeline;

struct mrt_plan {
    char spec_path[PATH_MAX];
    uint64_t program; /* mrt_program_hash of the spec it plans */
    mrt_mesh mesh;
    mrt_dtype dtype;
    int elsize;
    int ndims;
    char **dim_names; /* [ndims], owned */
    int ntensors;
    int ninputs; /* the inputs: tensors input[0..ninputs) */
    int *input;
    char (*tensor_name)[MRT_NAME_MAX];
    int *tensor_value; /* [ntensors] value holding each tensor */
    int nblocks;       /* the spec's repeated blocks: their names */
    char (*block_name)[MRT_NAME_MAX];
    mrt_plan_block *blocks; /* [nblocks] their activations, filled by
                               mrt_planning_finish with train: (else NULL) */
    int nvalues;
    mrt_value *value;
    int nsteps;
    mrt_step *step;
    int nops;
    mrt_plan_op *op;
    int noutputs;
    int *output;        /* tensor ids */
    int64_t comm_bytes; /* totals per rank */
    double flops;
    mrt_planner planner;
    mrt_profile profile;
    int fell_back;     /* auto: a fixed rule beat the cheapest */
    char ignored[256]; /* meshtf: tensors whose own layouts it
                                 replaced by the global rules */
    int nalts;         /* explain: the alternatives weighed */
    mrt_alt *alt;
    /* Filled by mrt_planning_finish: */
    mrt_plan_totals totals;
    int64_t axis_bytes[1u << MRT_MAX_AXES]; /* bytes by axis set */
    int64_t arena_bytes;    /* the run's buffer for every value */
    int64_t live_peak;      /* the most bytes live at one step (values,
                                 workspace, MPI scratch); the arena is at
                                 least the values' part of it, and
                                 totals.peak_memory = arena + workspace +
                                 the most MPI scratch at once */
    int64_t max_workspace;  /* the largest step workspace */
    int alias_of;           /* 1 + the value whose buffer it shares (an
                          in-place update: ops/inplace.c), 0: none; it
                          then adds no bytes of its own */
    int64_t device_memory;  /* bytes of one rank's memory (the option's,
                              else the profile's); 0: none given */
    mrt_plan_pipeline pipe; /* pipe.stages < 2: not pipelined */
    mrt_schedule *schedule; /* a pipelined plan's, replayed with the
                               modeled times (owned); NULL: none */
};

/* 1 if plans a and b do the same work: the same steps on the same
 * values, laid out alike (plan_same.c); two partitionings that lower to
 * one plan. */
int mrt_plan_same_work(const mrt_plan *a, const mrt_plan *b);

/* Plan p priced again on its profile, whose `products:` and collective
 * rows have changed since it was planned (runtime/validate.c times them
 * again between its rounds of runs): each einsum's and collective's
 * time, then the ops' and the plan's totals and, pipelined, its
 * schedule replayed (plan_reprice.c).  The steps stay those p runs.
 * s: the spec p was planned from. */
mrt_status mrt_plan_reprice(mrt_plan *p, const mrt_spec *s, mrt_error *err);

/* Fills p->blocks from the plan's steps and spec s (plan_blocks.c);
 * MRT_E_NOMEM when out of memory. */
mrt_status mrt_plan_blocks_tally(mrt_plan *p, const mrt_spec *s);
/* The printed lines of the recomputed blocks, and the JSON array
 * "blocks" (nothing without p->blocks). */
void mrt_plan_blocks_print(const mrt_plan *p, FILE *f);
void mrt_plan_blocks_json(const mrt_plan *p, FILE *f);
/* 1 if the rank at coords runs step s: a step of every rank, of its
 * pipeline stage, or a SENDRECV it sends. */
int mrt_step_on_rank(const mrt_plan *p, const mrt_step *s,
                     const int64_t coords[]);
/* 1 if the rank at coords holds value v (every stage's, or its own). */
int mrt_value_on_rank(const mrt_plan *p, int v, const int64_t coords[]);

/* 1 if the collective step's blocks are strided in memory (every
 * all-to-all; an all-gather or reduce-scatter of a dim that is not the
 * outermost of the ones larger than 1). */
int mrt_step_is_strided(const mrt_plan *p, const mrt_step *s);
/* 1 if the collective step needs the workspace while it runs (a strided
 * reduce-scatter, which receives the blocks it sums there). */
int mrt_step_needs_packing(const mrt_plan *p, const mrt_step *s);
/* Bytes the rank at coords hands to MPI in step s (0 for local steps). */
int64_t mrt_step_rank_bytes(const mrt_plan *p, const mrt_step *s,
                            const int64_t coords[]);
/* Of those, the bytes handed to calls whose group crosses nodes. */
int64_t mrt_step_rank_bytes_inter(const mrt_plan *p, const mrt_step *s,
                                  const int64_t coords[]);
/* The sum of the steps' bytes_inter: rank 0's bytes across nodes. */
int64_t mrt_plan_bytes_inter(const mrt_plan *p);
/* 1 if step t is a product of two inputs, whose shape, form and
 * compute type as BLIS meets them (with C by rows: a C stored by
 * columns makes it the transposed product) go into *r (rate 0); else 0
 * (step_cost.c).  The shape a `products:` row prices. */
int mrt_step_product(const mrt_plan *p, const mrt_step *t, mrt_product_row *r);
/* The products of plan p the profile has no `products:` row of (all:
 * every product), each once, appended to rows[0, n) when not there
 * already, up to max; returns the new count (plan_products.c). */
int mrt_plan_products(const mrt_plan *p, int all, mrt_product_row *rows, int n,
                      int max);
/* 1 if the collective step moves blocks of unequal sizes between the
 * ranks of its groups (an all-gather, reduce-scatter or all-to-all of a
 * dim split unevenly): the executor then gives every peer its own count
 * and datatype. */
int mrt_step_is_uneven(const mrt_plan *p, const mrt_step *s);

#endif
