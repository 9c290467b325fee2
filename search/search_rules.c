/*
 * search_rules.c — `meshrt search`: every set of global layout rules for
 * a program, bounded, pruned, the survivors planned; the K best under a
 * memory cap and the time-versus-memory Pareto front.
 *
 * The bounds (ops/search_bound.c) are lower bounds on the modeled time
 * and on the peak memory of any plan of a candidate, whatever lowering
 * the planner picks for each op.
 *
 * Candidates are visited by time bound (then enumeration order); one is
 * planned unless its time bound exceeds the K-th best time so far and a
 * planned candidate beats its bounds in both time and memory (so it can
 * enter neither the K best nor the Pareto front), or its memory bound
 * exceeds the cap.  The results are those of planning every candidate.
 *
 * Screening, for searches too big for that (many axes): every candidate
 * is planned with the fixed rule, whose time the auto planner never
 * exceeds (it keeps the cheaper of its search and that rule), so the
 * K-th best screened time over different sets of axes bounds the K-th
 * best auto time from above and rules out, exactly, every candidate
 * whose time bound is higher.  Of the rest, only the best few of the
 * screen and of the time bound are planned with the auto planner.
 */
#include "search_rules.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "planning.h"
#include "split.h"

#define MAX_CANDIDATES 1000000
#define MAX_SHARE 8 /* dims one axis may split in one candidate */
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

/* ---- enumeration ---- */

static int searched(const mrt_spec *s, int all_dims, int d)
{
    for (int t = 0; t < s->ntensors; t++)
        if ((all_dims || !s->tensor[t].own_layout) &&
            mrt_layout_find_dim(&s->tensor[t].layout, d) >= 0)
            return 1;
    return 0;
}

int mrt_rules_dim_searched(const mrt_spec *s, int d)
{
    return searched(s, 0, d);
}

typedef struct rules_enum {
    const mrt_spec *s;
    int na, ax[MRT_MAX_AXES]; /* the axes of size > 1 */
    int nd, *dims;            /* searched dims */
    mrt_rule *rule;           /* [ndims], the candidate being built */
    int64_t *parts;           /* [ndims], blocks per dim so far */
    unsigned char *together;  /* [nd * nd]: searched dims i and j appear in
                                 one tensor, so no axis may split both */
    int (*visit)(void *, const mrt_rule *);
    void *ctx;
} rules_enum;

static int place_axis(rules_enum *en, int k);

/* Axis number k goes into the lists of a set of searched dims no two of
 * which share a tensor (as the rules `heads: model, d_ff: model` do):
 * dims from i on, each skipped first, then placed at each position from
 * the end (so mesh order comes first).  `on` lists the dims (by index)
 * that already took the axis.  Splits the planner refuses (mrt_split_ok:
 * uneven ones, today) are cut at once. */
static int place_on(rules_enum *en, int k, int i, int *on, int non)
{
    if (i == en->nd)
        return place_axis(en, k + 1);
    int rc = place_on(en, k, i + 1, on, non);
    int a = en->ax[k], d = en->dims[i];
    for (int j = 0; j < non; j++)
        if (en->together[i * en->nd + on[j]])
            return rc;
    mrt_rule *r = &en->rule[d];
    int64_t saved = en->parts[d];
    if (rc || !mrt_split_ok(en->s->dim_size[d], saved * en->s->mesh.size[a]))
        return rc;
    en->parts[d] = saved * en->s->mesh.size[a];
    on[non] = i;
    for (int pos = r->naxes; pos >= 0 && !rc; pos--) {
        memmove(&r->axes[pos + 1], &r->axes[pos],
                (size_t)(r->naxes - pos) * sizeof r->axes[0]);
        r->axes[pos] = a;
        r->naxes++;
        rc = place_on(en, k, i + 1, on, non + 1);
        r->naxes--;
        memmove(&r->axes[pos], &r->axes[pos + 1],
                (size_t)(r->naxes - pos) * sizeof r->axes[0]);
    }
    en->parts[d] = saved;
    return rc;
}

/* Axis number k goes nowhere first, then onto each valid set of dims. */
static int place_axis(rules_enum *en, int k)
{
    if (k == en->na)
        return en->visit(en->ctx, en->rule);
    int on[MRT_MAX_EINSUM_DIMS * 4];
    return place_on(en, k, 0, on, 0);
}

/* Which searched dims share a tensor that follows the global rules (all
 * tensors do, for Mesh-TF's planner: all_dims). */
static void find_together(rules_enum *en, int all_dims)
{
    const mrt_spec *s = en->s;
    for (int t = 0; t < s->ntensors; t++) {
        const mrt_layout *l = &s->tensor[t].layout;
        if (!all_dims && s->tensor[t].own_layout)
            continue;
        for (int x = 0; x < en->nd; x++)
            for (int y = 0; y < en->nd; y++)
                if (x != y && mrt_layout_find_dim(l, en->dims[x]) >= 0 &&
                    mrt_layout_find_dim(l, en->dims[y]) >= 0)
                    en->together[x * en->nd + y] = 1;
    }
}

static int enumerate(const mrt_spec *s, int all_dims,
                     int (*visit)(void *, const mrt_rule *), void *ctx)
{
    rules_enum en = {.s = s, .visit = visit, .ctx = ctx};
    en.dims = calloc((size_t)s->ndims + 1, sizeof *en.dims);
    en.rule = calloc((size_t)s->ndims + 1, sizeof *en.rule);
    en.parts = calloc((size_t)s->ndims + 1, sizeof *en.parts);
    en.together = calloc((size_t)s->ndims * (size_t)s->ndims + 1, 1);
    int rc = -1;
    if (en.dims && en.rule && en.parts && en.together) {
        for (int a = 0; a < s->mesh.naxes; a++)
            if (s->mesh.size[a] > 1)
                en.ax[en.na++] = a;
        for (int d = 0; d < s->ndims; d++) {
            en.parts[d] = 1;
            if (searched(s, all_dims, d))
                en.dims[en.nd++] = d;
        }
        find_together(&en, all_dims);
        rc = place_axis(&en, 0);
    }
    free(en.dims);
    free(en.rule);
    free(en.parts);
    free(en.together);
    return rc;
}

int mrt_rules_enumerate(const mrt_spec *s,
                        int (*visit)(void *ctx, const mrt_rule *rules),
                        void *ctx)
{
    return enumerate(s, 0, visit, ctx);
}

/* ---- printing rules ---- */

static int put_axes(const mrt_spec *s, const mrt_rule *r, char *buf,
                    int size)
{
    if (r->naxes == 1)
        return snprintf(buf, (size_t)size, "%s", s->mesh.name[r->axes[0]]);
    int n = snprintf(buf, (size_t)size, "[");
    for (int j = 0; j < r->naxes && n < size; j++)
        n += snprintf(buf + n, (size_t)(size - n), "%s%s", j ? ", " : "",
                      s->mesh.name[r->axes[j]]);
    if (n < size)
        n += snprintf(buf + n, (size_t)(size - n), "]");
    return n;
}

char *mrt_rules_str(const mrt_spec *s, const mrt_rule *rules, char *buf,
                    int size)
{
    int n = 0;
    buf[0] = '\0';
    for (int d = 0; d < s->ndims && n < size; d++) {
        if (!rules[d].naxes)
            continue;
        n += snprintf(buf + n, (size_t)(size - n), "%s%s: ", n ? ", " : "",
                      s->dim_name[d]);
        if (n < size)
            n += put_axes(s, &rules[d], buf + n, size - n);
    }
    if (!n)
        snprintf(buf, (size_t)size, "(all replicated)");
    return buf;
}

void mrt_rules_print_yaml(const mrt_spec *s, const mrt_rule *rules, FILE *f)
{
    int any = 0;
    char axes[MRT_MAX_AXES * (MRT_NAME_MAX + 2) + 4];
    for (int d = 0; d < s->ndims; d++) {
        if (!rules[d].naxes)
            continue;
        put_axes(s, &rules[d], axes, sizeof axes);
        fprintf(f, "%s  %s: %s\n", any++ ? "" : "layout:\n", s->dim_name[d],
                axes);
    }
    if (!any)
        fputs("layout: {}\n", f);
}

/* ---- the driver ---- */

/* A candidate, compactly: where each axis of size > 1 goes. */
typedef struct cand {
    int64_t index;
    double bound_s;
    int64_t memory;                /* its memory bound */
    double upper_s;                /* screened: its rules plan's time */
    int replan;                    /* screened: to re-plan with auto */
    /* Searched axis k splits the spec dims own[k][0..nown[k]) (no two
     * in one tensor), at place pos[k][i] in each one's rule. */
    unsigned char nown[MRT_MAX_AXES];
    short own[MRT_MAX_AXES][MAX_SHARE];
    signed char pos[MRT_MAX_AXES][MAX_SHARE];
} cand;

/* A planned candidate within the cap. */
typedef struct result {
    int64_t index;
    double bound_s;
    mrt_plan_totals totals;
    int cand;                      /* into the candidate array */
    int orders[2];                 /* equivalent orders grouped with it
                                      in the K best, in the front */
} result;

typedef struct driver {
    const mrt_spec *s;
    const mrt_rules_options *opt;
    int top;
    mrt_rules_bounds *b;
    int na, ax[MRT_MAX_AXES];  /* the mesh axes of size > 1 */
    int k_of[MRT_MAX_AXES];    /* mesh axis -> its place in ax, or -1 */
    cand *c;
    int64_t n, cap;
    mrt_status st;
    mrt_rules_report *r;
    mrt_rule *rules;     /* [ndims] scratch */
    result *res;         /* planned within the cap */
    int64_t nres, cap_res;
    int *best;           /* the K best so far: indices into res, sorted */
    int nbest;
    int *front;          /* the Pareto front so far: indices into res */
    int nfront;
} driver;

static int collect(void *ctx, const mrt_rule *rules)
{
    driver *dr = ctx;
    if (dr->n == MAX_CANDIDATES) {
        dr->st = MRT_E_USAGE;
        return 1;
    }
    if (dr->n == dr->cap) {
        int64_t ncap = dr->cap ? 2 * dr->cap : 1024;
        cand *nc = realloc(dr->c, (size_t)ncap * sizeof *nc);
        if (!nc) {
            dr->st = MRT_E_NOMEM;
            return 1;
        }
        dr->c = nc;
        dr->cap = ncap;
    }
    cand *c = &dr->c[dr->n];
    memset(c, 0, sizeof *c);
    for (int d = 0; d < dr->s->ndims; d++)
        for (int j = 0; j < rules[d].naxes; j++) {
            int k = dr->k_of[rules[d].axes[j]];
            if (c->nown[k] == MAX_SHARE) /* too many dims share an axis */
                return 0;                /* to keep: left out */
            c->own[k][c->nown[k]] = (short)d;
            c->pos[k][c->nown[k]++] = (signed char)j;
        }
    c->index = dr->n++;
    return 0;
}

static void rules_of(const driver *dr, const cand *c, mrt_rule *rules)
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
    const cand *a = x, *b = y;
    if (a->bound_s != b->bound_s)
        return a->bound_s < b->bound_s ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

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
static int better(const result *a, const result *b)
{
    if (a->totals.time_s != b->totals.time_s)
        return a->totals.time_s < b->totals.time_s;
    return a->index < b->index;
}

/* Whether (time, memory) is beaten in one and matched in the other by
 * a point of the front. */
static int dominated(const driver *dr, double time_s, int64_t memory)
{
    const mrt_plan_totals x = {.time_s = time_s, .peak_memory = memory};
    for (int i = 0; i < dr->nfront; i++)
        if (mrt_rules_dominated(&x, &dr->res[dr->front[i]].totals))
            return 1;
    return 0;
}

static double kth_time(const driver *dr)
{
    return dr->nbest < dr->top ? INFINITY
                               : dr->res[dr->best[dr->nbest - 1]].totals.time_s;
}

/* Whether results x and y put the same axes on the same dims (in some
 * order) with the very same time and memory: then they are shown as one
 * line, "and N other orders". */
/* The same dims split by each axis (orders aside). */
static int same_dims(const cand *a, const cand *b)
{
    return !memcmp(a->nown, b->nown, sizeof a->nown) &&
           !memcmp(a->own, b->own, sizeof a->own);
}

static int same_but_order(const driver *dr, const result *x, const result *y)
{
    const cand *a = &dr->c[x->cand], *b = &dr->c[y->cand];
    return !mrt_rules_cmp_totals(&x->totals, &y->totals) && same_dims(a, b);
}

/* Groups result i into an equivalent one of list[0..n) (which: 0 the
 * K best, 1 the front); 1 if it did.  The earlier candidate represents
 * the group. */
static int group_into(driver *dr, int which, int *list, int n, int i)
{
    for (int j = 0; j < n; j++) {
        result *g = &dr->res[list[j]], *r = &dr->res[i];
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

/* Files result i into the K best and the front. */
static void file_result(driver *dr, int i)
{
    const result *r = &dr->res[i];
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
    if (dominated(dr, r->totals.time_s, r->totals.peak_memory) ||
        group_into(dr, 1, dr->front, dr->nfront, i))
        return;
    int n = 0;
    for (int j = 0; j < dr->nfront; j++)
        if (!mrt_rules_dominated(&dr->res[dr->front[j]].totals, &r->totals))
            dr->front[n++] = dr->front[j];
    dr->front[n++] = i;
    dr->nfront = n;
}

/* Derives and plans candidate ci; files it.  Fails only when out of
 * memory: a candidate that does not plan is counted as invalid. */
static mrt_status plan_candidate(driver *dr, int ci)
{
    const cand *c = &dr->c[ci];
    mrt_rules_report *r = dr->r;
    mrt_spec *ds = NULL;
    mrt_plan *p = NULL;
    mrt_error e = {0};
    rules_of(dr, c, dr->rules);
    mrt_status st = mrt_spec_derive(dr->s, dr->rules, NULL, &ds, &e);
    if (!st)
        st = mrt_plan_create(ds, &dr->opt->plan, &p, &e);
    mrt_spec_destroy(ds);
    if (st == MRT_E_NOMEM)
        return st;
    if (st) {
        if (!r->invalid++)
            mrt_error_format(&e, r->first_error, sizeof r->first_error);
        return MRT_OK;
    }
    r->planned++;
    mrt_plan_totals t = p->totals;
    mrt_plan_destroy(p);
    if (dr->opt->max_memory > 0 && t.peak_memory > dr->opt->max_memory) {
        r->over_memory++;
        return MRT_OK;
    }
    if (dr->nres == dr->cap_res) {
        int64_t ncap = dr->cap_res ? 2 * dr->cap_res : 256;
        result *nr = realloc(dr->res, (size_t)ncap * sizeof *nr);
        int *nf = realloc(dr->front, (size_t)ncap * sizeof *nf);
        if (nr)
            dr->res = nr;
        if (nf)
            dr->front = nf;
        if (!nr || !nf)
            return MRT_E_NOMEM;
        dr->cap_res = ncap;
    }
    dr->res[dr->nres] = (result){c->index, c->bound_s, t, ci, {0, 0}};
    file_result(dr, (int)dr->nres++);
    return MRT_OK;
}

/* ---- screening ---- */

/* The time of candidate ci's plan with the fixed rule (INFINITY when it
 * does not plan); fails only when out of memory. */
static mrt_status screen_one(driver *dr, int ci)
{
    cand *c = &dr->c[ci];
    mrt_spec *ds = NULL;
    mrt_plan *p = NULL;
    mrt_error e = {0};
    rules_of(dr, c, dr->rules);
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

static int over_cap(const driver *dr, const cand *c)
{
    return dr->opt->max_memory > 0 && c->memory > dr->opt->max_memory;
}

/* Up to `want` candidates of ids[0..n) (in that order) with pairwise
 * different sets of axes per dim, into out; returns how many. */
static int first_distinct(const driver *dr, const int *ids, int64_t n,
                          int want, int *out)
{
    int k = 0;
    for (int64_t i = 0; i < n && k < want; i++) {
        const cand *c = &dr->c[ids[i]];
        int seen = 0;
        for (int j = 0; j < k && !seen; j++)
            seen = same_dims(&dr->c[out[j]], c);
        if (!seen)
            out[k++] = ids[i];
    }
    return k;
}

/* Plans every candidate within the memory bound with the fixed rule;
 * ids gets them by that time (then enumeration order).  Returns how
 * many, or -1 when out of memory. */
static int64_t screen_all(driver *dr, int *ids)
{
    by_upper *order = malloc(((size_t)dr->n + 1) * sizeof *order);
    int64_t n = 0;
    if (!order)
        return -1;
    for (int64_t i = 0; i < dr->n; i++) {
        cand *c = &dr->c[i];
        c->upper_s = INFINITY;
        c->replan = 0;
        if (over_cap(dr, c)) {
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
static mrt_status run_screened(driver *dr)
{
    mrt_rules_report *r = dr->r;
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
        if (!over_cap(dr, &dr->c[i]))
            ids[nkept++] = (int)i;
    npick += first_distinct(dr, ids, nkept, each, pick + npick);
    for (int j = 0; j < npick; j++)
        dr->c[pick[j]].replan = 1;
    free(ids);
    free(pick);
    for (int64_t i = 0; i < dr->n; i++) {
        const cand *c = &dr->c[i];
        if (over_cap(dr, c))
            continue;
        if (c->bound_s > upper || c->bound_s > kth_time(dr)) {
            r->pruned_time++;
            continue;
        }
        if (!c->replan) {
            r->not_replanned++;
            continue;
        }
        mrt_status st = plan_candidate(dr, (int)i);
        if (st)
            return st;
    }
    return MRT_OK;
}

static mrt_status run(driver *dr)
{
    const mrt_rules_options *opt = dr->opt;
    mrt_rules_report *r = dr->r;
    for (int64_t i = 0; i < dr->n; i++) {
        const cand *c = &dr->c[i];
        if (!opt->exhaustive) {
            if (over_cap(dr, c)) {
                r->pruned_memory++;
                continue;
            }
            if (c->bound_s > kth_time(dr) &&
                dominated(dr, c->bound_s, c->memory)) {
                r->pruned_time++;
                continue;
            }
        }
        mrt_status st = plan_candidate(dr, (int)i);
        if (st)
            return st;
    }
    return MRT_OK;
}

static int cmp_front(const void *x, const void *y)
{
    const mrt_rules_result *a = x, *b = y;
    int c = mrt_rules_cmp_totals(&a->totals, &b->totals);
    return c ? c : (a->index > b->index) - (a->index < b->index);
}

static mrt_status export(driver *dr, int which, const int *ids, int n,
                         mrt_rules_result **out)
{
    *out = calloc((size_t)n + 1, sizeof **out);
    if (!*out)
        return MRT_E_NOMEM;
    for (int i = 0; i < n; i++) {
        const result *res = &dr->res[ids[i]];
        mrt_rules_result *o = &(*out)[i];
        o->totals = res->totals;
        o->bound_s = res->bound_s;
        o->index = res->index;
        o->orders = res->orders[which];
        if (!(o->rule = calloc((size_t)dr->s->ndims + 1, sizeof *o->rule)))
            return MRT_E_NOMEM;
        rules_of(dr, &dr->c[res->cand], o->rule);
    }
    return MRT_OK;
}

/* The spec's own rules, for reference, and the profile every candidate
 * is planned with (the same for all: one mesh, one `network:`). */
static mrt_status plan_spec(driver *dr, mrt_profile *prof, mrt_error *err)
{
    mrt_plan *p = NULL;
    mrt_status st = mrt_plan_create_with(dr->s, &dr->opt->plan,
                                         MRT_STRATEGY_RULES, &p, err);
    if (st)
        return st;
    *prof = p->profile;
    mrt_plan_destroy(p);
    p = NULL;
    if (mrt_plan_create(dr->s, &dr->opt->plan, &p, NULL) == MRT_OK) {
        dr->r->has_spec = 1;
        dr->r->spec_totals = p->totals;
    }
    mrt_plan_destroy(p);
    return MRT_OK;
}

mrt_status mrt_search_rules(const mrt_spec *s, const mrt_rules_options *opt,
                            mrt_rules_report **out, mrt_error *err)
{
    mrt_rules_options defaults = {0};
    if (!opt)
        opt = &defaults;
    double t0 = now_s();
    driver dr = {.s = s, .opt = opt, .top = opt->top > 0 ? opt->top : 5,
                 .st = MRT_OK};
    mrt_profile prof;
    mrt_status st = MRT_E_NOMEM;
    *out = NULL;
    dr.r = calloc(1, sizeof *dr.r);
    dr.rules = calloc((size_t)s->ndims + 1, sizeof *dr.rules);
    dr.best = calloc((size_t)dr.top + 1, sizeof *dr.best);
    if (!dr.r || !dr.rules || !dr.best)
        goto nomem;
    dr.r->ndims = s->ndims;
    int meshtf = opt->plan.planner == MRT_PLANNER_MESHTF;
    for (int d = 0; d < s->ndims; d++)
        dr.r->nsearched += searched(s, meshtf, d);
    if ((st = plan_spec(&dr, &prof, err)))
        goto fail;
    for (int a = 0; a < s->mesh.naxes; a++) {
        dr.k_of[a] = -1;
        if (s->mesh.size[a] > 1) {
            dr.k_of[a] = dr.na;
            dr.ax[dr.na++] = a;
        }
    }
    if (!(dr.b = mrt_rules_bounds_create(s, &prof, meshtf)))
        goto nomem;
    if (enumerate(s, meshtf, collect, &dr) < 0 || dr.st == MRT_E_NOMEM)
        goto nomem;
    if (dr.st) {
        st = mrt_error_set(err, MRT_E_USAGE, s->path, (mrt_mark){0},
                           "more than %d candidate layouts: too many to "
                           "search (use a smaller mesh, or give some "
                           "tensors their own layout:)", MAX_CANDIDATES);
        goto fail;
    }
    dr.r->enumerated = dr.n;
    double work = (double)dr.n * mrt_rules_bounds_work(dr.b);
    dr.r->screened = !opt->exhaustive && !meshtf &&
                     (opt->screen > 0 ||
                      (opt->screen == 0 && work > SCREEN_ABOVE));
    /* A screened search leans on its bounds less: weigh fewer execs. */
    mrt_rules_bounds_set_budget(dr.b, dr.r->screened ? 64 : 256);
    for (int64_t i = 0; i < dr.n; i++) {
        rules_of(&dr, &dr.c[i], dr.rules);
        mrt_rules_bounds_eval(dr.b, dr.rules, &dr.c[i].bound_s,
                              &dr.c[i].memory);
    }
    qsort(dr.c, (size_t)dr.n, sizeof *dr.c, cmp_bound);
    double t1 = now_s();
    dr.r->bound_seconds = t1 - t0;
    if ((st = dr.r->screened ? run_screened(&dr) : run(&dr)))
        goto nomem;
    dr.r->plan_seconds = now_s() - t1;
    dr.r->ntop = dr.nbest;
    dr.r->npareto = dr.nfront;
    if (export(&dr, 0, dr.best, dr.nbest, &dr.r->top) ||
        export(&dr, 1, dr.front, dr.nfront, &dr.r->pareto))
        goto nomem;
    qsort(dr.r->pareto, (size_t)dr.nfront, sizeof *dr.r->pareto, cmp_front);
    dr.r->elapsed_seconds = now_s() - t0;
    *out = dr.r;
    dr.r = NULL;
    st = MRT_OK;
    goto done;
nomem:
    st = mrt_error_set(err, MRT_E_NOMEM, s->path, (mrt_mark){0},
                       "out of memory while searching layouts");
fail:
done:
    mrt_rules_report_destroy(dr.r);
    mrt_rules_bounds_destroy(dr.b);
    free(dr.c);
    free(dr.rules);
    free(dr.res);
    free(dr.best);
    free(dr.front);
    return st;
}

void mrt_rules_report_destroy(mrt_rules_report *r)
{
    if (!r)
        return;
    for (int i = 0; r->top && i < r->ntop; i++)
        free(r->top[i].rule);
    for (int i = 0; r->pareto && i < r->npareto; i++)
        free(r->pareto[i].rule);
    free(r->top);
    free(r->pareto);
    free(r);
}
