/*
 * grad.c — reverse mode: `train:` (or mrt_ir_set_train) makes the
 * backward program by reverse-mode differentiation of the primitive ops,
 * then hands the gradients to the optimizer (optimizer.c).  It reads only the IR (spec.h), never YAML.
 *
 *   train: {loss: L, params: [w1, w2], lr: 0.01, steps: 5, grads: [x]}
 *
 * L must be a scalar.  Walking the forward ops from last to first, each
 * op whose result has a gradient appends the ops that make the gradient
 * of each input that depends on a parameter ("grad:h"), built from the
 * same primitives as the forward program, so the planner shards and
 * costs them like any op:
 *
 *   einsum C = A·B      dA = einsum(dC, B -> A's dims)   (the gradients
 *                       of a contraction are contractions; a dim of A
 *                       summed on its own is broadcast back)
 *   sum over dims       dA = dC broadcast over them
 *   add / sub           dA = ±dC summed over the dims A was broadcast in
 *   mul / div           dA = dC·B, dB = dC·A (div: dC/B, -dC·C/B)
 *   dropout(A, M)       dA = dropout(dC, M): the same 1-byte mask
 *   unary f             dA = dC·f'(A) (a map of dC and A or C)
 *   reduce_max          dA = dC where A equals the max
 *   rename              dA = dC renamed back
 *   softmax             its division (expand.c) makes the gradient of
 *                       what it normalizes at once, from its output y
 *                       alone: dx = y·(dC - Σ_d dC·y) (Korthikanti et
 *                       al. keep only y); exp, the sum and the shift
 *                       get no gradient, so the backward pass reads
 *                       none of them
 *
 * A tensor read by several ops sums their contributions.  Every
 * gradient takes the layout of the tensor it is the gradient of.  Then
 * each parameter gets its update "w1:next" (optimizer.c), and
 * `grads:` names inputs whose gradient is wanted too (as a layer inside
 * a deeper model would pass it down).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grad_names.h"
#include "ir.h"

typedef struct grad_ctx {
    mrt_spec *s;
    mrt_error *err;
    int *need;        /* [tensor] depends on a parameter */
    int *reach;       /* [tensor] the loss depends on it */
    int *pending;     /* [tensor] contributions still to come */
    int *have;        /* [tensor] contributions so far */
    int *grad;        /* [tensor] its gradient (when complete), else the sum
                     of its contributions that are never pending, or -1 */
    int *lin;         /* [tensor] the sum of those that may be pending, or -1 */
    int *again;       /* [tensor] 1 + its copy remade in the backward pass (a
                     forward op's `remade` result), 0: none yet */
    int nfwd_tensors; /* the tensors before the backward program's */
    const mrt_spec_op *op; /* the forward op being differentiated (copy) */
    mrt_spec_op fwd;
    int fwd_op; /* its index (spec_op.fwd), -1 for an update */
    mrt_status st;
    mrt_grad_names names; /* of the pieces: grad:h:d, grad:h:d2, ... */
} grad_ctx;

/* A tensor of the backward program, with the layout of tensor `like`
 * and dims in like's order. */
static int new_like(grad_ctx *g, const char *name, int like)
{
    mrt_spec *s = g->s;
    if (g->st)
        return -1;
    mrt_spec_tensor t = s->tensor[like];
    int id = mrt_spec_add_tensor(s, name, t.layout.dim, t.layout.ndims, -1,
                                 g->fwd.mark);
    if (id < 0) {
        g->st = mrt_ir_nomem(g->s, g->err);
        return -1;
    }
    s->tensor[id].layout = t.layout;
    s->tensor[id].layout.partial = 0;
    s->tensor[id].own_layout = t.own_layout;
    memcpy(s->tensor[id].split_mark, t.split_mark, sizeof t.split_mark);
    s->tensor[id].grad_like = 1 + like;
    s->tensor[id].grad_piece = 1;
    return id;
}

static int emit(grad_ctx *g, mrt_op_kind kind, mrt_map_fn fn, double c, int a,
                int b, int out);
static int unique_name(grad_ctx *g, const char *stem, int first,
                       char name[MRT_NAME_MAX]);

/* What a backward op reads for tensor t: t, or for the result of a
 * forward op marked `remade` (layer norm's output) its copy remade from
 * that op's inputs, once, where the backward pass first reads it: a
 * temporary, not an activation kept from the forward pass, named
 * "grad:<t>:again" as the backward program's tensors are. */
static int kept(grad_ctx *g, int t)
{
    mrt_spec *s = g->s;
    if (g->st || t < 0 || t >= g->nfwd_tensors || s->tensor[t].producer < 0)
        return t;
    const mrt_spec_op *o = &s->op[s->tensor[t].producer];
    if (!o->remade || o->phase != MRT_PHASE_FORWARD)
        return t;
    if (g->again[t])
        return g->again[t] - 1;
    mrt_spec_op op = *o; /* (a copy: s->op grows below) */
    char stem[MRT_NAME_MAX], name[MRT_NAME_MAX];
    mrt_ir_name(NULL, "grad:", s->tensor[t].name, ":again",
                MRT_GRAD_NUMBER_ROOM, stem); /* (the backward program's) */
    int copy = unique_name(g, stem, 1, name) ? -1 : new_like(g, name, t);
    if (copy >= 0) { /* a temporary of the backward pass, no gradient,
                        in t's layout under every alternative */
        s->tensor[copy].grad_like = s->tensor[copy].grad_piece = 0;
        s->tensor[copy].recomputes = 1 + t;
        copy = emit(g, op.kind, op.fn, op.c, op.in[0],
                    op.nin > 1 ? op.in[1] : -1, copy);
    }
    if (copy >= 0)
        g->again[t] = 1 + copy;
    return copy;
}

/* Appends a backward op (reading `kept` copies). */
static int emit(grad_ctx *g, mrt_op_kind kind, mrt_map_fn fn, double c, int a,
                int b, int out)
{
    a = kept(g, a);
    if (b >= 0)
        b = kept(g, b);
    if (g->st || a < 0 || out < 0)
        return -1;
    mrt_spec_op op = {.kind = kind,
                      .mark = g->fwd.mark,
                      .nin = b >= 0 ? 2 : 1,
                      .in = {a, b >= 0 ? b : 0},
                      .in_mark = {g->fwd.mark, g->fwd.mark},
                      .out = out,
                      .expect = {-1, -1, {0, 0}},
                      .fn = fn,
                      .c = c,
                      .from_dim = -1,
                      .to_dim = -1,
                      .phase = MRT_PHASE_BACKWARD,
                      .user = g->fwd.user,
                      .micro = g->fwd_op >= 0 ? g->fwd.micro : -1,
                      .fwd = g->fwd_op + 1};
    int k = mrt_spec_add_op(g->s, &op);
    if (k < 0) {
        g->st = mrt_ir_nomem(g->s, g->err);
        return -1;
    }
    /* the forward op's block instance (spec.h), and its result's */
    g->s->op[k].block = g->s->tensor[out].block = g->fwd.block;
    g->s->op[k].layer = g->s->tensor[out].layer = g->fwd.layer;
    return out;
}

/* Into name: stem numbered (grad_names.h); 0, or -1 when out of memory. */
static int unique_name(grad_ctx *g, const char *stem, int first,
                       char name[MRT_NAME_MAX])
{
    if (mrt_grad_names_make(&g->names, g->s, stem, first, name) == 0)
        return 0;
    g->st = mrt_ir_nomem(g->s, g->err);
    return -1;
}

/* A scratch tensor of the backward program shaped like `like`. */
static int scratch(grad_ctx *g, int like, const char *what)
{
    char stem[MRT_NAME_MAX], name[MRT_NAME_MAX];
    if (g->st)
        return -1;
    char suffix[16];
    snprintf(suffix, sizeof suffix, ":%s", what);
    mrt_ir_name(NULL, "grad:", g->s->tensor[like].name, suffix,
                MRT_GRAD_NUMBER_ROOM, stem);
    if (unique_name(g, stem, 1, name))
        return -1;
    return new_like(g, name, like);
}

/* 1 if tensors a and b have the same dims in the same order. */
static int same_dims(const mrt_spec *s, int a, int b)
{
    const mrt_layout *x = &s->tensor[a].layout, *y = &s->tensor[b].layout;
    if (x->ndims != y->ndims)
        return 0;
    for (int i = 0; i < x->ndims; i++)
        if (x->dim[i] != y->dim[i])
            return 0;
    return 1;
}

/* t summed (or transposed) onto the dims of x, into a new tensor like x;
 * with neg, negated. */
static int onto(grad_ctx *g, int t, int x, int neg)
{
    const mrt_spec *s = g->s;
    if (!same_dims(s, t, x))
        t = emit(g, MRT_OP_EINSUM, MRT_MAP_COPY, 0, t, -1,
                 scratch(g, x, neg ? "sum" : "d"));
    return emit(g, MRT_OP_MAP, neg ? MRT_MAP_NEG : MRT_MAP_COPY, 0, t, -1,
                scratch(g, x, "d"));
}

/* A tensor "grad:x:part" on the dims of x listed in dims, with x's layout
 * on them: the einsum result that a broadcast then spreads onto x. */
static int part_tensor(grad_ctx *g, int x, const int *dims, int nd)
{
    const mrt_spec *s = g->s;
    char stem[MRT_NAME_MAX], name[MRT_NAME_MAX];
    mrt_ir_name(NULL, "grad:", s->tensor[x].name, ":part", MRT_GRAD_NUMBER_ROOM,
                stem);
    int part = g->st || unique_name(g, stem, 1, name)
                   ? -1
                   : mrt_spec_add_tensor(g->s, name, dims, nd, -1, g->fwd.mark);
    if (part < 0 && !g->st)
        g->st = mrt_ir_nomem(g->s, g->err);
    if (part >= 0) { /* x's layout, on the dims it keeps */
        mrt_spec_tensor *pt = &g->s->tensor[part];
        const mrt_layout *xl2 = &g->s->tensor[x].layout;
        for (int i = 0; i < pt->layout.ndims; i++) {
            int j = mrt_layout_find_dim(xl2, pt->layout.dim[i]);
            pt->layout.naxes[i] = xl2->naxes[j];
            memcpy(pt->layout.axes[i], xl2->axes[j], sizeof pt->layout.axes[i]);
        }
        pt->own_layout = g->s->tensor[x].own_layout;
        pt->grad_like = 1 + x;
        pt->grad_piece = 1;
    }
    return part;
}

/* The gradient of an einsum's input x (other: the other input, or -1). */
static int einsum_contribution(grad_ctx *g, int x, int other, int dc)
{
    const mrt_spec *s = g->s;
    const mrt_spec_op *o = &g->fwd;
    int c = o->out;
    if (o->nin == 1)
        return emit(g, MRT_OP_MAP, MRT_MAP_COPY, 0, dc, -1, scratch(g, x, "d"));
    /* dims of x that are in C or the other input: the einsum makes
     * those; the rest (summed in x alone) is a broadcast. */
    const mrt_layout *xl = &s->tensor[x].layout;
    int dims[MRT_MAX_DIMS], nd = 0;
    for (int i = 0; i < xl->ndims; i++)
        if (mrt_layout_find_dim(&s->tensor[c].layout, xl->dim[i]) >= 0 ||
            mrt_layout_find_dim(&s->tensor[other].layout, xl->dim[i]) >= 0)
            dims[nd++] = xl->dim[i];
    if (nd == xl->ndims)
        return emit(g, MRT_OP_EINSUM, MRT_MAP_COPY, 0, dc, other,
                    scratch(g, x, "d"));
    int part = part_tensor(g, x, dims, nd);
    part = emit(g, MRT_OP_EINSUM, MRT_MAP_COPY, 0, dc, other, part);
    return emit(g, MRT_OP_MAP, MRT_MAP_COPY, 0, part, -1, scratch(g, x, "d"));
}

/* The gradient of a gather's table x: the rows of dc summed at the
 * ids (SCATTER_ADD over the same vocab dim); the ids get none. */
static int gather_contribution(grad_ctx *g, int x, int dc)
{
    const mrt_spec_op *o = &g->fwd;
    int id = emit(g, MRT_OP_SCATTER_ADD, MRT_MAP_COPY, 0, o->in[1], dc,
                  scratch(g, x, "d"));
    if (id >= 0)
        g->s->op[g->s->nops - 1].from_dim = o->from_dim;
    return id;
}

/* The gradient of reduce_max's input x: dc where x is the maximum. */
static int reduce_max_contribution(grad_ctx *g, int x, int dc)
{
    int c = g->fwd.out;
    int mask = emit(g, MRT_OP_MAP, MRT_MAP_EQ, 0, x, c,
                    scratch(g, x, "argmax"));
    return emit(g, MRT_OP_MAP, MRT_MAP_MUL, 0, mask, dc, scratch(g, x, "d"));
}

/* The gradient of a rename's input x: dc renamed back. */
static int rename_contribution(grad_ctx *g, int x, int dc)
{
    const mrt_spec_op *o = &g->fwd;
    int r = scratch(g, x, "d");
    int id = emit(g, MRT_OP_RENAME, MRT_MAP_COPY, 0, dc, -1, r);
    if (id >= 0) {
        g->s->op[g->s->nops - 1].from_dim = o->to_dim;
        g->s->op[g->s->nops - 1].to_dim = o->from_dim;
    }
    return id;
}

/* The gradient of mul's or div's input k (x; other: the other input). */
static int product_contribution(grad_ctx *g, int k, int x, int other, int dc)
{
    const mrt_spec *s = g->s;
    const mrt_spec_op *o = &g->fwd;
    int c = o->out, t;
    if (o->fn == MRT_MAP_MUL || k == 0) { /* dc·other or dc/other */
        t = emit(g, MRT_OP_MAP, o->fn, 0, dc, other, scratch(g, c, "t"));
        return same_dims(s, t, x) ? t : onto(g, t, x, 0);
    }
    /* d(a/b)/db = -dc·c/b */
    t = emit(g, MRT_OP_MAP, MRT_MAP_MUL, 0, dc, c, scratch(g, c, "t"));
    t = emit(g, MRT_OP_MAP, MRT_MAP_DIV, 0, t, x, scratch(g, c, "t"));
    return onto(g, t, x, 1);
}

/* The gradient of a map's input k; -1 for maps with none (one_hot, and
 * the backward maps). */
static int map_contribution(grad_ctx *g, int k, int dc)
{
    const mrt_spec *s = g->s;
    const mrt_spec_op *o = &g->fwd;
    int x = o->in[k], c = o->out;
    int other = o->nin > 1 ? o->in[1 - k] : -1;
    /* the maps whose gradient is a map of dc and x or c */
    static const struct {
        mrt_map_fn fn;
        int with_out;
    } unary[] = {
        [MRT_MAP_RELU] = {MRT_MAP_RELU_GRAD, 0},
        [MRT_MAP_GELU] = {MRT_MAP_GELU_GRAD, 0},
        [MRT_MAP_TANH] = {MRT_MAP_TANH_GRAD, 1},
        [MRT_MAP_EXP] = {MRT_MAP_MUL, 1},
        [MRT_MAP_LOG] = {MRT_MAP_DIV, 0},
        [MRT_MAP_RSQRT] = {MRT_MAP_RSQRT_GRAD, 1},
        [MRT_MAP_SQUARE] = {MRT_MAP_SQUARE_GRAD, 0},
    };
    switch (o->fn) {
    case MRT_MAP_COPY:
    case MRT_MAP_CAST: /* (cast back: the gradient takes grads' type,
                          build_precision.c) */
    case MRT_MAP_SHIFT:
    case MRT_MAP_ADD: return onto(g, dc, x, 0);
    case MRT_MAP_SUB: return onto(g, dc, x, k == 1);
    case MRT_MAP_NEG: return onto(g, dc, x, 1);
    case MRT_MAP_SCALE:
        return emit(g, MRT_OP_MAP, MRT_MAP_SCALE, o->c,
                    same_dims(s, dc, x) ? dc : onto(g, dc, x, 0), -1,
                    scratch(g, x, "d"));
    case MRT_MAP_MUL:
    case MRT_MAP_DIV: return product_contribution(g, k, x, other, dc);
    case MRT_MAP_MASK_FILL: /* d/da = the 0/1 mask; the mask has none */
        return k == 0 ? emit(g, MRT_OP_MAP, MRT_MAP_MUL, 0, dc, other,
                             scratch(g, x, "d"))
                      : -1;
    case MRT_MAP_DROPOUT: /* d/da = the mask times 1/(1-p): the same map */
        return k == 0 ? emit(g, MRT_OP_MAP, MRT_MAP_DROPOUT, o->c, dc, other,
                             scratch(g, x, "d"))
                      : -1;
    case MRT_MAP_RELU:
    case MRT_MAP_GELU:
    case MRT_MAP_TANH:
    case MRT_MAP_EXP:
    case MRT_MAP_LOG:
    case MRT_MAP_RSQRT:
    case MRT_MAP_SQUARE: {
        int t = emit(g, MRT_OP_MAP, unary[o->fn].fn, 0, dc,
                     unary[o->fn].with_out ? c : x, scratch(g, x, "d"));
        return t;
    }
    default: return -1; /* no gradient (one_hot, and the backward maps) */
    }
}

/* The gradient of x, which softmax op fwd (its division, result y over
 * dim from_dim) normalizes: y·(dc - Σ_d dc·y), four ops. */
static int softmax_contribution(grad_ctx *g, int x, int dc)
{
    const mrt_spec *s = g->s;
    int y = g->fwd.out, rest[MRT_MAX_DIMS], nr = 0;
    const mrt_layout *yl = &s->tensor[y].layout;
    for (int i = 0; i < yl->ndims; i++)
        if (yl->dim[i] != g->fwd.from_dim)
            rest[nr++] = yl->dim[i];
    int t = emit(g, MRT_OP_MAP, MRT_MAP_MUL, 0, dc, y, scratch(g, y, "t"));
    int sum = emit(g, MRT_OP_EINSUM, MRT_MAP_COPY, 0, t, -1,
                   g->st ? -1 : part_tensor(g, y, rest, nr));
    int u = emit(g, MRT_OP_MAP, MRT_MAP_SUB, 0, dc, sum, scratch(g, y, "t"));
    return emit(g, MRT_OP_MAP, MRT_MAP_MUL, 0, y, u, scratch(g, x, "d"));
}

/* The contribution of forward op fwd (result gradient dc) to the
 * gradient of its input k: one function per op kind. */
static int contribution(grad_ctx *g, int k, int dc)
{
    const mrt_spec_op *o = &g->fwd;
    int x = o->in[k];
    int other = o->nin > 1 ? o->in[1 - k] : -1;
    if (k == mrt_spec_op_ids(o)) /* indices: no gradient (nor pending) */
        return -1;
    switch (o->kind) {
    case MRT_OP_EINSUM: return einsum_contribution(g, x, other, dc);
    case MRT_OP_REDUCE_MAX: return reduce_max_contribution(g, x, dc);
    case MRT_OP_RENAME: return rename_contribution(g, x, dc);
    case MRT_OP_GATHER: return gather_contribution(g, x, dc);
    case MRT_OP_SCATTER_ADD: return -1; /* not differentiated twice */
    case MRT_OP_MAP:
    case MRT_OP_KIND_COUNT: break;
    }
    return map_contribution(g, k, dc);
}

/* How deep may_pend looks back through linear ops. */
#define MAY_PEND_DEPTH 8

/* 1 if tensor t may arrive as a pending sum in some layout: it is made
 * by an einsum (a contraction over a split dim), or by a map that a
 * pending sum rides through (copy, scale, neg, rename; add or sub of two
 * such) from one.  Anything else is resolved whatever the layout. */
static int may_pend(const mrt_spec *s, int t, int depth)
{
    int i = s->tensor[t].producer;
    if (i < 0 || depth > MAY_PEND_DEPTH)
        return i >= 0;
    const mrt_spec_op *o = &s->op[i];
    if (o->kind == MRT_OP_EINSUM || o->kind == MRT_OP_GATHER ||
        o->kind == MRT_OP_SCATTER_ADD) /* a sum over a split dim */
        return 1;
    if (o->kind == MRT_OP_RENAME)
        return may_pend(s, o->in[0], depth + 1);
    if (o->kind != MRT_OP_MAP)
        return 0;
    switch (o->fn) {
    case MRT_MAP_COPY:
    case MRT_MAP_SCALE:
    case MRT_MAP_NEG: return may_pend(s, o->in[0], depth + 1);
    case MRT_MAP_ADD:
    case MRT_MAP_SUB:
        return may_pend(s, o->in[0], depth + 1) &&
               may_pend(s, o->in[1], depth + 1);
    default: return 0;
    }
}

/* sum + t into a new tensor like x named grad:x:accN (t alone when
 * there is no sum yet). */
static int add_to(grad_ctx *g, int x, int sum, int t)
{
    mrt_spec *s = g->s;
    char stem[MRT_NAME_MAX], name[MRT_NAME_MAX];
    if (sum < 0 || t < 0)
        return sum < 0 ? t : sum;
    mrt_ir_name(NULL, "grad:", s->tensor[x].name, ":acc", MRT_GRAD_NUMBER_ROOM,
                stem);
    if (unique_name(g, stem, g->have[x], name))
        return -1;
    return emit(g, MRT_OP_MAP, MRT_MAP_ADD, 0, sum, t, new_like(g, name, x));
}

/* Adds contribution t to x's gradient; the last one is named grad:x.
 * The contributions that may be pending sums are summed apart from the
 * others and the two sums added last, so that contributions pending over
 * the same axes are added while pending and reduced once, in whatever
 * order the program reads x (a sum of a pending and a resolved tensor
 * must reduce the pending one first). */
static void accumulate(grad_ctx *g, int x, int t)
{
    mrt_spec *s = g->s;
    if (t < 0)
        return;
    g->have[x]++;
    if (may_pend(s, t, 0))
        g->lin[x] = add_to(g, x, g->lin[x], t);
    else
        g->grad[x] = add_to(g, x, g->grad[x], t);
    if (g->have[x] < g->pending[x])
        return;
    t = add_to(g, x, g->lin[x], g->grad[x]); /* complete */
    g->grad[x] = t;
    if (t >= 0) { /* its name: grad:x, or one like it that is free */
        char name[MRT_NAME_MAX];
        mrt_ir_name(s, "grad:", s->tensor[x].name, "", 0, name);
        if (mrt_grad_names_release(&g->names, s->tensor[t].name))
            g->st = mrt_ir_nomem(g->s, g->err);
        snprintf(s->tensor[t].name, sizeof s->tensor[t].name, "%s", name);
        if (mrt_spec_index_tensor(s, t))
            g->st = mrt_ir_nomem(g->s, g->err);
    }
}

/* Which tensors depend on a parameter (need) and which the loss depends
 * on (reach), and how many contributions each gradient will get. */
static void mark_paths(grad_ctx *g, const mrt_train *tr)
{
    const mrt_spec *s = g->s;
    for (int k = 0; k < tr->nparams; k++)
        g->need[tr->param[k]] = 1;
    for (int k = 0; k < tr->nextra; k++)
        g->need[tr->extra[k]] = 1;
    for (int i = 0; i < tr->nforward; i++) {
        const mrt_spec_op *o = &s->op[i];
        for (int k = 0; k < o->nin; k++)
            if (g->need[o->in[k]] && !o->no_grad && k != mrt_spec_op_ids(o) &&
                !(o->kind == MRT_OP_MAP && o->fn == MRT_MAP_ONE_HOT))
                g->need[o->out] = 1;
    }
    g->reach[tr->loss] = 1;
    for (int i = tr->nforward - 1; i >= 0; i--) {
        const mrt_spec_op *o = &s->op[i];
        if (!g->reach[o->out] || !g->need[o->out])
            continue;
        for (int k = 0; k < o->nin; k++)
            if (g->need[o->in[k]] && k != mrt_spec_op_ids(o)) {
                g->reach[o->in[k]] = 1;
                g->pending[o->in[k]]++;
            }
    }
}

/* A parameter's index and the op that makes its gradient. */
typedef struct order_item {
    int key, k;
} order_item;

static int by_key(const void *a, const void *b)
{
    const order_item *x = a, *y = b;
    return x->key != y->key ? (x->key > y->key) - (x->key < y->key)
                            : (x->k > y->k) - (x->k < y->k);
}

/* The parameters' indices in the order their gradients are made (ties
 * in list order), or NULL when out of memory; the caller frees it. */
static int *update_order(const mrt_spec *s)
{
    const mrt_train *tr = &s->train;
    size_t n = (size_t)tr->nparams;
    int *order = malloc((n + 1) * sizeof *order);
    order_item *it = malloc((n + 1) * sizeof *it);
    for (size_t k = 0; order && it && k < n; k++)
        it[k] = (order_item){s->tensor[tr->grad[k]].producer, (int)k};
    if (order && it) {
        qsort(it, n, sizeof *it, by_key);
        for (size_t k = 0; k < n; k++)
            order[k] = it[k].k;
    } else {
        free(order);
        order = NULL;
    }
    free(it);
    return order;
}

/* The backward program and the updates. */
static mrt_status differentiate(mrt_spec *s, mrt_error *err)
{
    mrt_train *tr = &s->train;
    int n = s->ntensors + 1;
    grad_ctx g = {.s = s, .err = err};
    g.need = calloc((size_t)n, sizeof(int));
    g.reach = calloc((size_t)n, sizeof(int));
    g.pending = calloc((size_t)n, sizeof(int));
    g.have = calloc((size_t)n, sizeof(int));
    g.grad = malloc((size_t)n * sizeof(int));
    g.lin = malloc((size_t)n * sizeof(int));
    g.again = calloc((size_t)n, sizeof(int));
    g.nfwd_tensors = s->ntensors;
    if (!g.need || !g.reach || !g.pending || !g.have || !g.grad || !g.lin ||
        !g.again) {
        g.st = mrt_ir_nomem(s, err);
        goto done;
    }
    for (int t = 0; t < n; t++)
        g.grad[t] = g.lin[t] = -1;
    mark_paths(&g, tr);
    g.grad[tr->loss] = tr->seed;
    for (int i = tr->nforward - 1; i >= 0 && !g.st; i--) {
        g.fwd = s->op[i]; /* a copy: s->op grows below */
        g.fwd_op = i;
        int dc = g.grad[g.fwd.out];
        if (dc < 0 || !g.need[g.fwd.out])
            continue;
        int x = g.fwd.softmax_in - 1;
        if (x >= 0) { /* (the softmax's other ops get no gradient) */
            if (g.need[x] && g.reach[x])
                accumulate(&g, x, softmax_contribution(&g, x, dc));
            continue;
        }
        for (int k = 0; k < g.fwd.nin && !g.st; k++)
            if (g.need[g.fwd.in[k]] && g.reach[g.fwd.in[k]])
                accumulate(&g, g.fwd.in[k], contribution(&g, k, dc));
    }
    for (int k = 0; k < tr->nparams + tr->nextra && !g.st; k++) {
        int x = k < tr->nparams ? tr->param[k] : tr->extra[k - tr->nparams];
        if (g.grad[x] < 0) {
            mrt_mark at = k < tr->nparams ? tr->param_mark[k]
                                          : tr->extra_mark[k - tr->nparams];
            g.st = mrt_error_set(err, MRT_E_SPEC, s->path, at,
                                 "the loss "
                                 "'%s' does not depend on '%s'",
                                 s->tensor[tr->loss].name, s->tensor[x].name);
            break;
        }
        if (k < tr->nparams)
            tr->grad[k] = g.grad[x];
        else
            tr->extra_grad[k - tr->nparams] = g.grad[x];
    }
    /* The updates in the order the gradients are made, so a gradient's
     * reduction has the others' updates to hide behind. */
    int *order = g.st ? NULL : update_order(s);
    if (!g.st && !order)
        g.st = mrt_ir_nomem(s, err);
    if (!g.st)
        g.st = mrt_optimizer_emit(s, order, err);
    free(order);
done:
    mrt_grad_names_free(&g.names);
    free(g.need);
    free(g.reach);
    free(g.pending);
    free(g.have);
    free(g.grad);
    free(g.lin);
    free(g.again);
    return g.st;
}

mrt_status mrt_ir_grad(mrt_spec *s, mrt_error *err)
{
    mrt_train *tr = &s->train;
    const char *name = s->tensor[tr->loss].name;
    tr->nforward = s->nops;
    /* dL/dL = 1: an input of the backward program */
    char seed[MRT_NAME_MAX];
    mrt_ir_name(s, "grad:", name, "", 0, seed);
    tr->seed = mrt_spec_add_tensor(s, seed, NULL, 0, -1, tr->mark);
    if (tr->seed < 0)
        return mrt_ir_nomem(s, err);
    s->tensor[tr->seed].init = MRT_INIT_FILL;
    s->tensor[tr->seed].fill = 1.0;
    return differentiate(s, err);
}
