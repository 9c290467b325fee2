/*
 * cmd_check.c — `meshrt check SPEC`: validates the spec (and that it
 * plans) and prints a one-screen summary of how every tensor is spread.
 *
 * It also prints, on stderr and without changing the exit status, the
 * library's warnings about layouts that waste the mesh or do not fit it
 * (mrt_plan_warnings, ops/warnings.c): "SPEC:LINE:COL: warning: MESSAGE"
 * (the peak memory one, about the whole plan, has no position).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "cli.h"

/* The library's warnings (mrt_plan_warnings), one line each on stderr:
 * "SPEC:LINE:COL: warning: MESSAGE", or "SPEC: warning: ..." without a
 * position. */
static void print_warnings(const mrt_cli_args *a, const mrt_spec *s,
                           const mrt_plan *p)
{
    mrt_warning_options o = {
        .memory = a->memory,
        .memory_name = a->memory > 0 ? "a rank's memory (--memory)" : NULL,
        .replicated_share = a->replicated_share};
    int n = mrt_plan_warnings(s, p, &o, NULL, 0);
    mrt_warning *w = n ? calloc((size_t)n, sizeof *w) : NULL;
    if (n && !w) {
        fprintf(stderr, "meshrt: error: out of memory\n");
        return;
    }
    mrt_plan_warnings(s, p, &o, w, n);
    for (int i = 0; i < n; i++) {
        if (w[i].kind != MRT_WARN_MEMORY)
            fprintf(stderr, "%s:%d:%d: warning: %s\n", w[i].file, w[i].line,
                    w[i].column, w[i].message);
        else
            fprintf(stderr, "%s: warning: %s\n", w[i].file, w[i].message);
    }
    free(w);
}

static void print_tensor(const mrt_spec_tensor_info *t)
{
    char shape[256];
    int n = snprintf(shape, sizeof shape, "[");
    for (int i = 0; i < t->ndims; i++)
        n += snprintf(shape + n, sizeof shape - (size_t)n, "%s%s=%" PRId64,
                      i ? ", " : "", t->dim[i], t->shape[i]);
    snprintf(shape + n, sizeof shape - (size_t)n, "]");
    printf("  %-10s %-6s %-32s %-34s shard ", t->name,
           t->input ? "input" : "op", shape, t->layout);
    for (int i = 0; i < t->ndims; i++)
        printf("%s%" PRId64, i ? "x" : "", t->shard_shape[i]);
    if (t->ndims == 0)
        printf("1 (a scalar)");
    if (!t->even)
        printf(" (the largest; split unevenly)");
    if (t->replicated[0])
        printf("  (replicated over %s)", t->replicated);
    printf("\n");
}

/* n with thousands separators: 124,439,808. */
static const char *grouped(int64_t n, char *buf, size_t size)
{
    char digits[24];
    int len = snprintf(digits, sizeof digits, "%" PRId64, n), o = 0;
    for (int i = 0; i < len && (size_t)o + 2 < size; i++) {
        if (i && digits[i - 1] != '-' && (len - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = 0;
    return buf;
}

/* Every tensor, except that the instances 1.. of a repeated block are one
 * line each block: they have the tensors of instance 0 under their own
 * names (`--dim` of the block's dim changes how many); the backward
 * program's instances come last to first ("h11–h1"). */
static void print_tensors(const mrt_spec *spec, const mrt_spec_info *info)
{
    const char *block = NULL;
    int first = -1, last = -1, each = 0;
    for (int t = 0; t <= info->ntensors; t++) {
        mrt_spec_tensor_info ti = {.layer = -1};
        if (t < info->ntensors &&
            mrt_spec_get_tensor(spec, t, &ti, NULL) != MRT_OK)
            continue;
        if (block && (t == info->ntensors || ti.layer <= 0 ||
                      strcmp(ti.block, block) != 0)) {
            printf("  %s%d–%s%d (instances %d–%d of block '%s'): %d tensors "
                   "each, as %s0's\n",
                   block, first, block, last, first, last, block,
                   each / (abs(last - first) + 1), block);
            block = NULL;
        }
        if (t == info->ntensors)
            break;
        if (ti.layer > 0) {
            if (!block) {
                block = ti.block;
                first = ti.layer;
                each = 0;
            }
            last = ti.layer;
            each++;
            continue;
        }
        print_tensor(&ti);
    }
}

int mrt_cli_check(const mrt_cli_args *a)
{
    mrt_error err = {0};
    mrt_spec *spec = NULL;
    mrt_plan *plan = NULL;
    mrt_status st = mrt_cli_load(a, &spec, &plan, &err);
    if (st != MRT_OK) {
        mrt_cli_print_error(&err);
        goto out;
    }
    mrt_spec_info info;
    char num[32];
    mrt_spec_get_info(spec, &info);
    printf("%s: ok", info.path);
    if (a->layout)
        printf(" (layout '%s')", a->layout);
    printf("\nmesh {");
    for (int i = 0; i < info.mesh.naxes; i++)
        printf("%s%s: %" PRId64, i ? ", " : "", info.mesh.name[i],
               info.mesh.size[i]);
    printf("} = %" PRId64 " ranks, %s, %d ops\n"
           "tensors (shards have the same shape on every rank; split "
           "unevenly, rank 0's, the largest):\n",
           info.mesh.nranks, mrt_dtype_name(info.dtype), info.nops);
    print_tensors(spec, &info);
    if (info.training)
        printf("parameters: %s trained, in %d tensors\n",
               grouped(info.param_elements, num, sizeof num), info.nparams);
    printf("plan: %" PRId64 " bytes per rank handed to MPI, %.4g flops per "
           "rank (meshrt plan shows the steps)\n",
           mrt_plan_get_totals(plan).comm_bytes,
           mrt_plan_get_totals(plan).flops);
    char stages[2048];
    if (mrt_plan_stage_layers(plan, stages, sizeof stages))
        printf("%s\n", stages);
    if (info.nalternatives) {
        printf("layouts:");
        for (int i = 0; i < info.nalternatives; i++)
            printf("%s %s", i ? "," : "", mrt_spec_get_alternative(spec, i));
        printf("  (meshrt compare weighs them; --layout NAME picks one)\n");
    }
    fflush(stdout);
    print_warnings(a, spec, plan);
out:
    mrt_plan_destroy(plan);
    mrt_spec_destroy(spec);
    return mrt_cli_exit_code(st);
}
