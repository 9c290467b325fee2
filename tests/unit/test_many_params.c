/*
 * test_many_params.c — `train:` lists sized for models (issue 18, item
 * 2: no small caps).  Before, `params` and `grads` held at most 64
 * tensors (GPT-2 small has 148 parameters, a 96-layer model over 1,000).
 *
 * A program of 10,000 weights, each added to a running sum, is trained
 * in full: from the C builder (params: all 10,000, grads: the input) and
 * from a YAML file generated here (params: 10,000 and grads: 10,000,
 * the same weights).  Each plans, and the plan has what the lists ask
 * for: one gradient reduction per weight (the batch is split, the
 * weights are not), an update per weight.  A name listed twice in a list
 * of 10,000 is still the builder's error; listed once in params and
 * once in grads it is not.  The limits that remain are per tensor (its
 * dims, the mesh's axes, a name's length): the builder's errors name
 * each, as the file's do.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "meshrt.h"

enum { NW = 10000 };

static void ok(mrt_status st, const mrt_error *err)
{
    if (st)
        ck_abort_msg("builder: %s", err->message);
}

/* names[i] = "w<i>" (storage in buf, NW * 16 bytes). */
static const char **weight_names(char *buf)
{
    const char **names = malloc(NW * sizeof *names);
    ck_assert_ptr_nonnull(names);
    for (int i = 0; i < NW; i++) {
        snprintf(buf + 16 * i, 16, "w%d", i);
        names[i] = buf + 16 * i;
    }
    return names;
}

/* h_i = h_{i-1} + w_i from x, the loss their mse against t, on a mesh
 * {data: 2} with the batch split over data. */
static mrt_ir *chain(void)
{
    mrt_ir *ir = NULL;
    mrt_error err = {0};
    const char *axes[] = {"data"};
    const int64_t sizes[] = {2};
    ok(mrt_ir_create("many", 1, axes, sizes, &ir, &err), &err);
    ok(mrt_ir_add_dim(ir, "batch", 4, &err), &err);
    ok(mrt_ir_add_dim(ir, "d", 6, &err), &err);
    ok(mrt_ir_set_rule(ir, &(mrt_ir_rule){"batch", {"data"}}, &err), &err);
    const char *bd[] = {"batch", "d"}, *d[] = {"d"};
    ok(mrt_ir_add_tensor(
           ir, &(mrt_ir_tensor){.name = "x", .ndims = 2, .shape = bd}, &err),
       &err);
    ok(mrt_ir_add_tensor(
           ir, &(mrt_ir_tensor){.name = "t", .ndims = 2, .shape = bd}, &err),
       &err);
    char w[16], h[16], prev[16] = "x";
    for (int i = 0; i < NW; i++) {
        snprintf(w, sizeof w, "w%d", i);
        ok(mrt_ir_add_tensor(
               ir, &(mrt_ir_tensor){.name = w, .ndims = 1, .shape = d}, &err),
           &err);
    }
    for (int i = 0; i < NW; i++) {
        snprintf(w, sizeof w, "w%d", i);
        snprintf(h, sizeof h, "h%d", i);
        ok(mrt_ir_add_op(ir, &(mrt_ir_op){.kind = MRT_IR_ADD, {prev, w}, h},
                         &err),
           &err);
        memcpy(prev, h, sizeof prev);
    }
    ok(mrt_ir_add_op(ir, &(mrt_ir_op){.kind = MRT_IR_MSE, {prev, "t"}, "loss"},
                     &err),
       &err);
    return ir;
}

/* The plan of s: a gradient reduction per weight and one for dL/dx
 * when grads_x (over data: the batch is split), nothing in the update. */
static void plans_every_weight(const mrt_spec *s, int nreduced)
{
    mrt_plan *p = NULL;
    mrt_error err = {0};
    if (mrt_plan_create(s, NULL, &p, &err))
        ck_abort_msg("plan: %s", err.message);
    mrt_plan_totals t = mrt_plan_get_totals(p);
    ck_assert_int_eq(t.phase_collectives[1], nreduced);
    ck_assert_int_eq(t.phase_collectives[2], 0);
    int updates = 0;
    for (int i = 0; i < mrt_plan_step_count(p); i++) {
        mrt_plan_step_info info;
        ck_assert_int_eq(mrt_plan_get_step(p, i, &info, &err), MRT_OK);
        updates += info.phase == 2;
    }
    ck_assert_int_eq(updates, NW);
    mrt_plan_destroy(p);
}

START_TEST(builder_trains_10000_weights)
{
    char *buf = malloc(NW * 16);
    const char **names = weight_names(buf);
    mrt_ir *ir = chain();
    mrt_error err = {0};
    const char *x[] = {"x"};
    ok(mrt_ir_set_train(ir,
                        &(mrt_ir_train){.loss = "loss",
                                        .nparams = NW,
                                        .params = names,
                                        .ngrads = 1,
                                        .grads = x},
                        &err),
       &err);
    mrt_spec *s = NULL;
    ok(mrt_ir_finish(ir, &s, &err), &err);
    mrt_ir_destroy(ir);
    plans_every_weight(s, NW);
    mrt_spec_destroy(s);
    free(names);
    free(buf);
}
END_TEST

START_TEST(builder_finds_a_name_listed_twice)
{
    char *buf = malloc(NW * 16);
    const char **names = weight_names(buf);
    names[NW - 1] = "w5";
    mrt_ir *ir = chain();
    mrt_error err = {0};
    mrt_status st = mrt_ir_set_train(
        ir, &(mrt_ir_train){.loss = "loss", .nparams = NW, .params = names},
        &err);
    ck_assert_int_eq(st, MRT_E_SPEC);
    ck_assert_msg(strstr(err.message, "'w5' is listed twice"), "%s",
                  err.message);
    mrt_ir_destroy(ir);
    free(names);
    free(buf);
}
END_TEST

/* The chain as YAML, every weight in params and in grads. */
static void write_spec(char path[64])
{
    snprintf(path, 64, "/tmp/mrt_test_many_params_XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "mesh: {data: 2}\ndims: {batch: 4, d: 6}\n"
               "layout: {batch: data}\ntensors:\n"
               "  x: {shape: [batch, d]}\n  t: {shape: [batch, d]}\n");
    for (int i = 0; i < NW; i++)
        fprintf(f, "  w%d: {shape: [d]}\n", i);
    fprintf(f, "ops:\n");
    for (int i = 0; i < NW; i++)
        if (i)
            fprintf(f, "  - {op: add, in: [h%d, w%d], out: h%d}\n", i - 1, i,
                    i);
        else
            fprintf(f, "  - {op: add, in: [x, w0], out: h0}\n");
    fprintf(f, "  - {op: mse, in: [h%d, t], out: loss}\n", NW - 1);
    for (int list = 0; list < 2; list++) {
        fprintf(f,
                list ? "]\n  grads: [" : "train:\n  loss: loss\n  params: [");
        for (int i = 0; i < NW; i++)
            fprintf(f, "%sw%d", i ? ", " : "", i);
    }
    fprintf(f, "]\n");
    ck_assert_int_eq(fclose(f), 0);
}

START_TEST(yaml_trains_10000_weights)
{
    char path[64];
    write_spec(path);
    mrt_spec *s = NULL;
    mrt_error err = {0};
    mrt_status st = mrt_spec_load(path, &s, &err);
    unlink(path);
    if (st)
        ck_abort_msg("%d:%d: %s", err.line, err.column, err.message);
    /* grads: lists the same weights: their gradients are the params' */
    plans_every_weight(s, NW);
    mrt_spec_destroy(s);
}
END_TEST

/* st is MRT_E_SPEC or MRT_E_USAGE and err's message has want. */
static void fails_with(mrt_status st, const mrt_error *err, const char *want)
{
    ck_assert_msg(st == MRT_E_SPEC || st == MRT_E_USAGE, "status %d", st);
    ck_assert_msg(strstr(err->message, want), "'%s' lacks '%s'", err->message,
                  want);
}

START_TEST(builder_names_the_limits)
{
    mrt_ir *ir = NULL;
    mrt_error err = {0};
    const char *nine[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i"};
    const int64_t ones[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    fails_with(mrt_ir_create("limits", 9, nine, ones, &ir, &err), &err,
               "0 to 8 axes");
    ck_assert_ptr_null(ir);
    err = (mrt_error){0}; /* the first error wins: a new one per check */
    ok(mrt_ir_create("limits", 1, nine, ones, &ir, &err), &err);
    char name[80];
    memset(name, 'w', 64);
    name[64] = '\0';
    fails_with(mrt_ir_add_dim(ir, name, 2, &err), &err,
               "is too long (at most 63 characters)");
    mrt_ir_destroy(ir);
    err = (mrt_error){0};
    ok(mrt_ir_create("limits", 1, nine, ones, &ir, &err), &err);
    ok(mrt_ir_add_dim(ir, "d", 2, &err), &err);
    const char *thirteen[13];
    for (int i = 0; i < 13; i++)
        thirteen[i] = "d";
    fails_with(mrt_ir_add_tensor(
                   ir, &(mrt_ir_tensor){.name = "x", 13, thirteen}, &err),
               &err, "(at most 12");
    mrt_ir_destroy(ir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("many_params");
    TCase *tc = tcase_create("many_params");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, builder_trains_10000_weights);
    tcase_add_test(tc, builder_finds_a_name_listed_twice);
    tcase_add_test(tc, yaml_trains_10000_weights);
    tcase_add_test(tc, builder_names_the_limits);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
