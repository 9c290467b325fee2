/*
 * plan_values.c — a plan's values as plain data for callers of meshrt.h
 * (mrt_plan_value_count, mrt_plan_get_value, mrt_plan_find_value,
 * mrt_plan_get_shard, mrt_plan_get_mesh): each tensor in each layout the
 * plan gives it, with the pending sums it carries, and the block of it
 * any one rank holds.
 *
 * `meshrt show` draws its pictures from these alone (cli/ sees meshrt.h
 * only); the block rule is layout.c's, never written again here.  The
 * copies are by value, except the names, borrowed from the plan.
 */
#include <string.h>

#include "error.h"
#include "plan.h"

int mrt_plan_value_count(const mrt_plan *plan)
{
    return plan ? plan->nvalues : 0;
}

void mrt_plan_get_mesh(const mrt_plan *plan, mrt_mesh_info *out)
{
    if (!out)
        return;
    memset(out, 0, sizeof *out);
    if (!plan)
        return;
    out->naxes = plan->mesh.naxes;
    for (int a = 0; a < plan->mesh.naxes; a++) {
        snprintf(out->name[a], sizeof out->name[a], "%s", plan->mesh.name[a]);
        out->size[a] = plan->mesh.size[a];
    }
    out->nranks = plan->mesh.nranks;
}

static mrt_status bad_value(const mrt_plan *plan, const char *fn, int i,
                            mrt_error *err)
{
    if (!plan)
        return mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0},
                             "%s: argument 'plan': NULL", fn);
    return mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0},
                         "%s: argument 'i': %d is not a value (the plan "
                         "has %d)",
                         fn, i, plan->nvalues);
}

/* 1 if value v is what the op that made it leaves (the op's result as
 * planned, pending sums and all), not one of the moves of its inputs. */
static int is_op_result(const mrt_plan *p, int v)
{
    int o = p->value[v].made_by;
    return o >= 0 && o < p->nops && p->op[o].out_value == v;
}

mrt_status mrt_plan_get_value(const mrt_plan *plan, int i,
                              mrt_plan_value_info *out, mrt_error *err)
{
    if (!plan || i < 0 || i >= plan->nvalues || !out)
        return out || !plan ? bad_value(plan, "mrt_plan_get_value", i, err)
                            : mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0},
                                            "mrt_plan_get_value: argument "
                                            "'out': NULL");
    const mrt_value *v = &plan->value[i];
    const mrt_layout *l = &v->layout;
    memset(out, 0, sizeof *out);
    out->tensor = v->tensor;
    out->name = plan->tensor_name[v->tensor];
    out->step = v->def;
    out->input = v->made_by < 0;
    out->op_result = !out->input && is_op_result(plan, i);
    out->ndims = l->ndims;
    for (int d = 0; d < l->ndims; d++) {
        out->dim[d] = plan->dim_names[l->dim[d]];
        out->shape[d] = l->size[d];
        out->naxes[d] = l->naxes[d];
        for (int k = 0; k < l->naxes[d]; k++)
            out->axis[d][k] = l->axes[d][k];
    }
    out->partial = l->partial;
    out->shard_bytes = v->count * v->elsize; /* (int32 ids: 4) */
    out->elsize = v->elsize;
    mrt_layout_str(l, &plan->mesh, plan->dim_names, out->layout,
                   (int)sizeof out->layout);
    return MRT_OK;
}

int mrt_plan_find_value(const mrt_plan *plan, const char *name)
{
    if (!plan || !name)
        return -1;
    for (int i = 0; i < plan->nvalues; i++) {
        const mrt_value *v = &plan->value[i];
        if (strcmp(plan->tensor_name[v->tensor], name) == 0 &&
            (v->made_by < 0 || is_op_result(plan, i)))
            return i;
    }
    return -1;
}

mrt_status mrt_plan_get_shard(const mrt_plan *plan, int i, int64_t rank,
                              int64_t start[], int64_t extent[], mrt_error *err)
{
    if (!plan || i < 0 || i >= plan->nvalues)
        return bad_value(plan, "mrt_plan_get_shard", i, err);
    if (rank < 0 || rank >= plan->mesh.nranks || !start || !extent)
        return mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0},
                             "mrt_plan_get_shard: argument '%s': %s",
                             start && extent ? "rank" : "start",
                             start && extent ? "not a rank of the mesh"
                                             : "NULL");
    const mrt_layout *l = &plan->value[i].layout;
    int64_t coords[MRT_MAX_AXES];
    mrt_mesh_coords(&plan->mesh, rank, coords);
    for (int d = 0; d < l->ndims; d++)
        mrt_layout_dim_range(l, &plan->mesh, d, coords, &start[d], &extent[d]);
    return MRT_OK;
}
