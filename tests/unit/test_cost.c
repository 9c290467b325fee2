/*
 * test_cost.c — the cost model's formulas on hand-worked cases (the
 * collectives, a kernel, a local step), and the matmul lower bound in
 * each of its three regimes.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"

static mrt_mesh mesh(void)
{
    /* data: 4 ranks over a slow link, model: 2 over a fast one */
    mrt_mesh m = {.naxes = 2, .size = {4, 2}, .nranks = 8};
    strcpy(m.name[0], "data");
    strcpy(m.name[1], "model");
    return m;
}

static mrt_profile profile(void)
{
    mrt_profile p;
    mrt_profile_default(&p);
    mrt_profile_set_link(&p, "data", (mrt_link){10e-6, 1e9});
    mrt_profile_set_link(&p, "model", (mrt_link){1e-6, 100e9});
    p.reduce_flops = 1e9;
    return p;
}

START_TEST(allreduce_over_one_axis)
{
    /* 4 ranks, 4000 bytes of float32: wire 2*3/4*4000 = 6000 bytes,
     * 2*log2(4) = 4 messages, 3/4*1000 = 750 adds:
     * 4*10us + 6000/1e9 + 750/1e9 = 40us + 6us + 0.75us. */
    mrt_mesh m = mesh();
    mrt_profile p = profile();
    mrt_comm_cost c = mrt_cost_collective(&p, &m, MRT_COLL_ALLREDUCE, 1u, 4000,
                                          4);
    ck_assert_double_eq_tol(c.wire_bytes, 6000, 1e-9);
    ck_assert_int_eq(c.messages, 4);
    ck_assert_double_eq_tol(c.flops, 750, 1e-9);
    ck_assert_double_eq_tol(c.time_s, 40e-6 + 6e-6 + 0.75e-6, 1e-15);
}
END_TEST

START_TEST(each_kind_on_the_fast_axis)
{
    mrt_mesh m = mesh();
    mrt_profile p = profile();
    /* model: 2 ranks, n = 1000 bytes */
    mrt_comm_cost ag = mrt_cost_collective(&p, &m, MRT_COLL_ALLGATHER, 2u, 1000,
                                           8);
    ck_assert_double_eq_tol(ag.wire_bytes, 1000, 1e-9); /* (p-1) n */
    ck_assert_int_eq(ag.messages, 1);
    ck_assert_double_eq_tol(ag.time_s, 1e-6 + 1000 / 100e9, 1e-15);
    mrt_comm_cost rs = mrt_cost_collective(&p, &m, MRT_COLL_REDUCE_SCATTER, 2u,
                                           1000, 8);
    ck_assert_double_eq_tol(rs.wire_bytes, 500, 1e-9); /* (p-1)/p n */
    ck_assert_double_eq_tol(rs.flops, 62.5, 1e-9);     /* half of 125 */
    mrt_comm_cost aa = mrt_cost_collective(&p, &m, MRT_COLL_ALLTOALL, 2u, 1000,
                                           8);
    ck_assert_double_eq_tol(aa.wire_bytes, 500, 1e-9);
    ck_assert_int_eq(aa.messages, 1);
    mrt_comm_cost pe = mrt_cost_collective(&p, &m, MRT_COLL_PERMUTE, 3u, 1000,
                                           8);
    ck_assert_double_eq_tol(pe.wire_bytes, 1000, 1e-9);
}
END_TEST

START_TEST(a_group_pays_its_slowest_link)
{
    /* Over both axes (8 ranks): latency of data (10us), its bandwidth. */
    mrt_mesh m = mesh();
    mrt_profile p = profile();
    mrt_comm_cost c = mrt_cost_collective(&p, &m, MRT_COLL_ALLGATHER, 3u, 800,
                                          4);
    ck_assert_double_eq_tol(c.wire_bytes, 7 * 800, 1e-9);
    ck_assert_int_eq(c.messages, 3);
    ck_assert_double_eq_tol(c.time_s, 3 * 10e-6 + 5600 / 1e9, 1e-15);
}
END_TEST

START_TEST(a_group_of_one_costs_nothing)
{
    mrt_mesh m = mesh();
    m.size[1] = 1;
    mrt_profile p = profile();
    mrt_comm_cost c = mrt_cost_collective(&p, &m, MRT_COLL_ALLREDUCE, 2u,
                                          1 << 20, 4);
    ck_assert_double_eq(c.time_s, 0);
    ck_assert_double_eq(c.wire_bytes, 0);
}
END_TEST

START_TEST(unnamed_axes_use_the_fallback)
{
    mrt_mesh m = mesh();
    strcpy(m.name[0], "rows");
    mrt_profile p = profile();
    mrt_link l = mrt_profile_link(&p, &m, 0);
    ck_assert_double_eq(l.latency_s, p.fallback.latency_s);
    ck_assert_double_eq(mrt_cost_kernel(&p, MRT_F64, 1e10),
                        1e10 / p.gemm_flops[MRT_F64]);
}
END_TEST

/* With measured all-to-all rows of the group, an exchange (an
 * all-to-all whose pattern is not the uniform one) is priced as the
 * uniform all-to-all that puts as many bytes on the wire: between the
 * rows, on the line through them; without rows, by the links. */
START_TEST(an_exchange_takes_the_measured_alltoall_rows)
{
    mrt_mesh m = mesh();
    mrt_profile p = profile();
    /* model (2 ranks): 1 MiB a rank took 60 us, 8 MiB 500 us */
    double links = mrt_cost_exchange(&p, &m, 2u, 1 << 19, 1).time_s;
    ck_assert_double_eq_tol(links, 1e-6 + (1 << 19) / 100e9, 1e-15);
    p.coll[p.ncoll++] = (mrt_coll_row){MRT_COLL_ALLTOALL, 2, 1 << 20, 60e-6};
    p.coll[p.ncoll++] = (mrt_coll_row){MRT_COLL_ALLTOALL, 2, 8 << 20, 500e-6};
    /* the uniform all-to-all of 1 MiB puts 512 KiB on the wire */
    mrt_comm_cost c = mrt_cost_exchange(&p, &m, 2u, 1 << 19, 1);
    ck_assert_double_eq_tol(c.time_s, 60e-6, 1e-12);
    ck_assert_double_eq_tol(c.wire_bytes, 1 << 19, 1e-9);
    ck_assert_double_eq_tol(
        c.time_s,
        mrt_cost_collective(&p, &m, MRT_COLL_ALLTOALL, 2u, 1 << 20, 4).time_s,
        1e-15);
    /* 2 MiB a rank: 1/7 of the way from the first row to the second */
    c = mrt_cost_exchange(&p, &m, 2u, 1 << 20, 1);
    ck_assert_double_eq_tol(c.time_s, 60e-6 + (500e-6 - 60e-6) / 7, 1e-12);
    /* the data axis (4 ranks) has no rows: its links */
    c = mrt_cost_exchange(&p, &m, 1u, 3000, 3);
    ck_assert_double_eq_tol(c.time_s, 3 * 10e-6 + 3000 / 1e9, 1e-15);
}
END_TEST

START_TEST(a_local_step_pays_the_bytes_it_writes_and_reads)
{
    mrt_profile p = profile();
    p.copy_Bps = 1e9;
    /* a map writing 1000 elements of 4 bytes from 500 read: 6000 bytes */
    ck_assert_double_eq_tol(mrt_cost_local(&p, 1000, 500, 4), 6e-6, 1e-18);
    /* a slice only writes */
    ck_assert_double_eq_tol(mrt_cost_local(&p, 1000, 0, 8), 8e-6, 1e-18);
    ck_assert_double_eq(mrt_cost_local(&p, 1000, 0, 8),
                        mrt_cost_copy(&p, 8000));
}
END_TEST

START_TEST(lower_bound_regimes)
{
    /* 3D: a cube n^3 on P = 8: 3 (n^3/8)^(2/3) - 3 n^2/8 = 3n^2/4 - 3n^2/8 */
    double n = 1024;
    ck_assert_double_eq_tol(mrt_cost_matmul_lower_bound(n, n, n, 1, 8),
                            3 * n * n / 4 - 3 * n * n / 8, 1e-6);
    /* 1D: M = 4096, N = K = 64, P = 4 <= M/N = 64:
     * N K + (M N + M K)/P - (M N + M K + N K)/P = N K (1 - 1/P) */
    ck_assert_double_eq_tol(mrt_cost_matmul_lower_bound(4096, 64, 64, 1, 4),
                            64.0 * 64 * 0.75, 1e-6);
    /* 2D: M = N = 1024, K = 16, P = 64 in (1, 4096]:
     * 2 sqrt(M N K^2 / P) + M N / P - (M N + 2 M K)/P */
    double m = 1024, k = 16, P = 64;
    ck_assert_double_eq_tol(mrt_cost_matmul_lower_bound(m, m, k, 1, P),
                            2 * sqrt(m * m * k * k / P) - 2 * m * k / P, 1e-6);
    /* One processor, or at least one per batch element: nothing to move. */
    ck_assert_double_eq(mrt_cost_matmul_lower_bound(n, n, n, 1, 1), 0);
    ck_assert_double_eq(mrt_cost_matmul_lower_bound(n, n, n, 8, 8), 0);
    /* The regimes meet: continuous at P = d1/d2 and P = d1 d2 / d3^2. */
    double a = mrt_cost_matmul_lower_bound(4096, 64, 16, 1, 64);
    double b = mrt_cost_matmul_lower_bound(4096, 64, 16, 1, 64 * (1 + 1e-9));
    ck_assert_double_eq_tol(a, b, 1e-3);
    a = mrt_cost_matmul_lower_bound(4096, 64, 16, 1, 1024);
    b = mrt_cost_matmul_lower_bound(4096, 64, 16, 1, 1024 * (1 + 1e-9));
    ck_assert_double_eq_tol(a, b, 1e-3);
}
END_TEST

/* With 4 ranks per node on {data: 4, model: 2}: model inside a node,
 * data two per node over 2 nodes.  A flat all-reduce over data pays the
 * inter link; the hierarchical one, over data,model (q = 4, k = 2) of
 * 4000 float32 bytes: reduce-scatter 3/4*4000 = 3000 bytes in 2 msgs at
 * 1 us, 100 GB/s; all-reduce of 1000 bytes: 2*1/2*1000 = 1000 in 2 msgs
 * at 10 us, 1 GB/s; all-gather 3*1000 in 2 msgs at 1 us: wire 7000,
 * 6 msgs, and adds 750 + 125. */
START_TEST(tiers_price_groups_and_the_hierarchy)
{
    mrt_mesh m = mesh();
    mrt_profile p = profile();
    p.ranks_per_node = 4;
    p.intra = (mrt_link){1e-6, 100e9};
    p.inter = (mrt_link){10e-6, 1e9};
    mrt_comm_cost c = mrt_cost_collective(&p, &m, MRT_COLL_ALLGATHER, 2u, 4000,
                                          4);
    ck_assert_double_eq_tol(c.time_s, 1e-6 + 4000 / 100e9, 1e-15);
    c = mrt_cost_collective(&p, &m, MRT_COLL_ALLGATHER, 1u, 4000, 4);
    ck_assert_double_eq_tol(c.time_s, 2 * 10e-6 + 3 * 4000 / 1e9, 1e-15);
    mrt_comm_cost h = mrt_cost_allreduce_hier(&p, &m, 3u, 1000, 4);
    ck_assert_double_eq_tol(h.wire_bytes, 7000, 1e-9);
    ck_assert_int_eq(h.messages, 6);
    ck_assert_double_eq_tol(h.flops, 875, 1e-9);
    double want = 2 * 1e-6 + 3000 / 100e9 + 2 * 10e-6 + 1000 / 1e9 + 2 * 1e-6 +
                  3000 / 100e9 + 875 / 1e9;
    ck_assert_double_eq_tol(h.time_s, want, 1e-15);
    mrt_comm_cost f = mrt_cost_collective(&p, &m, MRT_COLL_ALLREDUCE, 3u, 4000,
                                          4);
    ck_assert(h.time_s < f.time_s);
    /* inside one node, or one rank per node: no hierarchy */
    ck_assert(isinf(mrt_cost_allreduce_hier(&p, &m, 2u, 1000, 4).time_s));
    p.ranks_per_node = 2;
    ck_assert(isinf(mrt_cost_allreduce_hier(&p, &m, 1u, 1000, 4).time_s));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cost");
    TCase *tc = tcase_create("cost");
    tcase_add_test(tc, allreduce_over_one_axis);
    tcase_add_test(tc, each_kind_on_the_fast_axis);
    tcase_add_test(tc, a_group_pays_its_slowest_link);
    tcase_add_test(tc, a_group_of_one_costs_nothing);
    tcase_add_test(tc, unnamed_axes_use_the_fallback);
    tcase_add_test(tc, an_exchange_takes_the_measured_alltoall_rows);
    tcase_add_test(tc, a_local_step_pays_the_bytes_it_writes_and_reads);
    tcase_add_test(tc, lower_bound_regimes);
    tcase_add_test(tc, tiers_price_groups_and_the_hierarchy);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
