/*
 * program_hash.c — the fingerprint of a spec's program (program_hash.h):
 * FNV-1a over its computation, field by field, never over a struct's
 * bytes (padding, pointers and marks would make equal programs differ).
 */
#include <string.h>

#include "program_hash.h"

static uint64_t mix(uint64_t h, const void *data, size_t n)
{
    const unsigned char *b = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static uint64_t mix_int(uint64_t h, int64_t v)
{
    return mix(h, &v, sizeof v);
}

static uint64_t mix_double(uint64_t h, double v)
{
    return mix(h, &v, sizeof v);
}

/* a string and its end, so "ab" + "c" differs from "a" + "bc" */
static uint64_t mix_str(uint64_t h, const char *s)
{
    return mix(h, s, strlen(s) + 1);
}

static uint64_t mix_dim(uint64_t h, const mrt_spec *s, int dim)
{
    return dim >= 0 && dim < s->ndims ? mix_str(h, s->dim_name[dim])
                                      : mix_int(h, dim);
}

static uint64_t mix_tensor(uint64_t h, const mrt_spec *s, int t)
{
    const mrt_spec_tensor *x = &s->tensor[t];
    h = mix_str(h, x->name);
    h = mix_int(h, x->layout.ndims);
    for (int i = 0; i < x->layout.ndims; i++) {
        h = mix_dim(h, s, x->layout.dim[i]);
        h = mix_int(h, x->layout.size[i]);
    }
    if (x->stored) /* (only then: the hashes of float programs stay) */
        h = mix_int(h, 1000 + x->stored);
    return mix_int(h, x->producer >= 0);
}

static uint64_t mix_op(uint64_t h, const mrt_spec *s, int i)
{
    const mrt_spec_op *o = &s->op[i];
    h = mix_int(h, o->kind);
    h = mix_int(h, o->nin);
    for (int k = 0; k < o->nin && k < 2; k++)
        h = mix_int(h, o->in[k]);
    h = mix_int(h, o->out);
    if (o->kind == MRT_OP_MAP) {
        h = mix_int(h, o->fn);
        h = mix_double(h, o->c);
    }
    if (o->kind == MRT_OP_RENAME) {
        h = mix_dim(h, s, o->from_dim);
        h = mix_dim(h, s, o->to_dim);
    }
    if (o->kind == MRT_OP_GATHER || o->kind == MRT_OP_SCATTER_ADD)
        h = mix_dim(h, s, o->from_dim);
    return mix_int(h, o->phase);
}

uint64_t mrt_program_hash(const mrt_spec *s)
{
    uint64_t h = 1469598103934665603ull;
    h = mix_int(h, s->dtype);
    h = mix_int(h, s->ntensors);
    for (int t = 0; t < s->ntensors; t++)
        h = mix_tensor(h, s, t);
    h = mix_int(h, s->nops);
    for (int i = 0; i < s->nops; i++)
        h = mix_op(h, s, i);
    h = mix_int(h, s->noutputs);
    for (int k = 0; k < s->noutputs; k++)
        h = mix_int(h, s->output[k]);
    h = mix_int(h, s->train.loss);
    for (int k = 0; s->train.loss >= 0 && k < s->train.nparams; k++)
        h = mix_int(h, s->train.param[k]);
    return h;
}
