/*
 * test_optimizer.c — the optimizer's state as the IR makes it
 * (ir/optimizer.c) and what a plan holds of it, per rank:
 *
 *   - Adam with bf16 parameters, fp32 gradients and an fp32 optimizer
 *     (precision set on the spec before `train:`, as the `precision:`
 *     key will): master weights (role 0, the parameter's init), m and v
 *     (roles 1, 2), each float32, and no gradient copy (the gradient is
 *     float32 already);
 *   - the plan's bytes of the parameter, its gradient and its state
 *     divided by its element count, computed from the plan's values:
 *     18 (Megatron's 2 + 4 + 12) undistributed, 6 + 12/d under ZeRO-1
 *     over d = 4 data ranks (Megatron's distributed optimizer), 18/d
 *     under ZeRO-3; and the updates in place (w:next shares w's buffer,
 *     w:master:next w:master's, w:m:next w:m's); under ZeRO-1 the one
 *     all-gather of the update is of the bf16 parameter (2 bytes an
 *     element), converted from the master weights on the shard;
 *   - with master_grads and fp16... not here: 16-bit gradients need the
 *     gradients' type, which grad.c does not set yet.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "planning.h"

#define P_K 64
#define P_N 32

static void ok(mrt_status st, const mrt_error *err)
{
    if (st)
        ck_abort_msg("%s", err->message);
}

/* The spec: y = x·w, mse loss, Adam, bf16 w; alternatives zero1, zero3
 * over data. */
static mrt_spec *build(void)
{
    static const char *const axis[] = {"data"};
    static const int64_t size[] = {4};
    mrt_ir *ir = NULL;
    mrt_error err = {0};
    ok(mrt_ir_create("opt", 1, axis, size, &ir, &err), &err);
    ir->s->precision = (mrt_precision){MRT_BF16, MRT_F32, MRT_F32,
                                       MRT_F32,  1,       {0, 0}};
    ok(mrt_ir_add_dim(ir, "b", 8, &err), &err);
    ok(mrt_ir_add_dim(ir, "k", P_K, &err), &err);
    ok(mrt_ir_add_dim(ir, "n", P_N, &err), &err);
    mrt_ir_rule rule = {"b", {"data"}};
    ok(mrt_ir_set_rule(ir, &rule, &err), &err);
    const char *xs[] = {"b", "k"}, *ws[] = {"k", "n"}, *ys[] = {"b", "n"};
    mrt_ir_tensor x = {.name = "x", .ndims = 2, .shape = xs};
    mrt_ir_tensor w = {.name = "w",
                       .ndims = 2,
                       .shape = ws,
                       .init = MRT_IR_INIT_RANDOM,
                       .seed = 5};
    mrt_ir_tensor t = {.name = "t", .ndims = 2, .shape = ys};
    ok(mrt_ir_add_tensor(ir, &x, &err), &err);
    ok(mrt_ir_add_tensor(ir, &w, &err), &err);
    ir->s->tensor[mrt_spec_find_tensor(ir->s, "w")].stored = 1 + MRT_BF16;
    ok(mrt_ir_add_tensor(ir, &t, &err), &err);
    mrt_ir_op e = {.kind = MRT_IR_EINSUM,
                   .in = {"x", "w"},
                   .out = "y",
                   .ndims = 2,
                   .shape = ys};
    mrt_ir_op l = {.kind = MRT_IR_MSE, .in = {"y", "t"}, .out = "loss"};
    ok(mrt_ir_add_op(ir, &e, &err), &err);
    ok(mrt_ir_add_op(ir, &l, &err), &err);
    const char *params[] = {"w"};
    mrt_ir_train tr = {.loss = "loss",
                       .nparams = 1,
                       .params = params,
                       .optimizer = MRT_OPTIMIZER_ADAM};
    ok(mrt_ir_set_train(ir, &tr, &err), &err);
    const char *data[] = {"data"};
    for (int stage = 1; stage <= 3; stage += 2) {
        mrt_ir_alternative a = {.name = stage == 1 ? "zero1" : "zero3",
                                .nrules = 1,
                                .rules = &rule,
                                .zero_stage = stage,
                                .zero_naxes = 1,
                                .zero_axes = data};
        ok(mrt_ir_add_alternative(ir, &a, &err), &err);
    }
    mrt_spec *s = NULL;
    ok(mrt_ir_finish(ir, &s, &err), &err);
    mrt_ir_destroy(ir);
    return s;
}

/* The state tensor of w with role `role`, or -1. */
static int state_of(const mrt_spec *s, int w, int role)
{
    for (int i = 0; i < s->ntensors; i++)
        if (s->tensor[i].opt_state == w + 1 && s->tensor[i].opt_role == role &&
            s->tensor[i].producer < 0)
            return i;
    return -1;
}

START_TEST(state_tensors)
{
    mrt_spec *s = build();
    int w = mrt_spec_find_tensor(s, "w");
    int master = state_of(s, w, MRT_OPT_ROLE_MASTER);
    int m = state_of(s, w, MRT_OPT_ROLE_M), v = state_of(s, w, MRT_OPT_ROLE_V);
    ck_assert_int_ge(master, 0);
    ck_assert_int_ge(m, 0);
    ck_assert_int_ge(v, 0);
    ck_assert_int_lt(state_of(s, w, MRT_OPT_ROLE_GRAD), 0); /* fp32 grads */
    ck_assert_str_eq(s->tensor[master].name, "w:master");
    ck_assert_int_eq(s->tensor[master].init, MRT_INIT_RANDOM);
    ck_assert_uint_eq(s->tensor[master].seed, s->tensor[w].seed);
    ck_assert_int_eq(s->tensor[m].init, MRT_INIT_FILL);
    ck_assert(s->tensor[m].fill == 0);
    for (int t = 0; t < 3; t++) {
        int id = (int[]){master, m, v}[t];
        ck_assert_int_eq(mrt_spec_tensor_dtype(s, id), MRT_F32);
    }
    ck_assert_int_eq(mrt_spec_tensor_dtype(s, w), MRT_BF16);
    ck_assert_int_eq(mrt_spec_tensor_dtype(s, s->train.updated[0]), MRT_BF16);
    ck_assert_int_eq(s->train.nstate, 3); /* m, v, master: carried */
    mrt_spec_destroy(s);
}
END_TEST

/* Bytes per rank of w, grad:w and w's state, per element of w, in the
 * plan of s under alternative `alt` (NULL: the rules); the updates
 * checked to be in place. */
static double bytes_per_param(const mrt_spec *s, const char *alt)
{
    mrt_spec *d = NULL;
    mrt_plan *p = NULL;
    mrt_error err = {0};
    if (alt)
        ok(mrt_spec_select_alternative(s, alt, &d, &err), &err);
    ok(mrt_plan_create(d ? d : s, NULL, &p, &err), &err);
    const mrt_spec *u = d ? d : s;
    const mrt_train *tr = &u->train;
    int w = tr->param[0];
    int64_t bytes = 0;
    for (int t = 0; t < u->ntensors; t++) {
        const mrt_spec_tensor *x = &u->tensor[t];
        int state = x->opt_state == w + 1 && x->producer < 0;
        if (t != w && t != tr->grad[0] && !state)
            continue;
        const mrt_value *v = &p->value[p->tensor_value[t]];
        bytes += v->count * v->elsize;
    }
    /* in place: each result shares its buffer, adding no bytes */
    ck_assert_int_eq(p->value[p->tensor_value[tr->updated[0]]].alias_of,
                     1 + p->tensor_value[w]);
    for (int k = 0; k < tr->nstate; k++)
        ck_assert_int_eq(p->value[p->tensor_value[tr->state_next[k]]].alias_of,
                         1 + p->tensor_value[tr->state[k]]);
    /* a sharded update gathers the parameter in its own type (bf16),
     * from the master weights converted on the shard */
    int gathers = 0;
    for (int k = 0; k < p->nsteps; k++) {
        const mrt_step *st = &p->step[k];
        if (st->kind != MRT_STEP_ALLGATHER ||
            p->op[st->op].phase != MRT_PHASE_UPDATE)
            continue;
        ck_assert_int_eq(p->value[st->in].dtype, MRT_BF16);
        ck_assert_int_eq(st->bytes, p->value[st->in].count * 2);
        gathers++;
    }
    ck_assert_int_eq(gathers, alt && !strcmp(alt, "zero1"));
    mrt_plan_destroy(p);
    mrt_spec_destroy(d);
    return (double)bytes / (P_K * P_N);
}

START_TEST(megatron_and_zero_bytes)
{
    mrt_spec *s = build();
    const double d = 4;
    ck_assert_double_eq(bytes_per_param(s, NULL), 2 + 4 + 12);
    ck_assert_double_eq(bytes_per_param(s, "zero1"), 6 + 12 / d);
    ck_assert_double_eq(bytes_per_param(s, "zero3"), (2 + 4 + 12) / d);
    mrt_spec_destroy(s);
}
END_TEST

/* The builder's errors about the optimizer, from C: no position, the
 * call and the argument named. */
START_TEST(builder_errors)
{
    static const char *const axis[] = {"data"};
    static const int64_t size[] = {2};
    struct {
        mrt_ir_train t;
        mrt_status code;
        const char *text;
    } cases[] = {
        {{.optimizer = (mrt_optimizer)7}, MRT_E_USAGE, "unknown optimizer 7"},
        {{.beta1 = 0.5}, MRT_E_SPEC, "optimizer 'sgd' takes no 'betas'"},
        {{.optimizer = MRT_OPTIMIZER_ADAM, .beta2 = 1},
         MRT_E_SPEC,
         "the 'betas' of 'train' must be in (0, 1): got 1"},
        {{.optimizer = MRT_OPTIMIZER_ADAMW, .momentum = 0.9},
         MRT_E_SPEC,
         "optimizer 'adamw' takes no 'momentum'"},
        {{.weight_decay = -1}, MRT_E_SPEC, "'weight_decay' of 'train' must be"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mrt_ir *ir = NULL;
        mrt_error err = {0};
        ok(mrt_ir_create("opt", 1, axis, size, &ir, &err), &err);
        ok(mrt_ir_add_dim(ir, "k", 4, &err), &err);
        const char *ks[] = {"k"}, *params[] = {"w"};
        mrt_ir_tensor w = {.name = "w", .ndims = 1, .shape = ks};
        ok(mrt_ir_add_tensor(ir, &w, &err), &err);
        mrt_ir_op o = {.kind = MRT_IR_REDUCE_SUM, .in = {"w"}, .out = "loss"};
        ok(mrt_ir_add_op(ir, &o, &err), &err);
        mrt_ir_train t = cases[i].t;
        t.loss = "loss";
        t.nparams = 1;
        t.params = params;
        ck_assert_int_eq(mrt_ir_set_train(ir, &t, &err), cases[i].code);
        ck_assert_msg(strstr(err.message, cases[i].text), "case %zu: %s", i,
                      err.message);
        ck_assert_int_eq(err.line, 0);
        mrt_ir_destroy(ir);
    }
}
END_TEST

int main(void)
{
    Suite *su = suite_create("optimizer");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, state_tensors);
    tcase_add_test(tc, megatron_and_zero_bytes);
    tcase_add_test(tc, builder_errors);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
