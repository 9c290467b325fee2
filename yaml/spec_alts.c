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
 * mesh; any other value makes it a rule for a dim called `mesh`.  So
 * are `tensors` and `ops` with a mapping value its sections of layouts
 * of its own (a rule's value is never a mapping):
 *
 *   zero3:
 *     batch: [data, model]
 *     tensors:
 *       w1: {layout: {d_ff: [data, model]}}     # the tensor (and, as
 *                                               # every gradient, grad:w1)
 *       w2: {layout: {}, grad_layout: {d_ff: [data, model]}}
 *     ops:
 *       y: {layout: {batch: data}}              # the op making y, and
 *                                               # the tensors inside it
 *
 * A `layout:` there replaces the tensor's home layout as a tensor's own
 * `layout:` does; `grad_layout:` is the layout of every piece of its
 * gradient (grad:w2, grad:w2:d, ...), which otherwise follows the
 * tensor's; `reshard_after_forward: true` (a parameter of `train:` only)
 * has the backward pass move the parameter again from its home layout
 * instead of reusing the copy the forward pass moved (FSDP's option).
 * mrt_spec_derive_alt (ir/derive.c) applies them.
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

/* 1 if pair pr of an alternative is a section: `tensors` or `ops` with
 * a mapping value. */
static int is_section(const mrt_spec_parser *p, const yaml_node_pair_t *pr)
{
    const char *key = mrt_spec_str(mrt_spec_node(p, pr->key));
    const yaml_node_t *v = mrt_spec_node(p, pr->value);
    return key && (!strcmp(key, "tensors") || !strcmp(key, "ops")) && v &&
           v->type == YAML_MAPPING_NODE;
}

/* A new entry of l for tensor id, kind, its rules from mapping n; shape:
 * the dims the layout may name (NULL: any). */
static mrt_status add_entry(mrt_spec_parser *p, mrt_spec_layout *l, int id,
                            mrt_alt_kind kind, const yaml_node_t *n,
                            const mrt_layout *shape, const char *of)
{
    mrt_spec_alt_entry *e = &l->entry[l->nentries];
    e->tensor = id;
    e->kind = kind;
    e->rule = &l->entry_rules[(size_t)l->nentries * (size_t)p->spec->ndims];
    l->nentries++;
    return mrt_spec_parse_rules(p, n, shape, of, e->rule);
}

/* The tensor named by key k of section `what` of alternative l. */
static mrt_status entry_tensor(mrt_spec_parser *p, const mrt_spec_layout *l,
                               const yaml_node_t *k, const char *what,
                               int *id)
{
    const mrt_spec *s = p->spec;
    char q[MRT_SPEC_QUOTE_MAX + 32], list[MRT_SPEC_LIST_MAX];
    const char *name = mrt_spec_str(k);
    *id = name && !mrt_spec_is_null(k) ? mrt_spec_find_tensor(s, name) : -1;
    if (*id < 0)
        return mrt_spec_fail(p, k, "unknown tensor %s in '%s' of layout '%s' "
                             "(the tensors are: %s)",
                             mrt_spec_what(k, q, sizeof q), what, l->name,
                             mrt_spec_join(list, sizeof list, s->tensor[0].name,
                                           sizeof s->tensor[0], s->ntensors));
    return MRT_OK;
}

/* The dims the layout of the op making tensor id may name: those of the
 * tensors it makes and of their inputs (NULL when there are too many to
 * list, which leaves the check to the rules' own). */
static const mrt_layout *op_dims(const mrt_spec *s, int id, mrt_layout *buf)
{
    int user = s->op[s->tensor[id].producer].user;
    memset(buf, 0, sizeof *buf);
    for (int i = 0; i < s->nops && s->op[i].phase == MRT_PHASE_FORWARD; i++) {
        if (s->op[i].user != user)
            continue;
        int ts[3] = {s->op[i].out, s->op[i].in[0],
                     s->op[i].nin > 1 ? s->op[i].in[1] : s->op[i].in[0]};
        for (int k = 0; k < 3; k++) {
            const mrt_layout *t = &s->tensor[ts[k]].layout;
            for (int d = 0; d < t->ndims; d++) {
                if (mrt_layout_find_dim(buf, t->dim[d]) >= 0)
                    continue;
                if (buf->ndims == MRT_MAX_DIMS)
                    return NULL;
                buf->dim[buf->ndims] = t->dim[d];
                buf->size[buf->ndims++] = t->size[d];
            }
        }
    }
    return buf;
}

/* 1 if tensor id has a gradient (train: made pieces of it). */
static int has_grad(const mrt_spec *s, int id)
{
    for (int i = 0; i < s->ntensors; i++)
        if (s->tensor[i].grad_like == id + 1 && s->tensor[i].grad_piece)
            return 1;
    return 0;
}

/* 1 if tensor id is one of the parameters `train:` updates. */
static int is_param(const mrt_spec *s, int id)
{
    for (int i = 0; i < s->train.nparams; i++)
        if (s->train.param[i] == id)
            return 1;
    return 0;
}

/* `reshard_after_forward:` (node v) of tensor id: true adds an entry
 * to l, false none; anything else, or a tensor that is not a parameter,
 * is an error at v.  Only plain true and false: a bool that reads as one
 * in every YAML version (not yes/on, not the string "true"). */
static mrt_status reshard_entry(mrt_spec_parser *p, mrt_spec_layout *l,
                                int id, const yaml_node_t *v)
{
    const mrt_spec *s = p->spec;
    char q[MRT_SPEC_QUOTE_MAX + 32];
    const char *b = v && v->type == YAML_SCALAR_NODE &&
                    v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE
                        ? mrt_spec_str(v) : NULL;
    if (!b || (strcmp(b, "true") && strcmp(b, "false")))
        return mrt_spec_fail(p, v, "reshard_after_forward of tensor '%s' in "
                             "layout '%s' must be true or false, got %s",
                             s->tensor[id].name, l->name,
                             mrt_spec_what(v, q, sizeof q));
    if (!is_param(s, id))
        return mrt_spec_fail(p, v, "tensor '%s' is not a parameter "
                             "(reshard_after_forward is for the tensors of "
                             "'params' of 'train')", s->tensor[id].name);
    if (!strcmp(b, "false"))
        return MRT_OK;
    mrt_spec_alt_entry *e = &l->entry[l->nentries];
    e->tensor = id;
    e->kind = MRT_ALT_RESHARD;
    e->rule = &l->entry_rules[(size_t)l->nentries * (size_t)s->ndims];
    l->nentries++;
    return MRT_OK;
}

/* One entry of the `tensors:` section: key k, value v. */
static mrt_status tensor_entry(mrt_spec_parser *p, mrt_spec_layout *l,
                               const yaml_node_t *k, const yaml_node_t *v)
{
    static const char *const keys[] = {"layout", "grad_layout",
                                       "reshard_after_forward", NULL};
    const mrt_spec *s = p->spec;
    char in[2 * MRT_NAME_MAX + 64], of[2 * MRT_NAME_MAX + 64];
    int id;
    mrt_status st = entry_tensor(p, l, k, "tensors", &id);
    if (st)
        return st;
    const mrt_spec_tensor *t = &s->tensor[id];
    snprintf(in, sizeof in, "tensor '%s' of layout '%s'", t->name, l->name);
    if ((st = mrt_spec_expect(p, v, YAML_MAPPING_NODE, in)) ||
        (st = mrt_spec_check_keys(p, v, keys, in)))
        return st;
    const yaml_node_t *lay = mrt_spec_get(p, v, "layout");
    const yaml_node_t *grad = mrt_spec_get(p, v, "grad_layout");
    const yaml_node_t *reshard = mrt_spec_get(p, v, "reshard_after_forward");
    snprintf(of, sizeof of, "the layout of tensor '%s'", t->name);
    if (lay && (st = add_entry(p, l, id, MRT_ALT_TENSOR, lay, &t->layout, of)))
        return st;
    if (reshard && (st = reshard_entry(p, l, id, reshard)))
        return st;
    if (!grad)
        return MRT_OK;
    if (!has_grad(s, id))
        return mrt_spec_fail(p, grad, "tensor '%s' has no gradient (a "
                             "grad_layout is for the tensors on a path from "
                             "'params' or 'grads' of 'train' to the loss)",
                             t->name);
    snprintf(of, sizeof of, "the grad_layout of tensor '%s'", t->name);
    return add_entry(p, l, id, MRT_ALT_GRAD, grad, &t->layout, of);
}

/* One entry of the `ops:` section: key k (the op's `out`), value v. */
static mrt_status op_entry(mrt_spec_parser *p, mrt_spec_layout *l,
                           const yaml_node_t *k, const yaml_node_t *v)
{
    static const char *const keys[] = {"layout", NULL};
    const mrt_spec *s = p->spec;
    char in[2 * MRT_NAME_MAX + 64], of[2 * MRT_NAME_MAX + 64];
    mrt_layout buf;
    int id;
    mrt_status st = entry_tensor(p, l, k, "ops", &id);
    if (st)
        return st;
    int op = s->tensor[id].producer;
    if (op < 0 || s->op[op].phase != MRT_PHASE_FORWARD || s->op[op].user <= 0)
        return mrt_spec_fail(p, k, "'%s' in 'ops' of layout '%s' is not made "
                             "by an op of the spec (an op is named by its "
                             "'out'; give an input its layout under "
                             "'tensors')", s->tensor[id].name, l->name);
    snprintf(in, sizeof in, "op %d of layout '%s'", s->op[op].user, l->name);
    if ((st = mrt_spec_expect(p, v, YAML_MAPPING_NODE, in)) ||
        (st = mrt_spec_check_keys(p, v, keys, in)))
        return st;
    const yaml_node_t *lay = mrt_spec_get(p, v, "layout");
    snprintf(of, sizeof of, "the layout of op %d (%s)", s->op[op].user,
             s->tensor[id].name);
    return lay ? add_entry(p, l, id, MRT_ALT_OP, lay, op_dims(s, id, &buf), of)
               : MRT_OK;
}

/* The sections of alternative l (mapping map), after its rules. */
static mrt_status alt_sections(mrt_spec_parser *p, mrt_spec_layout *l,
                               const yaml_node_t *map)
{
    mrt_status st = MRT_OK;
    size_t n = 0;
    for (const yaml_node_pair_t *pr = map->data.mapping.pairs.start;
         pr < map->data.mapping.pairs.top; pr++)
        if (is_section(p, pr))
            n += 3 * (size_t)mrt_spec_count(mrt_spec_node(p, pr->value));
    if (!n)
        return MRT_OK;
    l->entry = calloc(n, sizeof *l->entry);
    l->entry_rules = calloc(n * ((size_t)p->spec->ndims + 1),
                            sizeof *l->entry_rules);
    if (!l->entry || !l->entry_rules)
        return mrt_spec_nomem(p);
    for (const yaml_node_pair_t *pr = map->data.mapping.pairs.start;
         !st && pr < map->data.mapping.pairs.top; pr++) {
        if (!is_section(p, pr))
            continue;
        const yaml_node_t *sec = mrt_spec_node(p, pr->value);
        int ops = !strcmp(mrt_spec_str(mrt_spec_node(p, pr->key)), "ops");
        char of[MRT_NAME_MAX + 32];
        snprintf(of, sizeof of, "'%s' of layout '%s'", ops ? "ops" : "tensors",
                 l->name);
        if ((st = mrt_spec_check_keys(p, sec, NULL, of)))
            break;
        for (const yaml_node_pair_t *e = sec->data.mapping.pairs.start;
             !st && e < sec->data.mapping.pairs.top; e++)
            st = (ops ? op_entry : tensor_entry)(p, l, mrt_spec_node(p, e->key),
                                                 mrt_spec_node(p, e->value));
    }
    return st;
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
        if (pr != mp && !is_section(p, pr))
            st = mrt_spec_parse_rule(p, mrt_spec_node(p, pr->key),
                                     mrt_spec_node(p, pr->value), NULL, of,
                                     l->rule);
    if (!st)
        st = alt_sections(p, l, map);
    p->rule_mesh = NULL;
    p->rule_mesh_what = NULL;
    return st;
}

/* Checks every tensor under alternative l: its rules re-resolve the
 * tensors its entries do not place, then the entries are checked. */
static mrt_status rehome(mrt_spec_parser *p, mrt_spec_layout *l)
{
    mrt_spec *s = p->spec;
    const mrt_spec_resolver r = {s, l->has_mesh ? &l->mesh : &s->mesh,
                                 l->name, p->err};
    int nomem;
    int *targets = mrt_spec_alt_targets(s, l, &nomem);
    unsigned char *skip = targets ? calloc((size_t)s->ntensors + 1, 1) : NULL;
    if (nomem || (targets && !skip)) {
        free(targets);
        return mrt_spec_nomem(p);
    }
    for (int i = 0; skip && i < s->ntensors; i++)
        skip[i] = targets[i] != -1;
    mrt_status st = mrt_spec_rehome_all(&r, l->rule, NULL, skip);
    if (!st && targets)
        st = mrt_spec_alt_apply(&r, l, targets, NULL);
    free(targets);
    free(skip);
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
    if (!(st = alt_rules(p, l, v)))
        st = rehome(p, l);
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
