/*
 * build_labels.c — the integer labels of softmax_cross_entropy are
 * classes: each in [0, n), n the size of the op's class dim.
 *
 * A label outside that range picks no logit (the gather along the class
 * dim finds it in no rank's block): the loss is then wrong and its
 * gradient does not match finite differences, silently.  So the
 * labels tensor is checked when the op that reads it as labels is
 * built, with the class dim's size then known (--dim included): a
 * `labels: N` init must have N <= n; a file must hold, element by
 * element, integers in [0, n) (floats holding integers are rounded to
 * the nearest, as the gather reads them); a fill value likewise.  A
 * random init makes no labels: an error, except a C caller's default
 * (its labels may come from mrt_runner_set_input).  The error is at the tensor's
 * `init:` and names the element.  (An embedding's ids are not checked:
 * an id outside the table is documented to select a row of zeros.)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "half.h"
#include "npy.h"

/* Element i of a buffer of type t, as a double. */
static double label_at(mrt_dtype t, const void *data, int64_t i)
{
    switch (t) {
    case MRT_I32: return ((const int32_t *)data)[i];
    case MRT_F64: return ((const double *)data)[i];
    case MRT_BF16: return mrt_bf16_to_f32(((const uint16_t *)data)[i]);
    case MRT_F16: return mrt_f16_to_f32(((const uint16_t *)data)[i]);
    default: return ((const float *)data)[i];
    }
}

/* 1 if x, rounded to the nearest integer, is a class of n. */
static int is_class(double x, int64_t n)
{
    return x == x && x >= -0.5 && x < (double)n - 0.5 && llround(x) >= 0 &&
           llround(x) < n;
}

/* "targets[batch=3, length=5]": element e of tensor t (row-major). */
static void element_str(const mrt_spec *s, const mrt_spec_tensor *t, int64_t e,
                        char *buf, size_t size)
{
    int64_t at[MRT_MAX_DIMS];
    for (int i = t->layout.ndims - 1; i >= 0; i--) {
        at[i] = e % t->layout.size[i];
        e /= t->layout.size[i];
    }
    size_t n = (size_t)snprintf(buf, size, "%s[", t->name);
    for (int i = 0; i < t->layout.ndims && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%s=%lld", i ? ", " : "",
                              s->dim_name[t->layout.dim[i]], (long long)at[i]);
    if (n < size)
        snprintf(buf + n, size - n, "]");
}

/* The first element of t's file that is no class of n, or -1 (*x: it). */
static mrt_status first_bad(mrt_ir_call *c, const mrt_spec_tensor *t, int64_t n,
                            int64_t *bad, double *x)
{
    void *data = NULL;
    mrt_error e = {0};
    *bad = -1;
    if (mrt_npy_read_same(t->file, &t->file_header, &data, &e))
        return mrt_ir_fail(c, e.code, "cannot read '%s': %s", t->file,
                           e.message);
    for (int64_t i = 0; *bad < 0 && i < t->file_header.count; i++)
        if (!is_class(*x = label_at(t->file_header.dtype, data, i), n))
            *bad = i;
    free(data);
    return MRT_OK;
}

/* t's file as the spec names it: relative to the spec's folder. */
static const char *file_name(const mrt_spec *s, const mrt_spec_tensor *t)
{
    size_t n = strlen(s->dir);
    return strcmp(s->dir, ".") && !strncmp(t->file, s->dir, n) &&
                   t->file[n] == '/'
               ? t->file + n + 1
               : t->file;
}

mrt_status mrt_ir_check_labels(mrt_ir_call *c, const mrt_user_op *u)
{
    const mrt_spec *s = c->ir->s;
    const mrt_spec_tensor *t = &s->tensor[u->in[1]];
    const char *d = s->dim_name[u->dim];
    int64_t n = s->dim_size[u->dim], bad = -1;
    double x = t->fill;
    char el[MRT_SPEC_LIST_MAX];
    mrt_status st;
    if (t->producer >= 0) /* computed labels: nothing to check here */
        return MRT_OK;
    mrt_ir_at(c, "init", &t->init_mark);
    switch (t->init) {
    case MRT_INIT_LABELS:
        if (t->fill <= (double)n)
            return MRT_OK;
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "tensor '%s' has labels 0 .. %.0f, but "
                           "softmax_cross_entropy op %d has %lld classes "
                           "(dim '%s'): every label must be a class "
                           "(labels: %s follows the dim)",
                           t->name, t->fill - 1, u->number, (long long)n, d, d);
    case MRT_INIT_FILL:
        if (is_class(x, n))
            return MRT_OK;
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "tensor '%s' is filled with %g, not a class of "
                           "softmax_cross_entropy op %d (0 .. %lld, dim '%s')",
                           t->name, x, u->number, (long long)n - 1, d);
    case MRT_INIT_FILE:
        if ((st = first_bad(c, t, n, &bad, &x)) || bad < 0)
            return st;
        element_str(s, t, bad, el, sizeof el);
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "'%s' holds label %g at %s (element %lld), not a "
                           "class of softmax_cross_entropy op %d (0 .. %lld, "
                           "dim '%s')",
                           file_name(s, t), x, el, (long long)bad, u->number,
                           (long long)n - 1, d);
    default: /* random: no labels (in C, unless mrt_runner_set_input
                sets them: only an init given is checked) */
        if (!t->init_given && !mrt_ir_yaml(c))
            return MRT_OK;
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "tensor '%s' is the labels of "
                           "softmax_cross_entropy op %d: give it init: "
                           "{labels: %s} or {file: labels.npy}",
                           t->name, u->number, d);
    }
}
