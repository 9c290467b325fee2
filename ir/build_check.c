/*
 * build_check.c — how a builder call checks its arguments and words
 * what it finds (build.h): the call's life (begin, fail, end), and the
 * checks several calls share — names, dims, shapes and layout rules.
 *
 * The same check serves both front ends.  Where the C caller and the
 * spec file's user name things differently ("argument 'layout': unknown
 * mesh axis 'x' in the rule of dim 'd'" against "unknown mesh axis 'x'
 * (the mesh has: ...)" at the axis), the check picks its words with
 * mrt_ir_yaml and its position with mrt_ir_at; what it checks is one.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"

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
        return mrt_ir_fail(c, MRT_E_USAGE,
                           "the program was finished "
                           "already (only mrt_ir_destroy may follow)");
    return MRT_OK;
}

mrt_status mrt_ir_begin_untrained(mrt_ir_call *c, mrt_ir *ir, const char *fn,
                                  const char *arg, const void *given,
                                  const char *trained)
{
    mrt_status st = mrt_ir_begin(c, ir, fn);
    c->arg = arg;
    if (!st && !given)
        st = mrt_ir_fail(c, MRT_E_USAGE, "NULL");
    if (!st && ir->trained)
        st = mrt_ir_fail(c, MRT_E_USAGE, "%s", trained);
    if (!st && ir->s->nlayouts) /* alternatives are checked on every tensor */
        st = mrt_ir_fail(c, MRT_E_USAGE,
                         "ops and training come before the "
                         "first alternative (mrt_ir_add_alternative)");
    return st;
}

void mrt_ir_at(mrt_ir_call *c, const char *arg, const mrt_mark *at)
{
    c->arg = arg;
    c->at = at ? *at : (mrt_mark){0, 0};
}

int mrt_ir_yaml(const mrt_ir_call *c)
{
    return c->ir && c->ir->yaml;
}

const char *mrt_ir_quote(const char *name, char *buf, size_t size)
{
    if (!name)
        snprintf(buf, size, "?");
    else if (strlen(name) > MRT_SPEC_QUOTE_MAX)
        snprintf(buf, size, "%.*s...", MRT_SPEC_QUOTE_MAX, name);
    else
        snprintf(buf, size, "%s", name);
    return buf;
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
    c->worded = 1;
    mrt_mark at = c->at.line > 0 ? c->at : c->entry;
    if (at.line > 0 && c->ir && c->ir->s) /* where the user wrote it */
        return mrt_error_set(&c->e, code, c->ir->s->path, at, "%s", msg);
    c->e.code = code;
    if (c->arg)
        snprintf(c->e.message, sizeof c->e.message, "%s: argument '%s': %.400s",
                 c->fn, c->arg, msg);
    else
        snprintf(c->e.message, sizeof c->e.message, "%s: %.450s", c->fn, msg);
    return code;
}

mrt_status mrt_ir_end(mrt_ir_call *c, mrt_status st, mrt_error *err)
{
    if (!st)
        return MRT_OK;
    if (!c->e.code) /* only NULL builders have no message */
        mrt_ir_fail(c, st, c->ir ? "failed" : "the builder is NULL");
    int placed = c->e.line > 0 || mrt_ir_yaml(c);
    if (!c->worded && !placed) { /* set by the shared IR code: add the call */
        char msg[sizeof c->e.message];
        snprintf(msg, sizeof msg, "%s", c->e.message);
        c->e.code = MRT_OK;
        mrt_ir_fail(c, st, "%s", msg);
    }
    c->e.code = st;
    if (!placed) {
        c->e.file[0] = '\0';
        c->e.line = c->e.column = 0;
    }
    if (c->ir)
        c->ir->error = c->e;
    if (err && !err->code)
        *err = c->e;
    return st;
}

/* ---- names, dims and shapes ---------------------------------------- */

mrt_status mrt_ir_check_name(mrt_ir_call *c, const char *name, const char *kind)
{
    if (!name)
        return mrt_ir_fail(c, MRT_E_USAGE, "expected a %s name, got NULL",
                           kind);
    size_t n = strlen(name);
    int dots = !strcmp(kind, "tensor"); /* "h3.attn.wq" */
    int ok = n > 0 && (name[0] == '_' ||
                       ((name[0] | 32) >= 'a' && (name[0] | 32) <= 'z'));
    for (size_t i = 1; ok && i < n; i++)
        ok = name[i] == '_' || (name[i] >= '0' && name[i] <= '9') ||
             ((name[i] | 32) >= 'a' && (name[i] | 32) <= 'z') ||
             (dots && name[i] == '.' && i + 1 < n && name[i + 1] != '.');
    if (ok && n >= MRT_NAME_MAX) /* as the file's reader says it */
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "%s name '%.60s...' is too long (at most %d "
                           "characters)",
                           kind, name, MRT_NAME_MAX - 1);
    if (!ok && dots)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "invalid tensor name '%.60s' (a tensor name "
                           "starts with a letter or '_' and has only "
                           "letters, digits, '_' and '.', with no '.' last "
                           "or twice in a row)",
                           name);
    if (!ok)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "invalid %s name '%.60s' (a name "
                           "starts with a letter or '_' and has only "
                           "letters, digits and '_')",
                           kind, name);
    return MRT_OK;
}

mrt_status mrt_ir_new_tensor(mrt_ir_call *c, const char *name,
                             const char *taken, mrt_spec_tensor *t)
{
    mrt_status st = mrt_ir_check_name(c, name, "tensor");
    if (!st && mrt_spec_find_tensor(c->ir->s, name) >= 0)
        st = mrt_ir_fail(c, MRT_E_SPEC, "tensor '%s' %s", name, taken);
    if (!st)
        snprintf(t->name, sizeof t->name, "%s", name);
    return st;
}

/* "batch, d_model, d_ff": the dims, for messages. */
static const char *dim_list(const mrt_spec *s, char *buf, size_t size)
{
    return mrt_spec_join(buf, size, s->dim_name ? s->dim_name[0] : "",
                         sizeof s->dim_name[0], s->ndims);
}

mrt_status mrt_ir_dim(mrt_ir_call *c, const char *name, int *out)
{
    char list[MRT_SPEC_LIST_MAX];
    const mrt_spec *s = c->ir->s;
    if (!name)
        return mrt_ir_fail(c, MRT_E_USAGE, "expected a dim name, got NULL");
    *out = mrt_spec_find_dim(s, name);
    if (*out < 0)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "dim '%.60s' not declared (the "
                           "dims are: %s)",
                           name, dim_list(s, list, sizeof list));
    return MRT_OK;
}

mrt_status mrt_ir_tensor_id(mrt_ir_call *c, const char *name, int *out)
{
    if (!name)
        return mrt_ir_fail(c, MRT_E_USAGE,
                           "expected a tensor name, got "
                           "NULL");
    *out = mrt_spec_find_tensor(c->ir->s, name);
    if (*out < 0)
        return mrt_ir_fail(c, MRT_E_SPEC, "tensor '%.60s' not declared", name);
    return MRT_OK;
}

mrt_status mrt_ir_shape(mrt_ir_call *c, const char *tensor, int n,
                        const char *const *names, const mrt_mark *marks,
                        mrt_mark shape_mark, mrt_layout *l)
{
    const mrt_spec *s = c->ir->s;
    const char *arg = c->arg;
    char shape[MRT_SPEC_LIST_MAX], q[MRT_SPEC_QUOTE_MAX + 8];
    int yaml = mrt_ir_yaml(c);
    memset(l, 0, sizeof *l);
    mrt_ir_at(c, arg, &shape_mark);
    if (yaml && n > MRT_MAX_DIMS)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "tensor '%s' has %d dims (at most "
                           "%d)",
                           tensor, n, MRT_MAX_DIMS);
    if (n < 0 || n > MRT_MAX_DIMS || (n > 0 && !names))
        return mrt_ir_fail(c, MRT_E_USAGE,
                           "%d dims (at most %d, and a "
                           "list of names)",
                           n, MRT_MAX_DIMS);
    for (int i = 0; i < n; i++) {
        int d = names[i] ? mrt_spec_find_dim(s, names[i]) : -1;
        mrt_ir_at(c, arg, marks ? &marks[i] : NULL);
        mrt_status st = d >= 0 || !yaml
                            ? mrt_ir_dim(c, names[i], &d)
                            : mrt_ir_fail(c, MRT_E_SPEC,
                                          "unknown dim '%s' in the shape of "
                                          "tensor '%s' (the dims are: %s)",
                                          mrt_ir_quote(names[i], q, sizeof q),
                                          tensor,
                                          dim_list(s, shape, sizeof shape));
        if (st)
            return st;
        if (mrt_layout_find_dim(l, d) >= 0)
            return yaml ? mrt_ir_fail(c, MRT_E_SPEC,
                                      "dim '%s' appears twice "
                                      "in the shape of tensor '%s'",
                                      names[i], tensor)
                        : mrt_ir_fail(c, MRT_E_SPEC, "dim '%s' appears twice",
                                      names[i]);
        l->dim[l->ndims] = d;
        l->size[l->ndims++] = s->dim_size[d];
    }
    mrt_ir_at(c, arg, &shape_mark);
    if (mrt_spec_too_large(l))
        return yaml
                   ? mrt_ir_fail(c, MRT_E_SPEC,
                                 "tensor '%s' %s is too large: "
                                 "its size in bytes overflows 64 bits",
                                 tensor,
                                 mrt_spec_shape_str(s, l, shape, sizeof shape))
                   : mrt_ir_fail(c, MRT_E_SPEC,
                                 "%s is too large: its size "
                                 "in bytes overflows 64 bits",
                                 mrt_spec_shape_str(s, l, shape, sizeof shape));
    mrt_ir_at(c, arg, NULL);
    return MRT_OK;
}

/* ---- layout rules --------------------------------------------------- */

/* The dim a rule lays out: declared, and in `shape` when given. */
static mrt_status rule_dim(mrt_ir_call *c, const mrt_ir_rule_at *r,
                           const mrt_layout *shape, const char *of, int *d)
{
    const mrt_spec *s = c->ir->s;
    char q[MRT_SPEC_QUOTE_MAX + 8], list[MRT_SPEC_LIST_MAX];
    mrt_ir_at(c, c->arg, &r->dim_mark);
    if (!mrt_ir_yaml(c)) {
        mrt_status st = mrt_ir_dim(c, r->dim, d);
        if (!st && shape && mrt_layout_find_dim(shape, *d) < 0)
            st = mrt_ir_fail(c, MRT_E_SPEC,
                             "dim '%s' is not a dim of the "
                             "tensors it lays out",
                             r->dim);
        return st;
    }
    *d = r->dim ? mrt_spec_find_dim(s, r->dim) : -1;
    if (*d < 0)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "unknown dim '%s' in %s (the dims "
                           "are: %s)",
                           mrt_ir_quote(r->dim, q, sizeof q), of,
                           dim_list(s, list, sizeof list));
    if (shape && mrt_layout_find_dim(shape, *d) < 0)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "%s names dim '%s', which is not "
                           "in its shape %s",
                           of, r->dim,
                           mrt_spec_shape_str(s, shape, list, sizeof list));
    return MRT_OK;
}

/* Axis j of rule r (of dim d) into out. */
static mrt_status rule_axis(mrt_ir_call *c, const mrt_ir_rule_at *r, int j,
                            mrt_rule *out)
{
    const mrt_mesh *m = c->ir->rule_mesh ? c->ir->rule_mesh : &c->ir->s->mesh;
    const char *what = c->ir->rule_mesh   ? c->ir->rule_mesh_what
                       : c->ir->mesh_what ? c->ir->mesh_what
                                          : "the mesh";
    const char *name = r->axes[j];
    char q[MRT_SPEC_QUOTE_MAX + 8], list[MRT_SPEC_LIST_MAX];
    int a = name ? mrt_mesh_find_axis(m, name) : -1;
    mrt_ir_at(c, c->arg, r->axis_mark ? &r->axis_mark[j] : NULL);
    if (a < 0 && mrt_ir_yaml(c))
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "unknown mesh axis '%s' (%s has: "
                           "%s)",
                           mrt_ir_quote(name, q, sizeof q), what,
                           mrt_spec_join(list, sizeof list, m->name[0],
                                         sizeof m->name[0], m->naxes));
    if (a < 0)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "unknown mesh axis '%.60s' in "
                           "the rule of dim '%s'",
                           name ? name : "(null)", r->dim);
    for (int k = 0; k < out->naxes; k++)
        if (out->axes[k] == a)
            return mrt_ir_yaml(c)
                       ? mrt_ir_fail(c, MRT_E_SPEC,
                                     "mesh axis '%s' appears "
                                     "twice in the rule for dim '%s'",
                                     name, r->dim)
                       : mrt_ir_fail(c, MRT_E_SPEC,
                                     "the rule of dim '%s' "
                                     "names mesh axis '%s' twice",
                                     r->dim, name);
    out->axes[out->naxes++] = a; /* < MRT_MAX_AXES: axes are distinct */
    return MRT_OK;
}

/* One rule into rules[dim]; earlier[0..i) are the call's earlier ones. */
static mrt_status one_rule(mrt_ir_call *c, const mrt_ir_rule_at *r,
                           const mrt_layout *shape, const char *of,
                           const int *earlier, int i, mrt_rule rules[], int *d)
{
    mrt_status st = rule_dim(c, r, shape, of, d);
    if (st)
        return st;
    int twice = rules[*d].naxes > 0;
    for (int k = 0; k < i; k++)
        twice |= earlier[k] == *d;
    if (twice)
        return mrt_ir_fail(c, MRT_E_SPEC, "dim '%s' has two rules", r->dim);
    mrt_rule out = {.mark = r->mark};
    for (int j = 0; !st && j < r->naxes; j++)
        st = rule_axis(c, r, j, &out);
    if (!st)
        rules[*d] = out;
    return st;
}

mrt_status mrt_ir_rules(mrt_ir_call *c, int n, const mrt_ir_rule *plain,
                        const mrt_ir_rule_at *at, const mrt_layout *shape,
                        const char *of, mrt_rule rules[])
{
    const char *arg = c->arg;
    int *seen = NULL;
    if (n < 0 || (n > 0 && !plain && !at))
        return mrt_ir_fail(c, MRT_E_USAGE, "expected a list of %d rules", n);
    if (n > 1 && !(seen = calloc((size_t)n, sizeof *seen)))
        return mrt_ir_fail(c, MRT_E_NOMEM, "out of memory");
    mrt_status st = MRT_OK;
    for (int i = 0; !st && i < n; i++) {
        mrt_ir_rule_at r = {0};
        if (at) {
            r = at[i];
        } else { /* the public form: axes up to the first NULL */
            r.dim = plain[i].dim;
            r.axes = plain[i].axes;
            while (r.naxes < MRT_IR_MAX_AXES && plain[i].axes[r.naxes])
                r.naxes++;
        }
        int d = -1;
        st = one_rule(c, &r, shape, of, seen, i, rules, &d);
        if (seen)
            seen[i] = d;
        c->arg = arg;
    }
    c->at = (mrt_mark){0, 0}; /* the next check sets its own */
    free(seen);
    return st;
}
