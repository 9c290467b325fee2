/*
 * test_checked.c — base/checked.h: each helper gives the exact result
 * when it fits and says so when it does not, at the edges of int64 (and
 * of size_t), with no undefined behaviour (the sanitizer builds run it).
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "checked.h"

START_TEST(add_and_mul_at_the_edges)
{
    int64_t r = 0;
    ck_assert_int_eq(mrt_checked_add(INT64_MAX - 1, 1, &r), 0);
    ck_assert_int_eq(r, INT64_MAX);
    ck_assert_int_eq(mrt_checked_add(INT64_MAX, 1, &r), 1);
    ck_assert_int_eq(mrt_checked_add(INT64_MIN, -1, &r), 1);
    ck_assert_int_eq(mrt_checked_add((int64_t)1 << 62, (int64_t)1 << 62, &r),
                     1);
    ck_assert_int_eq(mrt_checked_mul((int64_t)1 << 32, (int64_t)1 << 30, &r),
                     0);
    ck_assert_int_eq(r, (int64_t)1 << 62);
    /* the product of the UBSan report: 2^32 * 2^32 */
    ck_assert_int_eq(mrt_checked_mul((int64_t)1 << 32, (int64_t)1 << 32, &r),
                     1);
    ck_assert_int_eq(mrt_checked_mul(INT64_MAX / 8, 8, &r), 0);
    ck_assert_int_eq(mrt_checked_mul(INT64_MAX / 8 + 1, 8, &r), 1);
    ck_assert_int_eq(mrt_checked_mul(-1, INT64_MIN, &r), 1);
}
END_TEST

START_TEST(products)
{
    int64_t r = -1;
    int64_t fits[] = {1024, 1024, 1024, 1024, 1024, 1024}; /* 2^60 */
    int64_t wraps[] = {4294967296, 4294967296, 1};         /* 2^64 wraps to 0 */
    int64_t zero_last[] = {INT64_MAX, 2, 0}; /* overflows before the 0 */
    ck_assert_int_eq(mrt_checked_product(fits, 0, &r), 0);
    ck_assert_int_eq(r, 1);
    ck_assert_int_eq(mrt_checked_product(fits, 6, &r), 0);
    ck_assert_int_eq(r, (int64_t)1 << 60);
    ck_assert_int_eq(mrt_checked_product(wraps, 3, &r), 1);
    ck_assert_int_eq(mrt_checked_product(zero_last, 3, &r), 1);
}
END_TEST

START_TEST(round_up_and_saturate)
{
    int64_t r = 0;
    ck_assert_int_eq(mrt_checked_round_up(0, 64, &r), 0);
    ck_assert_int_eq(r, 0);
    ck_assert_int_eq(mrt_checked_round_up(65, 64, &r), 0);
    ck_assert_int_eq(r, 128);
    ck_assert_int_eq(mrt_checked_round_up(INT64_MAX - 63, 64, &r), 0);
    ck_assert_int_eq(r, INT64_MAX - 63);
    ck_assert_int_eq(mrt_checked_round_up(INT64_MAX - 62, 64, &r), 1);
    ck_assert_int_eq(mrt_saturating_add(1, 2), 3);
    ck_assert_int_eq(mrt_saturating_add(INT64_MAX, 1), INT64_MAX);
    ck_assert_int_eq(mrt_saturating_add((int64_t)1 << 62, (int64_t)1 << 62),
                     INT64_MAX);
    size_t z = 0;
    ck_assert_int_eq(mrt_checked_size(SIZE_MAX / 8, 8, &z), 0);
    ck_assert_int_eq(mrt_checked_size(SIZE_MAX / 8 + 1, 8, &z), 1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("checked");
    TCase *tc = tcase_create("checked");
    tcase_add_test(tc, add_and_mul_at_the_edges);
    tcase_add_test(tc, products);
    tcase_add_test(tc, round_up_and_saturate);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
