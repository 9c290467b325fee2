/*
 * test_search.c — `meshrt search`'s engine (ops/search_rules.c) against a
 * brute force written here: every set of global rules of small programs
 * is derived and planned without any pruning, and the search's K best,
 * Pareto front, counts and bounds must agree with it.  The winner's
 * printed `layout:` block, pasted into the spec, must plan to the same
 * time.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "search_rules.h"
#include "split.h"
#include "spec.h"

/* Two einsums on a 2 x 2 mesh whose axes have different links. */
static const char *const two_einsums =
    "mesh: {data: 2, model: 2}\n"
    "dims: {batch: 8, d: 16, f: 32, o: 8}\n"
    "network:\n"
    "  data: {latency_us: 5, bandwidth_GBps: 1}\n"
    "  model: {latency_us: 1, bandwidth_GBps: 20}\n"
    "%s"
    "tensors:\n"
    "  x:  {shape: [batch, d]}\n"
    "  w1: {shape: [d, f]}\n"
    "  w2: {shape: [f, o]}\n"
    "ops:\n"
    "  - {op: einsum, in: [x, w1], out: h, shape: [batch, f]}\n"
    "  - {op: einsum, in: [h, w2], out: y, shape: [batch, o]}\n";

/* An awkward mesh (3 x 2), a tensor with its own layout, two outputs. */
static const char *const awkward =
    "mesh: {rows: 3, cols: 2}\n"
    "dims: {a: 6, b: 12, c: 8, e: 4, g: 2}\n"
    "%s"
    "tensors:\n"
    "  p: {shape: [a, b]}\n"
    "  q: {shape: [b, c, g], layout: {c: cols}}\n"
    "  r: {shape: [c, e]}\n"
    "ops:\n"
    "  - {op: einsum, in: [p, q], out: s, shape: [a, c]}\n"
    "  - {op: einsum, in: [s, r], out: t, shape: [a, e]}\n"
    "outputs: [s, t]\n";

static const char *const default_layout = "layout: {batch: data, f: model}\n";

static mrt_spec *load_text(const char *fmt, const char *layout)
{
    char text[4096];
    int len = snprintf(text, sizeof text, fmt, layout);
    ck_assert(len > 0 && (size_t)len < sizeof text);
    mrt_spec *s = NULL;
    mrt_error err = {0};
    mrt_status st = mrt_spec_load_string("search.yaml", text, (size_t)len,
                                         NULL, &s, &err);
    if (st != MRT_OK)
        ck_abort_msg("spec: %d:%d: %s", err.line, err.column, err.message);
    return s;
}

/* ---- the brute force ---- */

typedef struct point {
    double time_s;
    int64_t memory;
    uint64_t owners[MRT_MAX_AXES]; /* the dims each mesh axis splits */
} point;

typedef struct brute {
    const mrt_spec *s;
    mrt_planner planner;
    int64_t cap;            /* <= 0: none */
    int dims[64], nd;
    mrt_rule rules[64];
    point *pt;
    int n, enumerated;
} brute;

static void plan_rules(brute *b)
{
    for (int d = 0; d < b->nd; d++) {
        int dim = b->dims[d];
        int64_t parts = 1;
        for (int j = 0; j < b->rules[dim].naxes; j++)
            parts *= b->s->mesh.size[b->rules[dim].axes[j]];
        if (!mrt_split_ok(b->s->dim_size[dim], parts)) /* the search's */
            return;                                     /* space */
    }
    mrt_spec *d = NULL;
    mrt_plan *p = NULL;
    mrt_error err = {0};
    mrt_plan_options opt = {.planner = b->planner};
    /* Rules that split one tensor twice over an axis are not layouts:
     * the loader's own check sorts them out here. */
    if (mrt_spec_derive(b->s, b->rules, NULL, &d, &err) != MRT_OK)
        return;
    /* Mesh-TF's planner refuses rules that split a tensor with its own
     * layout twice over an axis (it has no own layouts): invalid too. */
    if (mrt_plan_create(d, &opt, &p, &err) != MRT_OK) {
        ck_assert_int_eq(b->planner, MRT_PLANNER_MESHTF);
        mrt_spec_destroy(d);
        return;
    }
    b->enumerated++;
    if (b->cap <= 0 || p->totals.peak_memory <= b->cap) {
        point *pt = &b->pt[b->n++];
        pt->time_s = p->totals.time_s;
        pt->memory = p->totals.peak_memory;
        memset(pt->owners, 0, sizeof pt->owners);
        for (int i = 0; i < b->s->ndims; i++)
            for (int j = 0; j < b->rules[i].naxes; j++)
                pt->owners[b->rules[i].axes[j]] |= 1ull << i;
    }
    mrt_plan_destroy(p);
    mrt_spec_destroy(d);
}

static void brute_axis(brute *b, int a);

/* Mesh axis a on any subset of the dims from d on, anywhere in each
 * dim's list (valid or not: plan_rules sorts them out). */
static void brute_dims(brute *b, int a, int d)
{
    if (d == b->nd) {
        brute_axis(b, a + 1);
        return;
    }
    brute_dims(b, a, d + 1);
    mrt_rule *r = &b->rules[b->dims[d]];
    for (int pos = 0; pos <= r->naxes; pos++) {
        memmove(&r->axes[pos + 1], &r->axes[pos],
                (size_t)(r->naxes - pos) * sizeof(int));
        r->axes[pos] = a;
        r->naxes++;
        brute_dims(b, a, d + 1);
        r->naxes--;
        memmove(&r->axes[pos], &r->axes[pos + 1],
                (size_t)(r->naxes - pos) * sizeof(int));
    }
}

/* Mesh axis a (and the ones after it). */
static void brute_axis(brute *b, int a)
{
    if (a == b->s->mesh.naxes) {
        plan_rules(b);
        return;
    }
    if (b->s->mesh.size[a] < 2) {
        brute_axis(b, a + 1);
        return;
    }
    brute_dims(b, a, 0);
}

static void brute_force(brute *b, const mrt_spec *s, mrt_planner planner,
                        int64_t cap)
{
    memset(b, 0, sizeof *b);
    b->s = s;
    b->planner = planner;
    b->cap = cap;
    ck_assert_int_le(s->ndims, 64);
    for (int d = 0; d < s->ndims; d++) {
        int used = 0;
        for (int t = 0; t < s->ntensors; t++)
            if ((planner == MRT_PLANNER_MESHTF || !s->tensor[t].own_layout) &&
                mrt_layout_find_dim(&s->tensor[t].layout, d) >= 0)
                used = 1;
        if (used)
            b->dims[b->nd++] = d;
    }
    b->pt = calloc(100000, sizeof *b->pt);
    ck_assert_ptr_nonnull(b->pt);
    brute_axis(b, 0);
}

static int by_time(const void *x, const void *y)
{
    const point *a = x, *b = y;
    return (a->time_s > b->time_s) - (a->time_s < b->time_s);
}

static int same_group(const point *a, const point *b)
{
    return a->time_s == b->time_s && a->memory == b->memory &&
           memcmp(a->owners, b->owners, sizeof a->owners) == 0;
}

/* The times of the first k distinct entries (orders of the same axes
 * with the same figures are one entry), fastest first. */
static int distinct_times(brute *b, double *out, int k)
{
    qsort(b->pt, (size_t)b->n, sizeof *b->pt, by_time);
    int n = 0;
    for (int i = 0; i < b->n && n < k; i++) {
        int dup = 0;
        for (int j = 0; j < i && !dup; j++)
            dup = same_group(&b->pt[i], &b->pt[j]);
        if (!dup)
            out[n++] = b->pt[i].time_s;
    }
    return n;
}

/* ---- checks ---- */

static int dominates(const mrt_plan_totals *a, double t, int64_t m)
{
    return (a->time_s < t && a->peak_memory <= m) ||
           (a->time_s <= t && a->peak_memory < m);
}

static void check_against_brute(const mrt_spec *s, mrt_planner planner,
                                int64_t cap, int top, int exhaustive)
{
    brute b;
    brute_force(&b, s, planner, cap);
    mrt_rules_options opt = {.plan = {.planner = planner}, .top = top,
                             .max_memory = cap, .exhaustive = exhaustive};
    mrt_rules_report *r = NULL;
    mrt_error err = {0};
    ck_assert_int_eq(mrt_search_rules(s, &opt, &r, &err), MRT_OK);

    ck_assert_int_eq(r->enumerated, b.enumerated);
    ck_assert_int_eq(r->invalid, 0);
    ck_assert_int_eq(r->enumerated, r->pruned_time + r->pruned_memory +
                                        r->planned);
    if (exhaustive)
        ck_assert_int_eq(r->planned, b.enumerated);

    double want[64];
    int nwant = distinct_times(&b, want, top);
    ck_assert_int_gt(nwant, 0);
    ck_assert_int_eq(r->ntop, nwant);
    for (int i = 0; i < r->ntop; i++) {
        /* Exactly the same doubles: the same rules planned the same way. */
        ck_assert_msg(r->top[i].totals.time_s == want[i],
                      "top %d: %.17g, brute force %.17g", i,
                      r->top[i].totals.time_s, want[i]);
        ck_assert(r->top[i].bound_s <= r->top[i].totals.time_s);
        /* Grouped: the other orders of its axes with the same figures. */
        point me = {r->top[i].totals.time_s, r->top[i].totals.peak_memory,
                    {0}};
        for (int d = 0; d < s->ndims; d++)
            for (int j = 0; j < r->top[i].rule[d].naxes; j++)
                me.owners[r->top[i].rule[d].axes[j]] |= 1ull << d;
        int same = 0;
        for (int j = 0; j < b.n; j++)
            same += same_group(&b.pt[j], &me);
        ck_assert_int_eq(r->top[i].orders + 1, same);
        if (cap > 0)
            ck_assert_int_le(r->top[i].totals.peak_memory, cap);
    }
    ck_assert(r->top[0].totals.time_s == b.pt[0].time_s);

    /* The front: no point of it dominates another, and every brute-force
     * point is dominated by, or equal to, one of them. */
    ck_assert_int_gt(r->npareto, 0);
    for (int i = 0; i < r->npareto; i++)
        for (int j = 0; j < r->npareto; j++)
            ck_assert(!dominates(&r->pareto[i].totals,
                                 r->pareto[j].totals.time_s,
                                 r->pareto[j].totals.peak_memory));
    for (int i = 0; i < b.n; i++) {
        int covered = 0;
        for (int j = 0; j < r->npareto && !covered; j++) {
            const mrt_plan_totals *t = &r->pareto[j].totals;
            covered = dominates(t, b.pt[i].time_s, b.pt[i].memory) ||
                      (t->time_s == b.pt[i].time_s &&
                       t->peak_memory == b.pt[i].memory);
        }
        ck_assert_msg(covered, "brute-force point %.17g s, %lld bytes is "
                      "missing from the front", b.pt[i].time_s,
                      (long long)b.pt[i].memory);
    }
    mrt_rules_report_destroy(r);
    free(b.pt);
}

START_TEST(best_equals_brute_force)
{
    mrt_spec *s = load_text(two_einsums, default_layout);
    check_against_brute(s, MRT_PLANNER_AUTO, 0, 5, 0);
    check_against_brute(s, MRT_PLANNER_AUTO, 0, 1, 0);
    check_against_brute(s, MRT_PLANNER_AUTO, 0, 40, 0);
    mrt_spec_destroy(s);
}
END_TEST

START_TEST(exhaustive_agrees_with_pruned)
{
    mrt_spec *s = load_text(two_einsums, default_layout);
    check_against_brute(s, MRT_PLANNER_AUTO, 0, 3, 1);
    mrt_spec_destroy(s);
}
END_TEST

START_TEST(meshtf_planner)
{
    mrt_spec *s = load_text(two_einsums, default_layout);
    check_against_brute(s, MRT_PLANNER_MESHTF, 0, 5, 0);
    mrt_spec_destroy(s);
}
END_TEST

START_TEST(uneven_split_is_searched)
{
    /* No dim divides by 3 (10 rows: 4, 3, 3; 256: 86, 85, 85), so every
     * split is uneven: an even-only search has the replicated rules
     * alone, and those compute everything 3 times.  The search must
     * weigh the uneven splits, pick one, and agree with brute force. */
    mrt_spec *s = load_text("mesh: {x: 3}\n"
                            "dims: {b: 10, d: 256, e: 256}\n"
                            "%s"
                            "tensors:\n"
                            "  h: {shape: [b, d]}\n"
                            "  w: {shape: [d, e]}\n"
                            "ops:\n"
                            "  - {op: einsum, in: [h, w], out: y, "
                            "shape: [b, e]}\n",
                            "");
    mrt_rules_options opt = {.top = 1};
    mrt_rules_report *r = NULL;
    ck_assert_int_eq(mrt_search_rules(s, &opt, &r, NULL), MRT_OK);
    ck_assert_int_ge(r->ntop, 1);
    ck_assert_int_gt(r->enumerated, 1);
    int split = 0;
    for (int i = 0; i < s->ndims; i++)
        split += r->top[0].rule[i].naxes;
    ck_assert_int_eq(split, 1); /* one dim over x, unevenly */
    mrt_rules_report_destroy(r);
    check_against_brute(s, MRT_PLANNER_AUTO, 0, 3, 0);
    mrt_spec_destroy(s);
}
END_TEST

START_TEST(awkward_mesh_and_own_layout)
{
    mrt_spec *s = load_text(awkward, "layout: {a: rows}\n");
    /* q has its own layout: g, which only q has, is not searched (but
     * Mesh-TF, which ignores q's layout, searches it). */
    mrt_rules_options opt = {0};
    mrt_rules_report *r = NULL;
    ck_assert_int_eq(mrt_search_rules(s, &opt, &r, NULL), MRT_OK);
    ck_assert_int_eq(r->nsearched, 4); /* a, b (in p), c (s, r), e */
    mrt_rules_report_destroy(r);
    check_against_brute(s, MRT_PLANNER_AUTO, 0, 5, 0);
    check_against_brute(s, MRT_PLANNER_MESHTF, 0, 5, 0);
    mrt_spec_destroy(s);
}
END_TEST

START_TEST(memory_cap)
{
    mrt_spec *s = load_text(two_einsums, default_layout);
    /* A cap between the smallest and the largest peak. */
    brute b;
    brute_force(&b, s, MRT_PLANNER_AUTO, 0);
    int64_t lo = INT64_MAX, hi = 0;
    for (int i = 0; i < b.n; i++) {
        lo = b.pt[i].memory < lo ? b.pt[i].memory : lo;
        hi = b.pt[i].memory > hi ? b.pt[i].memory : hi;
    }
    free(b.pt);
    ck_assert_int_lt(lo, hi);
    check_against_brute(s, MRT_PLANNER_AUTO, (lo + hi) / 2, 5, 0);
    check_against_brute(s, MRT_PLANNER_AUTO, lo, 5, 0);
    /* Below the smallest: nothing fits. */
    mrt_rules_options opt = {.max_memory = lo - 1};
    mrt_rules_report *r = NULL;
    ck_assert_int_eq(mrt_search_rules(s, &opt, &r, NULL), MRT_OK);
    ck_assert_int_eq(r->ntop, 0);
    ck_assert_int_eq(r->npareto, 0);
    mrt_rules_report_destroy(r);
    mrt_spec_destroy(s);
}
END_TEST

/* Screening (forced here; by default only big searches screen) plans
 * every candidate with the fixed rule and re-plans the best with auto:
 * what it reports must be real plans, and on this small program it
 * still finds the best. */
START_TEST(screened_search)
{
    mrt_spec *s = load_text(two_einsums, default_layout);
    brute b;
    brute_force(&b, s, MRT_PLANNER_AUTO, 0);
    qsort(b.pt, (size_t)b.n, sizeof *b.pt, by_time);
    mrt_rules_options opt = {.screen = 1};
    mrt_rules_report *r = NULL;
    ck_assert_int_eq(mrt_search_rules(s, &opt, &r, NULL), MRT_OK);
    ck_assert(r->screened);
    ck_assert_int_eq(r->screen_plans, b.enumerated);
    ck_assert_int_eq(r->enumerated, r->pruned_time + r->pruned_memory +
                                        r->not_replanned + r->planned);
    ck_assert_int_gt(r->ntop, 0);
    ck_assert(r->top[0].totals.time_s == b.pt[0].time_s);
    for (int i = 0; i < r->ntop; i++) {
        mrt_spec *d = NULL;
        mrt_plan *p = NULL;
        ck_assert_int_eq(mrt_spec_derive(s, r->top[i].rule, NULL, &d, NULL),
                         MRT_OK);
        ck_assert_int_eq(mrt_plan_create(d, NULL, &p, NULL), MRT_OK);
        ck_assert(p->totals.time_s == r->top[i].totals.time_s);
        ck_assert(r->top[i].bound_s <= r->top[i].totals.time_s);
        mrt_plan_destroy(p);
        mrt_spec_destroy(d);
    }
    mrt_rules_report_destroy(r);
    /* Exhaustive overrides screening. */
    opt.exhaustive = 1;
    ck_assert_int_eq(mrt_search_rules(s, &opt, &r, NULL), MRT_OK);
    ck_assert(!r->screened);
    ck_assert_int_eq(r->planned, b.enumerated);
    mrt_rules_report_destroy(r);
    free(b.pt);
    mrt_spec_destroy(s);
}
END_TEST

START_TEST(deterministic)
{
    mrt_spec *s = load_text(two_einsums, default_layout);
    mrt_rules_report *r[2];
    mrt_rules_options opt = {.top = 7};
    for (int k = 0; k < 2; k++)
        ck_assert_int_eq(mrt_search_rules(s, &opt, &r[k], NULL), MRT_OK);
    ck_assert_int_eq(r[0]->ntop, r[1]->ntop);
    ck_assert_int_eq(r[0]->planned, r[1]->planned);
    for (int i = 0; i < r[0]->ntop; i++) {
        ck_assert_int_eq(r[0]->top[i].index, r[1]->top[i].index);
        ck_assert(memcmp(r[0]->top[i].rule, r[1]->top[i].rule,
                         (size_t)s->ndims * sizeof(mrt_rule)) == 0);
    }
    mrt_rules_report_destroy(r[0]);
    mrt_rules_report_destroy(r[1]);
    mrt_spec_destroy(s);
}
END_TEST

START_TEST(printed_layout_plans_the_same)
{
    mrt_spec *s = load_text(two_einsums, default_layout);
    mrt_rules_report *r = NULL;
    ck_assert_int_eq(mrt_search_rules(s, NULL, &r, NULL), MRT_OK);
    for (int i = 0; i < r->ntop; i++) {
        char *block = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&block, &len);
        mrt_rules_print_yaml(s, r->top[i].rule, f);
        fclose(f);
        ck_assert(strncmp(block, "layout:", 7) == 0);
        mrt_spec *again = load_text(two_einsums, block);
        mrt_plan *p = NULL;
        ck_assert_int_eq(mrt_plan_create(again, NULL, &p, NULL), MRT_OK);
        ck_assert_msg(p->totals.time_s == r->top[i].totals.time_s,
                      "%s plans to %.17g, searched %.17g", block,
                      p->totals.time_s, r->top[i].totals.time_s);
        ck_assert_int_eq(p->totals.peak_memory,
                         r->top[i].totals.peak_memory);
        mrt_plan_destroy(p);
        mrt_spec_destroy(again);
        free(block);
    }
    mrt_rules_report_destroy(r);
    mrt_spec_destroy(s);
}
END_TEST

START_TEST(rules_text_and_yaml)
{
    mrt_spec *s = load_text(two_einsums, default_layout);
    mrt_rule *rules = calloc((size_t)s->ndims, sizeof *rules);
    char buf[256];
    ck_assert_str_eq(mrt_rules_str(s, rules, buf, sizeof buf),
                     "(all replicated)");
    int f = mrt_spec_find_dim(s, "f"), batch = mrt_spec_find_dim(s, "batch");
    rules[batch] = (mrt_rule){.naxes = 1, .axes = {0}};
    rules[f] = (mrt_rule){.naxes = 2, .axes = {1, 0}};
    ck_assert_str_eq(mrt_rules_str(s, rules, buf, sizeof buf),
                     "batch: data, f: [model, data]");
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    mrt_rules_print_yaml(s, rules, m);
    memset(rules, 0, (size_t)s->ndims * sizeof *rules);
    mrt_rules_print_yaml(s, rules, m);
    fclose(m);
    ck_assert_str_eq(text, "layout:\n  batch: data\n  f: [model, data]\n"
                           "layout: {}\n");
    free(text);
    /* An all-replicated block loads too. */
    mrt_spec *again = load_text(two_einsums, "layout: {}\n");
    mrt_spec_destroy(again);
    free(rules);
    mrt_spec_destroy(s);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("search");
    TCase *tc = tcase_create("search");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, best_equals_brute_force);
    tcase_add_test(tc, exhaustive_agrees_with_pruned);
    tcase_add_test(tc, meshtf_planner);
    tcase_add_test(tc, uneven_split_is_searched);
    tcase_add_test(tc, awkward_mesh_and_own_layout);
    tcase_add_test(tc, memory_cap);
    tcase_add_test(tc, screened_search);
    tcase_add_test(tc, deterministic);
    tcase_add_test(tc, printed_layout_plans_the_same);
    tcase_add_test(tc, rules_text_and_yaml);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
