/*
 * ir.h — private to ir/: what the front ends (the C builder, ir/build.c,
 * and the YAML loader, yaml/) share to turn a program into the validated
 * IR of spec.h.  Nothing here knows YAML.
 *
 *   resolve.c   home layouts: global or own rules applied to a tensor
 *   kinds.c     the op kinds a program may use (the `op:` names)
 *   expand.c    one such op -> the primitive ops of spec.h
 *   grad.c      reverse mode: `train:` -> backward program + SGD update
 *   derive.c    the program under other global rules (compare, search)
 *
 * Positions: every entity keeps an mrt_mark (1-based line and column in
 * the YAML file, {0, 0} when the program was built in C).  Errors found
 * here are set at those marks with the program's path; the builder then
 * names its call and argument in front of the message (build.c), so each
 * front end words the place the way its user wrote it.
 */
#ifndef MRT_IR_H
#define MRT_IR_H

#include <stddef.h>
#include <stdint.h>

#include "spec.h"

/* Longest user text quoted in a message, and a buffer that holds it. */
#define MRT_SPEC_QUOTE_MAX 60
#define MRT_SPEC_LIST_MAX 200 /* longest list of valid names in a message */

/* Records MRT_E_NOMEM (no position).  Returns MRT_E_NOMEM. */
mrt_status mrt_ir_nomem(const mrt_spec *s, mrt_error *err);

/* ---- resolve.c: home layouts -------------------------------------- */

/* What resolving a home layout needs besides the rules: shared by the
 * front ends and by mrt_spec_derive, so all word their errors the same. */
typedef struct mrt_spec_resolver {
    const mrt_spec *s;    /* dim names, and the path in errors */
    const mrt_mesh *mesh; /* the mesh the rules' axis ids refer to */
    const char *alt;      /* NULL, or the `layouts:` alternative being
                             checked at load time: messages then start
                             "under layout 'dp', " and point at its rules */
    mrt_error *err;       /* may be NULL */
} mrt_spec_resolver;

/* Sets the axes of t->layout (dims and sizes set) from rules[dim id]:
 * own says whether they are the tensor's own rules (errors at the rule)
 * or global ones (errors at the tensor's shape, or at the rule of an
 * alternative).  Checks that no axis splits two dims (splits may be
 * uneven: layout.h). */
mrt_status mrt_spec_apply_rules(const mrt_spec_resolver *r, mrt_spec_tensor *t,
                                const mrt_rule rules[], int own);
/* Appends dim d (with its size) to l unless l has it.  A dim past
 * MRT_MAX_DIMS is only counted (l->ndims goes past the limit, nothing is
 * written), so the caller can name the problem.  Both front ends build
 * op results' shapes with it. */
void mrt_spec_layout_add_dim(const mrt_spec *s, mrt_layout *l, int d);
/* Writes "[batch, d_model]" for the dims of l. */
const char *mrt_spec_shape_str(const mrt_spec *s, const mrt_layout *l,
                               char *buf, size_t size);
/* Joins n names found at first, first + stride, ... as "a, b, c" (or
 * "none"), shortened with ", ..." to fit. */
const char *mrt_spec_join(char *buf, size_t size, const char *first,
                          size_t stride, int n);
/* 1 if a tensor of l's dims has more bytes than an int64 holds, at 8
 * bytes an element whatever the dtype (docs/spec.md, Limits). */
int mrt_spec_too_large(const mrt_layout *l);

/* ---- derive.c: home layouts under other rules --------------------- */

/* Re-resolves every tensor of r->s into out[0..ntensors) (a copy of
 * r->s->tensor, or NULL to check only): tensors without their own layout
 * under rules, tensors with one kept, their axes moved by name onto
 * r->mesh when it is not r->s's mesh.  Tensors i with skip[i] (skip may
 * be NULL) are left as they are: an alternative's entries place them. */
mrt_status mrt_spec_rehome_all(const mrt_spec_resolver *r,
                               const mrt_rule rules[], mrt_spec_tensor *out,
                               const unsigned char *skip);
/* What alternative l does to each tensor of s: [ntensors] entry index,
 * MRT_ALT_FOLLOW (a tensor of the backward program or an update: it
 * follows the tensor of its grad_like), or -1 (the alternative's rules);
 * NULL when l has no entries or out of memory (*nomem then set).  The
 * caller frees it. */
#define MRT_ALT_FOLLOW (-2)
int *mrt_spec_alt_targets(const mrt_spec *s, const mrt_spec_layout *l,
                          int *nomem);
/* Places the tensors alternative l's entries give a layout (targets
 * from mrt_spec_alt_targets), into out[0..ntensors) already rehomed
 * under l's rules; with out NULL, only checks each entry against the
 * tensors it applies to (errors "under layout 'l', ..."). */
mrt_status mrt_spec_alt_apply(const mrt_spec_resolver *r,
                              const mrt_spec_layout *l, const int *targets,
                              mrt_spec_tensor *out);

/* ---- kinds.c and expand.c: the ops a program names ---------------- */

/* The op kinds a program may name, in the order of meshrt.h's
 * mrt_ir_kind (the builder's): each front end checks an op against
 * mrt_user_kinds[] and expand.c turns it into primitive ops. */
typedef enum mrt_user_kind {
    MRT_U_EINSUM = 0,
    MRT_U_ADD,
    MRT_U_SUB,
    MRT_U_MUL,
    MRT_U_DIV,
    MRT_U_RELU,
    MRT_U_GELU,
    MRT_U_TANH,
    MRT_U_EXP,
    MRT_U_LOG,
    MRT_U_NEG,
    MRT_U_RSQRT,
    MRT_U_SQUARE,
    MRT_U_SCALE,
    MRT_U_REDUCE_SUM,
    MRT_U_REDUCE_MAX,
    MRT_U_REDUCE_MEAN,
    MRT_U_SOFTMAX,
    MRT_U_LAYER_NORM,
    MRT_U_RENAME,
    MRT_U_RELAYOUT,
    MRT_U_MSE,
    MRT_U_SOFTMAX_CE,
    MRT_U_EMBEDDING,
    MRT_U_DROPOUT,
    MRT_U_KIND_COUNT
} mrt_user_kind;

/* What an op kind takes: its name, how many inputs, and which of its
 * parameters it may have and must have (MRT_K_* bits). */
enum {
    MRT_K_SHAPE = 1,
    MRT_K_DIM = 2,
    MRT_K_DIMS = 4,
    MRT_K_BY = 8,
    MRT_K_FROM = 16,
    MRT_K_TO = 32,
    MRT_K_EPS = 64,
    MRT_K_CAUSAL = 128, /* softmax: [query dim, key dim] */
    MRT_K_P = 256,      /* dropout: the probability of dropping */
    MRT_K_SEED = 512    /* dropout: its mask's seed */
};
#define MRT_K_BITS 10 /* the keys above */
typedef struct mrt_user_kind_info {
    const char *name;
    int min_in, max_in;
    unsigned keys, required;
} mrt_user_kind_info;
extern const mrt_user_kind_info mrt_user_kinds[MRT_U_KIND_COUNT];

struct mrt_spec_parser; /* the YAML front end's state: opaque here */

/* One op of the program, checked by its front end, about to be
 * expanded. */
typedef struct mrt_user_op {
    mrt_spec *s;               /* the program being built */
    mrt_error *err;            /* may be NULL */
    mrt_mark mark;             /* where the op was written ({0, 0}: in C) */
    struct mrt_spec_parser *p; /* the YAML front end's own state, or
                                  NULL; never read by ir/ */
    int number;                /* from 1, as the user counts */
    mrt_user_kind kind;
    int nin, in[2];
    mrt_mark in_mark[2];
    mrt_spec_tensor out;   /* its result: name, dims, home layout */
    int dim;               /* softmax, layer_norm, the cross-entropy: the
                              dim; rename: the dim renamed; embedding:
                              the table's vocab dim */
    int to_dim;            /* rename: its new name */
    double c;              /* scale: `by`; layer_norm: `eps`; dropout: p */
    int causal[2];         /* softmax: the query and key dims of its
                              causal mask; -1: none */
    uint64_t seed;         /* dropout: its mask's seed */
    int labels;            /* cross-entropy: integer labels, not one-hot */
    const mrt_rule *rules; /* layout of the tensors it makes inside */
    mrt_rule *own_rules;   /* (owned) its `layout:`, when it has one */
    int own;               /* rules is its own `layout:` */
    mrt_budget expect;
} mrt_user_op;

/* Appends the primitive ops (and the tensors between them) that compute
 * u, the last of them making u->out (expand.c). */
mrt_status mrt_ir_expand(mrt_user_op *u);

/* ---- grad.c: reverse mode ----------------------------------------- */

/* Reverse-mode differentiation of s's forward program (every op so
 * far) with s->train's loss, params, extra grads, lr and steps set
 * (their marks too): appends the gradient seed, the backward program and
 * the SGD updates, and fills train.grad, extra_grad and updated. */
mrt_status mrt_ir_grad(mrt_spec *s, mrt_error *err);

/* ---- recompute.c: activation recomputation ------------------------ */

/* Re-runs the forward ops of every instance of the blocks b with
 * blocks[b] set (and not recomputed yet) in the backward pass, right
 * before the instance's backward ops, which then read the re-run's
 * tensors (spec.h: mrt_spec_block.recompute).  Nothing without train:
 * or when blocks is NULL. */
mrt_status mrt_ir_recompute(mrt_spec *s, const unsigned char *blocks,
                            mrt_error *err);

/* ---- zero.c: an alternative's `zero:` ----------------------------- */

/* Shards the optimizer state (stage 1), the gradients (2) and the
 * parameters (3) of s, derived under alternative l, over l's zero axes
 * (see zero.c for the dim it picks). */
void mrt_spec_apply_zero(mrt_spec *s, const mrt_spec_layout *l);

/* ---- optimizer.c: the update ------------------------------------- */

/* The optimizer's update of every parameter, in the order order[]
 * (indices into train.param): its state tensors, its ops (phase
 * UPDATE), train.updated, state, state_next and step_scalar. */
mrt_status mrt_optimizer_emit(mrt_spec *s, const int *order, mrt_error *err);

/* ---- microbatch.c -------------------------------------------------- */

/* With train.microbatches m > 1 (train.micro_dim checked: a dim of
 * the program that m divides), makes the forward program (every op so
 * far) once per microbatch and the loss the sum of theirs (the file's
 * comment says how); nothing when m is 1. */
mrt_status mrt_ir_microbatch(mrt_spec *s, mrt_error *err);

/* ---- spec.c: outputs ---------------------------------------------- */

/* With `train:`, the outputs also hold the loss, the gradients and the
 * updated parameters (each once); listed[tensor] says which are already
 * outputs. */
mrt_status mrt_ir_add_train_outputs(mrt_spec *s, char *listed, mrt_error *err);

#endif
