/*
 * spec_layout.c — layout rules (dim -> mesh axes) and the home layout of
 * every tensor.
 *
 * A rule maps one dim to an axis or to a sequence of axes, major first.
 * The global rules (top-level `layout:`) apply to every tensor that has
 * no `layout:` of its own; a tensor's (or op's) own mapping replaces them
 * entirely, and the dims it does not name are replicated.  As in
 * Mesh-TensorFlow, two different dims may map to the same axis in the
 * global rules, as long as no tensor has both: a layout uses each axis at
 * most once.  Every split must be even.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec_parse.h"

/* One axis of a rule (scalar node a) appended to r.  The axes are those
 * of p->rule_mesh (a `layouts:` alternative's own mesh) when set. */
static mrt_status rule_axis(mrt_spec_parser *p, const yaml_node_t *a,
                            const char *dim, mrt_rule *r)
{
    const mrt_mesh *m = p->rule_mesh ? p->rule_mesh : &p->spec->mesh;
    const char *what = p->rule_mesh_what  ? p->rule_mesh_what
                       : p->mesh_overridden ? "the mesh given by --mesh"
                                            : "the mesh";
    char q[MRT_SPEC_QUOTE_MAX + 32], list[MRT_SPEC_LIST_MAX];
    const char *name = mrt_spec_str(a);
    int axis = name ? mrt_mesh_find_axis(m, name) : -1;
    if (!a || a->type != YAML_SCALAR_NODE || mrt_spec_is_null(a))
        return mrt_spec_fail(p, a, "expected a mesh axis in the rule for dim "
                             "'%s', got %s", dim, mrt_spec_what(a, q,
                                                                sizeof q));
    if (axis < 0)
        return mrt_spec_fail(p, a, "unknown mesh axis '%s' (%s has: %s)",
                             mrt_spec_quote(a, q, sizeof q), what,
                             mrt_spec_join(list, sizeof list, m->name[0],
                                           sizeof m->name[0], m->naxes));
    for (int j = 0; j < r->naxes; j++)
        if (r->axes[j] == axis)
            return mrt_spec_fail(p, a, "mesh axis '%s' appears twice in the "
                                 "rule for dim '%s'", name, dim);
    r->axes[r->naxes++] = axis; /* < MRT_MAX_AXES: axes are distinct */
    return MRT_OK;
}

/* The value of one rule: an axis or a sequence of axes. */
static mrt_status parse_rule(mrt_spec_parser *p, const yaml_node_t *v,
                             const char *dim, mrt_rule *r)
{
    char what[MRT_SPEC_QUOTE_MAX + 32];
    mrt_status st = MRT_OK;
    r->naxes = 0;
    r->mark = mrt_spec_mark(v);
    if (v && v->type == YAML_SEQUENCE_NODE) {
        for (yaml_node_item_t *it = v->data.sequence.items.start;
             !st && it < v->data.sequence.items.top; it++)
            st = rule_axis(p, mrt_spec_node(p, *it), dim, r);
        return st;
    }
    if (v && v->type == YAML_SCALAR_NODE && !mrt_spec_is_null(v))
        return rule_axis(p, v, dim, r);
    return mrt_spec_fail(p, v, "expected a mesh axis or a sequence of mesh "
                         "axes for dim '%s', got %s", dim,
                         mrt_spec_what(v, what, sizeof what));
}

/* The dim id named by key k of a layout mapping, checked against shape. */
static mrt_status rule_dim(mrt_spec_parser *p, const yaml_node_t *k,
                           const mrt_layout *shape, const char *of, int *dim)
{
    const mrt_spec *s = p->spec;
    char q[MRT_SPEC_QUOTE_MAX + 8], list[MRT_SPEC_LIST_MAX];
    const char *name = mrt_spec_str(k);
    *dim = name ? mrt_spec_find_dim(s, name) : -1;
    if (*dim < 0)
        return mrt_spec_fail(p, k, "unknown dim '%s' in %s (the dims are: %s)",
                             mrt_spec_quote(k, q, sizeof q), of,
                             mrt_spec_join(list, sizeof list, s->dim_name[0],
                                           sizeof s->dim_name[0], s->ndims));
    if (shape && mrt_layout_find_dim(shape, *dim) < 0)
        return mrt_spec_fail(p, k, "%s names dim '%s', which is not in its "
                             "shape %s", of, name,
                             mrt_spec_shape_str(s, shape, list, sizeof list));
    return MRT_OK;
}

mrt_status mrt_spec_parse_rule(mrt_spec_parser *p, const yaml_node_t *k,
                               const yaml_node_t *v, const mrt_layout *shape,
                               const char *of, mrt_rule rules[])
{
    int dim;
    mrt_status st = rule_dim(p, k, shape, of, &dim);
    if (!st)
        st = parse_rule(p, v, p->spec->dim_name[dim], &rules[dim]);
    return st;
}

mrt_status mrt_spec_parse_rules(mrt_spec_parser *p, const yaml_node_t *map,
                                const mrt_layout *shape, const char *of,
                                mrt_rule rules[])
{
    mrt_status st = mrt_spec_expect(p, map, YAML_MAPPING_NODE, of);
    if (!st)
        st = mrt_spec_check_keys(p, map, NULL, of);
    for (yaml_node_pair_t *pr = st ? NULL : map->data.mapping.pairs.start;
         !st && pr < map->data.mapping.pairs.top; pr++)
        st = mrt_spec_parse_rule(p, mrt_spec_node(p, pr->key),
                                 mrt_spec_node(p, pr->value), shape, of,
                                 rules);
    return st;
}

/* The axes of one rule (value v of dim `dim`) into r, from axes[*used]
 * and marks[*used] on: the value's form is checked here, names there. */
static mrt_status read_rule(mrt_spec_parser *p, const yaml_node_t *v,
                            const char *dim, mrt_spec_rules *out,
                            mrt_ir_rule_at *r)
{
    char q[MRT_SPEC_QUOTE_MAX + 32];
    if (!v || (v->type != YAML_SEQUENCE_NODE &&
               (v->type != YAML_SCALAR_NODE || mrt_spec_is_null(v))))
        return mrt_spec_fail(p, v, "expected a mesh axis or a sequence of "
                             "mesh axes for dim '%s', got %s", dim,
                             mrt_spec_what(v, q, sizeof q));
    int n = v->type == YAML_SEQUENCE_NODE ? mrt_spec_count(v) : 1;
    const char **axes = &out->axes[out->used];
    mrt_mark *marks = &out->marks[out->used];
    for (int j = 0; j < n; j++) {
        const yaml_node_t *a = v->type == YAML_SEQUENCE_NODE
                                   ? mrt_spec_item(p, v, j) : v;
        if (!a || a->type != YAML_SCALAR_NODE || mrt_spec_is_null(a) ||
            !mrt_spec_str(a))
            return mrt_spec_fail(p, a, "expected a mesh axis in the rule for "
                                 "dim '%s', got %s", dim,
                                 mrt_spec_what(a, q, sizeof q));
        axes[j] = mrt_spec_str(a);
        marks[j] = mrt_spec_mark(a);
    }
    out->used += n;
    *r = (mrt_ir_rule_at){dim, n, axes, {0, 0}, mrt_spec_mark(v), marks};
    return MRT_OK;
}

mrt_status mrt_spec_read_rules(mrt_spec_parser *p, const yaml_node_t *map,
                               const char *of, mrt_spec_rules *out)
{
    memset(out, 0, sizeof *out);
    mrt_status st = mrt_spec_expect(p, map, YAML_MAPPING_NODE, of);
    if (!st)
        st = mrt_spec_check_keys(p, map, NULL, of);
    if (st)
        return st;
    size_t total = 1;
    for (yaml_node_pair_t *pr = map->data.mapping.pairs.start;
         pr < map->data.mapping.pairs.top; pr++) {
        const yaml_node_t *v = mrt_spec_node(p, pr->value);
        total += v && v->type == YAML_SEQUENCE_NODE ? mrt_spec_count(v) : 1;
    }
    out->rule = calloc((size_t)mrt_spec_count(map) + 1, sizeof *out->rule);
    out->axes = calloc(total, sizeof *out->axes);
    out->marks = calloc(total, sizeof *out->marks);
    if (!out->rule || !out->axes || !out->marks)
        return mrt_spec_nomem(p);
    for (yaml_node_pair_t *pr = map->data.mapping.pairs.start;
         !st && pr < map->data.mapping.pairs.top; pr++) {
        const yaml_node_t *k = mrt_spec_node(p, pr->key);
        mrt_ir_rule_at *r = &out->rule[out->n];
        st = read_rule(p, mrt_spec_node(p, pr->value), mrt_spec_str(k), out,
                       r);
        r->dim_mark = mrt_spec_mark(k);
        out->n++;
    }
    return st;
}

void mrt_spec_rules_free(mrt_spec_rules *r)
{
    free(r->rule);
    free(r->axes);
    free(r->marks);
    memset(r, 0, sizeof *r);
}

mrt_status mrt_spec_parse_global_rules(mrt_spec_parser *p,
                                       const yaml_node_t *map)
{
    mrt_spec_rules r;
    mrt_status st = mrt_spec_read_rules(p, map, "'layout'", &r);
    for (int i = 0; !st && i < r.n; i++)
        st = mrt_ir_set_rule_at(p->ir, &r.rule[i], p->err);
    mrt_spec_rules_free(&r);
    return st;
}

const mrt_rule *mrt_spec_given_rules(const mrt_spec_parser *p,
                                     const char *name)
{
    for (int i = 0; i < p->ntl; i++)
        if (!strcmp(p->tl[i].name, name))
            return p->tl[i].rules;
    return NULL;
}
