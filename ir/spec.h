/*
 * spec.h — the program (the IR): a validated spec with no YAML in it,
 * the planner's input.
 *
 * The builder of meshrt.h (ir/build*.c) makes one, called by C code or
 * by the YAML loader (mrt_spec_load, yaml/), which reads the file and
 * hands each section to the builder's expert calls (build.h).  It
 * resolves every name (dims, mesh axes, tensors) and checks everything
 * that can be checked before planning: shapes, layouts (no axis twice;
 * uneven splits are allowed), sizes that overflow, init files.  Every entity keeps the
 * position (1-based line, column) of the YAML node it came from ({0, 0}
 * when built in C), so later passes can still point at the line.
 *
 * Tensors are numbered inputs first (in file order), then op outputs in op
 * order; op i makes tensor `out`.  Every tensor has a resolved home
 * layout: its own `layout:` (or its op's) when given, else the global
 * rules applied to its dims.
 */
#ifndef MRT_SPEC_H
#define MRT_SPEC_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "layout.h"
#include "mapfn.h"
#include "meshrt.h"
#include "name_index.h"
#include "npy.h"

/* One layout rule: dim -> axes (major first), and where it was written. */
typedef struct mrt_rule {
    int naxes; /* 0: no rule (replicated) */
    int axes[MRT_MAX_AXES];
    mrt_mark mark;
} mrt_rule;

typedef enum mrt_init_kind {
    MRT_INIT_NONE = 0, /* produced by an op */
    MRT_INIT_RANDOM,   /* uniform in [-1, 1), a function of (seed, index) */
    MRT_INIT_FILL,     /* every element = fill */
    MRT_INIT_FILE,     /* a .npy file */
    MRT_INIT_LABELS,   /* integers uniform in [0, classes): class labels
                          for softmax_cross_entropy, from (seed, index) */
    MRT_INIT_CAUSAL,   /* 1 where the index along mask_dim[1] (the key)
                          is at most the one along mask_dim[0] (the
                          query), else 0: from the global coordinates */
    MRT_INIT_DROPOUT,  /* 1 where kept, 0 where dropped (p in fill), from
                          (seed, index): a dropout's mask, uint8 (the
                          map MRT_MAP_DROPOUT scales by 1 / (1 - p)) */
    MRT_INIT_KIND_COUNT
} mrt_init_kind;

typedef struct mrt_spec_tensor {
    char name[MRT_NAME_MAX];
    mrt_mark mark;     /* the tensor's key (or the op's `out`) */
    mrt_layout layout; /* home layout; dims in `shape:` order */
    mrt_mark split_mark[MRT_MAX_DIMS]; /* rule that split dim i, if any */
    mrt_mark shape_mark;               /* the `shape:` node */
    mrt_init_kind init;
    uint64_t seed;   /* RANDOM: `random: N`, default FNV-1a of name */
    double fill;     /* FILL; LABELS: the number of classes; DROPOUT: p */
    int mask_dim[2]; /* CAUSAL: spec dim ids of the query and key dims */
    int mask_user;   /* a mask made inside an op (causal softmax,
                        dropout): that op's number, from 1; 0: none */
    char *file;      /* FILE: resolved against the spec's folder;
                               owned (a path per tensor would make every
                               tensor of a long program 4 kB) */
    mrt_npy_header file_header; /* FILE: the file as the loader checked it;
                               every later read must find it unchanged */
    mrt_mark init_mark;
    int init_given; /* its init was written (`init:`, or an init other
                               than MRT_IR_INIT_DEFAULT): `params: all` */
    int producer;   /* op index, or -1 for an input */
    int own_layout; /* its layout came from its own (or its op's)
                               `layout:`, not from the global rules */
    int grad_like;  /* a tensor `train:` adds: 1 + the id of the
                               tensor whose layout it takes (0: none) */
    int grad_piece; /* with grad_like: a piece of that tensor's
                               gradient (1), or its update `:next` (0) */
    int stored;     /* its element type: 0, the spec's dtype; else
                               1 + an mrt_dtype (MRT_I32: an index
                               tensor, an input read only as ids or
                               labels); mrt_spec_tensor_dtype reads it */
    int block;      /* the block (index in mrt_spec.block) whose
                               instance made it, or -1 outside blocks */
    int layer;      /* that instance (0 .. the block's count - 1), or
                               -1 */
    int micro;      /* an input with train.micro_dim: the microbatch
                               whose rows of the full input it holds
                               (rows micro * b/m ..; microbatch.c), read
                               by its init; else 0 */
    int reshard;    /* a parameter whose copies moved for the
                               forward pass are not kept for the backward
                               pass, which moves it again from its home
                               layout (FSDP's reshard_after_forward:
                               memory for wire bytes); 0 by default */
    int recomputes; /* made by a forward op re-run in the backward pass
                               (a block's `recompute:`, recompute.c, or a
                               `remade` op's copy, grad.c): 1 +
                               the id of the forward tensor it is a copy
                               of, whose layout it takes; 0: none */
    int opt_state;  /* optimizer state of a parameter: 1 + the
                               parameter's tensor id (0: none); master
                               weights included (optimizer.c) */
    int opt_role;   /* with opt_state: 0 master weights, 1 first moment
                               (m / momentum), 2 second moment (v), 3
                               gradient copy in the optimizer's type */
    int opt_layout; /* 1 + the parameter whose optimizer layout it
                               takes (its state, and the update's
                               temporaries and results; 0: none) */
} mrt_spec_tensor;

/* `expect:` — budgets a plan must meet (plan and run exit 1 otherwise). */
typedef struct mrt_budget {
    int64_t comm_bytes_max;  /* bytes per rank handed to MPI; -1: none */
    int64_t peak_memory_max; /* bytes per rank; -1: none */
    mrt_mark mark;
} mrt_budget;

/* What a layout of an alternative's `tensors:` or `ops:` applies to. */
typedef enum mrt_alt_kind {
    MRT_ALT_TENSOR = 0, /* the tensor (`tensors: {w: {layout: ...}}`) */
    MRT_ALT_GRAD,       /* the pieces of its gradient (`grad_layout:`) */
    MRT_ALT_OP,         /* the op that makes it, and the tensors it makes
                           inside (`ops: {y: {layout: ...}}`) */
    MRT_ALT_RESHARD,    /* no layout: the tensor's `reshard_after_forward:
                           true` (its rule is unused) */
    MRT_ALT_OPTIMIZER,  /* its optimizer state and the update's tensors
                           (`optimizer_layout:`) */
    MRT_ALT_KIND_COUNT
} mrt_alt_kind;

typedef struct mrt_spec_alt_entry {
    int tensor; /* tensor id (for MRT_ALT_OP: the op's result) */
    mrt_alt_kind kind;
    mrt_rule *rule; /* [ndims], by dim id; into the alternative's
                          entry_rules */
} mrt_spec_alt_entry;

/* One named alternative of `layouts:`: global rules, optionally a mesh
 * of the same rank count, and layouts of its own for some tensors, ops
 * and gradients (build_alts.c). */
typedef struct mrt_spec_layout {
    char name[MRT_NAME_MAX];
    mrt_mark mark;
    mrt_rule *rule; /* [ndims], indexed by dim id */
    int has_mesh;
    mrt_mesh mesh;
    int nentries;
    mrt_spec_alt_entry *entry; /* [nentries], owned */
    mrt_rule *entry_rules;     /* [nentries * ndims], owned */
    /* pin: true: planned pinned (mrt_spec.pinned) */
    int pin;
    int schedule;             /* its pipeline schedule, -1: train:'s */
    int virtual_stages;       /* 0: train:'s */
    mrt_mark schedule_mark;   /* where schedule: (else virtual_stages:) is */
    unsigned char *recompute; /* [nblocks], owned, or NULL: the blocks its
                                 `recompute:` recomputes (besides the
                                 spec's own) */
    mrt_mark recompute_mark;
    int broken;         /* does not fit a --mesh or --dim given at load: */
    mrt_error error;    /* why (selecting it returns this error) */
    int zero_stage;     /* `zero:` (ir/zero.c): 1-3, 0: none */
    unsigned zero_axes; /* its axes (of the alternative's mesh) */
} mrt_spec_layout;

/* The primitive ops the planner lowers.  The spec's own ops (add,
 * softmax, layer_norm, the losses, ...) are expanded into these as they
 * are parsed (spec_expand.c), and a `train:` block appends the backward
 * program and the update made of the same primitives (spec_grad.c). */
typedef enum mrt_op_kind {
    MRT_OP_EINSUM = 0,  /* contraction, transposition, sum over dims */
    MRT_OP_MAP,         /* elementwise fn with broadcasting (mapfn.h) */
    MRT_OP_REDUCE_MAX,  /* maximum over the dims the output lacks */
    MRT_OP_RENAME,      /* the same data, one dim under another name */
    MRT_OP_GATHER,      /* in [table, ids]: out[b.., d..] = table[ids[b..],
                          d..] over the table's dim from_dim (vocab) */
    MRT_OP_SCATTER_ADD, /* in [ids, g]: out[vocab, d..] = the sum of the
                          rows g[b.., d..] at vocab = ids[b..] (gather's
                          gradient; out takes the table's dims) */
    MRT_OP_KIND_COUNT
} mrt_op_kind;

/* Which part of a training step an op belongs to. */
typedef enum mrt_phase {
    MRT_PHASE_FORWARD = 0,
    MRT_PHASE_BACKWARD,
    MRT_PHASE_UPDATE,
    MRT_PHASE_COUNT
} mrt_phase;

typedef struct mrt_spec_op {
    mrt_op_kind kind;
    mrt_mark mark; /* the mapping node of the spec op it comes from */
    int nin;       /* 1 or 2 */
    int in[2];     /* tensor ids */
    mrt_mark in_mark[2];
    int out;              /* tensor id */
    mrt_budget expect;    /* this op's budget (per op: its own steps) */
    mrt_map_fn fn;        /* MAP */
    double c;             /* MAP: the function's constant */
    int from_dim, to_dim; /* RENAME: spec dim ids; GATHER, SCATTER_ADD:
                          from_dim is the vocab dim */
    mrt_phase phase;
    int user;       /* number (from 1) of the spec op it comes from;
                          0 for the ops a `train:` block adds */
    int no_grad;    /* its result carries no gradient (the max that
                          keeps softmax stable: softmax does not depend
                          on it) */
    int block;      /* the block whose instance it belongs to (its forward
                          op, or for an update its parameter), or -1 */
    int layer;      /* that instance, or -1 */
    int recomputed; /* a forward op re-run in the backward pass (its
                          block's `recompute:`): 1 + the index of the
                          forward op it re-runs; 0: none */
    int micro;      /* the microbatch (0 .. train.microbatches - 1) a
                          forward or backward op belongs to (microbatch.c);
                          -1 for the update and the ops outside any
                          microbatch (the sum of the microbatches' losses) */
    int fwd;        /* a backward op: 1 + the forward op whose gradient it
                          takes part in (grad.c), its pipeline stage's;
                          0: none */
    int softmax_in; /* a softmax's division (expand.c): 1 + the tensor it
                          normalizes over from_dim (its input, or the
                          causally masked one), whose gradient grad.c
                          makes from the output alone, so the exp and
                          the sum between are not kept; 0: none */
    int remade;     /* its result is not kept for the backward pass: a
                          backward op that reads it reads a copy grad.c
                          remakes there from the same inputs (layer
                          norm's normalized output, c · rstd: expand.c);
                          0: kept */
} mrt_spec_op;

/* A repeated block (`repeat:` in `ops:`, mrt_ir_block_begin): ops and
 * tensors defined once and made `count` times, once per index of the
 * dim `dim` (its size when the ops were read, --dim included).
 * Instance i's tensors are named "<name><i>.<inner name>"; every tensor
 * and forward op it made has block = this block's index and layer = i,
 * and so have the backward ops of those forward ops (grad.c) and the
 * updates of its parameters.  Instance i's forward ops are
 * op[first_op[i] .. last_op[i]], its tensors tensor[first_tensor[i] ..
 * last_tensor[i]] (both contiguous).  `out:` names: an outer name that
 * stands for the last instance's tensor (mrt_spec_find_tensor finds
 * it).  This is what a pipeline split of the dim reads.
 * With `recompute: true` the backward pass of each instance first re-runs
 * the instance's forward ops (ops with `recomputed`, recompute.c) and
 * its backward ops read their results: the instance keeps only what it
 * reads from outside (its input, the carry) for the backward pass. */
typedef struct mrt_spec_block {
    char name[MRT_NAME_MAX];
    mrt_mark mark;
    int dim;                         /* the repeat dim (spec dim id) */
    int count;                       /* instances: the dim's size */
    int *first_op, *last_op;         /* [count] */
    int *first_tensor, *last_tensor; /* [count] */
    int nouts;
    char (*out_name)[MRT_NAME_MAX]; /* [nouts]: outer names */
    int *out_tensor;                /* [nouts]: the last instance's */
    int recompute_asked;            /* `recompute: true` (or
                                       mrt_ir_block_recompute) */
    mrt_mark recompute_mark;        /* where it was written */
    int recompute;                  /* its forward ops re-run in the
                                       backward pass (recompute.c) */
    int regather;                   /* `regather: true` (or
                                       mrt_ir_block_regather): what its
                                       forward ops' results were moved
                                       to in the forward pass is moved
                                       again for the backward pass
                                       (their tensors' reshard) */
} mrt_spec_block;

/* The optimizer's roles of a state tensor (mrt_spec_tensor.opt_role). */
enum {
    MRT_OPT_ROLE_MASTER = 0, /* master weights in the optimizer's type */
    MRT_OPT_ROLE_M,          /* first moment, or momentum's buffer */
    MRT_OPT_ROLE_V,          /* Adam's second moment */
    MRT_OPT_ROLE_GRAD,       /* the gradient copied to the optimizer's type */
    MRT_OPT_ROLE_COUNT
};

/* `train:` — one optimizer step per run of the plan.  Its lists have no cap
 * but memory (and int counts): a model lists every weight.  The arrays
 * are owned by the spec (mrt_spec_destroy frees them, mrt_spec_derive
 * copies them); param, grad, updated and param_mark hold nparams
 * entries, extra, extra_grad and extra_mark nextra (NULL when 0). */
/* At most as many steps as `run --repeat` runs: each is a run, with its
 * loss kept and reported. */
#define MRT_TRAIN_STEPS_MAX 1000000
/* A pipeline's schedule (`train: {schedule: ...}`): the order its
 * stages run the microbatches' forward and backward ops in
 * (ops/pipeline_order.c).  Names: "gpipe", "1f1b", "interleaved",
 * "zero_bubble" (mrt_schedule_kind_name). */
typedef enum mrt_schedule_kind {
    MRT_SCHEDULE_GPIPE = 0,
    MRT_SCHEDULE_1F1B,
    MRT_SCHEDULE_INTERLEAVED,
    MRT_SCHEDULE_ZERO_BUBBLE,
    MRT_SCHEDULE_COUNT
} mrt_schedule_kind;
const char *mrt_schedule_kind_name(mrt_schedule_kind k);
/* The kind named `name`, or -1. */
int mrt_schedule_kind_find(const char *name);
/* At most this many microbatches (`train: {microbatches: m}`). */
#define MRT_MICROBATCHES_MAX 4096
typedef struct mrt_train {
    int loss; /* tensor id of the scalar loss; -1: no training */
    int seed; /* the input tensor dL/dL = 1 */
    int nparams;
    int *param;   /* tensor ids */
    int *grad;    /* tensor ids of dL/dparam */
    int *updated; /* tensor ids of param - lr * grad */
    int nextra;   /* `grads:` inputs whose gradient is wanted */
    int *extra, *extra_grad;
    mrt_mark *param_mark, *extra_mark;
    mrt_mark loss_mark; /* where each was named */
    double lr;
    int64_t steps;
    int nforward; /* ops 0..nforward-1 are the forward program */
    /* The optimizer (optimizer.c): its kind and settings, the state
     * tensors it carries from step to step (inputs, zero or the
     * parameter's initial value) and the tensors the update makes of
     * them (state_next[k] replaces state[k] after a step, as updated[k]
     * replaces param[k]), and the scalar inputs the runner sets before
     * each step t (bias corrections: lr_t, eps_t; -1: none). */
    mrt_optimizer optimizer;
    double beta1, beta2, eps, weight_decay, momentum;
    int master_grads; /* a gradient copy in the optimizer's type when the
                         gradients are narrower (Megatron's; ZeRO's
                         paper counts none) */
    int nstate;
    int *state, *state_next; /* [nstate] tensor ids, owned */
    int step_scalar[2];      /* tensor ids: lr_t, eps_t; -1: none */
    mrt_mark mark;
    int microbatches; /* the forward program made this many times, on
                         slices of micro_dim (ir/microbatch.c); 1: none */
    int micro_dim;    /* spec dim id split into microbatches, -1: none */
    mrt_schedule_kind schedule;
    int virtual_stages;                 /* 1: none */
    mrt_mark micro_mark, schedule_mark; /* where they were written */
} mrt_train;

/* `precision:` — the element type of each kind of tensor (Megatron's and
 * DeepSpeed's mixed precision).  With no `precision:` key every field
 * equals the spec's dtype, and nothing changes.  A 16-bit type is stored
 * and sent in 2 bytes and computed in float32. */
typedef struct mrt_precision {
    mrt_dtype params;    /* the model's parameters as stored and used */
    mrt_dtype compute;   /* activations and the kernels' inputs */
    mrt_dtype grads;     /* gradients and the type their reduction runs in */
    mrt_dtype optimizer; /* optimizer state, master weights */
    int given;           /* `precision:` was written (else all = dtype) */
    mrt_mark mark;
} mrt_precision;

struct mrt_spec {
    char path[PATH_MAX]; /* as given by the user, for error messages */
    char dir[PATH_MAX];  /* folder of the spec, for relative file paths */
    mrt_mesh mesh;
    mrt_mark mesh_mark;
    mrt_dtype dtype;
    mrt_precision precision; /* every field = dtype unless given */

    int ndims; /* named dims */
    char (*dim_name)[MRT_NAME_MAX];
    char **dim_names; /* dim_names[i] == dim_name[i], for mrt_layout_str */
    int64_t *dim_size;
    mrt_mark *dim_mark;
    mrt_rule *rule;           /* global layout rules, indexed by dim id */
    mrt_name_index dim_index; /* dim names -> ids, as tensor_index */

    int ntensors;
    mrt_spec_tensor *tensor;
    mrt_name_index tensor_index; /* tensor names -> ids; empty in a spec
                                    built by hand (lookups then scan) */
    int nops;
    mrt_spec_op *op;
    int cap_tensors, cap_ops; /* room in tensor[] and op[] */
    int nuser_ops;            /* ops as the spec file numbers them */
    int noutputs;
    int *output; /* tensor ids */

    int nblocks; /* repeated blocks, in op order (mrt_spec_block) */
    mrt_spec_block *block;

    mrt_train train;   /* train.loss < 0: a plain forward program */
    mrt_budget expect; /* whole-program budget */
    int nlayouts;      /* `layouts:` alternatives */
    mrt_spec_layout *layouts;
    int pinned; /* derived from an alternative with pin: true: the auto
                   planner plans it as the rules planner does */

    /* `network:` — links per mesh axis, overriding the profile's. */
    int nnet;
    char net_axis[MRT_MAX_AXES][MRT_NAME_MAX];
    double net_latency_s[MRT_MAX_AXES];
    double net_bandwidth_Bps[MRT_MAX_AXES];
    mrt_mark net_mark[MRT_MAX_AXES];
};

/* The element type of tensor t: its own, or the spec's. */
static inline mrt_dtype mrt_spec_tensor_dtype(const mrt_spec *s, int t)
{
    return s->tensor[t].stored ? (mrt_dtype)(s->tensor[t].stored - 1)
                               : s->dtype;
}
/* Which input of op o holds indices (GATHER: 1, SCATTER_ADD: 0; the
 * op is not linear in it and has no gradient for it), or -1. */
static inline int mrt_spec_op_ids(const mrt_spec_op *o)
{
    return o->kind == MRT_OP_GATHER        ? 1
           : o->kind == MRT_OP_SCATTER_ADD ? 0
                                           : -1;
}

/* Tensor id by name, or -1 (hashed: specs may have 10,000s of ops); a
 * block's `out:` name is the tensor it stands for. */
int mrt_spec_find_tensor(const mrt_spec *s, const char *name);
/* Adds tensor id to the name index; call after appending a tensor. */
mrt_status mrt_spec_index_tensor(mrt_spec *s, int id);
/* Appends a tensor named name with dims (spec ids) dims[0..ndims),
 * made by op `producer` (-1: an input), its layout unsplit; indexes its
 * name.  Returns its id, or -1 when out of memory. */
int mrt_spec_add_tensor(mrt_spec *s, const char *name, const int *dims,
                        int ndims, int producer, mrt_mark at);
/* Appends op (copied) and makes it the producer of op->out.  Returns its
 * index, or -1 when out of memory. */
int mrt_spec_add_op(mrt_spec *s, const mrt_spec_op *op);
/* Gives tr room for nparams parameters and nextra extra gradients
 * (its arrays, freed first); MRT_E_NOMEM when out of memory. */
mrt_status mrt_train_alloc(mrt_train *tr, int nparams, int nextra);
/* Makes *dst a copy of src with arrays of its own; MRT_E_NOMEM (dst's
 * arrays then NULL) when out of memory. */
mrt_status mrt_train_copy(mrt_train *dst, const mrt_train *src);
/* Adam's bias-corrected scalars before step t (from 1): out[0] = lr_t
 * = lr sqrt(1 - b2^t) / (1 - b1^t), out[1] = eps_t = eps sqrt(1 - b2^t)
 * (optimizer.c); the values of train.step_scalar's tensors. */
void mrt_optimizer_scalars(const mrt_train *tr, int64_t t, double out[2]);
/* Frees tr's arrays (not tr). */
void mrt_train_free(mrt_train *tr);
/* Dim id by name, or -1 (hashed: a spec may name a dim per layer). */
int mrt_spec_find_dim(const mrt_spec *s, const char *name);
/* Adds dim id to the name index; call after naming dim id. */
mrt_status mrt_spec_index_dim(mrt_spec *s, int id);

/* Copies of s's blocks into d (d->block replaced, not freed); -1 when
 * out of memory (d then has none).  mrt_spec_blocks_free frees them. */
int mrt_spec_blocks_copy(mrt_spec *d, const mrt_spec *s);
void mrt_spec_blocks_free(mrt_spec *s);

/* A new spec equal to s but with global rules `rules` ([s->ndims], by dim
 * id) on `mesh` (NULL: s's mesh): every tensor without its own layout is
 * re-resolved and checked as mrt_spec_load checks it (errors point at s's
 * nodes).  Used by compare (one spec per alternative) and search.  The
 * caller destroys *out.  Its `layouts:` list is empty. */
mrt_status mrt_spec_derive(const mrt_spec *s, const mrt_rule *rules,
                           const mrt_mesh *mesh, mrt_spec **out,
                           mrt_error *err);
/* The spec under alternative l of s's `layouts:` block: mrt_spec_derive
 * with its rules and mesh, then the layouts of its `tensors:`, `ops:`
 * and `grad_layout:` entries; every tensor of the backward program takes
 * the layout of the tensor it is a gradient piece of (or its
 * grad_layout), and every update `<w>:next` that of w; the parameters
 * with `reshard_after_forward: true` get tensor.reshard.  The caller
 * destroys *out. */
mrt_status mrt_spec_derive_alt(const mrt_spec *s, const mrt_spec_layout *l,
                               mrt_spec **out, mrt_error *err);

/* The spec under alternative `name` of its `layouts:` block; an unknown
 * name is an MRT_E_USAGE error listing the names. */
mrt_status mrt_spec_select_alternative(const mrt_spec *s, const char *name,
                                       mrt_spec **out, mrt_error *err);

#endif
