/*
 * spec_tensors.c — the `tensors:` section: the program's inputs, each
 * with a shape (named dims), an optional layout of its own and an init,
 * read here and handed to the builder (mrt_ir_add_tensor_at), which
 * checks names, shapes, layouts, values and files at their marks.
 *
 * Inits: {random: SEED} (uniform in [-1, 1); the default, seeded with
 * the FNV-1a hash of the name), {fill: X}, {labels: N or DIM}, {file: PATH}
 * (a .npy file, resolved against the spec's folder by the builder) or
 * {causal: [QUERY, KEY]} (1 where the key index <= the query index).
 * Shapes are read the same way for op results (mrt_spec_read_shape).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec_parse.h"

static const char *const tensor_keys[] = {"shape", "init", "layout", "dtype",
                                          NULL};
static const char *const init_keys[] = {"random", "fill",   "file",
                                        "labels", "causal", NULL};

/* `causal: [query, key]` (node v) of tensor `name`: two dim names. */
static mrt_status read_causal_init(mrt_spec_parser *p, const char *name,
                                   const yaml_node_t *v, mrt_ir_tensor *d,
                                   mrt_ir_tensor_at *at)
{
    char of[MRT_NAME_MAX + 48], q[MRT_SPEC_QUOTE_MAX + 8];
    snprintf(of, sizeof of, "the causal init of tensor '%s'", name);
    d->init = MRT_IR_INIT_CAUSAL;
    mrt_status st = mrt_spec_expect(p, v, YAML_SEQUENCE_NODE, of);
    at->ncausal = st ? 0 : mrt_spec_count(v);
    for (int j = 0; !st && j < 2 && j < at->ncausal; j++) {
        const yaml_node_t *dn = mrt_spec_item(p, v, j);
        d->causal[j] = mrt_spec_is_null(dn) ? NULL : mrt_spec_str(dn);
        at->causal_dim_mark[j] = mrt_spec_mark(dn);
        if (!d->causal[j])
            st = mrt_spec_fail(p, dn, "expected a dim name in %s, got %s", of,
                               mrt_spec_what(dn, q, sizeof q));
    }
    return st;
}

/* The init mapping n of tensor `name` into d and at (its value's mark
 * and text): its form here, its value's range and file there. */
static mrt_status read_init(mrt_spec_parser *p, const char *name,
                            const yaml_node_t *n, mrt_ir_tensor *d,
                            mrt_ir_tensor_at *at)
{
    char of[MRT_NAME_MAX + 48], q[MRT_SPEC_QUOTE_MAX + 8];
    snprintf(of, sizeof of, "the init of tensor '%s'", name);
    mrt_status st = mrt_spec_expect(p, n, YAML_MAPPING_NODE, of);
    if (!st)
        st = mrt_spec_check_keys(p, n, init_keys, of);
    if (st)
        return st;
    at->init_mark = mrt_spec_mark(n);
    yaml_node_pair_t *pr = n->data.mapping.pairs.start;
    if (mrt_spec_count(n) == 0)
        return mrt_spec_fail(p, n,
                             "%s is empty (give one of: random, fill, "
                             "file, labels, causal)",
                             of);
    const char *kind = mrt_spec_str(mrt_spec_node(p, pr->key));
    if (mrt_spec_count(n) > 1)
        return mrt_spec_fail(
            p, mrt_spec_node(p, pr[1].key),
            "%s has both "
            "'%s' and '%s' (give exactly one of: random, "
            "fill, file, labels, causal)",
            of, kind, mrt_spec_quote(mrt_spec_node(p, pr[1].key), q, sizeof q));
    const yaml_node_t *v = mrt_spec_node(p, pr->value);
    at->value_mark = mrt_spec_mark(v);
    at->value_text = v && v->type == YAML_SCALAR_NODE
                         ? (const char *)v->data.scalar.value
                         : NULL;
    if (!strcmp(kind, "random")) {
        d->init = MRT_IR_INIT_RANDOM;
        snprintf(of, sizeof of, "the seed of tensor '%s'", name);
        return mrt_spec_uint(p, v, of, &d->seed);
    }
    if (!strcmp(kind, "fill")) {
        d->init = MRT_IR_INIT_FILL;
        snprintf(of, sizeof of, "the fill value of tensor '%s'", name);
        return mrt_spec_number(p, v, of, &d->value);
    }
    if (!strcmp(kind, "labels")) { /* labels: N classes */
        int64_t classes = 0;
        d->init = MRT_IR_INIT_LABELS;
        snprintf(of, sizeof of, "the number of classes of tensor '%s'", name);
        /* or the name of a dim: its size (as --dim sets it) */
        const char *dim = v && v->type == YAML_SCALAR_NODE
                              ? (const char *)v->data.scalar.value
                              : NULL;
        int id = dim && mrt_spec_name_ok(dim, strlen(dim))
                     ? mrt_spec_find_dim(p->spec, dim)
                     : -1;
        if (id >= 0)
            classes = p->spec->dim_size[id];
        else
            st = mrt_spec_size(p, v, of, &classes);
        d->value = (double)classes;
        at->classes = classes;
        return st;
    }
    if (!strcmp(kind, "causal"))
        return read_causal_init(p, name, v, d, at);
    d->init = MRT_IR_INIT_FILE;
    snprintf(of, sizeof of, "the file of tensor '%s'", name);
    st = mrt_spec_expect(p, v, YAML_SCALAR_NODE, of);
    if (!st && !(d->file = mrt_spec_str(v)))
        st = mrt_spec_fail(p, v,
                           "the file name of tensor '%s' has a NUL "
                           "character",
                           name);
    return st;
}

mrt_status mrt_spec_read_shape(mrt_spec_parser *p, const char *name,
                               const yaml_node_t *n, int *ndims,
                               const char **dims, mrt_mark *marks,
                               mrt_mark *shape_mark)
{
    char of[MRT_NAME_MAX + 32], q[MRT_SPEC_QUOTE_MAX + 32];
    snprintf(of, sizeof of, "the shape of tensor '%s'", name);
    mrt_status st = mrt_spec_expect(p, n, YAML_SEQUENCE_NODE, of);
    if (st)
        return st;
    *shape_mark = mrt_spec_mark(n);
    *ndims = mrt_spec_count(n);
    for (int i = 0; *ndims <= MRT_MAX_DIMS && i < *ndims; i++) {
        const yaml_node_t *dn = mrt_spec_item(p, n, i);
        if (!mrt_spec_str(dn) || mrt_spec_is_null(dn))
            return mrt_spec_fail(p, dn,
                                 "expected a dim name in the shape of "
                                 "tensor '%s', got %s",
                                 name, mrt_spec_what(dn, q, sizeof q));
        dims[i] = mrt_spec_str(dn);
        marks[i] = mrt_spec_mark(dn);
    }
    return MRT_OK;
}

mrt_status mrt_spec_parse_tensor(mrt_spec_parser *p, const yaml_node_t *k,
                                 const yaml_node_t *v)
{
    char of[MRT_NAME_MAX + 32], name[MRT_NAME_MAX];
    const char *dims[MRT_MAX_DIMS];
    mrt_mark marks[MRT_MAX_DIMS];
    mrt_ir_tensor d = {.name = name};
    mrt_ir_tensor_at at = {.mark = mrt_spec_mark(k)};
    mrt_spec_rules rules = {0};
    mrt_status st = mrt_spec_name(p, k, "tensor", name);
    if (st)
        return st;
    snprintf(of, sizeof of, "tensor '%s'", name);
    if ((st = mrt_spec_expect(p, v, YAML_MAPPING_NODE, of)) ||
        (st = mrt_spec_check_keys(p, v, tensor_keys, of)))
        return st;
    const yaml_node_t *shape = mrt_spec_get(p, v, "shape");
    const yaml_node_t *own = mrt_spec_get(p, v, "layout");
    const yaml_node_t *init = mrt_spec_get(p, v, "init");
    if (!shape)
        return mrt_spec_fail(p, v,
                             "tensor '%s' has no shape (add shape: "
                             "[dim, ...])",
                             name);
    d.shape = dims;
    at.dim_mark = marks;
    if ((st = mrt_spec_read_shape(p, name, shape, &d.ndims, dims, marks,
                                  &at.shape_mark)))
        return st;
    snprintf(of, sizeof of, "the layout of tensor '%s'", name);
    at.given = mrt_spec_given_rules(p, name);
    if (own && !at.given) {
        st = mrt_spec_read_rules(p, own, of, &rules);
        at.has_layout = 1;
        at.nlayout = rules.n;
        at.layout = rules.rule;
    }
    if (!st && init)
        st = read_init(p, name, init, &d, &at);
    const yaml_node_t *dtype = mrt_spec_get(p, v, "dtype");
    if (!st && dtype && (!mrt_spec_str(dtype) || mrt_spec_is_null(dtype))) {
        char q[MRT_SPEC_QUOTE_MAX + 32];
        st = mrt_spec_fail(p, dtype,
                           "expected a dtype (int32) for the dtype of "
                           "tensor '%s', got %s",
                           name, mrt_spec_what(dtype, q, sizeof q));
    } else if (dtype) {
        d.dtype = mrt_spec_str(dtype);
        at.dtype_mark = mrt_spec_mark(dtype);
    }
    if (!st)
        st = mrt_ir_add_tensor_at(p->ir, &d, &at, p->err);
    mrt_spec_rules_free(&rules);
    return st;
}

mrt_status mrt_spec_parse_tensors(mrt_spec_parser *p, const yaml_node_t *map)
{
    return mrt_spec_each_entry(p, map, "'tensors'", mrt_spec_parse_tensor);
}
