/*
 * rules_front.c — the rules search's two lists as they grow: the K best
 * by modeled time (ties: the earlier candidate) and the time-versus-memory
 * Pareto front.  A result that only orders the axes of some dims
 * differently from one already listed, with the very same figures, joins
 * that one's entry ("and N other orders") instead of taking a place.
 */
#include <math.h>
#include <string.h>

#include "rules_driver.h"

int mrt_rules_cmp_totals(const mrt_plan_totals *a, const mrt_plan_totals *b)
{
    if (a->time_s != b->time_s)
        return a->time_s < b->time_s ? -1 : 1;
    if (a->peak_memory != b->peak_memory)
        return a->peak_memory < b->peak_memory ? -1 : 1;
    return 0;
}

int mrt_rules_dominated(const mrt_plan_totals *a, const mrt_plan_totals *b)
{
    return (b->time_s < a->time_s && b->peak_memory <= a->peak_memory) ||
           (b->time_s <= a->time_s && b->peak_memory < a->peak_memory);
}

/* Faster, then earlier in enumeration order. */
static int better(const mrt_rules_planned *a, const mrt_rules_planned *b)
{
    if (a->totals.time_s != b->totals.time_s)
        return a->totals.time_s < b->totals.time_s;
    return a->index < b->index;
}

/* Whether (time, memory) is beaten in one and matched in the other by
 * a point of the front. */
int mrt_rules_front_dominates(const mrt_rules_driver *dr, double time_s,
                              int64_t memory)
{
    const mrt_plan_totals x = {.time_s = time_s, .peak_memory = memory};
    for (int i = 0; i < dr->nfront; i++)
        if (mrt_rules_dominated(&x, &dr->res[dr->front[i]].totals))
            return 1;
    return 0;
}

double mrt_rules_kth_time(const mrt_rules_driver *dr)
{
    if (dr->nbest < dr->top)
        return INFINITY;
    return dr->res[dr->best[dr->nbest - 1]].totals.time_s;
}

int mrt_rules_same_dims(const mrt_rules_cand *a, const mrt_rules_cand *b)
{
    return !memcmp(a->nown, b->nown, sizeof a->nown) &&
           !memcmp(a->own, b->own, sizeof a->own);
}

/* Whether results x and y put the same axes on the same dims (in some
 * order) with the very same time and memory: then they are shown as one
 * line, "and N other orders". */
static int same_but_order(const mrt_rules_driver *dr,
                          const mrt_rules_planned *x,
                          const mrt_rules_planned *y)
{
    const mrt_rules_cand *a = &dr->c[x->cand], *b = &dr->c[y->cand];
    return !mrt_rules_cmp_totals(&x->totals, &y->totals) &&
           mrt_rules_same_dims(a, b);
}

/* Groups result i into an equivalent one of list[0..n) (which: 0 the
 * K best, 1 the front); 1 if it did.  The earlier candidate represents
 * the group. */
static int group_into(mrt_rules_driver *dr, int which, int *list, int n, int i)
{
    for (int j = 0; j < n; j++) {
        mrt_rules_planned *g = &dr->res[list[j]], *r = &dr->res[i];
        if (!same_but_order(dr, g, r))
            continue;
        if (r->index < g->index) {
            r->orders[which] = g->orders[which] + 1;
            list[j] = i;
        } else {
            g->orders[which]++;
        }
        /* The group keeps its place: its time is unchanged, and ties
         * are ordered by index. */
        while (j > 0 && list == dr->best &&
               better(&dr->res[list[j]], &dr->res[list[j - 1]])) {
            int t = list[j];
            list[j] = list[j - 1];
            list[--j] = t;
        }
        return 1;
    }
    return 0;
}

void mrt_rules_file_result(mrt_rules_driver *dr, int i)
{
    const mrt_rules_planned *r = &dr->res[i];
    if (!group_into(dr, 0, dr->best, dr->nbest, i)) {
        int at = dr->nbest;
        while (at > 0 && better(r, &dr->res[dr->best[at - 1]]))
            at--;
        if (at < dr->top) {
            int n = dr->nbest < dr->top ? dr->nbest : dr->top - 1;
            memmove(dr->best + at + 1, dr->best + at,
                    (size_t)(n - at) * sizeof(int));
            dr->best[at] = i;
            dr->nbest = n + 1;
        }
    }
    if (mrt_rules_front_dominates(dr, r->totals.time_s,
                                  r->totals.peak_memory) ||
        group_into(dr, 1, dr->front, dr->nfront, i))
        return;
    int n = 0;
    for (int j = 0; j < dr->nfront; j++)
        if (!mrt_rules_dominated(&dr->res[dr->front[j]].totals, &r->totals))
            dr->front[n++] = dr->front[j];
    dr->front[n++] = i;
    dr->nfront = n;
}
