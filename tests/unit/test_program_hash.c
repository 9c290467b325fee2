/*
 * test_program_hash.c — mrt_program_hash, the fingerprint by which a
 * runner refuses a plan of another program (issue 17 item 5): equal for
 * the same program loaded twice, under another `layouts:` alternative,
 * with other `init:` values or other global layout rules; different for
 * another function (relu against tanh), another constant, another size,
 * inputs swapped, another output list or another dtype.  No MPI.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "program_hash.h"

/* y = FN(x) + w, x with INIT, dim i of size N, global rules RULES. */
static mrt_spec *load_with(const char *fn, const char *init, int n,
                           const char *rules, const char *extra)
{
    char text[1024];
    int len = snprintf(text, sizeof text,
                       "mesh: {rows: 2}\n"
                       "dims: {i: %d, j: 6}\n"
                       "layout: %s\n"
                       "tensors:\n"
                       "  x: {shape: [i, j], init: %s}\n"
                       "  w: {shape: [i, j]}\n"
                       "ops:\n"
                       "  - {op: %s, in: [x], out: h}\n"
                       "  - {op: add, in: [h, w], out: y}\n"
                       "%s",
                       n, rules, init, fn, extra);
    mrt_spec *s = NULL;
    mrt_error err = {0};
    ck_assert_msg(mrt_spec_load_string("hash.yaml", text, (size_t)len, &s,
                                       &err) == MRT_OK,
                  "load: %s", err.message);
    return s;
}

static uint64_t hash_of(const char *fn, const char *init, int n,
                        const char *rules, const char *extra)
{
    mrt_spec *s = load_with(fn, init, n, rules, extra);
    uint64_t h = mrt_program_hash(s);
    mrt_spec_destroy(s);
    return h;
}

#define BASE(fn) hash_of(fn, "{random: 1}", 8, "{i: rows}", "")

START_TEST(same_program_same_hash)
{
    ck_assert(BASE("relu") == BASE("relu"));
    /* data and layouts are not the program */
    ck_assert(BASE("relu") == hash_of("relu", "{fill: 2}", 8, "{i: rows}", ""));
    ck_assert(BASE("relu") ==
              hash_of("relu", "{random: 1}", 8, "{j: rows}", ""));
}
END_TEST

START_TEST(another_program_another_hash)
{
    ck_assert(BASE("relu") != BASE("tanh"));
    ck_assert(BASE("relu") !=
              hash_of("relu", "{random: 1}", 10, "{i: rows}", ""));
    ck_assert(BASE("relu") != hash_of("relu", "{random: 1}", 8, "{i: rows}",
                                      "outputs: [h, y]\n"));
    ck_assert(BASE("relu") != hash_of("relu", "{random: 1}", 8, "{i: rows}",
                                      "dtype: float64\n"));
}
END_TEST

START_TEST(constants_count)
{
    const char *fmt = "mesh: {rows: 1}\ndims: {i: 4}\n"
                      "tensors: {x: {shape: [i]}}\n"
                      "ops: [{op: scale, in: [x], out: y, by: %s}]\n";
    uint64_t h[2];
    const char *by[2] = {"2", "3"};
    for (int k = 0; k < 2; k++) {
        char text[256];
        int len = snprintf(text, sizeof text, fmt, by[k]);
        mrt_spec *s = NULL;
        mrt_error err = {0};
        ck_assert_msg(mrt_spec_load_string("c.yaml", text, (size_t)len, &s,
                                           &err) == MRT_OK,
                      "load: %s", err.message);
        h[k] = mrt_program_hash(s);
        mrt_spec_destroy(s);
    }
    ck_assert(h[0] != h[1]);
}
END_TEST

START_TEST(alternatives_keep_the_hash)
{
    mrt_spec *s = load_with("relu", "{random: 1}", 8, "{i: rows}",
                            "layouts:\n  other: {j: rows}\n");
    mrt_spec *alt = NULL;
    mrt_error err = {0};
    ck_assert_msg(mrt_spec_select_alternative(s, "other", &alt, &err) == MRT_OK,
                  "%s", err.message);
    ck_assert(mrt_program_hash(s) == mrt_program_hash(alt));
    mrt_spec_destroy(alt);
    mrt_spec_destroy(s);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("program_hash");
    TCase *tc = tcase_create("program_hash");
    tcase_add_test(tc, same_program_same_hash);
    tcase_add_test(tc, another_program_another_hash);
    tcase_add_test(tc, constants_count);
    tcase_add_test(tc, alternatives_keep_the_hash);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
