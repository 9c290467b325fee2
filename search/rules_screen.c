/*
 * rules_screen.c — screening, for rules searches too big to plan every
 * candidate the bounds keep with the auto planner (many axes).
 *
 * Every candidate is planned with the fixed rule (MRT_STRATEGY_RULES),
 * whose time the auto planner never exceeds (it keeps the cheaper of its
 * search and that rule), so the K-th best screened time over different
 * sets of axes bounds the K-th best auto time from above and rules out,
 * exactly, every candidate whose time bound is higher.  Of the rest,
 * only the best few of the screen and of the time bound are planned
 * with the auto planner: the lists are then the best of those, exact
 * only if the screen kept the winners (the report's `screened`).
 */
#include <math.h>
#include <stdlib.h>

#include "planning.h"
#include "rules_driver.h"

/* The time of candidate ci's plan with the fixed rule (INFINITY when it
 * does not plan); fails only when out of memory. */
static mrt_status screen_one(mrt_rules_driver *dr, int ci)
{
    mrt_rules_cand *c = &dr->c[ci];
    mrt_spec *ds = NULL;
    mrt_plan *p = NULL;
    mrt_error e = {0};
    mrt_rules_of(dr, c, dr->rules);
    mrt_status st = mrt_spec_derive(dr->s, dr->rules, NULL, &ds, &e);
    if (!st)
        st = mrt_plan_create_with(ds, &dr->opt->plan, MRT_STRATEGY_RULES, &p,
                                  &e);
    mrt_spec_destroy(ds);
    c->upper_s = st ? INFINITY : p->totals.time_s;
    mrt_plan_destroy(p);
    dr->r->screen_plans += !st;
    return st == MRT_E_NOMEM ? st : MRT_OK;
}

typedef struct by_upper {
    double upper_s;
    int64_t index;
    int cand;
} by_upper;

static int cmp_upper(const void *x, const void *y)
{
    const by_upper *a = x, *b = y;
    if (a->upper_s != b->upper_s)
        return a->upper_s < b->upper_s ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

/* Up to `want` candidates of ids[0..n) (in that order) with pairwise
 * different sets of axes per dim, into out; returns how many. */
static int first_distinct(const mrt_rules_driver *dr, const int *ids, int64_t n,
                          int want, int *out)
{
    int k = 0;
    for (int64_t i = 0; i < n && k < want; i++) {
        const mrt_rules_cand *c = &dr->c[ids[i]];
        int seen = 0;
        for (int j = 0; j < k && !seen; j++)
            seen = mrt_rules_same_dims(&dr->c[out[j]], c);
        if (!seen)
            out[k++] = ids[i];
    }
    return k;
}

/* Plans every candidate within the memory bound with the fixed rule;
 * ids gets them by that time (then enumeration order).  Returns how
 * many, or -1 when out of memory. */
static int64_t screen_all(mrt_rules_driver *dr, int *ids)
{
    by_upper *order = malloc(((size_t)dr->n + 1) * sizeof *order);
    int64_t n = 0;
    if (!order)
        return -1;
    for (int64_t i = 0; i < dr->n; i++) {
        mrt_rules_cand *c = &dr->c[i];
        c->upper_s = INFINITY;
        c->replan = 0;
        if (mrt_rules_over_cap(dr, c)) {
            dr->r->pruned_memory++;
            continue;
        }
        if (screen_one(dr, (int)i)) {
            free(order);
            return -1;
        }
        order[n++] = (by_upper){c->upper_s, c->index, (int)i};
    }
    qsort(order, (size_t)n, sizeof *order, cmp_upper);
    for (int64_t i = 0; i < n; i++)
        ids[i] = order[i].cand;
    free(order);
    return n;
}

/* Screens, then re-plans with the auto planner the first `each`
 * different sets of axes per dim of the screen and of the time bound
 * (one order each: the orders of one set mostly plan alike), skipping
 * those whose time bound exceeds the K-th best screened time over
 * different sets (the auto planner does no worse than the fixed rule, so
 * those cannot enter the K best) or the K-th best so far. */
mrt_status mrt_rules_run_screened(mrt_rules_driver *dr)
{
    mrt_search_rules_report *r = dr->r;
    int each = dr->top * 3 > 16 ? dr->top * 3 : 16;
    int want = each > dr->top ? each : dr->top;
    int *ids = malloc(((size_t)dr->n + 1) * sizeof *ids);
    int *pick = malloc(((size_t)2 * want + 1) * sizeof *pick);
    int64_t n = ids && pick ? screen_all(dr, ids) : -1;
    if (n < 0) {
        free(ids);
        free(pick);
        return MRT_E_NOMEM;
    }
    r->replan_each = each;
    double upper = INFINITY;
    if (first_distinct(dr, ids, n, dr->top, pick) == dr->top)
        upper = dr->c[pick[dr->top - 1]].upper_s;
    int npick = first_distinct(dr, ids, n, each, pick);
    int64_t nkept = 0; /* the same, in time-bound order */
    for (int64_t i = 0; i < dr->n; i++)
        if (!mrt_rules_over_cap(dr, &dr->c[i]))
            ids[nkept++] = (int)i;
    npick += first_distinct(dr, ids, nkept, each, pick + npick);
    for (int j = 0; j < npick; j++)
        dr->c[pick[j]].replan = 1;
    free(ids);
    free(pick);
    for (int64_t i = 0; i < dr->n; i++) {
        const mrt_rules_cand *c = &dr->c[i];
        if (mrt_rules_over_cap(dr, c))
            continue;
        if (c->bound_s > upper || c->bound_s > mrt_rules_kth_time(dr)) {
            r->pruned_time++;
            continue;
        }
        if (!c->replan) {
            r->not_replanned++;
            continue;
        }
        mrt_status st = mrt_rules_plan_candidate(dr, (int)i);
        if (st)
            return st;
    }
    return MRT_OK;
}
