/*
 * planning.h — building a plan (ops/): the planning context and the
 * passes that fill a plan, op by op.  Planner-internal: the plan's
 * readers see ops/plan.h only.
 *
 * The planning context (mrt_planning) exists only while a plan is being
 * made (mrt_plan_create, mrt_plan_create_with): it holds what building
 * needs and a finished plan does not — the spec, the table capacities,
 * the newest value of each tensor, the memos of lowerings and relayouts
 * already found, the first overflow, the strategy being planned.  The
 * auto planner plans the program several times (planning_auto.c) in one
 * context: the tables of a plan no longer wanted (`spare`) are filled
 * again by the next one.
 *
 * The passes, each in its file: plan_walk.c walks the ops; lower_einsum.c
 * and lower_map.c lower one op, with an execution layout from choose.c
 * (the fixed rules) or cheapest.c (every one, costed); relayout.c emits
 * the moves between layouts (relayout_path.c the cheapest sequence);
 * step_cost.c costs each step on the cost model (cost/); plan_finish.c
 * sizes the memory and the totals.
 */
#ifndef MRT_PLANNING_H
#define MRT_PLANNING_H

#include "plan.h"

/* How the planner picks lowerings. */
typedef enum mrt_strategy {
    MRT_STRATEGY_RULES = 0, /* ops/choose.c's rule, reduce-scatter allowed */
    MRT_STRATEGY_MESHTF,    /* global rules, all-reduce only */
    MRT_STRATEGY_CHEAPEST,  /* every execution layout, costed (cheapest.c) */
    MRT_STRATEGY_PINNED,    /* the layouts as given, the activations fixed
                               (choose_pinned.c): --planner rules, pin: */
    MRT_STRATEGY_COUNT
} mrt_strategy;

/* Plans every op of s with one fixed strategy (mrt_plan_create's auto
 * planner runs CHEAPEST and RULES and keeps the cheaper). */
mrt_status mrt_plan_create_with(const mrt_spec *s, const mrt_plan_options *opt,
                                mrt_strategy strategy, mrt_plan **out,
                                mrt_error *err);

typedef struct mrt_planning {
    const mrt_spec *spec;
    const mrt_plan_options *opt;
    mrt_strategy strategy; /* of the plan being built */
    int explain;           /* keep the alternatives weighed (cheapest) */
    mrt_plan *plan;        /* being built; handed out when done */
    mrt_plan *spare;       /* a plan of the spec no longer wanted, whose
                                 tables the next build fills */
    int cap_values, cap_steps, cap_alts; /* of the tables being filled */
    int *last_value;                     /* [ntensors] the newest value of each
                                 tensor, or -1 (see mrt_value.prev) */
    int *deferrable;                /* [ntensors] 1: read by exactly one later
                                 op and not an output, so a result may
                                 leave its pending sums to its consumer */
    int *lazy;                      /* [ntensors] 1: under the fixed strategies,
                                 a result left pending for its consumer
                                 (lazy_sum.c) */
    int *regather;                  /* [nops] the parameter op gathers again
                                 before it runs (regather.c), or -1; NULL:
                                 none does */
    struct mrt_cheapest_memo *memo; /* lowerings already found for
                                       identical ops (cheapest.c) */
    struct mrt_relayout_memo *relayout_memo; /* relayouts already found
                                       (relayout_memo.c) */
    /* The first figure found not to fit in 64 bits (bytes handed to MPI,
     * memory), and the tensor it was found at, whose spec node planning
     * reports it at; -1: none. */
    int overflow_tensor;
    const char *overflow_what;
    /* The pipeline (pipeline.c): each op's stage and virtual stage
     * ([nops], NULL when not pipelined), and the stage of the op being
     * planned, which its values and steps take (-1: every stage). */
    int *op_stage, *op_chunk;
    int cur_stage;
    int *param_stage; /* [ntensors] an input's stage (a parameter's, or
                         the one stage reading it), else -1 */
    int *sent;        /* [ntensors * stages] the value of a tensor sent
                         to a stage, or -1 */
} mrt_planning;

/* A context for planning s with opt (borrowed: both outlive it), or NULL
 * when out of memory. */
mrt_planning *mrt_planning_create(const mrt_spec *s,
                                  const mrt_plan_options *opt);
/* Frees the context and any plan it still holds (accepts NULL). */
void mrt_planning_destroy(mrt_planning *pl);
/* Plans every op of the spec with strategy (plan_walk.c), in the spare
 * tables if any; then finishes the plan (finish) or only tallies its
 * totals.  *out is the caller's. */
mrt_status mrt_planning_build(mrt_planning *pl, mrt_strategy strategy,
                              int finish, mrt_plan **out, mrt_error *err);
/* Gives back a plan of the same spec no longer wanted: the next build
 * fills its tables (any spare before it is destroyed). */
void mrt_planning_recycle(mrt_planning *pl, mrt_plan *spare);
/* "out of memory while planning", for spec s. */
mrt_status mrt_planning_nomem(const mrt_spec *s, mrt_error *err);
/* The first overflow as an error at its tensor's spec node; MRT_OK when
 * there is none. */
mrt_status mrt_planning_overflow_error(const mrt_planning *pl, mrt_error *err);
/* Mesh-TensorFlow's home layout of tensor t (the global rules), or an
 * error when they split a mesh axis twice in it. */
mrt_status mrt_meshtf_home(const mrt_spec *s, int t, mrt_layout *l,
                           mrt_error *err);

/* pipeline.c: the pipe axis and every op's stage from the spec's rules
 * (plan.pipe; nothing when no block's repeat dim is split), before the
 * inputs are planned.  An error when the rules cannot make a pipeline. */
mrt_status mrt_pipeline_setup(mrt_planning *pl, mrt_error *err);
/* The stage that holds input tensor t (a parameter's), or -1: every
 * stage makes it. */
int mrt_pipeline_input_stage(const mrt_planning *pl, int t);
/* Before op is lowered: its stage becomes the current one, and its
 * inputs held on other stages are sent there (SENDRECV steps), the
 * tensors' values pointed at the copies; saved[] the values that
 * mrt_pipeline_restore puts back after the op. */
mrt_status mrt_pipeline_receive(mrt_planning *pl, int op, int saved[2],
                                mrt_error *err);
void mrt_pipeline_restore(mrt_planning *pl, int op, const int saved[2]);

/* The order the walk plans the ops in when pipelined ([nops], a
 * permutation of 0 .. nops - 1, malloc'd; the caller frees it), from
 * the stages and virtual stages of the ops (op_stage, op_chunk) and the
 * schedule of pp (pipeline_order.c); NULL and an error when out of
 * memory, or when the schedule does not fit the stages (MRT_E_SPEC at
 * train:'s schedule: interleaved with microbatches not a multiple of the
 * stages, virtual stages without interleaved). */
int *mrt_pipeline_op_order(const mrt_spec *s, const mrt_plan_pipeline *pp,
                           const int *op_stage, const int *op_chunk,
                           mrt_error *err);

/* A point in the plan to come back to: candidates are emitted for real,
 * costed, and rolled back. */
typedef struct mrt_planning_mark {
    int nsteps, nvalues;
    int64_t comm_bytes;
    double flops;
    int overflow_tensor;
    const char *overflow_what;
} mrt_planning_mark;
mrt_planning_mark mrt_planning_get_mark(const mrt_planning *pl);
void mrt_planning_rollback(mrt_planning *pl, mrt_planning_mark m);

/* Records that figure `what` of the plan does not fit in 64 bits at
 * tensor (the first such finding wins); planning then fails with an error
 * at the tensor's spec node. */
void mrt_planning_overflow(mrt_planning *pl, int tensor, const char *what);
#define MRT_PLAN_OVERFLOW_MEMORY "memory per rank (the sum of its buffers)"

/* Appends a value with layout l (partial allowed) for tensor; returns its
 * id, or -1 when out of memory. */
int mrt_planning_add_value(mrt_planning *pl, int tensor, const mrt_layout *l);
/* Appends a step (copied) and costs it (mrt_planning_cost_step).  Returns
 * its index or -1. */
int mrt_planning_add_step(mrt_planning *pl, const mrt_step *s);
/* step_cost.c: fills step t's group, bytes handed to MPI and modeled
 * cost (time, wire bytes, messages, MPI's scratch) from its values, on
 * the plan's profile: the one place a step is costed. */
void mrt_planning_cost_step(mrt_planning *pl, mrt_step *t);
/* The einsum step t's modeled time only, on p's profile as it is. */
void mrt_step_price_einsum(const mrt_plan *p, mrt_step *t);
/* The collective step t's modeled cost and time only, on p's profile as
 * it is, by the algorithm planned (t->hier). */
void mrt_step_price_collective(const mrt_plan *p, mrt_step *t);

/* Marks the collectives that may run in the background (overlap.c);
 * with `blocking`, none. */
void mrt_plan_schedule_overlap(mrt_plan *p, int blocking);
/* inplace.c: each updated parameter and optimizer state whose value
 * may be written over the one it replaces gets alias_of (plan.h); call
 * after the lifetimes are known. */
void mrt_plan_alias_updates(mrt_plan *p, const mrt_spec *s);
/* plan_finish.c: lifetimes, arena offsets, workspace, totals and
 * per-axis bytes of the plan being built. */
mrt_status mrt_planning_finish(mrt_planning *pl, mrt_error *err);
/* The totals and per-axis bytes only: what the auto planner compares
 * before it finishes the plan it keeps, and what a plan repriced needs
 * again (plan_reprice.c). */
void mrt_plan_tally(mrt_plan *p);

/* Emits the steps that move value `from` to layout `to` (same dims, same
 * order).  to->partial must be a subset of from's pending sums: those stay
 * pending, the others are resolved.  With `allreduce_only`, pending sums
 * are all-reduced and then sliced, never reduce-scattered (Mesh-TF).
 * Returns the id of the value in layout `to` (== from when nothing
 * moves), or -1 when out of memory. */
int mrt_relayout_emit(mrt_planning *pl, int op, int from, const mrt_layout *to,
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
/* relayout_path.c: the cheapest sequence of at most max moves from
 * `from` to `to` (both without axes of size 1, to's pending sums a subset
 * of from's), into moves[]; returns how many (*cost: their modeled time),
 * or -1 if it found none. */
int mrt_relayout_path(const mrt_plan *p, const mrt_layout *from,
                      const mrt_layout *to, mrt_move moves[], int max,
                      double *cost);

/* relayout_memo.c: the answer kept for the pair (from, to): how many
 * moves, copied into moves[] (-1: relayout.c's greedy moves), or -2 when
 * there is none. */
int mrt_relayout_memo_get(mrt_planning *pl, const mrt_layout *from,
                          const mrt_layout *to, mrt_move moves[]);
/* Keeps the answer for (from, to): n moves, or -1 for the greedy ones. */
void mrt_relayout_memo_put(mrt_planning *pl, const mrt_layout *from,
                           const mrt_layout *to, const mrt_move moves[], int n);
void mrt_relayout_memo_destroy(struct mrt_relayout_memo *m);

/* The execution layout of an einsum: for each dim of the op, the mesh
 * axes that split it while the local kernel runs.  No axis twice. */
typedef struct mrt_xlayout {
    int ndims;
    int dim[MRT_MAX_EINSUM_DIMS]; /* spec dim ids */
    int64_t size[MRT_MAX_EINSUM_DIMS];
    int naxes[MRT_MAX_EINSUM_DIMS];
    int axes[MRT_MAX_EINSUM_DIMS][MRT_MAX_AXES];
} mrt_xlayout;

/* One way to lower an einsum: its execution layout, which pending sums
 * of each input ride through the kernel (the product is linear in each
 * input), and which pending sums of the result are left for its consumer
 * instead of being resolved into the output's home layout. */
typedef struct mrt_lowering {
    mrt_xlayout exec;
    unsigned keep_in[2];
    unsigned keep_out;
} mrt_lowering;

/* The op's dims (output dims, then the inputs' others), unsplit. */
void mrt_xlayout_init(const mrt_plan *p, const mrt_spec *s, int op,
                      mrt_xlayout *e);
/* Index of spec dim `dim` in e, or -1. */
int mrt_xlayout_find(const mrt_xlayout *e, int dim);
/* "batch/data d_ff/model" */
char *mrt_xlayout_str(const mrt_plan *p, const mrt_xlayout *e, char *buf,
                      int size);
/* The rule (ops/choose.c): summed dims keep their inputs' split, output
 * dims take their home layout's. */
void mrt_choose_rules(const mrt_plan *p, const mrt_spec *s, int op,
                      const mrt_layout *home, mrt_xlayout *e);
/* The pinned rule (ops/choose_pinned.c): as mrt_choose_rules, but the
 * splits of trained parameters never shape the execution layout. */
void mrt_choose_pinned(const mrt_plan *p, const mrt_spec *s, int op,
                       const mrt_layout *home, mrt_xlayout *e);
/* Mesh-TensorFlow: every dim takes its global rule. */
void mrt_choose_meshtf(const mrt_plan *p, const mrt_spec *s, int op,
                       mrt_xlayout *e);
/* Calls visit for every valid execution layout of the op's dims (each
 * axis of size > 1 on at most one dim, in any order; no empty block, but
 * uneven splits too), until visit returns nonzero (which is then returned). */
int mrt_xlayout_enumerate(const mrt_plan *p, const mrt_xlayout *dims,
                          int (*visit)(void *ctx, const mrt_xlayout *e),
                          void *ctx);

/* Emits one lowering of op: input moves, kernel, result move.  The
 * op's output tensor then holds the new value. */
mrt_status mrt_lower_emit(mrt_planning *pl, int op, const mrt_layout *home,
                          const mrt_lowering *lw, int allreduce_only,
                          mrt_error *err);
/* Lowers one einsum op with the given strategy; with may_defer, the
 * result's pending sums over axes its home does not split stay pending
 * for its consumer. */
mrt_status mrt_lower_einsum(mrt_planning *pl, int op, const mrt_layout *home,
                            mrt_strategy strategy, int may_defer,
                            mrt_error *err);
/* lazy_sum.c: for each tensor of s, 1 if the fixed strategies leave it a
 * pending sum for its one reader, an add of another pending sum (Mesh-
 * TensorFlow's lazy all-reduce); deferrable[] as in mrt_planning.  NULL
 * when out of memory; the caller frees it. */
int *mrt_lazy_sums(const mrt_spec *s, const int *deferrable);
/* cheapest.c's memory of ops already lowered: an op whose inputs sit in
 * the same layouts as an earlier one's, with the same shapes and home,
 * gets the same lowering without being costed again (repeated layers). */
struct mrt_cheapest_memo *mrt_cheapest_memo_create(void);
void mrt_cheapest_memo_destroy(struct mrt_cheapest_memo *m);
/* Lowers a map, reduce_max or rename op (lower_map.c): its inputs
 * moved to the output's home layout (reduce_max: the reduced dims keep
 * their split, and an all-reduce of the maximum follows), then the local
 * step.  A map linear in a pending sum keeps it pending (resolved at once
 * unless may_defer). */
mrt_status mrt_lower_local(mrt_planning *pl, int op, const mrt_layout *home,
                           int allreduce_only, int may_defer, mrt_error *err);
/* regather.c: for each op of s, the parameter with reshard_after_forward
 * that no backward op reads and that the op (the first to make a piece
 * of its gradient) gathers again, or -1; NULL when there is none, or
 * when out of memory (*nomem set).  The caller frees it. */
int *mrt_regather_table(const mrt_spec *s, int *nomem);
/* Under the pinned strategy, emits op's second gather of its parameter
 * (FSDP's, into the layout its forward copy had); 0, or -1 when out of
 * memory. */
int mrt_regather_emit(mrt_planning *pl, int op);
/* CHEAPEST: tries every lowering (cheapest.c), keeps the cheapest. */
mrt_status mrt_cheapest_einsum(mrt_planning *pl, int op, const mrt_layout *home,
                               int may_defer, mrt_error *err);

#endif
