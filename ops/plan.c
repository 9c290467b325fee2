/*
 * plan.c — building a plan: the value and step tables, and the walk over
 * the spec's ops that lowers each one (ops/lower_einsum.c does the work).
 */
#include "plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const step_kind_names[] = {
    [MRT_STEP_EINSUM] = "einsum",
    [MRT_STEP_SLICE] = "slice",
    [MRT_STEP_ALLGATHER] = "allgather",
    [MRT_STEP_ALLTOALL] = "alltoall",
    [MRT_STEP_ALLREDUCE] = "allreduce",
    [MRT_STEP_REDUCE_SCATTER] = "reduce_scatter",
    [MRT_STEP_PERMUTE] = "alltoall",
};
_Static_assert(sizeof step_kind_names / sizeof step_kind_names[0] ==
                   MRT_STEP_KIND_COUNT,
               "one name per step kind");

const char *mrt_step_kind_name(mrt_step_kind k) { return step_kind_names[k]; }

int mrt_step_is_collective(mrt_step_kind k)
{
    return k != MRT_STEP_EINSUM && k != MRT_STEP_SLICE;
}

/* Grows *buf (of *cap elements of size elsize) to hold n; 0 on success. */
static int grow(void **buf, int *cap, int n, size_t elsize)
{
    if (n <= *cap)
        return 0;
    int ncap = *cap ? *cap * 2 : 16;
    while (ncap < n)
        ncap *= 2;
    void *nb = realloc(*buf, (size_t)ncap * elsize);
    if (!nb)
        return -1;
    *buf = nb;
    *cap = ncap;
    return 0;
}

int mrt_plan_add_value(mrt_plan *p, int tensor, const mrt_layout *l)
{
    if (grow((void **)&p->value, &p->cap_values, p->nvalues + 1,
             sizeof *p->value))
        return -1;
    mrt_value *v = &p->value[p->nvalues];
    memset(v, 0, sizeof *v);
    v->tensor = tensor;
    v->layout = *l;
    mrt_layout_shard_shape(l, &p->mesh, v->local);
    v->count = mrt_layout_shard_count(l, &p->mesh);
    v->last_use = -1;
    return p->nvalues++;
}

int mrt_plan_add_step(mrt_plan *p, const mrt_step *s)
{
    if (grow((void **)&p->step, &p->cap_steps, p->nsteps + 1,
             sizeof *p->step))
        return -1;
    mrt_step *t = &p->step[p->nsteps];
    *t = *s;
    if (mrt_step_is_collective(t->kind)) {
        t->group = mrt_mesh_group_size(&p->mesh, t->axes);
        t->bytes = p->value[t->in].count * p->elsize;
    } else if (t->kind == MRT_STEP_SLICE) {
        t->group = 1;
        t->bytes = 0;
    }
    p->value[t->in].last_use = p->nsteps;
    if (t->in2 >= 0)
        p->value[t->in2].last_use = p->nsteps;
    p->comm_bytes += t->bytes;
    p->flops += t->flops;
    return p->nsteps++;
}

void mrt_plan_destroy(mrt_plan *p)
{
    if (!p)
        return;
    if (p->dim_names)
        for (int i = 0; i < p->ndims; i++)
            free(p->dim_names[i]);
    free(p->dim_names);
    free(p->tensor_name);
    free(p->tensor_value);
    free(p->value);
    free(p->step);
    free(p->op);
    free(p->output);
    free(p);
}

/* Copies the names and sizes the plan needs, so it does not borrow s. */
static mrt_status copy_names(mrt_plan *p, const mrt_spec *s)
{
    p->ndims = s->ndims;
    p->dim_names = calloc((size_t)s->ndims + 1, sizeof *p->dim_names);
    p->ntensors = s->ntensors;
    p->tensor_name = calloc((size_t)s->ntensors + 1, sizeof *p->tensor_name);
    p->tensor_value = calloc((size_t)s->ntensors + 1, sizeof(int));
    p->nops = s->nops;
    p->op = calloc((size_t)s->nops + 1, sizeof *p->op);
    p->noutputs = s->noutputs;
    p->output = calloc((size_t)s->noutputs + 1, sizeof(int));
    if (!p->dim_names || !p->tensor_name || !p->tensor_value || !p->op ||
        !p->output)
        return MRT_E_NOMEM;
    for (int i = 0; i < s->ndims; i++)
        if (!(p->dim_names[i] = strdup(s->dim_name[i])))
            return MRT_E_NOMEM;
    for (int i = 0; i < s->ntensors; i++)
        memcpy(p->tensor_name[i], s->tensor[i].name, MRT_NAME_MAX);
    memcpy(p->output, s->output, (size_t)s->noutputs * sizeof(int));
    return MRT_OK;
}

mrt_status mrt_plan_create(const mrt_spec *s, mrt_plan **out,
                           mrt_error *err)
{
    *out = NULL;
    mrt_plan *p = calloc(1, sizeof *p);
    if (!p)
        return mrt_error_set(err, MRT_E_NOMEM, s->path, (mrt_mark){0},
                             "out of memory while planning");
    snprintf(p->spec_path, sizeof p->spec_path, "%s", s->path);
    p->mesh = s->mesh;
    p->dtype = s->dtype;
    p->elsize = mrt_dtype_size(s->dtype);
    mrt_status st = copy_names(p, s);
    if (st != MRT_OK)
        goto nomem;
    /* Inputs start in their home layouts. */
    for (int t = 0; t < s->ntensors; t++) {
        p->tensor_value[t] = -1;
        if (s->tensor[t].producer >= 0)
            continue;
        p->ninputs = t + 1;
        if ((p->tensor_value[t] =
                 mrt_plan_add_value(p, t, &s->tensor[t].layout)) < 0)
            goto nomem;
    }
    for (int i = 0; i < s->nops; i++) {
        p->op[i].first_step = p->nsteps;
        int64_t bytes0 = p->comm_bytes;
        double flops0 = p->flops;
        st = mrt_lower_einsum(p, s, i, err);
        if (st != MRT_OK)
            goto fail;
        p->op[i].nsteps = p->nsteps - p->op[i].first_step;
        p->op[i].out_value = p->tensor_value[s->op[i].out];
        p->op[i].comm_bytes = p->comm_bytes - bytes0;
        p->op[i].flops = p->flops - flops0;
    }
    *out = p;
    return MRT_OK;
nomem:
    st = mrt_error_set(err, MRT_E_NOMEM, s->path, (mrt_mark){0},
                       "out of memory while planning");
fail:
    mrt_plan_destroy(p);
    return st;
}

int64_t mrt_plan_comm_bytes(const mrt_plan *p) { return p->comm_bytes; }
double mrt_plan_flops(const mrt_plan *p) { return p->flops; }
