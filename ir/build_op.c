/*
 * build_op.c — the builder's ops (meshrt.h, "building a program in
 * code"): mrt_ir_add_op, and mrt_ir_add_op_at for the YAML front end's
 * items of `ops:`.
 *
 * An op is checked here (its inputs exist, it has the parameters its
 * kind takes, its result's dims follow from its kind or its shape),
 * gets its home layout, and is expanded into primitive ops by expand.c.
 */
#include <float.h>
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

/* Input j of the op. */
static mrt_status op_input(mrt_ir_call *c, const mrt_ir_op *o,
                           const mrt_ir_op_at *at, mrt_user_op *u, int j)
{
    const mrt_spec *s = c->ir->s;
    char q[MRT_SPEC_QUOTE_MAX + 8], list[MRT_SPEC_LIST_MAX];
    const char *name = o->in[j];
    mrt_ir_at(c, "in", &at->in_mark[j]);
    u->in_mark[j] = at->in_mark[j];
    u->in[j] = name ? mrt_spec_find_tensor(s, name) : -1;
    if (u->in[j] >= 0 || !mrt_ir_yaml(c))
        return u->in[j] >= 0 ? MRT_OK : mrt_ir_tensor_id(c, name, &u->in[j]);
    if (at->later[j])
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "op %d reads tensor '%s' before op "
                           "%d makes it",
                           u->number, name, at->later[j]);
    return mrt_ir_fail(c, MRT_E_SPEC,
                       "unknown tensor '%s' in the inputs of "
                       "op %d (the tensors so far: %s)",
                       mrt_ir_quote(name, q, sizeof q), u->number,
                       mrt_spec_join(list, sizeof list, s->tensor[0].name,
                                     sizeof s->tensor[0], s->ntensors));
}

/* The op's kind, its inputs, and which parameters it has. */
static mrt_status op_kind(mrt_ir_call *c, const mrt_ir_op *o,
                          const mrt_ir_op_at *at, mrt_user_op *u)
{
    c->arg = "kind";
    if ((int)o->kind < 0 || o->kind >= MRT_IR_KIND_COUNT)
        return mrt_ir_fail(c, MRT_E_USAGE, "unknown op kind %d", (int)o->kind);
    u->kind = (mrt_user_kind)o->kind;
    const mrt_user_kind_info *k = &mrt_user_kinds[u->kind];
    mrt_ir_at(c, "in", &at->in_list_mark);
    u->nin = o->in[0] ? (o->in[1] ? 2 : 1) : 0;
    int nin = mrt_ir_yaml(c) ? at->nin : u->nin;
    if (nin < k->min_in || nin > k->max_in) {
        char want[16];
        snprintf(want, sizeof want, k->min_in == k->max_in ? "%d" : "%d or %d",
                 k->min_in, k->max_in);
        return mrt_ir_yaml(c)
                   ? mrt_ir_fail(
                         c, MRT_E_SPEC, "op %d has %d input%s (%s takes %s)",
                         u->number, nin, nin == 1 ? "" : "s", k->name, want)
                   : mrt_ir_fail(c, MRT_E_SPEC, "%s takes %d%s input%s, got %d",
                                 k->name, k->min_in,
                                 k->max_in > k->min_in ? " or 2" : "",
                                 k->max_in > 1 ? "s" : "", nin);
    }
    for (int j = 0; j < u->nin; j++) {
        mrt_status st = op_input(c, o, at, u, j);
        if (st)
            return st;
    }
    const struct {
        const char *arg;
        int given;
        unsigned bits;
    } p[] = {
        {"shape", o->ndims > 0 || at->shape_given, MRT_K_SHAPE},
        {"dim", o->dim != NULL, MRT_K_DIM | MRT_K_FROM},
        {"to", o->to != NULL, MRT_K_TO},
        {"reduce", o->nreduce > 0, MRT_K_DIMS},
        {"causal", o->causal[0] || o->causal[1] || at->causal_given,
         MRT_K_CAUSAL},
        {"p", o->p != 0 || at->p_given || u->kind == MRT_U_DROPOUT, MRT_K_P},
        {"seed", o->seeded != 0, MRT_K_SEED},
    };
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) {
        /* (a file's keys are checked already) */
        mrt_ir_at(c, p[i].arg, NULL);
        if (p[i].given && !(k->keys & p[i].bits))
            return mrt_ir_fail(c, MRT_E_SPEC, "%s takes no %s", k->name,
                               p[i].arg);
        if (!p[i].given && (k->required & p[i].bits))
            return mrt_ir_fail(c, MRT_E_SPEC, "%s needs a %s", k->name,
                               p[i].arg);
    }
    return MRT_OK;
}

/* A dim by name (written at `at`) that must be a dim of tensor t (NULL:
 * any declared dim). */
static mrt_status dim_of(mrt_ir_call *c, const mrt_user_op *u, const char *name,
                         mrt_mark at, const mrt_spec_tensor *t, int *out)
{
    const mrt_spec *s = c->ir->s;
    char shape[MRT_SPEC_LIST_MAX], q[MRT_SPEC_QUOTE_MAX + 8];
    mrt_status st;
    mrt_ir_at(c, c->arg, &at);
    *out = name ? mrt_spec_find_dim(s, name) : -1;
    if (*out < 0 && mrt_ir_yaml(c))
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "unknown dim '%s' in op %d (the "
                           "dims are: %s)",
                           mrt_ir_quote(name, q, sizeof q), u->number,
                           mrt_spec_join(shape, sizeof shape,
                                         s->dim_name ? s->dim_name[0] : "",
                                         sizeof s->dim_name[0], s->ndims));
    if (*out < 0 && (st = mrt_ir_dim(c, name, out)))
        return st;
    if (t && mrt_layout_find_dim(&t->layout, *out) < 0)
        return mrt_ir_fail(
            c, MRT_E_SPEC, "dim '%s' is not a dim of '%s' %s", name, t->name,
            mrt_spec_shape_str(s, &t->layout, shape, sizeof shape));
    return MRT_OK;
}

/* The op's constant (scale: by; layer_norm: eps, 0: 1e-5). */
static mrt_status op_constant(mrt_ir_call *c, const mrt_ir_op *o,
                              const mrt_ir_op_at *at, mrt_user_op *u)
{
    char q[MRT_SPEC_QUOTE_MAX + 8];
    int eps = u->kind == MRT_U_LAYER_NORM;
    mrt_ir_at(c, "c", &at->c_mark);
    u->c = eps && o->c == 0 ? 1e-5 : o->c;
    if (mrt_ir_yaml(c)) /* a finite number, positive for eps: float32? */
        return c->ir->s->dtype != MRT_F32 ||
                       (u->c <= FLT_MAX && u->c >= -FLT_MAX)
                   ? MRT_OK
                   : mrt_ir_fail(c, MRT_E_SPEC,
                                 "'%s' of op %d is out of float32's "
                                 "range: %s (at most %.8g in magnitude; or use "
                                 "dtype: float64)",
                                 eps ? "eps" : "by", u->number,
                                 mrt_ir_quote(at->c_text, q, sizeof q),
                                 (double)FLT_MAX);
    if (!(u->c == u->c) || u->c > 3.4e38 || u->c < -3.4e38 || (eps && u->c < 0))
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "%s is not a valid constant for "
                           "%s",
                           eps ? "eps" : "c", mrt_user_kinds[u->kind].name);
    return MRT_OK;
}

/* What two-input losses need of their inputs. */
static mrt_status op_pair(mrt_ir_call *c, const mrt_ir_op_at *at,
                          mrt_user_op *u)
{
    const mrt_spec *s = c->ir->s;
    const mrt_spec_tensor *a = &s->tensor[u->in[0]], *b = &s->tensor[u->in[1]];
    char sa[MRT_SPEC_LIST_MAX], sb[MRT_SPEC_LIST_MAX];
    mrt_ir_at(c, "in", &at->in_list_mark);
    if (u->kind == MRT_U_MSE && !same_dim_set(&a->layout, &b->layout))
        return mrt_ir_yaml(c)
                   ? mrt_ir_fail(
                         c, MRT_E_SPEC,
                         "mse needs two tensors of the same "
                         "dims ('%s' is %s, '%s' %s)",
                         a->name,
                         mrt_spec_shape_str(s, &a->layout, sa, sizeof sa),
                         b->name,
                         mrt_spec_shape_str(s, &b->layout, sb, sizeof sb))
                   : mrt_ir_fail(c, MRT_E_SPEC,
                                 "mse needs two tensors of the same "
                                 "dims");
    if (u->kind == MRT_U_SOFTMAX_CE) {
        mrt_layout rest = a->layout;
        int i = mrt_layout_find_dim(&rest, u->dim);
        memmove(&rest.dim[i], &rest.dim[i + 1],
                (size_t)(rest.ndims - i - 1) * sizeof rest.dim[0]);
        rest.ndims--;
        u->labels = same_dim_set(&rest, &b->layout);
        if (!u->labels && !same_dim_set(&a->layout, &b->layout))
            return mrt_ir_fail(c, MRT_E_SPEC,
                               "the targets '%s' must have "
                               "the dims of the logits '%s' (one-hot) or "
                               "those without '%s' (integer labels)",
                               b->name, a->name, s->dim_name[u->dim]);
    }
    return MRT_OK;
}

/* An embedding's ids [b...] share no dim with its table [vocab, d...]. */
static mrt_status op_embedding(mrt_ir_call *c, const mrt_ir_op_at *at,
                               const mrt_user_op *u)
{
    const mrt_spec *s = c->ir->s;
    const mrt_spec_tensor *a = &s->tensor[u->in[0]], *b = &s->tensor[u->in[1]];
    char sa[MRT_SPEC_LIST_MAX], sb[MRT_SPEC_LIST_MAX];
    for (int i = 0; i < b->layout.ndims; i++) {
        int d = b->layout.dim[i];
        if (mrt_layout_find_dim(&a->layout, d) < 0)
            continue;
        mrt_ir_at(c, "in", &at->in_mark[1]);
        return mrt_ir_fail(
            c, MRT_E_SPEC,
            "the ids '%s' %s of embedding op %d share dim '%s' with the "
            "table '%s' %s (ids [b...] index the table's '%s': "
            "out is [b..., the table's other dims])",
            b->name, mrt_spec_shape_str(s, &b->layout, sb, sizeof sb),
            u->number, s->dim_name[d], a->name,
            mrt_spec_shape_str(s, &a->layout, sa, sizeof sa),
            s->dim_name[u->dim]);
    }
    return MRT_OK;
}

/* An int32 input is read only as indices: an embedding's ids, the
 * integer labels of softmax_cross_entropy. */
static mrt_status op_int_inputs(mrt_ir_call *c, const mrt_ir_op_at *at,
                                const mrt_user_op *u)
{
    const mrt_spec *s = c->ir->s;
    for (int j = 0; j < u->nin; j++) {
        if (mrt_spec_tensor_dtype(s, u->in[j]) != MRT_I32)
            continue;
        if (j == 1 && (u->kind == MRT_U_EMBEDDING ||
                       (u->kind == MRT_U_SOFTMAX_CE && u->labels)))
            continue;
        mrt_ir_at(c, "in", &at->in_mark[j]);
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "%s reads int32 tensor '%s' (int32 holds "
                           "indices: only an embedding's ids or "
                           "softmax_cross_entropy's labels read it)",
                           mrt_user_kinds[u->kind].name,
                           s->tensor[u->in[j]].name);
    }
    return MRT_OK;
}

/* dim, to, c; and what two-input losses need of their inputs. */
static mrt_status op_params(mrt_ir_call *c, const mrt_ir_op *o,
                            const mrt_ir_op_at *at, mrt_user_op *u)
{
    const mrt_spec *s = c->ir->s;
    const mrt_spec_tensor *a = &s->tensor[u->in[0]];
    mrt_status st = MRT_OK;
    u->dim = u->to_dim = -1;
    c->arg = "dim";
    if (o->dim && (st = dim_of(c, u, o->dim, at->dim_mark, a, &u->dim)))
        return st;
    c->arg = "to";
    if (o->to && (st = dim_of(c, u, o->to, at->to_mark, NULL, &u->to_dim)))
        return st;
    if (o->to && mrt_layout_find_dim(&a->layout, u->to_dim) >= 0)
        return mrt_ir_fail(c, MRT_E_SPEC, "'%s' already has a dim '%s'",
                           a->name, o->to);
    if (o->to && s->dim_size[u->to_dim] != s->dim_size[u->dim])
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "dim '%s' has size %lld, dim '%s' "
                           "%lld (rename keeps the size)",
                           o->to, (long long)s->dim_size[u->to_dim], o->dim,
                           (long long)s->dim_size[u->dim]);
    if ((st = op_constant(c, o, at, u)) ||
        (st = mrt_ir_check_causal_op(c, o, at, u)))
        return st;
    if (u->kind == MRT_U_DROPOUT && (st = mrt_ir_check_dropout(c, o, at, u)))
        return st;
    if (u->nin > 1 && (st = op_pair(c, at, u)))
        return st;
    if (u->kind == MRT_U_SOFTMAX_CE && u->labels &&
        (st = mrt_ir_check_labels(c, u)))
        return st;
    if (u->kind == MRT_U_EMBEDDING && (st = op_embedding(c, at, u)))
        return st;
    return op_int_inputs(c, at, u);
}

/* The dims the kind makes (before `shape`); reduced[i]: dim i of the
 * input goes (reduce_any: some `reduce` list was given). */
static void derived_dims(const mrt_spec *s, int reduce_any,
                         const mrt_user_op *u, const int *reduced,
                         mrt_layout *l)
{
    const mrt_layout *a = &s->tensor[u->in[0]].layout;
    memset(l, 0, sizeof *l);
    switch (u->kind) {
    case MRT_U_REDUCE_SUM:
    case MRT_U_REDUCE_MAX:
    case MRT_U_REDUCE_MEAN:
        for (int i = 0; reduce_any && i < a->ndims; i++)
            if (!reduced[i])
                mrt_spec_layout_add_dim(s, l, a->dim[i]);
        return; /* without `reduce`: every dim, unless shape keeps some */
    case MRT_U_MSE:
    case MRT_U_SOFTMAX_CE: return;
    case MRT_U_EMBEDDING: /* [b..., the table's dims but vocab] */
        for (int i = 0; i < s->tensor[u->in[1]].layout.ndims; i++)
            mrt_spec_layout_add_dim(s, l, s->tensor[u->in[1]].layout.dim[i]);
        for (int i = 0; i < a->ndims; i++)
            if (a->dim[i] != u->dim)
                mrt_spec_layout_add_dim(s, l, a->dim[i]);
        return;
    case MRT_U_RENAME:
        for (int i = 0; i < a->ndims; i++)
            mrt_spec_layout_add_dim(
                s, l, a->dim[i] == u->dim ? u->to_dim : a->dim[i]);
        return;
    default:
        for (int k = 0; k < u->nin; k++)
            for (int i = 0; i < s->tensor[u->in[k]].layout.ndims; i++)
                mrt_spec_layout_add_dim(s, l,
                                        s->tensor[u->in[k]].layout.dim[i]);
    }
}

/* "x: [batch, d]" for input k of u, into buf. */
static const char *input_str(const mrt_spec *s, const mrt_user_op *u, int k,
                             char *buf, size_t size)
{
    char shape[MRT_SPEC_LIST_MAX];
    const mrt_spec_tensor *in = &s->tensor[u->in[k]];
    snprintf(buf, size, "%s: %s", in->name,
             mrt_spec_shape_str(s, &in->layout, shape, sizeof shape));
    return buf;
}

/* Every dim of the shape comes from an input (an einsum's dims, or the
 * dims a reduction keeps). */
static mrt_status dims_from_inputs(mrt_ir_call *c, const mrt_ir_op_at *at,
                                   const mrt_user_op *u)
{
    const mrt_spec *s = c->ir->s;
    const mrt_spec_tensor *t = &u->out;
    char a[MRT_NAME_MAX + MRT_SPEC_LIST_MAX],
        b[MRT_NAME_MAX + MRT_SPEC_LIST_MAX];
    for (int i = 0; i < t->layout.ndims; i++) {
        int found = 0, d = t->layout.dim[i];
        for (int k = 0; k < u->nin; k++)
            found |= mrt_layout_find_dim(&s->tensor[u->in[k]].layout, d) >= 0;
        if (found)
            continue;
        mrt_ir_at(c, "shape",
                  at->shape_dim_mark ? &at->shape_dim_mark[i] : NULL);
        if (!mrt_ir_yaml(c))
            return mrt_ir_fail(c, MRT_E_SPEC,
                               "dim '%s' of '%s' is in no "
                               "input",
                               s->dim_name[d], t->name);
        if (u->kind != MRT_U_EINSUM) /* a reduction: one input */
            return mrt_ir_fail(
                c, MRT_E_SPEC,
                "dim '%s' of '%s' is not in "
                "its input '%s' %s",
                s->dim_name[d], t->name, s->tensor[u->in[0]].name,
                strchr(input_str(s, u, 0, a, sizeof a), ' ') + 1);
        return mrt_ir_fail(
            c, MRT_E_SPEC, "dim '%s' of '%s' is %s (%s%s%s)", s->dim_name[d],
            t->name, u->nin == 2 ? "in neither input" : "not in its input",
            input_str(s, u, 0, a, sizeof a), u->nin == 2 ? ", " : "",
            u->nin == 2 ? input_str(s, u, 1, b, sizeof b) : "");
    }
    return MRT_OK;
}

/* The result's dims from the kind (no shape given). */
static mrt_status derived_result(mrt_ir_call *c, const mrt_ir_op_at *at,
                                 mrt_user_op *u, const mrt_layout *derived)
{
    mrt_spec_tensor *t = &u->out;
    char shape[MRT_SPEC_LIST_MAX];
    t->layout = *derived;
    t->shape_mark = t->mark;
    if (!mrt_spec_too_large(&t->layout))
        return MRT_OK;
    mrt_ir_at(c, "shape", &at->mark);
    if (!mrt_ir_yaml(c))
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "the result is too large: its size "
                           "in bytes overflows 64 bits");
    return mrt_ir_fail(
        c, MRT_E_SPEC,
        "tensor '%s' %s made by op %d (%s) is "
        "too large: its size in bytes overflows 64 bits",
        t->name, mrt_spec_shape_str(c->ir->s, &t->layout, shape, sizeof shape),
        u->number, mrt_user_kinds[u->kind].name);
}

/* The reduced dims (reduce list) of input a into reduced[]. */
static mrt_status op_reduced(mrt_ir_call *c, const mrt_ir_op *o,
                             const mrt_ir_op_at *at, const mrt_user_op *u,
                             int reduced[])
{
    const mrt_spec_tensor *a = &c->ir->s->tensor[u->in[0]];
    c->arg = "reduce";
    if (o->nreduce < 0 || (o->nreduce > MRT_MAX_DIMS && !mrt_ir_yaml(c)) ||
        (o->nreduce > 0 && !o->reduce)) /* (a file may name a dim twice) */
        return mrt_ir_fail(c, MRT_E_USAGE, "expected a list of dims");
    for (int j = 0; j < o->nreduce; j++) {
        int d;
        mrt_status st = dim_of(
            c, u, o->reduce[j],
            at->reduce_mark ? at->reduce_mark[j] : (mrt_mark){0, 0}, a, &d);
        if (st)
            return st;
        int k = mrt_layout_find_dim(&a->layout, d);
        if (reduced[k]) {
            mrt_mark m = at->reduce_mark ? at->reduce_mark[j]
                                         : (mrt_mark){0, 0};
            mrt_ir_at(c, "reduce", &m);
            return mrt_ir_fail(c, MRT_E_SPEC, "dim '%s' is reduced twice",
                               o->reduce[j]);
        }
        reduced[k] = 1;
    }
    return MRT_OK;
}

/* The result: its name and dims. */
static mrt_status op_result(mrt_ir_call *c, const mrt_ir_op *o,
                            const mrt_ir_op_at *at, mrt_user_op *u)
{
    const mrt_spec *s = c->ir->s;
    mrt_spec_tensor *t = &u->out;
    int reduced[MRT_MAX_DIMS] = {0}, yaml = mrt_ir_yaml(c);
    char shape[MRT_SPEC_LIST_MAX], made[MRT_SPEC_LIST_MAX];
    mrt_layout derived;
    mrt_status st;
    mrt_ir_at(c, "out", &at->out_mark);
    int old = o->out ? mrt_spec_find_tensor(s, o->out) : -1;
    if (yaml && old >= 0)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "tensor '%s' already exists "
                           "(defined at %d:%d)",
                           o->out, s->tensor[old].mark.line,
                           s->tensor[old].mark.column);
    if ((st = mrt_ir_new_tensor(c, o->out, "already exists", t)))
        return st;
    t->mark = at->out_mark;
    t->producer = s->nops;
    t->init = MRT_INIT_NONE;
    if ((st = op_reduced(c, o, at, u, reduced)))
        return st;
    derived_dims(s, o->nreduce > 0 || at->reduce_given, u, reduced, &derived);
    mrt_ir_at(c, "shape", &at->mark);
    if (derived.ndims > MRT_MAX_DIMS && !(yaml && u->kind == MRT_U_EINSUM))
        return yaml ? mrt_ir_fail(c, MRT_E_SPEC,
                                  "op %d makes a tensor of more "
                                  "than %d dims",
                                  u->number, MRT_MAX_DIMS)
                    : mrt_ir_fail(c, MRT_E_SPEC,
                                  "the result has more than %d "
                                  "dims",
                                  MRT_MAX_DIMS);
    if (!o->ndims && !at->shape_given)
        return derived_result(c, at, u, &derived);
    mrt_ir_at(c, "shape", &at->shape_mark);
    if (!o->ndims) /* a file's `shape: []` */
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "the shape of tensor '%s' is empty "
                           "(scalars are not supported)",
                           t->name);
    if ((st = mrt_ir_shape(c, t->name, o->ndims, o->shape, at->shape_dim_mark,
                           at->shape_mark, &t->layout)))
        return st;
    t->shape_mark = at->shape_mark;
    int reduction = u->kind == MRT_U_REDUCE_SUM ||
                    u->kind == MRT_U_REDUCE_MAX || u->kind == MRT_U_REDUCE_MEAN;
    int keeps = reduction && !o->nreduce && !at->reduce_given;
    if (u->kind == MRT_U_EINSUM || keeps || same_dim_set(&t->layout, &derived))
        return u->kind == MRT_U_EINSUM || keeps ? dims_from_inputs(c, at, u)
                                                : MRT_OK;
    mrt_ir_at(c, "shape", &at->shape_mark);
    if (!yaml)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "%s makes other dims than the "
                           "shape names",
                           mrt_user_kinds[u->kind].name);
    return mrt_ir_fail(c, MRT_E_SPEC, "the shape of '%s' is %s but %s makes %s",
                       t->name,
                       mrt_spec_shape_str(s, &t->layout, shape, sizeof shape),
                       mrt_user_kinds[u->kind].name,
                       mrt_spec_shape_str(s, &derived, made, sizeof made));
}

/* The result's home layout and the rules of the tensors made inside:
 * an einsum's own layout is its result's (inside: the global rules);
 * another op's covers its inputs' dims too, and what it makes inside. */
static mrt_status op_layout(mrt_ir_call *c, const mrt_ir_op *o,
                            const mrt_ir_op_at *at, mrt_user_op *u)
{
    mrt_spec *s = c->ir->s;
    const mrt_spec_resolver r = {s, &s->mesh, NULL, &c->e};
    int einsum = u->kind == MRT_U_EINSUM;
    char of[MRT_NAME_MAX + 32];
    u->rules = s->rule;
    u->own = 0;
    mrt_ir_at(c, "layout", NULL);
    if (!o->nlayout && !at->has_layout && !at->given)
        return mrt_spec_apply_rules(&r, &u->out, s->rule, 0);
    mrt_layout all = u->out.layout;
    for (int k = 0; !einsum && k < u->nin; k++)
        for (int i = 0; i < s->tensor[u->in[k]].layout.ndims; i++)
            mrt_spec_layout_add_dim(s, &all, s->tensor[u->in[k]].layout.dim[i]);
    if (!(u->own_rules = calloc((size_t)s->ndims + 1, sizeof *u->own_rules)))
        return mrt_ir_fail(c, MRT_E_NOMEM, "out of memory");
    mrt_status st = MRT_OK;
    if (einsum)
        snprintf(of, sizeof of, "the layout of tensor '%s'", u->out.name);
    else
        snprintf(of, sizeof of, "the layout of op %d", u->number);
    if (at->given) /* mrt_spec_load_layouts: in place of its layout */
        memcpy(u->own_rules, at->given, (size_t)s->ndims * sizeof *at->given);
    else if (at->has_layout)
        st = mrt_ir_rules(c, at->nlayout, NULL, at->layout,
                          einsum ? &u->out.layout : &all, of, u->own_rules);
    else
        st = mrt_ir_rules(c, o->nlayout, o->layout, NULL, &all, "'layout'",
                          u->own_rules);
    if (st)
        return st;
    if (!einsum) { /* einsums keep the global rules inside */
        u->rules = u->own_rules;
        u->own = 1;
    }
    u->out.own_layout = 1;
    return mrt_spec_apply_rules(&r, &u->out, u->own_rules, 1);
}

mrt_status mrt_ir_add_op_at(mrt_ir *ir, const mrt_ir_op *o,
                            const mrt_ir_op_at *at, mrt_error *err)
{
    static const mrt_ir_op_at none;
    mrt_ir_call c;
    mrt_user_op u;
    int renamed = mrt_ir_block_op(ir, o, at, err); /* in a block */
    if (renamed >= 0)
        return (mrt_status)renamed;
    memset(&u, 0, sizeof u);
    mrt_status st = mrt_ir_begin_untrained(&c, ir, "mrt_ir_add_op", "op", o,
                                           "ops come before "
                                           "mrt_ir_set_train");
    if (st)
        return mrt_ir_end(&c, st, err);
    if (!at)
        at = &none;
    c.entry = at->mark;
    u.s = ir->s;
    u.err = &c.e;
    u.mark = at->mark;
    u.number = ir->s->nuser_ops + 1;
    if (!(st = op_kind(&c, o, at, &u)) && !(st = op_params(&c, o, at, &u)) &&
        !(st = op_result(&c, o, at, &u)) && !(st = op_layout(&c, o, at, &u))) {
        c.arg = "expect";
        st = mrt_ir_budget_check(&c, at == &none ? o->expect : &at->expect,
                                 at->expect_mark, &u.expect);
        mrt_ir_at(&c, NULL, NULL);
        if (!st)
            st = mrt_ir_expand(&u);
    }
    free(u.own_rules);
    if (!st)
        ir->s->nuser_ops++;
    return mrt_ir_end(&c, st, err);
}

mrt_status mrt_ir_add_op(mrt_ir *ir, const mrt_ir_op *o, mrt_error *err)
{
    return mrt_ir_add_op_at(ir, o, NULL, err);
}
