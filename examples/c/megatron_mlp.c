/*
 * megatron_mlp.c — meshrt as a library: a Megatron-style MLP,
 * y = relu(x W1) W2, on a 2x2 mesh (4 MPI ranks): the batch split over
 * `data`, W1 split by columns and W2 by rows over `model` (so the only
 * communication is one all-reduce of y's partial sums over `model`).
 * The program builds the MLP in code with the builder (mrt_ir_*, no YAML),
 * gives meshrt its own input arrays (x and W1 whole, W2 as each rank's
 * shard), runs the plan twice with two batches, gathers y on rank 0 and
 * checks it against the same MLP computed in plain C (what numpy's
 * `np.maximum(x @ w1, 0) @ w2` gives), and reads the plan's steps to
 * tell whether its one collective is that all-reduce.  It prints one
 * line on rank 0 and exits 0 when every element agrees.
 *
 * Build it against an installed meshrt with pkg-config only:
 *
 *     cc megatron_mlp.c $(pkg-config --cflags --libs meshrt-mpi) -o megatron_mlp
 *     mpirun -n 4 ./megatron_mlp [--report]
 *
 * (--report prints meshrt's report of each run.)  The same program as a
 * spec file would read:
 *
 *     mesh: {data: 2, model: 2}
 *     dtype: float64
 *     dims: {batch: 8, d_model: 16, d_ff: 32}
 *     layout: {batch: data, d_ff: model}
 *     tensors:
 *       x:  {shape: [batch, d_model]}
 *       w1: {shape: [d_model, d_ff]}
 *       w2: {shape: [d_ff, d_model]}
 *     ops:
 *       - {op: einsum, in: [x, w1], out: h, shape: [batch, d_ff]}
 *       - {op: relu, in: [h], out: r}
 *       - {op: einsum, in: [r, w2], out: y, shape: [batch, d_model]}
 *     outputs: [y]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <meshrt_mpi.h>

enum { B = 8, D = 16, F = 32 }; /* batch, d_model, d_ff */

/* The MLP, built by calls.  Every call after a failed one returns the
 * same error and does nothing (meshrt.h), so the calls are checked once,
 * at mrt_ir_finish.  On success *out is the caller's. */
static mrt_status build_mlp(mrt_spec **out, mrt_error *err)
{
    static const char *const axes[] = {"data", "model"};
    static const int64_t sizes[] = {2, 2};
    static const char *const x_shape[] = {"batch", "d_model"};
    static const char *const w1_shape[] = {"d_model", "d_ff"};
    static const char *const w2_shape[] = {"d_ff", "d_model"};
    static const char *const h_shape[] = {"batch", "d_ff"};
    static const char *const y_shape[] = {"batch", "d_model"};
    static const char *const outputs[] = {"y"};
    mrt_ir *ir = NULL;
    mrt_status st = mrt_ir_create("megatron_mlp", 2, axes, sizes, &ir, err);
    if (st != MRT_OK)
        return st;
    mrt_ir_set_dtype(ir, MRT_F64, err);
    mrt_ir_add_dim(ir, "batch", B, err);
    mrt_ir_add_dim(ir, "d_model", D, err);
    mrt_ir_add_dim(ir, "d_ff", F, err);
    mrt_ir_set_rule(ir, &(mrt_ir_rule){"batch", {"data"}}, err);
    mrt_ir_set_rule(ir, &(mrt_ir_rule){"d_ff", {"model"}}, err);
    mrt_ir_add_tensor(
        ir, &(mrt_ir_tensor){.name = "x", .ndims = 2, .shape = x_shape}, err);
    mrt_ir_add_tensor(
        ir, &(mrt_ir_tensor){.name = "w1", .ndims = 2, .shape = w1_shape}, err);
    mrt_ir_add_tensor(
        ir, &(mrt_ir_tensor){.name = "w2", .ndims = 2, .shape = w2_shape}, err);
    mrt_ir_add_op(ir,
                  &(mrt_ir_op){.kind = MRT_IR_EINSUM,
                               .in = {"x", "w1"},
                               .out = "h",
                               .ndims = 2,
                               .shape = h_shape},
                  err);
    mrt_ir_add_op(
        ir, &(mrt_ir_op){.kind = MRT_IR_RELU, .in = {"h"}, .out = "r"}, err);
    mrt_ir_add_op(ir,
                  &(mrt_ir_op){.kind = MRT_IR_EINSUM,
                               .in = {"r", "w2"},
                               .out = "y",
                               .ndims = 2,
                               .shape = y_shape},
                  err);
    mrt_ir_set_outputs(ir, 1, outputs, err);
    st = mrt_ir_finish(ir, out, err);
    mrt_ir_destroy(ir);
    return st;
}

/* The reference: y = relu(x w1) w2, row-major, in plain C. */
static void mlp(const double *x, const double *w1, const double *w2, double *y)
{
    double h[F];
    for (int b = 0; b < B; b++) {
        for (int f = 0; f < F; f++) {
            h[f] = 0;
            for (int d = 0; d < D; d++)
                h[f] += x[b * D + d] * w1[d * F + f];
            h[f] = h[f] > 0 ? h[f] : 0;
        }
        for (int d = 0; d < D; d++) {
            y[b * D + d] = 0;
            for (int f = 0; f < F; f++)
                y[b * D + d] += h[f] * w2[f * D + d];
        }
    }
}

/* 1 when the plan's only collective is one all-reduce over `model`, as
 * Megatron's split promises (read step by step from the plan); *n counts
 * the collectives. */
static int one_allreduce(const mrt_plan *plan, int *n)
{
    int collectives = 0, allreduce = 0;
    *n = 0;
    for (int i = 0; i < mrt_plan_step_count(plan); i++) {
        mrt_plan_step_info s;
        if (mrt_plan_get_step(plan, i, &s, NULL) != MRT_OK)
            return 0;
        collectives += s.collective;
        allreduce += s.kind == MRT_PLAN_STEP_ALLREDUCE &&
                     !strcmp(s.axes, "model");
    }
    *n = collectives;
    return collectives == 1 && allreduce == 1;
}

static void print_report(const char *text, size_t len, void *ctx)
{
    fwrite(text, 1, len, (FILE *)ctx);
}

/* A failed call: rank 0 prints the one-line error (every rank has it). */
static int fail(int rank, const mrt_error *err)
{
    char line[1024];
    if (rank == 0)
        fprintf(stderr, "%s\n", mrt_error_format(err, line, sizeof line));
    return err->code == MRT_E_VERIFY || err->code == MRT_E_RUNTIME ? 1 : 2;
}

/* W1 whole on every rank, W2 as this rank's shard (its rows [off, off +
 * rows) of d_ff, copied into *shard, the caller's to free). */
static mrt_status set_weights(mrt_runner *run, const double *w1,
                              const double *w2, double **shard, mrt_error *err)
{
    mrt_tensor_info w2i;
    mrt_status st = mrt_runner_tensor_info(run, "w2", &w2i, err);
    if (st)
        return st;
    double *s = *shard = malloc((size_t)w2i.shard_count * sizeof *s);
    if (!s)
        return err->code = MRT_E_NOMEM;
    for (int64_t i = 0; i < w2i.shard_shape[0]; i++)
        for (int64_t j = 0; j < w2i.shard_shape[1]; j++)
            s[i * w2i.shard_shape[1] + j] =
                w2[(w2i.shard_offset[0] + i) * D + w2i.shard_offset[1] + j];
    st = mrt_runner_set_input(run, "w1", w1, MRT_WHOLE, err);
    return st ? st : mrt_runner_set_input(run, "w2", s, MRT_SHARD, err);
}

int main(int argc, char **argv)
{
    mrt_error err = {0};
    if (mrt_init(&err) != MRT_OK) /* before MPI_Init */
        return fail(0, &err);
    MPI_Init(&argc, &argv);
    int rank, code = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    static double x[B * D], w1[D * F], w2[F * D], y[B * D], want[B * D];
    for (int i = 0; i < B * D; i++)
        x[i] = sin(0.37 * i);
    for (int i = 0; i < D * F; i++)
        w1[i] = cos(0.11 * i) / 4;
    for (int i = 0; i < F * D; i++)
        w2[i] = sin(0.05 * i + 1) / 4;

    mrt_spec *spec = NULL;
    mrt_plan *plan = NULL;
    mrt_runner *run = NULL;
    double *w2_shard = NULL;
    mrt_run_options opt = {0};
    if (argc > 1 && strcmp(argv[1], "--report") == 0)
        opt = (mrt_run_options){.report_fn = print_report,
                                .report_ctx = stdout};
    if (build_mlp(&spec, &err) || mrt_plan_create(spec, NULL, &plan, &err) ||
        mrt_runner_create(spec, plan, MPI_COMM_WORLD, &run, &err)) {
        code = fail(rank, &err);
        goto done;
    }
    if (set_weights(run, w1, w2, &w2_shard, &err)) {
        code = fail(rank, &err);
        goto done;
    }
    double worst = 0;
    for (int batch = 0; batch < 2; batch++) {
        if (batch == 1) /* a second batch through the same runner */
            for (int i = 0; i < B * D; i++)
                x[i] = cos(0.21 * i) - 0.25;
        if (mrt_runner_set_input(run, "x", x, MRT_WHOLE, &err) ||
            mrt_runner_execute(run, &opt, &err) ||
            mrt_runner_get_output(run, "y", y, MRT_WHOLE, &err)) {
            code = fail(rank, &err);
            goto done;
        }
        mlp(x, w1, w2, want);
        for (int i = 0; rank == 0 && i < B * D; i++) {
            double e = fabs(y[i] - want[i]) / (1 + fabs(want[i]));
            worst = e > worst || isnan(e) ? e : worst;
        }
    }
    if (rank == 0) {
        /* the values decide; the lowering is the cost model's choice (a
         * calibrated machine profile may pick another) */
        int ok = worst <= 1e-12, n;
        char comm[64] = "one all-reduce";
        if (!one_allreduce(plan, &n))
            snprintf(comm, sizeof comm, "%d collectives", n);
        printf("megatron_mlp: meshrt %s, 4 ranks (data=2, model=2), 2 "
               "batches of y[%d][%d]: largest relative error %.3g, %s: "
               "%s\n",
               mrt_version(), B, D, worst, comm, ok ? "ok" : "MISMATCH");
        code = ok ? 0 : 1;
    }
    MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
done:
    free(w2_shard);
    mrt_runner_destroy(run);
    mrt_plan_destroy(plan);
    mrt_spec_destroy(spec);
    MPI_Finalize();
    return code;
}
