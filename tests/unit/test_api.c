/*
 * test_api.c — the library's planning-side reports through meshrt.h only
 * (linked with the shared libmeshrt, only include/ on the include path,
 * no MPI): mrt_compare_create (one row per partitioning, each row's
 * figures those of the same layout planned on its own, a row that does
 * not fit a --mesh override with its error, the fastest), the `expect:`
 * budgets as data (mrt_plan_check_budgets) and check's warnings as data
 * (mrt_plan_warnings), each with the position of what it is about, and
 * a plan's steps as data (mrt_plan_step_count, mrt_plan_get_step).
 */
/* planning only: meshrt.h, no mpi.h */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meshrt.h"

/* A spec on mesh {data: 2, model: 2}; RULES is its global layout, and
 * ALTS (may be "") its `layouts:` block. */
#define SPEC(RULES, ALTS)                                                      \
    "mesh: {data: 2, model: 2}\n"                                              \
    "dims: {batch: 8, d_model: 8, d_ff: 16}\n"                                 \
    "layout: " RULES "\n"                                                      \
    "tensors:\n"                                                               \
    "  x:  {shape: [batch, d_model]}\n"                                        \
    "  w1: {shape: [d_model, d_ff]}\n"                                         \
    "  w2: {shape: [d_ff, d_model]}\n"                                         \
    "ops:\n"                                                                   \
    "  - {op: einsum, in: [x, w1], out: h, shape: [batch, d_ff]}\n"            \
    "  - {op: einsum, in: [h, w2], out: y, shape: [batch, d_model]}\n" ALTS

#define DP "{batch: [data, model]}"
#define MP "{d_ff: [data, model]}"
#define MIXED "{batch: data, d_ff: model}"

static mrt_spec *load(const char *text, const char *mesh)
{
    mrt_spec *s = NULL;
    mrt_error err = {0};
    const mrt_spec_load_options ov = {.mesh = mesh, .dims = NULL};
    /* mrt_spec_load_opts reads files; write the text to one */
    char path[] = "/tmp/test_api_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    mrt_status st = mrt_spec_load_ex(path, &ov, &s, &err);
    remove(path);
    ck_assert_msg(st == MRT_OK, "load: %s", err.message);
    return s;
}

static mrt_plan_totals totals_of(const char *text)
{
    mrt_spec *s = load(text, NULL);
    mrt_plan *p = NULL;
    ck_assert_int_eq(mrt_plan_create(s, NULL, &p, NULL), MRT_OK);
    mrt_plan_totals t = mrt_plan_get_totals(p);
    mrt_plan_destroy(p);
    mrt_spec_destroy(s);
    return t;
}

START_TEST(compare_rows_are_each_layout_planned_alone)
{
    mrt_spec *s = load(SPEC(DP, "layouts:\n  mp: " MP "\n  mixed: " MIXED "\n"),
                       NULL);
    mrt_compare *c = NULL;
    mrt_error err = {0};
    ck_assert_int_eq(mrt_compare_create(s, NULL, &c, &err), MRT_OK);
    ck_assert_int_eq(c->nrows, 3);
    const char *name[3] = {"spec", "mp", "mixed"};
    const char *rules[3] = {SPEC(DP, ""), SPEC(MP, ""), SPEC(MIXED, "")};
    int fastest = -1;
    for (int r = 0; r < 3; r++) {
        const mrt_compare_row *row = &c->row[r];
        ck_assert_str_eq(row->name, name[r]);
        ck_assert_str_eq(row->mesh, "data=2,model=2");
        ck_assert_msg(row->ok, "row %s: %s", row->name, row->error.message);
        ck_assert_int_eq(row->error.code, MRT_OK);
        mrt_plan_totals t = totals_of(rules[r]);
        ck_assert_int_eq(row->totals.comm_bytes, t.comm_bytes);
        ck_assert_int_eq(row->totals.peak_memory, t.peak_memory);
        ck_assert(row->totals.time_s == t.time_s);
        int64_t sum = 0;
        for (int k = 0; k < c->ncols; k++)
            sum += row->axis_bytes[k];
        ck_assert_int_eq(sum, t.comm_bytes); /* every byte in a column */
        if (fastest < 0 || row->totals.time_s < c->row[fastest].totals.time_s)
            fastest = r;
    }
    ck_assert_int_gt(c->row[1].totals.comm_bytes, 0); /* mp talks */
    ck_assert_int_eq(c->fastest, fastest);
    ck_assert_int_eq(c->training, 0);
    ck_assert_int_eq(c->planner, MRT_PLANNER_AUTO);
    ck_assert_str_eq(mrt_planner_name(c->planner), "auto");
    ck_assert(c->machine[0] != '\0');
    mrt_compare_destroy(c);
    mrt_spec_destroy(s);
}
END_TEST

START_TEST(compare_row_that_does_not_fit_the_mesh_has_its_error)
{
    /* under the override data=4 the axis `model` is gone: mp no longer
     * fits, the spec's own rules (batch over data) still do */
    mrt_spec *s = load(SPEC("{batch: data}", "layouts:\n  mp: "
                                             "{d_ff: model}\n"),
                       "data=4");
    mrt_compare *c = NULL;
    mrt_plan_options o = {.planner = MRT_PLANNER_MESHTF};
    ck_assert_int_eq(mrt_compare_create(s, &o, &c, NULL), MRT_OK);
    ck_assert_int_eq(c->nrows, 2);
    ck_assert(c->row[0].ok);
    ck_assert_str_eq(c->row[0].mesh, "data=4");
    ck_assert(!c->row[1].ok);
    ck_assert_int_ne(c->row[1].error.code, MRT_OK);
    ck_assert_msg(strstr(c->row[1].error.message, "model") &&
                      c->row[1].error.file[0],
                  "row error: %s", c->row[1].error.message);
    ck_assert_int_eq(c->fastest, 0);
    ck_assert_int_eq(c->planner, MRT_PLANNER_MESHTF);
    ck_assert_str_eq(mrt_planner_name(c->planner), "meshtf");
    mrt_compare_destroy(c);
    mrt_spec_destroy(s);
    /* NULLs are usage errors, and destroy takes NULL */
    mrt_error err = {0};
    ck_assert_int_eq(mrt_compare_create(NULL, NULL, &c, &err), MRT_E_USAGE);
    ck_assert_ptr_null(c);
    mrt_compare_destroy(NULL);
}
END_TEST

START_TEST(budgets_come_back_as_data)
{
    mrt_spec *s = load(SPEC(MP, "expect: {comm_bytes_max: 1}\n"), NULL);
    mrt_plan *p = NULL;
    ck_assert_int_eq(mrt_plan_create(s, NULL, &p, NULL), MRT_OK);
    mrt_plan_totals t = mrt_plan_get_totals(p);
    int n = mrt_plan_check_budgets(s, p, NULL, 0);
    ck_assert_int_eq(n, 1);
    mrt_budget_violation v[2];
    memset(v, 0, sizeof v);
    ck_assert_int_eq(mrt_plan_check_budgets(s, p, v, 2), 1);
    ck_assert_int_eq(v[0].op, 0);
    ck_assert_int_eq(v[0].kind, MRT_BUDGET_COMM_BYTES);
    ck_assert_int_eq(v[0].value, t.comm_bytes);
    ck_assert_int_eq(v[0].limit, 1);
    ck_assert_int_eq(v[0].error.code, MRT_E_SPEC);
    ck_assert_int_eq(v[0].error.line, 11); /* the expect: line */
    ck_assert_ptr_nonnull(strstr(v[0].error.message, "comm_bytes_max"));
    mrt_plan_destroy(p);
    mrt_spec_destroy(s);
    /* within budget: none */
    s = load(SPEC(DP, "expect: {comm_bytes_max: 0}\n"), NULL);
    ck_assert_int_eq(mrt_plan_create(s, NULL, &p, NULL), MRT_OK);
    ck_assert_int_eq(mrt_plan_check_budgets(s, p, v, 2), 0);
    mrt_plan_destroy(p);
    mrt_spec_destroy(s);
}
END_TEST

START_TEST(warnings_come_back_as_data)
{
    /* batch over data only: both einsums run whole on each 'model' group;
     * w1 and w2 replicated everywhere; 64 bytes of memory per rank */
    mrt_spec *s = load(SPEC("{batch: data}", ""), NULL);
    mrt_plan *p = NULL;
    ck_assert_int_eq(mrt_plan_create(s, NULL, &p, NULL), MRT_OK);
    mrt_warning_options o = {.memory = 64};
    int n = mrt_plan_warnings(s, p, &o, NULL, 0);
    mrt_warning *w = calloc((size_t)n + 1, sizeof *w);
    ck_assert_int_eq(mrt_plan_warnings(s, p, &o, w, n), n);
    int memory = 0, dup = 0, rep = 0;
    for (int i = 0; i < n; i++) {
        if (w[i].kind == MRT_WARN_MEMORY) {
            memory++;
            ck_assert_int_eq(w[i].line, 0);
            ck_assert_ptr_nonnull(strstr(w[i].message, "64 bytes of a "
                                                       "rank's memory"));
        } else if (w[i].kind == MRT_WARN_DUPLICATED_OP) {
            dup++;
            ck_assert_int_eq(w[i].line, 8 + dup); /* ops at lines 9, 10 */
            ck_assert_ptr_nonnull(strstr(w[i].message, "'model'"));
        } else {
            ck_assert_int_eq(w[i].kind, MRT_WARN_REPLICATED);
            rep++;
            ck_assert_int_gt(w[i].line, 4);
        }
    }
    ck_assert_int_eq(memory, 1);
    ck_assert_int_eq(dup, 2);
    ck_assert_int_ge(rep, 2); /* w1, w2 (x is split over data) */
    free(w);
    /* a large memory and a layout using every axis: no warnings */
    o.memory = (int64_t)1 << 40;
    mrt_plan_destroy(p);
    mrt_spec_destroy(s);
    s = load(SPEC(MIXED, ""), NULL);
    ck_assert_int_eq(mrt_plan_create(s, NULL, &p, NULL), MRT_OK);
    ck_assert_int_eq(mrt_plan_warnings(s, p, &o, NULL, 0), 0);
    mrt_plan_destroy(p);
    mrt_spec_destroy(s);
}
END_TEST

/* The plan step by step (mrt_plan_step_count, mrt_plan_get_step): under
 * Megatron's split the one collective is y's all-reduce over `model`; the
 * steps add up to the plan's totals; bad arguments are usage errors. */
START_TEST(steps_come_back_as_data)
{
    mrt_spec *s = load(SPEC(MIXED, ""), NULL);
    mrt_plan *p = NULL;
    ck_assert_int_eq(mrt_plan_create(s, NULL, &p, NULL), MRT_OK);
    int n = mrt_plan_step_count(p), collectives = 0;
    ck_assert_int_gt(n, 0);
    int64_t bytes = 0;
    double flops = 0;
    mrt_plan_step_info si;
    for (int i = 0; i < n; i++) {
        ck_assert_int_eq(mrt_plan_get_step(p, i, &si, NULL), MRT_OK);
        ck_assert_int_eq(si.phase, 0);
        ck_assert(si.op >= 1 && si.op <= 2);
        bytes += si.bytes;
        flops += si.flops;
        if (!si.collective) {
            ck_assert_int_eq(si.bytes, 0);
            continue;
        }
        collectives++;
        ck_assert_int_eq(si.kind, MRT_PLAN_STEP_ALLREDUCE);
        ck_assert_str_eq(si.axes, "model");
        ck_assert_int_eq(si.naxes, 1);
        ck_assert_int_eq(si.group, 2);
        ck_assert_int_eq(si.op, 2);
        /* y's shard: batch 8 / 2 x d_model 8, float32 */
        ck_assert_int_eq(si.bytes, 4 * 8 * 4);
        ck_assert(si.wire_bytes > 0 && si.time_s > 0);
    }
    ck_assert_int_eq(collectives, 1);
    ck_assert_int_eq(bytes, mrt_plan_get_totals(p).comm_bytes);
    ck_assert(flops == mrt_plan_get_totals(p).flops);

    mrt_error err = {0};
    ck_assert_int_eq(mrt_plan_get_step(p, n, &si, &err), MRT_E_USAGE);
    ck_assert_msg(strstr(err.message, "argument 'i'"), "%s", err.message);
    ck_assert_int_eq(mrt_plan_get_step(p, -1, &si, NULL), MRT_E_USAGE);
    ck_assert_int_eq(mrt_plan_get_step(NULL, 0, &si, NULL), MRT_E_USAGE);
    ck_assert_int_eq(mrt_plan_get_step(p, 0, NULL, NULL), MRT_E_USAGE);
    ck_assert_int_eq(mrt_plan_step_count(NULL), 0);
    mrt_plan_destroy(p);
    mrt_spec_destroy(s);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("api");
    TCase *tc = tcase_create("api");
    tcase_add_test(tc, compare_rows_are_each_layout_planned_alone);
    tcase_add_test(tc, compare_row_that_does_not_fit_the_mesh_has_its_error);
    tcase_add_test(tc, budgets_come_back_as_data);
    tcase_add_test(tc, warnings_come_back_as_data);
    tcase_add_test(tc, steps_come_back_as_data);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
