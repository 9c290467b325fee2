/*
 * test_json.c — the JSON number writer every JSON emitter uses
 * (io/output.h): a non-finite figure is null (JSON has no inf or
 * nan), every finite one a valid JSON number that reads back as a
 * finite number close to itself, whatever the format and however long
 * its digits.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"

/* 1 if s is a number by JSON's grammar (RFC 8259, section 6). */
static int json_number(const char *s)
{
    if (*s == '-')
        s++;
    if (*s == '0')
        s++;
    else if (*s >= '1' && *s <= '9')
        while (*s >= '0' && *s <= '9')
            s++;
    else
        return 0;
    if (*s == '.') {
        if (*++s < '0' || *s > '9')
            return 0;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    if (*s == 'e' || *s == 'E') {
        if (*++s == '+' || *s == '-')
            s++;
        if (*s < '0' || *s > '9')
            return 0;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    return *s == '\0';
}

START_TEST(non_finite_is_null)
{
    char buf[MRT_JSON_NUM_MAX];
    ck_assert_str_eq(mrt_json_num(buf, "%.9g", INFINITY), "null");
    ck_assert_str_eq(mrt_json_num(buf, "%.17g", -INFINITY), "null");
    ck_assert_str_eq(mrt_json_num(buf, "%.3f", NAN), "null");
    ck_assert_str_eq(mrt_json_num(buf, "%.10g", -NAN), "null");
    /* what the subnormal bandwidth of issue 9 made of a time */
    ck_assert_str_eq(mrt_json_num(buf, "%.6g", 8196 / (1e-320 * 1e9)), "null");
}
END_TEST

START_TEST(finite_numbers_are_json)
{
    static const char *const fmt[] = {"%.17g", "%.10g", "%.9g", "%.6g",
                                      "%.3g",  "%.3f",  "%.6f"};
    const double v[] = {0,          -0.0,     1,       -1,    0.5,
                        123456.789, 1e-320,   5e-324,  1e300, -1e300,
                        DBL_MAX,    -DBL_MAX, DBL_MIN, 1e21};
    char buf[MRT_JSON_NUM_MAX];
    for (size_t i = 0; i < sizeof fmt / sizeof fmt[0]; i++)
        for (size_t j = 0; j < sizeof v / sizeof v[0]; j++) {
            const char *s = mrt_json_num(buf, fmt[i], v[j]);
            ck_assert_msg(json_number(s), "%s of %g gave '%s'", fmt[i], v[j],
                          s);
            double back = strtod(s, NULL);
            ck_assert_msg(fabs(back - v[j]) <= 1e-2 * fabs(v[j]) + 1e-3,
                          "%s of %g gave '%s'", fmt[i], v[j], s);
        }
}
END_TEST

START_TEST(long_numbers_keep_their_value)
{
    char buf[MRT_JSON_NUM_MAX];
    /* "%.3f" of 1e300 has 305 characters: it falls back to "%.17g" */
    ck_assert_str_eq(mrt_json_num(buf, "%.3f", 1e300),
                     "1.0000000000000001e+300");
    ck_assert_str_eq(mrt_json_num(buf, "%.3f", 1234.5), "1234.500");
    ck_assert_str_eq(mrt_json_num(buf, "%.9g", 0.1), "0.1");
    /* DBL_MAX to 10 digits is 1.797693135e+308, which reads back as inf */
    ck_assert_str_eq(mrt_json_num(buf, "%.10g", DBL_MAX),
                     "1.7976931348623157e+308");
}
END_TEST

START_TEST(several_in_one_call)
{
    char line[128];
    snprintf(line, sizeof line, "[%s, %s, %s]", MRT_JSON_NUM("%.9g", 1.25),
             MRT_JSON_NUM("%.9g", NAN), MRT_JSON_NUM("%.3f", 2.0));
    ck_assert_str_eq(line, "[1.25, null, 2.000]");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("json");
    TCase *tc = tcase_create("json");
    tcase_add_test(tc, non_finite_is_null);
    tcase_add_test(tc, finite_numbers_are_json);
    tcase_add_test(tc, long_numbers_keep_their_value);
    tcase_add_test(tc, several_in_one_call);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
