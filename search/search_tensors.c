/*
 * search_tensors.c — meshrt.h's mrt_search_tensors_create (`meshrt
 * search --per-tensor`, `--activations`): the search over global rules
 * widened to a layout of its own for each parameter (the `train:`
 * params; without `train:`, every input) and each activation asked for.
 *
 * Each parameter either keeps what the spec gives it (the global rules,
 * or the `layout:` of its entry) or has a layout of its own, in place
 * of that: every mesh axis of size > 1 on none or one of its dims (axes
 * on a dim in mesh order), every split one the planner takes
 * (mrt_split_ok).  For every combination of those choices the program
 * is copied with them (mrt_spec_with_layouts: in memory, from the IR,
 * as if each chosen layout were written in the parameter's `layout:`,
 * so its gradient and update follow it exactly as in the spec one
 * pastes), and the global rules are searched on the copy with
 * mrt_search_rules_create.  The K best and the Pareto front of the
 * whole space are merged from those of each combination, which is
 * exact: a layout among the K best overall is among the K best of its
 * combination, and one on the overall front is on its combination's
 * front.  `exhaustive` plans every candidate of every combination.
 * Equal candidates (a parameter given by its own layout exactly what the
 * rules give it, same figures) count once.
 *
 * Activations (results of the program's ops, by their `out:`) named in
 * `activations` ("h,r", or "all") are searched the same way after the
 * parameters: each either follows the rules (or its op's `layout:`) or
 * has a layout of its own, as if written in its op's `layout:`.  With
 * "all", op results are taken in op order while the combinations stay
 * within MRT_SEARCH_MAX_COMBOS; the rest are listed in `left`.
 */
#include <stdlib.h>
#include <string.h>

#include "search_rules.h"
#include "split.h"
#include "with_layouts.h"

/* One parameter's choices: [0] follows the rules; then own layouts. */
typedef struct choices {
    int n;
    mrt_rule *rules; /* [n * ndims]; row 0 unused */
} choices;

typedef struct walker {
    const mrt_spec *s;
    const mrt_layout *l;
    int na, ax[MRT_MAX_AXES];
    int on[MRT_MAX_AXES]; /* the tensor dim each axis splits, or -1 */
    choices *c;
    int fail;
} walker;

/* Appends the layout of w->on as rules by dim id. */
static void add_choice(walker *w)
{
    const mrt_spec *s = w->s;
    mrt_rule *grown = realloc(
        w->c->rules, (size_t)(w->c->n + 1) * (size_t)s->ndims * sizeof *grown);
    if (!grown) {
        w->fail = 1;
        return;
    }
    w->c->rules = grown;
    mrt_rule *r = &grown[(size_t)w->c->n++ * (size_t)s->ndims];
    memset(r, 0, (size_t)s->ndims * sizeof *r);
    for (int k = 0; k < w->na; k++)
        if (w->on[k] >= 0) {
            mrt_rule *d = &r[w->l->dim[w->on[k]]];
            d->axes[d->naxes++] = w->ax[k];
        }
}

/* Axis k on no dim of the tensor, then on each it may split. */
static void walk(walker *w, int k, int64_t *parts)
{
    if (w->fail)
        return;
    if (k == w->na) {
        add_choice(w);
        return;
    }
    w->on[k] = -1;
    walk(w, k + 1, parts);
    for (int i = 0; i < w->l->ndims; i++) {
        int64_t saved = parts[i];
        parts[i] = saved * w->s->mesh.size[w->ax[k]];
        if (mrt_split_ok(w->l->size[i], parts[i])) {
            w->on[k] = i;
            walk(w, k + 1, parts);
        }
        parts[i] = saved;
    }
    w->on[k] = -1;
}

static int make_choices(const mrt_spec *s, int t, choices *c)
{
    walker w = {.s = s, .l = &s->tensor[t].layout, .c = c};
    int64_t parts[MRT_MAX_DIMS];
    for (int a = 0; a < s->mesh.naxes; a++)
        if (s->mesh.size[a] > 1)
            w.ax[w.na++] = a;
    for (int i = 0; i < MRT_MAX_DIMS; i++)
        parts[i] = 1;
    c->n = 0;
    c->rules = NULL;
    add_choice(&w); /* row 0: follows the rules (its content unused) */
    walk(&w, 0, parts);
    return w.fail ? -1 : 0;
}

typedef struct merger {
    const mrt_spec *s;
    mrt_search_tensors_report *r;
    mrt_search_tensors_item *all;
    int64_t n, cap;
} merger;

static void item_free(mrt_search_tensors_item *x)
{
    free(x->rule);
    free(x->own);
    free(x->follows);
}

/* The rules searched tensor i of x actually has on dim d. */
static const mrt_search_axes *
effective(const merger *m, const mrt_search_tensors_item *x, int i, int d)
{
    return x->follows[i] ? &x->rule[d]
                         : &x->own[(size_t)i * (size_t)m->s->ndims + d];
}

static int same_rule(const mrt_search_axes *a, const mrt_search_axes *b)
{
    return a->naxes == b->naxes &&
           !memcmp(a->axis, b->axis, (size_t)a->naxes * sizeof a->axis[0]);
}

/* Same figures, same rules, and every searched tensor laid out alike. */
static int same_layouts(const merger *m, const mrt_search_tensors_item *x,
                        const mrt_search_tensors_item *y)
{
    const mrt_spec *s = m->s;
    if (mrt_rules_cmp_totals(&x->totals, &y->totals))
        return 0;
    for (int d = 0; d < s->ndims; d++)
        if (!same_rule(&x->rule[d], &y->rule[d]))
            return 0;
    for (int i = 0; i < m->r->ntensors; i++) {
        const mrt_layout *l = &s->tensor[m->r->tensor[i]].layout;
        for (int j = 0; j < l->ndims; j++)
            if (!same_rule(effective(m, x, i, l->dim[j]),
                           effective(m, y, i, l->dim[j])))
                return 0;
    }
    return 1;
}

static mrt_status add_result(merger *m, const mrt_search_rules_item *res,
                             int64_t combo, const choices *ch, const int *pick)
{
    const mrt_spec *s = m->s;
    size_t nd = (size_t)s->ndims, np = (size_t)m->r->ntensors;
    if (m->n == m->cap) {
        int64_t ncap = m->cap ? 2 * m->cap : 64;
        mrt_search_tensors_item *g = realloc(m->all, (size_t)ncap * sizeof *g);
        if (!g)
            return MRT_E_NOMEM;
        m->all = g;
        m->cap = ncap;
    }
    mrt_search_tensors_item *x = &m->all[m->n];
    memset(x, 0, sizeof *x);
    x->rule = calloc(nd + 1, sizeof *x->rule);
    x->own = calloc(np * nd + 1, sizeof *x->own);
    x->follows = calloc(np + 1, 1);
    if (!x->rule || !x->own || !x->follows) {
        item_free(x);
        return MRT_E_NOMEM;
    }
    memcpy(x->rule, res->rule, nd * sizeof *x->rule);
    for (size_t i = 0; i < np; i++) {
        x->follows[i] = pick[i] == 0;
        if (pick[i])
            mrt_rules_to_axes(&ch[i].rules[(size_t)pick[i] * nd], (int)nd,
                              &x->own[i * nd]);
    }
    x->totals = res->totals;
    x->combo = combo;
    x->index = res->index;
    m->n++;
    return MRT_OK;
}

static int cmp_time(const void *p, const void *q)
{
    const mrt_search_tensors_item *a = p, *b = q;
    int c = mrt_rules_cmp_totals(&a->totals, &b->totals);
    if (c)
        return c;
    if (a->combo != b->combo)
        return a->combo < b->combo ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

/* Copies x (its arrays too) to the end of list[*n]. */
static mrt_status keep(const merger *m, const mrt_search_tensors_item *x,
                       mrt_search_tensors_item *list, int *n)
{
    size_t nd = (size_t)m->s->ndims, np = (size_t)m->r->ntensors;
    mrt_search_tensors_item *y = &list[(*n)++];
    *y = *x;
    y->rule = y->own = NULL;
    y->follows = NULL;
    y->rule = malloc(nd * sizeof *y->rule + 1);
    y->own = malloc(np * nd * sizeof *y->own + 1);
    y->follows = malloc(np + 1);
    if (!y->rule || !y->own || !y->follows)
        return MRT_E_NOMEM;
    memcpy(y->rule, x->rule, nd * sizeof *y->rule);
    memcpy(y->own, x->own, np * nd * sizeof *y->own);
    memcpy(y->follows, x->follows, np);
    return MRT_OK;
}

/* The K best and the front of everything the combinations kept. */
static mrt_status finish(merger *m, int top)
{
    mrt_search_tensors_report *r = m->r;
    qsort(m->all, (size_t)m->n, sizeof *m->all, cmp_time);
    r->top = calloc((size_t)top + 1, sizeof *r->top);
    r->pareto = calloc((size_t)m->n + 1, sizeof *r->pareto);
    if (!r->top || !r->pareto)
        return MRT_E_NOMEM;
    for (int64_t i = 0; i < m->n; i++) {
        const mrt_search_tensors_item *x = &m->all[i];
        int dup = 0;
        for (int j = 0; j < r->ntop && !dup; j++)
            dup = same_layouts(m, &r->top[j], x);
        if (!dup && r->ntop < top && keep(m, x, r->top, &r->ntop))
            return MRT_E_NOMEM;
        int out = 0;
        for (int j = 0; j < r->npareto && !out; j++)
            out = same_layouts(m, &r->pareto[j], x) ||
                  mrt_rules_dominated(&x->totals, &r->pareto[j].totals);
        /* sorted by time: nothing later can dominate what is kept */
        if (!out && keep(m, x, r->pareto, &r->npareto))
            return MRT_E_NOMEM;
    }
    return MRT_OK;
}

/* The parameters: `train:`'s, else every input.  Returns how many. */
static int find_params(const mrt_spec *s, mrt_search_tensors_report *r)
{
    if (s->train.loss >= 0) {
        r->ntensors = s->train.nparams;
        memcpy(r->tensor, s->train.param, (size_t)r->ntensors * sizeof(int));
        return r->ntensors;
    }
    for (int t = 0; t < s->ntensors; t++)
        if (s->tensor[t].producer < 0)
            r->tensor[r->ntensors++] = t;
    return r->ntensors;
}

/* The activations acts names ("all": every op result with dims, in op
 * order, while the combinations fit the cap), after the parameters;
 * listed ([ntensors]) marks the tensors searched or left so far. */
static mrt_status find_acts(const mrt_spec *s, const char *acts,
                            mrt_search_tensors_report *r, choices *ch,
                            unsigned char *listed, mrt_error *err)
{
    int all = !strcmp(acts, "all");
    const char *p = acts;
    while (*p) {
        size_t len = all ? 0 : strcspn(p, ",");
        int t = -1;
        for (int k = 0; !all && k < s->ntensors && t < 0; k++)
            if (strlen(s->tensor[k].name) == len &&
                !strncmp(s->tensor[k].name, p, len) &&
                mrt_spec_is_op_result(s, k))
                t = k;
        if (!all && t < 0)
            return mrt_error_set(err, MRT_E_USAGE, s->path, (mrt_mark){0},
                                 "--activations: no op makes '%.*s' (name "
                                 "an op's out:, or say all)",
                                 (int)len, p);
        for (int k = all ? 0 : t; k < (all ? s->ntensors : t + 1); k++) {
            if (!mrt_spec_is_op_result(s, k) || !s->tensor[k].layout.ndims ||
                listed[k])
                continue;
            listed[k] = 1;
            choices *c = &ch[r->ntensors];
            if (make_choices(s, k, c))
                return mrt_error_set(err, MRT_E_NOMEM, s->path, (mrt_mark){0},
                                     "out of memory while "
                                     "searching layouts");
            if (all && r->combos * c->n > MRT_SEARCH_MAX_COMBOS) {
                free(c->rules);
                c->rules = NULL;
                r->left[r->nleft++] = k;
                continue;
            }
            r->combos = r->combos > MRT_SEARCH_MAX_COMBOS / c->n + 1
                            ? MRT_SEARCH_MAX_COMBOS + 1
                            : r->combos * c->n;
            r->tensor[r->ntensors++] = k;
            r->nacts++;
        }
        p += all ? strlen(p) : len + (p[len] == ',');
    }
    return MRT_OK;
}

static mrt_status nomem(const mrt_spec *s, mrt_error *err)
{
    return mrt_error_set(err, MRT_E_NOMEM, s->path, (mrt_mark){0},
                         "out of memory while searching layouts");
}

/* The rules search of one combination's program, added into m. */
static void add_counts(mrt_search_tensors_report *r,
                       const mrt_search_rules_report *rr)
{
    r->enumerated += rr->enumerated;
    r->planned += rr->planned;
    r->invalid += rr->invalid;
    r->pruned += rr->pruned_time + rr->pruned_memory;
    r->over_memory += rr->over_memory;
    r->screened |= rr->screened;
    if (rr->invalid && r->first_error.code == MRT_OK)
        r->first_error = rr->first_error;
}

/* Makes combination `pick` of s and searches its rules into m. */
static mrt_status search_combo(merger *m, const mrt_search_options *opt,
                               const choices *ch, const int *pick,
                               int64_t combo, mrt_error *err)
{
    const mrt_spec *s = m->s;
    mrt_search_tensors_report *r = m->r;
    mrt_spec_own_layout *own = calloc((size_t)r->ntensors + 1, sizeof *own);
    int n = 0;
    if (!own)
        return nomem(s, err);
    for (int i = 0; i < r->ntensors; i++)
        if (pick[i])
            own[n++] = (mrt_spec_own_layout){
                r->tensor[i], &ch[i].rules[(size_t)pick[i] * (size_t)s->ndims]};
    mrt_spec *cs = NULL;
    mrt_error e = {0};
    mrt_status st = mrt_spec_with_layouts(s, own, n, &cs, &e);
    free(own);
    if (st == MRT_E_NOMEM)
        return nomem(s, err);
    if (st) {
        if (!r->failed++ && r->first_error.code == MRT_OK)
            r->first_error = e;
        return MRT_OK;
    }
    mrt_search_rules_report *rr = NULL;
    st = mrt_search_rules_create(cs, opt, &rr, err);
    mrt_spec_destroy(cs);
    if (st)
        return st;
    add_counts(r, rr);
    for (int i = 0; !st && i < rr->ntop; i++)
        st = add_result(m, &rr->top[i], combo, ch, pick);
    for (int i = 0; !st && i < rr->npareto; i++)
        st = add_result(m, &rr->pareto[i], combo, ch, pick);
    mrt_search_rules_destroy(rr);
    return st ? nomem(s, err) : MRT_OK;
}

/* The tensors searched (parameters, then the activations acts names)
 * and their choices; fails for too many combinations, an unknown
 * activation, or out of memory. */
static mrt_status find_tensors(const mrt_spec *s, const char *acts,
                               mrt_search_tensors_report *r, choices *ch,
                               mrt_error *err)
{
    unsigned char *listed = calloc((size_t)s->ntensors + 1, 1);
    if (!listed)
        return nomem(s, err);
    int asked = find_params(s, r); /* tensors asked for */
    r->combos = 1;
    for (int i = 0; i < r->ntensors; i++)
        listed[r->tensor[i]] = 1;
    for (int i = 0; i < r->ntensors; i++) {
        if (make_choices(s, r->tensor[i], &ch[i])) {
            free(listed);
            return nomem(s, err);
        }
        if (r->combos > MRT_SEARCH_MAX_COMBOS / ch[i].n + 1)
            r->combos = MRT_SEARCH_MAX_COMBOS + 1;
        else
            r->combos *= ch[i].n;
    }
    int before = r->ntensors + r->nleft;
    mrt_status st = acts ? find_acts(s, acts, r, ch, listed, err) : MRT_OK;
    free(listed);
    if (st)
        return st;
    if (acts && strcmp(acts, "all")) /* named: all asked for */
        asked += r->ntensors + r->nleft - before;
    else
        asked += r->nacts;
    if (r->combos > MRT_SEARCH_MAX_COMBOS)
        return mrt_error_set(err, MRT_E_USAGE, s->path, (mrt_mark){0},
                             "more than %d combinations of per-tensor "
                             "layouts for %d tensors: too many to search "
                             "(give some their own layout: in the spec, or "
                             "name fewer --activations, or search without "
                             "--per-tensor)",
                             MRT_SEARCH_MAX_COMBOS, asked);
    return MRT_OK;
}

mrt_status mrt_search_tensors_create(const mrt_spec *s,
                                     const mrt_search_options *opt,
                                     mrt_search_tensors_report **out,
                                     mrt_error *err)
{
    static const mrt_search_options defaults;
    choices *ch = NULL;
    int *pick = NULL;
    merger m = {.s = s};
    if (out)
        *out = NULL;
    if (!s || !out)
        return mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0},
                             "mrt_search_tensors_create needs a spec and an "
                             "out pointer");
    if (!opt)
        opt = &defaults;
    size_t room = (size_t)s->ntensors + 1; /* each tensor searched once */
    m.r = calloc(1, sizeof *m.r);
    ch = calloc(room, sizeof *ch);
    pick = calloc(room, sizeof *pick);
    if (m.r) {
        m.r->tensor = calloc(room, sizeof *m.r->tensor);
        m.r->left = calloc(room, sizeof *m.r->left);
    }
    mrt_status st = m.r && m.r->tensor && m.r->left && ch && pick
                        ? MRT_OK
                        : nomem(s, err);
    if (!st) {
        m.r->ndims = s->ndims;
        st = find_tensors(s, opt->activations, m.r, ch, err);
    }
    for (int64_t combo = 0; !st && combo < m.r->combos; combo++) {
        st = search_combo(&m, opt, ch, pick, combo, err);
        for (int i = 0; i < m.r->ntensors && ++pick[i] == ch[i].n; i++)
            pick[i] = 0; /* odometer: the first tensor turns fastest */
    }
    if (!st && finish(&m, opt->top > 0 ? opt->top : 5))
        st = nomem(s, err);
    if (!st) {
        *out = m.r;
        m.r = NULL;
    }
    for (size_t i = 0; ch && i < room; i++)
        free(ch[i].rules);
    free(ch);
    free(pick);
    for (int64_t i = 0; i < m.n; i++)
        item_free(&m.all[i]);
    free(m.all);
    mrt_search_tensors_destroy(m.r);
    return st;
}

void mrt_search_tensors_destroy(mrt_search_tensors_report *r)
{
    if (!r)
        return;
    for (int i = 0; r->top && i < r->ntop; i++)
        item_free(&r->top[i]);
    for (int i = 0; r->pareto && i < r->npareto; i++)
        item_free(&r->pareto[i]);
    free(r->top);
    free(r->pareto);
    free(r->tensor);
    free(r->left);
    free(r);
}
