/*
 * build_alts.c — named alternatives to the global rules
 * (mrt_ir_add_alternative, and mrt_ir_add_alternative_at for the YAML
 * front end's `layouts:`): each a full set of rules (dims it leaves out
 * are replicated), optionally a mesh of its own with the same number of
 * ranks, and layouts of its own for some tensors, ops and gradients.
 *
 * An alternative is checked when it is added, against every tensor
 * that follows its rules (and, on its own mesh, every tensor with its
 * own layout), so a typo in one that is rarely selected is reported at
 * once — at the alternative's rule.  That is why it comes after the last
 * op and the training block: the tensors are all there.
 *
 * With keep_broken (the loader was given --mesh or --dim: the mesh or
 * sizes are not the file's), an alternative that does not fit is not the
 * builder's error: it is kept, marked broken, with its error, which
 * mrt_spec_select_alternative returns (compare shows it in its row).
 * mrt_spec_derive_alt (derive.c) applies an alternative.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "grow.h"

static const mrt_ir_alternative_at no_marks;
static const mrt_ir_alt_entry_at no_entry;

/* The name messages give the program's mesh. */
static const char *mesh_name(const mrt_ir_call *c)
{
    const char *w = c->ir->mesh_what;
    if (w && strcmp(w, "the mesh"))
        return w; /* "the mesh given by --mesh" */
    return mrt_ir_yaml(c) ? "the spec's mesh" : "the program's mesh";
}

/* The mesh of alternative l: checked, and of the program's size. */
static mrt_status alt_mesh(mrt_ir_call *c, mrt_spec_layout *l,
                           const mrt_ir_alternative *a,
                           const mrt_ir_alternative_at *at)
{
    const mrt_mesh *m = &c->ir->s->mesh;
    mrt_status st = mrt_ir_mesh(c, a->naxes, a->axis, a->size, at->axis_mark,
                                at->size_mark, &l->mesh);
    if (st)
        return st;
    l->has_mesh = 1;
    if (l->mesh.nranks == m->nranks)
        return MRT_OK;
    mrt_ir_at(c, "naxes", &at->mesh_mark);
    return mrt_ir_fail(c, MRT_E_SPEC,
                       "layout '%s' has a mesh of %lld ranks "
                       "but %s has %lld",
                       l->name, (long long)l->mesh.nranks, mesh_name(c),
                       (long long)m->nranks);
}

/* A new entry of l for tensor id, kind, its rules (plain or with
 * marks); shape: the dims the layout may name (NULL: any). */
static mrt_status add_entry(mrt_ir_call *c, mrt_spec_layout *l, int id,
                            mrt_alt_kind kind, int n, const mrt_ir_rule *plain,
                            const mrt_ir_rule_at *at, const mrt_layout *shape,
                            const char *of)
{
    mrt_spec_alt_entry *e = &l->entry[l->nentries];
    e->tensor = id;
    e->kind = kind;
    e->rule = &l->entry_rules[(size_t)l->nentries * (size_t)c->ir->s->ndims];
    l->nentries++;
    if (kind == MRT_ALT_RESHARD)
        return MRT_OK;
    return mrt_ir_rules(c, n, at ? NULL : plain, at, shape, of, e->rule);
}

/* The tensor an entry of section `sec` names. */
static mrt_status entry_tensor(mrt_ir_call *c, const mrt_spec_layout *l,
                               const char *name, const mrt_ir_alt_entry_at *e,
                               const char *sec, int *id)
{
    const mrt_spec *s = c->ir->s;
    char list[MRT_SPEC_LIST_MAX];
    mrt_ir_at(c, sec, &e->mark);
    if (!mrt_ir_yaml(c))
        return mrt_ir_tensor_id(c, name, id);
    *id = name ? mrt_spec_find_tensor(s, name) : -1;
    if (*id < 0)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "unknown tensor %s in '%s' of "
                           "layout '%s' (the tensors are: %s)",
                           e->what, sec, l->name,
                           mrt_spec_join(list, sizeof list, s->tensor[0].name,
                                         sizeof s->tensor[0], s->ntensors));
    return MRT_OK;
}

/* 1 if tensor id has a gradient (training made pieces of it). */
static int has_grad(const mrt_spec *s, int id)
{
    for (int i = 0; i < s->ntensors; i++)
        if (s->tensor[i].grad_like == id + 1 && s->tensor[i].grad_piece)
            return 1;
    return 0;
}

/* 1 if tensor id is one of the parameters training updates. */
static int is_param(const mrt_spec *s, int id)
{
    for (int i = 0; i < s->train.nparams; i++)
        if (s->train.param[i] == id)
            return 1;
    return 0;
}

/* The `optimizer_layout:` of entry d for parameter id. */
static mrt_status optimizer_entry(mrt_ir_call *c, mrt_spec_layout *l,
                                  const mrt_ir_alternative_tensor *d,
                                  const mrt_ir_alt_entry_at *e, int marked,
                                  int id)
{
    const mrt_spec *s = c->ir->s;
    char of[2 * MRT_NAME_MAX + 64];
    mrt_ir_at(c, "tensors", &e->opt_mark);
    if (!is_param(s, id))
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "tensor '%s' is not a parameter (an "
                           "optimizer_layout is for the tensors of %s)",
                           s->tensor[id].name,
                           mrt_ir_yaml(c) ? "'params' of 'train'"
                                          : "the params of mrt_ir_set_train");
    snprintf(of, sizeof of, "the optimizer_layout of tensor '%s'",
             s->tensor[id].name);
    return add_entry(
        c, l, id, MRT_ALT_OPTIMIZER, marked ? e->nopt : d->noptimizer_layout,
        d->optimizer_layout, marked ? e->opt : NULL, &s->tensor[id].layout, of);
}

/* One entry of `tensors`: d, written at e (marks), for tensor `id`
 * (-1: the one d names). */
static mrt_status tensor_entry(mrt_ir_call *c, mrt_spec_layout *l,
                               const mrt_ir_alternative_tensor *d,
                               const mrt_ir_alt_entry_at *e, int marked, int id)
{
    const mrt_spec *s = c->ir->s;
    char of[2 * MRT_NAME_MAX + 64];
    int yaml = mrt_ir_yaml(c);
    mrt_status st = id >= 0 ? MRT_OK
                            : entry_tensor(c, l, d->name, e, "tensors", &id);
    if (st)
        return st;
    const mrt_spec_tensor *t = &s->tensor[id];
    snprintf(of, sizeof of, "the layout of tensor '%s'", t->name);
    if ((marked ? e->has_layout : d->layout != NULL) &&
        (st = add_entry(c, l, id, MRT_ALT_TENSOR,
                        marked ? e->nlayout : d->nlayout, d->layout,
                        marked ? e->layout : NULL, &t->layout, of)))
        return st;
    if (marked ? e->has_reshard : d->reshard_after_forward) {
        mrt_ir_at(c, "tensors", &e->reshard_mark);
        if (!is_param(s, id))
            return mrt_ir_fail(c, MRT_E_SPEC,
                               "tensor '%s' is not a "
                               "parameter (reshard_after_forward is for the "
                               "tensors of %s)",
                               t->name,
                               yaml ? "'params' of 'train'"
                                    : "the params of mrt_ir_set_train");
        if (d->reshard_after_forward &&
            (st = add_entry(c, l, id, MRT_ALT_RESHARD, 0, NULL, NULL, NULL,
                            NULL)))
            return st;
    }
    if ((marked ? e->has_opt : d->optimizer_layout != NULL) &&
        (st = optimizer_entry(c, l, d, e, marked, id)))
        return st;
    if (!(marked ? e->has_grad : d->grad_layout != NULL))
        return MRT_OK;
    mrt_ir_at(c, "tensors", &e->grad_mark);
    if (!has_grad(s, id))
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "tensor '%s' has no gradient (a "
                           "grad_layout is for the tensors on a path from "
                           "%s to the loss)",
                           t->name,
                           yaml ? "'params' or 'grads' of 'train'"
                                : "the params or grads of mrt_ir_set_train");
    snprintf(of, sizeof of, "the grad_layout of tensor '%s'", t->name);
    return add_entry(c, l, id, MRT_ALT_GRAD,
                     marked ? e->ngrad : d->ngrad_layout, d->grad_layout,
                     marked ? e->grad : NULL, &t->layout, of);
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

/* One entry of `ops`: d, written at e (marks), for the op making
 * tensor `id` (-1: the one d names). */
static mrt_status op_entry(mrt_ir_call *c, mrt_spec_layout *l,
                           const mrt_ir_alternative_op *d,
                           const mrt_ir_alt_entry_at *e, int marked, int id)
{
    const mrt_spec *s = c->ir->s;
    char of[2 * MRT_NAME_MAX + 64];
    mrt_layout buf;
    mrt_status st = id >= 0 ? MRT_OK
                            : entry_tensor(c, l, d->out, e, "ops", &id);
    if (st)
        return st;
    int op = s->tensor[id].producer;
    if (op < 0 || s->op[op].phase != MRT_PHASE_FORWARD || s->op[op].user <= 0)
        return mrt_ir_yaml(c)
                   ? mrt_ir_fail(c, MRT_E_SPEC,
                                 "'%s' in 'ops' of layout '%s' "
                                 "is not made by an op of the spec (an op is "
                                 "named by its 'out'; give an input its "
                                 "layout under 'tensors')",
                                 s->tensor[id].name, l->name)
                   : mrt_ir_fail(c, MRT_E_SPEC,
                                 "'%s' is not made by an op "
                                 "(an op is named by its out; give an input "
                                 "its layout in tensors)",
                                 s->tensor[id].name);
    if (!(marked ? e->has_layout : d->layout != NULL))
        return MRT_OK;
    snprintf(of, sizeof of, "the layout of op %d (%s)", s->op[op].user,
             s->tensor[id].name);
    return add_entry(c, l, id, MRT_ALT_OP, marked ? e->nlayout : d->nlayout,
                     d->layout, marked ? e->layout : NULL, op_dims(s, id, &buf),
                     of);
}

/* The entries an entry named `name` makes: one per instance for a
 * block reference "h.w" (ids: up to ids_cap of them), else 1. */
static int entry_count(const mrt_spec *s, const char *name)
{
    int n = mrt_ir_block_ref_ids(s, name, NULL);
    return n > 0 ? n : 1;
}

/* Entry d (tensors: op 0, ops: op 1) for every tensor its name stands
 * for (a block reference: one per instance). */
static mrt_status entries_of(mrt_ir_call *c, mrt_spec_layout *l, int op,
                             const void *d, const mrt_ir_alt_entry_at *e,
                             int marked)
{
    const mrt_ir_alternative_tensor *t = d;
    const mrt_ir_alternative_op *o = d;
    const char *name = op ? o->out : t->name;
    int n = mrt_ir_block_ref_ids(c->ir->s, name, NULL);
    int *ids = n > 0 ? calloc((size_t)n, sizeof *ids) : NULL;
    mrt_status st = MRT_OK;
    if (n > 0 && !ids)
        return mrt_ir_fail(c, MRT_E_NOMEM, "out of memory");
    if (n > 0)
        mrt_ir_block_ref_ids(c->ir->s, name, ids);
    for (int k = 0; !st && k < (n > 0 ? n : 1); k++) {
        int id = n > 0 ? ids[k] : -1;
        st = op ? op_entry(c, l, o, e, marked, id)
                : tensor_entry(c, l, t, e, marked, id);
    }
    free(ids);
    return st;
}

/* The entries of alternative l, tensors then ops. */
static mrt_status alt_entries(mrt_ir_call *c, mrt_spec_layout *l,
                              const mrt_ir_alternative *a,
                              const mrt_ir_alternative_at *at)
{
    size_t n = 0;
    int marked = at != &no_marks;
    mrt_status st = MRT_OK;
    c->arg = "tensors";
    if (a->ntensors < 0 || a->nops < 0 || (a->ntensors && !a->tensors) ||
        (a->nops && !a->ops))
        return mrt_ir_fail(c, MRT_E_USAGE,
                           "expected lists of %d tensors "
                           "and %d ops",
                           a->ntensors, a->nops);
    for (int i = 0; i < a->ntensors; i++)
        n += 4 * (size_t)entry_count(c->ir->s, a->tensors[i].name);
    for (int i = 0; i < a->nops; i++)
        n += (size_t)entry_count(c->ir->s, a->ops[i].out);
    if (!n)
        return MRT_OK;
    l->entry = calloc(n, sizeof *l->entry);
    l->entry_rules = calloc(n * ((size_t)c->ir->s->ndims + 1),
                            sizeof *l->entry_rules);
    if (!l->entry || !l->entry_rules)
        return mrt_ir_fail(c, MRT_E_NOMEM, "out of memory");
    for (int i = 0; !st && i < a->ntensors; i++)
        st = entries_of(c, l, 0, &a->tensors[i],
                        marked ? &at->tensors[i] : &no_entry, marked);
    for (int i = 0; !st && i < a->nops; i++)
        st = entries_of(c, l, 1, &a->ops[i], marked ? &at->ops[i] : &no_entry,
                        marked);
    return st;
}

/* Checks every tensor under alternative l: its rules re-resolve the
 * tensors its entries do not place, then the entries are checked. */
static mrt_status rehome(mrt_ir_call *c, mrt_spec_layout *l)
{
    const mrt_spec *s = c->ir->s;
    const mrt_spec_resolver r = {s, l->has_mesh ? &l->mesh : &s->mesh, l->name,
                                 &c->e};
    int nomem;
    int *targets = mrt_spec_alt_targets(s, l, &nomem);
    unsigned char *skip = targets ? calloc((size_t)s->ntensors + 1, 1) : NULL;
    mrt_status st = MRT_OK;
    c->arg = "rules";
    if (nomem || (targets && !skip))
        st = mrt_ir_fail(c, MRT_E_NOMEM, "out of memory");
    for (int i = 0; !st && skip && i < s->ntensors; i++)
        skip[i] = targets[i] != -1;
    if (!st)
        st = mrt_spec_rehome_all(&r, l->rule, NULL, skip);
    if (!st && targets)
        st = mrt_spec_alt_apply(&r, l, targets, NULL);
    free(targets);
    free(skip);
    return st;
}

/* The blocks alternative l recomputes (a's recompute_all and names). */
static mrt_status alt_recompute(mrt_ir_call *c, mrt_spec_layout *l,
                                const mrt_ir_alternative *a,
                                const mrt_ir_alternative_at *at)
{
    const mrt_spec *s = c->ir->s;
    char list[MRT_SPEC_LIST_MAX];
    if (!a->recompute_all && a->nrecompute <= 0)
        return MRT_OK;
    l->recompute_mark = at->recompute_mark;
    mrt_ir_at(c, "recompute", &at->recompute_mark);
    if (s->train.loss < 0)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "recompute of layout '%s' needs a train: "
                           "(recomputation re-runs forward ops in the "
                           "backward pass)",
                           l->name);
    if (!s->nblocks)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "recompute of layout '%s': the program has no "
                           "block (a repeat: item of ops:) to recompute",
                           l->name);
    if (!(l->recompute = calloc((size_t)s->nblocks, 1)))
        return mrt_ir_fail(c, MRT_E_NOMEM, "out of memory");
    for (int b = 0; a->recompute_all && b < s->nblocks; b++)
        l->recompute[b] = 1;
    for (int j = 0; !a->recompute_all && j < a->nrecompute; j++) {
        int b = 0;
        while (b < s->nblocks && strcmp(s->block[b].name, a->recompute[j]))
            b++;
        if (at->recompute_marks)
            mrt_ir_at(c, "recompute", &at->recompute_marks[j]);
        if (b == s->nblocks)
            return mrt_ir_fail(
                c, MRT_E_SPEC,
                "unknown block '%.100s' in recompute of layout '%s' (the "
                "program's blocks: %s)",
                a->recompute[j], l->name,
                mrt_spec_join(list, sizeof list, s->block[0].name,
                              sizeof s->block[0], s->nblocks));
        l->recompute[b] = 1;
    }
    return MRT_OK;
}

/* `zero:` of alternative l: a stage 1-3 of a spec that trains, over
 * axes of l's mesh (each once). */
static mrt_status alt_zero(mrt_ir_call *c, mrt_spec_layout *l,
                           const mrt_ir_alternative *a,
                           const mrt_ir_alternative_at *at)
{
    const mrt_spec *s = c->ir->s;
    const mrt_mesh *m = l->has_mesh ? &l->mesh : &s->mesh;
    char list[MRT_SPEC_LIST_MAX];
    if (!a->zero_stage && !a->zero_naxes)
        return MRT_OK;
    c->arg = "zero_stage";
    mrt_ir_at(c, "zero", &at->zero_mark);
    if (s->train.loss < 0)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "layout '%s' has 'zero' but the spec does not "
                           "train (zero shards what 'train' makes)",
                           l->name);
    mrt_ir_at(c, "zero", &at->zero_stage_mark);
    if (a->zero_stage < 1 || a->zero_stage > 3)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "the zero stage of layout '%s' must be 1, 2 or "
                           "3, got %d",
                           l->name, a->zero_stage);
    mrt_ir_at(c, "zero", &at->zero_mark);
    if (a->zero_naxes < 1 || !a->zero_axes)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "the zero of layout '%s' needs 'axes': the mesh "
                           "axes to shard over",
                           l->name);
    for (int i = 0; i < a->zero_naxes; i++) {
        int ax = a->zero_axes[i] ? mrt_mesh_find_axis(m, a->zero_axes[i]) : -1;
        mrt_ir_at(c, "zero",
                  at->zero_axis_mark ? &at->zero_axis_mark[i] : &at->zero_mark);
        if (ax < 0)
            return mrt_ir_fail(
                c, MRT_E_SPEC,
                "unknown mesh axis '%s' in the zero axes of layout '%s' "
                "(the mesh has: %s)",
                a->zero_axes[i] ? a->zero_axes[i] : "(null)", l->name,
                mrt_spec_join(list, sizeof list, m->name[0], sizeof m->name[0],
                              m->naxes));
        if (l->zero_axes & (1u << ax))
            return mrt_ir_fail(c, MRT_E_SPEC,
                               "mesh axis '%s' is listed twice in the zero "
                               "axes of layout '%s'",
                               a->zero_axes[i], l->name);
        l->zero_axes |= 1u << ax;
    }
    l->zero_stage = a->zero_stage;
    return MRT_OK;
}

/* Alternative l (named already) from a: its mesh, rules and entries,
 * then every tensor under it. */
static mrt_status fill(mrt_ir_call *c, mrt_spec_layout *l,
                       const mrt_ir_alternative *a,
                       const mrt_ir_alternative_at *at)
{
    mrt_ir *ir = c->ir;
    char of[MRT_NAME_MAX + 16], what[MRT_NAME_MAX + 32];
    int marked = at != &no_marks;
    mrt_status st = MRT_OK;
    snprintf(of, sizeof of, "layout '%s'", l->name);
    snprintf(what, sizeof what, "the mesh of layout '%s'", l->name);
    if ((marked ? at->has_mesh : a->naxes != 0) && (st = alt_mesh(c, l, a, at)))
        return st;
    ir->rule_mesh = l->has_mesh ? &l->mesh : NULL;
    ir->rule_mesh_what = what;
    c->arg = "rules";
    st = mrt_ir_rules(c, marked ? at->nrules : a->nrules,
                      marked ? NULL : a->rules, marked ? at->rules : NULL, NULL,
                      of, l->rule);
    if (!st)
        st = alt_entries(c, l, a, at);
    if (!st)
        st = alt_recompute(c, l, a, at);
    if (!st)
        st = alt_zero(c, l, a, at);
    ir->rule_mesh = NULL;
    ir->rule_mesh_what = NULL;
    return st ? st : rehome(c, l);
}

/* A new alternative named name in the spec (owned by it), or an error. */
static mrt_status new_alt(mrt_ir_call *c, const char *name, mrt_mark at,
                          mrt_spec_layout **out)
{
    mrt_spec *s = c->ir->s;
    mrt_ir_at(c, "name", &at);
    mrt_status st = mrt_ir_check_name(c, name, "layout");
    for (int i = 0; !st && i < s->nlayouts; i++)
        if (!strcmp(s->layouts[i].name, name))
            st = mrt_ir_fail(c, MRT_E_SPEC, "layout '%s' is given twice", name);
    if (!st && mrt_grow((void **)&s->layouts, &c->ir->cap_layouts,
                        s->nlayouts + 1, sizeof *s->layouts))
        st = mrt_ir_fail(c, MRT_E_NOMEM, "out of memory");
    if (st)
        return st;
    mrt_spec_layout *l = &s->layouts[s->nlayouts];
    memset(l, 0, sizeof *l);
    snprintf(l->name, sizeof l->name, "%s", name);
    l->mark = at;
    if (!(l->rule = calloc((size_t)s->ndims + 1, sizeof *l->rule)))
        return mrt_ir_fail(c, MRT_E_NOMEM, "out of memory");
    s->nlayouts++; /* owned by s from here, whatever happens */
    *out = l;
    return MRT_OK;
}

/* The alternative's own schedule: and virtual_stages: (train:'s when
 * not given). */
static mrt_status alt_schedule(mrt_ir_call *c, mrt_spec_layout *l,
                               const mrt_ir_alternative *a,
                               const mrt_ir_alternative_at *at)
{
    l->schedule = -1;
    l->schedule_mark = a->schedule ? at->schedule_mark : at->virtual_mark;
    mrt_ir_at(c, "schedule", &at->schedule_mark);
    if (a->schedule && (l->schedule = mrt_schedule_kind_find(a->schedule)) < 0)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "unknown schedule '%s' of layout '%s' (expected: "
                           "gpipe, 1f1b, interleaved, zero_bubble)",
                           a->schedule, a->name);
    mrt_ir_at(c, "virtual_stages", &at->virtual_mark);
    if (a->virtual_stages < 0 || a->virtual_stages > MRT_MICROBATCHES_MAX)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "the virtual stages of layout '%s' must be from "
                           "1 to %d",
                           a->name, MRT_MICROBATCHES_MAX);
    l->virtual_stages = (int)a->virtual_stages;
    mrt_ir_at(c, "alt", NULL);
    return MRT_OK;
}

mrt_status mrt_ir_add_alternative_at(mrt_ir *ir, const mrt_ir_alternative *a,
                                     const mrt_ir_alternative_at *at,
                                     mrt_error *err)
{
    mrt_ir_call c;
    mrt_spec_layout *l = NULL;
    mrt_status st = mrt_ir_begin(&c, ir, "mrt_ir_add_alternative");
    c.arg = "alt";
    if (!st && !a)
        st = mrt_ir_fail(&c, MRT_E_USAGE, "NULL");
    if (!at)
        at = &no_marks;
    c.entry = at->mark;
    if (!st)
        st = new_alt(&c, a->name, at->mark, &l);
    if (st)
        return mrt_ir_end(&c, st, err);
    l->pin = a->pin != 0;
    st = alt_schedule(&c, l, a, at);
    if (st)
        return mrt_ir_end(&c, st, err);
    if (at->broken) { /* its form, found by the front end */
        c.e = *at->broken;
        c.worded = 1;
        st = at->broken->code;
    } else {
        st = fill(&c, l, a, at);
    }
    if (st != MRT_E_SPEC || !ir->keep_broken)
        return mrt_ir_end(&c, st, err);
    /* On a mesh or dims not the file's: kept with its error (compare
     * shows it in its row; the others still plan), and the builder goes
     * on, so its error is not the first that sticks.  Its context: the
     * entry being applied, where the error's own mark is elsewhere. */
    l->broken = 1;
    mrt_ir_end(&c, st, &l->error);
    mrt_error_set_context(&l->error, at->mark,
                          "while applying alternative '%s' (an entry "
                          "of layouts:)",
                          a->name);
    memset(&ir->error, 0, sizeof ir->error);
    return MRT_OK;
}

mrt_status mrt_ir_add_alternative(mrt_ir *ir, const mrt_ir_alternative *alt,
                                  mrt_error *err)
{
    return mrt_ir_add_alternative_at(ir, alt, NULL, err);
}
