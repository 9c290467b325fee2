/*
 * plan.h — the plan: what every rank does, as plain data.
 *
 * The planner (ops/) turns each op of a spec into steps over *values*.
 * A value is one tensor in one layout at one point of the program; every
 * step reads one or two values and makes a new one, so the plan is a
 * straight-line program in SSA form that the executor (runtime/) walks
 * from first step to last.  Nothing here calls MPI; a plan can be built,
 * printed and compared for a mesh of any size.
 *
 * Step kinds and what they do to the layout of their input value:
 *   EINSUM          local kernel; the output is a pending sum (partial)
 *                   over the axes of split summed dims
 *   SLICE           appends axis to the split of `dim` (local, no bytes)
 *   ALLGATHER       removes axis, the minor end of `dim`'s split
 *   ALLTOALL        moves axis from the minor end of `dim` to the minor
 *                   end of `dim2`
 *   ALLREDUCE       resolves the pending sum over `axes`
 *   REDUCE_SCATTER  resolves the pending sum over axis into a split of dim
 *   PERMUTE         reorders the nesting of the axes that split `dim`
 *                   (e.g. [data, model] -> [model, data]): every rank
 *                   sends its whole shard to one rank of the group over
 *                   `axes` (an MPI_Alltoallv with one peer; reported as
 *                   an alltoall)
 * `bytes` is what each rank hands to the MPI call: the element count of
 * the send buffer times the element size (the whole local input value in
 * every kind of collective).
 */
#ifndef MRT_PLAN_H
#define MRT_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "classify.h"
#include "layout.h"
#include "meshrt.h"
#include "spec.h"

typedef enum mrt_step_kind {
    MRT_STEP_EINSUM = 0,
    MRT_STEP_SLICE,
    MRT_STEP_ALLGATHER,
    MRT_STEP_ALLTOALL,
    MRT_STEP_ALLREDUCE,
    MRT_STEP_REDUCE_SCATTER,
    MRT_STEP_PERMUTE,
    MRT_STEP_KIND_COUNT
} mrt_step_kind;

/* "einsum", "slice", "allgather", "alltoall", "allreduce",
 * "reduce_scatter" (PERMUTE is named "alltoall": that is its MPI call). */
const char *mrt_step_kind_name(mrt_step_kind k);
/* 1 for the kinds that call MPI. */
int mrt_step_is_collective(mrt_step_kind k);

typedef struct mrt_value {
    int tensor;        /* spec tensor id */
    mrt_layout layout;
    int64_t local[MRT_MAX_DIMS]; /* shard extents */
    int64_t count;     /* elements per shard */
    int last_use;      /* index of the last step that reads it */
} mrt_value;

typedef struct mrt_step {
    mrt_step_kind kind;
    int op;            /* spec op index */
    int in, in2;       /* value ids (in2 = -1 unless a 2-input einsum) */
    int out;           /* value id */
    int dim, dim2;     /* dim indices in the input's layout (-1: none) */
    unsigned axes;     /* mesh axes of the collective or slice */
    int64_t group;     /* ranks per group (1 for local steps) */
    int64_t bytes;     /* per rank handed to MPI (0 for local steps) */
    double flops;      /* per rank (EINSUM) */
    mrt_einsum_class cls; /* EINSUM only */
} mrt_step;

typedef struct mrt_plan_op {
    int first_step, nsteps; /* the op's steps, contiguous */
    int out_value;          /* its result, in the output's home layout */
    int64_t comm_bytes;
    double flops;
} mrt_plan_op;

struct mrt_plan {
    char spec_path[PATH_MAX];
    mrt_mesh mesh;
    mrt_dtype dtype;
    int elsize;
    int ndims;
    char **dim_names;         /* [ndims], owned */
    int ntensors;
    int ninputs;              /* tensors 0..ninputs-1 are the inputs */
    char (*tensor_name)[MRT_NAME_MAX];
    int *tensor_value;        /* [ntensors] value holding each tensor */
    int nvalues, cap_values;
    mrt_value *value;
    int nsteps, cap_steps;
    mrt_step *step;
    int nops;
    mrt_plan_op *op;
    int noutputs;
    int *output;              /* tensor ids */
    int64_t comm_bytes;       /* totals per rank */
    double flops;
};

/* Appends a value with layout l (partial allowed) for tensor; returns its
 * id, or -1 when out of memory. */
int mrt_plan_add_value(mrt_plan *p, int tensor, const mrt_layout *l);
/* Appends a step (copied); fills bytes from the input value for
 * collectives and records last uses.  Returns its index or -1. */
int mrt_plan_add_step(mrt_plan *p, const mrt_step *s);

/* Emits the steps that move value `from` to layout `to` (same dims, same
 * order; `to` has no partial sums).  Returns the id of the value in
 * layout `to` (== from when nothing moves), or -1 when out of memory. */
int mrt_relayout_emit(mrt_plan *p, int op, int from, const mrt_layout *to);

/* The execution layout of an einsum: for each dim of the op (indexed by
 * spec dim id in exec->naxes/axes, sized spec->ndims), the mesh axes that
 * split it while the local kernel runs.  No axis twice. */
typedef struct mrt_exec_layout {
    int ndims;                  /* == spec->ndims */
    int *naxes;                 /* [ndims] */
    int (*axes)[MRT_MAX_AXES];  /* [ndims] */
} mrt_exec_layout;

/* Chooses the execution layout of op (see ops/choose.c for the rule). */
void mrt_choose_einsum_layout(const mrt_plan *p, const mrt_spec *s, int op,
                              mrt_exec_layout *exec);
/* Lowers one einsum op: input moves, kernel, reduction, output move. */
mrt_status mrt_lower_einsum(mrt_plan *p, const mrt_spec *s, int op,
                            mrt_error *err);

#endif
