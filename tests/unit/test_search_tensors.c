/*
 * test_search_tensors.c — the per-tensor search (mrt_search_tensors_create)
 * through meshrt.h only.
 *
 * Its candidates are made in memory from the program, so a program built
 * with the C builder is searched as the same program loaded from YAML:
 * tests/specs/cli/per_activation.yaml (two trained weights, an op result
 * pinned by its op's layout:, a composite loss) is built call by call
 * under a name that is no file, and both are searched with their
 * parameters and activations; the reports must be equal field by field,
 * and the built one must have planned (no combination "did not load").
 * Activations are the results of the program's ops: "all" takes no
 * tensor an op makes inside (mse's loss:diff, whose layout is its op's)
 * nor the backward program, and naming one is refused.  Then the message
 * for too many combinations counts every tensor it would search (70
 * inputs, not the 64 it can hold).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meshrt.h"

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define SHAPE(...)                                                             \
    .ndims = N(((const char *[]){__VA_ARGS__})), .shape = (const char *[])     \
    {                                                                          \
        __VA_ARGS__                                                            \
    }

/* Fails the test with the builder's message unless st is MRT_OK. */
static void ok(mrt_status st, const mrt_error *err)
{
    if (st)
        ck_abort_msg("builder: %s", err->message);
}

static void add_input(mrt_ir *ir, const char *name, const char *a,
                      const char *b, uint64_t seed)
{
    mrt_error err = {0};
    ok(mrt_ir_add_tensor(ir,
                         &(mrt_ir_tensor){.name = name,
                                          SHAPE(a, b),
                                          .init = seed ? MRT_IR_INIT_RANDOM
                                                       : MRT_IR_INIT_DEFAULT,
                                          .seed = seed},
                         &err),
       &err);
}

/* tests/specs/cli/per_activation.yaml, built in C. */
static mrt_spec *build_per_activation(void)
{
    mrt_error err = {0};
    mrt_ir *ir = NULL;
    ok(mrt_ir_create("built in C", 1, (const char *[]){"rows"},
                     (const int64_t[]){4}, &ir, &err),
       &err);
    const char *dims[] = {"batch", "d_in", "d_ff", "d_out"};
    const int64_t sizes[] = {512, 32, 128, 32};
    for (int i = 0; i < 4; i++)
        ok(mrt_ir_add_dim(ir, dims[i], sizes[i], &err), &err);
    ok(mrt_ir_set_rule(ir, &(mrt_ir_rule){"batch", {"rows"}}, &err), &err);
    add_input(ir, "x", "batch", "d_in", 0);
    add_input(ir, "w1", "d_in", "d_ff", 7);
    add_input(ir, "w2", "d_ff", "d_out", 8);
    add_input(ir, "t", "batch", "d_out", 9);
    ok(mrt_ir_add_op(
           ir,
           &(mrt_ir_op){
               .kind = MRT_IR_EINSUM, {"x", "w1"}, "h", SHAPE("batch", "d_ff")},
           &err),
       &err);
    ok(mrt_ir_add_op(ir,
                     &(mrt_ir_op){.kind = MRT_IR_RELU,
                                  {"h"},
                                  "r",
                                  .nlayout = 1,
                                  .layout = &(mrt_ir_rule){"d_ff", {"rows"}}},
                     &err),
       &err);
    ok(mrt_ir_add_op(ir,
                     &(mrt_ir_op){.kind = MRT_IR_EINSUM,
                                  {"r", "w2"},
                                  "y",
                                  SHAPE("batch", "d_out")},
                     &err),
       &err);
    ok(mrt_ir_add_op(ir, &(mrt_ir_op){.kind = MRT_IR_MSE, {"y", "t"}, "loss"},
                     &err),
       &err);
    ok(mrt_ir_set_train(ir,
                        &(mrt_ir_train){.loss = "loss",
                                        .nparams = 2,
                                        .params = (const char *[]){"w1", "w2"},
                                        .lr = 0.1,
                                        .steps = 1},
                        &err),
       &err);
    mrt_spec *spec = NULL;
    ok(mrt_ir_finish(ir, &spec, &err), &err);
    mrt_ir_destroy(ir);
    return spec;
}

static void same_axes(const mrt_search_axes *a, const mrt_search_axes *b, int n)
{
    for (int d = 0; d < n; d++) {
        ck_assert_int_eq(a[d].naxes, b[d].naxes);
        for (int j = 0; j < a[d].naxes; j++)
            ck_assert_int_eq(a[d].axis[j], b[d].axis[j]);
    }
}

static void same_items(const mrt_search_tensors_item *a,
                       const mrt_search_tensors_item *b, int n, int ndims,
                       int ntensors)
{
    for (int i = 0; i < n; i++) {
        same_axes(a[i].rule, b[i].rule, ndims);
        same_axes(a[i].own, b[i].own, ndims * ntensors);
        ck_assert_mem_eq(a[i].follows, b[i].follows, (size_t)ntensors);
        ck_assert_mem_eq(&a[i].totals, &b[i].totals, sizeof a[i].totals);
        ck_assert_int_eq(a[i].combo, b[i].combo);
        ck_assert_int_eq(a[i].index, b[i].index);
    }
}

static void same_reports(const mrt_search_tensors_report *a,
                         const mrt_search_tensors_report *b)
{
    ck_assert_int_eq(a->ndims, b->ndims);
    ck_assert_int_eq(a->ntensors, b->ntensors);
    ck_assert_mem_eq(a->tensor, b->tensor, sizeof a->tensor);
    ck_assert_int_eq(a->nacts, b->nacts);
    ck_assert_int_eq(a->nleft, b->nleft);
    ck_assert_int_eq(a->combos, b->combos);
    ck_assert_int_eq(a->failed, b->failed);
    ck_assert_int_eq(a->enumerated, b->enumerated);
    ck_assert_int_eq(a->planned, b->planned);
    ck_assert_int_eq(a->invalid, b->invalid);
    ck_assert_int_eq(a->pruned, b->pruned);
    ck_assert_int_eq(a->over_memory, b->over_memory);
    ck_assert_int_eq(a->screened, b->screened);
    ck_assert_int_eq(a->ntop, b->ntop);
    ck_assert_int_eq(a->npareto, b->npareto);
    same_items(a->top, b->top, a->ntop, a->ndims, a->ntensors);
    same_items(a->pareto, b->pareto, a->npareto, a->ndims, a->ntensors);
    ck_assert_str_eq(a->first_error.message, b->first_error.message);
    ck_assert_int_eq(a->first_error.code, b->first_error.code);
}

START_TEST(built_program_searched_as_loaded)
{
    mrt_error err = {0};
    mrt_spec *loaded = NULL, *built = build_per_activation();
    ck_assert_int_eq(
        mrt_spec_load("tests/specs/cli/per_activation.yaml", &loaded, &err),
        MRT_OK);
    mrt_search_options opt = {.top = 4, .activations = "h,r"};
    mrt_search_tensors_report *a = NULL, *b = NULL;
    ck_assert_int_eq(mrt_search_tensors_create(loaded, &opt, &a, &err), MRT_OK);
    ck_assert_int_eq(mrt_search_tensors_create(built, &opt, &b, &err), MRT_OK);
    /* w1, w2, then h and r: 4 choices each on one axis */
    ck_assert_int_eq(b->ntensors, 4);
    ck_assert_int_eq(b->nacts, 2);
    ck_assert_int_eq(b->combos, 256);
    ck_assert_int_eq(b->failed, 0);
    ck_assert_int_gt(b->planned, 256);
    ck_assert_int_eq(b->ntop, 4);
    same_reports(a, b);
    /* r's own layout wins (the spec pins it to d_ff: rows) */
    ck_assert(!b->top[0].follows[3]);
    mrt_search_tensors_destroy(a);
    mrt_search_tensors_destroy(b);
    mrt_spec_destroy(loaded);
    mrt_spec_destroy(built);
}
END_TEST

START_TEST(activations_are_op_results)
{
    mrt_error err = {0};
    mrt_spec *s = NULL;
    ck_assert_int_eq(mrt_spec_load("tests/specs/cli/per_tensor.yaml", &s, &err),
                     MRT_OK);
    mrt_search_options opt = {.top = 2, .activations = "all"};
    mrt_search_tensors_report *r = NULL;
    ck_assert_int_eq(mrt_search_tensors_create(s, &opt, &r, &err), MRT_OK);
    /* w, then y (loss is a scalar: nothing to lay out) */
    ck_assert_int_eq(r->ntensors, 2);
    ck_assert_int_eq(r->nacts, 1);
    ck_assert_int_eq(r->nleft, 0);
    mrt_spec_tensor_info t = {0};
    ck_assert_int_eq(mrt_spec_get_tensor(s, r->tensor[1], &t, NULL), MRT_OK);
    ck_assert_str_eq(t.name, "y");
    mrt_search_tensors_destroy(r);
    opt.activations = "loss:diff";
    ck_assert_int_eq(mrt_search_tensors_create(s, &opt, &r, &err), MRT_E_USAGE);
    ck_assert_msg(strstr(err.message, "no op makes 'loss:diff'"), "%s",
                  err.message);
    mrt_spec_destroy(s);
}
END_TEST

START_TEST(too_many_combinations_counts_every_tensor)
{
    /* 70 inputs added together: each has a layout of its own to try */
    char text[8192];
    int n = snprintf(text, sizeof text,
                     "mesh: {rows: 2}\n"
                     "dims: {a: 4}\ntensors:\n");
    for (int i = 0; i < 70; i++)
        n += snprintf(text + n, sizeof text - (size_t)n,
                      "  x%d: {shape: [a]}\n", i);
    n += snprintf(text + n, sizeof text - (size_t)n,
                  "ops:\n  - {op: add, in: [x0, x1], out: y0}\n");
    for (int i = 2; i < 70; i++)
        n += snprintf(text + n, sizeof text - (size_t)n,
                      "  - {op: add, in: [y%d, x%d], out: y%d}\n", i - 2, i,
                      i - 1);
    ck_assert_uint_lt((size_t)n, sizeof text);
    mrt_spec *s = NULL;
    mrt_error err = {0};
    ck_assert_int_eq(
        mrt_spec_load_string("seventy.yaml", text, (size_t)n, &s, &err),
        MRT_OK);
    mrt_search_tensors_report *r = NULL;
    ck_assert_int_eq(mrt_search_tensors_create(s, NULL, &r, &err), MRT_E_USAGE);
    ck_assert_ptr_null(r);
    ck_assert_msg(strstr(err.message, "for 70 tensors"), "%s", err.message);
    mrt_spec_destroy(s);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("search_tensors");
    TCase *tc = tcase_create("search_tensors");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, built_program_searched_as_loaded);
    tcase_add_test(tc, activations_are_op_results);
    tcase_add_test(tc, too_many_combinations_counts_every_tensor);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
