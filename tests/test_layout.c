/*
 * test_layout.c — shard shapes and offsets, including a dim split over two
 * axes (first major) and odd mesh sizes: the shards of every rank must
 * tile the global tensor exactly once per replica.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"

static mrt_mesh mesh23(void)
{
    mrt_mesh m = {.naxes = 2, .size = {2, 3}, .nranks = 6};
    strcpy(m.name[0], "data");
    strcpy(m.name[1], "model");
    return m;
}

START_TEST(shard_shape_and_offset)
{
    mrt_mesh m = mesh23();
    /* [batch/data+model, hidden] with batch 12, hidden 5 */
    mrt_layout l = {.ndims = 2, .dim = {0, 1}, .size = {12, 5},
                    .naxes = {2, 0}, .axes = {{0, 1}}};
    int64_t local[MRT_MAX_DIMS], off[MRT_MAX_DIMS];
    mrt_layout_shard_shape(&l, &m, local);
    ck_assert_int_eq(local[0], 2);
    ck_assert_int_eq(local[1], 5);
    ck_assert_int_eq(mrt_layout_shard_count(&l, &m), 10);
    ck_assert_int_eq(mrt_layout_parts(&l, &m, 0), 6);
    int64_t c[2] = {1, 2}; /* block 1*3+2 = 5 */
    mrt_layout_shard_offset(&l, &m, c, off);
    ck_assert_int_eq(off[0], 10);
    ck_assert_int_eq(off[1], 0);
    /* Nested the other way, [model, data]: the block number is
     * c[model] * 2 + c[data], so the rank at (1, 0) holds block 1. */
    l.axes[0][0] = 1;
    l.axes[0][1] = 0;
    int64_t c2[2] = {1, 0};
    mrt_layout_shard_offset(&l, &m, c2, off);
    ck_assert_int_eq(off[0], 2); /* block 0*2+1 = 1 */
}
END_TEST

START_TEST(shards_tile_the_tensor)
{
    mrt_mesh m = mesh23();
    /* [a/model, b, c/data]: 6/3 = 2, 4 whole, 8/2 = 4 */
    mrt_layout l = {.ndims = 3, .dim = {0, 1, 2}, .size = {6, 4, 8},
                    .naxes = {1, 0, 1}, .axes = {{1}, {0}, {0}}};
    int64_t local[MRT_MAX_DIMS];
    mrt_layout_shard_shape(&l, &m, local);
    int cover[6][4][8] = {{{0}}};
    for (int64_t r = 0; r < m.nranks; r++) {
        int64_t c[2] = {r / 3, r % 3}, off[MRT_MAX_DIMS];
        mrt_layout_shard_offset(&l, &m, c, off);
        for (int i = 0; i < local[0]; i++)
            for (int j = 0; j < local[1]; j++)
                for (int k = 0; k < local[2]; k++)
                    cover[off[0] + i][off[1] + j][off[2] + k]++;
    }
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 8; k++)
                ck_assert_int_eq(cover[i][j][k], 1);
}
END_TEST

START_TEST(equality_and_text)
{
    mrt_mesh m = mesh23();
    char *names[] = {"batch", "d_ff"};
    mrt_layout a = {.ndims = 2, .dim = {0, 1}, .size = {12, 6},
                    .naxes = {1, 1}, .axes = {{0}, {1}}};
    mrt_layout b = a;
    ck_assert(mrt_layout_equal(&a, &b));
    b.partial = 1u;
    ck_assert(!mrt_layout_equal(&a, &b));
    char buf[128];
    ck_assert_str_eq(mrt_layout_str(&b, &m, names, buf, sizeof buf),
                     "[batch/data, d_ff/model] partial(data)");
    ck_assert_uint_eq(mrt_layout_used_axes(&a), 3u);
    ck_assert_int_eq(mrt_layout_find_dim(&a, 1), 1);
    ck_assert_int_eq(mrt_layout_find_dim(&a, 7), -1);
    ck_assert_int_eq(mrt_dtype_size(MRT_F64), 8);
    ck_assert_str_eq(mrt_dtype_name(MRT_F32), "float32");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("layout");
    TCase *tc = tcase_create("layout");
    tcase_add_test(tc, shard_shape_and_offset);
    tcase_add_test(tc, shards_tile_the_tensor);
    tcase_add_test(tc, equality_and_text);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
