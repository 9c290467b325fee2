/*
 * spec_ops.c — the `ops:` and `outputs:` sections.
 *
 * Ops run in file order; each reads one or two tensors that already
 * exist (inputs, or outputs of earlier ops) and makes a new named tensor,
 * numbered after the inputs in op order.  An einsum's output dims are
 * named in its `shape:`; each must come from an input (dims of the inputs
 * that the output leaves out are summed over).  Ops are numbered from 1
 * in messages, as a user counts them.  An op may carry its own budget
 * (`expect:`, parsed by spec_planning.c).  `outputs:` defaults to the
 * last op's output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec_parse.h"

/* The number (from 1) of the first op after op `after` whose `out:` is
 * name, or 0. */
static int later_maker(const mrt_spec_parser *p, const yaml_node_t *seq,
                       int after, const char *name)
{
    int count = mrt_spec_count(seq);
    for (int i = after + 1; i < count; i++) {
        const yaml_node_t *n = mrt_spec_item(p, seq, i);
        const char *out = n && n->type == YAML_MAPPING_NODE
                              ? mrt_spec_str(mrt_spec_get(p, n, "out")) : NULL;
        if (out && !strcmp(out, name))
            return i + 1;
    }
    return 0;
}

/* Input j (node a) of op u. */
static mrt_status op_input(mrt_user_op *u, const yaml_node_t *seq,
                           const yaml_node_t *a, int j)
{
    mrt_spec_parser *p = u->p;
    mrt_spec *s = p->spec;
    char q[MRT_SPEC_QUOTE_MAX + 32], list[MRT_SPEC_LIST_MAX];
    const char *name = mrt_spec_str(a);
    int i = u->number - 1;
    if (!name || mrt_spec_is_null(a))
        return mrt_spec_fail(p, a, "expected a tensor name in the inputs of "
                             "op %d, got %s", i + 1,
                             mrt_spec_what(a, q, sizeof q));
    int id = mrt_spec_find_tensor(s, name);
    int later = id < 0 ? later_maker(p, seq, i, name) : 0;
    if (later)
        return mrt_spec_fail(p, a, "op %d reads tensor '%s' before op %d "
                             "makes it", i + 1, name, later);
    if (id < 0)
        return mrt_spec_fail(p, a, "unknown tensor '%s' in the inputs of op "
                             "%d (the tensors so far: %s)",
                             mrt_spec_quote(a, q, sizeof q), i + 1,
                             mrt_spec_join(list, sizeof list, s->tensor[0].name,
                                           sizeof s->tensor[0], s->ntensors));
    u->in[j] = id;
    u->in_mark[j] = mrt_spec_mark(a);
    return MRT_OK;
}

/* The output tensor of op i, named by n, into t. */
static mrt_status op_output(mrt_spec_parser *p, int i, const yaml_node_t *n,
                            mrt_spec_tensor *t)
{
    const mrt_spec *s = p->spec;
    mrt_status st = mrt_spec_name(p, n, "tensor", t->name);
    if (st)
        return st;
    int old = mrt_spec_find_tensor(s, t->name);
    if (old >= 0)
        return mrt_spec_fail(p, n, "tensor '%s' already exists (defined at "
                             "%d:%d)", t->name, s->tensor[old].mark.line,
                             s->tensor[old].mark.column);
    t->mark = mrt_spec_mark(n);
    t->producer = i;
    t->init = MRT_INIT_NONE;
    return MRT_OK;
}

/* Every dim of einsum u's output t (shape node sh) comes from an input. */
static mrt_status check_dims_known(mrt_user_op *u, const mrt_spec_tensor *t,
                                   const yaml_node_t *sh)
{
    const mrt_spec *s = u->p->spec;
    char ins[2][MRT_NAME_MAX + MRT_SPEC_LIST_MAX];
    for (int d = 0; d < t->layout.ndims; d++) {
        int found = 0;
        for (int j = 0; j < u->nin; j++)
            found |= mrt_layout_find_dim(&s->tensor[u->in[j]].layout,
                                         t->layout.dim[d]) >= 0;
        if (found)
            continue;
        for (int j = 0; j < u->nin; j++) {
            const mrt_spec_tensor *in = &s->tensor[u->in[j]];
            char shape[MRT_SPEC_LIST_MAX];
            snprintf(ins[j], sizeof ins[j], "%s: %s", in->name,
                     mrt_spec_shape_str(s, &in->layout, shape, sizeof shape));
        }
        return mrt_spec_fail(u->p, mrt_spec_item(u->p, sh, d),
                             "dim '%s' of '%s' is %s (%s%s%s)",
                             s->dim_name[t->layout.dim[d]], t->name,
                             u->nin == 2 ? "in neither input"
                                         : "not in its input",
                             ins[0], u->nin == 2 ? ", " : "",
                             u->nin == 2 ? ins[1] : "");
    }
    return MRT_OK;
}

static const char *const key_names[] = {"shape", "dim", "dims", "by",
                                        "from", "to", "eps"};
static const char *const op_keys[] = {"op",  "in",   "out", "shape", "layout",
                                      "expect", "dim", "dims", "by",   "from",
                                      "to",  "eps",  NULL};

static mrt_status op_inputs(mrt_user_op *u, const yaml_node_t *seq,
                            const yaml_node_t *n)
{
    mrt_spec_parser *p = u->p;
    char of[64];
    snprintf(of, sizeof of, "the inputs of op %d", u->number);
    mrt_status st = mrt_spec_expect(p, n, YAML_SEQUENCE_NODE, of);
    if (st)
        return st;
    int count = mrt_spec_count(n), lo = mrt_user_kinds[u->kind].min_in,
        hi = mrt_user_kinds[u->kind].max_in;
    if (count < lo || count > hi) {
        char want[16];
        snprintf(want, sizeof want, lo == hi ? "%d" : "%d or %d", lo, hi);
        return mrt_spec_fail(p, n, "op %d has %d input%s (%s takes %s)",
                             u->number, count, count == 1 ? "" : "s",
                             mrt_user_kinds[u->kind].name, want);
    }
    u->nin = count;
    for (int j = 0; !st && j < count; j++)
        st = op_input(u, seq, mrt_spec_item(p, n, j), j);
    return st;
}

/* The keys and kind of op u (mapping n). */
static mrt_status op_kind(mrt_user_op *u, const yaml_node_t *n)
{
    mrt_spec_parser *p = u->p;
    char of[32], q[MRT_SPEC_QUOTE_MAX + 32], list[400];
    snprintf(of, sizeof of, "op %d", u->number);
    mrt_status st = mrt_spec_expect(p, n, YAML_MAPPING_NODE, of);
    if (!st)
        st = mrt_spec_check_keys(p, n, op_keys, of);
    const char *required[] = {"op", "in", "out"};
    for (int k = 0; !st && k < 3; k++)
        if (!mrt_spec_get(p, n, required[k]))
            st = mrt_spec_fail(p, n, "op %d has no '%s' (an op needs: op, "
                               "in, out)", u->number, required[k]);
    if (st)
        return st;
    const yaml_node_t *kind = mrt_spec_get(p, n, "op");
    const char *name = mrt_spec_str(kind);
    for (int k = 0; name && k < MRT_U_KIND_COUNT; k++)
        if (!strcmp(name, mrt_user_kinds[k].name)) {
            u->kind = (mrt_user_kind)k;
            return MRT_OK;
        }
    size_t len = 0;
    list[0] = 0;
    for (int k = 0; k < MRT_U_KIND_COUNT; k++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s",
                                k ? ", " : "", mrt_user_kinds[k].name);
    return mrt_spec_fail(p, kind, "unknown op %s (known ops: %s)",
                         mrt_spec_what(kind, q, sizeof q), list);
}

/* Each key the kind takes is there if it must be, absent if it may not. */
static mrt_status op_keys_fit(mrt_user_op *u, const yaml_node_t *n)
{
    for (int k = 0; k < 7; k++) {
        unsigned bit = 1u << k;
        const yaml_node_t *v = mrt_spec_get(u->p, n, key_names[k]);
        if (v && !(mrt_user_kinds[u->kind].keys & bit))
            return mrt_spec_fail(u->p, v, "op %d (%s) takes no '%s'",
                                 u->number, mrt_user_kinds[u->kind].name,
                                 key_names[k]);
        if (!v && (mrt_user_kinds[u->kind].required & bit))
            return mrt_spec_fail(u->p, n, "op %d (%s) needs '%s'", u->number,
                                 mrt_user_kinds[u->kind].name, key_names[k]);
    }
    return MRT_OK;
}

/* A dim name (node n) that must be a dim of tensor t, or (t NULL) any
 * declared dim. */
static mrt_status dim_ref(mrt_user_op *u, const yaml_node_t *n,
                          const mrt_spec_tensor *t, int *out)
{
    const mrt_spec *s = u->p->spec;
    char q[MRT_SPEC_QUOTE_MAX + 32], list[MRT_SPEC_LIST_MAX];
    const char *name = mrt_spec_str(n);
    int id = name && !mrt_spec_is_null(n) ? mrt_spec_find_dim(s, name) : -1;
    if (!name || mrt_spec_is_null(n))
        return mrt_spec_fail(u->p, n, "expected a dim name in op %d, got %s",
                             u->number, mrt_spec_what(n, q, sizeof q));
    if (id < 0)
        return mrt_spec_fail(u->p, n, "unknown dim '%s' in op %d (the dims "
                             "are: %s)", mrt_spec_quote(n, q, sizeof q),
                             u->number,
                             mrt_spec_join(list, sizeof list, s->dim_name[0],
                                           sizeof s->dim_name[0], s->ndims));
    if (t && mrt_layout_find_dim(&t->layout, id) < 0)
        return mrt_spec_fail(u->p, n, "dim '%s' is not a dim of '%s' %s",
                             name, t->name,
                             mrt_spec_shape_str(s, &t->layout, list,
                                                sizeof list));
    *out = id;
    return MRT_OK;
}

/* The reduced dims of a reduce op: `dims:` (a name or a list), else
 * every dim (a scalar result) unless `shape:` names what is left. */
static mrt_status reduced_dims(mrt_user_op *u, const yaml_node_t *n,
                               const mrt_spec_tensor *in, mrt_layout *out)
{
    const yaml_node_t *dims = mrt_spec_get(u->p, n, "dims");
    unsigned char gone[MRT_MAX_DIMS] = {0};
    mrt_status st = MRT_OK;
    if (!dims) {
        memset(gone, 1, sizeof gone);
    } else if (dims->type == YAML_SEQUENCE_NODE) {
        for (int j = 0; !st && j < mrt_spec_count(dims); j++) {
            int d;
            st = dim_ref(u, mrt_spec_item(u->p, dims, j), in, &d);
            if (!st)
                gone[mrt_layout_find_dim(&in->layout, d)] = 1;
        }
    } else {
        int d;
        st = dim_ref(u, dims, in, &d);
        if (!st)
            gone[mrt_layout_find_dim(&in->layout, d)] = 1;
    }
    out->ndims = 0;
    for (int i = 0; i < in->layout.ndims; i++)
        if (!gone[i])
            mrt_spec_layout_add_dim(u->p->spec, out, in->layout.dim[i]);
    return st;
}

/* The dims of op u's result as its kind makes them (before `shape:`). */
static mrt_status derived_dims(mrt_user_op *u, const yaml_node_t *n,
                               mrt_layout *l)
{
    const mrt_spec *s = u->p->spec;
    const mrt_spec_tensor *a = &s->tensor[u->in[0]];
    const mrt_spec_tensor *b = u->nin > 1 ? &s->tensor[u->in[1]] : NULL;
    mrt_status st = MRT_OK;
    memset(l, 0, sizeof *l);
    switch (u->kind) {
    case MRT_U_REDUCE_SUM:
    case MRT_U_REDUCE_MAX:
    case MRT_U_REDUCE_MEAN:
        if (mrt_spec_get(u->p, n, "shape") && !mrt_spec_get(u->p, n, "dims"))
            return MRT_OK; /* the shape says what is left */
        return reduced_dims(u, n, a, l);
    case MRT_U_MSE:
    case MRT_U_SOFTMAX_CE:
        return MRT_OK; /* a scalar */
    case MRT_U_RENAME:
        for (int i = 0; i < a->layout.ndims; i++)
            mrt_spec_layout_add_dim(s, l,
                                    a->layout.dim[i] == u->dim
                                        ? u->to_dim
                                        : a->layout.dim[i]);
        return MRT_OK;
    default:
        for (int i = 0; i < a->layout.ndims; i++)
            mrt_spec_layout_add_dim(s, l, a->layout.dim[i]);
        for (int i = 0; b && i < b->layout.ndims; i++)
            mrt_spec_layout_add_dim(s, l, b->layout.dim[i]);
        if (l->ndims > MRT_MAX_DIMS)
            st = mrt_spec_fail(u->p, n, "op %d makes a tensor of more than "
                               "%d dims", u->number, MRT_MAX_DIMS);
        return st;
    }
}

/* 1 if l and m have the same dims, in any order. */
static int same_dim_set(const mrt_layout *l, const mrt_layout *m)
{
    if (l->ndims != m->ndims)
        return 0;
    for (int i = 0; i < l->ndims; i++)
        if (mrt_layout_find_dim(m, l->dim[i]) < 0)
            return 0;
    return 1;
}

/* The keys that depend on the kind: dim, from/to, by, eps. */
static mrt_status op_params(mrt_user_op *u, const yaml_node_t *n)
{
    mrt_spec_parser *p = u->p;
    const mrt_spec *s = p->spec;
    const mrt_spec_tensor *a = &s->tensor[u->in[0]];
    const yaml_node_t *v;
    char what[64], shape[MRT_SPEC_LIST_MAX];
    mrt_status st = MRT_OK;
    u->dim = u->to_dim = -1;
    u->c = u->kind == MRT_U_LAYER_NORM ? 1e-5 : 0;
    if ((v = mrt_spec_get(p, n, "dim")))
        st = dim_ref(u, v, a, &u->dim);
    if (!st && (v = mrt_spec_get(p, n, "from")))
        st = dim_ref(u, v, a, &u->dim);
    if (!st && (v = mrt_spec_get(p, n, "to"))) {
        st = dim_ref(u, v, NULL, &u->to_dim);
        if (!st && mrt_layout_find_dim(&a->layout, u->to_dim) >= 0)
            st = mrt_spec_fail(p, v, "'%s' already has a dim '%s'", a->name,
                               s->dim_name[u->to_dim]);
        if (!st && s->dim_size[u->to_dim] != s->dim_size[u->dim])
            st = mrt_spec_fail(p, v, "dim '%s' has size %lld, dim '%s' %lld "
                               "(rename keeps the size)",
                               s->dim_name[u->to_dim],
                               (long long)s->dim_size[u->to_dim],
                               s->dim_name[u->dim],
                               (long long)s->dim_size[u->dim]);
    }
    if (!st && (v = mrt_spec_get(p, n, "by"))) {
        snprintf(what, sizeof what, "'by' of op %d", u->number);
        if (!(st = mrt_spec_number(p, v, what, &u->c)))
            st = mrt_spec_fits_dtype(p, v, what, u->c);
    }
    if (!st && (v = mrt_spec_get(p, n, "eps"))) {
        snprintf(what, sizeof what, "'eps' of op %d", u->number);
        if (!(st = mrt_spec_positive(p, v, what, &u->c)))
            st = mrt_spec_fits_dtype(p, v, what, u->c);
    }
    if (st || u->nin < 2)
        return st;
    const mrt_spec_tensor *b = &s->tensor[u->in[1]];
    if (u->kind == MRT_U_MSE && !same_dim_set(&a->layout, &b->layout))
        return mrt_spec_fail(p, mrt_spec_get(p, n, "in"), "mse needs two "
                             "tensors of the same dims ('%s' is %s, '%s' %s)",
                             a->name, mrt_spec_shape_str(s, &a->layout, shape,
                                                         sizeof shape),
                             b->name, mrt_spec_shape_str(s, &b->layout, what,
                                                         sizeof what));
    if (u->kind == MRT_U_SOFTMAX_CE) {
        mrt_layout rest = a->layout;
        int i = mrt_layout_find_dim(&rest, u->dim);
        memmove(&rest.dim[i], &rest.dim[i + 1],
                (size_t)(rest.ndims - i - 1) * sizeof rest.dim[0]);
        rest.ndims--;
        u->labels = same_dim_set(&rest, &b->layout);
        if (!u->labels && !same_dim_set(&a->layout, &b->layout))
            return mrt_spec_fail(p, mrt_spec_get(p, n, "in"), "the targets "
                                 "'%s' must have the dims of the logits '%s' "
                                 "(one-hot) or those without '%s' (integer "
                                 "labels)", b->name, a->name,
                                 s->dim_name[u->dim]);
    }
    return MRT_OK;
}

/* The result's dims: derived from the kind, or `shape:` (which for an
 * einsum defines them, and otherwise may only reorder them). */
static mrt_status op_result(mrt_user_op *u, const yaml_node_t *seq,
                            const yaml_node_t *n)
{
    mrt_spec_parser *p = u->p;
    mrt_spec_tensor *t = &u->out;
    const yaml_node_t *shape = mrt_spec_get(p, n, "shape");
    char a[MRT_SPEC_LIST_MAX], b[MRT_SPEC_LIST_MAX];
    mrt_layout derived;
    mrt_status st = op_output(p, u->number - 1, mrt_spec_get(p, n, "out"), t);
    if (!st && u->kind != MRT_U_EINSUM)
        st = derived_dims(u, n, &derived);
    if (st)
        return st;
    (void)seq;
    if (!shape) {
        t->layout = derived;
        t->shape_mark = t->mark;
        if (mrt_spec_too_large(&t->layout))
            return mrt_spec_fail(p, n, "tensor '%s' %s made by op %d (%s) is "
                                 "too large: its size in bytes overflows 64 "
                                 "bits", t->name,
                                 mrt_spec_shape_str(p->spec, &t->layout, a,
                                                    sizeof a),
                                 u->number, mrt_user_kinds[u->kind].name);
        return MRT_OK;
    }
    if ((st = mrt_spec_parse_shape(p, shape, t)))
        return st;
    if (u->kind == MRT_U_EINSUM)
        return check_dims_known(u, t, shape);
    if (mrt_spec_get(p, n, "dims") || (u->kind != MRT_U_REDUCE_SUM &&
                                       u->kind != MRT_U_REDUCE_MAX &&
                                       u->kind != MRT_U_REDUCE_MEAN)) {
        if (!same_dim_set(&t->layout, &derived))
            return mrt_spec_fail(
                p, shape, "the shape of '%s' is %s but %s makes %s", t->name,
                mrt_spec_shape_str(p->spec, &t->layout, a, sizeof a),
                mrt_user_kinds[u->kind].name,
                mrt_spec_shape_str(p->spec, &derived, b, sizeof b));
        return MRT_OK;
    }
    /* a reduction whose `shape:` names the dims it keeps */
    const mrt_spec_tensor *in = &p->spec->tensor[u->in[0]];
    for (int i = 0; i < t->layout.ndims; i++)
        if (mrt_layout_find_dim(&in->layout, t->layout.dim[i]) < 0)
            return mrt_spec_fail(p, mrt_spec_item(p, shape, i), "dim '%s' of "
                                 "'%s' is not in its input '%s' %s",
                                 p->spec->dim_name[t->layout.dim[i]], t->name,
                                 in->name,
                                 mrt_spec_shape_str(p->spec, &in->layout, a,
                                                    sizeof a));
    return MRT_OK;
}

/* The home layout of the result, and the rules for the tensors the op
 * makes inside (its own `layout:`, applied to the dims each one has;
 * else the global rules). */
static mrt_status op_layout(mrt_user_op *u, const yaml_node_t *n)
{
    mrt_spec_parser *p = u->p;
    mrt_spec *s = p->spec;
    const yaml_node_t *own = mrt_spec_get(p, n, "layout");
    /* mrt_spec_load_layouts: as if `layout:` held these rules */
    const mrt_rule *given = mrt_spec_given_rules(p, u->out.name);
    u->rules = s->rule;
    u->own = 0;
    if (u->kind == MRT_U_EINSUM || (!own && !given))
        return mrt_spec_resolve_layout(p, &u->out, own);
    mrt_layout all = u->out.layout;
    for (int k = 0; k < u->nin; k++)
        for (int i = 0; i < s->tensor[u->in[k]].layout.ndims; i++)
            mrt_spec_layout_add_dim(s, &all,
                                    s->tensor[u->in[k]].layout.dim[i]);
    if (!(u->own_rules = calloc((size_t)s->ndims + 1, sizeof *u->own_rules)))
        return mrt_spec_nomem(p);
    char of[64];
    snprintf(of, sizeof of, "the layout of op %d", u->number);
    mrt_status st = MRT_OK;
    if (given)
        memcpy(u->own_rules, given, (size_t)s->ndims * sizeof *given);
    else
        st = mrt_spec_parse_rules(p, own, &all, of, u->own_rules);
    if (st)
        return st;
    u->rules = u->own_rules;
    u->own = 1;
    const mrt_spec_resolver r = {s, &s->mesh, NULL, p->err};
    u->out.own_layout = 1;
    return mrt_spec_apply_rules(&r, &u->out, u->rules, 1);
}

static mrt_status parse_op(mrt_spec_parser *p, const yaml_node_t *seq, int i,
                           const yaml_node_t *n)
{
    mrt_user_op u = {.s = p->spec, .err = p->err, .mark = mrt_spec_mark(n),
                     .p = p, .number = i + 1};
    char of[48];
    u.expect = (mrt_budget){-1, -1, {0, 0}};
    mrt_status st = op_kind(&u, n);
    if (!st)
        st = op_keys_fit(&u, n);
    if (!st)
        st = op_inputs(&u, seq, mrt_spec_get(p, n, "in"));
    if (!st)
        st = op_params(&u, n);
    if (!st)
        st = op_result(&u, seq, n);
    if (!st)
        st = op_layout(&u, n);
    if (!st && mrt_spec_get(p, n, "expect")) {
        snprintf(of, sizeof of, "the expect of op %d", i + 1);
        st = mrt_spec_parse_budget(p, mrt_spec_get(p, n, "expect"), of,
                                   &u.expect);
    }
    if (!st)
        st = mrt_ir_expand(&u);
    free(u.own_rules);
    if (!st)
        p->spec->nuser_ops = i + 1;
    return st;
}

mrt_status mrt_spec_parse_ops(mrt_spec_parser *p, const yaml_node_t *seq)
{
    mrt_status st = mrt_spec_expect(p, seq, YAML_SEQUENCE_NODE, "'ops'");
    if (st)
        return st;
    int count = mrt_spec_count(seq);
    if (count == 0)
        return mrt_spec_fail(p, seq, "'ops' is empty (a spec needs at least "
                             "one op)");
    for (int i = 0; !st && i < count; i++)
        st = parse_op(p, seq, i, mrt_spec_item(p, seq, i));
    return st;
}

/* `outputs:` (seq; NULL: the last op's result, and with `train:` the
 * loss, gradients and updates) to the builder, which then finishes the
 * program into *out. */
mrt_status mrt_spec_parse_outputs(mrt_spec_parser *p, const yaml_node_t *seq,
                                  mrt_spec **out)
{
    char q[MRT_SPEC_QUOTE_MAX + 32];
    int count = seq ? mrt_spec_count(seq) : 0;
    mrt_status st = seq ? mrt_spec_expect(p, seq, YAML_SEQUENCE_NODE,
                                          "'outputs'") : MRT_OK;
    if (!st && seq && count == 0)
        st = mrt_spec_fail(p, seq, "'outputs' is empty (name at least one "
                           "tensor, or leave it out for the last op's "
                           "output)");
    const char **names = calloc((size_t)count + 1, sizeof *names);
    mrt_mark *marks = calloc((size_t)count + 1, sizeof *marks);
    if (!st && (!names || !marks))
        st = mrt_spec_nomem(p);
    for (int j = 0; !st && j < count; j++) {
        const yaml_node_t *n = mrt_spec_item(p, seq, j);
        names[j] = mrt_spec_str(n);
        marks[j] = mrt_spec_mark(n);
        if (!names[j] || mrt_spec_is_null(n))
            st = mrt_spec_fail(p, n, "expected a tensor name in 'outputs', "
                               "got %s", mrt_spec_what(n, q, sizeof q));
    }
    if (!st && seq)
        st = mrt_ir_set_outputs_at(p->ir, count, names, marks, p->err);
    if (!st)
        st = mrt_ir_finish(p->ir, out, p->err);
    free(names);
    free(marks);
    return st;
}
