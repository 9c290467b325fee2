/*
 * test_search_args.c — search/'s public calls (meshrt.h's "comparing
 * partitionings" and "searching layouts") with each pointer argument
 * NULL, one process per call (Check's fork mode: a crash fails the call's
 * test, not the suite).  A call that returns a status must return
 * MRT_E_USAGE with a message and leave *out NULL; one that returns a
 * value must do what meshrt.h says it does with NULL (format_rules: ""
 * or nothing; write_layout and the destroys: nothing).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meshrt.h"

#define SPEC "examples/mlp.yaml"

static mrt_spec *load(void)
{
    mrt_spec *s = NULL;
    mrt_error err = {0};
    ck_assert_int_eq(mrt_spec_load(SPEC, &s, &err), MRT_OK);
    return s;
}

/* st is MRT_E_USAGE with a message naming fn (when err was given). */
static void refused(mrt_status st, const mrt_error *err, const char *fn)
{
    ck_assert_int_eq(st, MRT_E_USAGE);
    if (err)
        ck_assert_msg(strstr(err->message, fn), "%s", err->message);
}

static const int64_t sizes[] = {32, 64};
#define SENTINEL ((void *)0x1)

/* Call number `which`, one of its arguments NULL. */
static void call(int which, mrt_error *err)
{
    mrt_spec *s = which < 12 ? load() : NULL;
    mrt_search_options opt = {.top = 1};
    mrt_search_rules_report *rr = SENTINEL;
    mrt_search_tensors_report *tr = SENTINEL;
    mrt_compare *c = SENTINEL;
    mrt_sweep *w = SENTINEL;
    switch (which) {
    case 0:
        refused(mrt_search_rules_create(NULL, &opt, &rr, err), err,
                "mrt_search_rules_create");
        ck_assert_ptr_null(rr);
        break;
    case 1:
        refused(mrt_search_rules_create(s, &opt, NULL, err), err,
                "mrt_search_rules_create");
        break;
    case 2:
        refused(mrt_search_tensors_create(NULL, &opt, &tr, err), err,
                "mrt_search_tensors_create");
        ck_assert_ptr_null(tr);
        break;
    case 3:
        refused(mrt_search_tensors_create(s, &opt, NULL, err), err,
                "mrt_search_tensors_create");
        break;
    case 4:
        refused(mrt_compare_create(NULL, NULL, &c, err), err,
                "mrt_compare_create");
        ck_assert_ptr_null(c);
        break;
    case 5:
        refused(mrt_compare_create(s, NULL, NULL, err), err,
                "mrt_compare_create");
        break;
    case 6:
        refused(mrt_sweep_create(NULL, NULL, "batch", 2, sizes, NULL, &w, err),
                err, "mrt_sweep_create");
        ck_assert_ptr_null(w);
        break;
    case 7:
        refused(mrt_sweep_create(SPEC, NULL, NULL, 2, sizes, NULL, &w, err),
                err, "mrt_sweep_create");
        ck_assert_ptr_null(w);
        break;
    case 8:
        refused(mrt_sweep_create(SPEC, NULL, "batch", 2, NULL, NULL, &w, err),
                err, "mrt_sweep_create");
        ck_assert_ptr_null(w);
        break;
    case 9:
        refused(
            mrt_sweep_create(SPEC, NULL, "batch", 2, sizes, NULL, NULL, err),
            err, "mrt_sweep_create");
        break;
    case 10: { /* the rules NULL: "" */
        char buf[16] = "x";
        ck_assert_ptr_eq(mrt_search_format_rules(s, NULL, buf, sizeof buf),
                         buf);
        ck_assert_str_eq(buf, "");
        ck_assert_ptr_null(mrt_search_format_rules(s, NULL, NULL, 16));
        break;
    }
    case 11: { /* the rules, then the file NULL: nothing written */
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        mrt_search_write_layout(s, NULL, f);
        mrt_search_axes rule[4] = {{0}};
        mrt_search_write_layout(s, rule, NULL);
        fclose(f);
        ck_assert_uint_eq(len, 0);
        free(text);
        break;
    }
    case 12: { /* the spec NULL */
        char buf[16] = "x";
        mrt_search_axes rule[4] = {{0}};
        ck_assert_ptr_eq(mrt_search_format_rules(NULL, rule, buf, sizeof buf),
                         buf);
        ck_assert_str_eq(buf, "");
        mrt_search_write_layout(NULL, rule, stdout);
        break;
    }
    case 13:
        mrt_search_rules_destroy(NULL);
        mrt_search_tensors_destroy(NULL);
        mrt_compare_destroy(NULL);
        mrt_sweep_destroy(NULL);
        break;
    }
    mrt_spec_destroy(s);
}

#define NCALLS 14

START_TEST(null_argument)
{
    mrt_error err = {0};
    call(_i, &err);
}
END_TEST

/* The same with err NULL too. */
START_TEST(null_argument_no_error)
{
    call(_i, NULL);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("search_args");
    TCase *tc = tcase_create("search_args");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, null_argument, 0, NCALLS);
    tcase_add_loop_test(tc, null_argument_no_error, 0, NCALLS);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_set_fork_status(sr, CK_FORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
