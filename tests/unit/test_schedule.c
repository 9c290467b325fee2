/*
 * test_schedule.c — ops/schedule.c's orders and schedule_replay.c's
 * times: each stage's sequence is the textbook one for small p, m and v;
 * every (chunk, microbatch, phase) runs once and after its dependencies,
 * whatever the durations; the bubble of uniform stages is (p − 1)/m for
 * gpipe and 1f1b and (p − 1)/(m·v) interleaved, computed here from p, m
 * and v; the p2p time adds what the dependency chains say; the
 * activations in flight are gpipe's m and 1f1b's p − k; work outside the
 * block on the last stage adds its time to the makespan (what
 * schedule_plan.c's pricing apart assumes); ZB-H1's bubble with F, B
 * and W apart.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedule.h"

static mrt_schedule *make(mrt_schedule_kind kind, int p, int v, int m)
{
    mrt_schedule *s = NULL;
    mrt_error err = {0};
    ck_assert_msg(mrt_schedule_make(kind, p, v, m, &s, &err) == MRT_OK, "%s",
                  err.message);
    return s;
}

/* Stage k's order as "F0:1 B0:1 ...": phase, chunk, microbatch. */
static const char *sequence(const mrt_schedule *s, int k)
{
    static char buf[4096];
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < s->per_stage; i++) {
        const mrt_slot *sl = &s->slot[k * s->per_stage + i];
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%c%d:%d",
                              i ? " " : "", "FBW"[sl->phase], sl -> chunk,
                              sl -> micro);
    }
    return buf;
}

START_TEST(gpipe_order)
{
    mrt_schedule *s = make(MRT_SCHEDULE_GPIPE, 2, 1, 3);
    ck_assert_str_eq(sequence(s, 0), "F0:0 F0:1 F0:2 B0:0 B0:1 B0:2");
    ck_assert_str_eq(sequence(s, 1), "F1:0 F1:1 F1:2 B1:0 B1:1 B1:2");
    mrt_schedule_destroy(s);
}
END_TEST

START_TEST(one_f_one_b_order)
{
    mrt_schedule *s = make(MRT_SCHEDULE_1F1B, 4, 1, 6);
    ck_assert_str_eq(sequence(s, 0), "F0:0 F0:1 F0:2 F0:3 B0:0 F0:4 B0:1 "
                                     "F0:5 B0:2 B0:3 B0:4 B0:5");
    ck_assert_str_eq(sequence(s, 1), "F1:0 F1:1 F1:2 B1:0 F1:3 B1:1 F1:4 "
                                     "B1:2 F1:5 B1:3 B1:4 B1:5");
    ck_assert_str_eq(sequence(s, 3), "F3:0 B3:0 F3:1 B3:1 F3:2 B3:2 F3:3 "
                                     "B3:3 F3:4 B3:4 F3:5 B3:5");
    mrt_schedule_destroy(s);
    /* Fewer microbatches than stages: the warm-up is all of them. */
    s = make(MRT_SCHEDULE_1F1B, 4, 1, 2);
    ck_assert_str_eq(sequence(s, 0), "F0:0 F0:1 B0:0 B0:1");
    ck_assert_str_eq(sequence(s, 2), "F2:0 F2:1 B2:0 B2:1");
    ck_assert_str_eq(sequence(s, 3), "F3:0 B3:0 F3:1 B3:1");
    mrt_schedule_destroy(s);
}
END_TEST

/* Megatron-LM's interleaved order for p = 2, v = 2, m = 4: stage 0 holds
 * chunks 0 and 2; warm-up 2(p − k − 1) + (v − 1)p = 4 on stage 0, 2 on
 * stage 1; groups of p microbatches per chunk, backward from the last
 * chunk. */
START_TEST(interleaved_order)
{
    mrt_schedule *s = make(MRT_SCHEDULE_INTERLEAVED, 2, 2, 4);
    ck_assert_str_eq(sequence(s, 0), "F0:0 F0:1 F2:0 F2:1 "
                                     "F0:2 B2:0 F0:3 B2:1 F2:2 B0:0 F2:3 B0:1 "
                                     "B2:2 B2:3 B0:2 B0:3");
    ck_assert_str_eq(sequence(s, 1),
                     "F1:0 F1:1 "
                     "F3:0 B3:0 F3:1 B3:1 F1:2 B1:0 F1:3 B1:1 F3:2 B3:2 "
                     "F3:3 B3:3 B1:2 B1:3");
    mrt_schedule_destroy(s);
}
END_TEST

static void check_errors(void)
{
    mrt_schedule *s = NULL;
    mrt_error err = {0};
    ck_assert_int_eq(
        mrt_schedule_make(MRT_SCHEDULE_INTERLEAVED, 2, 2, 3, &s, &err),
        MRT_E_SPEC);
    ck_assert_ptr_null(s);
    ck_assert_str_eq(err.message,
                     "schedule interleaved needs the "
                     "microbatches (3) to be a multiple of the stages (2)");
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(mrt_schedule_make(MRT_SCHEDULE_1F1B, 2, 2, 4, &s, &err),
                     MRT_E_SPEC);
    ck_assert_str_eq(err.message,
                     "2 virtual stages need schedule interleaved (not 1f1b)");
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(mrt_schedule_make(MRT_SCHEDULE_GPIPE, 2, 1, 0, &s, &err),
                     MRT_E_SPEC);
}

START_TEST(errors)
{
    check_errors();
}
END_TEST

/* Every (chunk, micro, phase) once, on stage chunk mod p, and after its
 * dependencies (plus the p2p time between stages); a stage's slots in
 * its order, never overlapping. */
static void check_replay(const mrt_schedule *s, const double *p2p)
{
    int n = s->stages * s->per_stage;
    int *seen = calloc((size_t)n, sizeof *seen);
    for (int i = 0; i < n; i++) {
        const mrt_slot *sl = &s->slot[i];
        ck_assert_int_eq(sl->stage, i / s->per_stage);
        ck_assert_int_eq(sl->chunk % s->stages, sl->stage);
        int at = mrt_schedule_find(s, sl->chunk, sl->micro, sl->phase);
        ck_assert_int_eq(at, i);
        seen[at]++;
        if (i % s->per_stage)
            ck_assert(sl->start_s >= s->slot[i - 1].end_s - 1e-12);
        int c = sl->chunk, j = sl->micro;
        const mrt_slot *dep[2] = {NULL, NULL};
        double gap[2] = {0, 0};
        if (sl->phase == MRT_SLOT_F && c > 0) {
            dep[0] = &s->slot[mrt_schedule_find(s, c - 1, j, MRT_SLOT_F)];
            gap[0] = p2p ? p2p[c - 1] : 0;
        } else if (sl->phase == MRT_SLOT_B) {
            dep[0] = &s->slot[mrt_schedule_find(s, c, j, MRT_SLOT_F)];
            if (c + 1 < s->chunks) {
                dep[1] = &s->slot[mrt_schedule_find(s, c + 1, j, MRT_SLOT_B)];
                gap[1] = p2p ? p2p[c] : 0;
            }
        } else if (sl->phase == MRT_SLOT_W)
            dep[0] = &s->slot[mrt_schedule_find(s, c, j, MRT_SLOT_B)];
        for (int d = 0; d < 2; d++)
            if (dep[d]) {
                double g = dep[d]->stage == sl->stage ? 0 : gap[d];
                ck_assert_msg(sl->start_s >= dep[d]->end_s + g - 1e-12,
                              "slot %d starts before its dependency", i);
            }
    }
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(seen[i], 1);
    free(seen);
}

/* Random durations per chunk and random p2p times, every kind. */
START_TEST(dependencies)
{
    srand(7);
    for (int kind = 0; kind < MRT_SCHEDULE_COUNT; kind++)
        for (int p = 1; p <= 4; p++)
            for (int m = 1; m <= 8; m++)
                for (int v = 1; v <= 3; v++) {
                    if (v > 1 && kind != MRT_SCHEDULE_INTERLEAVED)
                        continue;
                    if (kind == MRT_SCHEDULE_INTERLEAVED && m % p)
                        continue;
                    mrt_schedule *s = make(kind, p, v, m);
                    check_replay(s, NULL);
                    double f[12], b[12], w[12], c[12];
                    for (int i = 0; i < p * v; i++) {
                        f[i] = 0.5 + rand() % 100 / 50.0;
                        b[i] = 0.5 + rand() % 100 / 50.0;
                        w[i] = rand() % 100 / 50.0;
                        c[i] = rand() % 100 / 200.0;
                    }
                    mrt_schedule_times t = {f, b, w, c};
                    mrt_schedule_replay(s, &t, NULL);
                    check_replay(s, c);
                    mrt_schedule_destroy(s);
                }
}
END_TEST

/* Uniform stages: forward 1, backward 2 per stage (1/v and 2/v per
 * chunk), no p2p time. */
static double uniform_bubble(mrt_schedule_kind kind, int p, int v, int m)
{
    mrt_schedule *s = make(kind, p, v, m);
    double f[16], b[16];
    for (int i = 0; i < p * v; i++)
        f[i] = 1.0 / v, b[i] = 2.0 / v;
    mrt_schedule_times t = {f, b, NULL, NULL};
    mrt_schedule_replay(s, &t, NULL);
    ck_assert_double_eq_tol(s->makespan_s, 3.0 * m + 3.0 * (p - 1) / v, 1e-9);
    double frac = s->bubble_fraction;
    mrt_schedule_destroy(s);
    return frac;
}

START_TEST(bubble_formulas)
{
    int ps[] = {2, 4}, ms[] = {1, 4, 8};
    for (int a = 0; a < 2; a++)
        for (int c = 0; c < 3; c++) {
            int p = ps[a], m = ms[c];
            double want = (double)(p - 1) / m;
            ck_assert_double_eq_tol(uniform_bubble(MRT_SCHEDULE_GPIPE, p, 1, m),
                                    want, 1e-9);
            ck_assert_double_eq_tol(uniform_bubble(MRT_SCHEDULE_1F1B, p, 1, m),
                                    want, 1e-9);
            for (int v = 2; v <= 3 && m % p == 0; v++)
                ck_assert_double_eq_tol(
                    uniform_bubble(MRT_SCHEDULE_INTERLEAVED, p, v, m),
                    (double)(p - 1) / (m * v), 1e-9);
        }
}
END_TEST

/* GPipe with a p2p time h per boundary: the first microbatch's forward
 * crosses p − 1 boundaries and the last one's backward p − 1 back, so the
 * makespan grows by 2(p − 1)h.  1F1B on 2 stages, m = 4, f = 1, b = 2:
 * by hand, stage 0's last backward starts at 13 + 4h, so the makespan is
 * 15 + 4h (each of the 2 round trips of the steady state waits 2h). */
START_TEST(p2p_time)
{
    double h = 0.25, f[4] = {1, 1, 1, 1}, b[4] = {2, 2, 2, 2};
    double c[4] = {h, h, h, h};
    mrt_schedule_times t = {f, b, NULL, c};
    int ps[] = {2, 4}, ms[] = {1, 4, 8};
    for (int a = 0; a < 2; a++)
        for (int k = 0; k < 3; k++) {
            int p = ps[a], m = ms[k];
            mrt_schedule *s = make(MRT_SCHEDULE_GPIPE, p, 1, m);
            mrt_schedule_replay(s, &t, NULL);
            ck_assert_double_eq_tol(s->makespan_s,
                                    3.0 * (m + p - 1) + 2 * (p - 1) * h, 1e-9);
            mrt_schedule_destroy(s);
        }
    mrt_schedule *s = make(MRT_SCHEDULE_1F1B, 2, 1, 4);
    mrt_schedule_replay(s, &t, NULL);
    ck_assert_double_eq_tol(s->makespan_s, 15 + 4 * h, 1e-9);
    mrt_schedule_destroy(s);
}
END_TEST

START_TEST(in_flight)
{
    for (int p = 1; p <= 4; p++)
        for (int m = 1; m <= 8; m++) {
            mrt_schedule *g = make(MRT_SCHEDULE_GPIPE, p, 1, m);
            mrt_schedule *o = make(MRT_SCHEDULE_1F1B, p, 1, m);
            mrt_schedule *z = make(MRT_SCHEDULE_ZERO_BUBBLE, p, 1, m);
            for (int k = 0; k < p; k++) {
                ck_assert_int_eq(g->in_flight[k], m);
                ck_assert_int_eq(o->in_flight[k], p - k < m ? p - k : m);
                ck_assert_int_eq(z->in_flight[k], p < m ? p : m);
            }
            mrt_schedule_destroy(g);
            mrt_schedule_destroy(o);
            mrt_schedule_destroy(z);
        }
    /* Interleaved, the first stage: the warm-up 2(p − 1) + (v − 1)p, and
     * one more before the first backward, in chunks. */
    mrt_schedule *s = make(MRT_SCHEDULE_INTERLEAVED, 4, 2, 8);
    ck_assert_int_eq(s->in_flight[0], 2 * 3 + 4 + 1);
    mrt_schedule_destroy(s);
}
END_TEST

/* ZB-H1 with F = B = W = 1: the first stage waits p − 1 before its
 * first B and never again, so the makespan is 3m + p − 1 (a bubble of
 * (p − 1)/(3m), a third of 1f1b's 3(p − 1)/(3m)) once m >= p. */
START_TEST(zero_bubble)
{
    for (int p = 1; p <= 4; p++)
        for (int m = p; m <= 8; m++) {
            mrt_schedule *s = make(MRT_SCHEDULE_ZERO_BUBBLE, p, 1, m);
            ck_assert_double_eq_tol(s->makespan_s, 3.0 * m + p - 1, 1e-9);
            ck_assert_double_eq_tol(s->bubble_fraction, (p - 1) / (3.0 * m),
                                    1e-9);
            mrt_schedule_destroy(s);
        }
    mrt_schedule *s = make(MRT_SCHEDULE_ZERO_BUBBLE, 2, 1, 3);
    ck_assert_str_eq(sequence(s, 0), "F0:0 F0:1 B0:0 W0:0 F0:2 B0:1 W0:1 "
                                     "B0:2 W0:2");
    ck_assert_str_eq(sequence(s, 1), "F1:0 B1:0 F1:1 B1:1 W1:0 F1:2 B1:2 "
                                     "W1:1 W1:2");
    mrt_schedule_destroy(s);
}
END_TEST

/* A replay's makespan: chunks of f 1/v and b 2/v, the last chunk's F
 * and B longer by lf and lb (the loss, outside the block, in its slot). */
static double tail_makespan(mrt_schedule_kind kind, int p, int v, int m,
                            double lf, double lb)
{
    mrt_schedule *s = make(kind, p, v, m);
    double f[16], b[16], w[16];
    for (int i = 0; i < p * v; i++)
        f[i] = 1.0 / v, b[i] = 2.0 / v, w[i] = 0.5;
    f[p * v - 1] += lf;
    b[p * v - 1] += lb;
    mrt_schedule_times t = {f, b, kind == MRT_SCHEDULE_ZERO_BUBBLE ? w : NULL,
                            NULL};
    mrt_schedule_replay(s, &t, NULL);
    double span = s->makespan_s;
    mrt_schedule_destroy(s);
    return span;
}

/* schedule_plan.c prices the ops outside the block apart: the modeled
 * time is the blocks' makespan plus their time.  For work on the last
 * stage (the loss) that is the replay with it in the last chunk's slots,
 * exactly, under gpipe, 1f1b and interleaved (the last stage is then the
 * busiest and never waits once it has started), with no p2p time (with
 * it, 1f1b's steady round trips wait for the last stage:
 * tests/cli/pipeline_bubble.sh bounds that on the example);
 * zero_bubble's bubbles absorb some of it: at most that. */
START_TEST(outside_the_block)
{
    double lf = 0.3, lb = 0.7;
    int ps[] = {2, 4}, ms[] = {1, 4, 8};
    for (int a = 0; a < 2; a++)
        for (int c = 0; c < 3; c++) {
            int p = ps[a], m = ms[c];
            for (int kind = 0; kind < MRT_SCHEDULE_COUNT; kind++) {
                int v = kind == MRT_SCHEDULE_INTERLEAVED ? 2 : 1;
                if (v > 1 && m % p)
                    continue;
                double apart = tail_makespan(kind, p, v, m, 0, 0) +
                               m * (lf + lb);
                double in = tail_makespan(kind, p, v, m, lf, lb);
                if (kind == MRT_SCHEDULE_ZERO_BUBBLE)
                    ck_assert(in <= apart + 1e-9);
                else
                    ck_assert_double_eq_tol(in, apart, 1e-9);
            }
        }
}
END_TEST

/* ZB-H1 with F, B, W apart (W >= B): the first stage idles while the
 * first B comes back, (p − 1)B, and while the forward fills when m < p,
 * (p − m)F, so the bubble is (max(p − m, 0)F + (p − 1)B)/(m(F + B + W))
 * (pipeline_bubble.sh checks the example's figure against it). */
START_TEST(zero_bubble_apart)
{
    double F = 1, B = 1.25, W = 3.5, f[4], b[4], w[4];
    for (int i = 0; i < 4; i++)
        f[i] = F, b[i] = B, w[i] = W;
    mrt_schedule_times t = {f, b, w, NULL};
    for (int p = 2; p <= 4; p++)
        for (int m = 1; m <= 8; m++) {
            mrt_schedule *s = make(MRT_SCHEDULE_ZERO_BUBBLE, p, 1, m);
            mrt_schedule_replay(s, &t, NULL);
            double want = ((p > m ? p - m : 0) * F + (p - 1) * B) /
                          (m * (F + B + W));
            ck_assert_double_eq_tol(s->bubble_fraction, want, 1e-9);
            mrt_schedule_destroy(s);
        }
}
END_TEST

int main(void)
{
    Suite *su = suite_create("schedule");
    TCase *tc = tcase_create("schedule");
    tcase_add_test(tc, gpipe_order);
    tcase_add_test(tc, one_f_one_b_order);
    tcase_add_test(tc, interleaved_order);
    tcase_add_test(tc, errors);
    tcase_add_test(tc, dependencies);
    tcase_add_test(tc, bubble_formulas);
    tcase_add_test(tc, p2p_time);
    tcase_add_test(tc, in_flight);
    tcase_add_test(tc, zero_bubble);
    tcase_add_test(tc, outside_the_block);
    tcase_add_test(tc, zero_bubble_apart);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
