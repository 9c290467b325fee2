/*
 * spec_layout.c — layout rules (dim -> mesh axes) read for the builder,
 * which names their dims and axes and resolves home layouts
 * (ir/build_check.c, ir/resolve.c).
 *
 * A rule maps one dim to an axis or to a sequence of axes, major first.
 * The global rules (top-level `layout:`) apply to every tensor that has
 * no `layout:` of its own; a tensor's (or op's) own mapping replaces them
 * entirely, and the dims it does not name are replicated.  As in
 * Mesh-TensorFlow, two different dims may map to the same axis in the
 * global rules, as long as no tensor has both: a layout uses each axis at
 * most once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec_parse.h"

/* The axes of one rule (value v of dim `dim`) into r, from axes[*used]
 * and marks[*used] on: the value's form is checked here, names there. */
static mrt_status read_rule(mrt_spec_parser *p, const yaml_node_t *v,
                            const char *dim, mrt_spec_rules *out,
                            mrt_ir_rule_at *r)
{
    char q[MRT_SPEC_QUOTE_MAX + 32];
    if (!v || (v->type != YAML_SEQUENCE_NODE &&
               (v->type != YAML_SCALAR_NODE || mrt_spec_is_null(v))))
        return mrt_spec_fail(p, v,
                             "expected a mesh axis or a sequence of "
                             "mesh axes for dim '%s', got %s",
                             dim, mrt_spec_what(v, q, sizeof q));
    int n = v->type == YAML_SEQUENCE_NODE ? mrt_spec_count(v) : 1;
    const char **axes = &out->axes[out->used];
    mrt_mark *marks = &out->marks[out->used];
    for (int j = 0; j < n; j++) {
        const yaml_node_t *a = v->type == YAML_SEQUENCE_NODE
                                   ? mrt_spec_item(p, v, j)
                                   : v;
        if (!a || a->type != YAML_SCALAR_NODE || mrt_spec_is_null(a) ||
            !mrt_spec_str(a))
            return mrt_spec_fail(p, a,
                                 "expected a mesh axis in the rule for "
                                 "dim '%s', got %s",
                                 dim, mrt_spec_what(a, q, sizeof q));
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
    return mrt_spec_read_rules_if(p, map, of, NULL, out);
}

mrt_status mrt_spec_read_rules_if(mrt_spec_parser *p, const yaml_node_t *map,
                                  const char *of,
                                  int (*keep)(const mrt_spec_parser *,
                                              const yaml_node_pair_t *),
                                  mrt_spec_rules *out)
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
        if (!keep || keep(p, pr))
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
        if (keep && !keep(p, pr))
            continue;
        st = read_rule(p, mrt_spec_node(p, pr->value), mrt_spec_str(k), out, r);
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

const mrt_rule *mrt_spec_given_rules(const mrt_spec_parser *p, const char *name)
{
    char full[MRT_NAME_MAX]; /* in a block: the instance's name, h3.w */
    if (p->ntl && mrt_ir_block_full_name(p->ir, name, full))
        name = full;
    for (int i = 0; i < p->ntl; i++)
        if (!strcmp(p->tl[i].name, name))
            return p->tl[i].rules;
    return NULL;
}
