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
                              ? mrt_spec_str(mrt_spec_get(p, n, "out"))
                              : NULL;
        if (out && !strcmp(out, name))
            return i + 1;
    }
    return 0;
}

/* The keys of the MRT_K_* bits, in bit order. */
static const char *const key_names[MRT_K_BITS] = {
    "shape", "dim", "dims", "by", "from", "to", "eps", "causal", "p", "seed"};
static const char *const op_keys[] = {
    "op", "in",   "out", "shape", "layout", "expect", "dim",  "dims",
    "by", "from", "to",  "eps",   "causal", "p",      "seed", NULL};

/* The keys and kind of op u (mapping n). */
static mrt_status op_kind(mrt_user_op *u, const yaml_node_t *n)
{
    mrt_spec_parser *p = u->p;
    char of[32], q[MRT_SPEC_QUOTE_MAX + 32], list[400];
    snprintf(of, sizeof of, "op %d", u->number);
    mrt_status st = mrt_spec_expect(p, n, YAML_MAPPING_NODE, of);
    const yaml_node_t *dt = st ? NULL : mrt_spec_get(p, n, "dtype");
    if (dt) /* before the keys: say why, not only that it is unknown */
        st = mrt_spec_fail(p, dt,
                           "op %d has a dtype: an op's result takes the "
                           "program's dtype (a dtype such as int32 goes on "
                           "an input under 'tensors')",
                           u->number);
    const yaml_node_t *rc = st ? NULL : mrt_spec_get(p, n, "recompute");
    if (rc) /* likewise: it is a block's key */
        st = mrt_spec_fail(p, rc,
                           "op %d has a recompute: recomputation is per "
                           "block (recompute: true on a repeat: item of "
                           "ops: re-runs its forward ops in the backward "
                           "pass)",
                           u->number);
    if (!st)
        st = mrt_spec_check_keys(p, n, op_keys, of);
    const char *required[] = {"op", "in", "out"};
    for (int k = 0; !st && k < 3; k++)
        if (!mrt_spec_get(p, n, required[k]))
            st = mrt_spec_fail(p, n,
                               "op %d has no '%s' (an op needs: op, "
                               "in, out)",
                               u->number, required[k]);
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
    for (int k = 0; k < MRT_K_BITS; k++) {
        unsigned bit = 1u << k;
        const yaml_node_t *v = mrt_spec_get(u->p, n, key_names[k]);
        if (v && !(mrt_user_kinds[u->kind].keys & bit))
            return mrt_spec_fail(u->p, v, "op %d (%s) takes no '%s'", u->number,
                                 mrt_user_kinds[u->kind].name, key_names[k]);
        if (!v && (mrt_user_kinds[u->kind].required & bit))
            return mrt_spec_fail(u->p, n, "op %d (%s) needs '%s'", u->number,
                                 mrt_user_kinds[u->kind].name, key_names[k]);
    }
    return MRT_OK;
}

/* Everything an op reads: the builder's struct, its marks, and room
 * for the names it points at. */
typedef struct op_read {
    mrt_ir_op o;
    mrt_ir_op_at at;
    const char *shape[MRT_MAX_DIMS];
    mrt_mark shape_mark[MRT_MAX_DIMS];
    const char **reduce;   /* owned */
    mrt_mark *reduce_mark; /* owned */
    mrt_spec_rules rules;  /* owned */
} op_read;

/* The inputs (node n) of op u: names, marks, and for a name no tensor
 * has yet, which later op makes it. */
static mrt_status read_inputs(mrt_user_op *u, const yaml_node_t *seq,
                              const yaml_node_t *n, op_read *r)
{
    mrt_spec_parser *p = u->p;
    char of[64], q[MRT_SPEC_QUOTE_MAX + 32];
    snprintf(of, sizeof of, "the inputs of op %d", u->number);
    mrt_status st = mrt_spec_expect(p, n, YAML_SEQUENCE_NODE, of);
    if (st)
        return st;
    const mrt_user_kind_info *k = &mrt_user_kinds[u->kind];
    r->at.nin = mrt_spec_count(n);
    r->at.in_list_mark = mrt_spec_mark(n);
    if (r->at.nin < k->min_in || r->at.nin > k->max_in)
        return MRT_OK; /* the builder words it */
    for (int j = 0; j < r->at.nin; j++) {
        const yaml_node_t *a = mrt_spec_item(p, n, j);
        const char *name = mrt_spec_str(a);
        if (!name || mrt_spec_is_null(a))
            return mrt_spec_fail(p, a,
                                 "expected a tensor name in the inputs "
                                 "of op %d, got %s",
                                 u->number, mrt_spec_what(a, q, sizeof q));
        r->o.in[j] = name;
        r->at.in_mark[j] = mrt_spec_mark(a);
        if (mrt_spec_find_tensor(p->spec, name) < 0) /* for the message */
            r->at.later[j] = later_maker(p, seq, u->number - 1, name);
    }
    return MRT_OK;
}

/* A dim name (node n) of op u into *name. */
static mrt_status read_dim(mrt_user_op *u, const yaml_node_t *n,
                           const char **name, mrt_mark *at)
{
    char q[MRT_SPEC_QUOTE_MAX + 32];
    *name = mrt_spec_is_null(n) ? NULL : mrt_spec_str(n);
    *at = mrt_spec_mark(n);
    if (!*name)
        return mrt_spec_fail(u->p, n, "expected a dim name in op %d, got %s",
                             u->number, mrt_spec_what(n, q, sizeof q));
    return MRT_OK;
}

/* `dims:` of a reduction: a name or a list of names. */
static mrt_status read_reduce(mrt_user_op *u, const yaml_node_t *dims,
                              op_read *r)
{
    int seq = dims->type == YAML_SEQUENCE_NODE;
    int n = seq ? mrt_spec_count(dims) : 1;
    mrt_status st = MRT_OK;
    r->at.reduce_given = 1;
    r->reduce = calloc((size_t)n + 1, sizeof *r->reduce);
    r->reduce_mark = calloc((size_t)n + 1, sizeof *r->reduce_mark);
    if (!r->reduce || !r->reduce_mark)
        return mrt_spec_nomem(u->p);
    for (int j = 0; !st && j < n; j++)
        st = read_dim(u, seq ? mrt_spec_item(u->p, dims, j) : dims,
                      &r->reduce[j], &r->reduce_mark[j]);
    r->o.nreduce = n;
    r->o.reduce = r->reduce;
    r->at.reduce_mark = r->reduce_mark;
    return st;
}

/* softmax's `causal:` (node v): a list of two dim names. */
static mrt_status read_causal(mrt_user_op *u, const yaml_node_t *v, op_read *r)
{
    char of[48];
    snprintf(of, sizeof of, "'causal' of op %d", u->number);
    mrt_status st = mrt_spec_expect(u->p, v, YAML_SEQUENCE_NODE, of);
    r->at.causal_given = 1;
    r->at.causal_mark = mrt_spec_mark(v);
    r->at.ncausal = st ? 0 : mrt_spec_count(v);
    for (int j = 0; !st && j < 2 && j < r->at.ncausal; j++)
        st = read_dim(u, mrt_spec_item(u->p, v, j), &r->o.causal[j],
                      &r->at.causal_dim_mark[j]);
    return st;
}

/* dropout's `p:` and `seed:`. */
static mrt_status read_dropout(mrt_user_op *u, const yaml_node_t *n, op_read *r)
{
    const yaml_node_t *v;
    char what[64];
    mrt_status st = MRT_OK;
    if ((v = mrt_spec_get(u->p, n, "p"))) {
        snprintf(what, sizeof what, "'p' of op %d", u->number);
        st = mrt_spec_number(u->p, v, what, &r->o.p);
        r->at.p_given = 1;
        r->at.p_mark = mrt_spec_mark(v);
        if (!st) /* a number, so a scalar */
            r->at.p_text = (const char *)v->data.scalar.value;
    }
    if (!st && (v = mrt_spec_get(u->p, n, "seed"))) {
        snprintf(what, sizeof what, "the seed of op %d", u->number);
        st = mrt_spec_uint(u->p, v, what, &r->o.seed);
        r->o.seeded = 1;
        r->at.seed_mark = mrt_spec_mark(v);
    }
    return st;
}

/* The keys that depend on the kind: dim, from/to, dims, by, eps,
 * causal, p, seed. */
static mrt_status read_params(mrt_user_op *u, const yaml_node_t *n, op_read *r)
{
    mrt_spec_parser *p = u->p;
    const yaml_node_t *v, *c = NULL;
    char what[64];
    mrt_status st = MRT_OK;
    if ((v = mrt_spec_get(p, n, "dim")))
        st = read_dim(u, v, &r->o.dim, &r->at.dim_mark);
    if (!st && (v = mrt_spec_get(p, n, "from")))
        st = read_dim(u, v, &r->o.dim, &r->at.dim_mark);
    if (!st && (v = mrt_spec_get(p, n, "to")))
        st = read_dim(u, v, &r->o.to, &r->at.to_mark);
    if (!st && (v = mrt_spec_get(p, n, "dims")))
        st = read_reduce(u, v, r);
    if (!st && (c = mrt_spec_get(p, n, "by"))) {
        snprintf(what, sizeof what, "'by' of op %d", u->number);
        st = mrt_spec_number(p, c, what, &r->o.c);
    }
    if (!st && !c && (c = mrt_spec_get(p, n, "eps"))) {
        snprintf(what, sizeof what, "'eps' of op %d", u->number);
        st = mrt_spec_positive(p, c, what, &r->o.c);
    }
    if (!st && c) { /* a number, so a scalar */
        r->at.c_mark = mrt_spec_mark(c);
        r->at.c_text = (const char *)c->data.scalar.value;
    }
    if (!st && (v = mrt_spec_get(p, n, "causal")))
        st = read_causal(u, v, r);
    if (!st)
        st = read_dropout(u, n, r);
    return st;
}

/* out, shape, layout and expect. */
static mrt_status read_result(mrt_user_op *u, const yaml_node_t *n, op_read *r,
                              char out[MRT_NAME_MAX])
{
    mrt_spec_parser *p = u->p;
    const yaml_node_t *v = mrt_spec_get(p, n, "out");
    char of[MRT_NAME_MAX + 32];
    mrt_status st = mrt_spec_name(p, v, "tensor", out);
    r->o.out = out;
    r->at.out_mark = mrt_spec_mark(v);
    if (!st && (v = mrt_spec_get(p, n, "shape"))) {
        r->at.shape_given = 1;
        st = mrt_spec_read_shape(p, out, v, &r->o.ndims, r->shape,
                                 r->shape_mark, &r->at.shape_mark);
        r->o.shape = r->shape;
        r->at.shape_dim_mark = r->shape_mark;
    }
    const yaml_node_t *own = mrt_spec_get(p, n, "layout");
    r->at.given = st ? NULL : mrt_spec_given_rules(p, out);
    if (!st && own && !r->at.given) {
        if (u->kind == MRT_U_EINSUM)
            snprintf(of, sizeof of, "the layout of tensor '%s'", out);
        else
            snprintf(of, sizeof of, "the layout of op %d", u->number);
        st = mrt_spec_read_rules(p, own, of, &r->rules);
        r->at.has_layout = 1;
        r->at.nlayout = r->rules.n;
        r->at.layout = r->rules.rule;
    }
    if (!st && mrt_spec_get(p, n, "expect")) {
        snprintf(of, sizeof of, "the expect of op %d", u->number);
        st = mrt_spec_parse_budget(p, mrt_spec_get(p, n, "expect"), of,
                                   &r->at.expect);
        r->at.expect_mark = mrt_spec_mark(mrt_spec_get(p, n, "expect"));
    }
    return st;
}

mrt_status mrt_spec_parse_op(mrt_spec_parser *p, const yaml_node_t *seq, int i,
                             const yaml_node_t *n)
{
    mrt_user_op u = {.s = p->spec, .err = p->err, .p = p, .number = i + 1};
    op_read r = {.at = {.mark = mrt_spec_mark(n), .expect = {-1, -1}}};
    char out[MRT_NAME_MAX];
    mrt_status st = op_kind(&u, n);
    if (!st)
        st = op_keys_fit(&u, n);
    r.o.kind = (mrt_ir_kind)u.kind;
    if (!st)
        st = read_inputs(&u, seq, mrt_spec_get(p, n, "in"), &r);
    if (!st)
        st = read_params(&u, n, &r);
    if (!st)
        st = read_result(&u, n, &r, out);
    if (!st)
        st = mrt_ir_add_op_at(p->ir, &r.o, &r.at, p->err);
    free(r.reduce);
    free(r.reduce_mark);
    mrt_spec_rules_free(&r.rules);
    return st;
}

mrt_status mrt_spec_parse_ops(mrt_spec_parser *p, const yaml_node_t *seq)
{
    mrt_status st = mrt_spec_expect(p, seq, YAML_SEQUENCE_NODE, "'ops'");
    if (st)
        return st;
    int count = mrt_spec_count(seq);
    if (count == 0)
        return mrt_spec_fail(p, seq,
                             "'ops' is empty (a spec needs at least "
                             "one op)");
    for (int i = 0; !st && i < count; i++) {
        const yaml_node_t *n = mrt_spec_item(p, seq, i);
        st = mrt_spec_is_repeat(p, n) ? mrt_spec_parse_repeat(p, n)
                                      : mrt_spec_parse_op(p, seq, i, n);
    }
    return st;
}

/* `outputs:` (seq; NULL: the last op's result, and with `train:` the
 * loss, gradients and updates) to the builder. */
mrt_status mrt_spec_parse_outputs(mrt_spec_parser *p, const yaml_node_t *seq)
{
    char q[MRT_SPEC_QUOTE_MAX + 32];
    int count = seq ? mrt_spec_count(seq) : 0;
    mrt_status st = seq ? mrt_spec_expect(p, seq, YAML_SEQUENCE_NODE,
                                          "'outputs'")
                        : MRT_OK;
    if (!st && seq && count == 0)
        st = mrt_spec_fail(p, seq,
                           "'outputs' is empty (name at least one "
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
            st = mrt_spec_fail(p, n,
                               "expected a tensor name in 'outputs', "
                               "got %s",
                               mrt_spec_what(n, q, sizeof q));
    }
    if (!st && seq)
        st = mrt_ir_set_outputs_at(p->ir, count, names, marks, p->err);
    free(names);
    free(marks);
    return st;
}
