/*
 * search_rules.c — meshrt.h's mrt_search_rules_create (`meshrt search`):
 * every set of global layout rules for a program (rules_enum.c), bounded
 * (search_bound.c), pruned, the survivors planned; the K best under a
 * memory cap and the time-versus-memory Pareto front (rules_front.c),
 * filled into the public report.  search_rules.h says what a candidate
 * is and why the pruning is exact.
 *
 * Candidates are visited by time bound (then enumeration order); one is
 * planned unless its time bound exceeds the K-th best time so far and a
 * planned candidate beats its bounds in both time and memory (so it can
 * enter neither the K best nor the Pareto front), or its memory bound
 * exceeds the cap.  The results are those of planning every candidate.
 * Searches too big for that are screened instead (rules_screen.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "planning.h"
#include "rules_driver.h"

#define MAX_CANDIDATES 1000000
/* Candidates times execution layouts per op above which the auto
 * planner's plans are screened (the Transformer layer of the examples,
 * 694 candidates on 3 axes: 1.1e6, about 3 s planned exactly). */
#define SCREEN_ABOVE 1.2e7

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int collect(void *ctx, const mrt_rule *rules)
{
    mrt_rules_driver *dr = ctx;
    if (dr->n == MAX_CANDIDATES) {
        dr->st = MRT_E_USAGE;
        return 1;
    }
    if (dr->n == dr->cap) {
        int64_t ncap = dr->cap ? 2 * dr->cap : 1024;
        mrt_rules_cand *nc = realloc(dr->c, (size_t)ncap * sizeof *nc);
        if (!nc) {
            dr->st = MRT_E_NOMEM;
            return 1;
        }
        dr->c = nc;
        dr->cap = ncap;
    }
    mrt_rules_cand *c = &dr->c[dr->n];
    memset(c, 0, sizeof *c);
    for (int d = 0; d < dr->s->ndims; d++)
        for (int j = 0; j < rules[d].naxes; j++) {
            int k = dr->k_of[rules[d].axes[j]];
            if (c->nown[k] == MRT_RULES_MAX_SHARE) /* too many dims share */
                return 0; /* an axis to keep: left out */
            c->own[k][c->nown[k]] = (short)d;
            c->pos[k][c->nown[k]++] = (signed char)j;
        }
    c->index = dr->n++;
    return 0;
}

void mrt_rules_of(const mrt_rules_driver *dr, const mrt_rules_cand *c,
                  mrt_rule *rules)
{
    memset(rules, 0, (size_t)dr->s->ndims * sizeof *rules);
    for (int k = 0; k < dr->na; k++)
        for (int i = 0; i < c->nown[k]; i++) {
            mrt_rule *r = &rules[c->own[k][i]];
            r->axes[(int)c->pos[k][i]] = dr->ax[k];
            if (c->pos[k][i] + 1 > r->naxes)
                r->naxes = c->pos[k][i] + 1;
        }
}

static int cmp_bound(const void *x, const void *y)
{
    const mrt_rules_cand *a = x, *b = y;
    if (a->bound_s != b->bound_s)
        return a->bound_s < b->bound_s ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

int mrt_rules_over_cap(const mrt_rules_driver *dr, const mrt_rules_cand *c)
{
    return dr->max_memory > 0 && c->memory > dr->max_memory;
}

mrt_status mrt_rules_plan_candidate(mrt_rules_driver *dr, int ci)
{
    const mrt_rules_cand *c = &dr->c[ci];
    mrt_search_rules_report *r = dr->r;
    mrt_spec *ds = NULL;
    mrt_plan *p = NULL;
    mrt_error e = {0};
    mrt_rules_of(dr, c, dr->rules);
    mrt_status st = mrt_spec_derive(dr->s, dr->rules, NULL, &ds, &e);
    if (!st)
        st = mrt_plan_create(ds, &dr->opt->plan, &p, &e);
    mrt_spec_destroy(ds);
    if (st == MRT_E_NOMEM)
        return st;
    if (st) {
        if (!r->invalid++)
            r->first_error = e;
        return MRT_OK;
    }
    r->planned++;
    mrt_plan_totals t = p->totals;
    mrt_plan_destroy(p);
    if (dr->max_memory > 0 && t.peak_memory > dr->max_memory) {
        r->over_memory++;
        return MRT_OK;
    }
    if (dr->nres == dr->cap_res) {
        int64_t ncap = dr->cap_res ? 2 * dr->cap_res : 256;
        mrt_rules_planned *nr = realloc(dr->res, (size_t)ncap * sizeof *nr);
        int *nf = realloc(dr->front, (size_t)ncap * sizeof *nf);
        if (nr)
            dr->res = nr;
        if (nf)
            dr->front = nf;
        if (!nr || !nf)
            return MRT_E_NOMEM;
        dr->cap_res = ncap;
    }
    dr->res[dr->nres] = (mrt_rules_planned){
        c->index, c->bound_s, t, ci, {0, 0}};
    mrt_rules_file_result(dr, (int)dr->nres++);
    return MRT_OK;
}

static mrt_status run(mrt_rules_driver *dr)
{
    const mrt_search_options *opt = dr->opt;
    mrt_search_rules_report *r = dr->r;
    for (int64_t i = 0; i < dr->n; i++) {
        const mrt_rules_cand *c = &dr->c[i];
        if (!opt->exhaustive) {
            if (mrt_rules_over_cap(dr, c)) {
                r->pruned_memory++;
                continue;
            }
            if (c->bound_s > mrt_rules_kth_time(dr) &&
                mrt_rules_front_dominates(dr, c->bound_s, c->memory)) {
                r->pruned_time++;
                continue;
            }
        }
        mrt_status st = mrt_rules_plan_candidate(dr, (int)i);
        if (st)
            return st;
    }
    return MRT_OK;
}

static int cmp_front(const void *x, const void *y)
{
    const mrt_search_rules_item *a = x, *b = y;
    int c = mrt_rules_cmp_totals(&a->totals, &b->totals);
    return c ? c : (a->index > b->index) - (a->index < b->index);
}

static mrt_status export(mrt_rules_driver *dr, int which, const int *ids, int n,
                         mrt_search_rules_item **out)
{
    *out = calloc((size_t)n + 1, sizeof **out);
    if (!*out)
        return MRT_E_NOMEM;
    for (int i = 0; i < n; i++) {
        const mrt_rules_planned *res = &dr->res[ids[i]];
        mrt_search_rules_item *o = &(*out)[i];
        o->totals = res->totals;
        o->bound_s = res->bound_s;
        o->index = res->index;
        o->orders = res->orders[which];
        if (!(o->rule = calloc((size_t)dr->s->ndims + 1, sizeof *o->rule)))
            return MRT_E_NOMEM;
        mrt_rules_of(dr, &dr->c[res->cand], dr->rules);
        mrt_rules_to_axes(dr->rules, dr->s->ndims, o->rule);
    }
    return MRT_OK;
}

/* The spec's own rules, for reference, and the profile every candidate
 * is planned with (the same for all: one mesh, one `network:`). */
static mrt_status plan_spec(mrt_rules_driver *dr, mrt_profile *prof,
                            mrt_error *err)
{
    mrt_plan *p = NULL;
    mrt_status st = mrt_plan_create_with(dr->s, &dr->opt->plan,
                                         MRT_STRATEGY_RULES, &p, err);
    if (st)
        return st;
    *prof = p->profile;
    snprintf(dr->r->machine, sizeof dr->r->machine, "%s", p->profile.source);
    /* no cap of its own: the device memory (--device-memory, else the
     * profile's device_memory:) */
    dr->max_memory = dr->opt->max_memory > 0 ? dr->opt->max_memory
                                             : p->device_memory;
    dr->r->max_memory = dr->max_memory;
    mrt_plan_destroy(p);
    p = NULL;
    if (mrt_plan_create(dr->s, &dr->opt->plan, &p, NULL) == MRT_OK) {
        dr->r->has_spec = 1;
        dr->r->spec_totals = p->totals;
    }
    mrt_plan_destroy(p);
    return MRT_OK;
}

/* The report, the driver's arrays and the axes of size > 1; fails only
 * when out of memory. */
static mrt_status start(mrt_rules_driver *dr)
{
    const mrt_spec *s = dr->s;
    dr->r = calloc(1, sizeof *dr->r);
    dr->rules = calloc((size_t)s->ndims + 1, sizeof *dr->rules);
    dr->best = calloc((size_t)dr->top + 1, sizeof *dr->best);
    if (!dr->r || !dr->rules || !dr->best ||
        !(dr->r->searched = calloc((size_t)s->ndims + 1, 1)))
        return MRT_E_NOMEM;
    dr->r->ndims = s->ndims;
    int meshtf = dr->opt->plan.planner == MRT_PLANNER_MESHTF;
    for (int d = 0; d < s->ndims; d++) { /* meshtf: every dim's rule */
        dr->r->searched[d] = meshtf || mrt_rules_dim_searched(s, 0, d);
        dr->r->nsearched += mrt_rules_dim_searched(s, meshtf, d);
    }
    for (int a = 0; a < s->mesh.naxes; a++) {
        dr->k_of[a] = -1;
        if (s->mesh.size[a] > 1) {
            dr->k_of[a] = dr->na;
            dr->ax[dr->na++] = a;
        }
    }
    return MRT_OK;
}

/* Every candidate, with its bounds, in the order they are visited;
 * whether to screen. */
static mrt_status enumerate_and_bound(mrt_rules_driver *dr,
                                      const mrt_profile *prof, mrt_error *err)
{
    const mrt_spec *s = dr->s;
    const mrt_search_options *opt = dr->opt;
    int meshtf = opt->plan.planner == MRT_PLANNER_MESHTF;
    if (!(dr->b = mrt_rules_bounds_create(s, prof, meshtf)) ||
        mrt_rules_enumerate(s, meshtf, collect, dr) < 0 ||
        dr->st == MRT_E_NOMEM)
        return MRT_E_NOMEM;
    if (dr->st)
        return mrt_error_set(err, MRT_E_USAGE, s->path, (mrt_mark){0},
                             "more than %d candidate layouts: too many to "
                             "search (use a smaller mesh, or give some "
                             "tensors their own layout:)",
                             MAX_CANDIDATES);
    dr->r->enumerated = dr->n;
    double work = (double)dr->n * mrt_rules_bounds_work(dr->b);
    dr->r->screened = !opt->exhaustive && !meshtf &&
                      (opt->screen > 0 ||
                       (opt->screen == 0 && work > SCREEN_ABOVE));
    /* A screened search leans on its bounds less: weigh fewer execs. */
    mrt_rules_bounds_set_budget(dr->b, dr->r->screened ? 64 : 256);
    for (int64_t i = 0; i < dr->n; i++) {
        mrt_rules_of(dr, &dr->c[i], dr->rules);
        mrt_rules_bounds_eval(dr->b, dr->rules, &dr->c[i].bound_s,
                              &dr->c[i].memory);
    }
    qsort(dr->c, (size_t)dr->n, sizeof *dr->c, cmp_bound);
    return MRT_OK;
}

/* The K best and the front into the report; fails only when out of
 * memory. */
static mrt_status finish(mrt_rules_driver *dr)
{
    mrt_search_rules_report *r = dr->r;
    r->ntop = dr->nbest;
    r->npareto = dr->nfront;
    if (export(dr, 0, dr->best, dr->nbest, &r->top) ||
        export(dr, 1, dr->front, dr->nfront, &r->pareto))
        return MRT_E_NOMEM;
    qsort(r->pareto, (size_t)dr->nfront, sizeof *r->pareto, cmp_front);
    return MRT_OK;
}

static mrt_status nomem(const mrt_rules_driver *dr, mrt_error *err)
{
    return mrt_error_set(err, MRT_E_NOMEM, dr->s->path, (mrt_mark){0},
                         "out of memory while searching layouts");
}

static mrt_status search(mrt_rules_driver *dr, mrt_error *err)
{
    mrt_profile prof;
    double t0 = now_s();
    if (start(dr))
        return nomem(dr, err);
    mrt_status st = plan_spec(dr, &prof, err);
    if (st)
        return st;
    if ((st = enumerate_and_bound(dr, &prof, err)))
        return st == MRT_E_NOMEM ? nomem(dr, err) : st;
    double t1 = now_s();
    dr->r->bound_seconds = t1 - t0;
    if (dr->r->screened ? mrt_rules_run_screened(dr) : run(dr))
        return nomem(dr, err);
    dr->r->plan_seconds = now_s() - t1;
    if (finish(dr))
        return nomem(dr, err);
    dr->r->elapsed_seconds = now_s() - t0;
    return MRT_OK;
}

mrt_status mrt_search_rules_create(const mrt_spec *s,
                                   const mrt_search_options *opt,
                                   mrt_search_rules_report **out,
                                   mrt_error *err)
{
    if (out)
        *out = NULL;
    if (!s || !out)
        return mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0},
                             "mrt_search_rules_create needs a spec and an "
                             "out pointer");
    mrt_search_options o = {0};
    if (opt)
        o = *opt;
    o.plan.explain = 0;
    mrt_rules_driver dr = {.s = s, .opt = &o, .top = o.top > 0 ? o.top : 5};
    mrt_status st = search(&dr, err);
    if (!st) {
        *out = dr.r;
        dr.r = NULL;
    }
    mrt_search_rules_destroy(dr.r);
    mrt_rules_bounds_destroy(dr.b);
    free(dr.c);
    free(dr.rules);
    free(dr.res);
    free(dr.best);
    free(dr.front);
    return st;
}

static void free_items(mrt_search_rules_item *x, int n)
{
    for (int i = 0; x && i < n; i++)
        free(x[i].rule);
    free(x);
}

void mrt_search_rules_destroy(mrt_search_rules_report *r)
{
    if (!r)
        return;
    free(r->searched);
    free_items(r->top, r->ntop);
    free_items(r->pareto, r->npareto);
    free(r);
}
