/*
 * derive.c — a loaded spec under other global rules (and perhaps
 * another mesh of the same rank count): mrt_spec_derive, which the
 * layout search calls thousands of times, and mrt_spec_select_alternative,
 * which picks a named `layouts:` alternative.
 *
 * No YAML is read again: the spec is copied (every array it owns, so
 * mrt_spec_destroy frees the copy like any spec) and the home layout of
 * every tensor that follows the global rules is resolved again by the
 * loader's own code (mrt_spec_apply_rules), so errors read and point the
 * same.  Tensors with their own layout keep it; on another mesh their
 * axes are found again by name.  The cost is linear in the number of
 * dims, tensors and ops.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grad_names.h"
#include "ir.h"

static const mrt_mark no_mark = {0, 0};

static int same_mesh(const mrt_mesh *a, const mrt_mesh *b)
{
    if (a == b)
        return 1;
    if (a->naxes != b->naxes)
        return 0;
    for (int i = 0; i < a->naxes; i++)
        if (a->size[i] != b->size[i] || strcmp(a->name[i], b->name[i]))
            return 0;
    return 1;
}

/* Moves the axes of t's own layout from r->s's mesh onto r->mesh by
 * name (map: old axis id -> new, or -1), then checks the splits. */
static mrt_status move_own_axes(const mrt_spec_resolver *r, mrt_spec_tensor *t,
                                const int map[])
{
    const mrt_spec *s = r->s;
    mrt_layout *l = &t->layout;
    char list[MRT_SPEC_LIST_MAX], mesh[MRT_NAME_MAX + 32];
    for (int i = 0; i < l->ndims; i++)
        for (int j = 0; j < l->naxes[i]; j++) {
            int old = l->axes[i][j];
            if (map[old] >= 0) {
                l->axes[i][j] = map[old];
                continue;
            }
            if (r->alt)
                snprintf(mesh, sizeof mesh, "the mesh of layout '%s'", r->alt);
            else
                snprintf(mesh, sizeof mesh, "the new mesh");
            return mrt_error_set(
                r->err, MRT_E_SPEC, s->path,
                t->split_mark[i].line ? t->split_mark[i] : t->shape_mark,
                "tensor '%s' splits dim '%s' over mesh axis '%s' in its own "
                "layout, but %s has no axis '%s' (it has: %s)",
                t->name, s->dim_name[l->dim[i]], s->mesh.name[old], mesh,
                s->mesh.name[old],
                mrt_spec_join(list, sizeof list, r->mesh->name[0],
                              sizeof r->mesh->name[0], r->mesh->naxes));
        }
    return MRT_OK;
}

mrt_status mrt_spec_rehome_all(const mrt_spec_resolver *r,
                               const mrt_rule rules[], mrt_spec_tensor *out,
                               const unsigned char *skip)
{
    const mrt_spec *s = r->s;
    int same = same_mesh(r->mesh, &s->mesh), map[MRT_MAX_AXES];
    mrt_spec_tensor scratch;
    for (int a = 0; a < s->mesh.naxes; a++)
        map[a] = mrt_mesh_find_axis(r->mesh, s->mesh.name[a]);
    for (int i = 0; i < s->ntensors; i++) {
        mrt_spec_tensor *t = out ? &out[i] : &scratch;
        mrt_status st = MRT_OK;
        if (skip && skip[i])
            continue;
        if (!out)
            scratch = s->tensor[i];
        if (!t->own_layout)
            st = mrt_spec_apply_rules(r, t, rules, 0);
        else if (!same)
            st = move_own_axes(r, t, map);
        if (st)
            return st;
    }
    return MRT_OK;
}

/* A copy of array a of n elements of size `size` (room for at least one,
 * so an empty array still gets a pointer), or NULL. */
static void *dup_array(const void *a, size_t n, size_t size)
{
    void *c = calloc(n + 1, size);
    if (c && n)
        memcpy(c, a, n * size);
    return c;
}

/* s with every array copied, and no `layouts:`; NULL when out of memory. */
static mrt_spec *copy_spec(const mrt_spec *s)
{
    mrt_spec *c = malloc(sizeof *c);
    if (!c)
        return NULL;
    *c = *s;
    /* the indexes first: until then c shares s's, which destroy frees */
    int index_failed = mrt_name_index_copy(&c->tensor_index, &s->tensor_index);
    index_failed |= mrt_name_index_copy(&c->dim_index, &s->dim_index);
    size_t nd = (size_t)s->ndims;
    c->dim_name = dup_array(s->dim_name, nd, sizeof *s->dim_name);
    c->dim_names = calloc(nd + 1, sizeof *c->dim_names);
    c->dim_size = dup_array(s->dim_size, nd, sizeof *s->dim_size);
    c->dim_mark = dup_array(s->dim_mark, nd, sizeof *s->dim_mark);
    c->rule = calloc(nd + 1, sizeof *c->rule);
    c->tensor = dup_array(s->tensor, (size_t)s->ntensors, sizeof *s->tensor);
    for (int i = 0; c->tensor && i < s->ntensors; i++)
        c->tensor[i].file = NULL; /* s's: copied below */
    c->op = dup_array(s->op, (size_t)s->nops, sizeof *s->op);
    c->output = dup_array(s->output, (size_t)s->noutputs, sizeof *s->output);
    int train_failed = mrt_train_copy(&c->train, &s->train) != MRT_OK;
    c->cap_tensors = s->ntensors + 1;
    c->cap_ops = s->nops + 1;
    c->nlayouts = 0;
    c->layouts = NULL;
    index_failed |= mrt_spec_blocks_copy(c, s);
    if (!c->dim_name || !c->dim_names || !c->dim_size || !c->dim_mark ||
        !c->rule || !c->tensor || !c->op || !c->output || index_failed ||
        train_failed) {
        mrt_spec_destroy(c);
        return NULL;
    }
    for (size_t i = 0; i < nd; i++)
        c->dim_names[i] = c->dim_name[i];
    for (int i = 0; i < s->ntensors; i++)
        if (s->tensor[i].file &&
            !(c->tensor[i].file = strdup(s->tensor[i].file))) {
            mrt_spec_destroy(c);
            return NULL;
        }
    return c;
}

static mrt_status derive(const mrt_spec *s, const mrt_rule *rules,
                         const mrt_mesh *mesh, const unsigned char *skip,
                         mrt_spec **out, mrt_error *err);

mrt_status mrt_spec_derive(const mrt_spec *s, const mrt_rule *rules,
                           const mrt_mesh *mesh, mrt_spec **out, mrt_error *err)
{
    return derive(s, rules, mesh, NULL, out, err);
}

/* mrt_spec_derive, leaving the tensors of skip (may be NULL) as they
 * are in s. */
static mrt_status derive(const mrt_spec *s, const mrt_rule *rules,
                         const mrt_mesh *mesh, const unsigned char *skip,
                         mrt_spec **out, mrt_error *err)
{
    if (out)
        *out = NULL;
    if (!s || !rules || !out)
        return mrt_error_set(err, MRT_E_USAGE, "", no_mark,
                             "mrt_spec_derive "
                             "needs a spec, rules and an out pointer");
    if (mesh && mesh->nranks != s->mesh.nranks)
        return mrt_error_set(err, MRT_E_USAGE, "", no_mark,
                             "mrt_spec_derive: "
                             "a mesh of %lld ranks for a spec of %lld",
                             (long long)mesh->nranks,
                             (long long)s->mesh.nranks);
    mrt_spec *c = copy_spec(s);
    if (!c)
        return mrt_error_set(err, MRT_E_NOMEM, s->path, no_mark,
                             "out of memory");
    if (mesh)
        c->mesh = *mesh;
    memcpy(c->rule, rules, (size_t)s->ndims * sizeof *rules);
    for (int d = 0; d < s->ndims; d++)
        for (int j = 0; j < rules[d].naxes; j++)
            assert(rules[d].axes[j] >= 0 && rules[d].axes[j] < c->mesh.naxes);
    const mrt_spec_resolver r = {s, &c->mesh, NULL, err};
    mrt_status st = mrt_spec_rehome_all(&r, c->rule, c->tensor, skip);
    if (st) {
        mrt_spec_destroy(c);
        return st;
    }
    *out = c;
    return MRT_OK;
}

mrt_status mrt_spec_select_alternative(const mrt_spec *s, const char *name,
                                       mrt_spec **out, mrt_error *err)
{
    char list[MRT_SPEC_LIST_MAX];
    if (out)
        *out = NULL;
    if (!s || !name || !out)
        return mrt_error_set(err, MRT_E_USAGE, "", no_mark,
                             "mrt_spec_select_alternative needs a spec, a name "
                             "and an out pointer");
    for (int i = 0; i < s->nlayouts; i++) {
        const mrt_spec_layout *l = &s->layouts[i];
        if (strcmp(l->name, name))
            continue;
        mrt_status st;
        if (l->broken) {
            const mrt_error *e = &l->error;
            st = mrt_error_set(err, e->code, e->file,
                               (mrt_mark){e->line, e->column}, "%s",
                               e->message);
            if (e->context[0])
                mrt_error_set_context(
                    err, (mrt_mark){e->context_line, e->context_column}, "%s",
                    e->context);
        } else {
            st = mrt_spec_derive_alt(s, l, out, err);
        }
        if (st)
            mrt_error_set_context(err, l->mark,
                                  "while applying alternative "
                                  "'%s' (an entry of layouts:)",
                                  l->name);
        return st;
    }
    if (s->nlayouts == 0)
        return mrt_error_set(err, MRT_E_USAGE, "", no_mark,
                             "unknown layout '%.100s' (the spec has no "
                             "layouts: block)",
                             name);
    return mrt_error_set(err, MRT_E_USAGE, "", no_mark,
                         "unknown layout '%.100s' (the spec's layouts: %s)",
                         name,
                         mrt_spec_join(list, sizeof list, s->layouts[0].name,
                                       sizeof s->layouts[0], s->nlayouts));
}

/* ---- alternatives with entries of their own ---- */

int *mrt_spec_alt_targets(const mrt_spec *s, const mrt_spec_layout *l,
                          int *nomem)
{
    *nomem = 0;
    if (!l->nentries)
        return NULL;
    int *t = malloc(((size_t)s->ntensors + 1) * sizeof *t);
    int *by_user = malloc(((size_t)s->nuser_ops + 2) * sizeof *by_user);
    if (!t || !by_user) {
        free(t);
        free(by_user);
        *nomem = 1;
        return NULL;
    }
    for (int u = 0; u <= s->nuser_ops + 1; u++)
        by_user[u] = -1;
    for (int i = 0; i < s->ntensors; i++)
        t[i] = s->tensor[i].grad_like || s->tensor[i].recomputes ||
                       s->tensor[i].opt_layout
                   ? MRT_ALT_FOLLOW
                   : -1;
    for (int e = 0; e < l->nentries; e++) {
        const mrt_spec_alt_entry *en = &l->entry[e];
        int op = s->tensor[en->tensor].producer;
        if (en->kind == MRT_ALT_TENSOR)
            t[en->tensor] = e;
        else if (en->kind == MRT_ALT_OP && op >= 0 && s->op[op].user > 0 &&
                 s->op[op].user <= s->nuser_ops)
            by_user[s->op[op].user] = e;
    }
    for (int i = 0; i < s->ntensors; i++) { /* an op's: its tensors */
        int op = s->tensor[i].producer;
        /* (and the masks it made inside, inputs that no op makes) */
        int user = op >= 0 && s->op[op].phase == MRT_PHASE_FORWARD
                       ? s->op[op].user
                       : s->tensor[i].mask_user;
        if (t[i] >= 0 || user <= 0 || user > s->nuser_ops)
            continue;
        if (by_user[user] >= 0)
            t[i] = by_user[user];
    }
    free(by_user);
    return t;
}

/* t takes from's layout on the dims it has (a gradient piece of from). */
static void follow(mrt_spec_tensor *t, const mrt_spec_tensor *from)
{
    for (int i = 0; i < t->layout.ndims; i++) {
        int j = mrt_layout_find_dim(&from->layout, t->layout.dim[i]);
        t->layout.naxes[i] = j < 0 ? 0 : from->layout.naxes[j];
        if (j >= 0) {
            memcpy(t->layout.axes[i], from->layout.axes[j],
                   sizeof t->layout.axes[i]);
            t->split_mark[i] = from->split_mark[j];
        }
    }
    t->layout.partial = 0;
    t->own_layout = from->own_layout;
}

/* The entry of alternative l of kind k for tensor x, or -1. */
static int kind_entry(const mrt_spec_layout *l, mrt_alt_kind k, int x)
{
    for (int e = 0; e < l->nentries; e++)
        if (l->entry[e].kind == k && l->entry[e].tensor == x)
            return e;
    return -1;
}

/* The entry of alternative l giving the gradient of tensor x, or -1. */
static int grad_entry(const mrt_spec_layout *l, int x)
{
    return kind_entry(l, MRT_ALT_GRAD, x);
}

mrt_status mrt_spec_alt_apply(const mrt_spec_resolver *r,
                              const mrt_spec_layout *l, const int *targets,
                              mrt_spec_tensor *out)
{
    const mrt_spec *s = r->s;
    mrt_spec_tensor scratch;
    mrt_status st = MRT_OK;
    if (!out) { /* check each entry on the tensors it applies to */
        for (int i = 0; !st && i < s->ntensors; i++)
            if (targets[i] >= 0) {
                scratch = s->tensor[i];
                st = mrt_spec_apply_rules(r, &scratch,
                                          l->entry[targets[i]].rule, 1);
            }
        for (int e = 0; !st && e < l->nentries; e++)
            if (l->entry[e].kind == MRT_ALT_GRAD ||
                l->entry[e].kind == MRT_ALT_OPTIMIZER) {
                scratch = s->tensor[l->entry[e].tensor];
                int g = l->entry[e].kind == MRT_ALT_GRAD;
                mrt_ir_name(NULL, g ? "grad:" : "",
                            s->tensor[l->entry[e].tensor].name, g ? "" : ":m",
                            0, scratch.name);
                st = mrt_spec_apply_rules(r, &scratch, l->entry[e].rule, 1);
            }
        return st;
    }
    for (int i = 0; !st && i < s->ntensors; i++) {
        mrt_spec_tensor *t = &out[i];
        int like = t->recomputes  ? t->recomputes - 1
                   : t->grad_like ? t->grad_like - 1
                                  : t->opt_layout - 1;
        int e = targets[i];
        if (e == MRT_ALT_FOLLOW && t->grad_piece &&
            (e = grad_entry(l, like)) < 0)
            e = MRT_ALT_FOLLOW;
        if (e == MRT_ALT_FOLLOW && t->opt_layout &&
            (e = kind_entry(l, MRT_ALT_OPTIMIZER, t->opt_layout - 1)) < 0)
            e = MRT_ALT_FOLLOW; /* optimizer_layout:, else the param's */
        if (e >= 0) {
            st = mrt_spec_apply_rules(r, t, l->entry[e].rule, 1);
            t->own_layout = 1;
        } else if (e == MRT_ALT_FOLLOW) {
            follow(t, &out[like]);
        }
    }
    return st;
}

mrt_status mrt_spec_derive_alt(const mrt_spec *s, const mrt_spec_layout *l,
                               mrt_spec **out, mrt_error *err)
{
    int nomem;
    if (out)
        *out = NULL;
    if (!s || !l || !out)
        return mrt_error_set(err, MRT_E_USAGE, "", no_mark,
                             "mrt_spec_"
                             "derive_alt needs a spec, an alternative and an "
                             "out pointer");
    int *targets = mrt_spec_alt_targets(s, l, &nomem);
    unsigned char *skip = targets ? calloc((size_t)s->ntensors + 1, 1) : NULL;
    if (nomem || (targets && !skip)) {
        free(targets);
        return mrt_error_set(err, MRT_E_NOMEM, s->path, no_mark,
                             "out of memory");
    }
    for (int i = 0; skip && i < s->ntensors; i++)
        skip[i] = targets[i] != -1;
    mrt_status st = derive(s, l->rule, l->has_mesh ? &l->mesh : NULL, skip, out,
                           err);
    if (!st && targets) {
        const mrt_spec_resolver r = {s, &(*out)->mesh, NULL, err};
        if ((st = mrt_spec_alt_apply(&r, l, targets, (*out)->tensor))) {
            mrt_spec_destroy(*out);
            *out = NULL;
        }
    }
    if (!st && l->has_mesh)
        (*out)->mesh_mark = l->mark;
    if (!st)
        (*out)->pinned = l->pin;
    if (!st && l->schedule >= 0)
        (*out)->train.schedule = (mrt_schedule_kind)l->schedule;
    if (!st && l->virtual_stages > 0)
        (*out)->train.virtual_stages = l->virtual_stages;
    if (!st && (l->schedule >= 0 || l->virtual_stages > 0))
        (*out)->train.schedule_mark = l->schedule_mark;
    for (int e = 0; !st && e < l->nentries; e++)
        if (l->entry[e].kind == MRT_ALT_RESHARD)
            (*out)->tensor[l->entry[e].tensor].reshard = 1;
    if (!st && l->zero_stage)
        mrt_spec_apply_zero(*out, l);
    if (!st && l->recompute &&
        (st = mrt_ir_recompute(*out, l->recompute, err))) {
        mrt_spec_destroy(*out);
        *out = NULL;
    }
    free(targets);
    free(skip);
    return st;
}
