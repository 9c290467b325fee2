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

/* The tensor a block's `out:` name stands for, or -1. */
static int find_block_out(const mrt_spec *s, const char *name)
{
    for (int b = 0; b < s->nblocks; b++)
        for (int k = 0; k < s->block[b].nouts; k++)
            if (strcmp(s->block[b].out_name[k], name) == 0)
                return s->block[b].out_tensor[k];
    return -1;
}

int mrt_spec_find_tensor(const mrt_spec *s, const char *name)
{
    int id = -1;
    if (!s->tensor_index.cap) { /* a spec built by hand, without the index */
        for (int i = 0; id < 0 && i < s->ntensors; i++)
            if (MRT_WORK(1), strcmp(s->tensor[i].name, name) == 0)
                id = i;
    } else
        id = mrt_name_index_find(&s->tensor_index, name, tensor_name, s);
    return id >= 0 || !s->nblocks ? id : find_block_out(s, name);
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
    t->block = t->layer = -1;
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
    s->op[s->nops].block = s->op[s->nops].layer = -1; /* blocks stamp */
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
    int more = 1 + 2 * tr->nparams + tr->nextra + tr->nstate;
    int *o = realloc(s->output, (size_t)(s->noutputs + more) * sizeof *o);
    if (!o)
        return mrt_ir_nomem(s, err);
    s->output = o;
    /* the loss, the gradients, then the updates */
    for (int j = 0; j < more; j++) {
        int k = j - 1, t = j == 0                            ? tr->loss
                           : k < tr->nparams                 ? tr->grad[k]
                           : (k -= tr->nparams) < tr->nextra ? tr->extra_grad[k]
                           : (k -= tr->nextra) < tr->nparams
                               ? tr->updated[k]
                               : tr->state_next[k - tr->nparams];
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
    free(tr->state);
    free(tr->state_next);
    tr->state = tr->state_next = NULL;
    tr->nstate = 0;
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
    dst->state = dst->state_next = NULL;
    if (!src->param) /* never trained: nothing to copy */
        return MRT_OK;
    if (mrt_train_alloc(dst, src->nparams, src->nextra))
        return MRT_E_NOMEM;
    size_t ns = (size_t)src->nstate + 1;
    dst->nstate = src->nstate;
    dst->state = malloc(ns * sizeof *dst->state);
    dst->state_next = malloc(ns * sizeof *dst->state_next);
    if (!dst->state || !dst->state_next) {
        mrt_train_free(dst);
        return MRT_E_NOMEM;
    }
    if (src->nstate) {
        memcpy(dst->state, src->state, (ns - 1) * sizeof *dst->state);
        memcpy(dst->state_next, src->state_next,
               (ns - 1) * sizeof *dst->state_next);
    }
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
    /* files belong to inputs: of `tensors:`, or of a block's (a tensor
     * whose parse failed frees its own) */
    for (int i = 0; spec->tensor && i < spec->ntensors; i++)
        if (spec->tensor[i].producer < 0)
            free(spec->tensor[i].file);
    mrt_spec_blocks_free(spec);
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
        free(spec->layouts[i].recompute);
    }
    free(spec->layouts);
    free(spec);
}

void mrt_spec_blocks_free(mrt_spec *s)
{
    for (int b = 0; s->block && b < s->nblocks; b++) {
        mrt_spec_block *k = &s->block[b];
        free(k->first_op);
        free(k->last_op);
        free(k->first_tensor);
        free(k->last_tensor);
        free(k->out_name);
        free(k->out_tensor);
    }
    free(s->block);
    s->block = NULL;
    s->nblocks = 0;
}

static void *dup_or_null(const void *a, size_t n, size_t size, int *failed)
{
    void *c = malloc(n * size + 1);
    if (!c)
        *failed = 1;
    else if (n)
        memcpy(c, a, n * size);
    return c;
}

int mrt_spec_blocks_copy(mrt_spec *d, const mrt_spec *s)
{
    int failed = 0, n = s->nblocks;
    d->nblocks = 0;
    d->block = n ? calloc((size_t)n, sizeof *d->block) : NULL;
    if (n && !d->block)
        return -1;
    d->nblocks = n;
    for (int b = 0; b < n; b++) {
        const mrt_spec_block *k = &s->block[b];
        mrt_spec_block *c = &d->block[b];
        size_t cnt = (size_t)k->count, no = (size_t)k->nouts;
        *c = *k;
        c->first_op = dup_or_null(k->first_op, cnt, sizeof(int), &failed);
        c->last_op = dup_or_null(k->last_op, cnt, sizeof(int), &failed);
        c->first_tensor = dup_or_null(k->first_tensor, cnt, sizeof(int),
                                      &failed);
        c->last_tensor = dup_or_null(k->last_tensor, cnt, sizeof(int), &failed);
        c->out_name = dup_or_null(k->out_name, no, sizeof *k->out_name,
                                  &failed);
        c->out_tensor = dup_or_null(k->out_tensor, no, sizeof(int), &failed);
    }
    if (failed)
        mrt_spec_blocks_free(d);
    return failed ? -1 : 0;
}
