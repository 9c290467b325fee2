/*
 * test_plan.c — the planner's choices on hand-worked cases: which steps,
 * which collectives on which axes, how many bytes per rank.  Each case is
 * a small spec; the expected figures are worked out in the comments.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "planning.h"

static mrt_spec *spec;
static mrt_plan *plan;
static mrt_strategy strategy = MRT_STRATEGY_COUNT; /* COUNT: auto */
static mrt_planner planner = MRT_PLANNER_AUTO;
static int blocking;

/* Loads YAML text (with an optional --mesh override) and plans it with
 * `strategy` (or the auto planner). */
static void plan_text(const char *yaml, const char *mesh)
{
    char path[] = "/tmp/mrt_test_plan_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, yaml, strlen(yaml)), (ssize_t)strlen(yaml));
    close(fd);
    mrt_error err = {0};
    mrt_status st = mrt_spec_load_ex(
        path, &(mrt_spec_load_options){.mesh = mesh}, &spec, &err);
    unlink(path);
    if (st != MRT_OK)
        ck_abort_msg("spec: %d:%d: %s", err.line, err.column, err.message);
    mrt_plan_options opt = {.planner = planner, .blocking = blocking};
    st = strategy == MRT_STRATEGY_COUNT
             ? mrt_plan_create(spec, &opt, &plan, &err)
             : mrt_plan_create_with(spec, &opt, strategy, &plan, &err);
    if (st != MRT_OK)
        ck_abort_msg("plan: %s", err.message);
}

static void teardown(void)
{
    mrt_plan_destroy(plan);
    mrt_spec_destroy(spec);
    plan = NULL;
    spec = NULL;
    strategy = MRT_STRATEGY_COUNT;
    planner = MRT_PLANNER_AUTO;
    blocking = 0;
}

/* Plans yaml with the fixed rule, then with the auto planner: returns the
 * rule's modeled time; `plan` is then auto's. */
static double rules_then_auto(const char *yaml)
{
    strategy = MRT_STRATEGY_RULES;
    plan_text(yaml, NULL);
    double t = plan->totals.time_s;
    teardown();
    plan_text(yaml, NULL);
    return t;
}

/* The steps of op i as a string like "slice einsum allreduce". */
static const char *op_steps(int i)
{
    static char buf[256];
    buf[0] = '\0';
    const mrt_plan_op *o = &plan->op[i];
    for (int k = o->first_step; k < o->first_step + o->nsteps; k++) {
        if (buf[0])
            strcat(buf, " ");
        strcat(buf, mrt_step_kind_name(plan->step[k].kind));
    }
    return buf;
}

static const mrt_step *op_step(int i, int k)
{
    return &plan->step[plan->op[i].first_step + k];
}

#define MLP_HEAD                                                               \
    "mesh: {data: 2, model: 2}\n"                                              \
    "dims: {batch: 64, d_model: 128, d_ff: 512}\n"                             \
    "layout: {batch: data, d_ff: model}\n"                                     \
    "tensors:\n"                                                               \
    "  x:  {shape: [batch, d_model]}\n"                                        \
    "  w1: {shape: [d_model, d_ff]}\n"                                         \
    "  w2: {shape: [d_ff, d_model]}\n"                                         \
    "ops:\n"                                                                   \
    "  - {op: einsum, in: [x, w1], out: h, shape: [batch, d_ff]}\n"

START_TEST(global_rules_give_mesh_tensorflow_lowering)
{
    /* h = x.w1 splits nothing it sums: no communication.  y = h.w2 sums
     * d_ff, split over model: one all-reduce over model of y's shard,
     * 64/2 x 128 floats = 16384 bytes. */
    plan_text(
        MLP_HEAD
        "  - {op: einsum, in: [h, w2], out: y, shape: [batch, d_model]}\n",
        NULL);
    ck_assert_str_eq(op_steps(0), "einsum");
    ck_assert_str_eq(op_steps(1), "einsum allreduce");
    const mrt_step *s = op_step(1, 1);
    ck_assert_uint_eq(s->axes, 1u << 1);
    ck_assert_int_eq(s->group, 2);
    ck_assert_int_eq(s->bytes, 32 * 128 * 4);
    ck_assert_int_eq(mrt_plan_get_totals(plan).comm_bytes, 16384);
    /* flops per rank: 2 * 32 * 256 * 128 for each einsum */
    ck_assert_double_eq(plan->op[0].flops, 2.0 * 32 * 256 * 128);
    ck_assert_int_eq(op_step(0, 0)->cls.size[MRT_IDX_M], 32);
    ck_assert_int_eq(op_step(0, 0)->cls.size[MRT_IDX_N], 256);
    ck_assert_int_eq(op_step(0, 0)->cls.size[MRT_IDX_K], 128);
}
END_TEST

START_TEST(pending_sum_into_a_split_becomes_reduce_scatter)
{
    /* y's layout splits batch over [data, model]: the pending sum over
     * model is reduce-scattered along batch, same bytes handed to MPI as
     * the all-reduce (the shard of the partial y), half the result. */
    plan_text(MLP_HEAD "  - {op: einsum, in: [h, w2], out: y, shape: [batch, "
                       "d_model], layout: {batch: [data, model]}}\n",
              NULL);
    ck_assert_str_eq(op_steps(1), "einsum reduce_scatter");
    const mrt_step *s = op_step(1, 1);
    ck_assert_uint_eq(s->axes, 1u << 1);
    ck_assert_int_eq(s->dim, 0);
    ck_assert_int_eq(s->bytes, 32 * 128 * 4);
    ck_assert_int_eq(plan->value[s->out].local[0], 16);
}
END_TEST

START_TEST(sum_over_two_axes_is_one_allreduce)
{
    /* k split over [data, model]: one all-reduce over both axes (group 4)
     * of the 8 x 6 float64 result. */
    plan_text("mesh: {data: 2, model: 2}\ndtype: float64\n"
              "dims: {m: 8, k: 16, n: 6}\nlayout: {k: [data, model]}\n"
              "tensors: {a: {shape: [m, k]}, b: {shape: [k, n]}}\n"
              "ops: [{op: einsum, in: [a, b], out: c, shape: [m, n]}]\n",
              NULL);
    ck_assert_str_eq(op_steps(0), "einsum allreduce");
    ck_assert_uint_eq(op_step(0, 1)->axes, 3u);
    ck_assert_int_eq(op_step(0, 1)->group, 4);
    ck_assert_int_eq(op_step(0, 1)->bytes, 8 * 6 * 8);
}
END_TEST

#define ALLTOALL_SPEC                                                          \
    "mesh: {model: 2}\ndims: {m: 4, k: 16, n: 6}\n"                            \
    "layout: {k: model}\n"                                                     \
    "tensors:\n  a: {shape: [m, k]}\n"                                         \
    "  w: {shape: [k, n], layout: {n: model}}\n"                               \
    "ops: [{op: einsum, in: [a, w], out: c, shape: [m, n]}]\n"

START_TEST(moving_a_split_between_dims_is_alltoall)
{
    /* The rule: w arrives split on n over model, but k (summed) sits on
     * model in a, so w's split moves from n to k on the same axis: one
     * all-to-all of w's 16 x 3 shard, then an all-reduce of c (4 x 6). */
    strategy = MRT_STRATEGY_RULES;
    plan_text(ALLTOALL_SPEC, NULL);
    ck_assert_str_eq(op_steps(0), "alltoall einsum allreduce");
    const mrt_step *s = op_step(0, 0);
    ck_assert_int_eq(s->dim, 1);  /* from n ... */
    ck_assert_int_eq(s->dim2, 0); /* ... to k */
    ck_assert_int_eq(s->bytes, 16 * 3 * 4);
}
END_TEST

START_TEST(auto_gathers_the_smaller_operands_instead)
{
    /* The search finds better: gather a (4 x 8 -> 4 x 16: 128 bytes on the
     * wire), multiply with n still split, gather c (4 x 3: 48 bytes):
     * 176 wire bytes in 2 messages against the rule's 96 + 96 in 3. */
    double rule_time = rules_then_auto(ALLTOALL_SPEC);
    ck_assert_str_eq(op_steps(0), "allgather einsum allgather");
    ck_assert_double_eq_tol(plan->totals.wire_bytes, 176, 1e-9);
    ck_assert(plan->totals.time_s < rule_time);
}
END_TEST

START_TEST(gather_and_slice)
{
    strategy = MRT_STRATEGY_RULES;
    /* c is replicated: x's batch split must go before the kernel (an
     * all-gather of its 4 x 8 shard); then c2 wants batch split again,
     * which is a local slice of c (no bytes). */
    plan_text(
        "mesh: {data: 2}\ndims: {batch: 8, k: 8, n: 4}\n"
        "layout: {batch: data}\n"
        "tensors: {x: {shape: [batch, k]}, w: {shape: [k, n]}}\n"
        "ops:\n"
        "  - {op: einsum, in: [x, w], out: c, shape: [batch, n], layout: {}}\n"
        "  - {op: einsum, in: [c], out: c2, shape: [n, batch]}\n",
        NULL);
    ck_assert_str_eq(op_steps(0), "allgather einsum");
    ck_assert_int_eq(op_step(0, 0)->bytes, 4 * 8 * 4);
    ck_assert_str_eq(op_steps(1), "slice einsum");
    ck_assert_int_eq(op_step(1, 0)->bytes, 0);
    ck_assert_int_eq(plan->op[1].comm_bytes, 0);
}
END_TEST

START_TEST(auto_moves_the_result_when_it_is_smaller)
{
    /* c (8 x 4) is smaller than x (8 x 8): the search multiplies with the
     * batch split and gathers c instead of x. */
    double rule_time = rules_then_auto(
        "mesh: {data: 2}\ndims: {batch: 8, k: 8, n: 4}\n"
        "layout: {batch: data}\n"
        "tensors: {x: {shape: [batch, k]}, w: {shape: [k, n]}}\n"
        "ops:\n"
        "  - {op: einsum, in: [x, w], out: c, shape: [batch, n], layout: {}}\n");
    ck_assert_str_eq(op_steps(0), "einsum allgather");
    ck_assert_int_eq(op_step(0, 1)->bytes, 4 * 4 * 4);
    ck_assert(plan->totals.time_s < rule_time);
}
END_TEST

START_TEST(plans_for_a_huge_mesh_without_mpi)
{
    /* 1024 ranks: k over model (32): all-reduce of the 2 x 64 shard. */
    plan_text("mesh: {data: 32, model: 32}\ndims: {b: 64, k: 1024, n: 64}\n"
              "layout: {b: data, k: model}\n"
              "tensors: {x: {shape: [b, k]}, w: {shape: [k, n]}}\n"
              "ops: [{op: einsum, in: [x, w], out: y, shape: [b, n]}]\n",
              NULL);
    ck_assert_int_eq(plan->mesh.nranks, 1024);
    ck_assert_str_eq(op_steps(0), "einsum allreduce");
    ck_assert_int_eq(op_step(0, 1)->group, 32);
    ck_assert_int_eq(op_step(0, 1)->bytes, 2 * 64 * 4);
}
END_TEST

START_TEST(mesh_override_changes_the_plan)
{
    /* The same spec on a 4x1 mesh: model has one rank, so the sum over it
     * needs no collective at all. */
    plan_text(
        MLP_HEAD
        "  - {op: einsum, in: [h, w2], out: y, shape: [batch, d_model]}\n",
        "data=4,model=1");
    ck_assert_str_eq(op_steps(1), "einsum");
    ck_assert_int_eq(mrt_plan_get_totals(plan).comm_bytes, 0);
}
END_TEST

START_TEST(swapped_nesting_moves_through_one_axis)
{
    /* [b/data+model] -> [b/model+data]: same axes, other nesting: one
     * exchange of whole 2 x 4 shards over both axes, never a gather. */
    strategy = MRT_STRATEGY_RULES;
    plan_text("mesh: {data: 2, model: 2}\ndims: {b: 8, n: 4}\n"
              "layout: {b: [data, model]}\n"
              "tensors: {x: {shape: [b, n]}}\n"
              "ops: [{op: einsum, in: [x], out: y, shape: [b, n], "
              "layout: {b: [model, data]}}]\n",
              NULL);
    ck_assert_str_eq(op_steps(0), "alltoall einsum");
    ck_assert_int_eq(op_step(0, 0)->kind, MRT_STEP_PERMUTE);
    ck_assert_uint_eq(op_step(0, 0)->axes, 3u);
    ck_assert_int_eq(op_step(0, 0)->bytes, 2 * 4 * 4);
    const mrt_value *res = &plan->value[plan->op[0].out_value];
    ck_assert_int_eq(res->layout.naxes[0], 2);
    ck_assert_int_eq(res->layout.axes[0][0], 1);
    ck_assert_int_eq(res->layout.axes[0][1], 0);
}
END_TEST

#define DEFERRED_SPEC                                                          \
    "mesh: {data: 2, model: 2}\n"                                              \
    "dims: {batch: 64, d: 512, f: 512, o: 8}\n"                                \
    "layout: {batch: data, d: model}\n"                                        \
    "tensors: {x: {shape: [batch, d]}, w1: {shape: [d, f]},"                   \
    " w2: {shape: [f, o]}}\n"                                                  \
    "ops:\n"                                                                   \
    "  - {op: einsum, in: [x, w1], out: h, shape: [batch, f]}\n"               \
    "  - {op: einsum, in: [h, w2], out: y, shape: [batch, o]}\n"

START_TEST(meshtf_all_reduces_at_once)
{
    /* Mesh-TF: h = x.w1 sums d (split over model): all-reduce h's 32 x 512
     * shard at once (65536 bytes); y = h.w2 then needs nothing. */
    planner = MRT_PLANNER_MESHTF;
    plan_text(DEFERRED_SPEC, NULL);
    ck_assert_str_eq(op_steps(0), "einsum allreduce");
    ck_assert_int_eq(op_step(0, 1)->bytes, 32 * 512 * 4);
    ck_assert_str_eq(op_steps(1), "einsum");
    ck_assert_int_eq(plan->totals.comm_bytes, 65536);
}
END_TEST

START_TEST(auto_keeps_the_sum_pending_through_a_linear_consumer)
{
    /* The cost-aware planner leaves h's sum over model pending (the second
     * einsum is linear in h, and w2 is not split over model) and
     * all-reduces y's 32 x 8 shard instead: 1024 bytes, 64x fewer. */
    plan_text(DEFERRED_SPEC, NULL);
    ck_assert_str_eq(op_steps(0), "einsum");
    ck_assert_uint_eq(plan->value[plan->op[0].out_value].layout.partial,
                      1u << 1);
    ck_assert_str_eq(op_steps(1), "einsum allreduce");
    ck_assert_int_eq(plan->totals.comm_bytes, 32 * 8 * 4);
    ck_assert_uint_eq(op_step(1, 1)->axes, 1u << 1);
}
END_TEST

START_TEST(meshtf_ignores_per_tensor_layouts)
{
    /* y's own layout (batch over [data, model]) is not Mesh-TF's: it
     * takes the global rules and all-reduces, where auto reduce-scatters
     * (half the wire bytes of the all-reduce). */
    const char *yaml = MLP_HEAD
        "  - {op: einsum, in: [h, w2], out: y, shape: [batch, d_model], "
        "layout: {batch: [data, model]}}\n";
    planner = MRT_PLANNER_MESHTF;
    plan_text(yaml, NULL);
    ck_assert_str_eq(op_steps(1), "einsum allreduce");
    double meshtf_wire = plan->totals.wire_bytes;
    double meshtf_time = plan->totals.time_s;
    teardown();
    plan_text(yaml, NULL);
    ck_assert_str_eq(op_steps(1), "einsum reduce_scatter");
    ck_assert_double_eq_tol(plan->totals.wire_bytes, meshtf_wire / 2, 1e-9);
    ck_assert(plan->totals.time_s < meshtf_time);
}
END_TEST

START_TEST(memory_model_frees_after_last_use)
{
    /* Inputs x (32x128), w1 (128x256), w2 (256x128) live throughout; h
     * (32x256) from op 0's kernel to op 1's; y's pending 32x128 from op
     * 1's kernel to the reduce-scatter, which makes y (16x128), live to
     * the end.  The peak is at op 1's kernel: inputs + h + pending y (no
     * workspace: both products take their operands in place). */
    plan_text(MLP_HEAD "  - {op: einsum, in: [h, w2], out: y, shape: [batch, "
                       "d_model], layout: {batch: [data, model]}}\n",
              NULL);
    int64_t inputs = (32 * 128 + 128 * 256 + 256 * 128) * 4, y = 16 * 128 * 4;
    int64_t h = 32 * 256 * 4, partial = 32 * 128 * 4;
    ck_assert_int_eq(plan->live_peak, inputs + h + partial);
    ck_assert_int_lt(y, h);
    ck_assert_int_ge(plan->arena_bytes, plan->live_peak);
    /* a run holds the arena, the workspace and, while the reduce-scatter
     * runs, MPI's copy of its input (partial y) */
    ck_assert_int_eq(plan->totals.peak_memory,
                     plan->arena_bytes + plan->max_workspace + partial);
}
END_TEST

/* No value made while a collective runs in the background shares bytes
 * with that collective's input or output. */
static void check_background_buffers(const mrt_plan *p)
{
    for (int k = 0; k < p->nsteps; k++) {
        const mrt_step *s = &p->step[k];
        if (s->wait < 0)
            continue;
        ck_assert_int_gt(s->wait, k + 1);
        for (int j = k + 1; j < s->wait && j < p->nsteps; j++) {
            const mrt_value *v = &p->value[p->step[j].out];
            for (int x = 0; x < 2; x++) {
                const mrt_value *c = &p->value[x ? s->out : s->in];
                int64_t vb = v->count * p->elsize, cb = c->count * p->elsize;
                ck_assert_msg(v->offset + vb <= c->offset ||
                                  c->offset + cb <= v->offset,
                              "step %d writes over the %s of step %d, "
                              "still in the background",
                              j, x ? "output" : "input", k);
            }
        }
    }
}

/* The gradient all-reduce of w2 runs while the kernels of w1's gradient
 * run, and no buffer it uses is reused meanwhile; a result nobody reads
 * (y0 below) is kept until its collective completes. */
START_TEST(collectives_in_the_background)
{
    planner = MRT_PLANNER_MESHTF;
    plan_text("mesh: {data: 2}\ndims: {b: 8, i: 4, h: 6, o: 2}\n"
              "layout: {b: data}\ntensors:\n  x: {shape: [b, i]}\n"
              "  w1: {shape: [i, h]}\n  w2: {shape: [h, o]}\n"
              "  t: {shape: [b, o]}\nops:\n"
              "  - {op: einsum, in: [x, w1], out: h1, shape: [b, h]}\n"
              "  - {op: einsum, in: [h1, w2], out: y, shape: [b, o]}\n"
              "  - {op: mse, in: [y, t], out: loss}\n"
              "train: {loss: loss, params: [w1, w2]}\n",
              NULL);
    int background = 0;
    for (int k = 0; k < plan->nsteps; k++)
        if (plan->step[k].wait >= 0 &&
            !strcmp(plan->tensor_name[plan->value[plan->step[k].in].tensor],
                    "grad:w2"))
            background++;
    ck_assert_int_eq(background, 1);
    check_background_buffers(plan);
    teardown();
    planner = MRT_PLANNER_MESHTF;
    plan_text("mesh: {a: 2}\ndims: {i: 6, k: 5, q: 4}\nlayout: {q: a}\n"
              "tensors:\n  x0: {shape: [i, q]}\n  x1: {shape: [k, q]}\n"
              "  x2: {shape: [i, k]}\nops:\n"
              "  - {op: einsum, in: [x0, x1], out: y0, shape: [i, k]}\n"
              "  - {op: einsum, in: [x2], out: y1, shape: [k, i]}\n"
              "outputs: [y1]\n",
              NULL);
    ck_assert_int_ge(plan->step[1].wait, 0);
    check_background_buffers(plan);
    teardown();
    /* --blocking: none */
    planner = MRT_PLANNER_MESHTF;
    blocking = 1;
    plan_text("mesh: {a: 2}\ndims: {i: 6, k: 5, q: 4}\nlayout: {q: a}\n"
              "tensors:\n  x0: {shape: [i, q]}\n  x1: {shape: [k, q]}\n"
              "  x2: {shape: [i, k]}\nops:\n"
              "  - {op: einsum, in: [x0, x1], out: y0, shape: [i, k]}\n"
              "  - {op: einsum, in: [x2], out: y1, shape: [k, i]}\n",
              NULL);
    for (int k = 0; k < plan->nsteps; k++)
        ck_assert_int_eq(plan->step[k].wait, -1);
}
END_TEST

/* Uneven splits: the plan's figures per rank are the largest rank's
 * (rank 0's), its total over ranks is the sum of every rank's own bytes,
 * and each value is sized for its largest shard. */
START_TEST(uneven_reduce_is_local_then_allreduced)
{
    /* A maximum over a dim split unevenly (10 over 4: 3, 3, 2, 2) is each
     * rank's maximum of its own block, then an all-reduce of the
     * per-row maxima: not a gather of the whole tensor first. */
    plan_text("mesh: {data: 4}\n"
              "dims: {b: 6, v: 10}\n"
              "layout: {v: data}\n"
              "tensors:\n"
              "  x: {shape: [b, v]}\n"
              "ops:\n"
              "  - {op: reduce_max, in: [x], out: m, shape: [b]}\n",
              NULL);
    ck_assert_str_eq(op_steps(0), "reduce_max allreduce");
    ck_assert_int_eq(op_step(0, 1)->bytes, 6 * 4);
}
END_TEST

START_TEST(uneven_bytes_per_rank_add_up)
{
    plan_text("mesh: {data: 2, model: 3}\ndtype: float64\n"
              "dims: {b: 10, i: 7, h: 5, o: 2}\n"
              "layout: {b: data, h: model}\ntensors:\n"
              "  x: {shape: [b, i]}\n  w1: {shape: [i, h]}\n"
              "  w2: {shape: [h, o], layout: {o: [data, model]}}\n"
              "  t: {shape: [b, o]}\nops:\n"
              "  - {op: einsum, in: [x, w1], out: h1, shape: [b, h]}\n"
              "  - {op: relu, in: [h1], out: r}\n"
              "  - {op: einsum, in: [r, w2], out: y, shape: [b, o],"
              " layout: {b: [data, model]}}\n"
              "  - {op: mse, in: [y, t], out: loss}\n"
              "train: {loss: loss, params: [w1, w2]}\n",
              NULL);
    const mrt_mesh *m = &plan->mesh;
    int64_t most = 0, sum = 0, first = -1;
    for (int64_t r = 0; r < m->nranks; r++) {
        int64_t c[MRT_MAX_AXES], mine = 0;
        mrt_mesh_coords(m, r, c);
        for (int k = 0; k < plan->nsteps; k++) {
            const mrt_step *st = &plan->step[k];
            int64_t b = mrt_step_rank_bytes(plan, st, c);
            ck_assert_int_le(b, st->bytes);
            mine += b;
        }
        if (r == 0)
            first = mine;
        most = mine > most ? mine : most;
        sum += mine;
    }
    ck_assert_int_eq(first, most);
    ck_assert_int_eq(plan->totals.comm_bytes, most);
    ck_assert_int_eq(plan->totals.comm_bytes_total, sum);
    ck_assert_int_lt(sum, most * m->nranks); /* the shards differ */
    for (int v = 0; v < plan->nvalues; v++) {
        int64_t c[MRT_MAX_AXES] = {0};
        ck_assert_int_eq(
            plan->value[v].count,
            mrt_layout_shard_count_at(&plan->value[v].layout, m, c));
    }
}
END_TEST

/* The specs of tests/specs/uneven/ (run by the uneven_np* tests) between
 * them move blocks of unequal sizes in every kind of collective. */
/* ZeRO-3 on a one-axis mesh of 4, float64: x (256x16) batch-split, w1
 * (16x64) and w2 (64x16) split on d_ff, dL/dx wanted, so the backward
 * pass reads both weights (dL/dh = dL/dy.w2^T, dL/dx = dL/dh.w1^T).
 * `keep` reuses the weights gathered for the forward pass; under
 * `reshard`, w1 (reshard_after_forward: true) is gathered again for
 * dL/dx, w2 (false) is kept.  The batch is large enough that the peak is
 * where the activations h and dL/dh live together (dL/dw2 = h^T.dL/dy),
 * after w1's forward use and before its backward one. */
#define ZERO3_SPEC                                                             \
    "mesh: {all: 4}\n"                                                         \
    "dtype: float64\n"                                                         \
    "dims: {batch: 256, d_model: 16, d_ff: 64}\n"                              \
    "layout: {batch: all}\n"                                                   \
    "tensors:\n"                                                               \
    "  x:  {shape: [batch, d_model]}\n"                                        \
    "  w1: {shape: [d_model, d_ff]}\n"                                         \
    "  w2: {shape: [d_ff, d_model]}\n"                                         \
    "ops:\n"                                                                   \
    "  - {op: einsum, in: [x, w1], out: h, shape: [batch, d_ff]}\n"            \
    "  - {op: einsum, in: [h, w2], out: y, shape: [batch, d_model]}\n"         \
    "  - {op: reduce_sum, in: [y], out: loss}\n"                               \
    "train: {loss: loss, params: [w1, w2], grads: [x]}\n"                      \
    "layouts:\n"                                                               \
    "  keep: {batch: all, tensors: {w1: {layout: {d_ff: all}}, "               \
    "w2: {layout: {d_ff: all}}}}\n"                                            \
    "  reshard: {batch: all, tensors: {"                                       \
    "w1: {layout: {d_ff: all}, reshard_after_forward: true}, "                 \
    "w2: {layout: {d_ff: all}, reshard_after_forward: false}}}\n"

/* Plans alternative `name` of the spec loaded by plan_text. */
static void plan_alt(const char *name)
{
    mrt_spec *alt = NULL;
    mrt_error err = {0};
    mrt_plan_destroy(plan);
    plan = NULL;
    if (mrt_spec_select_alternative(spec, name, &alt, &err) != MRT_OK)
        ck_abort_msg("layout %s: %s", name, err.message);
    mrt_spec_destroy(spec);
    spec = alt;
    if (mrt_plan_create(spec, NULL, &plan, &err) != MRT_OK)
        ck_abort_msg("plan: %s", err.message);
}

/* All-gathers of tensor t (by name) in ops of phase ph. */
static int gathers(const char *t, mrt_phase ph)
{
    int n = 0;
    for (int k = 0; k < plan->nsteps; k++) {
        const mrt_step *s = &plan->step[k];
        n += s->kind == MRT_STEP_ALLGATHER && plan->op[s->op].phase == ph &&
             !strcmp(plan->tensor_name[plan->value[s->in].tensor], t);
    }
    return n;
}

START_TEST(reshard_after_forward_gathers_again_in_backward)
{
    plan_text(ZERO3_SPEC, NULL);
    plan_alt("keep");
    ck_assert_int_eq(gathers("w1", MRT_PHASE_FORWARD), 1);
    ck_assert_int_eq(gathers("w1", MRT_PHASE_BACKWARD), 0);
    ck_assert_int_eq(gathers("w2", MRT_PHASE_BACKWARD), 0);
    mrt_plan_totals keep = plan->totals;
    int64_t keep_live = plan->live_peak;
    teardown();
    plan_text(ZERO3_SPEC, NULL);
    plan_alt("reshard");
    /* w1 has the option: gathered in each pass; w2 (false) is kept */
    ck_assert_int_eq(gathers("w1", MRT_PHASE_FORWARD), 1);
    ck_assert_int_eq(gathers("w1", MRT_PHASE_BACKWARD), 1);
    ck_assert_int_eq(gathers("w2", MRT_PHASE_BACKWARD), 0);
    /* the forward copy of w1 dies in the forward pass */
    for (int k = 0; k < plan->nsteps; k++) {
        const mrt_step *s = &plan->step[k];
        if (s->kind != MRT_STEP_ALLGATHER ||
            plan->op[s->op].phase != MRT_PHASE_FORWARD ||
            strcmp(plan->tensor_name[plan->value[s->in].tensor], "w1"))
            continue;
        const mrt_value *v = &plan->value[s->out];
        ck_assert_int_lt(v->last_use, plan->nsteps);
        ck_assert_int_eq(plan->op[plan->step[v->last_use].op].phase,
                         MRT_PHASE_FORWARD);
    }
    /* one more all-gather of w1: (n-1)/n of it, 3/4 * 16*64 * 8 bytes on
     * the wire, a shard of 16*16*8 bytes handed to MPI */
    ck_assert_int_eq(plan->totals.collectives, keep.collectives + 1);
    ck_assert_double_eq_tol(plan->totals.wire_bytes - keep.wire_bytes,
                            3 * 16 * 64 * 8 / 4, 1e-9);
    ck_assert_int_eq(plan->totals.comm_bytes - keep.comm_bytes, 16 * 16 * 8);
    ck_assert_double_eq_tol(plan->totals.phase_wire_bytes[MRT_PHASE_BACKWARD] -
                                keep.phase_wire_bytes[MRT_PHASE_BACKWARD],
                            3 * 16 * 64 * 8 / 4, 1e-9);
    ck_assert_double_eq_tol(plan->totals.phase_wire_bytes[MRT_PHASE_FORWARD],
                            keep.phase_wire_bytes[MRT_PHASE_FORWARD], 1e-9);
    ck_assert_int_eq(plan->totals.phase_collectives[MRT_PHASE_BACKWARD],
                     keep.phase_collectives[MRT_PHASE_BACKWARD] + 1);
    /* memory traded for it: the gathered w1 (16*64*8 bytes) is not held
     * from the forward pass to the backward pass, so it is not live at
     * the peak */
    ck_assert_int_eq(keep_live - plan->live_peak, 16 * 64 * 8);
    ck_assert_int_lt(plan->totals.peak_memory, keep.peak_memory);
}
END_TEST

START_TEST(uneven_specs_cover_every_collective)
{
    static const char *const files[] = {
        "tests/specs/uneven/heads.yaml", "tests/specs/uneven/mlp.yaml",
        "tests/specs/uneven/permute.yaml", "tests/specs/uneven/vocab.yaml"};
    int kinds[MRT_STEP_KIND_COUNT] = {0};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        mrt_error err = {0};
        ck_assert_int_eq(mrt_spec_load(files[f], &spec, &err), MRT_OK);
        mrt_plan_options opt = {.planner = MRT_PLANNER_AUTO};
        ck_assert_int_eq(mrt_plan_create(spec, &opt, &plan, &err), MRT_OK);
        for (int k = 0; k < plan->nsteps; k++) {
            const mrt_step *st = &plan->step[k];
            const mrt_layout *in = &plan->value[st->in].layout;
            if (mrt_step_is_uneven(plan, st) ||
                (st->kind == MRT_STEP_ALLREDUCE &&
                 !mrt_layout_even(in, &plan->mesh)))
                kinds[st->kind]++;
        }
        teardown();
    }
    ck_assert_int_gt(kinds[MRT_STEP_ALLGATHER], 0);
    ck_assert_int_gt(kinds[MRT_STEP_ALLTOALL], 0);
    ck_assert_int_gt(kinds[MRT_STEP_REDUCE_SCATTER], 0);
    ck_assert_int_gt(kinds[MRT_STEP_ALLREDUCE], 0);
    ck_assert_int_gt(kinds[MRT_STEP_PERMUTE], 0);
}
END_TEST

/* tests/specs/ops/layer_norm.yaml is a program where the per-op choice,
 * greedy, loses to the fixed rule over the whole program: the auto plan
 * is then the rule's, rebuilt in the tables of the per-op plan, and still
 * carries the alternatives the per-op choice weighed (for --explain),
 * best first. */
START_TEST(auto_falls_back_to_the_rule_and_keeps_what_it_weighed)
{
    mrt_error err = {0};
    if (mrt_spec_load("tests/specs/ops/layer_norm.yaml", &spec, &err) != MRT_OK)
        ck_abort_msg("spec: %s", err.message);
    mrt_plan_options opt = {.explain = 1};
    mrt_plan *rules = NULL;
    ck_assert_int_eq(
        mrt_plan_create_with(spec, &opt, MRT_STRATEGY_RULES, &rules, &err),
        MRT_OK);
    ck_assert_int_eq(mrt_plan_create(spec, &opt, &plan, &err), MRT_OK);
    ck_assert_int_eq(plan->fell_back, 1);
    ck_assert_int_eq(plan->nsteps, rules->nsteps);
    ck_assert_double_eq(plan->totals.time_s, rules->totals.time_s);
    ck_assert_int_eq(rules->nalts, 0);
    int weighed = 0;
    for (int i = 0; i < plan->nops; i++) {
        const mrt_plan_op *o = &plan->op[i];
        for (int k = 1; k < o->nalts; k++)
            ck_assert(plan->alt[o->first_alt + k - 1].time_s <=
                      plan->alt[o->first_alt + k].time_s);
        weighed += o->nalts;
    }
    ck_assert_int_gt(weighed, 0);
    ck_assert_int_eq(weighed, plan->nalts);
    mrt_plan_destroy(rules);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("plan");
    TCase *tc = tcase_create("plan");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_test(tc, global_rules_give_mesh_tensorflow_lowering);
    tcase_add_test(tc, pending_sum_into_a_split_becomes_reduce_scatter);
    tcase_add_test(tc, sum_over_two_axes_is_one_allreduce);
    tcase_add_test(tc, moving_a_split_between_dims_is_alltoall);
    tcase_add_test(tc, gather_and_slice);
    tcase_add_test(tc, auto_gathers_the_smaller_operands_instead);
    tcase_add_test(tc, auto_moves_the_result_when_it_is_smaller);
    tcase_add_test(tc, plans_for_a_huge_mesh_without_mpi);
    tcase_add_test(tc, mesh_override_changes_the_plan);
    tcase_add_test(tc, swapped_nesting_moves_through_one_axis);
    tcase_add_test(tc, meshtf_all_reduces_at_once);
    tcase_add_test(tc, auto_keeps_the_sum_pending_through_a_linear_consumer);
    tcase_add_test(tc, meshtf_ignores_per_tensor_layouts);
    tcase_add_test(tc, memory_model_frees_after_last_use);
    tcase_add_test(tc, collectives_in_the_background);
    tcase_add_test(tc, uneven_reduce_is_local_then_allreduced);
    tcase_add_test(tc, uneven_bytes_per_rank_add_up);
    tcase_add_test(tc, uneven_specs_cover_every_collective);
    tcase_add_test(tc, reshard_after_forward_gathers_again_in_backward);
    tcase_add_test(tc, auto_falls_back_to_the_rule_and_keeps_what_it_weighed);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
