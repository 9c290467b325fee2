/*
 * spec_alts.c — the `layouts:` section: named alternatives to the global
 * rules, read here and handed to the builder (mrt_ir_add_alternative_at,
 * ir/build_alts.c), which checks each against every tensor and keeps it
 * in the program.  This file checks only their form: node types, keys,
 * names, numbers, `reshard_after_forward:` a plain true or false,
 * `recompute:` true, false or a list of block names.
 *
 * Inside an alternative, the key `mesh` with a mapping value is its
 * mesh; any other value makes it a rule for a dim called `mesh`.  So
 * are `tensors` and `ops` with a mapping value its sections of layouts
 * of its own (a rule's value is never a mapping), and `pin` its flag
 * (pin: true: planned pinned, as --planner rules plans) unless the spec
 * has a dim called `pin` and the value is not a plain true or false;
 * `zero: {stage: 1|2|3, axes: [data]}` (a mapping, unless no dim is
 * called zero) shards the optimizer state, gradients and parameters
 * over the axes (ir/zero.c):
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
 * With --mesh or --dim (the mesh or sizes are not the file's), an
 * alternative whose form is wrong is passed on with that error: the
 * builder keeps it broken, as it keeps one that does not fit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec_parse.h"

/* One alternative as read: the builder's arguments and their storage. */
typedef struct alt_read {
    mrt_ir_alternative a;
    mrt_ir_alternative_at at;
    char name[MRT_NAME_MAX];
    mrt_spec_mesh mesh;
    mrt_spec_rules rules;
    mrt_ir_alternative_tensor *tensors;
    mrt_ir_alternative_op *ops;
    mrt_ir_alt_entry_at *tensor_at, *op_at;
    mrt_spec_rules *entry_rules; /* [3 per tensor + 1 per op] */
    int nentry_rules;
    char (*what)[MRT_SPEC_QUOTE_MAX + 32]; /* each entry's key */
    int nwhat;
    const char **recompute; /* `recompute:`'s names, into: */
    char (*recompute_names)[MRT_NAME_MAX];
    mrt_mark *recompute_marks;
    const char *zero_axes[MRT_MAX_AXES]; /* `zero:`'s axes, their marks */
    mrt_mark zero_axis_mark[MRT_MAX_AXES];
} alt_read;

static void alt_free(alt_read *r)
{
    mrt_spec_rules_free(&r->rules);
    for (int i = 0; i < r->nentry_rules; i++)
        mrt_spec_rules_free(&r->entry_rules[i]);
    free(r->entry_rules);
    free(r->tensors);
    free(r->ops);
    free(r->tensor_at);
    free(r->op_at);
    free(r->what);
    free(r->recompute);
    free(r->recompute_names);
    free(r->recompute_marks);
}

/* 1 if pair pr of an alternative is its mesh (see the top). */
static int is_mesh(const mrt_spec_parser *p, const yaml_node_pair_t *pr)
{
    const char *key = mrt_spec_str(mrt_spec_node(p, pr->key));
    const yaml_node_t *v = mrt_spec_node(p, pr->value);
    return key && !strcmp(key, "mesh") &&
           (mrt_spec_find_dim(p->spec, "mesh") < 0 ||
            (v && v->type == YAML_MAPPING_NODE));
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

int mrt_spec_plain_bool(const yaml_node_t *v)
{
    const char *b = v && v->type == YAML_SCALAR_NODE &&
                            v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE
                        ? mrt_spec_str(v)
                        : NULL;
    return !b ? -1 : !strcmp(b, "true") ? 1 : !strcmp(b, "false") ? 0 : -1;
}

/* 1 if pair pr of an alternative is its `pin:` flag (see the top). */
static int is_pin(const mrt_spec_parser *p, const yaml_node_pair_t *pr)
{
    const char *key = mrt_spec_str(mrt_spec_node(p, pr->key));
    return key && !strcmp(key, "pin") &&
           (mrt_spec_find_dim(p->spec, "pin") < 0 ||
            mrt_spec_plain_bool(mrt_spec_node(p, pr->value)) >= 0);
}

/* 1 if pair pr of an alternative is its `recompute:` (a dim called
 * recompute takes a rule unless the value is a plain true or false or a
 * list). */
static int is_recompute(const mrt_spec_parser *p, const yaml_node_pair_t *pr)
{
    const char *key = mrt_spec_str(mrt_spec_node(p, pr->key));
    const yaml_node_t *v = mrt_spec_node(p, pr->value);
    return key && !strcmp(key, "recompute") &&
           (mrt_spec_find_dim(p->spec, "recompute") < 0 ||
            mrt_spec_plain_bool(v) >= 0 ||
            (v && v->type == YAML_SEQUENCE_NODE));
}

/* 1 if pair pr of an alternative is its pipeline's `schedule:` or
 * `virtual_stages:` (unless the spec has a dim of that name). */
static int is_schedule(const mrt_spec_parser *p, const yaml_node_pair_t *pr)
{
    const char *key = mrt_spec_str(mrt_spec_node(p, pr->key));
    return key &&
           (!strcmp(key, "schedule") || !strcmp(key, "virtual_stages")) &&
           mrt_spec_find_dim(p->spec, key) < 0;
}

/* 1 if pair pr of an alternative is its `zero:` (a mapping, or any
 * value when no dim is called zero). */
static int is_zero(const mrt_spec_parser *p, const yaml_node_pair_t *pr)
{
    const char *key = mrt_spec_str(mrt_spec_node(p, pr->key));
    const yaml_node_t *v = mrt_spec_node(p, pr->value);
    return key && !strcmp(key, "zero") &&
           (mrt_spec_find_dim(p->spec, "zero") < 0 ||
            (v && v->type == YAML_MAPPING_NODE));
}

/* 1 if pair pr of an alternative is one of its rules. */
static int is_rule(const mrt_spec_parser *p, const yaml_node_pair_t *pr)
{
    return !is_mesh(p, pr) && !is_section(p, pr) && !is_pin(p, pr) &&
           !is_schedule(p, pr) && !is_recompute(p, pr) && !is_zero(p, pr);
}

/* `zero: {stage: 1|2|3, axes: [data, ...]}` of alternative r; the
 * builder checks the stage and the axes against the mesh. */
static mrt_status read_zero(mrt_spec_parser *p, alt_read *r,
                            const yaml_node_t *v)
{
    static const char *const keys[] = {"stage", "axes", NULL};
    char of[MRT_NAME_MAX + 32];
    int64_t stage = 0;
    snprintf(of, sizeof of, "the zero of layout '%s'", r->name);
    mrt_status st = mrt_spec_expect(p, v, YAML_MAPPING_NODE, of);
    if (!st)
        st = mrt_spec_check_keys(p, v, keys, of);
    if (st)
        return st;
    const yaml_node_t *sn = mrt_spec_get(p, v, "stage"),
                      *an = mrt_spec_get(p, v, "axes");
    r->at.zero_mark = mrt_spec_mark(v);
    r->at.zero_stage_mark = mrt_spec_mark(sn ? sn : v);
    if (!sn || !an)
        return mrt_spec_fail(p, v, "%s needs 'stage' and 'axes'", of);
    snprintf(of, sizeof of, "the zero stage of layout '%s'", r->name);
    if ((st = mrt_spec_count_max(p, sn, of, 3, &stage)))
        return st;
    snprintf(of, sizeof of, "the zero axes of layout '%s'", r->name);
    if ((st = mrt_spec_expect(p, an, YAML_SEQUENCE_NODE, of)))
        return st;
    int n = mrt_spec_count(an);
    if (n > MRT_MAX_AXES)
        return mrt_spec_fail(p, an, "%s: %d axes, at most %d", of, n,
                             MRT_MAX_AXES);
    for (int i = 0; i < n; i++) {
        const yaml_node_t *it = mrt_spec_item(p, an, i);
        if ((st = mrt_spec_expect(p, it, YAML_SCALAR_NODE, of)))
            return st;
        r->zero_axes[i] = mrt_spec_str(it);
        r->zero_axis_mark[i] = mrt_spec_mark(it);
    }
    r->a.zero_stage = (int)stage;
    r->a.zero_naxes = n;
    r->a.zero_axes = r->zero_axes;
    r->at.zero_axis_mark = r->zero_axis_mark;
    return MRT_OK;
}

/* The rules of mapping n (`of` names it) into the next entry_rules. */
static mrt_status entry_rules(mrt_spec_parser *p, alt_read *r,
                              const yaml_node_t *n, const char *of, int *count,
                              const mrt_ir_rule_at **rules)
{
    mrt_spec_rules *out = &r->entry_rules[r->nentry_rules++];
    mrt_status st = mrt_spec_read_rules(p, n, of, out);
    *count = out->n;
    *rules = out->rule;
    return st;
}

/* The key of an entry: its name (NULL when it cannot be one) and how
 * messages quote it. */
static const char *entry_key(const mrt_spec_parser *p, alt_read *r,
                             const yaml_node_t *k, mrt_ir_alt_entry_at *e)
{
    char *what = r->what[r->nwhat++];
    e->mark = mrt_spec_mark(k);
    e->what = mrt_spec_what(k, what, sizeof r->what[0]);
    return mrt_spec_is_null(k) ? NULL : mrt_spec_str(k);
}

/* `reshard_after_forward:` (node v) of tensor `name`: only plain true
 * and false, a bool that reads as one in every YAML version (not yes/on,
 * not the string "true"). */
static mrt_status reshard(mrt_spec_parser *p, const alt_read *r,
                          const char *name, const yaml_node_t *v, int *out)
{
    char q[MRT_SPEC_QUOTE_MAX + 32];
    if ((*out = mrt_spec_plain_bool(v)) < 0)
        return mrt_spec_fail(p, v,
                             "reshard_after_forward of tensor '%s' in "
                             "layout '%s' must be true or false, got %s",
                             name, r->name, mrt_spec_what(v, q, sizeof q));
    return MRT_OK;
}

/* One entry of `tensors:`: key k, value v. */
static mrt_status tensor_entry(mrt_spec_parser *p, alt_read *r,
                               const yaml_node_t *k, const yaml_node_t *v)
{
    static const char *const keys[] = {"layout", "grad_layout",
                                       "reshard_after_forward",
                                       "optimizer_layout", NULL};
    char in[2 * MRT_NAME_MAX + 64], of[2 * MRT_NAME_MAX + 64];
    mrt_ir_alt_entry_at *e = &r->tensor_at[r->a.ntensors];
    mrt_ir_alternative_tensor *d = &r->tensors[r->a.ntensors++];
    const char *name = d->name = entry_key(p, r, k, e);
    if (!name || (mrt_spec_find_tensor(p->spec, name) < 0 &&
                  !mrt_ir_block_ref_ids(p->spec, name, NULL)))
        return MRT_OK; /* the builder names the problem: unknown tensor */
    snprintf(in, sizeof in, "tensor '%s' of layout '%s'", name, r->name);
    mrt_status st = mrt_spec_expect(p, v, YAML_MAPPING_NODE, in);
    if (!st)
        st = mrt_spec_check_keys(p, v, keys, in);
    if (st)
        return st;
    const yaml_node_t *lay = mrt_spec_get(p, v, "layout");
    const yaml_node_t *grad = mrt_spec_get(p, v, "grad_layout");
    const yaml_node_t *rs = mrt_spec_get(p, v, "reshard_after_forward");
    snprintf(of, sizeof of, "the layout of tensor '%s'", name);
    e->has_layout = lay != NULL;
    if (lay && (st = entry_rules(p, r, lay, of, &e->nlayout, &e->layout)))
        return st;
    e->has_reshard = rs != NULL;
    e->reshard_mark = mrt_spec_mark(rs);
    if (rs && (st = reshard(p, r, name, rs, &d->reshard_after_forward)))
        return st;
    const yaml_node_t *opt = mrt_spec_get(p, v, "optimizer_layout");
    snprintf(of, sizeof of, "the optimizer_layout of tensor '%s'", name);
    e->has_opt = opt != NULL;
    e->opt_mark = mrt_spec_mark(opt);
    if (opt && (st = entry_rules(p, r, opt, of, &e->nopt, &e->opt)))
        return st;
    if (!grad)
        return MRT_OK;
    e->has_grad = 1;
    e->grad_mark = mrt_spec_mark(grad);
    snprintf(of, sizeof of, "the grad_layout of tensor '%s'", name);
    return entry_rules(p, r, grad, of, &e->ngrad, &e->grad);
}

/* The number (from 1) of the spec op making tensor `name` (of the
 * first instance's, for a block reference "h.y"), or 0: it words the
 * messages about the op's entry. */
static int op_number(const mrt_spec_parser *p, const char *name)
{
    const mrt_spec *s = p->spec;
    int id = mrt_spec_find_tensor(s, name);
    int n = id < 0 ? mrt_ir_block_ref_ids(s, name, NULL) : 0;
    int *ids = n > 0 ? calloc((size_t)n, sizeof *ids) : NULL;
    if (ids) {
        mrt_ir_block_ref_ids(s, name, ids);
        id = ids[0];
        free(ids);
    }
    int op = id < 0 ? -1 : s->tensor[id].producer;
    return op < 0 || s->op[op].phase != MRT_PHASE_FORWARD ? 0 : s->op[op].user;
}

/* One entry of `ops:`: key k (the op's `out`), value v. */
static mrt_status op_entry(mrt_spec_parser *p, alt_read *r,
                           const yaml_node_t *k, const yaml_node_t *v)
{
    static const char *const keys[] = {"layout", NULL};
    char in[2 * MRT_NAME_MAX + 64], of[2 * MRT_NAME_MAX + 64];
    mrt_ir_alt_entry_at *e = &r->op_at[r->a.nops];
    mrt_ir_alternative_op *d = &r->ops[r->a.nops++];
    const char *name = d->out = entry_key(p, r, k, e);
    int op = name ? op_number(p, name) : 0;
    if (op <= 0) /* the builder names the problem */
        return MRT_OK;
    snprintf(in, sizeof in, "op %d of layout '%s'", op, r->name);
    mrt_status st = mrt_spec_expect(p, v, YAML_MAPPING_NODE, in);
    if (!st)
        st = mrt_spec_check_keys(p, v, keys, in);
    const yaml_node_t *lay = st ? NULL : mrt_spec_get(p, v, "layout");
    snprintf(of, sizeof of, "the layout of op %d (%s)", op, name);
    e->has_layout = lay != NULL;
    if (lay)
        st = entry_rules(p, r, lay, of, &e->nlayout, &e->layout);
    return st;
}

/* Room for the entries of the sections of alternative map. */
static mrt_status alloc_entries(mrt_spec_parser *p, alt_read *r,
                                const yaml_node_t *map)
{
    size_t n = 0;
    for (const yaml_node_pair_t *pr = map->data.mapping.pairs.start;
         pr < map->data.mapping.pairs.top; pr++)
        if (is_section(p, pr))
            n += (size_t)mrt_spec_count(mrt_spec_node(p, pr->value));
    r->tensors = calloc(n + 1, sizeof *r->tensors);
    r->ops = calloc(n + 1, sizeof *r->ops);
    r->tensor_at = calloc(n + 1, sizeof *r->tensor_at);
    r->op_at = calloc(n + 1, sizeof *r->op_at);
    r->entry_rules = calloc(3 * n + 1, sizeof *r->entry_rules);
    r->what = calloc(n + 1, sizeof *r->what);
    if (!r->tensors || !r->ops || !r->tensor_at || !r->op_at ||
        !r->entry_rules || !r->what)
        return mrt_spec_nomem(p);
    return MRT_OK;
}

/* The sections of alternative map, after its rules. */
static mrt_status read_sections(mrt_spec_parser *p, alt_read *r,
                                const yaml_node_t *map)
{
    mrt_status st = alloc_entries(p, r, map);
    for (const yaml_node_pair_t *pr = map->data.mapping.pairs.start;
         !st && pr < map->data.mapping.pairs.top; pr++) {
        if (!is_section(p, pr))
            continue;
        const yaml_node_t *sec = mrt_spec_node(p, pr->value);
        int ops = !strcmp(mrt_spec_str(mrt_spec_node(p, pr->key)), "ops");
        char of[MRT_NAME_MAX + 32];
        snprintf(of, sizeof of, "'%s' of layout '%s'", ops ? "ops" : "tensors",
                 r->name);
        if ((st = mrt_spec_check_keys(p, sec, NULL, of)))
            break;
        for (const yaml_node_pair_t *e = sec->data.mapping.pairs.start;
             !st && e < sec->data.mapping.pairs.top; e++)
            st = (ops ? op_entry : tensor_entry)(p, r, mrt_spec_node(p, e->key),
                                                 mrt_spec_node(p, e->value));
    }
    r->at.tensors = r->tensor_at;
    r->at.ops = r->op_at;
    r->a.tensors = r->tensors;
    r->a.ops = r->ops;
    return st;
}

/* `pin:` (node v) of alternative r: a plain true or false. */
static mrt_status read_pin(mrt_spec_parser *p, alt_read *r,
                           const yaml_node_t *v)
{
    char q[MRT_SPEC_QUOTE_MAX + 32];
    if ((r->a.pin = mrt_spec_plain_bool(v)) < 0)
        return mrt_spec_fail(p, v,
                             "pin of layout '%s' must be true or false, "
                             "got %s",
                             r->name, mrt_spec_what(v, q, sizeof q));
    return MRT_OK;
}

/* `schedule:` (a name) or `virtual_stages:` (a count) of alternative r:
 * pair pr. */
static mrt_status read_schedule(mrt_spec_parser *p, alt_read *r,
                                const yaml_node_pair_t *pr)
{
    const char *key = mrt_spec_str(mrt_spec_node(p, pr->key));
    const yaml_node_t *v = mrt_spec_node(p, pr->value);
    char what[MRT_NAME_MAX + 48], q[MRT_SPEC_QUOTE_MAX + 32];
    snprintf(what, sizeof what, "the '%s' of layout '%s'", key, r->name);
    if (!strcmp(key, "virtual_stages")) {
        r->at.virtual_mark = mrt_spec_mark(v);
        return mrt_spec_count_max(p, v, what, MRT_MICROBATCHES_MAX,
                                  &r->a.virtual_stages);
    }
    r->at.schedule_mark = mrt_spec_mark(v);
    if (!(r->a.schedule = mrt_spec_str(v)))
        return mrt_spec_fail(p, v,
                             "%s must be a name (gpipe, 1f1b, "
                             "interleaved, zero_bubble), got %s",
                             what, mrt_spec_what(v, q, sizeof q));
    return MRT_OK;
}

/* `recompute:` (node v) of alternative r: true, false, or a list of
 * block names. */
static mrt_status read_recompute(mrt_spec_parser *p, alt_read *r,
                                 const yaml_node_t *v)
{
    char q[MRT_SPEC_QUOTE_MAX + 32];
    int n = v->type == YAML_SEQUENCE_NODE ? mrt_spec_count(v) : 0;
    r->at.recompute_mark = mrt_spec_mark(v);
    if (v->type != YAML_SEQUENCE_NODE) {
        if ((r->a.recompute_all = mrt_spec_plain_bool(v)) < 0)
            return mrt_spec_fail(p, v,
                                 "recompute of layout '%s' must be true, "
                                 "false or a list of blocks, got %s",
                                 r->name, mrt_spec_what(v, q, sizeof q));
        return MRT_OK;
    }
    r->recompute = calloc((size_t)n + 1, sizeof *r->recompute);
    r->recompute_marks = calloc((size_t)n + 1, sizeof *r->recompute_marks);
    r->recompute_names = calloc((size_t)n + 1, sizeof *r->recompute_names);
    if (!r->recompute || !r->recompute_marks || !r->recompute_names)
        return mrt_spec_fail(p, v, "out of memory");
    mrt_status st = MRT_OK;
    for (int i = 0; !st && i < n; i++) {
        const yaml_node_t *x = mrt_spec_item(p, v, i);
        r->recompute_marks[i] = mrt_spec_mark(x);
        st = mrt_spec_name(p, x, "block", r->recompute_names[i]);
        r->recompute[i] = r->recompute_names[i];
    }
    r->a.nrecompute = n;
    r->a.recompute = r->recompute;
    r->at.recompute_marks = r->recompute_marks;
    return st;
}

/* The form of alternative r (mapping map): its pin, mesh, rules,
 * sections. */
static mrt_status read_alt(mrt_spec_parser *p, alt_read *r,
                           const yaml_node_t *map)
{
    char of[MRT_NAME_MAX + 16], what[MRT_NAME_MAX + 32];
    snprintf(of, sizeof of, "layout '%s'", r->name);
    snprintf(what, sizeof what, "the mesh of layout '%s'", r->name);
    mrt_status st = mrt_spec_expect(p, map, YAML_MAPPING_NODE, of);
    if (!st)
        st = mrt_spec_check_keys(p, map, NULL, of);
    for (const yaml_node_pair_t *pr = st ? NULL : map->data.mapping.pairs.start;
         !st && pr < map->data.mapping.pairs.top; pr++) {
        if (is_pin(p, pr)) {
            st = read_pin(p, r, mrt_spec_node(p, pr->value));
            continue;
        }
        if (is_schedule(p, pr)) {
            st = read_schedule(p, r, pr);
            continue;
        }
        if (is_recompute(p, pr)) {
            st = read_recompute(p, r, mrt_spec_node(p, pr->value));
            continue;
        }
        if (is_zero(p, pr)) {
            st = read_zero(p, r, mrt_spec_node(p, pr->value));
            continue;
        }
        if (!is_mesh(p, pr))
            continue;
        st = mrt_spec_read_mesh(p, mrt_spec_node(p, pr->value), what, &r->mesh);
        r->at.has_mesh = 1;
        r->at.mesh_mark = r->mesh.mark;
        r->at.axis_mark = r->mesh.axis_mark;
        r->at.size_mark = r->mesh.size_mark;
        r->a.naxes = r->mesh.n;
        r->a.axis = r->mesh.axis;
        r->a.size = r->mesh.size;
    }
    if (!st)
        st = mrt_spec_read_rules_if(p, map, of, is_rule, &r->rules);
    r->at.nrules = r->rules.n;
    r->at.rules = r->rules.rule;
    return st ? st : read_sections(p, r, map);
}

/* One alternative: key k (its name), value v.  With --mesh or --dim, a
 * problem of form is the alternative's own (passed on as broken). */
static mrt_status parse_alt(mrt_spec_parser *p, const yaml_node_t *k,
                            const yaml_node_t *v)
{
    alt_read r;
    memset(&r, 0, sizeof r);
    mrt_status st = mrt_spec_name(p, k, "layout", r.name);
    if (st)
        return st;
    r.a.name = r.name;
    r.at.mark = mrt_spec_mark(k);
    mrt_error form = {0}, *err = p->err;
    int defer = p->mesh_overridden || p->dims_overridden;
    if (defer)
        p->err = &form;
    st = read_alt(p, &r, v);
    p->err = err;
    if (defer && st == MRT_E_SPEC) {
        r.at.broken = &form;
        st = MRT_OK;
    } else if (defer && st) { /* out of memory: the load's own error */
        mrt_error_set(err, st, form.file, (mrt_mark){form.line, form.column},
                      "%s", form.message);
    }
    if (!st)
        st = mrt_ir_add_alternative_at(p->ir, &r.a, &r.at, p->err);
    alt_free(&r);
    return st;
}

mrt_status mrt_spec_parse_layouts(mrt_spec_parser *p, const yaml_node_t *map)
{
    return mrt_spec_each_entry(p, map, "'layouts'", parse_alt);
}
