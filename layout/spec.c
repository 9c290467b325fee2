/*
 * spec.c — lookups in a loaded spec, and freeing it.
 *
 * A spec owns every array it points to (dims, rules, tensors, ops,
 * outputs, the `layouts:` alternatives and their rules); mrt_spec_destroy frees them all and accepts NULL and
 * half-built specs (the loader uses it on its error path).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec.h"
#include "work.h"

static uint64_t name_hash(const char *name)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *name; name++)
        h = (h ^ (unsigned char)*name) * 1099511628211ull;
    return h;
}

int mrt_spec_find_tensor(const mrt_spec *s, const char *name)
{
    if (!s->hash_cap) { /* a spec built by hand, without the index */
        for (int i = 0; i < s->ntensors; i++)
            if (MRT_WORK(1), strcmp(s->tensor[i].name, name) == 0)
                return i;
        return -1;
    }
    unsigned mask = (unsigned)s->hash_cap - 1;
    for (unsigned h = (unsigned)name_hash(name) & mask;; h = (h + 1) & mask) {
        int id = s->tensor_hash[h] - 1;
        MRT_WORK(1);
        if (id < 0)
            return -1;
        if (strcmp(s->tensor[id].name, name) == 0)
            return id;
    }
}

/* Puts id into a table of cap slots (a power of two). */
static void hash_put(int *table, int cap, const mrt_spec *s, int id)
{
    unsigned mask = (unsigned)cap - 1;
    unsigned h = (unsigned)name_hash(s->tensor[id].name) & mask;
    while (MRT_WORK(1), table[h])
        h = (h + 1) & mask;
    table[h] = id + 1;
}

mrt_status mrt_spec_index_tensor(mrt_spec *s, int id)
{
    if (2 * (id + 1) > s->hash_cap) { /* grow and rehash */
        int cap = s->hash_cap ? 2 * s->hash_cap : 64;
        while (cap < 2 * (id + 1))
            cap *= 2;
        int *t = calloc((size_t)cap, sizeof *t);
        if (!t)
            return MRT_E_NOMEM;
        for (int i = 0; i < id; i++)
            hash_put(t, cap, s, i);
        free(s->tensor_hash);
        s->tensor_hash = t;
        s->hash_cap = cap;
    }
    hash_put(s->tensor_hash, s->hash_cap, s, id);
    return MRT_OK;
}

/* Grows *buf (room for *cap elements of size elsize) to hold n. */
static int grow(void **buf, int *cap, int n, size_t elsize)
{
    if (n <= *cap)
        return 0;
    int ncap = *cap > 8 ? *cap * 2 : 16;
    while (ncap < n)
        ncap *= 2;
    void *nb = realloc(*buf, (size_t)ncap * elsize);
    if (!nb)
        return -1;
    memset((char *)nb + (size_t)*cap * elsize, 0,
           (size_t)(ncap - *cap) * elsize);
    *buf = nb;
    *cap = ncap;
    return 0;
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
    if (grow((void **)&s->tensor, &s->cap_tensors, s->ntensors + 1,
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
    if (grow((void **)&s->op, &s->cap_ops, s->nops + 1, sizeof *s->op))
        return -1;
    s->op[s->nops] = *op;
    s->tensor[op->out].producer = s->nops;
    return s->nops++;
}

int mrt_spec_find_dim(const mrt_spec *s, const char *name)
{
    for (int i = 0; i < s->ndims; i++)
        if (MRT_WORK(1), strcmp(s->dim_name[i], name) == 0)
            return i;
    return -1;
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
    free(spec->tensor);
    free(spec->tensor_hash);
    free(spec->op);
    free(spec->output);
    for (int i = 0; spec->layouts && i < spec->nlayouts; i++)
        free(spec->layouts[i].rule);
    free(spec->layouts);
    free(spec);
}
