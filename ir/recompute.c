/*
 * recompute.c — activation recomputation of repeated blocks (`recompute:
 * true` on a `repeat:` block, or an alternative's `recompute:`).
 *
 * Reverse mode (grad.c) makes the backward program as if every forward
 * value were kept.  This pass rewrites it for the blocks asked for: right
 * before the first backward op of each of their instances it inserts a
 * copy of that instance's forward ops (phase backward, `recomputed` = 1 +
 * the forward op), each making a new tensor "<name>:re" in the layout of
 * the tensor it copies (`recomputes`), and the instance's backward ops
 * read those copies instead of the forward tensors.  The forward pass's
 * values of the instance are then read by nothing after it, so the
 * planner lets them die there (ops/plan_finish.c); only what the
 * instance reads from outside (its input, the carry; the parameters;
 * the dropout masks, which are inputs) stays live.  The copies are
 * planned like any op, so their flops and moves are costed and counted.
 *
 * The instances' backward ops are contiguous (grad.c walks the forward
 * ops from last to first), so a backward op of instance (b, i) that is
 * the first seen starts it; with microbatches, of instance (b, i) and
 * microbatch m (op.micro), and the re-run is that microbatch's ops of
 * the instance (the ops with its block, layer and micro: once the
 * forward program is unrolled per microbatch they need not lie in the
 * block's ranges).  Ops move (their indices shift by the ops
 * inserted before them) and the producers are renumbered; tensor ids do
 * not change (the copies are appended), so the train's lists stand.
 */
#include <stdlib.h>
#include <string.h>

#include "grad_names.h"
#include "ir.h"

typedef struct recompute_ctx {
    mrt_spec *s;
    mrt_error *err;
    mrt_spec_op *op; /* the new op list */
    int nop;
    int ntensors;        /* before the copies: re[] covers these */
    int *re;             /* [ntensors] the copy of a forward tensor, or -1 */
    int *base;           /* [nblocks] first index of the block's seen[] */
    unsigned char *seen; /* [instances] its recomputation is emitted */
    const unsigned char *on; /* [nblocks] recomputed by this pass */
    int micros;              /* train.microbatches (at least 1) */
    mrt_status st;
} recompute_ctx;

/* A copy "<name>:re" of forward tensor t, made by a re-run op. */
static int copy_tensor(recompute_ctx *r, int t)
{
    mrt_spec *s = r->s;
    char name[MRT_NAME_MAX];
    mrt_ir_name(s, "", s->tensor[t].name, ":re", 0, name);
    mrt_spec_tensor from = s->tensor[t]; /* s->tensor moves below */
    int id = mrt_spec_add_tensor(s, name, from.layout.dim, from.layout.ndims,
                                 -1, from.mark);
    if (id < 0) {
        r->st = mrt_ir_nomem(s, r->err);
        return -1;
    }
    mrt_spec_tensor *c = &s->tensor[id];
    c->layout = from.layout;
    memcpy(c->split_mark, from.split_mark, sizeof c->split_mark);
    c->shape_mark = from.shape_mark;
    c->own_layout = from.own_layout;
    c->stored = from.stored;
    c->block = from.block;
    c->layer = from.layer;
    c->recomputes = 1 + t;
    return id;
}

/* The tensor a recomputed instance's op reads for t: its copy, if any. */
static int read_of(const recompute_ctx *r, int t)
{
    return t < r->ntensors && r->re[t] >= 0 ? r->re[t] : t;
}

/* Appends the re-run of instance i of block b's forward ops of
 * microbatch m (-1: none): the forward ops of that instance and
 * microbatch, in order. */
static void rerun_instance(recompute_ctx *r, int b, int i, int m)
{
    const mrt_spec_block *k = &r->s->block[b];
    int n = r->s->train.microbatches > 1 ? r->s->train.nforward
                                         : k->last_op[i] + 1;
    for (int j = n > k->last_op[i] ? 0 : k->first_op[i]; j < n && !r->st; j++) {
        mrt_spec_op o = r->s->op[j];
        if (o.block != b || o.layer != i || o.micro != m)
            continue;
        int out = copy_tensor(r, o.out);
        if (out < 0)
            return;
        for (int q = 0; q < o.nin; q++)
            o.in[q] = read_of(r, o.in[q]);
        r->re[o.out] = out;
        o.out = out;
        o.phase = MRT_PHASE_BACKWARD;
        o.recomputed = 1 + j;
        o.fwd = 1 + j; /* its stage is the forward op's (micro: copied) */
        o.expect = (mrt_budget){-1, -1, {0, 0}}; /* the forward op's */
        r->op[r->nop++] = o;
    }
}

/* Backward op o in the new list: after its instance's re-run, reading
 * the copies. */
static void place_backward(recompute_ctx *r, mrt_spec_op o)
{
    int b = o.block, i = o.layer;
    if (o.phase == MRT_PHASE_BACKWARD && b >= 0 && i >= 0 && r->on[b]) {
        int m = o.micro < 0 ? 0 : o.micro;
        size_t at = (size_t)r->base[b] + (size_t)i * (size_t)r->micros + m;
        if (!r->seen[at]) {
            r->seen[at] = 1;
            rerun_instance(r, b, i, o.micro);
        }
        for (int n = 0; n < o.nin; n++)
            o.in[n] = read_of(r, o.in[n]);
    }
    r->op[r->nop++] = o;
}

/* The ops the pass adds (each forward op of a recomputed block re-runs
 * once), and each block's first index in seen[]. */
static size_t count_added(recompute_ctx *r, size_t *instances)
{
    const mrt_spec *s = r->s;
    size_t n = 0;
    *instances = 0;
    for (int b = 0; b < s->nblocks; b++) {
        r->base[b] = (int)*instances;
        *instances += (size_t)s->block[b].count * (size_t)r->micros;
    }
    for (int j = 0; j < s->train.nforward; j++)
        n += s->op[j].block >= 0 && s->op[j].layer >= 0 &&
             r->on[s->op[j].block];
    return n;
}

static mrt_status rewrite(recompute_ctx *r)
{
    mrt_spec *s = r->s;
    size_t instances;
    size_t added = count_added(r, &instances);
    r->op = malloc(((size_t)s->nops + added + 1) * sizeof *r->op);
    r->re = malloc(((size_t)r->ntensors + 1) * sizeof *r->re);
    r->seen = calloc(instances + 1, 1);
    if (!r->op || !r->re || !r->seen)
        return r->st = mrt_ir_nomem(s, r->err);
    for (int t = 0; t < r->ntensors; t++)
        r->re[t] = -1;
    int nf = s->train.nforward;
    memcpy(r->op, s->op, (size_t)nf * sizeof *r->op);
    r->nop = nf;
    for (int k = nf; k < s->nops && !r->st; k++)
        place_backward(r, s->op[k]);
    if (r->st)
        return r->st;
    free(s->op);
    s->op = r->op;
    r->op = NULL;
    s->nops = s->cap_ops = r->nop;
    for (int k = nf; k < s->nops; k++)
        s->tensor[s->op[k].out].producer = k;
    for (int b = 0; b < s->nblocks; b++)
        if (r->on[b])
            s->block[b].recompute = 1;
    return MRT_OK;
}

mrt_status mrt_ir_recompute(mrt_spec *s, const unsigned char *blocks,
                            mrt_error *err)
{
    if (!blocks || s->train.loss < 0 || !s->nblocks)
        return MRT_OK;
    recompute_ctx r = {
        .s = s,
        .err = err,
        .ntensors = s->ntensors,
        .micros = s->train.microbatches > 1 ? s->train.microbatches : 1};
    unsigned char *on = calloc((size_t)s->nblocks, 1);
    r.base = malloc((size_t)s->nblocks * sizeof *r.base);
    int any = 0;
    for (int b = 0; on && b < s->nblocks; b++) /* each block once */
        any |= on[b] = blocks[b] && !s->block[b].recompute;
    r.on = on;
    if (!on || !r.base)
        r.st = mrt_ir_nomem(s, err);
    else if (any)
        rewrite(&r);
    free(r.op);
    free(r.re);
    free(r.seen);
    free(r.base);
    free(on);
    return r.st;
}
