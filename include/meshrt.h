/*
 * meshrt.h — meshrt's public header, everything but running.
 *
 * It is one long file by design: it is the one header a C user includes
 * (with meshrt_mpi.h to run), so the whole public API, with who owns
 * what, reads in one place; the code behind it is split by layer.
 *
 * meshrt runs einsum programs on a logical processor mesh, Mesh-TensorFlow
 * style.  A C user loads a spec (mrt_spec_load, mrt_spec_load_string,
 * mrt_spec_load_ex) or builds the same program in code (mrt_ir_create
 * ... mrt_ir_finish), plans it for a mesh (mrt_plan_create: no MPI
 * needed, any mesh size), prints or inspects the plan, and runs it on the
 * ranks of a communicator with the calls of meshrt_mpi.h (mrt_init before
 * MPI_Init, then mrt_runner_*, or mrt_run in one call).  Every function
 * that can meet bad input returns an mrt_status (MRT_E_USAGE for a NULL
 * pointer argument, unless it says otherwise) and fills an optional
 * mrt_error; nothing here prints unless asked, or exits.  A function
 * returning a value says what it does with NULL.
 * Objects come in create/destroy pairs; destroy functions accept NULL.
 * docs/api.md is the guide, with programs to copy (examples/c/).
 *
 * This header needs no <mpi.h>: a planning-only program builds with a
 * plain C compiler and `pkg-config --cflags --libs meshrt`.
 */
#ifndef MESHRT_H
#define MESHRT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The version of this header; mrt_version() gives the library's. */
#define MESHRT_VERSION_MAJOR 0
#define MESHRT_VERSION_MINOR 1
#define MESHRT_VERSION_PATCH 0
#define MESHRT_VERSION "0.1.0"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(MRT_BUILDING)
#define MRT_API __attribute__((visibility("default")))
#else
#define MRT_API
#endif

/* Status codes.  0 is success; the command line maps MRT_E_RUNTIME,
 * MRT_E_NOMEM and MRT_E_VERIFY to exit status 1 and every other error
 * to 2. */
typedef enum mrt_status {
    MRT_OK = 0,
    MRT_E_SYNTAX,  /* the YAML is not well formed */
    MRT_E_SPEC,    /* well-formed YAML that is not a valid spec */
    MRT_E_IO,      /* a file could not be read, or an output path cannot
                      be a file (missing folder, a folder, too long) */
    MRT_E_USAGE,   /* bad command-line use or bad API arguments */
    MRT_E_MESH,    /* the mesh does not fit the MPI world */
    MRT_E_NOMEM,   /* out of memory */
    MRT_E_RUNTIME, /* an MPI call or a kernel failed while running, or the
                      system refused to store an output (disk full,
                      read-only, permission denied) */
    MRT_E_VERIFY,  /* results differ from the unsharded reference */
    MRT_STATUS_COUNT
} mrt_status;

/* The first error met: every call that can fail returns an mrt_status
 * and, given a non-NULL mrt_error *, fills it (one error style for the
 * whole API).  line and column are 1-based; 0 means "no position" (an
 * error about a whole file or about the command line).  Like libyaml's
 * problem and context marks, an error may carry a context: what was
 * being read when it was met and where, in the same file ("while
 * applying alternative 'zero3'" at that entry of `layouts:`);
 * context[0] == '\0' when none.  Zero an mrt_error before passing it. */
typedef struct mrt_error {
    mrt_status code;
    char file[256];
    int line, column;
    char message[512];
    int context_line, context_column; /* 1-based; 0: no position */
    char context[256];
} mrt_error;

/* The library's version, "MAJOR.MINOR.PATCH" (static). */
MRT_API const char *mrt_version(void);

/* Name of a status code, e.g. "spec error". */
MRT_API const char *mrt_status_name(mrt_status s);
/* Formats "FILE:LINE:COL: error: MESSAGE" (parts without a value are
 * left out), and with a context a second line
 * "FILE:LINE:COL: note: CONTEXT", into buf.  Returns buf; NULL for a
 * NULL buf or size 0, and "" for a NULL e. */
MRT_API char *mrt_error_format(const mrt_error *e, char *buf, size_t size);

/* ---- enums and their names ---------------------------------------- */

/* Every enum below ends with a _COUNT member; its name function returns
 * a static string, or NULL for a value out of range. */

/* Element types of a program. */
typedef enum mrt_dtype {
    MRT_F32 = 0, /* "float32", the default */
    MRT_F64,     /* "float64" */
    MRT_I32,     /* "int32": an index type (token ids, class labels) of
                    input tensors only (mrt_ir_tensor.dtype), never the
                    program's compute type */
    MRT_BF16,    /* "bfloat16": stored and sent in 2 bytes (8 bits of
                    mantissa), computed in float32 */
    MRT_F16,     /* "float16": IEEE half, stored and sent in 2 bytes (11
                    bits of mantissa), computed in float32 */
    MRT_U8,      /* "uint8": 1 byte, 0 or 1: the dropout masks meshrt
                    makes (Korthikanti et al.'s 1-byte masks); widened
                    where a kernel reads one, never a tensor's declared
                    type nor the compute type */
    MRT_DTYPE_COUNT
} mrt_dtype;
MRT_API const char *mrt_dtype_name(mrt_dtype t);
/* A memory size as written on a command line or in a machine profile:
 * bytes, or a number with a unit (B; KB, MB, GB, TB: powers of 1000;
 * KiB, MiB, GiB, TiB and K, M, G, T: powers of 1024), e.g. "80GB",
 * "80GiB", "512M", "85899345920"; at least 1 byte, under 2^63.  0 with
 * *bytes set, or MRT_E_USAGE (*bytes unchanged) for anything else or a
 * NULL argument. */
MRT_API mrt_status mrt_parse_bytes(const char *s, int64_t *bytes);
/* The compute types come first: F32 and F64 (the kernels' types; a
 * 16-bit value is computed in float32). */
#define MRT_COMPUTE_DTYPE_COUNT 2

/* How einsums are lowered (mrt_plan_options.planner). */
typedef enum mrt_planner {
    MRT_PLANNER_AUTO = 0, /* "auto": cost-aware: the cheapest execution
                             layout per op, pending sums kept where that
                             pays */
    MRT_PLANNER_MESHTF,   /* "meshtf": Mesh-TensorFlow's lowering,
                             exactly: global rules only, all-reduce, no
                             search */
    MRT_PLANNER_RULES,    /* "rules": pinned: every tensor (weights,
                             gradients, activations) in exactly the
                             layout its rules and its own layouts give,
                             and only the collectives those need; what
                             an alternative with pin: true gets */
    MRT_PLANNER_COUNT
} mrt_planner;
MRT_API const char *mrt_planner_name(mrt_planner p);

/* What a step of a plan does (mrt_plan_step_info.kind). */
typedef enum mrt_plan_step_kind {
    MRT_PLAN_STEP_EINSUM = 0,     /* "einsum": a local kernel */
    MRT_PLAN_STEP_SLICE,          /* "slice": a local copy of a block */
    MRT_PLAN_STEP_ALLGATHER,      /* "allgather" */
    MRT_PLAN_STEP_ALLTOALL,       /* "alltoall" */
    MRT_PLAN_STEP_ALLREDUCE,      /* "allreduce" */
    MRT_PLAN_STEP_REDUCE_SCATTER, /* "reduce_scatter" */
    MRT_PLAN_STEP_PERMUTE,        /* "permute": an all-to-all with one
                                     peer (the printed plan says
                                     "alltoall", its MPI call) */
    MRT_PLAN_STEP_MAP,            /* "map": an elementwise kernel */
    MRT_PLAN_STEP_REDUCE_MAX,     /* "reduce_max" */
    MRT_PLAN_STEP_RENAME,         /* "rename" */
    MRT_PLAN_STEP_ALLTOALL_GROUP, /* "alltoall_group": one all-to-all over
                                     the group of several axes (printed
                                     "alltoall") */
    MRT_PLAN_STEP_GATHER,         /* "gather": an embedding's masked local
                                     lookup of the rows of its vocab block */
    MRT_PLAN_STEP_SCATTER_ADD,    /* "scatter_add": its gradient, the
                                     local sum of rows into a table */
    MRT_PLAN_STEP_SENDRECV,       /* "sendrecv": a pipeline's transfer of
                                     a value between two stages */
    MRT_PLAN_STEP_KIND_COUNT
} mrt_plan_step_kind;
MRT_API const char *mrt_plan_step_kind_name(mrt_plan_step_kind k);

/* ---- specs -------------------------------------------------------- */

/* At most this many dims per tensor, and mesh axes. */
#define MRT_API_MAX_DIMS 12
#define MRT_API_MAX_AXES 8

typedef struct mrt_spec mrt_spec; /* a parsed, validated spec */

/* How mrt_spec_load_ex loads a spec: what it changes in it before
 * anything is resolved against it, and where its text is.  NULL members
 * (a zeroed struct, or a NULL pointer): the file, as written. */
typedef struct mrt_spec_load_options {
    const char *mesh; /* "AXIS=N,AXIS=N" (mrt_mesh_parse): replaces the
                         spec's mesh */
    const char *dims; /* "DIM=N,DIM=N": new sizes for dims the spec names
                         (an unknown dim is an MRT_E_USAGE error) */
    const char *text; /* non-NULL: the spec's text, text[0..len) (no NUL
                         needed), in place of reading path, which then
                         names the spec in errors ("mlp.yaml:3:5: error:
                         ...") and whose folder resolves relative `file:`
                         paths; the caller keeps text (the spec copies
                         what it needs) */
    size_t len;
} mrt_spec_load_options;
/* Loads the YAML spec at path with opt (may be NULL).  With a mesh or
 * dims override, a `layouts:` alternative that no longer fits is kept
 * with its error, which selecting it returns (meshrt compare shows it in
 * its row).  On success *out is a new spec the caller owns (free with
 * mrt_spec_destroy); on failure *out is NULL. */
MRT_API mrt_status mrt_spec_load_ex(const char *path,
                                    const mrt_spec_load_options *opt,
                                    mrt_spec **out, mrt_error *err);
/* mrt_spec_load_ex(path, NULL, out, err). */
MRT_API mrt_status mrt_spec_load(const char *path, mrt_spec **out,
                                 mrt_error *err);
/* mrt_spec_load_ex with the text text[0..len) named name (NULL:
 * "<string>"); nothing is read from name. */
MRT_API mrt_status mrt_spec_load_string(const char *name, const char *text,
                                        size_t len, mrt_spec **out,
                                        mrt_error *err);
MRT_API void mrt_spec_destroy(mrt_spec *spec);

/* ---- building a program in code ---------------------------------- */

/* The same program a YAML spec describes, built by calls instead of
 * read from a file: a mesh, named dims, global layout rules, input
 * tensors, ops, outputs, optionally a training block, budgets and
 * network links.  The YAML loader is a front end of these calls: each
 * call is where its part of a program is checked, whichever way it is
 * made (the same rules, the same op expansion and reverse mode); on bad
 * input it returns MRT_E_SPEC (MRT_E_USAGE for NULL or missing
 * arguments, MRT_E_IO for an unreadable file, MRT_E_NOMEM) with a
 * message that names the call and the argument, e.g.
 *
 *   mrt_ir_add_tensor: argument 'shape': dim 'foo' not declared
 *
 * (no file, line or column).  The first error sticks: every later call
 * on the same builder returns it again without doing anything, so a
 * program can be written as a list of calls and checked once, at
 * mrt_ir_finish.  Names are [A-Za-z_][A-Za-z0-9_]*, shorter than 64.
 * Every string and array passed in is borrowed for the call only.
 *
 * Order: mrt_ir_create; mrt_ir_set_dtype, mrt_ir_add_dim and
 * mrt_ir_set_rule before the first tensor; mrt_ir_add_tensor (the
 * inputs) before the first op; mrt_ir_add_op in program order;
 * mrt_ir_set_train after the last op; mrt_ir_add_alternative after
 * them; mrt_ir_set_outputs, mrt_ir_set_expect and mrt_ir_set_link at
 * any time; mrt_ir_finish;
 * mrt_ir_destroy (always, also after mrt_ir_finish or an error).  docs/api.md ("Building a program in code") has an example. */

typedef struct mrt_ir mrt_ir; /* a program being built */

/* The ops a program may use (docs/spec.md describes each). */
typedef enum mrt_ir_kind {
    MRT_IR_EINSUM = 0,
    MRT_IR_ADD,
    MRT_IR_SUB,
    MRT_IR_MUL,
    MRT_IR_DIV,
    MRT_IR_RELU,
    MRT_IR_GELU,
    MRT_IR_TANH,
    MRT_IR_EXP,
    MRT_IR_LOG,
    MRT_IR_NEG,
    MRT_IR_RSQRT,
    MRT_IR_SQUARE,
    MRT_IR_SCALE,
    MRT_IR_REDUCE_SUM,
    MRT_IR_REDUCE_MAX,
    MRT_IR_REDUCE_MEAN,
    MRT_IR_SOFTMAX,
    MRT_IR_LAYER_NORM,
    MRT_IR_RENAME,
    MRT_IR_RELAYOUT,
    MRT_IR_MSE,
    MRT_IR_SOFTMAX_CE,
    MRT_IR_EMBEDDING, /* in: [table, ids], dim: the table's vocab dim */
    MRT_IR_DROPOUT,
    MRT_IR_KIND_COUNT
} mrt_ir_kind;

/* One layout rule: dim -> mesh axes, major first, up to the first NULL
 * (none: replicated).  {"batch", {"data", "model"}} is YAML's
 * `batch: [data, model]`. */
#define MRT_IR_MAX_AXES 8
typedef struct mrt_ir_rule {
    const char *dim;
    const char *axes[MRT_IR_MAX_AXES];
} mrt_ir_rule;

/* How an input tensor is filled. */
typedef enum mrt_ir_init {
    MRT_IR_INIT_DEFAULT = 0, /* random, seeded by the tensor's name */
    MRT_IR_INIT_RANDOM,      /* uniform in [-1, 1), seeded by `seed` */
    MRT_IR_INIT_ZEROS,
    MRT_IR_INIT_ONES,
    MRT_IR_INIT_FILL,   /* every element `value` */
    MRT_IR_INIT_LABELS, /* integer class labels in [0, value) */
    MRT_IR_INIT_FILE,   /* the .npy file `file` */
    MRT_IR_INIT_CAUSAL, /* 1 where the index along causal[1] (the key) is
                           at most the one along causal[0] (the query),
                           else 0: a causal mask from global indices */
    MRT_IR_INIT_COUNT
} mrt_ir_init;

/* An input tensor (YAML: an entry of `tensors:`).  Zero fields take the
 * defaults. */
typedef struct mrt_ir_tensor {
    const char *name;
    int ndims; /* dims, by name, in storage order */
    const char *const *shape;
    int nlayout; /* its own layout rules; 0: the global */
    const mrt_ir_rule *layout;
    mrt_ir_init init;
    uint64_t seed;         /* MRT_IR_INIT_RANDOM */
    double value;          /* FILL: the value; LABELS: the classes */
    const char *file;      /* FILE: a .npy path (relative: to the
                                  current folder) */
    const char *dtype;     /* its element type: NULL (the program's) or
                                  "int32", an index tensor (token ids,
                                  labels: init LABELS or an int32/int64
                                  .npy FILE), read only as an embedding's
                                  ids or softmax_cross_entropy's labels */
    const char *causal[2]; /* CAUSAL: the query dim, then the key dim
                                  (two distinct dims of the shape) */
} mrt_ir_tensor;

/* An op (YAML: an item of `ops:`). */
typedef struct mrt_ir_op {
    mrt_ir_kind kind;
    const char *in[2]; /* one or two tensors made before */
    const char *out;   /* the new tensor's name */
    int ndims;         /* einsum: the result's dims; others:
                                  optional, the result's dims in another
                                  order (reductions: the dims kept) */
    const char *const *shape;
    const char *dim; /* softmax, layer_norm,
                                  softmax_cross_entropy: the dim;
                                  rename: the dim renamed */
    const char *to;  /* rename: its new name */
    int nreduce;     /* reduce_*: the dims reduced (0: all, or
                                  those `shape` leaves out) */
    const char *const *reduce;
    double c;    /* scale: the factor; layer_norm: eps
                                  (0: 1e-5) */
    int nlayout; /* its own layout (for the result and
                                  what the op makes inside); 0: global */
    const mrt_ir_rule *layout;
    const struct mrt_ir_budget *expect; /* this op's budget (its own
                                  steps; YAML: the op's `expect:`), or
                                  NULL: none */
    const char *causal[2]; /* softmax: [query dim, key dim] of its input,
                                  the key dim its `dim`: entries whose key
                                  index exceeds their query index get
                                  probability 0; NULL: no mask */
    double p;              /* dropout: the probability of dropping an
                                  element, 0 <= p < 1 (0: the identity) */
    int seeded;            /* dropout: seed is its mask's seed; 0: the
                                  seed comes from the out name */
    uint64_t seed;
} mrt_ir_op;

/* Budgets a plan must meet (YAML: `expect:`); plan and run exit 1 when
 * one is missed.  -1: no limit. */
typedef struct mrt_ir_budget {
    int64_t comm_bytes_max;  /* bytes per rank handed to MPI */
    int64_t peak_memory_max; /* bytes per rank */
} mrt_ir_budget;

/* `train:`: one SGD step per run; the backward program is derived by
 * reverse-mode differentiation when this is called. */
/* The optimizers of a training block (YAML: `train: {optimizer: ...}`). */
typedef enum mrt_optimizer {
    MRT_OPTIMIZER_SGD = 0,  /* w -= lr (g + wd w) */
    MRT_OPTIMIZER_MOMENTUM, /* b = mu b + g + wd w; w -= lr b */
    MRT_OPTIMIZER_ADAM,     /* Adam with bias correction, L2 decay in g */
    MRT_OPTIMIZER_ADAMW,    /* Adam with decoupled decay: w -= lr wd w */
    MRT_OPTIMIZER_COUNT
} mrt_optimizer;
/* "sgd", "momentum", "adam", "adamw"; NULL out of range. */
MRT_API const char *mrt_optimizer_name(mrt_optimizer o);

typedef struct mrt_ir_train {
    const char *loss; /* a scalar made by an op */
    int nparams;      /* inputs to train (no cap but memory) */
    const char *const *params;
    int ngrads; /* inputs whose gradient is wanted too */
    const char *const *grads;
    double lr;               /* 0: 0.01 */
    int64_t steps;           /* 0: 1 */
    mrt_optimizer optimizer; /* 0: SGD */
    double beta1, beta2;     /* Adam's, each in (0, 1); 0: 0.9, 0.999 */
    double eps;              /* Adam's, > 0; 0: 1e-8 */
    double weight_decay;     /* >= 0; 0: none */
    double momentum;         /* momentum's, in (0, 1); 0: 0.9 */
    int no_master_grads;     /* 1: no gradient copy in the optimizer's
                                type when the gradients are narrower */
    /* A pipeline's training step: the forward program made once per
     * microbatch, on slices of a dim (docs/spec.md, `microbatches`). */
    int64_t microbatches;       /* 0 or 1: none */
    const char *microbatch_dim; /* NULL: the dim named "batch" */
    const char *schedule;       /* "gpipe" (NULL), "1f1b", "interleaved",
                                   "zero_bubble" */
    int64_t virtual_stages;     /* 0: 1 */
} mrt_ir_train;

/* A new builder on a mesh of naxes axes (axis[i] of size size[i], row
 * major, first axis major).  name is what errors and the plan call the
 * program (NULL: "program").  The caller owns *out (mrt_ir_destroy). */
MRT_API mrt_status mrt_ir_create(const char *name, int naxes,
                                 const char *const *axis, const int64_t *size,
                                 mrt_ir **out, mrt_error *err);
MRT_API void mrt_ir_destroy(mrt_ir *ir);
/* MRT_F32 (the default) or MRT_F64; MRT_I32 (an index type, not a
 * compute type) is MRT_E_SPEC, another value MRT_E_USAGE. */
MRT_API mrt_status mrt_ir_set_dtype(mrt_ir *ir, mrt_dtype dtype,
                                    mrt_error *err);
MRT_API mrt_status mrt_ir_add_dim(mrt_ir *ir, const char *name, int64_t size,
                                  mrt_error *err);
/* A global layout rule (YAML: an entry of the top-level `layout:`). */
MRT_API mrt_status mrt_ir_set_rule(mrt_ir *ir, const mrt_ir_rule *rule,
                                   mrt_error *err);
MRT_API mrt_status mrt_ir_add_tensor(mrt_ir *ir, const mrt_ir_tensor *t,
                                     mrt_error *err);
MRT_API mrt_status mrt_ir_add_op(mrt_ir *ir, const mrt_ir_op *op,
                                 mrt_error *err);
/* The whole program's budget (YAML: the top-level `expect:`). */
MRT_API mrt_status mrt_ir_set_expect(mrt_ir *ir, const mrt_ir_budget *b,
                                     mrt_error *err);
/* The link of mesh axis `axis` (YAML: an entry of `network:`), in place
 * of the machine profile's: latency in microseconds (0 < it <= 1e9) and
 * bandwidth in GB/s (1e-9 to 1e12).  Once per axis. */
MRT_API mrt_status mrt_ir_set_link(mrt_ir *ir, const char *axis,
                                   double latency_us, double bandwidth_GBps,
                                   mrt_error *err);
/* A repeated block (YAML: a `repeat:` item of `ops:`): tensors and ops
 * written once with inner names and made once per index i of dim
 * `repeat_dim` (its size: --dim works), instance i's named
 * "<name><i>.<inner name>" ("h3.attn.wq").  name: a tensor name not
 * ending in a digit, no tensor's and no other block's.  After begin,
 * declare the inputs (mrt_ir_block_in: inner name -> outer tensor in
 * instance 0), carries (mrt_ir_block_carry: inner name -> the inner
 * tensor of instance i-1 it is in instance i > 0; the name must have an
 * `in`) and outputs (mrt_ir_block_out: an outer name for the last
 * instance's inner tensor); then build each instance:
 *
 *     for (int i; (i = mrt_ir_block_next(ir, &err)) >= 0;)
 *         ... mrt_ir_add_tensor / mrt_ir_add_op with inner names ...
 *     mrt_ir_block_end(ir, &err);
 *
 * Inside, a name is the instance's own tensor (its inputs, carries,
 * tensors and op results) first, else an outer tensor; an inner name
 * may not be an outer tensor's name.  A `random` seed S given inside
 * seeds instance i with S + i * 0x9E3779B97F4A7C15 (mod 2^64).  Blocks
 * do not nest.  docs/api.md has an example. */
MRT_API mrt_status mrt_ir_block_begin(mrt_ir *ir, const char *name,
                                      const char *repeat_dim, mrt_error *err);
MRT_API mrt_status mrt_ir_block_in(mrt_ir *ir, const char *inner,
                                   const char *outer, mrt_error *err);
MRT_API mrt_status mrt_ir_block_carry(mrt_ir *ir, const char *inner,
                                      const char *from, mrt_error *err);
MRT_API mrt_status mrt_ir_block_out(mrt_ir *ir, const char *outer,
                                    const char *inner, mrt_error *err);
/* Starts the next instance: its index, or -1 after the last one or on
 * an error (then err says it). */
MRT_API int mrt_ir_block_next(mrt_ir *ir, mrt_error *err);
MRT_API mrt_status mrt_ir_block_end(mrt_ir *ir, mrt_error *err);
/* Between begin and end (YAML: `recompute: true` on the block): the
 * backward pass of each instance re-runs the instance's forward ops
 * first and reads their results, so that only the instance's input is
 * kept from the forward pass (activation recomputation: flops for
 * memory).  The program must have a `train:` (mrt_ir_set_train). */
MRT_API mrt_status mrt_ir_block_recompute(mrt_ir *ir, int on, mrt_error *err);
/* Between begin and end (YAML: `regather: true` on the block): a value
 * the forward pass moved (gathered) for an op of an instance is not kept
 * for the backward pass, which moves it again from the value's home
 * layout: with sequence parallelism the backward pass all-gathers the
 * column-parallel einsums' inputs again instead of keeping the gathered
 * copies (Korthikanti et al.'s choice: one all-gather more per einsum
 * for their memory).  Without train: it changes nothing. */
MRT_API mrt_status mrt_ir_block_regather(mrt_ir *ir, int on, mrt_error *err);

/* The tensors the program returns (default: the last op's result; with
 * training, also the loss, the gradients and the updated params). */
MRT_API mrt_status mrt_ir_set_outputs(mrt_ir *ir, int n,
                                      const char *const *names, mrt_error *err);
MRT_API mrt_status mrt_ir_set_train(mrt_ir *ir, const mrt_ir_train *t,
                                    mrt_error *err);
/* A named alternative to the global rules (YAML: an entry of
 * `layouts:`), which meshrt compare, plan --layout and
 * mrt_compare_create plan the program under: its own rules (dims it
 * leaves out are replicated), optionally its own mesh of the same
 * number of ranks, and layouts of its own for some tensors and ops.
 * A layout given with nlayout 0 and a non-NULL pointer is replicated
 * on every dim; a NULL layout is none. */
typedef struct mrt_ir_alternative_tensor {
    const char *name; /* a tensor of the program */
    int nlayout;      /* its layout in place of its home one */
    const mrt_ir_rule *layout;
    int ngrad_layout;                    /* the layout of every piece of its */
    const mrt_ir_rule *grad_layout;      /* gradient (it must have one) */
    int reshard_after_forward;           /* a trained param: the backward pass
                                  moves it again from its home layout
                                  (FSDP's option) */
    int noptimizer_layout;               /* a trained param: the layout */
    const mrt_ir_rule *optimizer_layout; /* of its optimizer state and
                                  update (NULL: the param's own) */
} mrt_ir_alternative_tensor;
typedef struct mrt_ir_alternative_op {
    const char *out;           /* the op, named by its result */
    int nlayout;               /* its layout (the result and the */
    const mrt_ir_rule *layout; /* tensors it makes inside) */
} mrt_ir_alternative_op;
typedef struct mrt_ir_alternative {
    const char *name;
    int naxes; /* its own mesh (0: the program's) */
    const char *const *axis;
    const int64_t *size;
    int nrules; /* its global rules */
    const mrt_ir_rule *rules;
    int ntensors;
    const mrt_ir_alternative_tensor *tensors;
    int nops;
    const mrt_ir_alternative_op *ops;
    int pin;                /* nonzero: pinned (YAML's pin: true): planned as
                MRT_PLANNER_RULES plans, unless the meshtf planner
                is asked for */
    const char *schedule;   /* its pipeline schedule ("gpipe", "1f1b",
                               "interleaved", "zero_bubble"), NULL:
                               mrt_ir_train's */
    int64_t virtual_stages; /* its virtual stages per stage, 0:
                               mrt_ir_train's */
    /* YAML's `recompute:`: blocks whose activations this alternative
     * recomputes (mrt_ir_block_recompute), besides those the program
     * recomputes already: every block (recompute_all), or the blocks
     * named in recompute[0..nrecompute) */
    int recompute_all;
    int nrecompute;
    const char *const *recompute;
    int zero_stage; /* ZeRO (YAML `zero: {stage, axes}`): 1 each
                       parameter's optimizer state sharded over
                       zero_axes too, 2 its gradient as well (reduce-
                       scattered), 3 the parameter as well (gathered
                       when used); 0: none */
    int zero_naxes; /* mesh axes of the alternative's mesh */
    const char *const *zero_axes;
} mrt_ir_alternative;
/* Adds alternative alt, after the last op and mrt_ir_set_train (it is
 * checked against every tensor now, gradients included). */
MRT_API mrt_status mrt_ir_add_alternative(mrt_ir *ir,
                                          const mrt_ir_alternative *alt,
                                          mrt_error *err);
/* The program, checked and complete, as a spec the caller owns
 * (mrt_spec_destroy): plan it with mrt_plan_create like a loaded one.
 * The builder is then empty: only mrt_ir_destroy may follow. */
MRT_API mrt_status mrt_ir_finish(mrt_ir *ir, mrt_spec **out, mrt_error *err);

/* ---- end of building a program in code ---------------------------- */

/* ---- plans -------------------------------------------------------- */

typedef struct mrt_plan mrt_plan;

typedef struct mrt_plan_options {
    mrt_planner planner;
    const char *machine; /* machine profile file, or the name of one of
                            profiles/ (the CLI's --machine: dgx-h100);
                            NULL: the default file (see
                            mrt_machine_get_default_path) when it exists,
                            else the built-in profile */
    int explain;         /* keep the alternatives weighed for each op */
    int blocking;        /* issue every collective blocking; by default a
                            collective whose result is read only some
                            steps later runs in the background */
    /* > 0: ranks on one node, over the profile's (the CLI's
     * --ranks-per-node; docs/cost-model.md: ranks fill nodes in order,
     * the mesh's last axes innermost); 0: the profile's */
    int64_t ranks_per_node;
    /* > 0: the memory of one rank (a device's), bytes (the CLI's
     * --device-memory); 0: the profile's `device_memory:` (0: none).
     * A plan whose peak is over it does not fit (mrt_plan_memory.fits). */
    int64_t device_memory;
    /* non-NULL: the machine profile of this plan as it stands (with the
     * product rates mrt_machine_time_products added to it), instead of
     * machine, ranks_per_node and the spec's network: */
    const mrt_plan *machine_of;
} mrt_plan_options;

/* Lowers every op of spec into local kernels and collectives; opt may be
 * NULL (auto planner, default profile).  The plan does not borrow spec:
 * it copies what it needs.  The caller owns *out. */
MRT_API mrt_status mrt_plan_create(const mrt_spec *spec,
                                   const mrt_plan_options *opt, mrt_plan **out,
                                   mrt_error *err);
MRT_API void mrt_plan_destroy(mrt_plan *plan);
/* Human-readable plan; deterministic, so it can be golden-tested.  The
 * three printers print nothing for a NULL plan or f. */
MRT_API void mrt_plan_print(const mrt_plan *plan, FILE *f);
/* The same as one JSON object (see docs/plan.md for its fields). */
MRT_API void mrt_plan_print_json(const mrt_plan *plan, FILE *f);
/* The alternatives weighed for each op (plan made with explain = 1). */
MRT_API void mrt_plan_print_explain(const mrt_plan *plan, FILE *f);

/* Totals per rank of the whole plan. */
typedef struct mrt_plan_totals {
    int64_t comm_bytes;       /* handed to MPI (per rank: with uneven shards,
                            the largest rank's, rank 0's) */
    int64_t comm_bytes_total; /* handed to MPI by all ranks together */
    double wire_bytes;        /* sent on the wire (modeled) */
    int64_t messages;         /* modeled */
    int64_t collectives;      /* MPI calls */
    double flops;             /* local kernels */
    double comm_time_s;       /* modeled */
    double compute_time_s;
    double time_s;       /* comm + compute, modeled */
    int64_t peak_memory; /* bytes per rank a run holds at its peak: the
                            buffer of every shard (placed by lifetime),
                            the kernels' workspace, and MPI's own scratch
                            for the collectives */
    /* The same split by the part of a training step the steps belong to:
     * [0] forward, [1] backward, [2] update (all forward without
     * `train:`). */
    int64_t phase_comm_bytes[3];
    double phase_wire_bytes[3];
    int64_t phase_collectives[3];
    double phase_time_s[3];
} mrt_plan_totals;
/* All zero for a NULL plan. */
MRT_API mrt_plan_totals mrt_plan_get_totals(const mrt_plan *plan);

/* One step of a plan, copied out as plain data (nothing points into the
 * plan): the figures mrt_plan_print shows on the step's line. */
typedef struct mrt_plan_step_info {
    mrt_plan_step_kind kind;
    int collective;    /* 1: the step calls MPI */
    int op;            /* the spec's op it comes from, from 1; 0
                            for the ops a `train:` block adds */
    int phase;         /* 0 forward, 1 backward, 2 update */
    int naxes;         /* mesh axes a collective or slice runs over */
    char axes[256];    /* their names, comma-separated: "my,mz" */
    int64_t group;     /* ranks per group (1 for local steps) */
    int64_t bytes;     /* per rank handed to MPI (the largest rank's;
                            0 for local steps) */
    double wire_bytes; /* per rank on the wire (modeled; collectives) */
    double flops;      /* per rank (einsums) */
    double time_s;     /* modeled */
    int stage;         /* a pipeline's stage whose ranks run it (of a
                            sendrecv: the receiving one); -1: every rank */
    int from_stage;    /* a sendrecv's sending stage; else -1 */
} mrt_plan_step_info;
/* The number of steps of plan (0 for NULL). */
MRT_API int mrt_plan_step_count(const mrt_plan *plan);
/* A pipelined plan (a block's repeat dim split over a mesh axis): which
 * layers each stage holds, one line into buf ("pipeline over 'pipe': 4
 * stages, ...: stage 0 holds h layers 0-1; stage 1 ..."), and 1; 0
 * (buf untouched) when the plan is not pipelined. */
MRT_API int mrt_plan_stage_layers(const mrt_plan *plan, char *buf, size_t size);
/* Step i (0 <= i < mrt_plan_step_count) into *out; MRT_E_USAGE for a
 * NULL argument or an i out of range. */
MRT_API mrt_status mrt_plan_get_step(const mrt_plan *plan, int i,
                                     mrt_plan_step_info *out, mrt_error *err);

/* A value of a plan: one tensor in one layout at one point of the
 * program (the plan is a straight-line program over values: each step
 * makes one).  A tensor has several when the plan moves it, and an
 * einsum's result is a pending sum over the mesh axes of its split
 * summed dims until a reduction resolves it: `partial` says over which
 * (the true block is the sum of the shards of the ranks that differ
 * only along those axes).  Copied out as plain data; the names are
 * borrowed from the plan and live as long as it. */
typedef struct mrt_plan_value_info {
    int tensor;       /* the spec's tensor (mrt_spec_get_tensor's i) */
    const char *name; /* the tensor's name (borrowed) */
    int step;         /* the step that makes it (mrt_plan_get_step);
                         -1 for an input */
    int input;        /* 1: an input as it enters the program */
    int op_result;    /* 1: what the op that makes the tensor leaves
                         (its home layout, or pending sums the planner
                         kept for the consumer) */
    int ndims;
    const char *dim[MRT_API_MAX_DIMS]; /* dim names (borrowed) */
    int64_t shape[MRT_API_MAX_DIMS];   /* global sizes */
    int naxes[MRT_API_MAX_DIMS];       /* mesh axes that split dim d, */
    int axis[MRT_API_MAX_DIMS][MRT_API_MAX_AXES]; /* major first (indices
                         into mrt_plan_get_mesh's axes) */
    unsigned partial;    /* bit a: a pending sum over mesh axis a */
    int64_t shard_bytes; /* the largest shard's bytes (rank 0's) */
    int elsize;          /* bytes per element */
    char layout[1024];   /* "[batch/data, d_ff/model] partial(data)" */
} mrt_plan_value_info;
/* The number of values of plan (0 for NULL). */
MRT_API int mrt_plan_value_count(const mrt_plan *plan);
/* Value i (0 <= i < mrt_plan_value_count) into *out; MRT_E_USAGE for a
 * NULL argument or an i out of range. */
MRT_API mrt_status mrt_plan_get_value(const mrt_plan *plan, int i,
                                      mrt_plan_value_info *out, mrt_error *err);
/* The value of the tensor called name as the program has it first: an
 * input as it enters, an op's result as its op leaves it; -1 when no
 * tensor has that name (or for NULL). */
MRT_API int mrt_plan_find_value(const mrt_plan *plan, const char *name);
/* The block of value i the rank `rank` holds: for each dim, the global
 * index of its first element in start[d] and how many in extent[d]
 * (the caller's arrays of the value's ndims; layout.h's block rule:
 * uneven splits give the first blocks one more).  MRT_E_USAGE for a bad
 * argument. */
MRT_API mrt_status mrt_plan_get_shard(const mrt_plan *plan, int i, int64_t rank,
                                      int64_t start[], int64_t extent[],
                                      mrt_error *err);
/* ---- pipeline schedules ------------------------------------------- */

/* A pipeline's schedule (ops/schedule.h): for each of its stages, the
 * slots it runs in order, each one microbatch's forward (F), backward (B)
 * or weight gradient (W, zero_bubble only) through one chunk (virtual
 * stage), with the start and end times of a replay. */
typedef struct mrt_schedule mrt_schedule;
typedef struct mrt_schedule_info {
    const char *kind; /* "gpipe", "1f1b", "interleaved", "zero_bubble"
                         (static) */
    int stages, virtual_stages, microbatches;
    int slots;              /* per stage */
    double makespan_s;      /* the replay's */
    double bubble_fraction; /* the busiest stage's idle over busy time */
    int busiest;            /* that stage */
} mrt_schedule_info;
typedef struct mrt_schedule_slot_info {
    int stage, chunk, micro;
    char phase; /* 'F', 'B' or 'W' */
    double start_s, end_s;
} mrt_schedule_slot_info;
/* The schedule kind (a name above) for `stages` stages, virtual_stages
 * per stage (1 but with interleaved) and microbatches (a multiple of the
 * stages with interleaved), replayed with every slot 1 s long and no
 * transfer time (the textbook picture), into *out (the caller's:
 * mrt_schedule_destroy).  MRT_E_USAGE for a bad argument. */
MRT_API mrt_status mrt_schedule_create(const char *kind, int stages,
                                       int virtual_stages, int microbatches,
                                       mrt_schedule **out, mrt_error *err);
MRT_API void mrt_schedule_destroy(mrt_schedule *s);
/* The schedule a pipelined plan runs, replayed with its modeled times
 * (owned by the plan); NULL for a plan with no pipeline, or NULL. */
MRT_API const mrt_schedule *mrt_plan_get_schedule(const mrt_plan *plan);
/* s as a whole into *out (zeros for a NULL s). */
MRT_API void mrt_schedule_get_info(const mrt_schedule *s,
                                   mrt_schedule_info *out);
/* Stage `stage`'s i-th slot (0 <= i < slots) into *out; MRT_E_USAGE for a
 * NULL argument or one out of range. */
MRT_API mrt_status mrt_schedule_get_slot(const mrt_schedule *s, int stage,
                                         int i, mrt_schedule_slot_info *out,
                                         mrt_error *err);
/* The most (chunk, microbatch) activations in flight on stage `stage`
 * (forward run, last backward not yet); -1 for a bad argument. */
MRT_API int mrt_schedule_in_flight(const mrt_schedule *s, int stage);

/* ---- memory by kind (ops/memory_kind.c, ops/memory_timeline.c) ---- */

/* What a byte of a rank's memory holds.  Every value of a plan is of one
 * kind (mrt_plan_value_info has no kind: mrt_plan_value_kind reads it):
 * a parameter (a `train:` param as it enters, and its update), a
 * gradient (a param's or a `grads:` input's, and its pieces), optimizer
 * state, an activation (a forward value, or an input, that a backward
 * step reads: what the backward pass keeps), a communication buffer (a
 * copy a collective makes for the op that reads it: gathered weights,
 * moved activations), anything else (temporaries, losses); and the
 * workspace of the running step with MPI's scratch, which is no value. */
typedef enum mrt_memory_kind {
    MRT_MEM_PARAMS = 0,
    MRT_MEM_GRADS,
    MRT_MEM_OPTIMIZER,
    MRT_MEM_ACTIVATIONS,
    MRT_MEM_COMM,
    MRT_MEM_OTHER,
    MRT_MEM_WORKSPACE,
    MRT_MEM_KIND_COUNT
} mrt_memory_kind;
/* "params", "grads", "optimizer", "activations", "comm", "other",
 * "workspace"; NULL out of range. */
MRT_API const char *mrt_memory_kind_name(mrt_memory_kind k);
/* The kind of value i of plan; -1 for a NULL plan or an i out of range. */
MRT_API int mrt_plan_value_kind(const mrt_plan *plan, int i);

/* A rank's memory at its peak.  The bytes by kind are those live at the
 * step where the most are (live_peak: values, that step's workspace and
 * the MPI scratch of the collectives running); a run allocates more
 * (peak: every value in one arena packed by lifetime, the largest
 * workspace and the most MPI scratch at once), and the difference is
 * `fragmentation`, so the kinds and it add up to peak exactly. */
typedef struct mrt_plan_memory {
    int64_t peak;      /* mrt_plan_totals.peak_memory (stage -1) */
    int64_t live_peak; /* the sum of by_kind */
    int64_t by_kind[MRT_MEM_KIND_COUNT];
    int64_t fragmentation; /* peak - live_peak: packing (the arena's gaps
                              and alignment over the values live at the
                              peak) + held apart (the largest workspace
                              and the most MPI scratch, allocated beside
                              the arena, over what the peak step uses) */
    int64_t packing;       /* of fragmentation (stage -1; else 0) */
    int64_t arena;         /* the arena of the values (stage -1) */
    int64_t values_peak;   /* the most value bytes live at one step: the
                              floor of any arena (arena - values_peak is
                              the packing's gaps and alignment) */
    int peak_step;         /* the step of live_peak (nsteps: after the
                              last, where inputs and outputs remain) */
    int peak_op;           /* its op (an index of the plan's ops) */
    int user;              /* that op's spec op number, 0: train: */
    int phase;             /* 0 forward, 1 backward, 2 update */
    int64_t device_memory; /* the device memory it is planned for (the
                              option's, else the profile's; 0: none) */
    int fits;              /* 1 if peak <= device_memory (or none) */
    int stages;            /* the plan's pipeline stages (1: none) */
} mrt_plan_memory;
/* The memory of the ranks of pipeline stage `stage` (-1: every value of
 * the plan, as every rank of a plan without stages holds them); for a
 * stage, peak is its live peak (fragmentation 0: the arena is shared).
 * MRT_E_USAGE for a NULL argument; MRT_E_NOMEM. */
MRT_API mrt_status mrt_plan_get_memory(const mrt_plan *plan, int stage,
                                       mrt_plan_memory *out, mrt_error *err);
/* The memory timeline of stage (as above): for each op of the plan, the
 * bytes by kind live at the op's step with the most (rows[op][kind],
 * nops rows of the caller's array; NULL: count only).  Returns the
 * number of ops (mrt_plan_op_count), or -1 for a NULL plan or out of
 * memory. */
MRT_API int mrt_plan_memory_timeline(const mrt_plan *plan, int stage,
                                     int64_t (*rows)[MRT_MEM_KIND_COUNT]);
/* The number of ops of plan (0 for NULL), and op i's spec op number (0:
 * added by `train:`), phase and result's tensor name (borrowed); -1 /
 * NULL out of range. */
MRT_API int mrt_plan_op_count(const mrt_plan *plan);
MRT_API int mrt_plan_op_user(const mrt_plan *plan, int i);
MRT_API int mrt_plan_op_phase(const mrt_plan *plan, int i);
MRT_API const char *mrt_plan_op_name(const mrt_plan *plan, int i);

/* The spec's `expect:` budgets (docs/spec.md) a plan exceeds. */
typedef enum mrt_budget_kind {
    MRT_BUDGET_COMM_BYTES = 0, /* comm_bytes_max: bytes per rank to MPI */
    MRT_BUDGET_PEAK_MEMORY,    /* peak_memory_max: bytes per rank */
    MRT_BUDGET_KIND_COUNT
} mrt_budget_kind;
typedef struct mrt_budget_violation {
    int op; /* 0: the whole program's budget; else the
                             spec op's number, from 1 */
    mrt_budget_kind kind;
    int64_t value, limit; /* the plan's figure, over the budget's */
    mrt_error error;      /* MRT_E_SPEC at the `expect:` node: "the plan
                             hands 4096 bytes per rank to MPI, over the
                             budget of 1024 (expect: comm_bytes_max)" */
} mrt_budget_violation;
/* Checks plan (made from spec, or a selected alternative of it) against
 * the spec's budgets: the whole program's, then each op's in program
 * order.  Writes the first max violations to out (the caller's array;
 * out NULL: count only) and returns how many there are in all (0:
 * within budget), so a caller may count first, then allocate; -1 for a
 * NULL spec or plan. */
MRT_API int mrt_plan_check_budgets(const mrt_spec *spec, const mrt_plan *plan,
                                   mrt_budget_violation *out, int max);

/* What `meshrt check` warns about, as data: layouts that waste the mesh
 * or do not fit it.  Warnings are advice: the plan is valid. */
typedef enum mrt_warning_kind {
    MRT_WARN_MEMORY = 0,    /* the plan's peak memory per rank is over a
                               rank's memory (no position) */
    MRT_WARN_DUPLICATED_OP, /* an einsum computes the same result on every
                               rank of a mesh axis (at the op) */
    MRT_WARN_REPLICATED,    /* a tensor kept replicated whose shard is over
                               a share of a rank's memory (at the tensor) */
    /* on a profile with nodes: a mesh axis that a forward einsum of the
     * spec sums over (tensor parallelism) has groups that cross nodes
     * (at the first such op) */
    MRT_WARN_TP_ACROSS_NODES,
    MRT_WARNING_KIND_COUNT
} mrt_warning_kind;
typedef struct mrt_warning {
    mrt_warning_kind kind;
    char file[256];     /* the spec */
    int line, column;   /* 1-based; 0: about the whole plan */
    char message[1024]; /* one line, without "warning:" */
} mrt_warning;
typedef struct mrt_warning_options {
    int64_t memory;          /* bytes of one rank; 0: this machine's */
    const char *memory_name; /* what messages call it; NULL: "this
                                machine's memory" (memory 0), else "a
                                rank's memory" */
    double replicated_share; /* warn about a replicated shard over this
                                share of memory; 0: 0.25 */
    unsigned kinds;          /* 0: every kind; else only those whose bit
                                1u << kind is set */
} mrt_warning_options;
/* The warnings about plan (made from spec, or the alternative of it the
 * plan was made from): the memory one, then each op's, then each
 * tensor's.  opt may be NULL (the defaults).  Writes the first max to
 * out (the caller's array; NULL: count only) and returns how many there
 * are in all; -1 for a NULL spec or plan. */
MRT_API int mrt_plan_warnings(const mrt_spec *spec, const mrt_plan *plan,
                              const mrt_warning_options *opt, mrt_warning *out,
                              int max);

/* ---- comparing partitionings -------------------------------------- */

/* One partitioning of a comparison: the spec's own rules ("spec") or an
 * alternative of its `layouts:`. */
typedef struct mrt_compare_row {
    char name[64];          /* "spec", or the alternative's name */
    char mesh[600];         /* "data=2,model=2" ("(1 rank)": no axes) */
    int ok;                 /* planned; else error says why not */
    mrt_error error;        /* code MRT_OK, or why it did not load or plan
                            (mrt_error_format words it) */
    mrt_plan_totals totals; /* ok only */
    mrt_plan_memory memory; /* ok only: the peak by kind, and whether it
                               fits the device memory (memory.fits) */
    int64_t *axis_bytes;    /* [ncols]: bytes per rank over each axis set */
    /* A pinned row (pin: true, or --planner rules) is planned with its
     * layouts as given; beside it, the auto planner's plan of the same
     * program, which may depart from them where that is cheaper: */
    int pinned;                  /* ok only */
    int auto_ok;                 /* pinned and auto planned it too */
    mrt_plan_totals auto_totals; /* auto_ok only */
    char auto_moves[1024];       /* auto_ok only: the collectives auto
                                    drops and adds ("" when the same),
                                    "drops K T over AXES, ...; adds ..." */
} mrt_compare_row;

/* A comparison: plain data the caller reads (and must not change); free
 * with mrt_compare_destroy. */
typedef struct mrt_compare {
    int nrows;
    mrt_compare_row *row; /* [nrows]: "spec" first, then the alternatives
                             in file order */
    int ncols;
    char (*col)[600]; /* [ncols]: axis-set names, e.g. "data,model";
                             fewer axes first, then in mesh order */
    int fastest;      /* row with the least modeled time; -1: none
                             planned */
    int training;     /* the spec has `train:` (totals.phase_* split
                             forward, backward, update) */
    mrt_planner planner;
    char machine[4096]; /* the cost model's machine profile as plans
                             name it; "": no row planned */
} mrt_compare;

/* Plans spec under its own layout rules and under each alternative of
 * its `layouts:` (each with its own mesh, if it has one), all with opt
 * (NULL: defaults).  Mesh and dim overrides are given when loading
 * (mrt_spec_load_ex): an alternative that no longer fits them gets its
 * load error in its row.  A partitioning that does not plan is a row
 * with ok 0, not a failure: this fails only for NULL arguments
 * (MRT_E_USAGE) or out of memory.  The caller owns *out. */
MRT_API mrt_status mrt_compare_create(const mrt_spec *spec,
                                      const mrt_plan_options *opt,
                                      mrt_compare **out, mrt_error *err);
MRT_API void mrt_compare_destroy(mrt_compare *c);

/* A comparison at each of several sizes of one dim (`meshrt compare
 * --sweep`): the spec is loaded from path once per size, with load (may
 * be NULL) and `dim` set to that size on top of load->dims, then compared
 * as mrt_compare_create does. */
#define MRT_SWEEP_MAX 64 /* sizes at most */
typedef struct mrt_sweep_cell {
    int ok;                 /* planned; else error says why not */
    mrt_plan_totals totals; /* ok only */
    mrt_error error;        /* code MRT_OK, or why it did not plan */
} mrt_sweep_cell;
typedef struct mrt_sweep {
    char dim[64]; /* the dim swept; several zipped: "length,klen"; a
                     mesh sweep: "mesh" */
    int nvalues;
    /* The sizes, in the caller's order (mrt_sweep_create_points: the
     * rank count of each point's mesh, 0 where the spec did not load). */
    int64_t value[MRT_SWEEP_MAX];
    /* Each point as given: "batch=64", "length=256,klen=256",
     * "data=8,model=1". */
    char label[MRT_SWEEP_MAX][256];
    mrt_error load_error[MRT_SWEEP_MAX]; /* code MRT_OK: the spec loaded
                                         at that size; else why not (each
                                         row's cell there has that
                                         error) */
    int nrows;
    char (*name)[64];     /* [nrows]: "spec", then the alternatives, as
                               first met */
    mrt_sweep_cell *cell; /* row r at size v: cell[r * MRT_SWEEP_MAX + v] */
    int fastest[MRT_SWEEP_MAX]; /* the row with the least modeled time at
                               each size; -1: none planned */
    char machine[4096];         /* the cost model's machine profile as plans
                               name it; "": none planned */
} mrt_sweep;
/* nvalues sizes (1 to MRT_SWEEP_MAX, each > 0) of dim.  A size at which
 * the spec does not load, or a row that does not plan, is recorded, not
 * a failure (nrows is 0 when no size loaded): this fails only for bad
 * arguments (MRT_E_USAGE: NULL path, dim, values or out; ov and opt may
 * be NULL) or out of memory.  The caller owns *out
 * (mrt_sweep_destroy). */
MRT_API mrt_status mrt_sweep_create(const char *path,
                                    const mrt_spec_load_options *load,
                                    const char *dim, int nvalues,
                                    const int64_t *values,
                                    const mrt_plan_options *opt,
                                    mrt_sweep **out, mrt_error *err);
/* One point of a general sweep: dims set on top of load->dims (DIM=N,...,
 * as --dim; NULL: none) and a mesh replacing load->mesh (AXIS=N,..., as
 * --mesh; NULL: load's).  label names it in the table (NULL: the two
 * joined by a blank); dim and value of the table are then `what` (NULL:
 * "point") and the points' rank counts. */
typedef struct mrt_sweep_point {
    const char *dims;
    const char *mesh;
    const char *label;
} mrt_sweep_point;
/* A comparison at each of npoints points (1 to MRT_SWEEP_MAX): several
 * dims moved together (`compare --sweep A=.. --sweep B=..`) or mesh
 * shapes (`compare --sweep-mesh`), of any rank count (a comparison only
 * plans).  Errors as mrt_sweep_create's (MRT_E_USAGE: NULL path, points
 * or out, npoints out of range). */
MRT_API mrt_status mrt_sweep_create_points(const char *path,
                                           const mrt_spec_load_options *load,
                                           const char *what, int npoints,
                                           const mrt_sweep_point *points,
                                           const mrt_plan_options *opt,
                                           mrt_sweep **out, mrt_error *err);
MRT_API void mrt_sweep_destroy(mrt_sweep *s);

/* ---- inspecting a spec -------------------------------------------- */

/* Plain data, filled by the calls below; strings marked borrowed live
 * as long as the spec. */

/* A mesh: axis i is name[i] of size[i], row major (first axis major). */
typedef struct mrt_mesh_info {
    int naxes;
    char name[MRT_API_MAX_AXES][64];
    int64_t size[MRT_API_MAX_AXES];
    int64_t nranks; /* the product of the sizes */
} mrt_mesh_info;
/* The mesh plan is made for (an alternative may have its own) into
 * *out; all zero for a NULL plan, nothing for a NULL out. */
MRT_API void mrt_plan_get_mesh(const mrt_plan *plan, mrt_mesh_info *out);

/* A spec as a whole. */
typedef struct mrt_spec_info {
    const char *path; /* as given to the loader (borrowed) */
    mrt_mesh_info mesh;
    mrt_dtype dtype;
    int ndims;              /* named dims: mrt_spec_get_dim */
    int ntensors;           /* inputs, then op results (with `train:`,
                                the backward program's too) */
    int nops;               /* ops as planned (with `train:`, forward,
                                backward and update) */
    int nalternatives;      /* alternatives: entries of `layouts:` */
    int training;           /* the spec has `train:` */
    int nparams;            /* tensors `train:` updates (its `params:`) */
    int64_t param_elements; /* their elements, summed: the model's
                                parameter count */
} mrt_spec_info;
/* A NULL spec: *out all zero; a NULL out: nothing. */
MRT_API void mrt_spec_get_info(const mrt_spec *spec, mrt_spec_info *out);

/* The name of dim i (0 <= i < ndims; borrowed), its size in *size (may
 * be NULL); NULL when i is out of range or spec is NULL. */
MRT_API const char *mrt_spec_get_dim(const mrt_spec *spec, int i,
                                     int64_t *size);
/* The index of the dim called name, or -1 (also for a NULL spec or
 * name). */
MRT_API int mrt_spec_find_dim(const mrt_spec *spec, const char *name);

/* Tensor i of the spec (0 <= i < ntensors) and how it is laid out. */
typedef struct mrt_spec_tensor_info {
    const char *name; /* borrowed */
    int input;        /* 1: an input; 0: an op's result */
    int own_layout;   /* laid out by its own (or its op's)
                                `layout:`, not the global rules */
    int ndims;
    const char *dim[MRT_API_MAX_DIMS]; /* dim names (borrowed) */
    int64_t shape[MRT_API_MAX_DIMS];
    int64_t shard_shape[MRT_API_MAX_DIMS]; /* the largest shard's (rank
                                0's): split unevenly, others are smaller */
    int even;             /* every rank's shard has that shape */
    char layout[1024];    /* "[batch/data, d_model]": each dim and the
                                mesh axes that split it */
    char replicated[600]; /* "model": the mesh axes it is not split
                                over, "" when none (or one rank) */
    const char *block;    /* the repeated block whose instance made it
                                (borrowed), or NULL */
    int layer;            /* that instance (0 ..), or -1 */
} mrt_spec_tensor_info;
/* MRT_E_USAGE when i is out of range. */
MRT_API mrt_status mrt_spec_get_tensor(const mrt_spec *spec, int i,
                                       mrt_spec_tensor_info *out,
                                       mrt_error *err);

/* The link the spec's `network:` gives mesh axis `axis`: 1, with its
 * latency in microseconds and bandwidth in GB/s (either pointer may be
 * NULL), or 0 when it gives none (also for NULL spec or axis). */
MRT_API int mrt_spec_get_link(const mrt_spec *spec, const char *axis,
                              double *latency_us, double *bandwidth_GBps);

/* The name of alternative i of the spec's `layouts:` (0 <= i <
 * nalternatives; borrowed), or NULL (also for a NULL spec). */
MRT_API const char *mrt_spec_get_alternative(const mrt_spec *spec, int i);
/* A new spec: spec under its alternative `name` (its rules, its mesh if
 * it has one, its tensors' and ops' layouts), as `--layout NAME` plans
 * it.  An unknown name is MRT_E_USAGE listing the names; an alternative
 * that did not fit the loader's overrides returns its error.  The caller
 * owns *out (mrt_spec_destroy); spec is unchanged. */
MRT_API mrt_status mrt_spec_select_alternative(const mrt_spec *spec,
                                               const char *name, mrt_spec **out,
                                               mrt_error *err);

/* ---- searching layouts -------------------------------------------- */

/* What `meshrt search` does, as data: the best global layout rules of a
 * program (and, per tensor, layouts of its own for its parameters and
 * chosen activations), planned with no MPI.  Reports are plain data the
 * caller reads (and must not change) and frees with its destroy; they
 * do not borrow the spec, but dims and axes in them are indices into it
 * (mrt_spec_get_dim, mrt_spec_info.mesh). */

/* The mesh axes that split one dim, major first (naxes 0: replicated). */
typedef struct mrt_search_axes {
    int naxes;
    int axis[MRT_API_MAX_AXES];
} mrt_search_axes;

typedef struct mrt_search_options {
    mrt_plan_options plan;   /* planner and profile of every candidate
                                (explain is ignored) */
    int top;                 /* how many of the best to keep; 0: 5 */
    int64_t max_memory;      /* peak memory cap per rank, bytes; <= 0:
                                the device memory of plan (its
                                device_memory, else the profile's), if
                                any */
    int exhaustive;          /* plan every candidate: no pruning, no
                                screen */
    int screen;              /* 0: screen when planning every candidate
                                would be slow; 1: always; -1: never */
    const char *activations; /* mrt_search_tensors_create: op results
                                searched too, "h,r" or "all"; NULL: none */
} mrt_search_options;

/* One planned set of global rules. */
typedef struct mrt_search_rules_item {
    mrt_search_axes *rule; /* [ndims], by dim */
    mrt_plan_totals totals;
    double bound_s; /* the lower bound on its modeled time */
    int64_t index;  /* the candidate, in enumeration order */
    int orders;     /* other orders of the same axes with the very
                                same figures, counted as this one */
} mrt_search_rules_item;

typedef struct mrt_search_rules_report {
    int ndims;
    unsigned char *searched; /* [ndims]: 1 if the dim's rule is searched
                                (some tensor takes it from the rules) */
    int nsearched;
    int64_t enumerated;    /* candidates */
    int64_t invalid;       /* did not plan (e.g. meshtf) */
    int64_t pruned_time;   /* skipped: their time bound rules them out */
    int64_t pruned_memory; /* skipped: their memory bound is over the
                                cap */
    int64_t planned, over_memory;
    int64_t max_memory;    /* the memory cap in effect: the option's, else
                                the device memory (mrt_plan_options'
                                device_memory, else the profile's); 0:
                                none */
    int screened;          /* 1: planned with the fixed rule first, and
                                only the best of that with the planner
                                asked for: the lists may not be exact */
    int64_t screen_plans;  /* screened: candidates planned so */
    int64_t not_replanned; /* screened: left out by the screen */
    int replan_each;       /* screened: re-planned from the top of the
                                screen and of the time bound, each */
    double bound_seconds, plan_seconds, elapsed_seconds;
    int has_spec; /* the spec's own rules planned: */
    mrt_plan_totals spec_totals;
    int ntop;
    mrt_search_rules_item *top; /* best first: by time, then index */
    int npareto;
    mrt_search_rules_item *pareto; /* time-versus-memory front, by time */
    mrt_error first_error;         /* the first invalid candidate's error (code
                              MRT_OK: none) */
    char machine[4096];            /* the cost model's machine profile, as plans
                              name it */
} mrt_search_rules_report;

/* Searches the global rules of spec (docs/tutorial.md, "search", says
 * how: lower bounds prune what provably cannot enter the K best under
 * the cap or the Pareto front).  opt may be NULL (auto planner, default
 * profile, K = 5, no cap).  Fails for a NULL spec or out
 * (MRT_E_USAGE), an unusable profile, out of memory, or more than
 * 1000000 candidates.  The caller owns *out (NULL on failure). */
MRT_API mrt_status mrt_search_rules_create(const mrt_spec *spec,
                                           const mrt_search_options *opt,
                                           mrt_search_rules_report **out,
                                           mrt_error *err);
MRT_API void mrt_search_rules_destroy(mrt_search_rules_report *r);

/* Per tensor: combinations of layouts searched at most (the tensors
 * searched have no cap of their own). */
#define MRT_SEARCH_MAX_COMBOS 4096

/* One planned set of global rules and per-tensor layouts. */
typedef struct mrt_search_tensors_item {
    mrt_search_axes *rule;  /* [ndims] global rules */
    mrt_search_axes *own;   /* [ntensors * ndims]: searched tensor i's
                                own rules, from own[i * ndims] */
    unsigned char *follows; /* [ntensors]: 1 if tensor i keeps what the
                                spec gives it (the rules or its layout:) */
    mrt_plan_totals totals;
    int64_t combo; /* the combination, in enumeration order */
    int64_t index; /* the candidate within it */
} mrt_search_tensors_item;

typedef struct mrt_search_tensors_report {
    int ndims, ntensors; /* ntensors: tensors searched */
    int *tensor;         /* [ntensors], owned: their indices in the spec
                                (mrt_spec_get_tensor): the parameters,
                                then nacts activations */
    int nacts;
    int nleft, *left; /* [nleft], owned: activations the cap of
                                combinations left out */
    int64_t combos;   /* combinations of per-tensor choices */
    int64_t failed;   /* combinations whose layouts did not
                                apply (their error: first_error) */
    int64_t enumerated, planned, invalid, pruned, over_memory;
    int screened; /* some combination was screened */
    int ntop;
    mrt_search_tensors_item *top; /* best first */
    int npareto;
    mrt_search_tensors_item *pareto; /* by time */
    mrt_error first_error;           /* the first combination that failed or the
                              first invalid candidate (code MRT_OK: none) */
} mrt_search_tensors_report;

/* Searches global rules and, for each parameter (the `train:` params;
 * without `train:`, every input) and each activation of
 * opt->activations (results of the program's ops, by their `out:`), a
 * layout of its own, in place of what the spec gives it: each
 * combination is a copy of spec with those layouts, made in memory, so
 * a program built with mrt_ir_* is searched as one loaded from a file.
 * Fails for a NULL spec or out, more than MRT_SEARCH_MAX_COMBOS
 * combinations or an activation no op makes (MRT_E_USAGE), or for what
 * mrt_search_rules_create fails for.  The caller owns *out (NULL on
 * failure). */
MRT_API mrt_status mrt_search_tensors_create(const mrt_spec *spec,
                                             const mrt_search_options *opt,
                                             mrt_search_tensors_report **out,
                                             mrt_error *err);
MRT_API void mrt_search_tensors_destroy(mrt_search_tensors_report *r);

/* rules ([ndims] of spec) as one line, "batch: data, d_ff: [model,
 * pipe]" ("(all replicated)"), into buf; returns buf.  A NULL spec or
 * rules writes "" (buf NULL or size 0: nothing). */
MRT_API char *mrt_search_format_rules(const mrt_spec *spec,
                                      const mrt_search_axes *rules, char *buf,
                                      size_t size);
/* rules as a `layout:` block to paste into the spec:
 * "layout:\n  batch: data\n  d_ff: [model, pipe]\n" ("layout: {}\n").
 * A NULL argument writes nothing. */
MRT_API void mrt_search_write_layout(const mrt_spec *spec,
                                     const mrt_search_axes *rules, FILE *f);

/* ---- machine profiles and calibration ----------------------------- */

/* The machine profile plans read when mrt_plan_options.machine is NULL:
 * $MESHRT_PROFILE, else $XDG_CONFIG_HOME/meshrt/profile.yaml, else
 * ~/.config/meshrt/profile.yaml (whether it exists or not), into buf;
 * returns buf (NULL for a NULL buf or size 0). */
MRT_API char *mrt_machine_get_default_path(char *buf, size_t size);

/* A mesh string "AXIS=N,AXIS=N" (what --mesh and mesh_override take;
 * blanks around names and sizes allowed) into *out; bad input is
 * MRT_E_USAGE, "invalid --mesh 'S': WHY", with no file. */
MRT_API mrt_status mrt_mesh_parse(const char *s, mrt_mesh_info *out,
                                  mrt_error *err);

/* ---- files -------------------------------------------------------- */

/* Writes path by calling write(f, ctx), according to what path is: "-"
 * (or a path that leads to the standard output or error) is written to
 * that stream; a new or regular file (or the file a symbolic link leads
 * to) is replaced atomically: a temporary PATH.tmp.RANDOM in the same
 * folder, flushed to disk, then renamed over it, so a reader sees the
 * old file or the whole new one and a failure leaves nothing; a pipe or
 * a device is written through; a folder is an error.  Errors are on
 * path, "cannot write WHAT: REASON": MRT_E_IO when path cannot be a file
 * (a missing folder, a folder, a name too long), MRT_E_RUNTIME when the
 * system refused to store it (disk full, read-only, permission
 * denied). */
MRT_API mrt_status mrt_file_write(const char *path, const char *what,
                                  void (*write)(FILE *f, const void *ctx),
                                  const void *ctx, mrt_error *err);
/* Removes the temporary file being written by mrt_file_write (or by any
 * meshrt output), if there is one.  Async-signal-safe: for a handler of
 * SIGINT, SIGTERM or SIGHUP that is about to end the process. */
MRT_API void mrt_file_remove_partial(void);
/* Writes s to f as a JSON string literal (quotes and escapes included);
 * a NULL s as null, nothing to a NULL f. */
MRT_API void mrt_json_write_string(FILE *f, const char *s);
/* v as a JSON number in printf format fmt (one conversion of a double:
 * "%.9g", "%.3f"), or "null" when v is not finite (JSON has no inf or
 * nan), into buf, which it returns; meshrt's own JSON goes through it.
 * A NULL fmt is "%.17g"; a NULL buf returns NULL. */
#define MRT_JSON_NUMBER_MAX 32
MRT_API const char *mrt_json_format_number(char buf[MRT_JSON_NUMBER_MAX],
                                           const char *fmt, double v);

#ifdef __cplusplus
}
#endif
#endif
