/*
 * build.c — the builder of meshrt.h ("building a program in code"): a
 * program made by calls, with no YAML anywhere, into the same IR
 * (spec.h) the YAML front end makes.  This file holds the builder's
 * life (create, finish, destroy), the mesh, dtype, dims, global rules
 * and outputs; build_tensor.c holds input tensors, build_op.c ops and
 * training, build_check.c the checks they share.
 *
 * Each call is the one place its part of a program is checked, for
 * both front ends: the YAML loader calls the expert forms (`_at`, with
 * the marks of what it read), a C caller the plain ones.  Errors are
 * "CALL: argument 'ARG': MESSAGE", or at the file's line and column
 * when the argument has a mark (build.h).  The first error sticks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "grow.h"

_Static_assert(MRT_IR_MAX_AXES == MRT_MAX_AXES, "one axis limit");
_Static_assert((int)MRT_IR_KIND_COUNT == (int)MRT_U_KIND_COUNT,
               "the builder's op kinds are ir.h's, in the same order");

/* ---- the builder and its mesh --------------------------------------- */

/* An empty builder (no mesh) for program `path`, or NULL. */
static mrt_ir *new_builder(const char *path, const char *dir)
{
    mrt_ir *ir = calloc(1, sizeof *ir);
    mrt_spec *s = calloc(1, sizeof *s);
    if (!ir || !s) {
        free(ir);
        free(s);
        return NULL;
    }
    ir->s = s;
    ir->nouts = -1;
    snprintf(s->path, sizeof s->path, "%s", path ? path : "program");
    snprintf(s->dir, sizeof s->dir, "%s", dir ? dir : ".");
    s->dtype = MRT_F32;
    s->precision = (mrt_precision){MRT_F32, MRT_F32, MRT_F32,
                                   MRT_F32, 0,       {0, 0}};
    s->expect = (mrt_budget){-1, -1, {0, 0}};
    s->train.loss = -1;
    s->train.microbatches = s->train.virtual_stages = 1;
    s->train.micro_dim = -1;
    s->mesh.nranks = 1;
    return ir;
}

mrt_status mrt_ir_mesh(mrt_ir_call *c, int naxes, const char *const *axis,
                       const int64_t *size, const mrt_mark *axis_mark,
                       const mrt_mark *size_mark, mrt_mesh *out)
{
    mrt_mesh m = {.nranks = 1};
    int yaml = mrt_ir_yaml(c);
    mrt_status st = MRT_OK;
    mrt_ir_at(c, "naxes", NULL);
    /* no axes: one rank, as YAML's `mesh: {}` */
    if (naxes < 0 || naxes > MRT_MAX_AXES + yaml)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "a mesh has 0 to %d axes, each "
                           "with a name and a size; got %d",
                           MRT_MAX_AXES, naxes);
    if (naxes > 0 && (!axis || !size)) {
        mrt_ir_at(c, !axis ? "axis" : "size", NULL);
        return mrt_ir_fail(c, MRT_E_USAGE, "NULL with %d axes", naxes);
    }
    for (int i = 0; i < naxes; i++) {
        mrt_ir_at(c, "axis", axis_mark ? &axis_mark[i] : NULL);
        if (i == MRT_MAX_AXES) /* only from a file: the key past the last */
            return mrt_ir_fail(c, MRT_E_SPEC,
                               "too many mesh axes (at most "
                               "%d)",
                               MRT_MAX_AXES);
        if ((st = mrt_ir_check_name(c, axis[i], "mesh axis")))
            return st;
        if (mrt_mesh_find_axis(&m, axis[i]) >= 0)
            return mrt_ir_fail(c, MRT_E_SPEC,
                               "mesh axis '%s' is given "
                               "twice",
                               axis[i]);
        mrt_ir_at(c, "size", size_mark ? &size_mark[i] : NULL);
        if (yaml && size[i] >= 1 && size[i] > INT32_MAX / m.nranks)
            return mrt_ir_fail(c, MRT_E_SPEC,
                               "the mesh has too many ranks: "
                               "more than %d (the most MPI can number)",
                               INT32_MAX);
        if (size[i] < 1 || size[i] > INT32_MAX / m.nranks)
            return mrt_ir_fail(c, MRT_E_SPEC,
                               "the size of mesh axis '%s' "
                               "must be positive and the mesh at most %d "
                               "ranks, got %lld",
                               axis[i], INT32_MAX, (long long)size[i]);
        strcpy(m.name[m.naxes], axis[i]);
        m.size[m.naxes++] = size[i];
        m.nranks *= size[i];
    }
    *out = m;
    mrt_ir_at(c, NULL, NULL);
    return MRT_OK;
}

mrt_status mrt_ir_create(const char *name, int naxes, const char *const *axis,
                         const int64_t *size, mrt_ir **out, mrt_error *err)
{
    mrt_ir_call c;
    mrt_ir *ir = new_builder(name, NULL);
    if (out)
        *out = NULL;
    if (!ir)
        return mrt_error_set(err, MRT_E_NOMEM, "", (mrt_mark){0, 0},
                             "mrt_ir_create: out of memory");
    mrt_status st = mrt_ir_begin(&c, ir, "mrt_ir_create");
    c.arg = "out";
    if (!out)
        st = mrt_ir_fail(&c, MRT_E_USAGE, "NULL");
    if (!st)
        st = mrt_ir_mesh(&c, naxes, axis, size, NULL, NULL, &ir->s->mesh);
    if (mrt_ir_end(&c, st, err)) {
        mrt_ir_destroy(ir);
        return st;
    }
    *out = ir;
    return MRT_OK;
}

mrt_status mrt_ir_open(const char *path, const char *dir, mrt_ir **out,
                       mrt_error *err)
{
    *out = new_builder(path, dir);
    if (!*out)
        return mrt_error_set(err, MRT_E_NOMEM, path, (mrt_mark){0, 0},
                             "out of memory");
    (*out)->yaml = 1;
    (*out)->mesh_what = "the mesh";
    return MRT_OK;
}

mrt_status mrt_ir_set_mesh_at(mrt_ir *ir, int naxes, const char *const *axis,
                              const int64_t *size, mrt_mark mesh_mark,
                              const mrt_mark *axis_mark,
                              const mrt_mark *size_mark, mrt_error *err)
{
    mrt_ir_call c;
    mrt_status st = mrt_ir_begin(&c, ir, "mrt_ir_set_mesh");
    c.entry = mesh_mark;
    if (!st && (ir->s->mesh.naxes || ir->s->ndims))
        st = mrt_ir_fail(&c, MRT_E_USAGE, "the mesh is set once, first");
    if (!st)
        st = mrt_ir_mesh(&c, naxes, axis, size, axis_mark, size_mark,
                         &ir->s->mesh);
    if (!st)
        ir->s->mesh_mark = mesh_mark;
    return mrt_ir_end(&c, st, err);
}

void mrt_ir_override_mesh(mrt_ir *ir, const mrt_mesh *m, const char *what)
{
    ir->s->mesh = *m;
    ir->mesh_what = what;
    ir->keep_broken = 1;
}

void mrt_ir_destroy(mrt_ir *ir)
{
    if (!ir)
        return;
    mrt_spec_destroy(ir->s);
    mrt_ir_block_free(ir);
    free(ir->outs);
    free(ir);
}

/* ---- dtype, dims and global rules ---------------------------------- */

mrt_status mrt_ir_set_dtype(mrt_ir *ir, mrt_dtype dtype, mrt_error *err)
{
    const char *name = mrt_dtype_name(dtype);
    if (!name && ir) { /* the builder's error: it sticks */
        mrt_ir_call c;
        mrt_status st = mrt_ir_begin(&c, ir, "mrt_ir_set_dtype");
        c.arg = "dtype";
        if (!st)
            st = mrt_ir_fail(&c, MRT_E_USAGE, "%d is not an mrt_dtype",
                             (int)dtype);
        return mrt_ir_end(&c, st, err);
    }
    return mrt_ir_set_dtype_at(ir, name, (mrt_mark){0, 0}, err);
}

mrt_status mrt_ir_set_dtype_at(mrt_ir *ir, const char *dtype, mrt_mark at,
                               mrt_error *err)
{
    mrt_ir_call c;
    char q[MRT_SPEC_QUOTE_MAX + 8];
    mrt_status st = mrt_ir_begin(&c, ir, "mrt_ir_set_dtype");
    c.entry = at;
    c.arg = "dtype";
    if (!st && ir->s->ntensors)
        st = mrt_ir_fail(&c, MRT_E_USAGE,
                         "the dtype is set before the "
                         "first tensor");
    mrt_ir_at(&c, "dtype", &at);
    if (!st && dtype && !strcmp(dtype, mrt_dtype_name(MRT_I32)))
        st = mrt_ir_fail(&c, MRT_E_SPEC,
                         "int32 is an index type, not a compute type "
                         "(expected: float32, float64, bfloat16, float16; "
                         "int32 goes on an input tensor's own dtype:)");
    /* the floating types: float32, float64, bfloat16, float16 */
    static const mrt_dtype floats[] = {MRT_F32, MRT_F64, MRT_BF16, MRT_F16};
    int nf = (int)(sizeof floats / sizeof floats[0]);
    for (int k = 0; !st && k <= nf; k++) {
        if (k == nf && mrt_ir_yaml(&c))
            st = mrt_ir_fail(&c, MRT_E_SPEC,
                             "unknown dtype '%s' (expected: "
                             "float32, float64, bfloat16, float16)",
                             mrt_ir_quote(dtype, q, sizeof q));
        else if (k == nf)
            st = mrt_ir_fail(&c, MRT_E_SPEC,
                             "unknown dtype '%.60s' "
                             "(expected: float32, float64, bfloat16, float16)",
                             dtype ? dtype : "(null)");
        else if (dtype && !strcmp(dtype, mrt_dtype_name(floats[k]))) {
            ir->s->dtype = floats[k];
            if (!ir->s->precision.given)
                ir->s->precision = (mrt_precision){
                    ir->s->dtype, ir->s->dtype, ir->s->dtype, ir->s->dtype, 0,
                    {0, 0}};
            break;
        }
    }
    return mrt_ir_end(&c, st, err);
}

/* Room for one more dim in every per-dim array (dim_names points into
 * dim_name, so it is rebuilt when dim_name moves). */
static int grow_dims(mrt_ir *ir)
{
    mrt_spec *s = ir->s;
    int n = s->ndims + 2, c[5];
    for (int k = 0; k < 5; k++)
        c[k] = ir->cap_dims;
    if (mrt_grow((void **)&s->dim_name, &c[0], n, sizeof *s->dim_name) ||
        mrt_grow((void **)&s->dim_names, &c[1], n, sizeof *s->dim_names) ||
        mrt_grow((void **)&s->dim_size, &c[2], n, sizeof *s->dim_size) ||
        mrt_grow((void **)&s->dim_mark, &c[3], n, sizeof *s->dim_mark) ||
        mrt_grow((void **)&s->rule, &c[4], n, sizeof *s->rule))
        return -1; /* (each array keeps the room it got: c[] are equal) */
    if (c[4] > ir->cap_dims)
        memset(&s->rule[s->ndims], 0,
               (size_t)(c[4] - s->ndims) * sizeof *s->rule);
    ir->cap_dims = c[4];
    for (int d = 0; d < s->ndims; d++)
        s->dim_names[d] = s->dim_name[d];
    return 0;
}

mrt_status mrt_ir_add_dim(mrt_ir *ir, const char *name, int64_t size,
                          mrt_error *err)
{
    return mrt_ir_add_dim_at(ir, name, size, (mrt_mark){0, 0}, err);
}

mrt_status mrt_ir_add_dim_at(mrt_ir *ir, const char *name, int64_t size,
                             mrt_mark at, mrt_error *err)
{
    mrt_ir_call c;
    mrt_status st = mrt_ir_begin(&c, ir, "mrt_ir_add_dim");
    c.entry = at;
    if (st)
        return mrt_ir_end(&c, st, err);
    mrt_spec *s = ir->s;
    c.arg = "name";
    if (s->ntensors)
        st = mrt_ir_fail(&c, MRT_E_USAGE,
                         "dims are declared before the "
                         "first tensor");
    mrt_ir_at(&c, "name", &at);
    if (!st)
        st = mrt_ir_check_name(&c, name, "dim");
    if (!st && mrt_spec_find_dim(s, name) >= 0)
        st = mrt_ir_fail(&c, MRT_E_SPEC, "dim '%s' is declared twice", name);
    c.arg = "size";
    if (!st && size < 1)
        st = mrt_ir_fail(&c, MRT_E_SPEC,
                         "the size of dim '%s' must be a "
                         "positive integer, got %lld",
                         name, (long long)size);
    if (!st && grow_dims(ir))
        st = mrt_ir_fail(&c, MRT_E_NOMEM, "out of memory");
    if (!st) {
        int d = s->ndims;
        strcpy(s->dim_name[d], name);
        s->dim_names[d] = s->dim_name[d];
        s->dim_size[d] = size;
        s->dim_mark[d] = at;
        memset(&s->rule[d], 0, sizeof s->rule[d]);
        if (mrt_spec_index_dim(s, d))
            st = mrt_ir_fail(&c, MRT_E_NOMEM, "out of memory");
        else
            s->ndims++;
    }
    return mrt_ir_end(&c, st, err);
}

mrt_status mrt_ir_resize_dim(mrt_ir *ir, const char *name, int64_t size)
{
    int d = mrt_spec_find_dim(ir->s, name);
    if (d < 0 || size < 1 || ir->s->ntensors)
        return MRT_E_USAGE; /* the caller checked: a broken invariant */
    ir->s->dim_size[d] = size;
    ir->keep_broken = 1;
    return MRT_OK;
}

/* One global rule, plain (the public form) or with marks. */
static mrt_status set_rule(mrt_ir *ir, const mrt_ir_rule *plain,
                           const mrt_ir_rule_at *at, mrt_error *err)
{
    mrt_ir_call c;
    mrt_status st = mrt_ir_begin(&c, ir, "mrt_ir_set_rule");
    c.arg = "rule";
    c.entry = at ? at->dim_mark : (mrt_mark){0, 0};
    if (!st && !plain && !at)
        st = mrt_ir_fail(&c, MRT_E_USAGE, "NULL");
    if (!st && ir->s->ntensors)
        st = mrt_ir_fail(&c, MRT_E_USAGE,
                         "the global rules are set before "
                         "the first tensor");
    if (!st)
        st = mrt_ir_rules(&c, 1, plain, at, NULL, "'layout'", ir->s->rule);
    return mrt_ir_end(&c, st, err);
}

mrt_status mrt_ir_set_rule(mrt_ir *ir, const mrt_ir_rule *rule, mrt_error *err)
{
    return set_rule(ir, rule, NULL, err);
}

mrt_status mrt_ir_set_rule_at(mrt_ir *ir, const mrt_ir_rule_at *rule,
                              mrt_error *err)
{
    return set_rule(ir, NULL, rule, err);
}

/* ---- outputs and the end -------------------------------------------- */

mrt_status mrt_ir_set_outputs_at(mrt_ir *ir, int n, const char *const *names,
                                 const mrt_mark *marks, mrt_error *err)
{
    mrt_ir_call c;
    char q[MRT_SPEC_QUOTE_MAX + 8], list[MRT_SPEC_LIST_MAX];
    mrt_status st = mrt_ir_begin(&c, ir, "mrt_ir_set_outputs");
    int *ids = NULL;
    c.arg = "names";
    if (!st && (n < 1 || !names))
        st = mrt_ir_fail(&c, MRT_E_USAGE,
                         "name at least one tensor (or "
                         "leave the outputs out for the last op's result)");
    mrt_ir_names l = {0}; /* block references expanded */
    if (!st && !(st = mrt_ir_block_expand(&c, 0, n, names, marks, NULL, &l))) {
        n = l.n;
        names = l.names;
        marks = l.marks;
    }
    if (!st && !(ids = calloc((size_t)n, sizeof *ids)))
        st = mrt_ir_fail(&c, MRT_E_NOMEM, "out of memory");
    for (int j = 0; !st && j < n; j++) {
        const mrt_spec *s = ir->s;
        mrt_ir_at(&c, "names", marks ? &marks[j] : NULL);
        ids[j] = names[j] ? mrt_spec_find_tensor(s, names[j]) : -1;
        if (ids[j] < 0 && mrt_ir_yaml(&c))
            st = mrt_ir_fail(&c, MRT_E_SPEC,
                             "unknown tensor '%s' in "
                             "'outputs' (the tensors are: %s)",
                             mrt_ir_quote(names[j], q, sizeof q),
                             mrt_spec_join(list, sizeof list, s->tensor[0].name,
                                           sizeof s->tensor[0], s->ntensors));
        else if (ids[j] < 0)
            st = mrt_ir_tensor_id(&c, names[j], &ids[j]);
        for (int k = 0; !st && k < j; k++)
            if (ids[k] == ids[j])
                st = mrt_ir_yaml(&c) ? mrt_ir_fail(&c, MRT_E_SPEC,
                                                   "tensor '%s' is listed "
                                                   "twice in 'outputs'",
                                                   names[j])
                                     : mrt_ir_fail(&c, MRT_E_SPEC,
                                                   "tensor '%s' is listed "
                                                   "twice",
                                                   names[j]);
    }
    if (!st) {
        free(ir->outs);
        ir->outs = ids;
        ir->nouts = n;
        ids = NULL;
    }
    free(ids);
    mrt_ir_names_free(&l);
    return mrt_ir_end(&c, st, err);
}

mrt_status mrt_ir_set_outputs(mrt_ir *ir, int n, const char *const *names,
                              mrt_error *err)
{
    return mrt_ir_set_outputs_at(ir, n, names, NULL, err);
}

mrt_status mrt_ir_finish(mrt_ir *ir, mrt_spec **out, mrt_error *err)
{
    mrt_ir_call c;
    char *listed = NULL;
    if (out)
        *out = NULL;
    mrt_status st = mrt_ir_begin(&c, ir, "mrt_ir_finish");
    c.arg = "out";
    if (!st && !out)
        st = mrt_ir_fail(&c, MRT_E_USAGE, "NULL");
    if (st)
        return mrt_ir_end(&c, st, err);
    mrt_spec *s = ir->s;
    c.arg = NULL;
    if (ir->block)
        st = mrt_ir_fail(&c, MRT_E_USAGE,
                         "block '%s' is not ended (mrt_ir_block_end)",
                         s->block[s->nblocks - 1].name);
    else if (!s->nops)
        st = mrt_ir_fail(&c, MRT_E_SPEC,
                         "the program has no op (add at "
                         "least one with mrt_ir_add_op)");
    if (!st)
        st = mrt_ir_block_check_recompute(&c);
    int n = ir->nouts > 0 ? ir->nouts : 1;
    if (!st && (!(listed = calloc((size_t)s->ntensors + 1, 1)) ||
                !(s->output = calloc((size_t)n, sizeof *s->output))))
        st = mrt_ir_fail(&c, MRT_E_NOMEM, "out of memory");
    if (!st && ir->nouts < 0 && s->train.loss < 0) {
        s->output[s->noutputs++] = s->op[s->nops - 1].out;
    } else if (!st) {
        for (int j = 0; j < ir->nouts; j++) {
            listed[ir->outs[j]] = 1;
            s->output[s->noutputs++] = ir->outs[j];
        }
        if (s->train.loss >= 0)
            st = mrt_ir_add_train_outputs(s, listed, &c.e);
    }
    free(listed);
    if (!st) {
        *out = s;
        ir->s = NULL;
    }
    return mrt_ir_end(&c, st, err);
}
