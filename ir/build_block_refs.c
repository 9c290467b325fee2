/*
 * build_block_refs.c — names of a block's tensors outside the block
 * (build.h: mrt_ir_block_expand), for `train:` (params, grads) and
 * `outputs:`.
 *
 * A name that is a tensor's is that tensor.  Else "h.attn.wq", block
 * name and inner name, is that tensor in every instance of h that has
 * it (h0.attn.wq, h1.attn.wq, ...); in a params or grads list, "h"
 * alone is every input of every instance of h (its `tensors:`), and
 * "all", alone in the list, every input of the program with an init
 * given (`init:` in a file), labels aside.  Anything else is kept as
 * written, and the caller's check of the list reports it.  An entry of
 * an alternative's `tensors:` or `ops:` takes "h.attn.wq" the same way
 * (mrt_ir_block_ref_ids): one entry per instance.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"

void mrt_ir_names_free(mrt_ir_names *l)
{
    free(l->buf);
    free(l->names);
    free(l->marks);
    free(l->how);
    memset(l, 0, sizeof *l);
}

/* Appends name (with the mark and wording of item j) to out; room
 * grows.  0, or -1 when out of memory. */
static int push(mrt_ir_names *out, int *cap, const char *name,
                const mrt_mark *marks, const char *const *how, int j)
{
    if (out->n == *cap) {
        int c = *cap ? 2 * *cap : 16;
        void *b = realloc(out->buf, (size_t)c * sizeof *out->buf);
        if (b)
            out->buf = b;
        void *m = realloc(out->marks, (size_t)c * sizeof *out->marks);
        if (m)
            out->marks = m;
        void *h = realloc(out->how, (size_t)c * sizeof *out->how);
        if (h)
            out->how = h;
        if (!b || !m || !h)
            return -1;
        *cap = c;
    }
    snprintf(out->buf[out->n], sizeof out->buf[0], "%s", name ? name : "");
    out->marks[out->n] = marks ? marks[j] : (mrt_mark){0, 0};
    out->how[out->n] = how ? how[j] : NULL;
    out->n++;
    return 0;
}

/* The block named name[0..len), or -1. */
static int find_block(const mrt_spec *s, const char *name, size_t len)
{
    for (int b = 0; b < s->nblocks; b++)
        if (strlen(s->block[b].name) == len &&
            !strncmp(s->block[b].name, name, len))
            return b;
    return -1;
}

/* 1 if tensor t is an input `params: all` takes. */
static int all_takes(const mrt_spec_tensor *t)
{
    return t->producer < 0 && !t->grad_like && !t->opt_layout &&
           t->init_given && t->init != MRT_INIT_LABELS;
}

/* Item j expanded into out: -1 when it is no reference (kept as is). */
static int expand_one(const mrt_spec *s, int params, int n, const char *name,
                      const mrt_mark *marks, const char *const *how, int j,
                      mrt_ir_names *out, int *cap)
{
    int before = out->n, fail = 0;
    if (!name || mrt_spec_find_tensor(s, name) >= 0)
        return -1;
    if (params && n == 1 && !strcmp(name, "all")) {
        for (int t = 0; !fail && t < s->ntensors; t++)
            if (all_takes(&s->tensor[t]))
                fail = push(out, cap, s->tensor[t].name, marks, how, j);
        return fail ? -2 : out->n > before ? out->n - before : -1;
    }
    const char *dot = strchr(name, '.');
    int b = find_block(s, name, dot ? (size_t)(dot - name) : strlen(name));
    if (b < 0 || (!dot && !params))
        return -1;
    for (int t = 0; !fail && t < s->ntensors; t++) {
        const mrt_spec_tensor *x = &s->tensor[t];
        if (x->block != b || x->grad_like || x->opt_layout)
            continue;
        const char *inner = strchr(x->name, '.');
        if (dot ? inner && !strcmp(inner, dot) : x->producer < 0)
            fail = push(out, cap, x->name, marks, how, j);
    }
    return fail ? -2 : out->n > before ? out->n - before : -1;
}

mrt_status mrt_ir_block_expand(mrt_ir_call *c, int params, int n,
                               const char *const *names, const mrt_mark *marks,
                               const char *const *how, mrt_ir_names *out)
{
    const mrt_spec *s = c->ir->s;
    int cap = 0;
    memset(out, 0, sizeof *out);
    for (int j = 0; names && j < n; j++) {
        int got = expand_one(s, params, n, names[j], marks, how, j, out, &cap);
        if (got == -1 && push(out, &cap, names[j], marks, how, j))
            got = -2;
        if (got == -2) {
            mrt_ir_names_free(out);
            return mrt_ir_fail(c, MRT_E_NOMEM, "out of memory");
        }
    }
    out->names = calloc((size_t)out->n + 1, sizeof *out->names);
    if (!out->names) {
        mrt_ir_names_free(out);
        return mrt_ir_fail(c, MRT_E_NOMEM, "out of memory");
    }
    for (int k = 0; k < out->n; k++)
        out->names[k] = out->buf[k];
    if (!marks) {
        free(out->marks);
        out->marks = NULL;
    }
    return MRT_OK;
}

int mrt_ir_block_ref_ids(const mrt_spec *s, const char *name, int *ids)
{
    const char *dot = name ? strchr(name, '.') : NULL;
    if (!dot || mrt_spec_find_tensor(s, name) >= 0)
        return 0;
    int b = find_block(s, name, (size_t)(dot - name)), n = 0;
    for (int t = 0; b >= 0 && t < s->ntensors; t++) {
        const mrt_spec_tensor *x = &s->tensor[t];
        const char *inner = x->block == b ? strchr(x->name, '.') : NULL;
        if (inner && !x->grad_like && !strcmp(inner, dot)) {
            if (ids)
                ids[n] = t;
            n++;
        }
    }
    return n;
}
