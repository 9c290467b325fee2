/*
 * step_kinds.c — the names of the plan's step kinds, tied to the enum by
 * a static assertion, and which kinds call MPI.
 */
#include "plan.h"

/* Each step kind's two names: the printed plan's, which is the MPI call
 * a step makes (a permute and an all-to-all over a group of axes are
 * both "alltoall"), and its own, which mrt_plan_get_step hands a caller
 * so that it can tell them apart. */
static const struct {
    const char *call, *own;
} step_kind_names[] = {
    [MRT_STEP_EINSUM] = {"einsum", "einsum"},
    [MRT_STEP_SLICE] = {"slice", "slice"},
    [MRT_STEP_ALLGATHER] = {"allgather", "allgather"},
    [MRT_STEP_ALLTOALL] = {"alltoall", "alltoall"},
    [MRT_STEP_ALLREDUCE] = {"allreduce", "allreduce"},
    [MRT_STEP_REDUCE_SCATTER] = {"reduce_scatter", "reduce_scatter"},
    [MRT_STEP_PERMUTE] = {"alltoall", "permute"},
    [MRT_STEP_MAP] = {"map", "map"},
    [MRT_STEP_REDUCE_MAX] = {"reduce_max", "reduce_max"},
    [MRT_STEP_RENAME] = {"rename", "rename"},
    [MRT_STEP_ALLTOALL_GROUP] = {"alltoall", "alltoall_group"},
    [MRT_STEP_GATHER] = {"gather", "gather"},
    [MRT_STEP_SCATTER_ADD] = {"scatter_add", "scatter_add"},
    [MRT_STEP_SENDRECV] = {"sendrecv", "sendrecv"},
};
_Static_assert(sizeof step_kind_names / sizeof step_kind_names[0] ==
                   MRT_STEP_KIND_COUNT,
               "two names per step kind");

const char *mrt_step_kind_name(mrt_step_kind k)
{
    return step_kind_names[k].call;
}

const char *mrt_step_kind_id(mrt_step_kind k)
{
    return step_kind_names[k].own;
}

int mrt_step_is_collective(mrt_step_kind k)
{
    return k == MRT_STEP_ALLGATHER || k == MRT_STEP_ALLTOALL ||
           k == MRT_STEP_ALLREDUCE || k == MRT_STEP_REDUCE_SCATTER ||
           k == MRT_STEP_PERMUTE || k == MRT_STEP_ALLTOALL_GROUP ||
           k == MRT_STEP_SENDRECV;
}
