/*
 * test_exchange.c — ops/exchange.c's mrt_exchange_volume, which the
 * planner calls for every all-to-all over a group of axes it weighs,
 * against counting member by member as it did before it was made fast
 * (issue 18: a GPT-3-sized model spent 92% of its planning there).
 *
 * For random meshes (2 or 3 axes of 1 to 5 ranks), tensors (1 to 4 dims
 * of 1 to 13 elements, so most splits are uneven) and pairs of layouts
 * that split dims over the same axes in other places and orders, over
 * the group mrt_exchange_axes finds and over every mask: the most
 * elements a member sends and the most peers it sends to must be what
 * mrt_exchange_box says, summed over every member and every pair (the
 * peers are counted in groups of at most 64; past that the cost takes
 * all g - 1).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "exchange.h"

/* Before: every member's box with itself, and with every other. */
static int64_t by_members(const mrt_mesh *m, const mrt_layout *a,
                          const mrt_layout *b, unsigned axes, int64_t *peers)
{
    int64_t g = mrt_mesh_group_size(m, axes), most = 0;
    int64_t zero[MRT_MAX_AXES] = {0}, cs[MRT_MAX_AXES], cr[MRT_MAX_AXES];
    int64_t s0[MRT_MAX_DIMS], d0[MRT_MAX_DIMS], e[MRT_MAX_DIMS];
    *peers = 0;
    for (int64_t j = 0; j < g; j++) {
        mrt_exchange_member(m, axes, zero, j, cs);
        int64_t sent = mrt_layout_shard_count_at(a, m, cs) -
                       mrt_exchange_box(a, b, m, cs, cs, s0, d0, e);
        most = sent > most ? sent : most;
        int64_t k = 0;
        for (int64_t q = 0; q < g; q++) {
            mrt_exchange_member(m, axes, zero, q, cr);
            k += q != j && mrt_exchange_box(a, b, m, cs, cr, s0, d0, e);
        }
        *peers = k > *peers ? k : *peers;
    }
    return most;
}

/* Each axis of the mesh on one random dim of l or none, in random order. */
static void random_splits(mrt_layout *l, const mrt_mesh *m, unsigned used)
{
    int order[MRT_MAX_AXES];
    for (int a = 0; a < m->naxes; a++)
        order[a] = a;
    for (int a = m->naxes - 1; a > 0; a--) {
        int k = rand() % (a + 1), t = order[a];
        order[a] = order[k];
        order[k] = t;
    }
    for (int i = 0; i < l->ndims; i++)
        l->naxes[i] = 0;
    for (int k = 0; k < m->naxes; k++)
        if (used & (1u << order[k])) {
            int i = rand() % l->ndims;
            l->axes[i][l->naxes[i]++] = (int8_t)order[k];
        }
}

START_TEST(volume_matches_counting_members)
{
    srand(11 + (unsigned)_i);
    for (int round = 0; round < 300; round++) {
        mrt_mesh m;
        memset(&m, 0, sizeof m);
        m.naxes = 2 + rand() % 2;
        m.nranks = 1;
        for (int a = 0; a < m.naxes; a++) {
            m.size[a] = 1 + rand() % 5;
            m.nranks *= m.size[a];
        }
        mrt_layout a, b;
        memset(&a, 0, sizeof a);
        a.ndims = 1 + rand() % 4;
        for (int i = 0; i < a.ndims; i++) {
            a.dim[i] = i;
            a.size[i] = 1 + rand() % 13;
        }
        b = a;
        unsigned used = (unsigned)rand() & ((1u << m.naxes) - 1);
        random_splits(&a, &m, used);
        random_splits(&b, &m, used);
        unsigned group = mrt_exchange_axes(&a, &b);
        for (unsigned axes = 0; axes < (1u << m.naxes); axes++) {
            if (axes != group && rand() % 3)
                continue;
            int64_t peers, want_peers;
            int64_t most = mrt_exchange_volume(&m, &a, &b, axes, &peers);
            int64_t want = by_members(&m, &a, &b, axes, &want_peers);
            if (mrt_mesh_group_size(&m, axes) > 64)
                want_peers = mrt_mesh_group_size(&m, axes) - 1;
            ck_assert_msg(most == want && peers == want_peers,
                          "round %d, mask %u: %lld elements to %lld peers, "
                          "counted %lld to %lld",
                          round, axes, (long long)most, (long long)peers,
                          (long long)want, (long long)want_peers);
        }
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("exchange");
    TCase *tc = tcase_create("exchange");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, volume_matches_counting_members, 0, 4);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
