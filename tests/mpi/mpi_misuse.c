/*
 * mpi_misuse.c — the runner and the calibration misused, through meshrt.h
 * only (issue 17 items 5, 6, 8 and 15): a plan of y = relu(x) given
 * with a spec of y = tanh(x) is MRT_E_USAGE on every rank; one rank's
 * bad argument (a NULL spec, a NULL out, other execute options, another
 * calibration mesh) is MRT_E_USAGE on every rank instead of leaving the
 * others waiting in a collective; an op's tensor read before any
 * execute is MRT_E_USAGE (an input is not); mrt_calibration_create and
 * mrt_comm_agree on MPI_COMM_NULL are MRT_E_USAGE, not an abort.
 *
 * A Check suite in CK_NOFORK mode (a forked test can crash in
 * MPI_Finalize), run at 1-4 ranks.  Every assertion is on a value the
 * ranks agreed on first, so every rank fails or passes alike.  A rank
 * left waiting is what a regression of item 6 looks like, so an alarm
 * ends the job with a message after TIMEOUT_S seconds (meson's timeout
 * is the second guard).
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "meshrt_mpi.h"
#include "mpi_agree.h"

enum { TIMEOUT_S = 30 };

static int rank, nranks;

/* The rank that misbehaves: the last one (rank 0 at one rank). */
static int odd_one(void)
{
    return rank == nranks - 1;
}

/* y = FN(x) on a mesh {rows: nranks}. */
static mrt_spec *load(const char *fn)
{
    char text[512];
    int len = snprintf(text, sizeof text,
                       "mesh: {rows: %d}\n"
                       "dims: {i: %d}\n"
                       "layout: {i: rows}\n"
                       "tensors: {x: {shape: [i]}}\n"
                       "ops: [{op: %s, in: [x], out: y}]\n"
                       "outputs: [y]\n",
                       nranks, 4 * nranks, fn);
    mrt_spec *s = NULL;
    mrt_error err = {0};
    mrt_status st = mrt_spec_load_string("misuse.yaml", text, (size_t)len, &s,
                                         &err);
    ck_assert_msg(all(st == MRT_OK), "load %s: %s", fn, err.message);
    return s;
}

static mrt_plan *plan_of(const mrt_spec *s)
{
    mrt_plan *p = NULL;
    mrt_error err = {0};
    mrt_status st = mrt_plan_create(s, NULL, &p, &err);
    ck_assert_msg(all(st == MRT_OK), "plan: %s", err.message);
    return p;
}

START_TEST(plan_of_another_program_is_refused)
{
    mrt_spec *relu = load("relu"), *tanh_ = load("tanh");
    mrt_plan *p = plan_of(relu);
    mrt_runner *r = NULL;
    mrt_error err = {0};
    mrt_status st = mrt_runner_create(tanh_, p, MPI_COMM_WORLD, &r, &err);
    int ok = st == MRT_E_USAGE && !r && strstr(err.message, "not made from");
    mrt_runner_destroy(r);
    /* the program it was made from is still accepted */
    mrt_spec *again = load("relu");
    mrt_status st2 = mrt_runner_create(again, p, MPI_COMM_WORLD, &r, &err);
    mrt_runner_destroy(r);
    mrt_spec_destroy(again);
    mrt_plan_destroy(p);
    mrt_spec_destroy(relu);
    mrt_spec_destroy(tanh_);
    ck_assert_msg(all(ok), "relu's plan with tanh's spec: status %d (%s)", st,
                  err.message);
    ck_assert_msg(all(st2 == MRT_OK), "relu's plan with relu's spec: %d", st2);
}
END_TEST

START_TEST(null_spec_on_one_rank_fails_on_every_rank)
{
    mrt_spec *s = load("relu");
    mrt_plan *p = plan_of(s);
    mrt_runner *r = NULL;
    mrt_error err = {0};
    mrt_status st = mrt_runner_create(odd_one() ? NULL : s, p, MPI_COMM_WORLD,
                                      &r, &err);
    int none = r == NULL;
    mrt_runner_destroy(r);
    /* and a NULL out pointer on one rank */
    mrt_status st2 = mrt_runner_create(s, p, MPI_COMM_WORLD,
                                       odd_one() ? NULL : &r, &err);
    int none2 = odd_one() || r == NULL;
    if (!odd_one())
        mrt_runner_destroy(r);
    mrt_plan_destroy(p);
    mrt_spec_destroy(s);
    ck_assert_msg(all(st == MRT_E_USAGE && none), "NULL spec: status %d", st);
    ck_assert_msg(all(st2 == MRT_E_USAGE && none2), "NULL out: status %d", st2);
}
END_TEST

START_TEST(other_options_on_one_rank_fail_on_every_rank)
{
    mrt_spec *s = load("relu");
    mrt_plan *p = plan_of(s);
    mrt_runner *r = NULL;
    mrt_error err = {0};
    mrt_status st = mrt_runner_create(s, p, MPI_COMM_WORLD, &r, &err);
    ck_assert_msg(all(st == MRT_OK), "create: %s", err.message);
    /* one rank would run three times, the others once */
    mrt_run_options opt = {.repeat = odd_one() ? 3 : 1};
    mrt_status st2 = mrt_runner_execute(r, &opt, &err);
    int named = strstr(err.message, "different options") != NULL;
    mrt_status st3 = mrt_runner_execute(r, NULL, &err);
    mrt_runner_destroy(r);
    mrt_plan_destroy(p);
    mrt_spec_destroy(s);
    if (nranks > 1)
        ck_assert_msg(all(st2 == MRT_E_USAGE && named),
                      "repeat 3 on one rank: status %d", st2);
    ck_assert_msg(all(st3 == MRT_OK), "the same options: status %d", st3);
}
END_TEST

START_TEST(output_before_execute_is_refused)
{
    mrt_spec *s = load("relu");
    mrt_plan *p = plan_of(s);
    mrt_runner *r = NULL;
    mrt_error err = {0};
    mrt_status st = mrt_runner_create(s, p, MPI_COMM_WORLD, &r, &err);
    ck_assert_msg(all(st == MRT_OK), "create: %s", err.message);
    float y[64], x[64];
    mrt_status whole = mrt_runner_get_output(r, "y", y, MRT_WHOLE, &err);
    int named = strstr(err.message, "'y'") != NULL;
    mrt_status shard = mrt_runner_get_output(r, "y", y, MRT_SHARD, &err);
    /* an input holds its values from the start */
    mrt_status input = mrt_runner_get_output(r, "x", x, MRT_WHOLE, &err);
    mrt_status run = mrt_runner_execute(r, NULL, &err);
    mrt_status after = mrt_runner_get_output(r, "y", y, MRT_WHOLE, &err);
    int relu = 1; /* y = relu(x), gathered on rank 0 */
    for (int i = 0; rank == 0 && after == MRT_OK && i < 4 * nranks; i++)
        relu &= y[i] == (x[i] > 0 ? x[i] : 0);
    mrt_runner_destroy(r);
    mrt_plan_destroy(p);
    mrt_spec_destroy(s);
    ck_assert_msg(all(whole == MRT_E_USAGE && named),
                  "whole y before "
                  "execute: status %d",
                  whole);
    ck_assert_msg(all(shard == MRT_E_USAGE), "y's shard before execute: %d",
                  shard);
    ck_assert_msg(all(input == MRT_OK), "x before execute: %d", input);
    ck_assert_msg(all(run == MRT_OK && after == MRT_OK && relu),
                  "y after execute: %d, %d, values %s", run, after,
                  relu ? "right" : "wrong");
}
END_TEST

START_TEST(calibration_on_no_communicator_is_a_usage_error)
{
    mrt_calibration *c = (mrt_calibration *)&c; /* not NULL */
    mrt_error err = {0};
    mrt_status st = mrt_calibration_create(MPI_COMM_NULL, NULL, 1, &c, &err);
    mrt_status agree = mrt_comm_agree(MPI_COMM_NULL, MRT_OK, NULL);
    ck_assert_msg(all(st == MRT_E_USAGE && c == NULL), "MPI_COMM_NULL: %d", st);
    ck_assert_msg(all(agree == MRT_E_USAGE), "mrt_comm_agree: %d", agree);
}
END_TEST

START_TEST(calibration_arguments_agree_first)
{
    mrt_calibration *c = NULL;
    mrt_error err = {0};
    /* a NULL out on one rank */
    mrt_status st = mrt_calibration_create(MPI_COMM_WORLD, NULL, 1,
                                           odd_one() ? NULL : &c, &err);
    int none = odd_one() || c == NULL;
    /* another mesh on one rank: {a: 1, b: P} against {b: P, a: 1} */
    mrt_mesh_info m = {.naxes = 2, .name = {"a", "b"}, .size = {1, nranks}};
    if (odd_one())
        m = (mrt_mesh_info){
            .naxes = 2, .name = {"b", "a"}, .size = {nranks, 1}};
    /* (at one rank there is no other: it would measure) */
    mrt_status st2 = nranks > 1 ? mrt_calibration_create(MPI_COMM_WORLD, &m, 1,
                                                         &c, &err)
                                : MRT_E_USAGE;
    int none2 = c == NULL;
    mrt_calibration_destroy(c);
    ck_assert_msg(all(st == MRT_E_USAGE && none), "NULL out: %d", st);
    ck_assert_msg(all(st2 == MRT_E_USAGE && none2),
                  "another mesh on one rank: %d (%s)", st2, err.message);
}
END_TEST

static void timed_out(int sig)
{
    (void)sig;
    static const char msg[] = "mpi_misuse: timed out: a rank is waiting in a "
                              "collective that another rank left\n";
    if (write(2, msg, sizeof msg - 1) < 0)
        _exit(3);
    _exit(3);
}

int main(int argc, char **argv)
{
    mrt_error err = {0};
    if (mrt_init(&err) != MRT_OK) {
        fprintf(stderr, "mrt_init: %s\n", err.message);
        return 1;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    signal(SIGALRM, timed_out);
    alarm(TIMEOUT_S);
    /* a case per test, so that one can be run alone (CK_RUN_CASE=NAME) */
    const struct {
        const char *name;
        const TTest *test;
    } tests[] = {
        {"another_program", plan_of_another_program_is_refused},
        {"null_spec", null_spec_on_one_rank_fails_on_every_rank},
        {"other_options", other_options_on_one_rank_fail_on_every_rank},
        {"output_before_execute", output_before_execute_is_refused},
        {"calibration_comm_null",
         calibration_on_no_communicator_is_a_usage_error},
        {"calibration_agree", calibration_arguments_agree_first},
    };
    Suite *su = suite_create("mpi_misuse");
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        TCase *tc = tcase_create(tests[i].name);
        tcase_add_test(tc, tests[i].test);
        suite_add_tcase(su, tc);
    }
    SRunner *sr = srunner_create(su);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, rank == 0 ? CK_NORMAL : CK_SILENT);
    int failed = srunner_ntests_failed(sr), total;
    srunner_free(sr);
    MPI_Allreduce(&failed, &total, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return total ? 1 : 0;
}
