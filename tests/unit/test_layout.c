/*
 * test_layout.c — shard shapes and offsets, including a dim split over two
 * axes (first major) and odd mesh sizes: the shards of every rank must
 * tile the global tensor exactly once per replica.  Uneven splits: the
 * block rule (the first n % p blocks one longer), nested over the axes
 * of a split, empty blocks, rank 0 holding the largest shard.
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
    mrt_layout l = {.ndims = 2,
                    .dim = {0, 1},
                    .size = {12, 5},
                    .naxes = {2, 0},
                    .axes = {{0, 1}}};
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
    mrt_layout l = {.ndims = 3,
                    .dim = {0, 1, 2},
                    .size = {6, 4, 8},
                    .naxes = {1, 0, 1},
                    .axes = {{1}, {0}, {0}}};
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

START_TEST(block_rule)
{
    /* 10 over 4: 3, 3, 2, 2 at 0, 3, 6, 8 */
    static const int64_t ext10[4] = {3, 3, 2, 2}, at10[4] = {0, 3, 6, 8};
    for (int b = 0; b < 4; b++) {
        ck_assert_int_eq(mrt_layout_block_extent(10, 4, b), ext10[b]);
        ck_assert_int_eq(mrt_layout_block_start(10, 4, b), at10[b]);
    }
    /* any n over any p: the blocks follow each other, sizes differ by at
     * most one, the longer first, and they add up to n */
    for (int64_t n = 0; n < 40; n++)
        for (int64_t p = 1; p < 10; p++) {
            int64_t at = 0;
            for (int64_t b = 0; b < p; b++) {
                int64_t e = mrt_layout_block_extent(n, p, b);
                ck_assert_int_eq(mrt_layout_block_start(n, p, b), at);
                ck_assert(e == n / p || e == n / p + 1);
                ck_assert(b == 0 || e <= mrt_layout_block_extent(n, p, b - 1));
                at += e;
            }
            ck_assert_int_eq(at, n);
        }
    /* 3 over 4: the last block is empty */
    ck_assert_int_eq(mrt_layout_block_extent(3, 4, 3), 0);
    ck_assert_int_eq(mrt_layout_block_start(3, 4, 3), 3);
}
END_TEST

/* Every element of an uneven [a/data+model, b, c/model] or similar layout
 * is held by exactly nranks / parts ranks, shard extents match offsets,
 * rank 0 holds the largest shard, and the total is the sum over ranks. */
static void check_tiling(const mrt_layout *l, const mrt_mesh *m)
{
    int64_t big[MRT_MAX_DIMS], total = 0, replicas = m->nranks;
    mrt_layout_shard_shape(l, m, big);
    for (int i = 0; i < l->ndims; i++)
        replicas /= mrt_layout_parts(l, m, i);
    static int cover[16][16][16];
    memset(cover, 0, sizeof cover);
    for (int64_t r = 0; r < m->nranks; r++) {
        int64_t c[2] = {r / m->size[1], r % m->size[1]};
        int64_t off[MRT_MAX_DIMS], loc[MRT_MAX_DIMS];
        mrt_layout_shard_offset(l, m, c, off);
        mrt_layout_shard_shape_at(l, m, c, loc);
        int64_t n = mrt_layout_shard_count_at(l, m, c);
        ck_assert_int_eq(n, loc[0] * loc[1] * loc[2]);
        total += n;
        for (int i = 0; i < 3; i++)
            ck_assert_int_le(loc[i], big[i]);
        for (int i = 0; i < loc[0]; i++)
            for (int j = 0; j < loc[1]; j++)
                for (int k = 0; k < loc[2]; k++)
                    cover[off[0] + i][off[1] + j][off[2] + k]++;
    }
    for (int i = 0; i < l->size[0]; i++)
        for (int j = 0; j < l->size[1]; j++)
            for (int k = 0; k < l->size[2]; k++)
                ck_assert_int_eq(cover[i][j][k], replicas);
    ck_assert_int_eq(total, mrt_layout_total_count(l, m));
    ck_assert_int_eq(total, replicas * l->size[0] * l->size[1] * l->size[2]);
}

START_TEST(uneven_shards_tile_the_tensor)
{
    mrt_mesh m = mesh23();
    /* 10 over data+model (2x3: 5, 5, then 2, 2, 1 each), 7 whole, 3 */
    mrt_layout l = {.ndims = 3,
                    .dim = {0, 1, 2},
                    .size = {10, 7, 3},
                    .naxes = {2, 0, 0},
                    .axes = {{0, 1}}};
    ck_assert(!mrt_layout_even(&l, &m));
    check_tiling(&l, &m);
    int64_t c[2] = {1, 2}, off[MRT_MAX_DIMS], loc[MRT_MAX_DIMS];
    mrt_layout_shard_offset(&l, &m, c, off);
    mrt_layout_shard_shape_at(&l, &m, c, loc);
    ck_assert_int_eq(off[0], 9); /* 5 + 2 + 2 */
    ck_assert_int_eq(loc[0], 1);
    /* nested the other way: model major (4, 3, 3; then 2+2, 2+1, 2+1) */
    l.axes[0][0] = 1;
    l.axes[0][1] = 0;
    check_tiling(&l, &m);
    int64_t c2[2] = {1, 1}; /* model 1: 4..6, data 1: 6 */
    mrt_layout_shard_offset(&l, &m, c2, off);
    mrt_layout_shard_shape_at(&l, &m, c2, loc);
    ck_assert_int_eq(off[0], 6);
    ck_assert_int_eq(loc[0], 1);
    /* two dims uneven, and one smaller than its parts (2 over 3: the
     * last block empty) */
    mrt_layout l2 = {.ndims = 3,
                     .dim = {0, 1, 2},
                     .size = {7, 5, 2},
                     .naxes = {1, 0, 1},
                     .axes = {{0}, {0}, {1}}};
    check_tiling(&l2, &m);
    int64_t c3[2] = {1, 2};
    ck_assert_int_eq(mrt_layout_shard_count_at(&l2, &m, c3), 0);
    int64_t big[MRT_MAX_DIMS];
    mrt_layout_shard_shape(&l2, &m, big);
    ck_assert_int_eq(big[0], 4);
    ck_assert_int_eq(big[2], 1);
    ck_assert_int_eq(mrt_layout_shard_count(&l2, &m), 4 * 5 * 1);
}
END_TEST

START_TEST(equality_and_text)
{
    mrt_mesh m = mesh23();
    char *names[] = {"batch", "d_ff"};
    mrt_layout a = {.ndims = 2,
                    .dim = {0, 1},
                    .size = {12, 6},
                    .naxes = {1, 1},
                    .axes = {{0}, {1}}};
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
    tcase_add_test(tc, block_rule);
    tcase_add_test(tc, uneven_shards_tile_the_tensor);
    tcase_add_test(tc, equality_and_text);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
