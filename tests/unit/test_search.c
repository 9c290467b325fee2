/*
 * test_search.c — `meshrt search`'s engine, through meshrt.h only
 * (mrt_search_rules_create), against a brute force written here: every
 * set of global rules of small programs is enumerated from the spec's
 * public description (mesh axes, dims, which tensors use which dims and
 * which have a layout of their own), written as a `layout:` block into
 * the spec's text, loaded and planned without any pruning; the search's
 * K best, Pareto front, counts and bounds must agree with it.  The
 * winner's printed `layout:` block, pasted into the spec, must plan to
 * the same time.  Built against the shared libmeshrt with only include/
 * on its include path, so it cannot lean on the search's internals.
 */
/* planning only: meshrt.h, no mpi.h */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meshrt.h"

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

/* The spec fmt with layout (a `layout:` block, or "") in its place. */
static mrt_status try_load(const char *fmt, const char *layout, mrt_spec **s,
                           mrt_error *err)
{
    char text[4096];
    int len = snprintf(text, sizeof text, fmt, layout);
    ck_assert(len > 0 && (size_t)len < sizeof text);
    *s = NULL;
    return mrt_spec_load_string("search.yaml", text, (size_t)len, s, err);
}

static mrt_spec *load_text(const char *fmt, const char *layout)
{
    mrt_spec *s = NULL;
    mrt_error err = {0};
    if (try_load(fmt, layout, &s, &err) != MRT_OK)
        ck_abort_msg("spec: %d:%d: %s", err.line, err.column, err.message);
    return s;
}

static int spec_ndims(const mrt_spec *s)
{
    mrt_spec_info info;
    mrt_spec_get_info(s, &info);
    return info.ndims;
}

/* ---- the brute force ---- */

/* The search's split rule, mirrored from layout/split.h's mrt_split_ok
 * (internal, so not reachable from here): a dim is cut into parts blocks
 * only if every block holds at least one element.  Uneven blocks are
 * fine.  If the search's rule changes, this copy must change with it, or
 * the counts below disagree. */
static int split_ok(int64_t size, int64_t parts)
{
    return parts > 0 && size >= parts;
}

/* rules ([ndims] of s) as a one-line `layout:` block, written here
 * rather than by mrt_search_write_layout so the brute force does not
 * trust the code it checks. */
static void layout_block(const mrt_spec *s, const mrt_search_axes *rules,
                         char *buf, size_t size)
{
    mrt_spec_info info;
    mrt_spec_get_info(s, &info);
    size_t n = (size_t)snprintf(buf, size, "layout: {");
    const char *sep = "";
    for (int d = 0; d < info.ndims; d++) {
        if (rules[d].naxes == 0)
            continue;
        n += (size_t)snprintf(buf + n, size - n, "%s%s: %s", sep,
                              mrt_spec_get_dim(s, d, NULL),
                              rules[d].naxes > 1 ? "[" : "");
        for (int j = 0; j < rules[d].naxes; j++)
            n += (size_t)snprintf(buf + n, size - n, "%s%s", j ? ", " : "",
                                  info.mesh.name[rules[d].axis[j]]);
        n += (size_t)snprintf(buf + n, size - n, "%s",
                              rules[d].naxes > 1 ? "]" : "");
        sep = ", ";
    }
    n += (size_t)snprintf(buf + n, size - n, "}\n");
    ck_assert(n < size);
}

typedef struct point {
    double time_s;
    int64_t memory;
    uint64_t owners[MRT_API_MAX_AXES]; /* the dims each mesh axis splits */
} point;

typedef struct brute {
    const mrt_spec *s;
    const char *fmt; /* s's text, "%s" where its layout: goes */
    mrt_spec_info info;
    int64_t dim_size[64];
    mrt_planner planner;
    int64_t cap;            /* <= 0: none */
    int dims[64], nd;       /* the dims some tensor takes from the rules */
    unsigned char used[64]; /* the same, by dim */
    mrt_search_axes rules[64];
    point *pt;
    int n, enumerated;
} brute;

static void plan_rules(brute *b)
{
    for (int d = 0; d < b->nd; d++) {
        int dim = b->dims[d];
        int64_t parts = 1;
        for (int j = 0; j < b->rules[dim].naxes; j++)
            parts *= b->info.mesh.size[b->rules[dim].axis[j]];
        if (!split_ok(b->dim_size[dim], parts)) /* the search's space */
            return;
    }
    char block[2048];
    layout_block(b->s, b->rules, block, sizeof block);
    mrt_spec *d = NULL;
    mrt_plan *p = NULL;
    mrt_error err = {0};
    mrt_plan_options opt = {.planner = b->planner};
    /* Rules that split one tensor twice over an axis are not layouts:
     * the loader's own check sorts them out here. */
    if (try_load(b->fmt, block, &d, &err) != MRT_OK) {
        ck_assert_int_eq(err.code, MRT_E_SPEC);
        return;
    }
    /* Mesh-TF's planner refuses rules that split a tensor with its own
     * layout twice over an axis (it has no own layouts): invalid too. */
    if (mrt_plan_create(d, &opt, &p, &err) != MRT_OK) {
        ck_assert_int_eq(b->planner, MRT_PLANNER_MESHTF);
        mrt_spec_destroy(d);
        return;
    }
    b->enumerated++;
    mrt_plan_totals t = mrt_plan_get_totals(p);
    if (b->cap <= 0 || t.peak_memory <= b->cap) {
        ck_assert_int_lt(b->n, 100000);
        point *pt = &b->pt[b->n++];
        pt->time_s = t.time_s;
        pt->memory = t.peak_memory;
        memset(pt->owners, 0, sizeof pt->owners);
        for (int i = 0; i < b->info.ndims; i++)
            for (int j = 0; j < b->rules[i].naxes; j++)
                pt->owners[b->rules[i].axis[j]] |= 1ull << i;
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
    mrt_search_axes *r = &b->rules[b->dims[d]];
    for (int pos = 0; pos <= r->naxes; pos++) {
        memmove(&r->axis[pos + 1], &r->axis[pos],
                (size_t)(r->naxes - pos) * sizeof(int));
        r->axis[pos] = a;
        r->naxes++;
        brute_dims(b, a, d + 1);
        r->naxes--;
        memmove(&r->axis[pos], &r->axis[pos + 1],
                (size_t)(r->naxes - pos) * sizeof(int));
    }
}

/* Mesh axis a (and the ones after it). */
static void brute_axis(brute *b, int a)
{
    if (a == b->info.mesh.naxes) {
        plan_rules(b);
        return;
    }
    if (b->info.mesh.size[a] < 2) {
        brute_axis(b, a + 1);
        return;
    }
    brute_dims(b, a, 0);
}

/* Every set of rules of s (loaded from fmt) planned with planner; the
 * points under cap kept in b->pt. */
static void brute_force(brute *b, const mrt_spec *s, const char *fmt,
                        mrt_planner planner, int64_t cap)
{
    memset(b, 0, sizeof *b);
    b->s = s;
    b->fmt = fmt;
    b->planner = planner;
    b->cap = cap;
    mrt_spec_get_info(s, &b->info);
    ck_assert_int_le(b->info.ndims, 64);
    for (int d = 0; d < b->info.ndims; d++)
        ck_assert_ptr_nonnull(mrt_spec_get_dim(s, d, &b->dim_size[d]));
    /* A dim is searched when some tensor takes it from the rules: one
     * without a layout of its own (Mesh-TF has no own layouts: all). */
    for (int t = 0; t < b->info.ntensors; t++) {
        mrt_spec_tensor_info ti;
        ck_assert_int_eq(mrt_spec_get_tensor(s, t, &ti, NULL), MRT_OK);
        if (planner != MRT_PLANNER_MESHTF && ti.own_layout)
            continue;
        for (int k = 0; k < ti.ndims; k++) {
            int d = mrt_spec_find_dim(s, ti.dim[k]);
            ck_assert_int_ge(d, 0);
            b->used[d] = 1;
        }
    }
    for (int d = 0; d < b->info.ndims; d++)
        if (b->used[d])
            b->dims[b->nd++] = d;
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

static void check_against_brute(const mrt_spec *s, const char *fmt,
                                mrt_planner planner, int64_t cap, int top,
                                int exhaustive)
{
    brute b;
    brute_force(&b, s, fmt, planner, cap);
    mrt_search_options opt = {.plan = {.planner = planner},
                              .top = top,
                              .max_memory = cap,
                              .exhaustive = exhaustive};
    mrt_search_rules_report *r = NULL;
    mrt_error err = {0};
    ck_assert_int_eq(mrt_search_rules_create(s, &opt, &r, &err), MRT_OK);

    /* The same dims searched, found independently. */
    ck_assert_int_eq(r->ndims, b.info.ndims);
    ck_assert_int_eq(r->nsearched, b.nd);
    for (int d = 0; d < r->ndims; d++)
        ck_assert_int_eq(r->searched[d], b.used[d]);
    ck_assert_int_eq(r->enumerated, b.enumerated);
    ck_assert_int_eq(r->invalid, 0);
    ck_assert_int_eq(r->enumerated,
                     r->pruned_time + r->pruned_memory + r->planned);
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
        point me = {r->top[i].totals.time_s, r->top[i].totals.peak_memory, {0}};
        for (int d = 0; d < r->ndims; d++)
            for (int j = 0; j < r->top[i].rule[d].naxes; j++)
                me.owners[r->top[i].rule[d].axis[j]] |= 1ull << d;
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
        ck_assert_msg(covered,
                      "brute-force point %.17g s, %lld bytes is "
                      "missing from the front",
                      b.pt[i].time_s, (long long)b.pt[i].memory);
    }
    mrt_search_rules_destroy(r);
    free(b.pt);
}

START_TEST(best_equals_brute_force)
{
    mrt_spec *s = load_text(two_einsums, default_layout);
    check_against_brute(s, two_einsums, MRT_PLANNER_AUTO, 0, 5, 0);
    check_against_brute(s, two_einsums, MRT_PLANNER_AUTO, 0, 1, 0);
    check_against_brute(s, two_einsums, MRT_PLANNER_AUTO, 0, 40, 0);
    mrt_spec_destroy(s);
}
END_TEST

START_TEST(exhaustive_agrees_with_pruned)
{
    mrt_spec *s = load_text(two_einsums, default_layout);
    check_against_brute(s, two_einsums, MRT_PLANNER_AUTO, 0, 3, 1);
    mrt_spec_destroy(s);
}
END_TEST

START_TEST(meshtf_planner)
{
    mrt_spec *s = load_text(two_einsums, default_layout);
    check_against_brute(s, two_einsums, MRT_PLANNER_MESHTF, 0, 5, 0);
    mrt_spec_destroy(s);
}
END_TEST

START_TEST(uneven_split_is_searched)
{
    /* No dim divides by 3 (10 rows: 4, 3, 3; 256: 86, 85, 85), so every
     * split is uneven: an even-only search has the replicated rules
     * alone, and those compute everything 3 times.  The search must
     * weigh the uneven splits, pick one, and agree with brute force. */
    static const char *const uneven = "mesh: {x: 3}\n"
                                      "dims: {b: 10, d: 256, e: 256}\n"
                                      "%s"
                                      "tensors:\n"
                                      "  h: {shape: [b, d]}\n"
                                      "  w: {shape: [d, e]}\n"
                                      "ops:\n"
                                      "  - {op: einsum, in: [h, w], out: y, "
                                      "shape: [b, e]}\n";
    mrt_spec *s = load_text(uneven, "");
    mrt_search_options opt = {.top = 1};
    mrt_search_rules_report *r = NULL;
    ck_assert_int_eq(mrt_search_rules_create(s, &opt, &r, NULL), MRT_OK);
    ck_assert_int_ge(r->ntop, 1);
    ck_assert_int_gt(r->enumerated, 1);
    int split = 0;
    for (int i = 0; i < r->ndims; i++)
        split += r->top[0].rule[i].naxes;
    ck_assert_int_eq(split, 1); /* one dim over x, unevenly */
    mrt_search_rules_destroy(r);
    check_against_brute(s, uneven, MRT_PLANNER_AUTO, 0, 3, 0);
    mrt_spec_destroy(s);
}
END_TEST

START_TEST(awkward_mesh_and_own_layout)
{
    mrt_spec *s = load_text(awkward, "layout: {a: rows}\n");
    /* q has its own layout: g, which only q has, is not searched (but
     * Mesh-TF, which ignores q's layout, searches it). */
    mrt_search_options opt = {0};
    mrt_search_rules_report *r = NULL;
    ck_assert_int_eq(mrt_search_rules_create(s, &opt, &r, NULL), MRT_OK);
    ck_assert_int_eq(r->nsearched, 4); /* a, b (in p), c (s, r), e */
    mrt_search_rules_destroy(r);
    check_against_brute(s, awkward, MRT_PLANNER_AUTO, 0, 5, 0);
    check_against_brute(s, awkward, MRT_PLANNER_MESHTF, 0, 5, 0);
    mrt_spec_destroy(s);
}
END_TEST

START_TEST(memory_cap)
{
    mrt_spec *s = load_text(two_einsums, default_layout);
    /* A cap between the smallest and the largest peak. */
    brute b;
    brute_force(&b, s, two_einsums, MRT_PLANNER_AUTO, 0);
    int64_t lo = INT64_MAX, hi = 0;
    for (int i = 0; i < b.n; i++) {
        lo = b.pt[i].memory < lo ? b.pt[i].memory : lo;
        hi = b.pt[i].memory > hi ? b.pt[i].memory : hi;
    }
    free(b.pt);
    ck_assert_int_lt(lo, hi);
    check_against_brute(s, two_einsums, MRT_PLANNER_AUTO, (lo + hi) / 2, 5, 0);
    check_against_brute(s, two_einsums, MRT_PLANNER_AUTO, lo, 5, 0);
    /* Below the smallest: nothing fits. */
    mrt_search_options opt = {.max_memory = lo - 1};
    mrt_search_rules_report *r = NULL;
    ck_assert_int_eq(mrt_search_rules_create(s, &opt, &r, NULL), MRT_OK);
    ck_assert_int_eq(r->ntop, 0);
    ck_assert_int_eq(r->npareto, 0);
    mrt_search_rules_destroy(r);
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
    brute_force(&b, s, two_einsums, MRT_PLANNER_AUTO, 0);
    qsort(b.pt, (size_t)b.n, sizeof *b.pt, by_time);
    mrt_search_options opt = {.screen = 1};
    mrt_search_rules_report *r = NULL;
    ck_assert_int_eq(mrt_search_rules_create(s, &opt, &r, NULL), MRT_OK);
    ck_assert(r->screened);
    ck_assert_int_eq(r->screen_plans, b.enumerated);
    ck_assert_int_eq(r->enumerated, r->pruned_time + r->pruned_memory +
                                        r->not_replanned + r->planned);
    ck_assert_int_gt(r->ntop, 0);
    ck_assert(r->top[0].totals.time_s == b.pt[0].time_s);
    for (int i = 0; i < r->ntop; i++) {
        char block[2048];
        layout_block(s, r->top[i].rule, block, sizeof block);
        mrt_spec *d = load_text(two_einsums, block);
        mrt_plan *p = NULL;
        ck_assert_int_eq(mrt_plan_create(d, NULL, &p, NULL), MRT_OK);
        ck_assert(mrt_plan_get_totals(p).time_s == r->top[i].totals.time_s);
        ck_assert(r->top[i].bound_s <= r->top[i].totals.time_s);
        mrt_plan_destroy(p);
        mrt_spec_destroy(d);
    }
    mrt_search_rules_destroy(r);
    /* Exhaustive overrides screening. */
    opt.exhaustive = 1;
    ck_assert_int_eq(mrt_search_rules_create(s, &opt, &r, NULL), MRT_OK);
    ck_assert(!r->screened);
    ck_assert_int_eq(r->planned, b.enumerated);
    mrt_search_rules_destroy(r);
    free(b.pt);
    mrt_spec_destroy(s);
}
END_TEST

START_TEST(deterministic)
{
    mrt_spec *s = load_text(two_einsums, default_layout);
    mrt_search_rules_report *r[2];
    mrt_search_options opt = {.top = 7};
    for (int k = 0; k < 2; k++)
        ck_assert_int_eq(mrt_search_rules_create(s, &opt, &r[k], NULL), MRT_OK);
    ck_assert_int_eq(r[0]->ntop, r[1]->ntop);
    ck_assert_int_eq(r[0]->planned, r[1]->planned);
    for (int i = 0; i < r[0]->ntop; i++) {
        ck_assert_int_eq(r[0]->top[i].index, r[1]->top[i].index);
        ck_assert(memcmp(r[0]->top[i].rule, r[1]->top[i].rule,
                         (size_t)r[0]->ndims * sizeof(mrt_search_axes)) == 0);
    }
    mrt_search_rules_destroy(r[0]);
    mrt_search_rules_destroy(r[1]);
    mrt_spec_destroy(s);
}
END_TEST

START_TEST(printed_layout_plans_the_same)
{
    mrt_spec *s = load_text(two_einsums, default_layout);
    mrt_search_rules_report *r = NULL;
    ck_assert_int_eq(mrt_search_rules_create(s, NULL, &r, NULL), MRT_OK);
    for (int i = 0; i < r->ntop; i++) {
        char *block = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&block, &len);
        mrt_search_write_layout(s, r->top[i].rule, f);
        fclose(f);
        ck_assert(strncmp(block, "layout:", 7) == 0);
        mrt_spec *again = load_text(two_einsums, block);
        mrt_plan *p = NULL;
        ck_assert_int_eq(mrt_plan_create(again, NULL, &p, NULL), MRT_OK);
        mrt_plan_totals t = mrt_plan_get_totals(p);
        ck_assert_msg(t.time_s == r->top[i].totals.time_s,
                      "%s plans to %.17g, searched %.17g", block, t.time_s,
                      r->top[i].totals.time_s);
        ck_assert_int_eq(t.peak_memory, r->top[i].totals.peak_memory);
        mrt_plan_destroy(p);
        mrt_spec_destroy(again);
        free(block);
    }
    mrt_search_rules_destroy(r);
    mrt_spec_destroy(s);
}
END_TEST

START_TEST(rules_text_and_yaml)
{
    mrt_spec *s = load_text(two_einsums, default_layout);
    int ndims = spec_ndims(s);
    mrt_search_axes *rules = calloc((size_t)ndims, sizeof *rules);
    char buf[256];
    ck_assert_str_eq(mrt_search_format_rules(s, rules, buf, sizeof buf),
                     "(all replicated)");
    int f = mrt_spec_find_dim(s, "f"), batch = mrt_spec_find_dim(s, "batch");
    ck_assert(f >= 0 && batch >= 0);
    rules[batch] = (mrt_search_axes){.naxes = 1, .axis = {0}};
    rules[f] = (mrt_search_axes){.naxes = 2, .axis = {1, 0}};
    ck_assert_str_eq(mrt_search_format_rules(s, rules, buf, sizeof buf),
                     "batch: data, f: [model, data]");
    /* The brute force's own writer of the same rules. */
    layout_block(s, rules, buf, sizeof buf);
    ck_assert_str_eq(buf, "layout: {batch: data, f: [model, data]}\n");
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    mrt_search_write_layout(s, rules, m);
    memset(rules, 0, (size_t)ndims * sizeof *rules);
    mrt_search_write_layout(s, rules, m);
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
