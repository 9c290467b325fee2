/*
 * build.c — the builder of meshrt.h ("building a program in code"): a
 * program made by calls, with no YAML anywhere, into the same IR
 * (spec.h) the YAML front end makes.  This file holds the builder's
 * life (create, finish, destroy), the mesh, dtype, dims, global rules,
 * input tensors and outputs; build_op.c holds ops and training.
 *
 * Each call checks its arguments the way the YAML loader checks the
 * same part of a spec, resolves layouts with the loader's own code
 * (resolve.c) and words its errors "CALL: argument 'ARG': MESSAGE".
 * The first error sticks (build.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "grow.h"
#include "init.h"
#include "npy.h"

_Static_assert(MRT_IR_MAX_AXES == MRT_MAX_AXES, "one axis limit");
_Static_assert((int)MRT_IR_KIND_COUNT == (int)MRT_U_KIND_COUNT,
               "the builder's op kinds are ir.h's, in the same order");

/* ---- calls and their errors ---------------------------------------- */

mrt_status mrt_ir_begin(mrt_ir_call *c, mrt_ir *ir, const char *fn)
{
    memset(c, 0, sizeof *c);
    c->ir = ir;
    c->fn = fn;
    if (!ir)
        return MRT_E_USAGE;
    if (ir->error.code) { /* the first error sticks */
        c->e = ir->error;
        c->worded = 1;
        return ir->error.code;
    }
    if (!ir->s)
        return mrt_ir_fail(c, MRT_E_USAGE, "the program was finished "
                           "already (only mrt_ir_destroy may follow)");
    return MRT_OK;
}

mrt_status mrt_ir_fail(mrt_ir_call *c, mrt_status code, const char *fmt, ...)
{
    char msg[sizeof c->e.message];
    if (c->e.code)
        return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    c->e.code = code;
    if (c->arg)
        snprintf(c->e.message, sizeof c->e.message, "%s: argument '%s': %.400s",
                 c->fn, c->arg, msg);
    else
        snprintf(c->e.message, sizeof c->e.message, "%s: %.450s", c->fn,
                 msg);
    c->worded = 1;
    return code;
}

mrt_status mrt_ir_end(mrt_ir_call *c, mrt_status st, mrt_error *err)
{
    if (!st)
        return MRT_OK;
    if (!c->e.code) /* only NULL builders have no message */
        mrt_ir_fail(c, st, c->ir ? "failed" : "the builder is NULL");
    if (!c->worded) { /* set by the shared IR code: add the call */
        char msg[sizeof c->e.message];
        snprintf(msg, sizeof msg, "%s", c->e.message);
        c->e.code = MRT_OK;
        mrt_ir_fail(c, st, "%s", msg);
    }
    c->e.code = st;
    c->e.file[0] = '\0';
    c->e.line = c->e.column = 0;
    if (c->ir)
        c->ir->error = c->e;
    if (err && !err->code)
        *err = c->e;
    return st;
}

/* ---- names, dims, shapes and rules --------------------------------- */

mrt_status mrt_ir_check_name(mrt_ir_call *c, const char *name,
                             const char *kind)
{
    if (!name)
        return mrt_ir_fail(c, MRT_E_USAGE, "expected a %s name, got NULL",
                           kind);
    size_t n = strlen(name);
    int ok = n > 0 && n < MRT_NAME_MAX &&
             (name[0] == '_' || ((name[0] | 32) >= 'a' && (name[0] | 32) <= 'z'));
    for (size_t i = 1; ok && i < n; i++)
        ok = name[i] == '_' || (name[i] >= '0' && name[i] <= '9') ||
             ((name[i] | 32) >= 'a' && (name[i] | 32) <= 'z');
    if (!ok)
        return mrt_ir_fail(c, MRT_E_SPEC, "invalid %s name '%.60s' (a name "
                           "starts with a letter or '_' and has only "
                           "letters, digits and '_')", kind, name);
    return MRT_OK;
}

mrt_status mrt_ir_dim(mrt_ir_call *c, const char *name, int *out)
{
    char list[MRT_SPEC_LIST_MAX];
    const mrt_spec *s = c->ir->s;
    if (!name)
        return mrt_ir_fail(c, MRT_E_USAGE, "expected a dim name, got NULL");
    *out = mrt_spec_find_dim(s, name);
    if (*out < 0)
        return mrt_ir_fail(c, MRT_E_SPEC, "dim '%.60s' not declared (the "
                           "dims are: %s)", name,
                           mrt_spec_join(list, sizeof list, s->dim_name[0],
                                         sizeof s->dim_name[0], s->ndims));
    return MRT_OK;
}

mrt_status mrt_ir_tensor_id(mrt_ir_call *c, const char *name, int *out)
{
    if (!name)
        return mrt_ir_fail(c, MRT_E_USAGE, "expected a tensor name, got "
                           "NULL");
    *out = mrt_spec_find_tensor(c->ir->s, name);
    if (*out < 0)
        return mrt_ir_fail(c, MRT_E_SPEC, "tensor '%.60s' not declared",
                           name);
    return MRT_OK;
}

mrt_status mrt_ir_shape(mrt_ir_call *c, int n, const char *const *names,
                        mrt_layout *l)
{
    const mrt_spec *s = c->ir->s;
    char shape[MRT_SPEC_LIST_MAX];
    memset(l, 0, sizeof *l);
    if (n < 0 || n > MRT_MAX_DIMS || (n > 0 && !names))
        return mrt_ir_fail(c, MRT_E_USAGE, "%d dims (at most %d, and a "
                           "list of names)", n, MRT_MAX_DIMS);
    for (int i = 0; i < n; i++) {
        int d;
        mrt_status st = mrt_ir_dim(c, names[i], &d);
        if (st)
            return st;
        if (mrt_layout_find_dim(l, d) >= 0)
            return mrt_ir_fail(c, MRT_E_SPEC, "dim '%s' appears twice",
                               names[i]);
        l->dim[l->ndims] = d;
        l->size[l->ndims++] = s->dim_size[d];
    }
    if (mrt_spec_too_large(l))
        return mrt_ir_fail(c, MRT_E_SPEC, "%s is too large: its size in "
                           "bytes overflows 64 bits",
                           mrt_spec_shape_str(s, l, shape, sizeof shape));
    return MRT_OK;
}

/* One rule into rules[dim]. */
static mrt_status one_rule(mrt_ir_call *c, const mrt_ir_rule *r,
                           const mrt_layout *shape, mrt_rule rules[])
{
    const mrt_spec *s = c->ir->s;
    int d;
    mrt_status st = mrt_ir_dim(c, r->dim, &d);
    if (st)
        return st;
    if (shape && mrt_layout_find_dim(shape, d) < 0)
        return mrt_ir_fail(c, MRT_E_SPEC, "dim '%s' is not a dim of the "
                           "tensors it lays out", r->dim);
    if (rules[d].naxes || rules[d].mark.line < 0)
        return mrt_ir_fail(c, MRT_E_SPEC, "dim '%s' has two rules", r->dim);
    rules[d].mark = (mrt_mark){-1, 0}; /* given: a second one is refused */
    for (int j = 0; j < MRT_IR_MAX_AXES && r->axes[j]; j++) {
        int a = mrt_mesh_find_axis(&s->mesh, r->axes[j]);
        if (a < 0)
            return mrt_ir_fail(c, MRT_E_SPEC, "unknown mesh axis '%.60s' in "
                               "the rule of dim '%s'", r->axes[j], r->dim);
        for (int k = 0; k < j; k++)
            if (rules[d].axes[k] == a)
                return mrt_ir_fail(c, MRT_E_SPEC, "the rule of dim '%s' "
                                   "names mesh axis '%s' twice", r->dim,
                                   r->axes[j]);
        rules[d].axes[rules[d].naxes++] = a;
    }
    return MRT_OK;
}

mrt_status mrt_ir_rules(mrt_ir_call *c, int n, const mrt_ir_rule *list,
                        const mrt_layout *shape, mrt_rule rules[])
{
    if (n < 0 || (n > 0 && !list))
        return mrt_ir_fail(c, MRT_E_USAGE, "expected a list of %d rules", n);
    mrt_status st = MRT_OK;
    for (int i = 0; !st && i < n; i++)
        st = one_rule(c, &list[i], shape, rules);
    for (int d = 0; d < c->ir->s->ndims; d++)
        rules[d].mark = (mrt_mark){0, 0};
    return st;
}

/* ---- the builder ---------------------------------------------------- */

mrt_status mrt_ir_create(const char *name, int naxes, const char *const *axis,
                         const int64_t *size, mrt_ir **out, mrt_error *err)
{
    mrt_ir_call c;
    mrt_ir *ir = calloc(1, sizeof *ir);
    mrt_spec *s = calloc(1, sizeof *s);
    if (out)
        *out = NULL;
    if (!ir || !s) {
        free(ir);
        free(s);
        return mrt_error_set(err, MRT_E_NOMEM, "", (mrt_mark){0, 0},
                             "mrt_ir_create: out of memory");
    }
    ir->s = s;
    ir->nouts = -1;
    snprintf(s->path, sizeof s->path, "%s", name ? name : "program");
    strcpy(s->dir, ".");
    s->dtype = MRT_F32;
    s->expect = (mrt_budget){-1, -1, {0, 0}};
    s->train.loss = -1;
    s->mesh.nranks = 1;
    mrt_status st = mrt_ir_begin(&c, ir, "mrt_ir_create");
    c.arg = "out";
    if (!out)
        st = mrt_ir_fail(&c, MRT_E_USAGE, "NULL");
    c.arg = "naxes";
    if (!st && (naxes < 1 || naxes > MRT_MAX_AXES || !axis || !size))
        st = mrt_ir_fail(&c, MRT_E_SPEC, "a mesh has 1 to %d axes, each "
                         "with a name and a size; got %d", MRT_MAX_AXES,
                         naxes);
    c.arg = "axis";
    for (int i = 0; !st && i < naxes; i++) {
        if ((st = mrt_ir_check_name(&c, axis[i], "mesh axis")))
            break;
        if (mrt_mesh_find_axis(&s->mesh, axis[i]) >= 0)
            st = mrt_ir_fail(&c, MRT_E_SPEC, "mesh axis '%s' is given "
                             "twice", axis[i]);
        c.arg = "size";
        if (!st && (size[i] < 1 || size[i] > INT32_MAX / s->mesh.nranks))
            st = mrt_ir_fail(&c, MRT_E_SPEC, "the size of mesh axis '%s' "
                             "must be positive and the mesh at most %d "
                             "ranks, got %lld", axis[i], INT32_MAX,
                             (long long)size[i]);
        c.arg = "axis";
        if (st)
            break;
        strcpy(s->mesh.name[s->mesh.naxes], axis[i]);
        s->mesh.size[s->mesh.naxes++] = size[i];
        s->mesh.nranks *= size[i];
    }
    if (mrt_ir_end(&c, st, err)) {
        mrt_ir_destroy(ir);
        return st;
    }
    *out = ir;
    return MRT_OK;
}

void mrt_ir_destroy(mrt_ir *ir)
{
    if (!ir)
        return;
    mrt_spec_destroy(ir->s);
    free(ir->outs);
    free(ir);
}

mrt_status mrt_ir_set_dtype(mrt_ir *ir, const char *dtype, mrt_error *err)
{
    mrt_ir_call c;
    mrt_status st = mrt_ir_begin(&c, ir, "mrt_ir_set_dtype");
    c.arg = "dtype";
    if (!st && ir->s->ntensors)
        st = mrt_ir_fail(&c, MRT_E_USAGE, "the dtype is set before the "
                         "first tensor");
    for (int t = 0; !st && t <= MRT_DTYPE_COUNT; t++) {
        if (t == MRT_DTYPE_COUNT)
            st = mrt_ir_fail(&c, MRT_E_SPEC, "unknown dtype '%.60s' "
                             "(expected: float32, float64)",
                             dtype ? dtype : "(null)");
        else if (dtype && !strcmp(dtype, mrt_dtype_name((mrt_dtype)t))) {
            ir->s->dtype = (mrt_dtype)t;
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
    mrt_ir_call c;
    mrt_status st = mrt_ir_begin(&c, ir, "mrt_ir_add_dim");
    if (st)
        return mrt_ir_end(&c, st, err);
    mrt_spec *s = ir->s;
    c.arg = "name";
    if (s->ntensors)
        st = mrt_ir_fail(&c, MRT_E_USAGE, "dims are declared before the "
                         "first tensor");
    if (!st)
        st = mrt_ir_check_name(&c, name, "dim");
    if (!st && mrt_spec_find_dim(s, name) >= 0)
        st = mrt_ir_fail(&c, MRT_E_SPEC, "dim '%s' is declared twice", name);
    c.arg = "size";
    if (!st && size < 1)
        st = mrt_ir_fail(&c, MRT_E_SPEC, "the size of dim '%s' must be a "
                         "positive integer, got %lld", name, (long long)size);
    if (!st && grow_dims(ir))
        st = mrt_ir_fail(&c, MRT_E_NOMEM, "out of memory");
    if (!st) {
        int d = s->ndims;
        strcpy(s->dim_name[d], name);
        s->dim_names[d] = s->dim_name[d];
        s->dim_size[d] = size;
        s->dim_mark[d] = (mrt_mark){0, 0};
        memset(&s->rule[d], 0, sizeof s->rule[d]);
        if (mrt_spec_index_dim(s, d))
            st = mrt_ir_fail(&c, MRT_E_NOMEM, "out of memory");
        else
            s->ndims++;
    }
    return mrt_ir_end(&c, st, err);
}

mrt_status mrt_ir_set_rule(mrt_ir *ir, const mrt_ir_rule *rule,
                           mrt_error *err)
{
    mrt_ir_call c;
    mrt_status st = mrt_ir_begin(&c, ir, "mrt_ir_set_rule");
    c.arg = "rule";
    if (!st && !rule)
        st = mrt_ir_fail(&c, MRT_E_USAGE, "NULL");
    if (!st && ir->s->ntensors)
        st = mrt_ir_fail(&c, MRT_E_USAGE, "the global rules are set before "
                         "the first tensor");
    if (!st)
        st = mrt_ir_rules(&c, 1, rule, NULL, ir->s->rule);
    return mrt_ir_end(&c, st, err);
}

/* ---- input tensors -------------------------------------------------- */

/* The most classes whose labels the dtype holds exactly. */
static int64_t labels_max(mrt_dtype t)
{
    return t == MRT_F64 ? (int64_t)1 << 53 : (int64_t)1 << 24;
}

/* The init of t from d. */
static mrt_status tensor_init(mrt_ir_call *c, const mrt_ir_tensor *d,
                              mrt_spec_tensor *t)
{
    const mrt_spec *s = c->ir->s;
    c->arg = "init";
    t->seed = mrt_init_seed_from_name(t->name);
    t->init = MRT_INIT_RANDOM;
    switch (d->init) {
    case MRT_IR_INIT_DEFAULT: return MRT_OK;
    case MRT_IR_INIT_RANDOM: t->seed = d->seed; return MRT_OK;
    case MRT_IR_INIT_ZEROS:
    case MRT_IR_INIT_ONES:
    case MRT_IR_INIT_FILL:
        t->init = MRT_INIT_FILL;
        t->fill = d->init == MRT_IR_INIT_ZEROS  ? 0
                  : d->init == MRT_IR_INIT_ONES ? 1 : d->value;
        c->arg = "value";
        if (!(t->fill == t->fill) || t->fill > 1.7976931348623157e308 ||
            t->fill < -1.7976931348623157e308 ||
            (s->dtype == MRT_F32 && (t->fill > 3.40282347e38 ||
                                     t->fill < -3.40282347e38)))
            return mrt_ir_fail(c, MRT_E_SPEC, "the fill value of tensor "
                               "'%s' is not a finite %s", t->name,
                               mrt_dtype_name(s->dtype));
        return MRT_OK;
    case MRT_IR_INIT_LABELS:
        t->init = MRT_INIT_LABELS;
        t->fill = d->value;
        c->arg = "value";
        if (!(d->value >= 1) || d->value != (double)(int64_t)d->value ||
            d->value > (double)labels_max(s->dtype))
            return mrt_ir_fail(c, MRT_E_SPEC, "the number of classes of "
                               "tensor '%s' must be an integer from 1 to "
                               "%lld for %s", t->name,
                               (long long)labels_max(s->dtype),
                               mrt_dtype_name(s->dtype));
        return MRT_OK;
    case MRT_IR_INIT_FILE: {
        mrt_npy_header h;
        mrt_error e = {0};
        c->arg = "file";
        if (!d->file)
            return mrt_ir_fail(c, MRT_E_USAGE, "NULL");
        t->init = MRT_INIT_FILE;
        if (!(t->file = strdup(d->file)))
            return mrt_ir_fail(c, MRT_E_NOMEM, "out of memory");
        if (mrt_npy_read_header(t->file, &h, &e))
            return mrt_ir_fail(c, e.code, "cannot read '%.60s': %s", d->file,
                               e.message);
        int same = h.ndims == t->layout.ndims;
        for (int i = 0; same && i < h.ndims; i++)
            same = h.shape[i] == t->layout.size[i];
        if (!same)
            return mrt_ir_fail(c, MRT_E_SPEC, "'%.60s' does not have the "
                               "shape of tensor '%s'", d->file, t->name);
        return MRT_OK;
    }
    case MRT_IR_INIT_COUNT:
        break;
    }
    return mrt_ir_fail(c, MRT_E_USAGE, "unknown init kind %d", (int)d->init);
}

/* Checks d into t (name, dims, home layout, init). */
static mrt_status make_tensor(mrt_ir_call *c, const mrt_ir_tensor *d,
                              mrt_spec_tensor *t)
{
    mrt_spec *s = c->ir->s;
    mrt_status st;
    c->arg = "name";
    if ((st = mrt_ir_check_name(c, d->name, "tensor")))
        return st;
    if (mrt_spec_find_tensor(s, d->name) >= 0)
        return mrt_ir_fail(c, MRT_E_SPEC, "tensor '%s' is declared twice",
                           d->name);
    snprintf(t->name, sizeof t->name, "%s", d->name);
    t->producer = -1;
    c->arg = "shape";
    if (d->ndims == 0)
        return mrt_ir_fail(c, MRT_E_SPEC, "the shape of tensor '%s' is "
                           "empty (scalars are not supported)", t->name);
    if ((st = mrt_ir_shape(c, d->ndims, d->shape, &t->layout)))
        return st;
    const mrt_spec_resolver r = {s, &s->mesh, NULL, &c->e};
    if (!d->nlayout) {
        st = mrt_spec_apply_rules(&r, t, s->rule, 0);
    } else {
        mrt_rule *own = calloc((size_t)s->ndims + 1, sizeof *own);
        c->arg = "layout";
        st = own ? mrt_ir_rules(c, d->nlayout, d->layout, &t->layout, own)
                 : mrt_ir_fail(c, MRT_E_NOMEM, "out of memory");
        t->own_layout = 1;
        if (!st)
            st = mrt_spec_apply_rules(&r, t, own, 1);
        free(own);
    }
    return st ? st : tensor_init(c, d, t);
}

mrt_status mrt_ir_add_tensor(mrt_ir *ir, const mrt_ir_tensor *d,
                             mrt_error *err)
{
    mrt_ir_call c;
    mrt_spec_tensor t;
    memset(&t, 0, sizeof t);
    mrt_status st = mrt_ir_begin(&c, ir, "mrt_ir_add_tensor");
    c.arg = "t";
    if (!st && !d)
        st = mrt_ir_fail(&c, MRT_E_USAGE, "NULL");
    if (!st && ir->s->nops)
        st = mrt_ir_fail(&c, MRT_E_USAGE, "the inputs are declared before "
                         "the first op");
    if (!st)
        st = make_tensor(&c, d, &t);
    if (!st) {
        mrt_spec *s = ir->s;
        int id = mrt_spec_add_tensor(s, t.name, t.layout.dim, t.layout.ndims,
                                     -1, t.mark);
        if (id < 0)
            st = mrt_ir_fail(&c, MRT_E_NOMEM, "out of memory");
        else
            s->tensor[id] = t; /* (the index is by name: unchanged) */
    }
    if (st)
        free(t.file);
    return mrt_ir_end(&c, st, err);
}

/* ---- outputs and the end -------------------------------------------- */

mrt_status mrt_ir_set_outputs(mrt_ir *ir, int n, const char *const *names,
                              mrt_error *err)
{
    mrt_ir_call c;
    mrt_status st = mrt_ir_begin(&c, ir, "mrt_ir_set_outputs");
    int *ids = NULL;
    c.arg = "names";
    if (!st && (n < 1 || !names))
        st = mrt_ir_fail(&c, MRT_E_USAGE, "name at least one tensor (or "
                         "leave the outputs out for the last op's result)");
    if (!st && !(ids = calloc((size_t)n, sizeof *ids)))
        st = mrt_ir_fail(&c, MRT_E_NOMEM, "out of memory");
    for (int j = 0; !st && j < n; j++) {
        st = mrt_ir_tensor_id(&c, names[j], &ids[j]);
        for (int k = 0; !st && k < j; k++)
            if (ids[k] == ids[j])
                st = mrt_ir_fail(&c, MRT_E_SPEC, "tensor '%s' is listed "
                                 "twice", names[j]);
    }
    if (!st) {
        free(ir->outs);
        ir->outs = ids;
        ir->nouts = n;
        ids = NULL;
    }
    free(ids);
    return mrt_ir_end(&c, st, err);
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
    if (!s->nops)
        st = mrt_ir_fail(&c, MRT_E_SPEC, "the program has no op (add at "
                         "least one with mrt_ir_add_op)");
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
