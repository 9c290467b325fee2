/*
 * test_builder.c — the builder of meshrt.h ("building a program in
 * code"), through the public header only.
 *
 * Three examples (examples/mlp.yaml, attention.yaml,
 * transformer_layer.yaml: einsums, per-op layouts, layer_norm, rename,
 * scale, softmax, gelu, add, the cross-entropy with integer labels,
 * reverse mode and the SGD update) are built call by call and planned:
 * the plan must print exactly as the plan of the YAML file does, as
 * text and as JSON.  examples/zero.yaml's `layouts:` are built as
 * alternatives: compare's figures and each one's plan must be the file's.
 * Then the builder's errors: each names the call and the argument,
 * carries no file position, and sticks.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "meshrt.h"
#include "spec.h"

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define SHAPE(...)                                                             \
    .ndims = N(((const char *[]){__VA_ARGS__})), .shape = (const char *[])     \
    {                                                                          \
        __VA_ARGS__                                                            \
    }

/* What mrt_plan_print (json: _json) writes for spec. */
static char *plan_text(const mrt_spec *spec, int json)
{
    mrt_plan *plan = NULL;
    mrt_error err = {0};
    char *text = NULL;
    size_t len = 0;
    if (mrt_plan_create(spec, NULL, &plan, &err))
        ck_abort_msg("plan: %s", err.message);
    FILE *f = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(f);
    if (json)
        mrt_plan_print_json(plan, f);
    else
        mrt_plan_print(plan, f);
    fclose(f);
    mrt_plan_destroy(plan);
    return text;
}

/* The plans of specs x and y are the same text, and JSON. */
static void same_plan_texts(const mrt_spec *x, const mrt_spec *y)
{
    for (int json = 0; json < 2; json++) {
        char *a = plan_text(x, json), *b = plan_text(y, json);
        ck_assert_uint_gt(strlen(b), 100);
        ck_assert_str_eq(a, b);
        free(a);
        free(b);
    }
}

/* The plans of `built` and of the YAML file at path are the same text. */
static void same_plans(mrt_spec *built, const char *path)
{
    mrt_spec *loaded = NULL;
    mrt_error err = {0};
    if (mrt_spec_load(path, &loaded, &err))
        ck_abort_msg("%s:%d:%d: %s", path, err.line, err.column, err.message);
    same_plan_texts(built, loaded);
    mrt_spec_destroy(loaded);
    mrt_spec_destroy(built);
}

/* Fails the test with the builder's message unless st is MRT_OK. */
static void ok(mrt_status st, const mrt_error *err)
{
    if (st)
        ck_abort_msg("builder: %s", err->message);
}

static mrt_ir *mesh2x2(const char *name, const char *a, const char *b)
{
    mrt_ir *ir = NULL;
    mrt_error err = {0};
    const char *axes[] = {a, b};
    const int64_t sizes[] = {2, 2};
    ok(mrt_ir_create(name, 2, axes, sizes, &ir, &err), &err);
    return ir;
}

/* y = act(x . w1) . w2 (act's result named a; h: [batch, hidden], y:
 * [batch, out]), the mean squared error against t, and training of w1
 * and w2 with dL/dx: the ops of examples/mlp.yaml and zero.yaml. */
static void feed_forward(mrt_ir *ir, const char *hidden, mrt_ir_kind act,
                         const char *a, const char *out, double lr,
                         int64_t steps)
{
    mrt_error err = {0};
    ok(mrt_ir_add_op(
           ir,
           &(mrt_ir_op){
               .kind = MRT_IR_EINSUM, {"x", "w1"}, "h", SHAPE("batch", hidden)},
           &err),
       &err);
    ok(mrt_ir_add_op(ir, &(mrt_ir_op){.kind = act, {"h"}, a}, &err), &err);
    ok(mrt_ir_add_op(
           ir,
           &(mrt_ir_op){
               .kind = MRT_IR_EINSUM, {a, "w2"}, "y", SHAPE("batch", out)},
           &err),
       &err);
    ok(mrt_ir_add_op(ir, &(mrt_ir_op){.kind = MRT_IR_MSE, {"y", "t"}, "loss"},
                     &err),
       &err);
    ok(mrt_ir_set_train(ir,
                        &(mrt_ir_train){.loss = "loss",
                                        .nparams = 2,
                                        .params = (const char *[]){"w1", "w2"},
                                        .ngrads = 1,
                                        .grads = (const char *[]){"x"},
                                        .lr = lr,
                                        .steps = steps},
                        &err),
       &err);
}

START_TEST(mlp_as_yaml)
{
    mrt_error err = {0};
    mrt_ir *ir = mesh2x2("examples/mlp.yaml", "rows", "cols");
    ok(mrt_ir_set_dtype(ir, MRT_F32, &err), &err);
    ok(mrt_ir_add_dim(ir, "batch", 64, &err), &err);
    ok(mrt_ir_add_dim(ir, "d_in", 128, &err), &err);
    ok(mrt_ir_add_dim(ir, "hidden", 256, &err), &err);
    ok(mrt_ir_add_dim(ir, "d_out", 64, &err), &err);
    ok(mrt_ir_set_rule(ir, &(mrt_ir_rule){"batch", {"rows"}}, &err), &err);
    ok(mrt_ir_set_rule(ir, &(mrt_ir_rule){"hidden", {"cols"}}, &err), &err);
    ok(mrt_ir_add_tensor(
           ir, &(mrt_ir_tensor){.name = "x", SHAPE("batch", "d_in")}, &err),
       &err);
    ok(mrt_ir_add_tensor(ir,
                         &(mrt_ir_tensor){.name = "w1",
                                          SHAPE("d_in", "hidden"),
                                          .init = MRT_IR_INIT_RANDOM,
                                          .seed = 7},
                         &err),
       &err);
    ok(mrt_ir_add_tensor(ir,
                         &(mrt_ir_tensor){.name = "w2",
                                          SHAPE("hidden", "d_out"),
                                          .init = MRT_IR_INIT_RANDOM,
                                          .seed = 8},
                         &err),
       &err);
    ok(mrt_ir_add_tensor(ir,
                         &(mrt_ir_tensor){.name = "t",
                                          SHAPE("batch", "d_out"),
                                          .init = MRT_IR_INIT_RANDOM,
                                          .seed = 9},
                         &err),
       &err);
    feed_forward(ir, "hidden", MRT_IR_RELU, "r", "d_out", 0.05, 4);
    mrt_spec *spec = NULL;
    ok(mrt_ir_finish(ir, &spec, &err), &err);
    mrt_ir_destroy(ir);
    same_plans(spec, "examples/mlp.yaml");
}
END_TEST

START_TEST(attention_as_yaml)
{
    mrt_error err = {0};
    mrt_ir *ir = mesh2x2("examples/attention.yaml", "data", "model");
    const char *dims[] = {"b", "heads", "q_len", "k_len", "d_head"};
    const int64_t sizes[] = {4, 4, 16, 16, 8};
    ok(mrt_ir_set_dtype(ir, MRT_F64, &err), &err);
    for (int i = 0; i < N(dims); i++)
        ok(mrt_ir_add_dim(ir, dims[i], sizes[i], &err), &err);
    ok(mrt_ir_set_rule(ir, &(mrt_ir_rule){"b", {"data"}}, &err), &err);
    ok(mrt_ir_set_rule(ir, &(mrt_ir_rule){"heads", {"model"}}, &err), &err);
    ok(mrt_ir_add_tensor(
           ir,
           &(mrt_ir_tensor){.name = "q",
                            SHAPE("b", "heads", "q_len", "d_head")},
           &err),
       &err);
    ok(mrt_ir_add_tensor(
           ir,
           &(mrt_ir_tensor){.name = "k",
                            SHAPE("b", "k_len", "heads", "d_head")},
           &err),
       &err);
    ok(mrt_ir_add_tensor(
           ir,
           &(mrt_ir_tensor){.name = "v",
                            SHAPE("heads", "b", "k_len", "d_head"),
                            .init = MRT_IR_INIT_RANDOM,
                            .seed = 3},
           &err),
       &err);
    ok(mrt_ir_add_op(ir,
                     &(mrt_ir_op){.kind = MRT_IR_EINSUM,
                                  {"q", "k"},
                                  "s",
                                  SHAPE("b", "heads", "q_len", "k_len")},
                     &err),
       &err);
    ok(mrt_ir_add_op(ir,
                     &(mrt_ir_op){.kind = MRT_IR_EINSUM,
                                  {"s", "v"},
                                  "o",
                                  SHAPE("q_len", "b", "heads", "d_head"),
                                  .nlayout = 1,
                                  .layout = &(mrt_ir_rule){"b", {"data"}}},
                     &err),
       &err);
    ok(mrt_ir_set_outputs(ir, 2, (const char *[]){"s", "o"}, &err), &err);
    mrt_spec *spec = NULL;
    ok(mrt_ir_finish(ir, &spec, &err), &err);
    mrt_ir_destroy(ir);
    same_plans(spec, "examples/attention.yaml");
}
END_TEST

/* An op of transformer_layer.yaml. */
static void op(mrt_ir *ir, mrt_ir_op o)
{
    mrt_error err = {0};
    ok(mrt_ir_add_op(ir, &o, &err), &err);
}

START_TEST(transformer_as_yaml)
{
    mrt_error err = {0};
    mrt_ir *ir = mesh2x2("examples/transformer_layer.yaml", "rows", "cols");
    const char *dims[] = {"batch", "length", "klen", "d_model",
                          "heads", "d_k",    "d_ff", "vocab"};
    const int64_t sizes[] = {8, 16, 16, 32, 4, 8, 128, 64};
    ok(mrt_ir_set_dtype(ir, MRT_F64, &err), &err);
    for (int i = 0; i < N(dims); i++)
        ok(mrt_ir_add_dim(ir, dims[i], sizes[i], &err), &err);
    const char *split[][2] = {{"batch", "rows"},
                              {"heads", "cols"},
                              {"d_ff", "cols"},
                              {"vocab", "cols"}};
    for (int i = 0; i < N(split); i++)
        ok(mrt_ir_set_rule(ir, &(mrt_ir_rule){split[i][0], {split[i][1]}},
                           &err),
           &err);
    ok(mrt_ir_add_tensor(
           ir,
           &(mrt_ir_tensor){.name = "x", SHAPE("batch", "length", "d_model")},
           &err),
       &err);
    ok(mrt_ir_add_tensor(ir,
                         &(mrt_ir_tensor){.name = "labels",
                                          SHAPE("batch", "length"),
                                          .init = MRT_IR_INIT_LABELS,
                                          .value = 64},
                         &err),
       &err);
    const char *w[] = {"wq", "wk", "wv"};
    for (int i = 0; i < 3; i++)
        ok(mrt_ir_add_tensor(ir,
                             &(mrt_ir_tensor){.name = w[i],
                                              SHAPE("d_model", "heads", "d_k"),
                                              .init = MRT_IR_INIT_RANDOM,
                                              .seed = (uint64_t)i + 1},
                             &err),
           &err);
    ok(mrt_ir_add_tensor(ir,
                         &(mrt_ir_tensor){.name = "wo",
                                          SHAPE("heads", "d_k", "d_model"),
                                          .init = MRT_IR_INIT_RANDOM,
                                          .seed = 4},
                         &err),
       &err);
    ok(mrt_ir_add_tensor(ir,
                         &(mrt_ir_tensor){.name = "w1",
                                          SHAPE("d_model", "d_ff"),
                                          .init = MRT_IR_INIT_RANDOM,
                                          .seed = 5},
                         &err),
       &err);
    ok(mrt_ir_add_tensor(ir,
                         &(mrt_ir_tensor){.name = "w2",
                                          SHAPE("d_ff", "d_model"),
                                          .init = MRT_IR_INIT_RANDOM,
                                          .seed = 6},
                         &err),
       &err);
    ok(mrt_ir_add_tensor(ir,
                         &(mrt_ir_tensor){.name = "wvocab",
                                          SHAPE("d_model", "vocab"),
                                          .init = MRT_IR_INIT_RANDOM,
                                          .seed = 7},
                         &err),
       &err);
    op(ir,
       (mrt_ir_op){.kind = MRT_IR_LAYER_NORM, {"x"}, "xn", .dim = "d_model"});
    op(ir, (mrt_ir_op){.kind = MRT_IR_EINSUM,
                       {"xn", "wq"},
                       "q",
                       SHAPE("batch", "length", "heads", "d_k")});
    op(ir, (mrt_ir_op){.kind = MRT_IR_EINSUM,
                       {"xn", "wk"},
                       "k0",
                       SHAPE("batch", "length", "heads", "d_k")});
    op(ir, (mrt_ir_op){.kind = MRT_IR_EINSUM,
                       {"xn", "wv"},
                       "v0",
                       SHAPE("batch", "length", "heads", "d_k")});
    op(ir,
       (mrt_ir_op){
           .kind = MRT_IR_RENAME, {"k0"}, "k", .dim = "length", .to = "klen"});
    op(ir,
       (mrt_ir_op){
           .kind = MRT_IR_RENAME, {"v0"}, "v", .dim = "length", .to = "klen"});
    op(ir, (mrt_ir_op){.kind = MRT_IR_EINSUM,
                       {"q", "k"},
                       "s0",
                       SHAPE("batch", "heads", "length", "klen")});
    op(ir, (mrt_ir_op){.kind = MRT_IR_SCALE, {"s0"}, "s", .c = 0.35355339});
    op(ir, (mrt_ir_op){.kind = MRT_IR_SOFTMAX, {"s"}, "p", .dim = "klen"});
    op(ir, (mrt_ir_op){.kind = MRT_IR_EINSUM,
                       {"p", "v"},
                       "o",
                       SHAPE("batch", "length", "heads", "d_k")});
    op(ir, (mrt_ir_op){.kind = MRT_IR_EINSUM,
                       {"o", "wo"},
                       "a",
                       SHAPE("batch", "length", "d_model")});
    op(ir, (mrt_ir_op){.kind = MRT_IR_ADD, {"x", "a"}, "r1"});
    op(ir,
       (mrt_ir_op){.kind = MRT_IR_LAYER_NORM, {"r1"}, "rn", .dim = "d_model"});
    op(ir, (mrt_ir_op){.kind = MRT_IR_EINSUM,
                       {"rn", "w1"},
                       "f",
                       SHAPE("batch", "length", "d_ff")});
    op(ir, (mrt_ir_op){.kind = MRT_IR_GELU, {"f"}, "g"});
    op(ir, (mrt_ir_op){.kind = MRT_IR_EINSUM,
                       {"g", "w2"},
                       "f2",
                       SHAPE("batch", "length", "d_model")});
    op(ir, (mrt_ir_op){.kind = MRT_IR_ADD, {"r1", "f2"}, "r2"});
    op(ir, (mrt_ir_op){.kind = MRT_IR_EINSUM,
                       {"r2", "wvocab"},
                       "z",
                       SHAPE("batch", "length", "vocab")});
    op(ir, (mrt_ir_op){.kind = MRT_IR_SCALE, {"z"}, "logits", .c = 0.1});
    op(ir, (mrt_ir_op){.kind = MRT_IR_SOFTMAX_CE,
                       {"logits", "labels"},
                       "loss",
                       .dim = "vocab"});
    const char *params[] = {"wq", "wk", "wv", "wo", "w1", "w2", "wvocab"};
    ok(mrt_ir_set_train(ir,
                        &(mrt_ir_train){.loss = "loss",
                                        .nparams = N(params),
                                        .params = params,
                                        .lr = 0.1,
                                        .steps = 3},
                        &err),
       &err);
    mrt_spec *spec = NULL;
    ok(mrt_ir_finish(ir, &spec, &err), &err);
    mrt_ir_destroy(ir);
    same_plans(spec, "examples/transformer_layer.yaml");
}
END_TEST

/* The ops the examples leave out, each way its result can be named: a
 * softmax and a layer norm with their own layouts, reductions by `dims`
 * and by `shape`, a rename with a shape, scale, sub, mul, div, exp, log,
 * neg, rsqrt, square, a relayout, softmax_cross_entropy with one-hot
 * targets, and inits of every kind but files. */
static const char other_ops_yaml[] =
    "mesh: {data: 2, model: 2}\n"
    "dims: {b: 8, d: 4, e: 4, c: 6}\n"
    "layout: {b: data}\n"
    "tensors:\n"
    "  x: {shape: [b, d]}\n"
    "  y: {shape: [b, d], init: {fill: 0.5}}\n"
    "  z: {shape: [b, c], init: {fill: 1}, layout: {c: model}}\n"
    "  k: {shape: [b], init: {labels: 4}}\n"
    "  w: {shape: [d], init: {random: 3}}\n"
    "ops:\n"
    "  - {op: softmax, in: [x], dim: d, out: p, layout: {d: model}}\n"
    "  - {op: layer_norm, in: [p], dim: d, out: n, eps: 0.001,"
    " layout: {b: [data, model]}}\n"
    "  - {op: reduce_mean, in: [n], dims: [b], out: m}\n"
    "  - {op: reduce_max, in: [n], shape: [d], out: mx}\n"
    "  - {op: reduce_sum, in: [n], out: total}\n"
    "  - {op: rename, in: [n], from: d, to: e, out: r, shape: [b, e]}\n"
    "  - {op: scale, in: [x], by: 2.5, out: s}\n"
    "  - {op: sub, in: [s, y], out: s1}\n"
    "  - {op: mul, in: [s1, w], out: s2}\n"
    "  - {op: div, in: [s2, y], out: s3, shape: [d, b]}\n"
    "  - {op: exp, in: [s3], out: s4}\n"
    "  - {op: log, in: [s4], out: s5}\n"
    "  - {op: neg, in: [s5], out: s6}\n"
    "  - {op: square, in: [s6], out: s7}\n"
    "  - {op: rsqrt, in: [s7], out: s8}\n"
    "  - {op: relayout, in: [s8], out: s9, layout: {d: model}}\n"
    "  - {op: softmax_cross_entropy, in: [z, z], dim: c, out: ce}\n"
    "outputs: [m, mx, total, r, s9, ce]\n";

START_TEST(other_ops_as_yaml)
{
    mrt_error err = {0};
    mrt_ir *ir = mesh2x2(NULL, "data", "model");
    const char *dims[] = {"b", "d", "e", "c"};
    const int64_t sizes[] = {8, 4, 4, 6};
    for (int i = 0; i < N(dims); i++)
        ok(mrt_ir_add_dim(ir, dims[i], sizes[i], &err), &err);
    ok(mrt_ir_set_rule(ir, &(mrt_ir_rule){"b", {"data"}}, &err), &err);
    ok(mrt_ir_add_tensor(ir, &(mrt_ir_tensor){.name = "x", SHAPE("b", "d")},
                         &err),
       &err);
    ok(mrt_ir_add_tensor(ir,
                         &(mrt_ir_tensor){.name = "y",
                                          SHAPE("b", "d"),
                                          .init = MRT_IR_INIT_FILL,
                                          .value = 0.5},
                         &err),
       &err);
    ok(mrt_ir_add_tensor(
           ir,
           &(mrt_ir_tensor){.name = "z",
                            SHAPE("b", "c"),
                            .init = MRT_IR_INIT_ONES,
                            .nlayout = 1,
                            .layout = &(mrt_ir_rule){"c", {"model"}}},
           &err),
       &err);
    ok(mrt_ir_add_tensor(
           ir,
           &(mrt_ir_tensor){
               .name = "k", SHAPE("b"), .init = MRT_IR_INIT_LABELS, .value = 4},
           &err),
       &err);
    ok(mrt_ir_add_tensor(
           ir,
           &(mrt_ir_tensor){
               .name = "w", SHAPE("d"), .init = MRT_IR_INIT_RANDOM, .seed = 3},
           &err),
       &err);
    op(ir, (mrt_ir_op){.kind = MRT_IR_SOFTMAX,
                       {"x"},
                       "p",
                       .dim = "d",
                       .nlayout = 1,
                       .layout = &(mrt_ir_rule){"d", {"model"}}});
    op(ir, (mrt_ir_op){.kind = MRT_IR_LAYER_NORM,
                       {"p"},
                       "n",
                       .dim = "d",
                       .c = 0.001,
                       .nlayout = 1,
                       .layout = &(mrt_ir_rule){"b", {"data", "model"}}});
    op(ir, (mrt_ir_op){.kind = MRT_IR_REDUCE_MEAN,
                       {"n"},
                       "m",
                       .nreduce = 1,
                       .reduce = (const char *[]){"b"}});
    op(ir, (mrt_ir_op){.kind = MRT_IR_REDUCE_MAX, {"n"}, "mx", SHAPE("d")});
    op(ir, (mrt_ir_op){.kind = MRT_IR_REDUCE_SUM, {"n"}, "total"});
    op(ir, (mrt_ir_op){.kind = MRT_IR_RENAME,
                       {"n"},
                       "r",
                       SHAPE("b", "e"),
                       .dim = "d",
                       .to = "e"});
    op(ir, (mrt_ir_op){.kind = MRT_IR_SCALE, {"x"}, "s", .c = 2.5});
    op(ir, (mrt_ir_op){.kind = MRT_IR_SUB, {"s", "y"}, "s1"});
    op(ir, (mrt_ir_op){.kind = MRT_IR_MUL, {"s1", "w"}, "s2"});
    op(ir, (mrt_ir_op){.kind = MRT_IR_DIV, {"s2", "y"}, "s3", SHAPE("d", "b")});
    op(ir, (mrt_ir_op){.kind = MRT_IR_EXP, {"s3"}, "s4"});
    op(ir, (mrt_ir_op){.kind = MRT_IR_LOG, {"s4"}, "s5"});
    op(ir, (mrt_ir_op){.kind = MRT_IR_NEG, {"s5"}, "s6"});
    op(ir, (mrt_ir_op){.kind = MRT_IR_SQUARE, {"s6"}, "s7"});
    op(ir, (mrt_ir_op){.kind = MRT_IR_RSQRT, {"s7"}, "s8"});
    op(ir, (mrt_ir_op){.kind = MRT_IR_RELAYOUT,
                       {"s8"},
                       "s9",
                       .nlayout = 1,
                       .layout = &(mrt_ir_rule){"d", {"model"}}});
    op(ir,
       (mrt_ir_op){.kind = MRT_IR_SOFTMAX_CE, {"z", "z"}, "ce", .dim = "c"});
    const char *outs[] = {"m", "mx", "total", "r", "s9", "ce"};
    ok(mrt_ir_set_outputs(ir, N(outs), outs, &err), &err);
    mrt_spec *spec = NULL;
    ok(mrt_ir_finish(ir, &spec, &err), &err);
    mrt_ir_destroy(ir);
    /* the file is called "program", the name mrt_ir_create gives */
    char dir[] = "/tmp/mrt_test_builder_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char file[64];
    snprintf(file, sizeof file, "%s/program", dir);
    FILE *f = fopen(file, "w");
    ck_assert_ptr_nonnull(f);
    fputs(other_ops_yaml, f);
    fclose(f);
    char *cwd = getcwd(NULL, 0);
    ck_assert_ptr_nonnull(cwd);
    ck_assert_int_eq(chdir(dir), 0);
    same_plans(spec, "program");
    ck_assert_int_eq(chdir(cwd), 0);
    free(cwd);
    unlink(file);
    rmdir(dir);
}
END_TEST

/* A builder with dims batch (8), d (4) and e (4) on a 2x2 mesh, inputs
 * x [batch, d] and w [d, e]. */
static mrt_ir *small(void)
{
    mrt_error err = {0};
    mrt_ir *ir = mesh2x2("small", "data", "model");
    ok(mrt_ir_add_dim(ir, "batch", 8, &err), &err);
    ok(mrt_ir_add_dim(ir, "d", 4, &err), &err);
    ok(mrt_ir_add_dim(ir, "e", 4, &err), &err);
    ok(mrt_ir_add_tensor(ir, &(mrt_ir_tensor){.name = "x", SHAPE("batch", "d")},
                         &err),
       &err);
    ok(mrt_ir_add_tensor(ir, &(mrt_ir_tensor){.name = "w", SHAPE("d", "e")},
                         &err),
       &err);
    return ir;
}

/* The error err holds: status code and exactly msg, no position. */
static void is_error(mrt_status st, const mrt_error *err, mrt_status code,
                     const char *msg)
{
    ck_assert_int_eq(st, code);
    ck_assert_int_eq(err->code, code);
    ck_assert_str_eq(err->message, msg);
    ck_assert_str_eq(err->file, "");
    ck_assert_int_eq(err->line, 0);
    ck_assert_int_eq(err->column, 0);
}

START_TEST(errors_name_call_and_argument)
{
    mrt_error err = {0};
    mrt_ir *ir = small();
    mrt_status st = mrt_ir_add_tensor(
        ir, &(mrt_ir_tensor){.name = "y", SHAPE("batch", "foo")}, &err);
    is_error(st, &err, MRT_E_SPEC,
             "mrt_ir_add_tensor: argument 'shape': "
             "dim 'foo' not declared (the dims are: batch, d, e)");
    mrt_ir_destroy(ir);

    struct {
        mrt_ir_op op;
        const char *msg;
    } bad[] = {
        {{.kind = MRT_IR_EINSUM, {"x", "nope"}, "y", SHAPE("batch")},
         "mrt_ir_add_op: argument 'in': tensor 'nope' not declared"},
        {{.kind = MRT_IR_RELU, {"x", "w"}, "y"},
         "mrt_ir_add_op: argument 'in': relu takes 1 input, got 2"},
        {{.kind = MRT_IR_EINSUM, {"x", "w"}, "y"},
         "mrt_ir_add_op: argument 'shape': einsum needs a shape"},
        {{.kind = MRT_IR_SOFTMAX, {"x"}, "y", .dim = "model"},
         "mrt_ir_add_op: argument 'dim': dim 'model' not declared (the "
         "dims are: batch, d, e)"},
        {{.kind = MRT_IR_RELU, {"x"}, "x"},
         "mrt_ir_add_op: argument 'out': tensor 'x' already exists"},
        {{.kind = MRT_IR_RELU,
          {"x"},
          "y",
          .nlayout = 1,
          .layout = &(mrt_ir_rule){"batch", {"rows"}}},
         "mrt_ir_add_op: argument 'layout': unknown mesh axis 'rows' in "
         "the rule of dim 'batch'"},
        {{.kind = MRT_IR_RELU,
          {"x"},
          "y",
          .nlayout = 2,
          .layout = (mrt_ir_rule[]){{"batch", {"data"}}, {"d", {"data"}}}},
         "mrt_ir_add_op: argument 'layout': tensor 'y' would split mesh "
         "axis 'data' twice: batch: data and d: data"},
    };
    for (int i = 0; i < N(bad); i++) {
        mrt_error e = {0};
        ir = small();
        is_error(mrt_ir_add_op(ir, &bad[i].op, &e), &e, MRT_E_SPEC, bad[i].msg);
        /* the first error sticks */
        mrt_error again = {0};
        mrt_spec *spec = (mrt_spec *)1;
        ck_assert_int_eq(mrt_ir_finish(ir, &spec, &again), MRT_E_SPEC);
        ck_assert_str_eq(again.message, bad[i].msg);
        ck_assert_ptr_null(spec);
        mrt_ir_destroy(ir);
    }
}
END_TEST

/* tests/specs/good/blocks_small.yaml built with the block calls: the
 * same plans, and the block fields of the program. */
START_TEST(blocks_as_yaml)
{
    const char *path = "tests/specs/good/blocks_small.yaml";
    mrt_error err = {0};
    mrt_ir *ir = mesh2x2(path, "rows", "cols");
    ok(mrt_ir_add_dim(ir, "batch", 8, &err), &err);
    ok(mrt_ir_add_dim(ir, "d", 4, &err), &err);
    ok(mrt_ir_add_dim(ir, "layers", 3, &err), &err);
    ok(mrt_ir_set_rule(ir, &(mrt_ir_rule){"batch", {"rows"}}, &err), &err);
    ok(mrt_ir_add_tensor(ir, &(mrt_ir_tensor){.name = "x", SHAPE("batch", "d")},
                         &err),
       &err);
    ok(mrt_ir_add_op(ir, &(mrt_ir_op){.kind = MRT_IR_RELU, {"x"}, "h_in"},
                     &err),
       &err);
    ok(mrt_ir_block_begin(ir, "h", "layers", &err), &err);
    ok(mrt_ir_block_in(ir, "z", "h_in", &err), &err);
    ok(mrt_ir_block_carry(ir, "z", "r", &err), &err);
    ok(mrt_ir_block_out(ir, "h_out", "r", &err), &err);
    int n = 0;
    for (int i; (i = mrt_ir_block_next(ir, &err)) >= 0; n++) {
        ck_assert_int_eq(i, n);
        ok(mrt_ir_add_tensor(ir,
                             &(mrt_ir_tensor){.name = "w",
                                              SHAPE("d"),
                                              .init = MRT_IR_INIT_RANDOM,
                                              .seed = 3},
                             &err),
           &err);
        ok(mrt_ir_add_op(ir, &(mrt_ir_op){.kind = MRT_IR_MUL, {"z", "w"}, "y"},
                         &err),
           &err);
        ok(mrt_ir_add_op(ir, &(mrt_ir_op){.kind = MRT_IR_ADD, {"z", "y"}, "r"},
                         &err),
           &err);
    }
    ok(err.code, &err);
    ck_assert_int_eq(n, 3);
    ok(mrt_ir_block_end(ir, &err), &err);
    ok(mrt_ir_add_op(ir,
                     &(mrt_ir_op){.kind = MRT_IR_REDUCE_SUM, {"h_out"}, "loss"},
                     &err),
       &err);
    ok(mrt_ir_set_train(ir,
                        &(mrt_ir_train){.loss = "loss",
                                        .nparams = 1,
                                        .params = (const char *[]){"h.w"},
                                        .lr = 0.1},
                        &err),
       &err);
    mrt_spec *spec = NULL;
    ok(mrt_ir_finish(ir, &spec, &err), &err);
    mrt_ir_destroy(ir);
    ck_assert_int_eq(spec->nblocks, 1);
    ck_assert_int_eq(spec->block[0].count, 3);
    ck_assert_int_eq(spec->train.nparams, 3);
    int w1 = mrt_spec_find_tensor(spec, "h1.w");
    ck_assert_int_ge(w1, 0);
    ck_assert_int_eq(spec->tensor[w1].block, 0);
    ck_assert_int_eq(spec->tensor[w1].layer, 1);
    ck_assert_int_eq(mrt_spec_find_tensor(spec, "h_out"),
                     mrt_spec_find_tensor(spec, "h2.r"));
    ck_assert(spec->tensor[w1].seed !=
              spec->tensor[mrt_spec_find_tensor(spec, "h0.w")].seed);
    int stamped = 0; /* backward and update ops of instance 1 */
    for (int o = 0; o < spec->nops; o++)
        stamped += spec->op[o].phase != MRT_PHASE_FORWARD &&
                   spec->op[o].layer == 1;
    ck_assert_int_gt(stamped, 2);
    same_plans(spec, path);

    ir = mesh2x2("b", "rows", "cols");
    ok(mrt_ir_add_dim(ir, "layers", 2, &err), &err);
    ok(mrt_ir_block_begin(ir, "h", "layers", &err), &err);
    is_error(mrt_ir_block_carry(ir, "z", "r", &err), &err, MRT_E_SPEC,
             "mrt_ir_block_carry: argument 'inner': carried name 'z' of "
             "block 'h' has no 'in' (its value in instance 0)");
    mrt_ir_destroy(ir);

    mrt_error e2 = {0};
    ir = mesh2x2("b", "rows", "cols");
    ok(mrt_ir_add_dim(ir, "layers", 2, &e2), &e2);
    ok(mrt_ir_block_begin(ir, "h", "layers", &e2), &e2);
    is_error(mrt_ir_add_tensor(
                 ir, &(mrt_ir_tensor){.name = "w", SHAPE("layers")}, &e2),
             &e2, MRT_E_USAGE,
             "mrt_ir_add_tensor: block 'h' is open but no instance is "
             "(tensors and ops of a block come after mrt_ir_block_next, "
             "the block's end at mrt_ir_block_end)");
    mrt_ir_destroy(ir);
}
END_TEST

/* A block of 2 instances (y = z * w, r = z + y) with recompute as given,
 * trained when `train` (else finished as it is: *out NULL, err set). */
static mrt_status recomputed_block(int recompute, int train, mrt_spec **out,
                                   mrt_error *err)
{
    mrt_ir *ir = mesh2x2("rc", "rows", "cols");
    ok(mrt_ir_add_dim(ir, "batch", 8, err), err);
    ok(mrt_ir_add_dim(ir, "d", 4, err), err);
    ok(mrt_ir_add_dim(ir, "layers", 2, err), err);
    ok(mrt_ir_add_tensor(ir, &(mrt_ir_tensor){.name = "x", SHAPE("batch", "d")},
                         err),
       err);
    ok(mrt_ir_add_op(ir, &(mrt_ir_op){.kind = MRT_IR_RELU, {"x"}, "h_in"}, err),
       err);
    ok(mrt_ir_block_begin(ir, "h", "layers", err), err);
    ok(mrt_ir_block_in(ir, "z", "h_in", err), err);
    ok(mrt_ir_block_carry(ir, "z", "r", err), err);
    ok(mrt_ir_block_out(ir, "h_out", "r", err), err);
    ok(mrt_ir_block_recompute(ir, recompute, err), err);
    for (int i; (i = mrt_ir_block_next(ir, err)) >= 0;) {
        ok(mrt_ir_add_tensor(ir, &(mrt_ir_tensor){.name = "w", SHAPE("d")},
                             err),
           err);
        ok(mrt_ir_add_op(ir, &(mrt_ir_op){.kind = MRT_IR_MUL, {"z", "w"}, "y"},
                         err),
           err);
        ok(mrt_ir_add_op(ir, &(mrt_ir_op){.kind = MRT_IR_ADD, {"z", "y"}, "r"},
                         err),
           err);
    }
    ok(mrt_ir_block_end(ir, err), err);
    ok(mrt_ir_add_op(
           ir, &(mrt_ir_op){.kind = MRT_IR_REDUCE_SUM, {"h_out"}, "loss"}, err),
       err);
    if (train)
        ok(mrt_ir_set_train(ir,
                            &(mrt_ir_train){.loss = "loss",
                                            .nparams = 1,
                                            .params = (const char *[]){"h.w"},
                                            .lr = 0.1},
                            err),
           err);
    mrt_status st = mrt_ir_finish(ir, out, err);
    mrt_ir_destroy(ir);
    return st;
}

/* mrt_ir_block_recompute: each instance's 2 forward ops re-run right
 * before its backward ops, which read the copies; the forward tensors
 * are read by no backward op; outside the block nothing is stamped. */
START_TEST(recompute_in_c)
{
    mrt_error err = {0};
    mrt_spec *s = NULL;
    ok(recomputed_block(1, 1, &s, &err), &err);
    ck_assert_int_eq(s->block[0].recompute, 1);
    int reruns = 0, y1 = mrt_spec_find_tensor(s, "h1.y");
    int y1re = mrt_spec_find_tensor(s, "h1.y:re");
    ck_assert_int_ge(y1re, 0);
    ck_assert_int_eq(s->tensor[y1re].recomputes, 1 + y1);
    for (int o = 0; o < s->nops; o++) {
        const mrt_spec_op *op = &s->op[o];
        ck_assert_int_eq(s->tensor[op->out].producer, o);
        reruns += op->recomputed != 0;
        if (op->recomputed) {
            ck_assert_int_eq(op->phase, MRT_PHASE_BACKWARD);
            ck_assert_int_eq(s->op[op->recomputed - 1].layer, op->layer);
        }
        for (int k = 0; op->phase == MRT_PHASE_BACKWARD && k < op->nin; k++)
            ck_assert_int_ne(op->in[k], y1);
    }
    ck_assert_int_eq(reruns, 4);
    /* instance 1's re-run comes first in the backward pass */
    int first = s->train.nforward;
    while (first < s->nops && !s->op[first].recomputed)
        first++;
    ck_assert_int_lt(first, s->nops);
    ck_assert_int_eq(s->op[first].recomputed, 1 + s->block[0].first_op[1]);
    ck_assert_int_eq(s->tensor[mrt_spec_find_tensor(s, "h_in")].block, -1);
    ck_assert_int_eq(s->tensor[mrt_spec_find_tensor(s, "loss")].block, -1);
    mrt_spec_destroy(s);

    ck_assert_int_eq(recomputed_block(1, 0, &s, &err), MRT_E_SPEC);
    ck_assert_str_eq(err.message,
                     "mrt_ir_finish: block 'h' has recompute: true but the "
                     "program has no train: (recomputation re-runs forward "
                     "ops in the backward pass)");
    ck_assert_ptr_null(s);
    mrt_error e2 = {0};
    mrt_ir *ir = mesh2x2("rc", "rows", "cols");
    is_error(mrt_ir_block_recompute(ir, 1, &e2), &e2, MRT_E_USAGE,
             "mrt_ir_block_recompute: no block is open "
             "(mrt_ir_block_begin)");
    mrt_ir_destroy(ir);
}
END_TEST

START_TEST(errors_of_training)
{
    mrt_error err = {0};
    mrt_ir *ir = small();
    ok(mrt_ir_add_op(
           ir,
           &(mrt_ir_op){
               .kind = MRT_IR_EINSUM, {"x", "w"}, "y", SHAPE("batch", "d")},
           &err),
       &err);
    ok(mrt_ir_add_op(ir, &(mrt_ir_op){.kind = MRT_IR_MSE, {"y", "x"}, "loss"},
                     &err),
       &err);
    is_error(mrt_ir_add_tensor(ir, NULL, &err), &err, MRT_E_USAGE,
             "mrt_ir_add_tensor: argument 't': NULL");
    mrt_ir_destroy(ir);

    ir = small();
    memset(&err, 0, sizeof err);
    ok(mrt_ir_add_op(
           ir,
           &(mrt_ir_op){
               .kind = MRT_IR_EINSUM, {"x", "w"}, "y", SHAPE("batch", "d")},
           &err),
       &err);
    ok(mrt_ir_add_op(ir, &(mrt_ir_op){.kind = MRT_IR_REDUCE_SUM, {"x"}, "sx"},
                     &err),
       &err);
    mrt_status st = mrt_ir_set_train(
        ir,
        &(mrt_ir_train){
            .loss = "sx", .nparams = 1, .params = (const char *[]){"w"}},
        &err);
    is_error(st, &err, MRT_E_SPEC,
             "mrt_ir_set_train: argument 'params': "
             "the loss 'sx' does not depend on 'w'");
    mrt_ir_destroy(ir);

    ir = small();
    memset(&err, 0, sizeof err);
    ok(mrt_ir_add_op(ir, &(mrt_ir_op){.kind = MRT_IR_RELU, {"x"}, "r"}, &err),
       &err);
    st = mrt_ir_set_train(ir,
                          &(mrt_ir_train){.loss = "r",
                                          .nparams = 1,
                                          .params = (const char *[]){"w"}},
                          &err);
    is_error(st, &err, MRT_E_SPEC,
             "mrt_ir_set_train: argument 'loss': the "
             "loss 'r' has 2 dims; it must be a scalar");
    mrt_ir_destroy(ir);
}
END_TEST

/* Budgets (the program's and an op's) reach the plan's check; links
 * are checked against the mesh and a profile's limits. */
START_TEST(expect_and_network)
{
    mrt_error err = {0};
    mrt_ir *ir = small(); /* x [batch, d], w [d, e] on data x model */
    ok(mrt_ir_set_expect(ir, &(mrt_ir_budget){0, -1}, &err), &err);
    ok(mrt_ir_set_link(ir, "model", 2.0, 10.0, &err), &err);
    is_error(mrt_ir_set_link(ir, "model", 2.0, 10.0, &err), &err, MRT_E_SPEC,
             "mrt_ir_set_link: argument 'axis': mesh axis "
             "'model' has a link already");
    mrt_ir_destroy(ir);

    ir = small();
    memset(&err, 0, sizeof err);
    ok(mrt_ir_set_expect(ir, &(mrt_ir_budget){0, -1}, &err), &err);
    op(ir, (mrt_ir_op){.kind = MRT_IR_RELAYOUT,
                       {"x"},
                       "x1",
                       .nlayout = 1,
                       .layout = &(mrt_ir_rule){"d", {"model"}}});
    op(ir, (mrt_ir_op){.kind = MRT_IR_RELAYOUT,
                       {"x1"},
                       "x2",
                       .expect = &(mrt_ir_budget){0, -1}});
    mrt_spec *spec = NULL;
    ok(mrt_ir_finish(ir, &spec, &err), &err);
    mrt_ir_destroy(ir);
    mrt_plan *plan = NULL;
    ok(mrt_plan_create(spec, NULL, &plan, &err), &err);
    mrt_budget_violation v[4];
    /* x2, replicated again, is gathered from x1's shards over model */
    ck_assert_int_eq(mrt_plan_check_budgets(spec, plan, v, 4), 2);
    ck_assert_int_eq(v[0].op, 0);
    ck_assert_int_eq(v[1].op, 2);
    ck_assert_int_eq(v[1].kind, MRT_BUDGET_COMM_BYTES);
    mrt_plan_destroy(plan);
    mrt_spec_destroy(spec);

    struct {
        const char *axis;
        double lat, bw;
        const char *msg;
    } bad[] = {
        {"rows", 1, 1,
         "mrt_ir_set_link: argument 'axis': unknown mesh axis "
         "'rows' in 'network' (the mesh has: data, model)"},
        {"data", 0, 1,
         "mrt_ir_set_link: argument 'latency_us': the "
         "latency_us of mesh axis 'data' must be a positive number, got 0"},
        {"data", 1, 1e13,
         "mrt_ir_set_link: argument 'bandwidth_GBps': the "
         "bandwidth_GBps of mesh axis 'data' is out of range: 1e+13 (it "
         "must be from 1e-09 to 1e+12 GB/s, as in a machine profile)"},
    };
    for (int i = 0; i < N(bad); i++) {
        mrt_error e = {0};
        ir = small();
        is_error(mrt_ir_set_link(ir, bad[i].axis, bad[i].lat, bad[i].bw, &e),
                 &e, MRT_E_SPEC, bad[i].msg);
        mrt_ir_destroy(ir);
    }
    ir = small();
    memset(&err, 0, sizeof err);
    is_error(mrt_ir_set_expect(ir, &(mrt_ir_budget){-2, 0}, &err), &err,
             MRT_E_SPEC,
             "mrt_ir_set_expect: argument 'b': a budget is -1 "
             "(no limit) or a number of bytes, got -2 and 0");
    mrt_ir_destroy(ir);
}
END_TEST

/* ---- alternatives: examples/zero.yaml's `layouts:` in C ------------ */

#define RULES(...)                                                             \
    .nrules = N(((const mrt_ir_rule[]){__VA_ARGS__})),                         \
    .rules = (const mrt_ir_rule[])                                             \
    {                                                                          \
        __VA_ARGS__                                                            \
    }
static const mrt_ir_rule no_rules[1];

/* examples/zero.yaml up to its `layouts:`. */
static mrt_ir *zero_program(void)
{
    mrt_error err = {0};
    mrt_ir *ir = mesh2x2("examples/zero.yaml", "data", "model");
    ok(mrt_ir_set_dtype(ir, MRT_F64, &err), &err);
    ok(mrt_ir_add_dim(ir, "batch", 96, &err), &err);
    ok(mrt_ir_add_dim(ir, "d_model", 24, &err), &err);
    ok(mrt_ir_add_dim(ir, "d_ff", 48, &err), &err);
    ok(mrt_ir_set_rule(ir, &(mrt_ir_rule){"batch", {"data", "model"}}, &err),
       &err);
    ok(mrt_ir_add_tensor(
           ir, &(mrt_ir_tensor){.name = "x", SHAPE("batch", "d_model")}, &err),
       &err);
    const char *names[] = {"t", "w1", "w2"};
    const uint64_t seeds[] = {9, 1, 2};
    for (int i = 0; i < 3; i++)
        ok(mrt_ir_add_tensor(
               ir,
               &(mrt_ir_tensor){
                   .name = names[i],
                   .ndims = 2,
                   .shape = i == 1   ? (const char *[]){"d_model", "d_ff"}
                            : i == 2 ? (const char *[]){"d_ff", "d_model"}
                                     : (const char *[]){"batch", "d_model"},
                   .init = MRT_IR_INIT_RANDOM,
                   .seed = seeds[i]},
               &err),
           &err);
    feed_forward(ir, "d_ff", MRT_IR_GELU, "g", "d_model", 0.2, 3);
    return ir;
}

/* Its alternatives, each pinned: ddp, zero3, zero3_keep, zero2, megatron. */
static void zero_alternatives(mrt_ir *ir)
{
    mrt_error err = {0};
    const mrt_ir_rule all[] = {{"batch", {"data", "model"}}};
    const mrt_ir_rule ff[] = {{"d_ff", {"data", "model"}}};
    const mrt_ir_alternative_tensor sharded[] = {
        {.name = "w1", .nlayout = 1, .layout = ff, .reshard_after_forward = 1},
        {.name = "w2", .nlayout = 1, .layout = ff, .reshard_after_forward = 1}};
    const mrt_ir_alternative_tensor kept[] = {
        {.name = "w1", .nlayout = 1, .layout = ff},
        {.name = "w2", .nlayout = 1, .layout = ff}};
    const mrt_ir_alternative_tensor grads[] = {
        {.name = "w1", .ngrad_layout = 1, .grad_layout = ff},
        {.name = "w2", .ngrad_layout = 1, .grad_layout = ff}};
    const mrt_ir_alternative alts[] = {
        {.name = "ddp", .nrules = 1, .rules = all, .pin = 1},
        {.name = "zero3",
         .nrules = 1,
         .rules = all,
         .ntensors = 2,
         .tensors = sharded,
         .pin = 1},
        {.name = "zero3_keep",
         .nrules = 1,
         .rules = all,
         .ntensors = 2,
         .tensors = kept,
         .pin = 1},
        {.name = "zero2",
         .nrules = 1,
         .rules = all,
         .ntensors = 2,
         .tensors = grads,
         .pin = 1},
        {.name = "megatron",
         RULES({"batch", {"data"}}, {"d_ff", {"model"}}),
         .pin = 1},
    };
    for (int i = 0; i < N(alts); i++)
        ok(mrt_ir_add_alternative(ir, &alts[i], &err), &err);
}

/* Compare's rows of both specs agree, figure for figure. */
static void same_rows(const mrt_spec *a, const mrt_spec *b)
{
    mrt_compare *ca = NULL, *cb = NULL;
    mrt_error err = {0};
    ok(mrt_compare_create(a, NULL, &ca, &err), &err);
    ok(mrt_compare_create(b, NULL, &cb, &err), &err);
    ck_assert_int_eq(ca->nrows, 6);
    ck_assert_int_eq(ca->nrows, cb->nrows);
    ck_assert_int_eq(ca->ncols, cb->ncols);
    ck_assert_int_eq(ca->fastest, cb->fastest);
    for (int r = 0; r < ca->nrows; r++) {
        const mrt_compare_row *x = &ca->row[r], *y = &cb->row[r];
        ck_assert_str_eq(x->name, y->name);
        ck_assert_str_eq(x->mesh, y->mesh);
        ck_assert_int_eq(x->ok, 1);
        ck_assert_int_eq(y->ok, 1);
        ck_assert_int_gt(x->totals.comm_bytes, 0);
        ck_assert_int_eq(x->totals.comm_bytes, y->totals.comm_bytes);
        ck_assert_int_eq(x->totals.peak_memory, y->totals.peak_memory);
        ck_assert(!memcmp(&x->totals, &y->totals, sizeof x->totals));
        for (int c = 0; c < ca->ncols; c++)
            ck_assert_int_eq(x->axis_bytes[c], y->axis_bytes[c]);
    }
    mrt_compare_destroy(ca);
    mrt_compare_destroy(cb);
}

START_TEST(zero_alternatives_as_yaml)
{
    mrt_error err = {0};
    mrt_spec *built = NULL, *loaded = NULL;
    mrt_ir *ir = zero_program();
    zero_alternatives(ir);
    ok(mrt_ir_finish(ir, &built, &err), &err);
    mrt_ir_destroy(ir);
    if (mrt_spec_load("examples/zero.yaml", &loaded, &err))
        ck_abort_msg("zero.yaml: %s", err.message);
    same_rows(built, loaded);
    const char *names[] = {"ddp", "zero3", "zero3_keep", "zero2", "megatron"};
    for (int i = 0; i < N(names); i++) {
        mrt_spec *a = NULL, *b = NULL;
        ok(mrt_spec_select_alternative(built, names[i], &a, &err), &err);
        ok(mrt_spec_select_alternative(loaded, names[i], &b, &err), &err);
        same_plan_texts(a, b);
        mrt_spec_destroy(a);
        mrt_spec_destroy(b);
    }
    mrt_spec_destroy(built);
    mrt_spec_destroy(loaded);
}
END_TEST

START_TEST(errors_of_alternatives)
{
    const mrt_ir_rule ff[] = {{"d_ff", {"data", "model"}}};
    const mrt_ir_rule bad_axis[] = {{"d_ff", {"rows"}}};
    const char *axes[] = {"ranks"};
    const int64_t eight[] = {8};
    struct {
        mrt_ir_alternative alt;
        const char *msg;
    } bad[] = {
        {{.name = "a b"},
         "mrt_ir_add_alternative: argument 'name': invalid "
         "layout name 'a b' (a name starts with a letter or '_' and has "
         "only letters, digits and '_')"},
        {{.name = "dp", .nrules = 1, .rules = bad_axis},
         "mrt_ir_add_alternative: argument 'rules': unknown mesh axis "
         "'rows' in the rule of dim 'd_ff'"},
        {{.name = "dp", .naxes = 1, .axis = axes, .size = eight},
         "mrt_ir_add_alternative: argument 'naxes': layout 'dp' has a mesh "
         "of 8 ranks but the program's mesh has 4"},
        {{.name = "dp",
          .ntensors = 1,
          .tensors = (const mrt_ir_alternative_tensor[]){{.name = "nope",
                                                          .nlayout = 1,
                                                          .layout = ff}}},
         "mrt_ir_add_alternative: argument 'tensors': tensor 'nope' not "
         "declared"},
        {{.name = "dp",
          .ntensors = 1,
          .tensors =
              (const mrt_ir_alternative_tensor[]){{.name = "x",
                                                   .layout = no_rules,
                                                   .reshard_after_forward = 1}}},
         "mrt_ir_add_alternative: argument 'tensors': tensor 'x' is not a "
         "parameter (reshard_after_forward is for the tensors of the params "
         "of mrt_ir_set_train)"},
        {{.name = "dp",
          .ntensors = 1,
          .tensors =
              (const mrt_ir_alternative_tensor[]){
                  {.name = "t", .ngrad_layout = 0, .grad_layout = no_rules}}},
         "mrt_ir_add_alternative: argument 'tensors': tensor 't' has no "
         "gradient (a grad_layout is for the tensors on a path from the "
         "params or grads of mrt_ir_set_train to the loss)"},
        {{.name = "dp",
          .nops = 1,
          .ops = (const mrt_ir_alternative_op[]){{.out = "w1",
                                                  .layout = no_rules}}},
         "mrt_ir_add_alternative: argument 'ops': 'w1' is not made by an op "
         "(an op is named by its out; give an input its layout in tensors)"},
        {{.name = "dp", RULES({"d_model", {"data"}}, {"d_ff", {"data"}})},
         "mrt_ir_add_alternative: argument 'rules': under layout 'dp', "
         "tensor 'w1' would split mesh axis 'data' twice: d_model: data "
         "and d_ff: data (give it its own layout:)"},
    };
    for (int i = 0; i < N(bad); i++) {
        mrt_error e = {0};
        mrt_ir *ir = zero_program();
        is_error(mrt_ir_add_alternative(ir, &bad[i].alt, &e), &e, MRT_E_SPEC,
                 bad[i].msg);
        mrt_ir_destroy(ir);
    }
    /* A second alternative of the same name; an op after one. */
    mrt_error e = {0};
    mrt_ir *ir = zero_program();
    const mrt_ir_alternative dp = {.name = "dp", .nrules = 1, .rules = ff};
    ok(mrt_ir_add_alternative(ir, &dp, &e), &e);
    is_error(mrt_ir_add_alternative(ir, &dp, &e), &e, MRT_E_SPEC,
             "mrt_ir_add_alternative: argument 'name': layout 'dp' is given "
             "twice");
    mrt_ir_destroy(ir);
    memset(&e, 0, sizeof e);
    ir = small();
    ok(mrt_ir_add_alternative(
           ir, &(mrt_ir_alternative){.name = "dp", RULES({"batch", {"data"}})},
           &e),
       &e);
    is_error(
        mrt_ir_add_op(ir, &(mrt_ir_op){.kind = MRT_IR_RELU, {"x"}, "r"}, &e),
        &e, MRT_E_USAGE,
        "mrt_ir_add_op: argument 'op': ops and training come before the "
        "first alternative (mrt_ir_add_alternative)");
    mrt_ir_destroy(ir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("builder");
    TCase *tc = tcase_create("builder");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, mlp_as_yaml);
    tcase_add_test(tc, attention_as_yaml);
    tcase_add_test(tc, transformer_as_yaml);
    tcase_add_test(tc, other_ops_as_yaml);
    tcase_add_test(tc, errors_name_call_and_argument);
    tcase_add_test(tc, errors_of_training);
    tcase_add_test(tc, blocks_as_yaml);
    tcase_add_test(tc, recompute_in_c);
    tcase_add_test(tc, expect_and_network);
    tcase_add_test(tc, zero_alternatives_as_yaml);
    tcase_add_test(tc, errors_of_alternatives);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
