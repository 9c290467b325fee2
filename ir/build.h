/*
 * build.h — private to the builder (build.c, build_op.c): the state
 * behind the public mrt_ir of meshrt.h, and how its calls report errors.
 *
 * Every public call starts with mrt_ir_begin (which refuses a builder
 * that already failed, so the first error sticks) and ends with
 * mrt_ir_end, which words an error found by the shared IR code
 * (resolve.c, expand.c, grad.c: set at a position of a YAML file, here
 * none) the builder's way: "CALL: argument 'ARG': MESSAGE".
 */
#ifndef MRT_BUILD_H
#define MRT_BUILD_H

#include "ir.h"

struct mrt_ir {
    mrt_spec *s;       /* the program so far; NULL after mrt_ir_finish */
    mrt_error error;   /* the first error; error.code MRT_OK until then */
    int nouts;         /* outputs named by mrt_ir_set_outputs, or -1 */
    int *outs;         /* [nouts] tensor ids */
    int trained;       /* mrt_ir_set_train succeeded: no more ops */
    int cap_dims;      /* room in the spec's per-dim arrays */
};

/* The call being made and the argument being checked, for messages. */
typedef struct mrt_ir_call {
    mrt_ir *ir;
    const char *fn;    /* "mrt_ir_add_tensor" */
    const char *arg;   /* "shape"; changed as the call goes on */
    mrt_error e;       /* the call's error */
    int worded;        /* e says "FN: argument 'ARG': ..." already */
} mrt_ir_call;

/* Starts call fn on ir: MRT_OK, or the builder's first error again. */
mrt_status mrt_ir_begin(mrt_ir_call *c, mrt_ir *ir, const char *fn);
/* Records "FN: argument 'ARG': MESSAGE" (code) unless the call has
 * failed already.  Returns code. */
mrt_status mrt_ir_fail(mrt_ir_call *c, mrt_status code, const char *fmt,
                       ...) __attribute__((format(printf, 3, 4)));
/* Ends the call with status st: an error the shared IR code set in
 * c->e is reworded as the builder's, kept in the builder and copied to
 * err (may be NULL).  Returns st. */
mrt_status mrt_ir_end(mrt_ir_call *c, mrt_status st, mrt_error *err);

/* A name as the builder accepts it (as YAML's: a letter or '_', then
 * letters, digits and '_', shorter than MRT_NAME_MAX). */
mrt_status mrt_ir_check_name(mrt_ir_call *c, const char *name,
                             const char *kind);
/* Dim id of name, or an error "dim 'NAME' not declared". */
mrt_status mrt_ir_dim(mrt_ir_call *c, const char *name, int *out);
/* Tensor id of name, or an error "tensor 'NAME' not declared". */
mrt_status mrt_ir_tensor_id(mrt_ir_call *c, const char *name, int *out);
/* A list of dims by name into l (dims and sizes; no dim twice). */
mrt_status mrt_ir_shape(mrt_ir_call *c, int n, const char *const *names,
                        mrt_layout *l);
/* Layout rules (n of them) into rules[dim id] (zeroed by the caller);
 * dims outside `shape` (when not NULL) are refused. */
mrt_status mrt_ir_rules(mrt_ir_call *c, int n, const mrt_ir_rule *list,
                        const mrt_layout *shape, mrt_rule rules[]);

#endif
