/*
 * build.h — private to ir/ and to the YAML front end: the state behind
 * the public mrt_ir of meshrt.h, how its calls report errors, and the
 * "expert" calls (BLIS style) that take source positions.
 *
 * Every call starts with mrt_ir_begin (which refuses a builder that
 * already failed, so the first error sticks) and ends with mrt_ir_end.
 *
 * Two front ends, one set of checks.  A public call (mrt_ir_add_dim) is
 * its expert call (mrt_ir_add_dim_at) with no marks.  The YAML loader
 * (yaml/) calls the expert calls with the mark (1-based line, column)
 * of the entity and of each argument or list item it read, after doing
 * only the syntax checks itself (node types, unknown keys, a string
 * where a number belongs).  The builder stores the marks in the spec
 * (dim_mark, rule marks, ...) for later errors, and words a failed
 * check by where its argument came from:
 *   - the argument has a mark (c->at set with mrt_ir_at): the error is
 *     at that position in the builder's file (ir->s->path), with the
 *     message the spec file's user knows ("unknown dim 'x' in 'layout'
 *     (the dims are: ...)"): "FILE:LINE:COL: error: MESSAGE";
 *   - no mark: "CALL: argument 'ARG': MESSAGE", no position.
 * A builder opened by mrt_ir_open with a file (ir->yaml) words messages
 * the YAML way; mrt_ir_yaml(c) says which to pick where they differ.
 * An error set by the shared IR code (resolve.c, expand.c, grad.c) at
 * a position is kept as it is; one without a position gets the call and
 * argument in front.
 */
#ifndef MRT_BUILD_H
#define MRT_BUILD_H

#include "ir.h"

struct mrt_ir {
    mrt_spec *s;           /* the program so far; NULL after mrt_ir_finish */
    mrt_error error;       /* the first error; error.code MRT_OK until then */
    int nouts;             /* outputs named by mrt_ir_set_outputs, or -1 */
    int *outs;             /* [nouts] tensor ids */
    int trained;           /* mrt_ir_set_train succeeded: no more ops */
    int cap_dims;          /* room in the spec's per-dim arrays */
    int yaml;              /* opened by mrt_ir_open for a spec file: marks
                          are given, messages are worded as the file's */
    const char *mesh_what; /* how messages call the mesh the rules name
                              ("the mesh", "the mesh given by --mesh") */
    int keep_broken;       /* the mesh or a dim size is not the file's (--mesh,
                          --dim): an alternative that does not fit is kept
                          with its error, not the builder's error */
    const mrt_mesh *rule_mesh;  /* while an alternative with a mesh of its
                                  own is checked: the mesh its rules name */
    const char *rule_mesh_what; /* and how messages call it */
    int cap_layouts;            /* room in the spec's layouts[] */
    struct mrt_ir_block *block; /* the repeated block being built, or NULL
                                   (build_block.c) */
};

/* The call being made and the argument being checked, for messages. */
typedef struct mrt_ir_call {
    mrt_ir *ir;
    const char *fn;  /* "mrt_ir_add_tensor" */
    const char *arg; /* "shape"; changed as the call goes on */
    mrt_error e;     /* the call's error */
    int worded;      /* e says "FN: argument 'ARG': ..." already */
    mrt_mark at;     /* where the argument being checked was written
                          ({0, 0}: in C); set with mrt_ir_at */
    mrt_mark entry;  /* where the whole entry (the op, the tensor...)
                          was written: the place of a check whose
                          argument has no mark of its own */
} mrt_ir_call;

/* mrt_ir_begin for a call whose argument arg (given) may not be NULL,
 * on a program with no training block yet (else the error `trained`). */
mrt_status mrt_ir_begin_untrained(mrt_ir_call *c, mrt_ir *ir, const char *fn,
                                  const char *arg, const void *given,
                                  const char *trained);
/* The argument being checked and its mark (NULL: none). */
void mrt_ir_at(mrt_ir_call *c, const char *arg, const mrt_mark *at);
/* 1 if messages take the spec file's wording (see the top). */
int mrt_ir_yaml(const mrt_ir_call *c);
/* name shortened for a message as the YAML front end quotes a scalar
 * (MRT_SPEC_QUOTE_MAX characters, then "..."). */
const char *mrt_ir_quote(const char *name, char *buf, size_t size);

/* Starts call fn on ir: MRT_OK, or the builder's first error again. */
mrt_status mrt_ir_begin(mrt_ir_call *c, mrt_ir *ir, const char *fn);
/* Records "FN: argument 'ARG': MESSAGE" (code) unless the call has
 * failed already.  Returns code. */
mrt_status mrt_ir_fail(mrt_ir_call *c, mrt_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Ends the call with status st: an error the shared IR code set in
 * c->e is reworded as the builder's, kept in the builder and copied to
 * err (may be NULL).  Returns st. */
mrt_status mrt_ir_end(mrt_ir_call *c, mrt_status st, mrt_error *err);

/* ---- expert calls (the YAML front end's) -------------------------- */

/* An empty builder for the spec file `path` (its folder `dir` holds the
 * files it names): no mesh yet (mrt_ir_set_mesh_at), messages worded as
 * the file's.  The caller owns *out (mrt_ir_destroy). */
mrt_status mrt_ir_open(const char *path, const char *dir, mrt_ir **out,
                       mrt_error *err);
/* The mesh, as mrt_ir_create takes it; mesh_mark is the `mesh:` node,
 * axis_mark[i] and size_mark[i] its keys and values.  naxes may be one
 * past MRT_MAX_AXES (only axis_mark of the extra one is read): the
 * error "too many mesh axes" is then at that key. */
mrt_status mrt_ir_set_mesh_at(mrt_ir *ir, int naxes, const char *const *axis,
                              const int64_t *size, mrt_mark mesh_mark,
                              const mrt_mark *axis_mark,
                              const mrt_mark *size_mark, mrt_error *err);
/* Replaces the mesh with m (checked already: --mesh), before any rule;
 * messages then call it what ("the mesh given by --mesh"), and
 * alternatives that do not fit it are kept broken (keep_broken). */
void mrt_ir_override_mesh(mrt_ir *ir, const mrt_mesh *m, const char *what);
/* mrt_ir_set_dtype with the mark of the dtype's node. */
/* `precision:` (build_precision.c): type[k] names the type of kind k
 * (MRT_PRECISION_PARAMS ...; NULL: the spec's dtype), written at
 * mark[k]; at is the key's node.  Before the first tensor.  The
 * activations and every tensor without a type of its own then take the
 * compute type (the spec's dtype becomes it); a `train:` block's
 * parameters and their updates take params, their gradients grads
 * (mrt_ir_precision_apply, after reverse mode). */
enum {
    MRT_PRECISION_PARAMS = 0,
    MRT_PRECISION_COMPUTE,
    MRT_PRECISION_GRADS,
    MRT_PRECISION_OPTIMIZER,
    MRT_PRECISION_KINDS
};
mrt_status mrt_ir_set_precision_at(mrt_ir *ir,
                                   const char *const type[MRT_PRECISION_KINDS],
                                   const mrt_mark mark[MRT_PRECISION_KINDS],
                                   mrt_mark at, mrt_error *err);
/* The element types of a trained program's parameters, their updates
 * and gradients, by s->precision (nothing when it was not given). */
void mrt_ir_precision_apply(mrt_spec *s);
/* Where precision's compute differs from params: a cast copy of each
 * parameter that the forward ops read instead (build_precision.c);
 * before reverse mode.  MRT_E_NOMEM into err when out of memory. */
mrt_status mrt_ir_precision_cast(mrt_spec *s, mrt_error *err);
mrt_status mrt_ir_set_dtype_at(mrt_ir *ir, const char *dtype, mrt_mark at,
                               mrt_error *err);
/* mrt_ir_add_dim with the mark of the dim's name (its dim_mark). */
mrt_status mrt_ir_add_dim_at(mrt_ir *ir, const char *name, int64_t size,
                             mrt_mark at, mrt_error *err);
/* A new size for dim `name` (--dim), before the first tensor; sets
 * keep_broken as mrt_ir_override_mesh does. */
mrt_status mrt_ir_resize_dim(mrt_ir *ir, const char *name, int64_t size);

/* A layout rule with its marks: dim -> axes[0..naxes) (naxes may exceed
 * MRT_MAX_AXES: an axis is then unknown or twice, and refused). */
typedef struct mrt_ir_rule_at {
    const char *dim;
    int naxes;
    const char *const *axes;
    mrt_mark dim_mark;         /* the dim's key */
    mrt_mark mark;             /* the rule's value (kept in mrt_rule) */
    const mrt_mark *axis_mark; /* [naxes], or NULL */
} mrt_ir_rule_at;
/* mrt_ir_set_rule with marks. */
mrt_status mrt_ir_set_rule_at(mrt_ir *ir, const mrt_ir_rule_at *rule,
                              mrt_error *err);
/* Where each part of an input tensor was written (mrt_ir_add_tensor_at). */
typedef struct mrt_ir_tensor_at {
    mrt_mark mark;            /* its name */
    mrt_mark shape_mark;      /* its shape */
    const mrt_mark *dim_mark; /* [ndims]: each dim of the shape */
    int has_layout;           /* it has a layout of its own (maybe {}): */
    int nlayout;              /* its rules, with marks (the mrt_ir_tensor's */
    const mrt_ir_rule_at *layout; /* layout is not read) */
    const mrt_rule *given;        /* rules given in place of its layout
                                 (mrt_spec_load_layouts), or NULL */
    mrt_mark init_mark;           /* its init */
    mrt_mark value_mark;          /* the init's value */
    const char *value_text;       /* that value as written, for messages */
    mrt_mark dtype_mark;          /* its `dtype:` */
    int64_t classes;              /* labels: the number as read (the value, a
                                 double, rounds 2^53 + 1 down) */
    int ncausal;                  /* causal: how many dims it names */
    mrt_mark causal_dim_mark[2];  /* causal: each dim */
} mrt_ir_tensor_at;
/* mrt_ir_add_tensor with marks (at NULL: none).  A file init is
 * resolved against the builder's folder. */
mrt_status mrt_ir_add_tensor_at(mrt_ir *ir, const mrt_ir_tensor *d,
                                const mrt_ir_tensor_at *at, mrt_error *err);
/* Room for n more tensors and ops (a hint: both grow as needed). */
mrt_status mrt_ir_reserve(mrt_ir *ir, int ntensors, int nops);

/* Where the parts of an op were written (mrt_ir_add_op_at), and what a
 * spec file says that the C struct cannot. */
typedef struct mrt_ir_op_at {
    mrt_mark mark;         /* the op */
    int nin;               /* inputs as written (past 2: refused) */
    mrt_mark in_list_mark; /* `in:` */
    mrt_mark in_mark[2];
    int later[2]; /* an unknown input made by a later op:
                                  its number (0: none) */
    mrt_mark out_mark;
    int shape_given; /* `shape:` was written (maybe empty) */
    mrt_mark shape_mark;
    const mrt_mark *shape_dim_mark; /* [ndims] */
    mrt_mark dim_mark, to_mark;
    int reduce_given;             /* `dims:` was written (maybe []) */
    const mrt_mark *reduce_mark;  /* [nreduce] */
    mrt_mark c_mark;              /* `by:` or `eps:` */
    const char *c_text;           /* it as written */
    int causal_given;             /* `causal:` was written */
    int ncausal;                  /* the dims it names (the first two
                                    are in the mrt_ir_op's causal) */
    mrt_mark causal_mark;         /* `causal:` */
    mrt_mark causal_dim_mark[2];  /* each of its first two dims */
    int p_given;                  /* dropout: `p:` was written */
    mrt_mark p_mark, seed_mark;   /* `p:`, `seed:` */
    const char *p_text;           /* p as written */
    int has_layout;               /* a `layout:` (maybe {}): its rules with */
    int nlayout;                  /* marks (the mrt_ir_op's layout is not */
    const mrt_ir_rule_at *layout; /* read) */
    const mrt_rule *given;        /* rules in place of its layout, or NULL */
    mrt_ir_budget expect;         /* its budget (the mrt_ir_op's is not
                                  read) and where it was written */
    mrt_mark expect_mark;
} mrt_ir_op_at;
/* mrt_ir_set_expect with the mark of the budget (kept for messages). */
mrt_status mrt_ir_set_expect_at(mrt_ir *ir, const mrt_ir_budget *b, mrt_mark at,
                                mrt_error *err);
/* Where a link of `network:` was written: the axis, each number (and
 * how it was written, for messages). */
typedef struct mrt_ir_link_at {
    mrt_mark axis_mark, latency_mark, bandwidth_mark;
    const char *latency_text, *bandwidth_text;
} mrt_ir_link_at;
/* mrt_ir_set_link with marks (at NULL: none). */
mrt_status mrt_ir_set_link_at(mrt_ir *ir, const char *axis, double latency_us,
                              double bandwidth_GBps, const mrt_ir_link_at *at,
                              mrt_error *err);
/* A budget checked into out (-1 or more in each field; NULL: none). */
mrt_status mrt_ir_budget_check(mrt_ir_call *c, const mrt_ir_budget *b,
                               mrt_mark at, mrt_budget *out);

/* ---- build_mask.c: the masks' checks ------------------------------ */

/* softmax's causal dims (o->causal, marks in at) into u->causal (-1, -1
 * when it has none); u->dim is set. */
mrt_status mrt_ir_check_causal_op(mrt_ir_call *c, const mrt_ir_op *o,
                                  const mrt_ir_op_at *at, mrt_user_op *u);
/* dropout's p into u->c and its seed into u->seed. */
mrt_status mrt_ir_check_dropout(mrt_ir_call *c, const mrt_ir_op *o,
                                const mrt_ir_op_at *at, mrt_user_op *u);
/* ---- build_labels.c: the cross-entropy's integer labels ----------- */

/* The labels u->in[1] of softmax_cross_entropy u (integer labels, u->dim
 * its class dim) are classes: its init makes, or its file holds, only
 * labels in [0, the dim's size); the error at the tensor's init. */
mrt_status mrt_ir_check_labels(mrt_ir_call *c, const mrt_user_op *u);

/* A tensor's causal init (d->causal, marks in at) into t, its dims set. */
mrt_status mrt_ir_check_causal_init(mrt_ir_call *c, const mrt_ir_tensor *d,
                                    const mrt_ir_tensor_at *at,
                                    mrt_spec_tensor *t);

/* mrt_ir_add_op with marks (at NULL: none). */
mrt_status mrt_ir_add_op_at(mrt_ir *ir, const mrt_ir_op *o,
                            const mrt_ir_op_at *at, mrt_error *err);

/* Where the parts of a training block were written, and how the file
 * wrote each name ("'w'", "the string 'w'", "a mapping": "unknown
 * tensor 'w' ..."). */
typedef struct mrt_ir_train_at {
    mrt_mark mark; /* the block */
    mrt_mark loss_mark, params_mark, grads_mark;
    const mrt_mark *param_mark, *grad_mark; /* [nparams], [ngrads] */
    const char *loss_what;
    const char *const *param_what, *const *grad_what;
    const char *lr_text; /* lr as written, or NULL */
    mrt_mark lr_mark;
    /* the optimizer's keys (optimizer.c) */
    mrt_mark optimizer_mark, betas_mark, eps_mark, decay_mark, momentum_mark;
    mrt_mark micro_mark, micro_dim_mark, schedule_mark, virtual_mark;
} mrt_ir_train_at;
/* mrt_ir_set_train with marks (at NULL: none); the lists have no cap. */
mrt_status mrt_ir_set_train_at(mrt_ir *ir, const mrt_ir_train *t,
                               const mrt_ir_train_at *at, mrt_error *err);
/* mrt_ir_set_outputs with the mark of each name (marks may be NULL). */
mrt_status mrt_ir_set_outputs_at(mrt_ir *ir, int n, const char *const *names,
                                 const mrt_mark *marks, mrt_error *err);

/* Where the parts of one entry of an alternative's `tensors:` or `ops:`
 * were written (mrt_ir_add_alternative_at), and how the file wrote its
 * key ("'w'", "a mapping": "unknown tensor 'w' in 'tensors' ..."). */
typedef struct mrt_ir_alt_entry_at {
    mrt_mark mark; /* its key */
    const char *what;
    int nlayout;                  /* its `layout:` with marks, when */
    const mrt_ir_rule_at *layout; /* has_layout (the public entry's */
    int has_layout;               /* layout is not read) */
    int ngrad;                    /* tensors: its `grad_layout:`, the */
    const mrt_ir_rule_at *grad;   /* same way */
    int has_grad;
    mrt_mark grad_mark;
    int has_reshard;           /* `reshard_after_forward:` was written */
    mrt_mark reshard_mark;     /* (true or false: both are checked) */
    int nopt;                  /* tensors: its `optimizer_layout:`, */
    const mrt_ir_rule_at *opt; /* as grad_layout */
    int has_opt;
    mrt_mark opt_mark;
} mrt_ir_alt_entry_at;
/* Where the parts of an alternative were written.  A front end that
 * found its form wrong (broken, not NULL) passes the name and that
 * error: kept as the alternative's own with keep_broken, else the
 * call's error. */
typedef struct mrt_ir_alternative_at {
    mrt_mark mark;      /* its name */
    int has_mesh;       /* a `mesh:` (maybe with no axis: the */
    mrt_mark mesh_mark; /* public struct's naxes > 0 says it) */
    const mrt_mark *axis_mark, *size_mark; /* [naxes] */
    int nrules;                         /* its rules with marks (the public */
    const mrt_ir_rule_at *rules;        /* struct's rules are not read) */
    const mrt_ir_alt_entry_at *tensors; /* [ntensors] */
    const mrt_ir_alt_entry_at *ops;     /* [nops] */
    const mrt_error *broken;
    mrt_mark schedule_mark, virtual_mark; /* its schedule: and
                                             virtual_stages: */
    mrt_mark recompute_mark;              /* `recompute:` */
    const mrt_mark *recompute_marks;      /* [nrecompute] its names */
    mrt_mark zero_mark, zero_stage_mark;  /* `zero:` and its stage */
    const mrt_mark *zero_axis_mark;       /* [zero_naxes], or NULL */
} mrt_ir_alternative_at;
/* mrt_ir_add_alternative with marks (at NULL: none). */
mrt_status mrt_ir_add_alternative_at(mrt_ir *ir, const mrt_ir_alternative *alt,
                                     const mrt_ir_alternative_at *at,
                                     mrt_error *err);

/* ---- repeated blocks (build_block.c, build_block_refs.c) ---------- */

/* mrt_ir_block_begin with the marks of the item, its name and its dim
 * (at NULL: none). */
mrt_status mrt_ir_block_begin_at(mrt_ir *ir, const char *name, const char *dim,
                                 const mrt_mark at[3], mrt_error *err);
/* What a block's link names (mrt_ir_block_link_at). */
typedef enum mrt_ir_link_kind {
    MRT_IR_LINK_IN = 0, /* inner name -> outer tensor, instance 0 */
    MRT_IR_LINK_CARRY,  /* inner name -> inner tensor of instance i-1 */
    MRT_IR_LINK_OUT     /* outer name -> inner tensor of the last */
} mrt_ir_link_kind;
/* mrt_ir_block_in, _carry or _out (kind) with the marks of its key
 * and value (at NULL: none). */
mrt_status mrt_ir_block_link_at(mrt_ir *ir, mrt_ir_link_kind kind,
                                const char *key, const char *value,
                                const mrt_mark at[2], mrt_error *err);
/* mrt_ir_block_recompute with the mark of `recompute:` (at NULL: none). */
mrt_status mrt_ir_block_recompute_at(mrt_ir *ir, int on, const mrt_mark *at,
                                     mrt_error *err);
/* mrt_ir_block_regather (`regather:`). */
mrt_status mrt_ir_block_regather_at(mrt_ir *ir, int on, mrt_error *err);
/* After the backward program is made: its recomputation for the blocks
 * asked, and the regathering of those that regather (mrt_ir_set_train
 * calls it). */
mrt_status mrt_ir_block_apply_recompute(mrt_ir_call *c);
/* A block asked to recompute in a program with no `train:`: the error
 * (mrt_ir_finish calls it). */
mrt_status mrt_ir_block_check_recompute(mrt_ir_call *c);
/* Inside an instance: tensor d (at may be NULL) as an instance tensor;
 * returns -1 when no instance is open (the caller goes on as usual),
 * else the call's status.  mrt_ir_add_tensor_at calls it first. */
int mrt_ir_block_tensor(mrt_ir *ir, const mrt_ir_tensor *d,
                        const mrt_ir_tensor_at *at, mrt_error *err);
/* The same for op o (mrt_ir_add_op_at calls it first). */
int mrt_ir_block_op(mrt_ir *ir, const mrt_ir_op *o, const mrt_ir_op_at *at,
                    mrt_error *err);
/* The name inner name `inner` gets in the open instance ("h3.w") into
 * out, or NULL when no instance is open (or it is too long). */
const char *mrt_ir_block_full_name(const mrt_ir *ir, const char *inner,
                                   char out[MRT_NAME_MAX]);
/* Frees the block being built (mrt_ir_destroy). */
void mrt_ir_block_free(mrt_ir *ir);

/* A list of tensor names as `train:` and `outputs:` take them, with
 * block references expanded (build_block_refs.c): "h.attn.wq" is that
 * tensor of every instance of block h, "h" (params only) every input
 * of every instance of h, "all" (params only, alone) every input with
 * an init given, labels aside.  Other names are kept as they are (the
 * caller's checks see them).  names[], marks[], how[] are owned. */
typedef struct mrt_ir_names {
    int n;
    char (*buf)[MRT_NAME_MAX];
    const char **names;
    mrt_mark *marks; /* NULL when the given marks were NULL */
    const char **how;
} mrt_ir_names;
mrt_status mrt_ir_block_expand(mrt_ir_call *c, int params, int n,
                               const char *const *names, const mrt_mark *marks,
                               const char *const *how, mrt_ir_names *out);
void mrt_ir_names_free(mrt_ir_names *l);
/* The tensors "h.attn.wq" names, one per instance of block h that has
 * it, into ids (NULL: only counted); 0 when name is a tensor's or no
 * block reference. */
int mrt_ir_block_ref_ids(const mrt_spec *s, const char *name, int *ids);

/* ---- shared checks ------------------------------------------------- */

/* A mesh of naxes axes (names and sizes checked) into out; the marks
 * (may be NULL) are each axis's key and size. */
mrt_status mrt_ir_mesh(mrt_ir_call *c, int naxes, const char *const *axis,
                       const int64_t *size, const mrt_mark *axis_mark,
                       const mrt_mark *size_mark, mrt_mesh *out);

/* A name as the builder accepts it (as YAML's: a letter or '_', then
 * letters, digits and '_', shorter than MRT_NAME_MAX). */
mrt_status mrt_ir_check_name(mrt_ir_call *c, const char *name,
                             const char *kind);
/* The name of a new tensor t: valid, and no tensor's yet (else "tensor
 * 'NAME' TAKEN"). */
mrt_status mrt_ir_new_tensor(mrt_ir_call *c, const char *name,
                             const char *taken, mrt_spec_tensor *t);
/* Dim id of name, or an error "dim 'NAME' not declared". */
mrt_status mrt_ir_dim(mrt_ir_call *c, const char *name, int *out);
/* Tensor id of name, or an error "tensor 'NAME' not declared". */
mrt_status mrt_ir_tensor_id(mrt_ir_call *c, const char *name, int *out);
/* A list of dims by name into l (dims and sizes; no dim twice): the
 * shape of tensor `tensor`; marks (may be NULL) are each dim's and
 * shape_mark the whole shape's. */
mrt_status mrt_ir_shape(mrt_ir_call *c, const char *tensor, int n,
                        const char *const *names, const mrt_mark *marks,
                        mrt_mark shape_mark, mrt_layout *l);
/* Layout rules (n of them: plain, the public ones, or `at`, with
 * marks) into rules[dim id] (zeroed by the caller);
 * dims outside `shape` (when not NULL) are refused.  `of` names the
 * mapping in the file's messages ("'layout'", "the layout of tensor
 * 'x'"). */
mrt_status mrt_ir_rules(mrt_ir_call *c, int n, const mrt_ir_rule *plain,
                        const mrt_ir_rule_at *at, const mrt_layout *shape,
                        const char *of, mrt_rule rules[]);

#endif
