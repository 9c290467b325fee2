/*
 * spec.c — lookups in a loaded spec, and freeing it.
 *
 * A spec owns every array it points to (dims, rules, tensors, ops,
 * outputs, the `layouts:` alternatives and their rules, the lists of
 * `train:`); mrt_spec_destroy frees them all and accepts NULL and
 * half-built specs (the loader uses it on its error path).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "ir.h"
#include "work.h"

static const char *tensor_name(const void *ctx, int id)
{
    return ((const mrt_spec *)ctx)->tensor[id].name;
}

static const char *dim_name(const void *ctx, int id)
{
    return ((const mrt_spec *)ctx)->dim_name[id];
}

int mrt_spec_find_tensor(const mrt_spec *s, const char *name)
{
    if (!s->tensor_index.cap) { /* a spec built by hand, without the index */
        for (int i = 0; i < s->ntensors; i++)
            if (MRT_WORK(1), strcmp(s->tensor[i].name, name) == 0)
                return i;
        return -1;
    }
    return mrt_name_index_find(&s->tensor_index, name, tensor_name, s);
}

mrt_status mrt_spec_index_tensor(mrt_spec *s, int id)
{
    return mrt_name_index_add(&s->tensor_index, s->tensor[id].name, id,
                              tensor_name, s)
               ? MRT_E_NOMEM
               : MRT_OK;
}

int mrt_spec_add_tensor(mrt_spec *s, const char *name, const int *dims,
                        int ndims, int producer, mrt_mark at)
{
    int d[MRT_MAX_DIMS]; /* dims may point into s->tensor, which moves */
    if (ndims < 0 || ndims > MRT_MAX_DIMS)
        return -1;
    for (int i = 0; i < ndims; i++)
        d[i] = dims[i];
    dims = d;
    if (mrt_grow((void **)&s->tensor, &s->cap_tensors, s->ntensors + 1,
                 sizeof *s->tensor))
        return -1;
    int id = s->ntensors;
    mrt_spec_tensor *t = &s->tensor[id];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->mark = at;
    t->shape_mark = at;
    t->producer = producer;
    t->layout.ndims = ndims;
    for (int i = 0; i < ndims; i++) {
        t->layout.dim[i] = dims[i];
        t->layout.size[i] = s->dim_size[dims[i]];
    }
    if (mrt_spec_index_tensor(s, id))
        return -1;
    s->ntensors++;
    return id;
}

int mrt_spec_add_op(mrt_spec *s, const mrt_spec_op *op)
{
    if (mrt_grow((void **)&s->op, &s->cap_ops, s->nops + 1, sizeof *s->op))
        return -1;
    s->op[s->nops] = *op;
    s->tensor[op->out].producer = s->nops;
    return s->nops++;
}

int mrt_spec_find_dim(const mrt_spec *s, const char *name)
{
    if (!s || !name)
        return -1;
    if (!s->dim_index.cap) { /* a spec built by hand, without the index */
        for (int i = 0; i < s->ndims; i++)
            if (MRT_WORK(1), strcmp(s->dim_name[i], name) == 0)
                return i;
        return -1;
    }
    return mrt_name_index_find(&s->dim_index, name, dim_name, s);
}

mrt_status mrt_spec_index_dim(mrt_spec *s, int id)
{
    return mrt_name_index_add(&s->dim_index, s->dim_name[id], id, dim_name, s)
               ? MRT_E_NOMEM
               : MRT_OK;
}

mrt_status mrt_ir_nomem(const mrt_spec *s, mrt_error *err)
{
    return mrt_error_set(err, MRT_E_NOMEM, s->path, (mrt_mark){0, 0},
                         "out of memory");
}

mrt_status mrt_ir_add_train_outputs(mrt_spec *s, char *listed, mrt_error *err)
{
    const mrt_train *tr = &s->train;
    int more = 1 + 2 * tr->nparams + tr->nextra;
    int *o = realloc(s->output, (size_t)(s->noutputs + more) * sizeof *o);
    if (!o)
        return mrt_ir_nomem(s, err);
    s->output = o;
    /* the loss, the gradients, then the updates */
    for (int j = 0; j < more; j++) {
        int k = j - 1, t = j == 0 ? tr->loss
                           : k < tr->nparams ? tr->grad[k]
                           : (k -= tr->nparams) < tr->nextra
                               ? tr->extra_grad[k]
                               : tr->updated[k - tr->nextra];
        if (!listed[t]) {
            listed[t] = 1;
            s->output[s->noutputs++] = t;
        }
    }
    return MRT_OK;
}

void mrt_train_free(mrt_train *tr)
{
    free(tr->param);
    free(tr->grad);
    free(tr->updated);
    free(tr->param_mark);
    free(tr->extra);
    free(tr->extra_grad);
    free(tr->extra_mark);
    tr->param = tr->grad = tr->updated = tr->extra = tr->extra_grad = NULL;
    tr->param_mark = tr->extra_mark = NULL;
}

mrt_status mrt_train_alloc(mrt_train *tr, int nparams, int nextra)
{
    mrt_train_free(tr);
    size_t np = (size_t)(nparams > 0 ? nparams : 0) + 1,
           ne = (size_t)(nextra > 0 ? nextra : 0) + 1;
    tr->param = calloc(np, sizeof *tr->param);
    tr->grad = calloc(np, sizeof *tr->grad);
    tr->updated = calloc(np, sizeof *tr->updated);
    tr->param_mark = calloc(np, sizeof *tr->param_mark);
    tr->extra = calloc(ne, sizeof *tr->extra);
    tr->extra_grad = calloc(ne, sizeof *tr->extra_grad);
    tr->extra_mark = calloc(ne, sizeof *tr->extra_mark);
    if (!tr->param || !tr->grad || !tr->updated || !tr->param_mark ||
        !tr->extra || !tr->extra_grad || !tr->extra_mark) {
        mrt_train_free(tr);
        return MRT_E_NOMEM;
    }
    return MRT_OK;
}

mrt_status mrt_train_copy(mrt_train *dst, const mrt_train *src)
{
    *dst = *src;
    dst->param = dst->grad = dst->updated = dst->extra = NULL;
    dst->extra_grad = NULL;
    dst->param_mark = dst->extra_mark = NULL;
    if (!src->param) /* never trained: nothing to copy */
        return MRT_OK;
    if (mrt_train_alloc(dst, src->nparams, src->nextra))
        return MRT_E_NOMEM;
    size_t np = (size_t)src->nparams, ne = (size_t)src->nextra;
    memcpy(dst->param, src->param, np * sizeof *dst->param);
    memcpy(dst->grad, src->grad, np * sizeof *dst->grad);
    memcpy(dst->updated, src->updated, np * sizeof *dst->updated);
    memcpy(dst->param_mark, src->param_mark, np * sizeof *dst->param_mark);
    memcpy(dst->extra, src->extra, ne * sizeof *dst->extra);
    memcpy(dst->extra_grad, src->extra_grad, ne * sizeof *dst->extra_grad);
    memcpy(dst->extra_mark, src->extra_mark, ne * sizeof *dst->extra_mark);
    return MRT_OK;
}

void mrt_spec_destroy(mrt_spec *spec)
{
    if (!spec)
        return;
    free(spec->dim_name);
    free(spec->dim_names);
    free(spec->dim_size);
    free(spec->dim_mark);
    free(spec->rule);
    /* files belong to inputs of `tensors:`, which come first (a tensor
     * whose parse failed frees its own) */
    for (int i = 0;
         spec->tensor && i < spec->ntensors && spec->tensor[i].producer < 0;
         i++)
        free(spec->tensor[i].file);
    free(spec->tensor);
    mrt_name_index_free(&spec->tensor_index);
    mrt_name_index_free(&spec->dim_index);
    free(spec->op);
    free(spec->output);
    mrt_train_free(&spec->train);
    for (int i = 0; spec->layouts && i < spec->nlayouts; i++) {
        free(spec->layouts[i].rule);
        free(spec->layouts[i].entry);
        free(spec->layouts[i].entry_rules);
    }
    free(spec->layouts);
    free(spec);
}
