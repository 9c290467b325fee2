/*
 * spec_alts.c — the `layouts:` section: named alternatives to the global
 * rules, each a full set of rules (dims it leaves out are replicated)
 * and optionally a mesh of its own with the same number of ranks.
 *
 * `meshrt ... --layout NAME` (mrt_spec_select_layout) plans the spec
 * under one of them.  Every alternative is checked here, at load time,
 * against every tensor that follows the global rules (and, on its own
 * mesh, every tensor with its own layout), so a typo in one that is
 * rarely selected is still reported at once — at the alternative's rule.
 *
 * With --mesh or --dim (the mesh or sizes are not the file's), an
 * alternative that does not fit them is not an error of the load: it is
 * kept, marked broken, with its error, which mrt_spec_select_layout
 * returns.
 *
 * Inside an alternative, the key `mesh` with a mapping value is its
 * mesh; any other value makes it a rule for a dim called `mesh`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec_parse.h"

/* The pair of alternative map that is its mesh, or NULL. */
static const yaml_node_pair_t *mesh_pair(const mrt_spec_parser *p,
                                         const yaml_node_t *map)
{
    int dim_called_mesh = mrt_spec_find_dim(p->spec, "mesh") >= 0;
    for (const yaml_node_pair_t *pr = map->data.mapping.pairs.start;
         pr < map->data.mapping.pairs.top; pr++) {
        const char *key = mrt_spec_str(mrt_spec_node(p, pr->key));
        const yaml_node_t *v = mrt_spec_node(p, pr->value);
        if (key && !strcmp(key, "mesh") &&
            (!dim_called_mesh || (v && v->type == YAML_MAPPING_NODE)))
            return pr;
    }
    return NULL;
}

/* The mesh of alternative l (node v): parsed, and of the spec's size. */
static mrt_status alt_mesh(mrt_spec_parser *p, mrt_spec_layout *l,
                           const yaml_node_t *v, const char *what)
{
    const mrt_mesh *m = &p->spec->mesh;
    mrt_status st = mrt_spec_parse_mesh(p, v, what, &l->mesh);
    if (st)
        return st;
    l->has_mesh = 1;
    if (l->mesh.nranks == m->nranks)
        return MRT_OK;
    return mrt_spec_fail(p, v, "layout '%s' has a mesh of %lld ranks but %s "
                         "has %lld", l->name, (long long)l->mesh.nranks,
                         p->mesh_overridden ? "the mesh given by --mesh"
                                            : "the spec's mesh",
                         (long long)m->nranks);
}

/* The rules (and mesh) of alternative l, mapping map. */
static mrt_status alt_rules(mrt_spec_parser *p, mrt_spec_layout *l,
                            const yaml_node_t *map)
{
    char of[MRT_NAME_MAX + 16], what[MRT_NAME_MAX + 32];
    snprintf(of, sizeof of, "layout '%s'", l->name);
    snprintf(what, sizeof what, "the mesh of layout '%s'", l->name);
    mrt_status st = mrt_spec_expect(p, map, YAML_MAPPING_NODE, of);
    if (!st)
        st = mrt_spec_check_keys(p, map, NULL, of);
    if (st)
        return st;
    const yaml_node_pair_t *mp = mesh_pair(p, map);
    if (mp && (st = alt_mesh(p, l, mrt_spec_node(p, mp->value), what)))
        return st;
    p->rule_mesh = l->has_mesh ? &l->mesh : NULL;
    p->rule_mesh_what = l->has_mesh ? what : NULL;
    for (const yaml_node_pair_t *pr = map->data.mapping.pairs.start;
         !st && pr < map->data.mapping.pairs.top; pr++)
        if (pr != mp)
            st = mrt_spec_parse_rule(p, mrt_spec_node(p, pr->key),
                                     mrt_spec_node(p, pr->value), NULL, of,
                                     l->rule);
    p->rule_mesh = NULL;
    p->rule_mesh_what = NULL;
    return st;
}

/* One alternative: key k (its name), value v. */
static mrt_status parse_alt(mrt_spec_parser *p, const yaml_node_t *k,
                            const yaml_node_t *v)
{
    mrt_spec *s = p->spec;
    mrt_spec_layout *l = &s->layouts[s->nlayouts];
    mrt_status st = mrt_spec_name(p, k, "layout", l->name);
    if (st)
        return st;
    l->mark = mrt_spec_mark(k);
    if (!(l->rule = calloc((size_t)s->ndims + 1, sizeof *l->rule)))
        return mrt_spec_nomem(p);
    s->nlayouts++; /* owned by s from here, whatever happens */
    /* On a mesh or dims given on the command line, an alternative that
     * no longer fits is kept with its error (compare shows it in its
     * row; --layout of another still plans). */
    mrt_error *err = p->err;
    int defer = p->mesh_overridden || p->dims_overridden;
    if (defer)
        p->err = &l->error;
    if (!(st = alt_rules(p, l, v))) {
        const mrt_spec_resolver r = {s, l->has_mesh ? &l->mesh : &s->mesh,
                                     l->name, p->err};
        st = mrt_spec_rehome_all(&r, l->rule, NULL);
    }
    p->err = err;
    if (defer && st == MRT_E_SPEC) {
        l->broken = 1;
        return MRT_OK;
    }
    if (defer && st) /* out of memory: the load's own error */
        mrt_error_set(err, st, l->error.file,
                      (mrt_mark){l->error.line, l->error.column}, "%s",
                      l->error.message);
    return st;
}

mrt_status mrt_spec_parse_layouts(mrt_spec_parser *p, const yaml_node_t *map)
{
    mrt_spec *s = p->spec;
    mrt_status st = mrt_spec_expect(p, map, YAML_MAPPING_NODE, "'layouts'");
    if (!st)
        st = mrt_spec_check_keys(p, map, NULL, "'layouts'");
    if (st)
        return st;
    s->layouts = calloc((size_t)mrt_spec_count(map) + 1, sizeof *s->layouts);
    if (!s->layouts)
        return mrt_spec_nomem(p);
    for (yaml_node_pair_t *pr = map->data.mapping.pairs.start;
         !st && pr < map->data.mapping.pairs.top; pr++)
        st = parse_alt(p, mrt_spec_node(p, pr->key),
                       mrt_spec_node(p, pr->value));
    return st;
}
