/*
 * test_mesh.c — rank <-> coordinates and groups on meshes of 1 to 3 axes,
 * including odd sizes.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mesh.h"
#include "mesh_nodes.h"

static mrt_mesh make(int n, const int64_t *sizes)
{
    mrt_mesh m = {.naxes = n, .nranks = 1};
    for (int i = 0; i < n; i++) {
        snprintf(m.name[i], MRT_NAME_MAX, "ax%d", i);
        m.size[i] = sizes[i];
        m.nranks *= sizes[i];
    }
    return m;
}

START_TEST(row_major_first_axis_major)
{
    mrt_mesh m = make(2, (int64_t[]){2, 3});
    int64_t c[MRT_MAX_AXES];
    mrt_mesh_coords(&m, 4, c);
    ck_assert_int_eq(c[0], 1);
    ck_assert_int_eq(c[1], 1);
    mrt_mesh_coords(&m, 2, c);
    ck_assert_int_eq(c[0], 0);
    ck_assert_int_eq(c[1], 2);
    for (int64_t r = 0; r < m.nranks; r++) {
        mrt_mesh_coords(&m, r, c);
        ck_assert_int_eq(mrt_mesh_rank(&m, c), r);
    }
}
END_TEST

START_TEST(groups_partition_the_mesh)
{
    /* For every axis set, groups have the right size, indices inside a
     * group are a permutation of 0..size-1, and colours tell groups apart. */
    mrt_mesh m = make(3, (int64_t[]){3, 2, 5});
    for (unsigned mask = 0; mask < 8; mask++) {
        int64_t gs = mrt_mesh_group_size(&m, mask);
        int64_t ngroups = m.nranks / gs;
        int *seen = calloc((size_t)m.nranks, sizeof *seen);
        for (int64_t r = 0; r < m.nranks; r++) {
            int64_t c[MRT_MAX_AXES];
            mrt_mesh_coords(&m, r, c);
            int64_t color = mrt_mesh_group_color(&m, mask, c);
            int64_t idx = mrt_mesh_group_index(&m, mask, c);
            ck_assert(color >= 0 && color < ngroups);
            ck_assert(idx >= 0 && idx < gs);
            seen[color * gs + idx]++;
        }
        for (int64_t i = 0; i < m.nranks; i++)
            ck_assert_int_eq(seen[i], 1);
        free(seen);
    }
    ck_assert_int_eq(mrt_mesh_group_size(&m, 0), 1);
    ck_assert_int_eq(mrt_mesh_group_size(&m, 5), 15);
}
END_TEST

START_TEST(group_index_follows_the_axis_coordinate)
{
    mrt_mesh m = make(2, (int64_t[]){2, 3});
    int64_t c[MRT_MAX_AXES] = {1, 2};
    ck_assert_int_eq(mrt_mesh_group_index(&m, 1u << 1, c), 2);
    ck_assert_int_eq(mrt_mesh_group_index(&m, 1u << 0, c), 1);
    ck_assert_int_eq(mrt_mesh_group_index(&m, 3u, c), 5);
}
END_TEST

START_TEST(names)
{
    mrt_mesh m = make(3, (int64_t[]){1, 2, 3});
    char buf[64];
    ck_assert_int_eq(mrt_mesh_find_axis(&m, "ax2"), 2);
    ck_assert_int_eq(mrt_mesh_find_axis(&m, "nope"), -1);
    ck_assert_str_eq(mrt_mesh_axes_str(&m, 5u, buf, sizeof buf), "ax0,ax2");
    ck_assert_str_eq(mrt_mesh_axes_str(&m, 0u, buf, sizeof buf), "");
}
END_TEST

/* Tiers against the definition: 8 ranks per node on {data: 4, model: 4}
 * (ranks 0-7 on node 0: data 0-1, every model). */
START_TEST(groups_on_nodes)
{
    mrt_mesh m = make(2, (int64_t[]){4, 4});
    mrt_mesh_span s = mrt_mesh_span_of(&m, 8, 2u); /* model */
    ck_assert_int_eq(s.tier, MRT_TIER_INTRA);
    ck_assert_int_eq(s.per_node, 4);
    s = mrt_mesh_span_of(&m, 8, 1u); /* data: 2 per node, 2 nodes */
    ck_assert_int_eq(s.tier, MRT_TIER_MIXED);
    ck_assert_int_eq(s.per_node, 2);
    ck_assert_int_eq(s.nodes, 2);
    s = mrt_mesh_span_of(&m, 4, 1u); /* data: one per node */
    ck_assert_int_eq(s.tier, MRT_TIER_INTER);
    ck_assert_int_eq(s.nodes, 4);
    s = mrt_mesh_span_of(&m, 8, 3u);
    ck_assert_int_eq(s.per_node, 8);
    ck_assert_int_eq(s.nodes, 2);
    ck_assert_int_eq(mrt_mesh_span_of(&m, 0, 3u).tier, MRT_TIER_INTRA);
    ck_assert_int_eq(mrt_mesh_span_of(&m, 16, 3u).tier, MRT_TIER_INTRA);
    /* the node index: rank 13 = (3, 1) is on node 1; over data,model
     * its place among node 1's ranks (8..15) is 13 - 8 */
    int64_t c[MRT_MAX_AXES];
    mrt_mesh_coords(&m, 13, c);
    ck_assert_int_eq(mrt_mesh_node_index(&m, 8, 3u, c), 5);
    ck_assert_int_eq(mrt_mesh_node_index(&m, 8, 1u, c), 1);
    ck_assert_int_eq(mrt_mesh_node_of(8, 13), 1);
}
END_TEST

/* Every mesh of 1-3 axes of sizes 1-4 and every ranks per node 1-9: the
 * tier of each mask agrees with a walk over the ranks, and when aligned
 * every group has per_node ranks on each of its nodes. */
START_TEST(groups_on_nodes_brute_force)
{
    for (int64_t code = 0; code < 4 * 4 * 4; code++)
        for (int64_t rpn = 1; rpn <= 9; rpn++) {
            int64_t sz[3] = {code % 4 + 1, code / 4 % 4 + 1, code / 16 + 1};
            mrt_mesh m = make(3, sz);
            for (unsigned mask = 1; mask < 8; mask++) {
                mrt_mesh_span s = mrt_mesh_span_of(&m, rpn, mask);
                int spans = 0, c[64] = {0};
                int64_t co[MRT_MAX_AXES];
                for (int64_t r = 0; r < m.nranks; r++) {
                    mrt_mesh_coords(&m, r, co);
                    int64_t g = mrt_mesh_group_color(&m, mask, co);
                    for (int64_t q = 0; q < m.nranks; q++) {
                        int64_t cq[MRT_MAX_AXES];
                        mrt_mesh_coords(&m, q, cq);
                        if (mrt_mesh_group_color(&m, mask, cq) == g &&
                            q / rpn != r / rpn)
                            spans = 1;
                    }
                    if (s.aligned && rpn < m.nranks) {
                        /* ranks of r's group on r's node */
                        int n = 0;
                        for (int64_t q = 0; q < m.nranks; q++) {
                            int64_t cq[MRT_MAX_AXES];
                            mrt_mesh_coords(&m, q, cq);
                            n += mrt_mesh_group_color(&m, mask, cq) == g &&
                                 q / rpn == r / rpn;
                        }
                        ck_assert_int_eq(n, s.per_node);
                        c[mrt_mesh_node_index(&m, rpn, mask, co)]++;
                    }
                }
                ck_assert_int_eq(spans, s.tier != MRT_TIER_INTRA);
                if (s.aligned && rpn < m.nranks)
                    for (int64_t i = 0; i < s.per_node; i++) /* a bijection */
                        ck_assert_int_eq(c[i], m.nranks / s.per_node);
            }
        }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mesh");
    TCase *tc = tcase_create("mesh");
    tcase_add_test(tc, row_major_first_axis_major);
    tcase_add_test(tc, groups_partition_the_mesh);
    tcase_add_test(tc, group_index_follows_the_axis_coordinate);
    tcase_add_test(tc, names);
    tcase_add_test(tc, groups_on_nodes);
    tcase_add_test(tc, groups_on_nodes_brute_force);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
