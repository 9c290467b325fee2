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
 * `bytes` is what each rank hands to the MPI call: the element count of
 * the send buffer times the element size (the whole local input value in
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

#include "classify.h"
#include "cost.h"
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
    int tensor;        /* spec tensor id */
    mrt_layout layout;
    int64_t local[MRT_MAX_DIMS]; /* extents of the largest shard (rank
                          0's; with uneven splits other ranks may hold
                          less: mrt_layout_shard_shape_at) */
    int64_t count;     /* elements of the largest shard (memory and costs
                          are sized for it) */
    int made_by;       /* the op whose step made it; -1 for an input */
    int prev;          /* the value made before it for the same tensor,
                          or -1 (the plan's last_value[tensor] heads the
                          list) */
    /* Filled by mrt_plan_finish: */
    int def;           /* the step that makes it; -1 for an input */
    int last_use;      /* the last step that reads it; nsteps for inputs
                          and outputs, which live through the program */
    int64_t offset;    /* where it lives in the run's arena, bytes */
} mrt_value;

typedef struct mrt_step {
    mrt_step_kind kind;
    int op;            /* spec op index */
    int in, in2;       /* value ids (in2 = -1 unless a 2-input einsum) */
    int out;           /* value id */
    int dim, dim2;     /* dim indices in the input's layout (-1: none) */
    unsigned axes;     /* mesh axes of the collective or slice */
    int64_t group;     /* ranks per group (1 for local steps) */
    int64_t bytes;     /* per rank handed to MPI (0 for local steps):
                          the largest rank's */
    int64_t bytes_total; /* handed to MPI by all ranks together */
    double flops;      /* per rank (EINSUM) */
    mrt_einsum_shape cls; /* EINSUM only */
    mrt_comm_cost cost;   /* collectives: modeled wire bytes, messages */
    double time_s;     /* modeled: collective, kernel or copy time */
    int64_t workspace; /* scratch bytes the step needs while it runs */
    int64_t mpi_scratch; /* collectives: what MPI allocates meanwhile */
    mrt_map_fn fn;     /* MAP */
    double c;          /* MAP: the function's constant */
    int hot;           /* MAP one_hot: the class dim's index in out */
    int max;           /* ALLREDUCE: the maximum, not the sum */
    int wait;          /* collectives run in the background: the step
                          before which it completes (nsteps: the end);
                          -1: blocking (overlap.c) */
} mrt_step;

/* One alternative weighed for an op (kept with explain). */
typedef struct mrt_alt {
    char exec[256];    /* the execution layout, e.g. "batch/data k/model" */
    char keep[64];     /* pending sums left for the consumer, or "" */
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
} mrt_plan_op;

struct mrt_plan {
    char spec_path[PATH_MAX];
    uint64_t program;         /* mrt_program_hash of the spec it plans */
    mrt_mesh mesh;
    mrt_dtype dtype;
    int elsize;
    int ndims;
    char **dim_names;         /* [ndims], owned */
    int ntensors;
    int ninputs;              /* the inputs: tensors input[0..ninputs) */
    int *input;
    char (*tensor_name)[MRT_NAME_MAX];
    int *tensor_value;        /* [ntensors] value holding each tensor */
    int *last_value;          /* [ntensors] the newest value of each
                                 tensor, or -1 (see mrt_value.prev) */
    int *producer;            /* [ntensors] the op making it, -1: input */
    unsigned char *reshard;   /* [ntensors] a parameter whose copies moved
                                 in the forward phase are not reused by
                                 later phases (mrt_spec_tensor.reshard) */
    int nvalues, cap_values;
    mrt_value *value;
    int nsteps, cap_steps;
    mrt_step *step;
    int nops;
    mrt_plan_op *op;
    int noutputs;
    int *output;              /* tensor ids */
    int64_t comm_bytes;       /* running totals per rank */
    double flops;
    mrt_planner planner;
    mrt_profile profile;
    int explain;
    int blocking;             /* no collective runs in the background */
    int fell_back;            /* auto: the fixed rule beat the search */
    struct mrt_search_memo *memo; /* while planning: lowerings already
                                     found for identical ops */
    struct mrt_relayout_memo *relayout_memo; /* while planning: relayouts
                                     already searched (relayout_memo.c) */
    char ignored[256];        /* meshtf: tensors whose own layouts it
                                 replaced by the global rules */
    int nalts, cap_alts;
    mrt_alt *alt;
    /* The first figure found not to fit in 64 bits (bytes handed to MPI,
     * memory), and the tensor it was found at, whose spec node
     * mrt_plan_create_with reports it at; -1: none. */
    int overflow_tensor;
    const char *overflow_what;
    /* Filled by mrt_plan_finish: */
    mrt_plan_totals totals;
    int64_t axis_bytes[1u << MRT_MAX_AXES]; /* bytes by axis set */
    int64_t arena_bytes;      /* the run's buffer for every value */
    int64_t live_peak;        /* the most bytes live at one step (values,
                                 workspace, MPI scratch); the arena is at
                                 least the values' part of it, and
                                 totals.peak_memory = arena + workspace +
                                 the most MPI scratch at once */
    int64_t max_workspace;    /* the largest step workspace */
};

/* A point in the plan to come back to: candidates are emitted for real,
 * costed, and rolled back. */
typedef struct mrt_plan_mark {
    int nsteps, nvalues;
    int64_t comm_bytes;
    double flops;
    int overflow_tensor;
    const char *overflow_what;
} mrt_plan_mark;
mrt_plan_mark mrt_plan_get_mark(const mrt_plan *p);
void mrt_plan_rollback(mrt_plan *p, mrt_plan_mark m);
/* Modeled seconds of the steps since m. */
double mrt_plan_time_since(const mrt_plan *p, mrt_plan_mark m);
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
/* 1 if the collective step moves blocks of unequal sizes between the
 * ranks of its groups (an all-gather, reduce-scatter or all-to-all of a
 * dim split unevenly): the executor then gives every peer its own count
 * and datatype. */
int mrt_step_is_uneven(const mrt_plan *p, const mrt_step *s);
/* Marks the collectives that may run in the background (overlap.c);
 * with `blocking`, none. */
void mrt_plan_schedule_overlap(mrt_plan *p, int blocking);
/* Lifetimes, arena offsets, workspace, totals and per-axis bytes. */
mrt_status mrt_plan_finish(mrt_plan *p, mrt_error *err);
/* The totals and per-axis bytes only: what the auto planner compares
 * before it finishes the plan it keeps. */
void mrt_plan_tally(mrt_plan *p);

/* Records that figure `what` of the plan does not fit in 64 bits at
 * tensor (the first such finding wins); planning then fails with an error
 * at the tensor's spec node. */
void mrt_plan_overflow(mrt_plan *p, int tensor, const char *what);
#define MRT_PLAN_OVERFLOW_MEMORY "memory per rank (the sum of its buffers)"

/* Appends a value with layout l (partial allowed) for tensor; returns its
 * id, or -1 when out of memory. */
int mrt_plan_add_value(mrt_plan *p, int tensor, const mrt_layout *l);
/* Appends a step (copied); fills its bytes (from the input value, for
 * collectives) and its modeled cost.  Returns its index or -1. */
int mrt_plan_add_step(mrt_plan *p, const mrt_step *s);

/* Emits the steps that move value `from` to layout `to` (same dims, same
 * order).  to->partial must be a subset of from's pending sums: those stay
 * pending, the others are resolved.  With `allreduce_only`, pending sums
 * are all-reduced and then sliced, never reduce-scattered (Mesh-TF).
 * Returns the id of the value in layout `to` (== from when nothing
 * moves), or -1 when out of memory. */
int mrt_relayout_emit(mrt_plan *p, int op, int from, const mrt_layout *to,
                      int allreduce_only);

/* One move of a relayout: the step to emit and the layout after it. */
typedef struct mrt_move {
    mrt_step_kind kind;
    int dim, dim2;
    unsigned axes;
    mrt_layout after;
} mrt_move;
#define MRT_MAX_MOVES 64
/* The modeled seconds of move m from layout `before`. */
double mrt_move_time(const mrt_plan *p, const mrt_layout *before,
                     const mrt_move *m);
/* relayout_search.c: the cheapest sequence of at most max moves from
 * `from` to `to` (both without axes of size 1, to's pending sums a subset
 * of from's), into moves[]; returns how many (*cost: their modeled time),
 * or -1 if it found none. */
int mrt_relayout_search(const mrt_plan *p, const mrt_layout *from,
                        const mrt_layout *to, mrt_move moves[], int max,
                        double *cost);

/* relayout_memo.c: the answer kept for the pair (from, to): how many
 * moves, copied into moves[] (-1: relayout.c's greedy moves), or -2 when
 * there is none. */
int mrt_relayout_memo_get(mrt_plan *p, const mrt_layout *from,
                          const mrt_layout *to, mrt_move moves[]);
/* Keeps the answer for (from, to): n moves, or -1 for the greedy ones. */
void mrt_relayout_memo_put(mrt_plan *p, const mrt_layout *from,
                           const mrt_layout *to, const mrt_move moves[],
                           int n);
void mrt_relayout_memo_destroy(struct mrt_relayout_memo *m);

/* ---- exchange.c: ALLTOALL_GROUP ---- */
/* Coordinates of member j of the group over mask that c belongs to. */
void mrt_exchange_member(const mrt_mesh *m, unsigned mask, const int64_t c[],
                         int64_t j, int64_t out[]);
/* The box where the block of the rank at src under layout a meets the
 * block of the rank at dst under b: its extents (ext), where it starts in
 * src's shard (at_src) and in dst's (at_dst); returns its elements (0:
 * the blocks do not meet). */
int64_t mrt_exchange_box(const mrt_layout *a, const mrt_layout *b,
                         const mrt_mesh *m, const int64_t src[],
                         const int64_t dst[], int64_t at_src[],
                         int64_t at_dst[], int64_t ext[]);
/* The modeled cost of an ALLTOALL_GROUP from a to b over axes: the most
 * bytes a rank sends to others, to the most peers. */
mrt_comm_cost mrt_exchange_cost(const mrt_profile *p, const mrt_mesh *m,
                                const mrt_layout *a, const mrt_layout *b,
                                unsigned axes, int elsize);
/* The group of an ALLTOALL_GROUP from a to b: the axes of the dims that
 * differ (0: none); ~0u when no such step goes from a to b (the axes used,
 * or the pending sums, differ). */
unsigned mrt_exchange_axes(const mrt_layout *a, const mrt_layout *b);

/* The execution layout of an einsum: for each dim of the op, the mesh
 * axes that split it while the local kernel runs.  No axis twice. */
typedef struct mrt_exec_layout {
    int ndims;
    int dim[MRT_MAX_EINSUM_DIMS];    /* spec dim ids */
    int64_t size[MRT_MAX_EINSUM_DIMS];
    int naxes[MRT_MAX_EINSUM_DIMS];
    int axes[MRT_MAX_EINSUM_DIMS][MRT_MAX_AXES];
} mrt_exec_layout;

/* One way to lower an einsum: its execution layout, which pending sums
 * of each input ride through the kernel (the product is linear in each
 * input), and which pending sums of the result are left for its consumer
 * instead of being resolved into the output's home layout. */
typedef struct mrt_lowering {
    mrt_exec_layout exec;
    unsigned keep_in[2];
    unsigned keep_out;
} mrt_lowering;

/* How the planner picks lowerings. */
typedef enum mrt_strategy {
    MRT_STRATEGY_RULES = 0, /* ops/choose.c's rule, reduce-scatter allowed */
    MRT_STRATEGY_MESHTF,    /* global rules, all-reduce only */
    MRT_STRATEGY_SEARCH,    /* every execution layout, costed (search.c) */
    MRT_STRATEGY_COUNT
} mrt_strategy;

/* Plans every op of s with one fixed strategy (mrt_plan_create's auto
 * planner runs SEARCH and RULES and keeps the cheaper). */
mrt_status mrt_plan_create_with(const mrt_spec *s, const mrt_plan_options *opt,
                                mrt_strategy strategy, mrt_plan **out,
                                mrt_error *err);

/* The op's dims (output dims, then the inputs' others), unsplit. */
void mrt_exec_init(const mrt_plan *p, const mrt_spec *s, int op,
                   mrt_exec_layout *e);
/* Index of spec dim `dim` in e, or -1. */
int mrt_exec_find(const mrt_exec_layout *e, int dim);
/* "batch/data d_ff/model" */
char *mrt_exec_str(const mrt_plan *p, const mrt_exec_layout *e, char *buf,
                   int size);
/* The rule (ops/choose.c): summed dims keep their inputs' split, output
 * dims take their home layout's. */
void mrt_choose_rules(const mrt_plan *p, const mrt_spec *s, int op,
                      const mrt_layout *home, mrt_exec_layout *e);
/* Mesh-TensorFlow: every dim takes its global rule. */
void mrt_choose_meshtf(const mrt_plan *p, const mrt_spec *s, int op,
                       mrt_exec_layout *e);
/* Calls visit for every valid execution layout of the op's dims (each
 * axis of size > 1 on at most one dim, in any order; sizes divisible),
 * until visit returns nonzero (which is then returned). */
int mrt_exec_enumerate(const mrt_plan *p, const mrt_exec_layout *dims,
                       int (*visit)(void *ctx, const mrt_exec_layout *e),
                       void *ctx);

/* Emits one lowering of op: input moves, kernel, result move.  The
 * op's output tensor then holds the new value. */
mrt_status mrt_lower_emit(mrt_plan *p, const mrt_spec *s, int op,
                          const mrt_layout *home, const mrt_lowering *lw,
                          int allreduce_only, mrt_error *err);
/* Lowers one einsum op with the given strategy. */
mrt_status mrt_lower_einsum(mrt_plan *p, const mrt_spec *s, int op,
                            const mrt_layout *home, mrt_strategy strategy,
                            mrt_error *err);
/* The search's memory of ops already lowered: an op whose inputs sit in
 * the same layouts as an earlier one's, with the same shapes and home,
 * gets the same lowering without a new search (repeated layers). */
struct mrt_search_memo *mrt_search_memo_create(void);
void mrt_search_memo_destroy(struct mrt_search_memo *m);
/* Lowers a map, reduce_max or rename op (lower_map.c): its inputs
 * moved to the output's home layout (reduce_max: the reduced dims keep
 * their split, and an all-reduce of the maximum follows), then the local
 * step.  A map linear in a pending sum keeps it pending (resolved at once
 * unless may_defer). */
mrt_status mrt_lower_local(mrt_plan *p, const mrt_spec *s, int op,
                           const mrt_layout *home, int allreduce_only,
                           int may_defer, mrt_error *err);
/* SEARCH: tries every lowering (search.c), keeps the cheapest. */
mrt_status mrt_search_einsum(mrt_plan *p, const mrt_spec *s, int op,
                             const mrt_layout *home, int may_defer,
                             mrt_error *err);

#endif
