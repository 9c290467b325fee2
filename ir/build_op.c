/*
 * build_op.c — the builder's ops (meshrt.h, "building a program in
 * code"): mrt_ir_add_op, and mrt_ir_add_op_at for the YAML front end's
 * items of `ops:`.
 *
 * An op is checked here (its inputs exist, it has the parameters its
 * kind takes, its result's dims follow from its kind or its shape),
 * gets its home layout, and is expanded into primitive ops by expand.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"

static int same_dim_set(const mrt_layout *l, const mrt_layout *m)
{
    if (l->ndims != m->ndims)
        return 0;
    for (int i = 0; i < l->ndims; i++)
        if (mrt_layout_find_dim(m, l->dim[i]) < 0)
            return 0;
    return 1;
}

/* The op's kind, its inputs, and which parameters it has. */
static mrt_status op_kind(mrt_ir_call *c, const mrt_ir_op *o, mrt_user_op *u)
{
    c->arg = "kind";
    if ((int)o->kind < 0 || o->kind >= MRT_IR_KIND_COUNT)
        return mrt_ir_fail(c, MRT_E_USAGE, "unknown op kind %d",
                           (int)o->kind);
    u->kind = (mrt_user_kind)o->kind;
    const mrt_user_kind_info *k = &mrt_user_kinds[u->kind];
    c->arg = "in";
    u->nin = o->in[0] ? (o->in[1] ? 2 : 1) : 0;
    if (u->nin < k->min_in || u->nin > k->max_in)
        return mrt_ir_fail(c, MRT_E_SPEC, "%s takes %d%s input%s, got %d",
                           k->name, k->min_in, k->max_in > k->min_in
                                                   ? " or 2" : "",
                           k->max_in > 1 ? "s" : "", u->nin);
    for (int j = 0; j < u->nin; j++) {
        mrt_status st = mrt_ir_tensor_id(c, o->in[j], &u->in[j]);
        if (st)
            return st;
    }
    const struct { const char *arg; int given; unsigned bits; } p[] = {
        {"shape", o->ndims > 0, MRT_K_SHAPE},
        {"dim", o->dim != NULL, MRT_K_DIM | MRT_K_FROM},
        {"to", o->to != NULL, MRT_K_TO},
        {"reduce", o->nreduce > 0, MRT_K_DIMS},
    };
    for (int i = 0; i < 4; i++) {
        c->arg = p[i].arg;
        if (p[i].given && !(k->keys & p[i].bits))
            return mrt_ir_fail(c, MRT_E_SPEC, "%s takes no %s", k->name,
                               p[i].arg);
        if (!p[i].given && (k->required & p[i].bits))
            return mrt_ir_fail(c, MRT_E_SPEC, "%s needs a %s", k->name,
                               p[i].arg);
    }
    return MRT_OK;
}

/* A dim by name that must be a dim of tensor t. */
static mrt_status dim_of(mrt_ir_call *c, const char *name,
                         const mrt_spec_tensor *t, int *out)
{
    char shape[MRT_SPEC_LIST_MAX];
    mrt_status st = mrt_ir_dim(c, name, out);
    if (!st && mrt_layout_find_dim(&t->layout, *out) < 0)
        st = mrt_ir_fail(c, MRT_E_SPEC, "dim '%s' is not a dim of '%s' %s",
                         name, t->name,
                         mrt_spec_shape_str(c->ir->s, &t->layout, shape,
                                            sizeof shape));
    return st;
}

/* dim, to, c; and what two-input losses need of their inputs. */
static mrt_status op_params(mrt_ir_call *c, const mrt_ir_op *o,
                            mrt_user_op *u)
{
    const mrt_spec *s = c->ir->s;
    const mrt_spec_tensor *a = &s->tensor[u->in[0]];
    mrt_status st = MRT_OK;
    u->dim = u->to_dim = -1;
    c->arg = "dim";
    if (o->dim && (st = dim_of(c, o->dim, a, &u->dim)))
        return st;
    c->arg = "to";
    if (o->to && (st = mrt_ir_dim(c, o->to, &u->to_dim)))
        return st;
    if (o->to && mrt_layout_find_dim(&a->layout, u->to_dim) >= 0)
        return mrt_ir_fail(c, MRT_E_SPEC, "'%s' already has a dim '%s'",
                           a->name, o->to);
    if (o->to && s->dim_size[u->to_dim] != s->dim_size[u->dim])
        return mrt_ir_fail(c, MRT_E_SPEC, "dim '%s' has size %lld, dim '%s' "
                           "%lld (rename keeps the size)", o->to,
                           (long long)s->dim_size[u->to_dim], o->dim,
                           (long long)s->dim_size[u->dim]);
    c->arg = "c";
    u->c = o->c;
    if (u->kind == MRT_U_LAYER_NORM && o->c == 0)
        u->c = 1e-5;
    if (!(u->c == u->c) || u->c > 3.4e38 || u->c < -3.4e38 ||
        (u->kind == MRT_U_LAYER_NORM && u->c < 0))
        return mrt_ir_fail(c, MRT_E_SPEC, "%s is not a valid constant for "
                           "%s", u->kind == MRT_U_LAYER_NORM ? "eps" : "c",
                           mrt_user_kinds[u->kind].name);
    if (u->nin < 2)
        return MRT_OK;
    const mrt_spec_tensor *b = &s->tensor[u->in[1]];
    c->arg = "in";
    if (u->kind == MRT_U_MSE && !same_dim_set(&a->layout, &b->layout))
        return mrt_ir_fail(c, MRT_E_SPEC, "mse needs two tensors of the "
                           "same dims");
    if (u->kind == MRT_U_SOFTMAX_CE) {
        mrt_layout rest = a->layout;
        int i = mrt_layout_find_dim(&rest, u->dim);
        memmove(&rest.dim[i], &rest.dim[i + 1],
                (size_t)(rest.ndims - i - 1) * sizeof rest.dim[0]);
        rest.ndims--;
        u->labels = same_dim_set(&rest, &b->layout);
        if (!u->labels && !same_dim_set(&a->layout, &b->layout))
            return mrt_ir_fail(c, MRT_E_SPEC, "the targets '%s' must have "
                               "the dims of the logits '%s' (one-hot) or "
                               "those without '%s' (integer labels)",
                               b->name, a->name, o->dim);
    }
    return MRT_OK;
}

/* The dims the kind makes (before `shape`). */
static void derived_dims(const mrt_spec *s, const mrt_ir_op *o,
                         const mrt_user_op *u, const int *reduced,
                         mrt_layout *l)
{
    const mrt_layout *a = &s->tensor[u->in[0]].layout;
    memset(l, 0, sizeof *l);
    switch (u->kind) {
    case MRT_U_REDUCE_SUM:
    case MRT_U_REDUCE_MAX:
    case MRT_U_REDUCE_MEAN:
        for (int i = 0; o->nreduce > 0 && i < a->ndims; i++)
            if (!reduced[i])
                mrt_spec_layout_add_dim(s, l, a->dim[i]);
        return; /* without `reduce`: every dim, unless shape keeps some */
    case MRT_U_MSE:
    case MRT_U_SOFTMAX_CE:
        return;
    case MRT_U_RENAME:
        for (int i = 0; i < a->ndims; i++)
            mrt_spec_layout_add_dim(s, l,
                                    a->dim[i] == u->dim ? u->to_dim
                                                        : a->dim[i]);
        return;
    default:
        for (int k = 0; k < u->nin; k++)
            for (int i = 0; i < s->tensor[u->in[k]].layout.ndims; i++)
                mrt_spec_layout_add_dim(s, l,
                                        s->tensor[u->in[k]].layout.dim[i]);
    }
}

/* The result: its name and dims. */
static mrt_status op_result(mrt_ir_call *c, const mrt_ir_op *o,
                            mrt_user_op *u)
{
    const mrt_spec *s = c->ir->s;
    const mrt_spec_tensor *a = &s->tensor[u->in[0]];
    mrt_spec_tensor *t = &u->out;
    int reduced[MRT_MAX_DIMS] = {0};
    mrt_layout derived;
    mrt_status st;
    c->arg = "reduce";
    if (o->nreduce < 0 || o->nreduce > MRT_MAX_DIMS ||
        (o->nreduce > 0 && !o->reduce))
        return mrt_ir_fail(c, MRT_E_USAGE, "expected a list of dims");
    for (int j = 0; j < o->nreduce; j++) {
        int d;
        if ((st = dim_of(c, o->reduce[j], a, &d)))
            return st;
        reduced[mrt_layout_find_dim(&a->layout, d)] = 1;
    }
    c->arg = "out";
    if ((st = mrt_ir_new_tensor(c, o->out, "already exists", t)))
        return st;
    t->producer = s->nops;
    t->init = MRT_INIT_NONE;
    derived_dims(s, o, u, reduced, &derived);
    c->arg = "shape";
    if (derived.ndims > MRT_MAX_DIMS)
        return mrt_ir_fail(c, MRT_E_SPEC, "the result has more than %d dims",
                           MRT_MAX_DIMS);
    if (!o->ndims) {
        t->layout = derived;
        return mrt_spec_too_large(&t->layout)
                   ? mrt_ir_fail(c, MRT_E_SPEC, "the result is too large: "
                                 "its size in bytes overflows 64 bits")
                   : MRT_OK;
    }
    if ((st = mrt_ir_shape(c, o->out, o->ndims, o->shape, NULL,
                           (mrt_mark){0, 0}, &t->layout)))
        return st;
    int reduction = u->kind == MRT_U_REDUCE_SUM ||
                    u->kind == MRT_U_REDUCE_MAX ||
                    u->kind == MRT_U_REDUCE_MEAN;
    if (u->kind != MRT_U_EINSUM && !(reduction && !o->nreduce)) {
        if (!same_dim_set(&t->layout, &derived))
            return mrt_ir_fail(c, MRT_E_SPEC, "%s makes other dims than the "
                               "shape names", mrt_user_kinds[u->kind].name);
        return MRT_OK;
    }
    /* an einsum's dims, or the dims a reduction keeps: from its inputs */
    for (int i = 0; i < t->layout.ndims; i++) {
        int found = 0;
        for (int k = 0; k < u->nin; k++)
            found |= mrt_layout_find_dim(&s->tensor[u->in[k]].layout,
                                         t->layout.dim[i]) >= 0;
        if (!found)
            return mrt_ir_fail(c, MRT_E_SPEC, "dim '%s' of '%s' is in no "
                               "input", s->dim_name[t->layout.dim[i]],
                               t->name);
    }
    return MRT_OK;
}

/* The result's home layout and the rules of the tensors made inside. */
static mrt_status op_layout(mrt_ir_call *c, const mrt_ir_op *o,
                            mrt_user_op *u)
{
    mrt_spec *s = c->ir->s;
    const mrt_spec_resolver r = {s, &s->mesh, NULL, &c->e};
    u->rules = s->rule;
    u->own = 0;
    c->arg = "layout";
    if (!o->nlayout)
        return mrt_spec_apply_rules(&r, &u->out, s->rule, 0);
    mrt_layout all = u->out.layout;
    if (u->kind != MRT_U_EINSUM)
        for (int k = 0; k < u->nin; k++)
            for (int i = 0; i < s->tensor[u->in[k]].layout.ndims; i++)
                mrt_spec_layout_add_dim(s, &all,
                                        s->tensor[u->in[k]].layout.dim[i]);
    if (!(u->own_rules = calloc((size_t)s->ndims + 1, sizeof *u->own_rules)))
        return mrt_ir_fail(c, MRT_E_NOMEM, "out of memory");
    mrt_status st = mrt_ir_rules(c, o->nlayout, o->layout, NULL, &all,
                                 "'layout'", u->own_rules);
    if (st)
        return st;
    if (u->kind != MRT_U_EINSUM) { /* einsums keep the global rules inside */
        u->rules = u->own_rules;
        u->own = 1;
    }
    u->out.own_layout = 1;
    return mrt_spec_apply_rules(&r, &u->out, u->own_rules, 1);
}

mrt_status mrt_ir_add_op(mrt_ir *ir, const mrt_ir_op *o, mrt_error *err)
{
    mrt_ir_call c;
    mrt_user_op u;
    memset(&u, 0, sizeof u);
    mrt_status st = mrt_ir_begin_untrained(&c, ir, "mrt_ir_add_op", "op", o,
                                    "ops come before mrt_ir_set_train");
    if (st)
        return mrt_ir_end(&c, st, err);
    u.s = ir->s;
    u.err = &c.e;
    u.number = ir->s->nuser_ops + 1;
    u.expect = (mrt_budget){-1, -1, {0, 0}};
    if (!(st = op_kind(&c, o, &u)) && !(st = op_params(&c, o, &u)) &&
        !(st = op_result(&c, o, &u)) && !(st = op_layout(&c, o, &u))) {
        c.arg = NULL;
        st = mrt_ir_expand(&u);
    }
    free(u.own_rules);
    if (!st)
        ir->s->nuser_ops++;
    return mrt_ir_end(&c, st, err);
}

