/*
 * cmd_check.c — `meshrt check SPEC`: validates the spec (and that it
 * plans) and prints a one-screen summary of how every tensor is spread.
 */
#include <inttypes.h>
#include <stdio.h>

#include "cli.h"
#include "spec.h"

static void print_tensor(const mrt_spec *s, const mrt_spec_tensor *t)
{
    char buf[512], shape[256];
    int n = 0;
    int64_t local[MRT_MAX_DIMS];
    const mrt_layout *l = &t->layout;
    mrt_layout_shard_shape(l, &s->mesh, local);
    for (int i = 0; i < l->ndims; i++)
        n += snprintf(shape + n, sizeof shape - (size_t)n, "%s%s=%" PRId64,
                      i ? ", " : "[", s->dim_name[l->dim[i]], l->size[i]);
    snprintf(shape + n, sizeof shape - (size_t)n, "]");
    printf("  %-10s %-6s %-32s %-34s shard ", t->name,
           t->producer < 0 ? "input" : "op", shape,
           mrt_layout_str(l, &s->mesh, s->dim_names, buf, sizeof buf));
    for (int i = 0; i < l->ndims; i++)
        printf("%s%" PRId64, i ? "x" : "", local[i]);
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
    printf("%s: ok\nmesh {", spec->path);
    for (int i = 0; i < spec->mesh.naxes; i++)
        printf("%s%s: %" PRId64, i ? ", " : "", spec->mesh.name[i],
               spec->mesh.size[i]);
    printf("} = %" PRId64 " ranks, %s, %d ops\n"
           "tensors (shards have the same shape on every rank):\n",
           spec->mesh.nranks, mrt_dtype_name(spec->dtype), spec->nops);
    for (int t = 0; t < spec->ntensors; t++)
        print_tensor(spec, &spec->tensor[t]);
    printf("plan: %" PRId64 " bytes per rank handed to MPI, %.4g flops per "
           "rank (meshrt plan shows the steps)\n",
           mrt_plan_comm_bytes(plan), mrt_plan_flops(plan));
out:
    mrt_plan_destroy(plan);
    mrt_spec_destroy(spec);
    return mrt_cli_exit_code(st);
}
