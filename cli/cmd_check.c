/*
 * cmd_check.c — `meshrt check SPEC`: validates the spec (and that it
 * plans) and prints a one-screen summary of how every tensor is spread.
 *
 * It also warns, on stderr and without changing the exit status, about
 * layouts that waste the mesh: an op whose local kernel runs whole on
 * every rank of some axis (found from the plan's EINSUM step: no value it
 * reads or writes is split, or a pending sum, over that axis), and a
 * tensor kept replicated whose shard takes more than a share of a rank's
 * memory, and a plan whose peak memory per rank is over a rank's memory
 * (fits.c).  Warnings read "SPEC:LINE:COL: warning: MESSAGE" (the peak
 * memory one, about the whole plan, has no position).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "fits.h"
#include "plan.h"
#include "spec.h"

static void warn(const mrt_spec *s, mrt_mark at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void warn(const mrt_spec *s, mrt_mark at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s:%d:%d: warning: ", s->path, at.line, at.column);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* Axes a layout splits, or over which it is a pending sum. */
static unsigned axes_of(const mrt_layout *l)
{
    return mrt_layout_used_axes(l) | l->partial;
}

/* Mesh axes of size > 1. */
static unsigned real_axes(const mrt_mesh *m)
{
    unsigned mask = 0;
    for (int a = 0; a < m->naxes; a++)
        if (m->size[a] > 1)
            mask |= 1u << a;
    return mask;
}

/* Op i duplicated along an axis: its kernel's inputs and output all
 * whole along it, so every rank of the axis computes the same thing. */
static void warn_duplicated_op(const mrt_spec *s, const mrt_plan *p, int i)
{
    const mrt_plan_op *op = &p->op[i];
    /* only the einsums the spec wrote: the small sums inside softmax,
     * layer_norm and the losses, and the backward program, are
     * duplicated by design (as in Megatron's layer norms) */
    if (s->op[i].phase != MRT_PHASE_FORWARD ||
        strchr(s->tensor[s->op[i].out].name, ':'))
        return;
    for (int k = op->first_step; k < op->first_step + op->nsteps; k++) {
        const mrt_step *st = &p->step[k];
        if (st->kind != MRT_STEP_EINSUM)
            continue;
        unsigned used = axes_of(&p->value[st->in].layout) |
                        axes_of(&p->value[st->out].layout);
        if (st->in2 >= 0)
            used |= axes_of(&p->value[st->in2].layout);
        unsigned idle = real_axes(&p->mesh) & ~used;
        for (int a = 0; a < p->mesh.naxes; a++)
            if (idle & (1u << a))
                warn(s, s->op[i].mark, "op %d (%s = einsum) computes the "
                     "same result on the %" PRId64 " ranks of each '%s' "
                     "group: none of its dims is split over '%s'",
                     s->op[i].user,
                     s->tensor[s->op[i].out].name, p->mesh.size[a],
                     p->mesh.name[a], p->mesh.name[a]);
        return;
    }
}

/* "'data', 'model'" (sep ", ") for the axes of mask. */
static const char *axis_list(const mrt_mesh *m, unsigned mask,
                             const char *sep, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int a = 0; a < m->naxes && n < size; a++)
        if (mask & (1u << a))
            n += (size_t)snprintf(buf + n, size - n, "%s'%s'", n ? sep : "",
                                  m->name[a]);
    return buf;
}

/* Tensor t replicated over axes of size > 1 with a shard larger than
 * share of memory. */
static void warn_replicated(const mrt_spec *s, const mrt_spec_tensor *t,
                            double share, int64_t memory)
{
    char all[MRT_MAX_AXES * (MRT_NAME_MAX + 8)], any[sizeof all];
    unsigned rep = real_axes(&s->mesh) & ~mrt_layout_used_axes(&t->layout);
    int64_t bytes = mrt_layout_shard_count(&t->layout, &s->mesh) *
                    mrt_dtype_size(s->dtype);
    if (!rep || memory <= 0 || (double)bytes <= share * (double)memory)
        return;
    warn(s, t->mark, "tensor '%s' is replicated over %s (%" PRId64 " copies "
         "of each shard) and its shard of %" PRId64 " bytes is over %g%% of "
         "a rank's memory (%" PRId64 " bytes): split one of its dims over "
         "%s", t->name, axis_list(&s->mesh, rep, ", ", all, sizeof all),
         mrt_mesh_group_size(&s->mesh, rep), bytes, share * 100, memory,
         axis_list(&s->mesh, rep, " or ", any, sizeof any));
}

/* The memory of one rank: --memory, else this machine's. */
static int64_t rank_memory(const mrt_cli_args *a)
{
    return a->memory > 0 ? a->memory : mrt_machine_memory();
}

static void print_warnings(const mrt_cli_args *a, const mrt_spec *s,
                           const mrt_plan *p)
{
    int64_t memory = rank_memory(a);
    char line[1024];
    if (mrt_plan_memory_warning(p, memory,
                                a->memory > 0 ? "a rank's memory (--memory)"
                                              : "this machine's memory",
                                line, sizeof line))
        fprintf(stderr, "%s\n", line);
    for (int i = 0; i < s->nops && i < p->nops; i++)
        warn_duplicated_op(s, p, i);
    for (int t = 0; t < s->ntensors; t++)
        warn_replicated(s, &s->tensor[t], a->replicated_share, memory);
}

static void print_tensor(const mrt_spec *s, const mrt_spec_tensor *t)
{
    char buf[512], shape[256];
    int n = snprintf(shape, sizeof shape, "[");
    int64_t local[MRT_MAX_DIMS];
    const mrt_layout *l = &t->layout;
    mrt_layout_shard_shape(l, &s->mesh, local);
    for (int i = 0; i < l->ndims; i++)
        n += snprintf(shape + n, sizeof shape - (size_t)n, "%s%s=%" PRId64,
                      i ? ", " : "", s->dim_name[l->dim[i]], l->size[i]);
    snprintf(shape + n, sizeof shape - (size_t)n, "]");
    printf("  %-10s %-6s %-32s %-34s shard ", t->name,
           t->producer < 0 ? "input" : "op", shape,
           mrt_layout_str(l, &s->mesh, s->dim_names, buf, sizeof buf));
    for (int i = 0; i < l->ndims; i++)
        printf("%s%" PRId64, i ? "x" : "", local[i]);
    if (l->ndims == 0)
        printf("1 (a scalar)");
    if (!mrt_layout_even(l, &s->mesh))
        printf(" (the largest; split unevenly)");
    unsigned rep = ((1u << s->mesh.naxes) - 1) & ~mrt_layout_used_axes(l);
    if (rep && s->mesh.nranks > 1)
        printf("  (replicated over %s)",
               mrt_mesh_axes_str(&s->mesh, rep, buf, sizeof buf));
    printf("\n");
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
    printf("%s: ok", spec->path);
    if (a->layout)
        printf(" (layout '%s')", a->layout);
    printf("\nmesh {");
    for (int i = 0; i < spec->mesh.naxes; i++)
        printf("%s%s: %" PRId64, i ? ", " : "", spec->mesh.name[i],
               spec->mesh.size[i]);
    printf("} = %" PRId64 " ranks, %s, %d ops\n"
           "tensors (shards have the same shape on every rank; split "
           "unevenly, rank 0's, the largest):\n",
           spec->mesh.nranks, mrt_dtype_name(spec->dtype), spec->nops);
    for (int t = 0; t < spec->ntensors; t++)
        print_tensor(spec, &spec->tensor[t]);
    printf("plan: %" PRId64 " bytes per rank handed to MPI, %.4g flops per "
           "rank (meshrt plan shows the steps)\n",
           mrt_plan_comm_bytes(plan), mrt_plan_flops(plan));
    if (spec->nlayouts) {
        printf("layouts:");
        for (int i = 0; i < spec->nlayouts; i++)
            printf("%s %s", i ? "," : "", spec->layouts[i].name);
        printf("  (meshrt compare weighs them; --layout NAME picks one)\n");
    }
    fflush(stdout);
    print_warnings(a, spec, plan);
out:
    mrt_plan_destroy(plan);
    mrt_spec_destroy(spec);
    return mrt_cli_exit_code(st);
}
