/*
 * build_tensor.c — the program's inputs (mrt_ir_add_tensor, and
 * mrt_ir_add_tensor_at for the YAML front end's `tensors:`): a name, a
 * shape of declared dims, a home layout (its own rules, or the global
 * ones) and an init (random, a fill value, class labels, a .npy file).
 *
 * A file init is resolved against the builder's folder (the spec's;
 * "." in C) and its header read now, so a missing file or a wrong shape
 * is reported where the tensor is declared, not in the middle of a run;
 * a float64 file read into a float32 program is read whole now, and a
 * value beyond float32's range is an error at the init, as `fill: 1e39`
 * is (values below float32's smallest subnormal round to 0, as in
 * every float32 conversion, fill values included).  Later reads check
 * that the file is still the one checked here (mrt_npy_read_same).
 */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "build.h"
#include "grow.h"
#include "init.h"
#include "npy.h"

static const mrt_ir_tensor_at no_marks;

/* The most classes whose labels (0 .. N-1) the dtype holds exactly:
 * every integer up to 2^24 is a float32, up to 2^53 a float64, up to
 * 2^11 a float16 and up to 2^8 a bfloat16. */
static int64_t labels_max(mrt_dtype t)
{
    return t == MRT_F64    ? (int64_t)1 << 53
           : t == MRT_I32  ? INT32_MAX
           : t == MRT_F16  ? (int64_t)1 << 11
           : t == MRT_BF16 ? (int64_t)1 << 8
                           : (int64_t)1 << 24;
}

/* A fill value the dtype holds. */
static mrt_status check_fill(mrt_ir_call *c, const mrt_ir_tensor_at *at,
                             mrt_spec_tensor *t)
{
    const mrt_spec *s = c->ir->s;
    char q[MRT_SPEC_QUOTE_MAX + 8];
    double v = t->fill;
    if (v == v && v <= 1.7976931348623157e308 && v >= -1.7976931348623157e308 &&
        !(s->dtype == MRT_F32 && (v > 3.40282347e38 || v < -3.40282347e38)) &&
        !(s->dtype == MRT_F16 && (v > 65504 || v < -65504)))
        return MRT_OK;
    if (s->dtype == MRT_F16)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "the fill value of tensor '%s' is out of "
                           "float16's range (at most 65504 in magnitude)",
                           t->name);
    if (mrt_ir_yaml(c)) /* the file's number is finite: float32's range */
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "the fill value of tensor '%s' is "
                           "out of float32's range: %s (at most %.8g in "
                           "magnitude; or use dtype: float64)",
                           t->name, mrt_ir_quote(at->value_text, q, sizeof q),
                           (double)FLT_MAX);
    return mrt_ir_fail(c, MRT_E_SPEC,
                       "the fill value of tensor '%s' is not "
                       "a finite %s",
                       t->name, mrt_dtype_name(s->dtype));
}

/* A number of classes the dtype holds every label of. */
static mrt_status check_labels(mrt_ir_call *c, const mrt_ir_tensor_at *at,
                               const mrt_ir_tensor *d, mrt_spec_tensor *t)
{
    mrt_dtype type = t->stored ? (mrt_dtype)(t->stored - 1) : c->ir->s->dtype;
    const char *dt = mrt_dtype_name(type);
    char q[MRT_SPEC_QUOTE_MAX + 8];
    int64_t max = labels_max(type);
    t->fill = d->value;
    if (at->classes <= max && d->value >= 1 && d->value <= (double)max &&
        d->value == (double)(int64_t)d->value)
        return MRT_OK;
    if (mrt_ir_yaml(c) && (at->classes > max || d->value > (double)max))
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "the number of classes of tensor "
                           "'%s' is too large for %s: %s (at most %lld, up "
                           "to which %s holds every label exactly)",
                           t->name, dt,
                           mrt_ir_quote(at->value_text, q, sizeof q),
                           (long long)max, dt);
    return mrt_ir_fail(c, MRT_E_SPEC,
                       "the number of classes of tensor '%s' "
                       "must be an integer from 1 to %lld for %s",
                       t->name, (long long)max, dt);
}

/* "(16, 8)" */
static const char *tuple_str(const int64_t v[], int n, char *buf, size_t size)
{
    size_t len = (size_t)snprintf(buf, size, "(");
    for (int i = 0; i < n && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%lld", i ? ", " : "",
                                (long long)v[i]);
    if (len < size)
        snprintf(buf + len, size - len, "%s", n == 1 ? ",)" : ")");
    return buf;
}

/* Where a finite float64 rounds to an infinite float32: 2^128 - 2^103,
 * half a unit past FLT_MAX (round to nearest, ties to even). */
#define F32_OVERFLOW 0x1.ffffffp127

/* Every finite value of t's float64 file within float32's range, for a
 * float32 program. */
static mrt_status check_file_range(mrt_ir_call *c, const char *name,
                                   mrt_spec_tensor *t)
{
    char q[MRT_SPEC_QUOTE_MAX + 8], idx[MRT_SPEC_LIST_MAX];
    void *data = NULL;
    mrt_error e = {0};
    if (mrt_npy_read_same(t->file, &t->file_header, &data, &e))
        return mrt_ir_fail(c, e.code, "cannot read '%s': %s",
                           mrt_ir_quote(name, q, sizeof q), e.message);
    const double *v = data;
    int64_t bad = -1;
    for (int64_t i = 0; bad < 0 && i < t->file_header.count; i++)
        if (isfinite(v[i]) && fabs(v[i]) >= F32_OVERFLOW)
            bad = i;
    double x = bad >= 0 ? v[bad] : 0;
    free(data);
    if (bad < 0)
        return MRT_OK;
    int64_t at[MRT_MAX_DIMS], rest = bad;
    for (int i = t->layout.ndims - 1; i >= 0; i--) {
        at[i] = rest % t->layout.size[i];
        rest /= t->layout.size[i];
    }
    return mrt_ir_fail(c, MRT_E_SPEC,
                       "'%s' holds %.9g at %s (element "
                       "%lld), out of float32's range (at most %.8g in "
                       "magnitude) for tensor '%s'; or use dtype: float64",
                       mrt_ir_quote(name, q, sizeof q), x,
                       tuple_str(at, t->layout.ndims, idx, sizeof idx),
                       (long long)bad, (double)FLT_MAX, t->name);
}

/* The .npy file `name` (as given) for t: resolved, readable, of t's
 * global shape. */
static mrt_status check_file(mrt_ir_call *c, const mrt_ir_tensor_at *at,
                             const char *name, mrt_spec_tensor *t)
{
    const mrt_spec *s = c->ir->s;
    char q[MRT_SPEC_QUOTE_MAX + 8], a[MRT_SPEC_LIST_MAX], b[MRT_SPEC_LIST_MAX],
        d[MRT_SPEC_LIST_MAX], path[PATH_MAX];
    int yaml = mrt_ir_yaml(c);
    mrt_ir_at(c, "file", &at->value_mark);
    int n = name[0] == '/' || !strcmp(s->dir, ".")
                ? snprintf(path, sizeof path, "%s", name)
                : snprintf(path, sizeof path, "%s/%s", s->dir, name);
    if (n < 0 || (size_t)n >= sizeof path)
        return mrt_ir_fail(c, MRT_E_SPEC, "the path of '%s' is too long",
                           mrt_ir_quote(name, q, sizeof q));
    t->init = MRT_INIT_FILE;
    if (!(t->file = strdup(path)))
        return mrt_ir_fail(c, MRT_E_NOMEM, "out of memory");
    mrt_ir_at(c, "file", &at->init_mark);
    if (yaml) { /* non-blocking: a FIFO is refused by the reader */
        int fd = open(t->file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
            return mrt_ir_fail(c, MRT_E_IO, "cannot read '%s': %s",
                               mrt_ir_quote(name, q, sizeof q),
                               strerror(errno));
        close(fd);
    }
    mrt_npy_header h;
    mrt_error e = {0};
    if (mrt_npy_read_header(t->file, &t->file_header, &e))
        return yaml ? mrt_ir_fail(c, e.code, "cannot read '%s': %s",
                                  mrt_ir_quote(name, q, sizeof q), e.message)
                    : mrt_ir_fail(c, e.code, "cannot read '%.60s': %s", name,
                                  e.message);
    h = t->file_header;
    int same = h.ndims == t->layout.ndims;
    for (int i = 0; same && i < h.ndims; i++)
        same = h.shape[i] == t->layout.size[i];
    if ((h.dtype == MRT_I32) != (t->stored == 1 + MRT_I32))
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "'%s' holds %s, but tensor '%s' is %s%s",
                           yaml ? mrt_ir_quote(name, q, sizeof q) : name,
                           mrt_dtype_name(h.dtype), t->name,
                           t->stored ? "int32" : mrt_dtype_name(s->dtype),
                           h.dtype == MRT_I32 ? " (give it dtype: int32)" : "");
    if (same && h.wide) { /* int64 indices: each within int32's range */
        void *data = NULL;
        mrt_status st = mrt_npy_read_same(t->file, &t->file_header, &data, &e);
        free(data);
        return st ? mrt_ir_fail(c, e.code, "cannot read '%s': %s",
                                yaml ? mrt_ir_quote(name, q, sizeof q) : name,
                                e.message)
                  : MRT_OK;
    }
    if (same)
        return s->dtype == MRT_F32 && h.dtype == MRT_F64
                   ? check_file_range(c, name, t)
                   : MRT_OK;
    if (!yaml)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "'%.60s' does not have the shape "
                           "of tensor '%s'",
                           name, t->name);
    return mrt_ir_fail(c, MRT_E_SPEC,
                       "'%s' has shape %s, but tensor '%s' "
                       "has shape %s = %s",
                       mrt_ir_quote(name, q, sizeof q),
                       tuple_str(h.shape, h.ndims, a, sizeof a), t->name,
                       mrt_spec_shape_str(s, &t->layout, b, sizeof b),
                       tuple_str(t->layout.size, t->layout.ndims, d, sizeof d));
}

/* An int32 tensor holds indices: labels or a file of them. */
static mrt_status index_init(mrt_ir_call *c, const mrt_ir_tensor *d,
                             const mrt_ir_tensor_at *at, mrt_spec_tensor *t)
{
    if (d->init == MRT_IR_INIT_LABELS || d->init == MRT_IR_INIT_FILE)
        return MRT_OK;
    mrt_ir_at(c, "init", d->init ? &at->init_mark : &at->dtype_mark);
    return mrt_ir_fail(c, MRT_E_SPEC,
                       "int32 tensor '%s' holds indices: give it init: "
                       "{labels: N} or {file: ids.npy}",
                       t->name);
}

/* The element type of t from d: the program's, int32, or another
 * floating type (a 16-bit input of a float32 program, say: each kernel
 * that reads it widens it, ops/step_widen.h). */
static mrt_status tensor_dtype(mrt_ir_call *c, const mrt_ir_tensor *d,
                               const mrt_ir_tensor_at *at, mrt_spec_tensor *t)
{
    static const mrt_dtype floats[] = {MRT_F32, MRT_F64, MRT_BF16, MRT_F16};
    const mrt_spec *s = c->ir->s;
    char q[MRT_SPEC_QUOTE_MAX + 8];
    t->stored = 0;
    if (!d->dtype || !strcmp(d->dtype, mrt_dtype_name(s->dtype)))
        return MRT_OK;
    if (!strcmp(d->dtype, mrt_dtype_name(MRT_I32))) {
        t->stored = 1 + MRT_I32;
        return index_init(c, d, at, t);
    }
    for (size_t k = 0; k < sizeof floats / sizeof floats[0]; k++)
        if (!strcmp(d->dtype, mrt_dtype_name(floats[k]))) {
            t->stored = 1 + (int)floats[k];
            return MRT_OK;
        }
    mrt_ir_at(c, "dtype", &at->dtype_mark);
    return mrt_ir_fail(c, MRT_E_SPEC,
                       "unknown dtype '%s' for tensor '%s' (expected: int32, "
                       "float32, float64, bfloat16, float16; the program's "
                       "is %s)",
                       mrt_ir_quote(d->dtype, q, sizeof q), t->name,
                       mrt_dtype_name(s->dtype));
}

/* The init of t from d. */
static mrt_status tensor_init(mrt_ir_call *c, const mrt_ir_tensor *d,
                              const mrt_ir_tensor_at *at, mrt_spec_tensor *t)
{
    mrt_status st = tensor_dtype(c, d, at, t);
    if (st)
        return st;
    t->init_mark = at->init_mark;
    t->init_given = d->init != MRT_IR_INIT_DEFAULT;
    t->seed = mrt_init_seed_from_name(t->name);
    t->init = MRT_INIT_RANDOM;
    mrt_ir_at(c, "value", &at->value_mark);
    switch (d->init) {
    case MRT_IR_INIT_DEFAULT: return MRT_OK;
    case MRT_IR_INIT_RANDOM: t->seed = d->seed; return MRT_OK;
    case MRT_IR_INIT_ZEROS:
    case MRT_IR_INIT_ONES:
    case MRT_IR_INIT_FILL:
        t->init = MRT_INIT_FILL;
        t->fill = d->init == MRT_IR_INIT_ZEROS  ? 0
                  : d->init == MRT_IR_INIT_ONES ? 1
                                                : d->value;
        return check_fill(c, at, t);
    case MRT_IR_INIT_LABELS:
        t->init = MRT_INIT_LABELS;
        return check_labels(c, at, d, t);
    case MRT_IR_INIT_CAUSAL: return mrt_ir_check_causal_init(c, d, at, t);
    case MRT_IR_INIT_FILE:
        mrt_ir_at(c, "file", NULL);
        if (!d->file)
            return mrt_ir_fail(c, MRT_E_USAGE, "NULL");
        return check_file(c, at, d->file, t);
    case MRT_IR_INIT_COUNT: break;
    }
    mrt_ir_at(c, "init", NULL);
    return mrt_ir_fail(c, MRT_E_USAGE, "unknown init kind %d", (int)d->init);
}

/* t's home layout: given rules, its own, or the global ones. */
static mrt_status tensor_layout(mrt_ir_call *c, const mrt_ir_tensor *d,
                                const mrt_ir_tensor_at *at, mrt_spec_tensor *t)
{
    mrt_spec *s = c->ir->s;
    char of[MRT_NAME_MAX + 32];
    const mrt_spec_resolver r = {s, &s->mesh, NULL, &c->e};
    int own = at->has_layout || d->nlayout > 0;
    c->arg = "layout";
    t->own_layout = own || at->given;
    if (at->given) /* mrt_spec_load_layouts: in place of its own */
        return mrt_spec_apply_rules(&r, t, at->given, 1);
    if (!own)
        return mrt_spec_apply_rules(&r, t, s->rule, 0);
    mrt_rule *rules = calloc((size_t)s->ndims + 1, sizeof *rules);
    if (!rules)
        return mrt_ir_fail(c, MRT_E_NOMEM, "out of memory");
    snprintf(of, sizeof of, "the layout of tensor '%s'", t->name);
    mrt_status st = at->has_layout
                        ? mrt_ir_rules(c, at->nlayout, NULL, at->layout,
                                       &t->layout, of, rules)
                        : mrt_ir_rules(c, d->nlayout, d->layout, NULL,
                                       &t->layout, of, rules);
    if (!st)
        st = mrt_spec_apply_rules(&r, t, rules, 1);
    free(rules);
    return st;
}

/* Checks d into t (name, dims, home layout, init). */
static mrt_status make_tensor(mrt_ir_call *c, const mrt_ir_tensor *d,
                              const mrt_ir_tensor_at *at, mrt_spec_tensor *t)
{
    mrt_status st;
    mrt_ir_at(c, "name", &at->mark);
    if ((st = mrt_ir_new_tensor(c, d->name, "is declared twice", t)))
        return st;
    t->mark = at->mark;
    t->shape_mark = at->shape_mark;
    t->producer = -1;
    mrt_ir_at(c, "shape", &at->shape_mark);
    if (d->ndims == 0)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "the shape of tensor '%s' is "
                           "empty (scalars are not supported)",
                           t->name);
    if ((st = mrt_ir_shape(c, t->name, d->ndims, d->shape, at->dim_mark,
                           at->shape_mark, &t->layout)) ||
        (st = tensor_layout(c, d, at, t)))
        return st;
    return tensor_init(c, d, at, t);
}

mrt_status mrt_ir_add_tensor_at(mrt_ir *ir, const mrt_ir_tensor *d,
                                const mrt_ir_tensor_at *at, mrt_error *err)
{
    mrt_ir_call c;
    mrt_spec_tensor t;
    int renamed = mrt_ir_block_tensor(ir, d, at, err); /* in a block */
    if (renamed >= 0)
        return (mrt_status)renamed;
    memset(&t, 0, sizeof t);
    t.block = t.layer = -1;
    mrt_status st = mrt_ir_begin(&c, ir, "mrt_ir_add_tensor");
    c.entry = at ? at->mark : (mrt_mark){0, 0};
    c.arg = "t";
    if (!st && !d)
        st = mrt_ir_fail(&c, MRT_E_USAGE, "NULL");
    if (!st && ((ir->s->nops && !ir->block) || ir->s->nlayouts))
        st = mrt_ir_fail(&c, MRT_E_USAGE,
                         "the inputs are declared before "
                         "the first op and the first alternative");
    if (!st)
        st = make_tensor(&c, d, at ? at : &no_marks, &t);
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

mrt_status mrt_ir_add_tensor(mrt_ir *ir, const mrt_ir_tensor *d, mrt_error *err)
{
    return mrt_ir_add_tensor_at(ir, d, NULL, err);
}

mrt_status mrt_ir_reserve(mrt_ir *ir, int ntensors, int nops)
{
    mrt_spec *s = ir->s;
    if (mrt_grow((void **)&s->tensor, &s->cap_tensors, s->ntensors + ntensors,
                 sizeof *s->tensor) ||
        mrt_grow((void **)&s->op, &s->cap_ops, s->nops + nops, sizeof *s->op))
        return mrt_ir_nomem(s, &ir->error);
    return MRT_OK;
}
