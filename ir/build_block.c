/*
 * build_block.c — repeated blocks (meshrt.h: mrt_ir_block_begin ...
 * mrt_ir_block_end; YAML: a `repeat:` item of `ops:`, yaml/
 * spec_blocks.c).
 *
 * A block is built by its caller once per instance: mrt_ir_block_next
 * opens instance i, and the ordinary mrt_ir_add_tensor / mrt_ir_add_op
 * calls that follow go through mrt_ir_block_tensor / mrt_ir_block_op,
 * which rename: a new tensor "w" becomes "<name><i>.w", an input name
 * is looked up as the instance's own first ("x" of `in:` is its outer
 * tensor in instance 0 and the carried tensor of instance i-1 after
 * that; "w" is "<name><i>.w" when the instance made it), else as an
 * outer tensor.  Each call's checks are the ordinary ones, on the
 * renamed call.  When an instance closes, its tensors and ops get the
 * block's index and the instance's (spec.h: block, layer) and its range
 * goes into the spec's block table; `out:` names become names of the
 * last instance's tensors (mrt_spec_find_tensor finds them).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "grow.h"

typedef struct link {
    char key[MRT_NAME_MAX], value[MRT_NAME_MAX];
    mrt_mark key_mark, value_mark;
} link;

struct mrt_ir_block {
    int id;       /* index in the spec's block table */
    int count;    /* instances */
    int instance; /* the open one; -1 before the first */
    int inside;   /* a renamed call is being made */
    int nlinks[3], cap[3];
    link *links[3]; /* by mrt_ir_link_kind */
    char prefix[MRT_NAME_MAX + 16];
    mrt_mark mark;
};

static const char *const link_key[] = {"in", "carry", "out"};

void mrt_ir_block_free(mrt_ir *ir)
{
    if (!ir || !ir->block)
        return;
    for (int k = 0; k < 3; k++)
        free(ir->block->links[k]);
    free(ir->block);
    ir->block = NULL;
}

/* The link of kind whose key is key, or NULL. */
static const link *find_link(const struct mrt_ir_block *b, int kind,
                             const char *key)
{
    for (int i = 0; i < b->nlinks[kind]; i++)
        if (!strcmp(b->links[kind][i].key, key))
            return &b->links[kind][i];
    return NULL;
}

/* The block's name, its dim and the rules of both. */
static mrt_status check_begin(mrt_ir_call *c, const char *name, const char *dim,
                              const mrt_mark at[3], int *d)
{
    const mrt_spec *s = c->ir->s;
    mrt_status st;
    mrt_ir_at(c, "name", &at[1]);
    if (c->ir->block)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "block '%.60s' is inside block '%s' (blocks do "
                           "not nest)",
                           name ? name : "?", s->block[c->ir->block->id].name);
    if ((st = mrt_ir_check_name(c, name, "block")))
        return st;
    size_t n = strlen(name);
    if (name[n - 1] >= '0' && name[n - 1] <= '9')
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "block name '%s' ends with a digit (instance 1 "
                           "of '%s' would read as '%s1')",
                           name, name, name);
    for (int b = 0; b < s->nblocks; b++)
        if (!strcmp(s->block[b].name, name))
            return mrt_ir_fail(c, MRT_E_SPEC,
                               "block '%s' is defined twice (first at "
                               "%d:%d)",
                               name, s->block[b].mark.line,
                               s->block[b].mark.column);
    if (mrt_spec_find_tensor(s, name) >= 0)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "block name '%s' is a tensor's name already", name);
    mrt_ir_at(c, "repeat_dim", &at[2]);
    if ((st = mrt_ir_dim(c, dim, d)))
        return st;
    if (s->dim_size[*d] < 1 || s->dim_size[*d] > 100000)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "block '%s' repeats %lld times (dim '%s'; from "
                           "1 to 100000)",
                           name, (long long)s->dim_size[*d], dim);
    return MRT_OK;
}

/* A new entry of the spec's block table for block `name` over dim d. */
static mrt_status new_entry(mrt_ir_call *c, const char *name, int d,
                            mrt_mark mark)
{
    mrt_spec *s = c->ir->s;
    int cap = s->nblocks, n = (int)s->dim_size[d];
    mrt_spec_block *nb = realloc(s->block, (size_t)(cap + 1) * sizeof *nb);
    if (!nb)
        return mrt_ir_fail(c, MRT_E_NOMEM, "out of memory");
    s->block = nb;
    mrt_spec_block *k = &s->block[s->nblocks];
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "%s", name);
    k->mark = mark;
    k->dim = d;
    k->count = n;
    k->first_op = calloc((size_t)n, sizeof(int));
    k->last_op = calloc((size_t)n, sizeof(int));
    k->first_tensor = calloc((size_t)n, sizeof(int));
    k->last_tensor = calloc((size_t)n, sizeof(int));
    s->nblocks++; /* (freed with the spec, even half made) */
    if (!k->first_op || !k->last_op || !k->first_tensor || !k->last_tensor)
        return mrt_ir_fail(c, MRT_E_NOMEM, "out of memory");
    return MRT_OK;
}

mrt_status mrt_ir_block_begin_at(mrt_ir *ir, const char *name, const char *dim,
                                 const mrt_mark at[3], mrt_error *err)
{
    static const mrt_mark none[3];
    mrt_ir_call c;
    int d = -1;
    mrt_status st = mrt_ir_begin_untrained(&c, ir, "mrt_ir_block_begin", "name",
                                           name,
                                           "blocks come before "
                                           "mrt_ir_set_train");
    if (!at)
        at = none;
    c.entry = at[0];
    if (!st)
        st = check_begin(&c, name, dim, at, &d);
    if (!st)
        st = new_entry(&c, name, d, at[0]);
    if (!st && !(ir->block = calloc(1, sizeof *ir->block)))
        st = mrt_ir_fail(&c, MRT_E_NOMEM, "out of memory");
    if (!st) {
        ir->block->id = ir->s->nblocks - 1;
        ir->block->count = ir->s->block[ir->block->id].count;
        ir->block->instance = -1;
        ir->block->mark = at[0];
    }
    return mrt_ir_end(&c, st, err);
}

mrt_status mrt_ir_block_begin(mrt_ir *ir, const char *name,
                              const char *repeat_dim, mrt_error *err)
{
    return mrt_ir_block_begin_at(ir, name, repeat_dim, NULL, err);
}

/* The checks of a link: names, no key twice, a carry's in. */
static mrt_status check_link(mrt_ir_call *c, mrt_ir_link_kind kind,
                             const char *key, const char *value,
                             const mrt_mark at[2])
{
    const struct mrt_ir_block *b = c->ir->block;
    const char *block = c->ir->s->block[b->id].name;
    mrt_status st;
    mrt_ir_at(c, "inner", &at[0]);
    if (b->instance >= 0)
        return mrt_ir_fail(c, MRT_E_USAGE,
                           "the links of block '%s' come before its first "
                           "instance (mrt_ir_block_next)",
                           block);
    if ((st = mrt_ir_check_name(c, key, "tensor")))
        return st;
    if (find_link(b, kind, key))
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "'%s' is named twice in '%s' of block '%s'", key,
                           link_key[kind], block);
    if (kind == MRT_IR_LINK_CARRY && !find_link(b, MRT_IR_LINK_IN, key))
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "carried name '%s' of block '%s' has no 'in' (its "
                           "value in instance 0)",
                           key, block);
    if (kind == MRT_IR_LINK_OUT && mrt_spec_find_tensor(c->ir->s, key) >= 0)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "'out' name '%s' of block '%s' is a tensor's name "
                           "already",
                           key, block);
    if (kind == MRT_IR_LINK_IN && mrt_spec_find_tensor(c->ir->s, key) >= 0)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "'in' name '%s' of block '%s' has the name of an "
                           "outer tensor (inside the block it would hide "
                           "it: rename one)",
                           key, block);
    mrt_ir_at(c, "value", &at[1]);
    if ((st = mrt_ir_check_name(c, value, "tensor")))
        return st;
    if (kind == MRT_IR_LINK_IN && mrt_spec_find_tensor(c->ir->s, value) < 0)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "unknown tensor '%s' in 'in' of block '%s'", value,
                           block);
    return MRT_OK;
}

/* MRT_OK when a block is open (after mrt_ir_block_begin), else the
 * usage error every call inside a block gives without one. */
static mrt_status block_open(mrt_ir_call *c, const mrt_ir *ir)
{
    return ir->block ? MRT_OK
                     : mrt_ir_fail(c, MRT_E_USAGE,
                                   "no block is open (mrt_ir_block_begin)");
}

mrt_status mrt_ir_block_link_at(mrt_ir *ir, mrt_ir_link_kind kind,
                                const char *key, const char *value,
                                const mrt_mark at[2], mrt_error *err)
{
    static const mrt_mark none[2];
    static const char *const fn[] = {"mrt_ir_block_in", "mrt_ir_block_carry",
                                     "mrt_ir_block_out"};
    mrt_ir_call c;
    int k = kind == MRT_IR_LINK_CARRY || kind == MRT_IR_LINK_OUT ? kind : 0;
    mrt_status st = mrt_ir_begin(&c, ir, fn[k]);
    if (!at)
        at = none;
    c.entry = at[0];
    if (!st)
        st = block_open(&c, ir);
    if (!st)
        st = check_link(&c, (mrt_ir_link_kind)k, key, value, at);
    struct mrt_ir_block *b = st ? NULL : ir->block;
    if (b && mrt_grow((void **)&b->links[k], &b->cap[k], b->nlinks[k] + 1,
                      sizeof(link)))
        st = mrt_ir_fail(&c, MRT_E_NOMEM, "out of memory");
    else if (b) {
        link *l = &b->links[k][b->nlinks[k]++];
        snprintf(l->key, sizeof l->key, "%s", key);
        snprintf(l->value, sizeof l->value, "%s", value);
        l->key_mark = at[0];
        l->value_mark = at[1];
    }
    return mrt_ir_end(&c, st, err);
}

mrt_status mrt_ir_block_in(mrt_ir *ir, const char *inner, const char *outer,
                           mrt_error *err)
{
    return mrt_ir_block_link_at(ir, MRT_IR_LINK_IN, inner, outer, NULL, err);
}

mrt_status mrt_ir_block_carry(mrt_ir *ir, const char *inner, const char *from,
                              mrt_error *err)
{
    return mrt_ir_block_link_at(ir, MRT_IR_LINK_CARRY, inner, from, NULL, err);
}

mrt_status mrt_ir_block_out(mrt_ir *ir, const char *outer, const char *inner,
                            mrt_error *err)
{
    return mrt_ir_block_link_at(ir, MRT_IR_LINK_OUT, outer, inner, NULL, err);
}

mrt_status mrt_ir_block_recompute_at(mrt_ir *ir, int on, const mrt_mark *at,
                                     mrt_error *err)
{
    mrt_ir_call c;
    mrt_status st = mrt_ir_begin(&c, ir, "mrt_ir_block_recompute");
    if (!st)
        st = block_open(&c, ir);
    if (!st) {
        mrt_spec_block *k = &ir->s->block[ir->block->id];
        k->recompute_asked = on != 0;
        k->recompute_mark = at ? *at : ir->block->mark;
    }
    return mrt_ir_end(&c, st, err);
}

mrt_status mrt_ir_block_recompute(mrt_ir *ir, int on, mrt_error *err)
{
    return mrt_ir_block_recompute_at(ir, on, NULL, err);
}

mrt_status mrt_ir_block_regather_at(mrt_ir *ir, int on, mrt_error *err)
{
    mrt_ir_call c;
    mrt_status st = mrt_ir_begin(&c, ir, "mrt_ir_block_regather");
    if (!st)
        st = block_open(&c, ir);
    if (!st)
        ir->s->block[ir->block->id].regather = on != 0;
    return mrt_ir_end(&c, st, err);
}

mrt_status mrt_ir_block_regather(mrt_ir *ir, int on, mrt_error *err)
{
    return mrt_ir_block_regather_at(ir, on, err);
}

/* The results of the forward ops of every instance of the blocks that
 * regather: moved again for the backward pass (ops/relayout.c's
 * already_moved reads `reshard`). */
static void apply_regather(mrt_spec *s)
{
    for (int b = 0; b < s->nblocks; b++)
        for (int i = 0; s->block[b].regather && i < s->block[b].count; i++)
            for (int t = s->block[b].first_tensor[i];
                 t <= s->block[b].last_tensor[i]; t++) {
                int op = s->tensor[t].producer;
                if (op >= 0 && s->op[op].phase == MRT_PHASE_FORWARD)
                    s->tensor[t].reshard = 1;
            }
}

mrt_status mrt_ir_block_apply_recompute(mrt_ir_call *c)
{
    mrt_spec *s = c->ir->s;
    apply_regather(s);
    unsigned char *on = calloc((size_t)s->nblocks + 1, 1);
    if (!on)
        return mrt_ir_fail(c, MRT_E_NOMEM, "out of memory");
    for (int b = 0; b < s->nblocks; b++)
        on[b] = (unsigned char)s->block[b].recompute_asked;
    mrt_status st = mrt_ir_recompute(s, on, &c->e);
    free(on);
    return st;
}

mrt_status mrt_ir_block_check_recompute(mrt_ir_call *c)
{
    const mrt_spec *s = c->ir->s;
    for (int b = 0; s->train.loss < 0 && b < s->nblocks; b++)
        if (s->block[b].recompute_asked) {
            mrt_ir_at(c, NULL, &s->block[b].recompute_mark);
            return mrt_ir_fail(c, MRT_E_SPEC,
                               "block '%s' has recompute: true but the "
                               "program has no train: (recomputation "
                               "re-runs forward ops in the backward pass)",
                               s->block[b].name);
        }
    return MRT_OK;
}

/* "<block><i>.<inner>" into out; 0, or -1 when too long. */
static int full_name(const mrt_spec *s, int block, int i, const char *inner,
                     char out[MRT_NAME_MAX])
{
    char buf[3 * MRT_NAME_MAX];
    int n = snprintf(buf, sizeof buf, "%s%d.%s", s->block[block].name, i,
                     inner);
    if (n < 0 || n >= MRT_NAME_MAX)
        return -1;
    memcpy(out, buf, (size_t)n + 1);
    return 0;
}

const char *mrt_ir_block_full_name(const mrt_ir *ir, const char *inner,
                                   char out[MRT_NAME_MAX])
{
    const struct mrt_ir_block *b = ir ? ir->block : NULL;
    if (!b || !ir->s || !inner || b->instance < 0 || b->instance >= b->count ||
        full_name(ir->s, b->id, b->instance, inner, out))
        return NULL;
    return out;
}

/* The tensor id inner name `key` of the open block stands for in
 * instance i (an `in:` or carry, or the instance's own), or -1. */
static int inner_tensor(const mrt_spec *s, const struct mrt_ir_block *b, int i,
                        const char *key)
{
    char name[MRT_NAME_MAX];
    const link *in = find_link(b, MRT_IR_LINK_IN, key);
    const link *carry = find_link(b, MRT_IR_LINK_CARRY, key);
    if (in && (i == 0 || !carry))
        return mrt_spec_find_tensor(s, in->value);
    if (in)
        return full_name(s, b->id, i - 1, carry->value, name)
                   ? -1
                   : mrt_spec_find_tensor(s, name);
    if (full_name(s, b->id, i, key, name))
        return -1;
    int id = mrt_spec_find_tensor(s, name);
    return id >= s->block[b->id].first_tensor[i] ? id : -1;
}

/* The instance's range [first, now) of tensors and ops stamped, and
 * its last ones recorded. */
static void close_instance(mrt_spec *s, struct mrt_ir_block *b)
{
    mrt_spec_block *k = &s->block[b->id];
    int i = b->instance;
    k->last_tensor[i] = s->ntensors - 1;
    k->last_op[i] = s->nops - 1;
    for (int t = k->first_tensor[i]; t < s->ntensors; t++) {
        s->tensor[t].block = b->id;
        s->tensor[t].layer = i;
    }
    for (int o = k->first_op[i]; o < s->nops; o++) {
        s->op[o].block = b->id;
        s->op[o].layer = i;
    }
}

/* A carried value has the dims of the tensor it follows (instance 0's
 * `in:`), in the same order. */
static mrt_status check_carry(mrt_ir_call *c, const struct mrt_ir_block *b,
                              const link *l)
{
    const mrt_spec *s = c->ir->s;
    char x[MRT_SPEC_LIST_MAX], y[MRT_SPEC_LIST_MAX];
    int to = inner_tensor(s, b, b->instance, l->value);
    int from = mrt_spec_find_tensor(
        s, find_link(b, MRT_IR_LINK_IN, l->key)->value);
    const mrt_layout *a = &s->tensor[to].layout, *d = &s->tensor[from].layout;
    int same = a->ndims == d->ndims;
    for (int k = 0; same && k < a->ndims; k++)
        same = a->dim[k] == d->dim[k];
    if (same)
        return MRT_OK;
    mrt_ir_at(c, "from", &l->value_mark);
    return mrt_ir_fail(c, MRT_E_SPEC,
                       "carried '%s' of block '%s' is '%s' %s in instance 0 "
                       "but '%s' %s after (a carry keeps its dims, in order)",
                       l->key, s->block[b->id].name, s->tensor[from].name,
                       mrt_spec_shape_str(s, d, x, sizeof x), l->value,
                       mrt_spec_shape_str(s, a, y, sizeof y));
}

/* The checks when instance i closes: it has ops, and each carried
 * value and `out:` exists in it. */
static mrt_status check_instance(mrt_ir_call *c, const struct mrt_ir_block *b)
{
    const mrt_spec *s = c->ir->s;
    const mrt_spec_block *k = &s->block[b->id];
    int i = b->instance;
    mrt_ir_at(c, "block", &b->mark);
    if (k->first_op[i] == s->nops)
        return mrt_ir_fail(c, MRT_E_SPEC, "block '%s' has no op", k->name);
    for (int kind = MRT_IR_LINK_CARRY; kind <= MRT_IR_LINK_OUT; kind++)
        for (int j = 0; j < b->nlinks[kind]; j++) {
            const link *l = &b->links[kind][j];
            mrt_status st = MRT_OK;
            if (inner_tensor(s, b, i, l->value) >= 0) {
                if (kind == MRT_IR_LINK_CARRY && (st = check_carry(c, b, l)))
                    return st;
                continue;
            }
            mrt_ir_at(c, "value", &l->value_mark);
            return mrt_ir_fail(c, MRT_E_SPEC,
                               "'%s' of block '%s' names '%s', which no "
                               "instance makes (a tensor of its 'tensors' "
                               "or the 'out' of one of its ops)",
                               link_key[kind], k->name, l->value);
        }
    return MRT_OK;
}

int mrt_ir_block_next(mrt_ir *ir, mrt_error *err)
{
    mrt_ir_call c;
    mrt_status st = mrt_ir_begin(&c, ir, "mrt_ir_block_next");
    if (!st)
        st = block_open(&c, ir);
    struct mrt_ir_block *b = st ? NULL : ir->block;
    if (!st && b->instance >= b->count)
        st = mrt_ir_fail(&c, MRT_E_USAGE,
                         "every instance is built already "
                         "(mrt_ir_block_end follows)");
    if (!st && b->instance >= 0) {
        close_instance(ir->s, b);
        st = check_instance(&c, b);
    }
    for (int j = 0; !st && b->instance < 0 && j < b->nlinks[MRT_IR_LINK_IN];
         j++) {
        const link *l = &b->links[MRT_IR_LINK_IN][j];
        mrt_ir_at(&c, "inner", &l->key_mark);
        if (!find_link(b, MRT_IR_LINK_CARRY, l->key))
            st = mrt_ir_fail(&c, MRT_E_SPEC,
                             "'in' name '%s' of block '%s' is not carried "
                             "(give it in 'carry': the tensor of instance "
                             "i-1 it is in instance i)",
                             l->key, ir->s->block[b->id].name);
    }
    if (!st && ++b->instance < b->count) {
        mrt_spec_block *k = &ir->s->block[b->id];
        k->first_tensor[b->instance] = ir->s->ntensors;
        k->first_op[b->instance] = ir->s->nops;
        snprintf(b->prefix, sizeof b->prefix, "%s%d.", k->name, b->instance);
    }
    mrt_ir_end(&c, st, err);
    return st || b->instance >= b->count ? -1 : b->instance;
}

/* The `out:` names of the closed block into its table entry. */
static mrt_status block_outs(mrt_ir_call *c, const struct mrt_ir_block *b)
{
    mrt_spec *s = c->ir->s;
    mrt_spec_block *k = &s->block[b->id];
    int n = b->nlinks[MRT_IR_LINK_OUT];
    k->out_name = calloc((size_t)n + 1, sizeof *k->out_name);
    k->out_tensor = calloc((size_t)n + 1, sizeof *k->out_tensor);
    if (!k->out_name || !k->out_tensor)
        return mrt_ir_fail(c, MRT_E_NOMEM, "out of memory");
    for (int j = 0; j < n; j++) {
        const link *l = &b->links[MRT_IR_LINK_OUT][j];
        int id = inner_tensor(s, b, b->count - 1, l->value);
        mrt_ir_at(c, "outer", &l->key_mark);
        if (mrt_spec_find_tensor(s, l->key) >= 0)
            return mrt_ir_fail(c, MRT_E_SPEC,
                               "'out' name '%s' of block '%s' is a "
                               "tensor's name already",
                               l->key, k->name);
        snprintf(k->out_name[k->nouts], sizeof k->out_name[0], "%s", l->key);
        k->out_tensor[k->nouts++] = id;
    }
    return MRT_OK;
}

mrt_status mrt_ir_block_end(mrt_ir *ir, mrt_error *err)
{
    mrt_ir_call c;
    mrt_status st = mrt_ir_begin(&c, ir, "mrt_ir_block_end");
    if (!st)
        st = block_open(&c, ir);
    struct mrt_ir_block *b = st ? NULL : ir->block;
    if (!st && b->instance < b->count - 1)
        st = mrt_ir_fail(&c, MRT_E_USAGE,
                         "block '%s' ends with %d of its %d instances built "
                         "(call mrt_ir_block_next until it returns -1)",
                         ir->s->block[b->id].name, b->instance + 1, b->count);
    if (!st && b->instance == b->count - 1) {
        close_instance(ir->s, b);
        st = check_instance(&c, b);
        b->instance++;
    }
    if (!st)
        st = block_outs(&c, b);
    if (!st)
        mrt_ir_block_free(ir);
    return mrt_ir_end(&c, st, err);
}

/* An inner name of the open block: a tensor name no outer tensor and
 * no link of the block has. */
static mrt_status check_inner(mrt_ir_call *c, const char *name)
{
    const struct mrt_ir_block *b = c->ir->block;
    const char *block = c->ir->s->block[b->id].name;
    mrt_status st = mrt_ir_check_name(c, name, "tensor");
    if (st)
        return st;
    if (find_link(b, MRT_IR_LINK_IN, name))
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "tensor '%s' of block '%s' is an 'in' name of the "
                           "block already",
                           name, block);
    int outer = mrt_spec_find_tensor(c->ir->s, name);
    if (outer >= 0)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "tensor '%s' of block '%s' has the name of an "
                           "outer tensor (inside the block it would hide "
                           "it: rename one)",
                           name, block);
    char full[MRT_NAME_MAX];
    if (full_name(c->ir->s, b->id, b->instance, name, full))
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "tensor name '%s%s' is too long (at most %d "
                           "characters)",
                           c->ir->block->prefix, name, MRT_NAME_MAX - 1);
    return MRT_OK;
}

/* The open instance of a call fn on ir, or -1 (no block: an ordinary
 * call), or -2 (a block is open but no instance: the call's error is
 * in ir and *st). */
static int renaming(mrt_ir *ir, const char *fn, mrt_error *err, mrt_status *st)
{
    if (!ir || ir->error.code || !ir->s || !ir->block || ir->block->inside)
        return -1;
    const struct mrt_ir_block *b = ir->block;
    if (b->instance >= 0 && b->instance < b->count)
        return b->instance;
    mrt_ir_call c;
    mrt_ir_begin(&c, ir, fn);
    mrt_ir_at(&c, NULL, &b->mark);
    *st = mrt_ir_end(
        &c,
        mrt_ir_fail(&c, MRT_E_USAGE,
                    "block '%s' is open but no instance is (tensors and ops "
                    "of a block come after mrt_ir_block_next, the block's "
                    "end at mrt_ir_block_end)",
                    ir->s->block[b->id].name),
        err);
    return -2;
}

int mrt_ir_block_tensor(mrt_ir *ir, const mrt_ir_tensor *d,
                        const mrt_ir_tensor_at *at, mrt_error *err)
{
    mrt_status st = MRT_OK;
    int i = d ? renaming(ir, "mrt_ir_add_tensor", err, &st) : -1;
    if (i < 0)
        return i == -2 ? (int)st : -1;
    mrt_ir_call c;
    char name[MRT_NAME_MAX];
    st = mrt_ir_begin(&c, ir, "mrt_ir_add_tensor");
    mrt_ir_at(&c, "name", at ? &at->mark : NULL);
    if (!st)
        st = check_inner(&c, d->name);
    if (st)
        return mrt_ir_end(&c, st, err);
    mrt_ir_tensor t = *d;
    full_name(ir->s, ir->block->id, i, d->name, name); /* (checked) */
    t.name = name;
    ir->block->inside = 1;
    st = mrt_ir_add_tensor_at(ir, &t, at, err);
    ir->block->inside = 0;
    if (!st && d->init == MRT_IR_INIT_RANDOM)
        ir->s->tensor[ir->s->ntensors - 1].seed =
            d->seed + (uint64_t)i * UINT64_C(0x9E3779B97F4A7C15);
    return st;
}

int mrt_ir_block_op(mrt_ir *ir, const mrt_ir_op *o, const mrt_ir_op_at *at,
                    mrt_error *err)
{
    mrt_status st = MRT_OK;
    int i = o ? renaming(ir, "mrt_ir_add_op", err, &st) : -1;
    if (i < 0)
        return i == -2 ? (int)st : -1;
    mrt_ir_call c;
    char out[MRT_NAME_MAX];
    const mrt_spec *s = ir->s;
    st = mrt_ir_begin(&c, ir, "mrt_ir_add_op");
    mrt_ir_at(&c, "out", at ? &at->out_mark : NULL);
    if (!st)
        st = check_inner(&c, o->out);
    if (st)
        return mrt_ir_end(&c, st, err);
    mrt_ir_op r = *o;
    char in[2][MRT_NAME_MAX]; /* (s->tensor moves as the op is added) */
    full_name(s, ir->block->id, i, o->out, out); /* (checked) */
    r.out = out;
    for (int j = 0; j < 2; j++) {
        int id = o->in[j] ? inner_tensor(s, ir->block, i, o->in[j]) : -1;
        if (id >= 0) {
            snprintf(in[j], sizeof in[j], "%s", s->tensor[id].name);
            r.in[j] = in[j];
        }
    }
    ir->block->inside = 1;
    st = mrt_ir_add_op_at(ir, &r, at, err);
    ir->block->inside = 0;
    return st;
}
