/*
 * expand.c — an op of the program becomes primitive ops (spec.h): einsums,
 * elementwise maps, reduce_max and rename.
 *
 * The simple ops are one primitive each: add is a map, reduce_sum an
 * einsum with one input.  The composite ones are written out the way one
 * would compute them by hand, so that each piece is sharded, costed and
 * differentiated like any other op:
 *
 *   reduce_mean(x)    sum = Σ x;  out = sum / n
 *   softmax(x, d)     m = max_d x (no gradient: softmax does not depend
 *                     on it);  e = exp(x - m);  out = e / Σ_d e (the
 *                     division names x: grad.c's gradient of x from
 *                     out alone, so neither e nor the sum is kept)
 *   softmax(x, d, causal: [q, d])
 *                     x' = mask_fill(x, M, -1e30), M the input
 *                     "<out>:mask" [q, d], 1 where d's index <= q's
 *                     (one per layout: later causal softmaxes whose mask
 *                     has the same home layout read the first's);
 *                     then softmax(x', d): the max is over the entries
 *                     kept, the others' exp is exactly 0, and so is
 *                     their gradient (d/dx of mask_fill is M)
 *   dropout(x, p)     out = M ? x / (1 - p) : 0 (MRT_MAP_DROPOUT), M the
 *                     input "<out>:mask" of x's dims, uint8 (1 byte per
 *                     element), 1 or 0 from (seed, global index): its
 *                     gradient is the same map of dy and M
 *   layer_norm(x, d)  c = x - mean_d x;  v = mean_d c²;
 *                     out = c · rsqrt(v + eps), remade in the backward
 *                     pass where read there (the gain's gradient): the
 *                     backward pass keeps c and the rstd (one per row)
 *   mse(p, t)         out = Σ (p - t)² / n
 *   softmax_cross_entropy(x, t, d)
 *                     z = x - max_d x;  lse = log Σ_d exp z;
 *                     out = Σ (lse - Σ_d t·z) / n   (t one-hot); with
 *                     integer labels t, picked = z at t (a GATHER along d,
 *                     whose gradient is a SCATTER_ADD: no one-hot tensor),
 *                     out = Σ (lse - picked) / n
 *   embedding(table, ids, vocab)
 *                     one GATHER: out[b.., d..] = table[ids[b..], d..]
 *
 * When d is split over mesh axes, the max and the sums over d become
 * all-reduces over those axes: a softmax stays exact and stable however
 * its dim is split.  The tensors in between are named after the result,
 * "probs:max", "probs:exp", ...; they take the op's own `layout:` (for
 * the dims they have) or else the global rules.
 */
#include <stdio.h>
#include <string.h>

#include "grad_names.h"
#include "ir.h"

/* What a causal softmax puts where its mask hides an entry: far below
 * any score, exactly representable in float32, and finite, so that
 * exp(fill - max) is exactly 0 and no bound or sum meets an infinity. */
#define MRT_CAUSAL_FILL (-1e30)

/* A tensor the expansion makes: named "<out>:<suffix>", with dims[]. */
static int tmp(mrt_user_op *u, const char *suffix, const int *dims, int nd,
               mrt_status *st)
{
    mrt_spec *s = u->s;
    char name[MRT_NAME_MAX];
    if (*st) /* an earlier piece failed: keep its error */
        return -1;
    char sep_suffix[MRT_NAME_MAX];
    snprintf(sep_suffix, sizeof sep_suffix, ":%s", suffix);
    mrt_ir_name(s, "", u->out.name, sep_suffix, 0, name);
    int id = mrt_spec_add_tensor(s, name, dims, nd, -1, u->out.mark);
    if (id < 0) {
        *st = mrt_ir_nomem(u->s, u->err);
        return -1;
    }
    const mrt_spec_resolver r = {s, &s->mesh, NULL, u->err};
    s->tensor[id].own_layout = u->own;
    *st = mrt_spec_apply_rules(&r, &s->tensor[id], u->rules, u->own);
    return *st ? -1 : id;
}

/* The result itself, appended once the tensors before it are. */
static int result(mrt_user_op *u, mrt_status *st)
{
    mrt_spec *s = u->s;
    if (*st)
        return -1;
    int id = mrt_spec_add_tensor(s, u->out.name, u->out.layout.dim,
                                 u->out.layout.ndims, -1, u->out.mark);
    if (id < 0) {
        *st = mrt_ir_nomem(u->s, u->err);
        return -1;
    }
    s->tensor[id] = u->out;
    /* outside blocks until a block's instance stamps it (u->out is
     * zeroed: block 0, layer 0 otherwise) */
    s->tensor[id].block = s->tensor[id].layer = -1;
    return id;
}

/* Appends a primitive op; returns out, or -1.  b is -1 for a one-input
 * op, and -2 when a second input was wanted but failed to be made. */
static int emit(mrt_user_op *u, mrt_op_kind kind, mrt_map_fn fn, double c,
                int a, int b, int out, mrt_status *st)
{
    if (*st || a < 0 || out < 0 || (b == -2))
        return -1;
    mrt_spec_op op = {.kind = kind,
                      .mark = u->mark,
                      .nin = b >= 0 ? 2 : 1,
                      .in = {a, b >= 0 ? b : 0},
                      .in_mark = {u->in_mark[0], u->in_mark[1]},
                      .out = out,
                      .expect = {-1, -1, {0, 0}},
                      .fn = fn,
                      .c = c,
                      .from_dim = u->dim,
                      .to_dim = u->to_dim,
                      .phase = MRT_PHASE_FORWARD,
                      .user = u->number};
    if (mrt_spec_add_op(u->s, &op) < 0) {
        *st = mrt_ir_nomem(u->s, u->err);
        return -1;
    }
    return out;
}

static int map1(mrt_user_op *u, mrt_map_fn fn, double c, int a, int out,
                mrt_status *st)
{
    return emit(u, MRT_OP_MAP, fn, c, a, -1, out, st);
}

static int map2(mrt_user_op *u, mrt_map_fn fn, int a, int b, int out,
                mrt_status *st)
{
    return emit(u, MRT_OP_MAP, fn, 0, a, b < 0 ? -2 : b, out, st);
}

/* The dims of tensor t without dim d, in t's order. */
static void dims_without(const mrt_spec *s, int t, int d, int dims[], int *nd)
{
    const mrt_layout *l = &s->tensor[t].layout;
    *nd = 0;
    for (int i = 0; i < l->ndims; i++)
        if (l->dim[i] != d)
            dims[(*nd)++] = l->dim[i];
}

/* Elements of t over the dims it has and `of` lacks. */
static double reduced_count(const mrt_spec *s, int t, const int *of, int nd)
{
    const mrt_layout *l = &s->tensor[t].layout;
    double n = 1;
    for (int i = 0; i < l->ndims; i++) {
        int kept = 0;
        for (int j = 0; j < nd; j++)
            kept |= of[j] == l->dim[i];
        if (!kept)
            n *= (double)l->size[i];
    }
    return n;
}

/* sum over the dims of x that `dims` lacks, then / n: two ops, the
 * second making `out` (or a new "<suffix>" tensor when out < 0). */
static int mean(mrt_user_op *u, int x, const int *dims, int nd,
                const char *suffix, int out, mrt_status *st)
{
    char sum_name[MRT_NAME_MAX];
    if (*st || x < 0) /* an earlier piece failed: stop */
        return -1;
    snprintf(sum_name, sizeof sum_name, "%s_sum", suffix);
    double n = reduced_count(u->s, x, dims, nd);
    int sum = tmp(u, sum_name, dims, nd, st);
    sum = emit(u, MRT_OP_EINSUM, MRT_MAP_COPY, 0, x, -1, sum, st);
    if (out == -3 && sum >= 0)
        out = result(u, st);
    else if (out < 0 && sum >= 0)
        out = tmp(u, suffix, dims, nd, st);
    return map1(u, MRT_MAP_SCALE, 1.0 / n, sum, out, st);
}

/* max over d (no gradient), and x - max: the stable shift of softmax. */
static int shifted(mrt_user_op *u, int x, int d, mrt_status *st)
{
    const mrt_spec *s = u->s;
    int rest[MRT_MAX_DIMS], nr;
    dims_without(s, x, d, rest, &nr);
    int m = tmp(u, "max", rest, nr, st);
    m = emit(u, MRT_OP_REDUCE_MAX, MRT_MAP_COPY, 0, x, -1, m, st);
    if (m >= 0)
        u->s->op[u->s->nops - 1].no_grad = 1;
    int z = tmp(u, "shifted", s->tensor[x].layout.dim,
                s->tensor[x].layout.ndims, st);
    return map2(u, MRT_MAP_SUB, x, m, z, st);
}

/* An input "<out>:mask" on dims[0..nd) that no op makes: its values are
 * its init (kind), a function of the global indices (init.h), so every
 * layout sees the same mask and the plan counts its bytes. */
static int mask(mrt_user_op *u, const int *dims, int nd, mrt_init_kind kind,
                mrt_status *st)
{
    int m = tmp(u, "mask", dims, nd, st);
    if (m < 0)
        return -1;
    mrt_spec_tensor *t = &u->s->tensor[m];
    t->init = kind;
    t->init_mark = u->mark;
    t->seed = u->seed;
    t->fill = u->c;
    t->mask_dim[0] = u->causal[0];
    t->mask_dim[1] = u->causal[1];
    t->mask_user = u->number; /* an alternative's `ops:` entry places it */
    return m;
}

/* An earlier softmax's causal mask of the same dims and home layout, or
 * -1: every layer of a model reads the same mask, stored once. */
static int same_causal_mask(const mrt_user_op *u)
{
    const mrt_spec *s = u->s;
    mrt_spec_tensor t;
    memset(&t, 0, sizeof t);
    t.layout.ndims = 2;
    for (int i = 0; i < 2; i++) {
        t.layout.dim[i] = u->causal[i];
        t.layout.size[i] = s->dim_size[u->causal[i]];
    }
    const mrt_spec_resolver r = {s, &s->mesh, NULL, NULL}; /* (tmp words
                                                        an error) */
    if (mrt_spec_apply_rules(&r, &t, u->rules, u->own))
        return -1;
    for (int j = s->ntensors - 1; j >= 0; j--) {
        const mrt_spec_tensor *o = &s->tensor[j];
        if (o->init == MRT_INIT_CAUSAL && o->mask_user > 0 &&
            o->mask_dim[0] == u->causal[0] && o->mask_dim[1] == u->causal[1] &&
            o->own_layout == u->own && mrt_layout_equal(&o->layout, &t.layout))
            return j;
    }
    return -1;
}

/* A causal softmax's input with what its mask hides filled with -1e30,
 * so the max over d is over the entries kept and exp gives exactly 0
 * at the others. */
static int masked(mrt_user_op *u, int x, mrt_status *st)
{
    const mrt_layout *l = &u->s->tensor[x].layout;
    int dims[MRT_MAX_DIMS], nd = l->ndims;
    memcpy(dims, l->dim, sizeof dims);
    int m = *st ? -1 : same_causal_mask(u);
    if (m < 0)
        m = mask(u, u->causal, 2, MRT_INIT_CAUSAL, st);
    int f = tmp(u, "masked", dims, nd, st);
    return emit(u, MRT_OP_MAP, MRT_MAP_MASK_FILL, MRT_CAUSAL_FILL, x,
                m < 0 ? -2 : m, f, st);
}

/* What softmax and the cross-entropy share: z = x - max_d x, e = exp z,
 * and the sum of e over d, which it returns. */
static int exp_sum(mrt_user_op *u, int *z, int *e, mrt_status *st)
{
    const mrt_spec *s = u->s;
    int x = u->in[0], rest[MRT_MAX_DIMS], nr;
    if (u->kind == MRT_U_SOFTMAX && u->causal[0] >= 0)
        x = masked(u, x, st);
    if (x < 0)
        return -1;
    /* (copies: s->tensor moves as the pieces are added) */
    int dims[MRT_MAX_DIMS], nd = s->tensor[x].layout.ndims;
    memcpy(dims, s->tensor[x].layout.dim, sizeof dims);
    dims_without(s, x, u->dim, rest, &nr);
    *z = shifted(u, x, u->dim, st);
    *e = map1(u, MRT_MAP_EXP, 0, *z, tmp(u, "exp", dims, nd, st), st);
    return emit(u, MRT_OP_EINSUM, MRT_MAP_COPY, 0, *e, -1,
                tmp(u, "sum", rest, nr, st), st);
}

/* The division also names what it normalizes (the sub's first input)
 * for grad.c's rule from the output alone. */
static mrt_status softmax(mrt_user_op *u)
{
    mrt_status st = MRT_OK;
    mrt_spec *s = u->s;
    int z, e, sum = exp_sum(u, &z, &e, &st);
    int y = map2(u, MRT_MAP_DIV, e, sum, result(u, &st), &st);
    if (y >= 0 && z >= 0)
        s->op[s->nops - 1].softmax_in = 1 + s->op[s->tensor[z].producer].in[0];
    return st;
}

static mrt_status layer_norm(mrt_user_op *u)
{
    mrt_status st = MRT_OK;
    const mrt_spec *s = u->s;
    int x = u->in[0], rest[MRT_MAX_DIMS], nr;
    int dims[MRT_MAX_DIMS], nd = s->tensor[x].layout.ndims;
    memcpy(dims, s->tensor[x].layout.dim, sizeof dims);
    dims_without(s, x, u->dim, rest, &nr);
    int mu = mean(u, x, rest, nr, "mean", -1, &st);
    int c = map2(u, MRT_MAP_SUB, x, mu, tmp(u, "centered", dims, nd, &st), &st);
    int sq = map1(u, MRT_MAP_SQUARE, 0, c, tmp(u, "square", dims, nd, &st),
                  &st);
    int var = mean(u, sq, rest, nr, "var", -1, &st);
    int ve = map1(u, MRT_MAP_SHIFT, u->c, var, tmp(u, "var_eps", rest, nr, &st),
                  &st);
    int r = map1(u, MRT_MAP_RSQRT, 0, ve, tmp(u, "rstd", rest, nr, &st), &st);
    if (map2(u, MRT_MAP_MUL, c, r, result(u, &st), &st) >= 0)
        s->op[s->nops - 1].remade = 1; /* (the backward pass keeps c, r) */
    return st;
}

static mrt_status mse(mrt_user_op *u)
{
    mrt_status st = MRT_OK;
    const mrt_layout *l = &u->s->tensor[u->in[0]].layout;
    int dims[MRT_MAX_DIMS], nd = l->ndims;
    memcpy(dims, l->dim, sizeof dims);
    int d = map2(u, MRT_MAP_SUB, u->in[0], u->in[1],
                 tmp(u, "diff", dims, nd, &st), &st);
    int sq = map1(u, MRT_MAP_SQUARE, 0, d, tmp(u, "square", dims, nd, &st),
                  &st);
    mean(u, sq, NULL, 0, "mean", -3, &st);
    return st;
}

static mrt_status cross_entropy(mrt_user_op *u)
{
    mrt_status st = MRT_OK;
    const mrt_spec *s = u->s;
    int x = u->in[0], t = u->in[1], rest[MRT_MAX_DIMS], nr;
    dims_without(s, x, u->dim, rest, &nr);
    int z, e, sum = exp_sum(u, &z, &e, &st);
    int lse = map1(u, MRT_MAP_LOG, 0, sum, tmp(u, "lse", rest, nr, &st), &st);
    /* integer labels: z at the label, a GATHER along d (from_dim: the
     * dims the labels share with z are walked together); its gradient is
     * a SCATTER_ADD into d, so no one-hot [.., d] is ever made */
    int picked = u->labels ? emit(u, MRT_OP_GATHER, MRT_MAP_COPY, 0, z, t,
                                  tmp(u, "picked", rest, nr, &st), &st)
                           : emit(u, MRT_OP_EINSUM, MRT_MAP_COPY, 0, t, z,
                                  tmp(u, "picked", rest, nr, &st), &st);
    int nll = map2(u, MRT_MAP_SUB, lse, picked, tmp(u, "nll", rest, nr, &st),
                   &st);
    mean(u, nll, NULL, 0, "mean", -3, &st);
    return st;
}

/* y = x · mask, the mask 1 / (1 - p) where kept and 0 where dropped;
 * p = 0 is a copy. */
static mrt_status dropout(mrt_user_op *u)
{
    mrt_status st = MRT_OK;
    const mrt_layout *l = &u->s->tensor[u->in[0]].layout;
    int dims[MRT_MAX_DIMS], nd = l->ndims;
    memcpy(dims, l->dim, sizeof dims);
    if (u->c == 0) {
        map1(u, MRT_MAP_COPY, 0, u->in[0], result(u, &st), &st);
        return st;
    }
    int m = mask(u, dims, nd, MRT_INIT_DROPOUT, &st);
    if (m >= 0) /* 1 byte per element, as Korthikanti et al. count it */
        u->s->tensor[m].stored = 1 + MRT_U8;
    emit(u, MRT_OP_MAP, MRT_MAP_DROPOUT, 1.0 / (1.0 - u->c), u->in[0],
         m < 0 ? -2 : m, result(u, &st), &st);
    return st;
}

/* The one-primitive ops. */
static mrt_status simple(mrt_user_op *u)
{
    static const mrt_map_fn fn[MRT_U_KIND_COUNT] = {
        [MRT_U_ADD] = MRT_MAP_ADD,     [MRT_U_SUB] = MRT_MAP_SUB,
        [MRT_U_MUL] = MRT_MAP_MUL,     [MRT_U_DIV] = MRT_MAP_DIV,
        [MRT_U_RELU] = MRT_MAP_RELU,   [MRT_U_GELU] = MRT_MAP_GELU,
        [MRT_U_TANH] = MRT_MAP_TANH,   [MRT_U_EXP] = MRT_MAP_EXP,
        [MRT_U_LOG] = MRT_MAP_LOG,     [MRT_U_NEG] = MRT_MAP_NEG,
        [MRT_U_RSQRT] = MRT_MAP_RSQRT, [MRT_U_SQUARE] = MRT_MAP_SQUARE,
        [MRT_U_SCALE] = MRT_MAP_SCALE, [MRT_U_RELAYOUT] = MRT_MAP_COPY,
    };
    mrt_status st = MRT_OK;
    mrt_op_kind kind = MRT_OP_MAP;
    if (u->kind == MRT_U_EINSUM || u->kind == MRT_U_REDUCE_SUM)
        kind = MRT_OP_EINSUM;
    else if (u->kind == MRT_U_REDUCE_MAX)
        kind = MRT_OP_REDUCE_MAX;
    else if (u->kind == MRT_U_RENAME)
        kind = MRT_OP_RENAME;
    int out = result(u, &st);
    if (out >= 0)
        emit(u, kind, fn[u->kind], u->c, u->in[0], u->nin > 1 ? u->in[1] : -1,
             out, &st);
    return st;
}

mrt_status mrt_ir_expand(mrt_user_op *u)
{
    mrt_spec *s = u->s;
    int first = s->nops;
    mrt_status st;
    switch (u->kind) {
    case MRT_U_REDUCE_MEAN: {
        st = MRT_OK;
        mean(u, u->in[0], u->out.layout.dim, u->out.layout.ndims, "mean", -3,
             &st);
        break;
    }
    case MRT_U_SOFTMAX: st = softmax(u); break;
    case MRT_U_LAYER_NORM: st = layer_norm(u); break;
    case MRT_U_MSE: st = mse(u); break;
    case MRT_U_SOFTMAX_CE: st = cross_entropy(u); break;
    case MRT_U_EMBEDDING: /* one primitive: the masked lookup */
        st = MRT_OK;
        emit(u, MRT_OP_GATHER, MRT_MAP_COPY, 0, u->in[0], u->in[1],
             result(u, &st), &st);
        break;
    case MRT_U_DROPOUT: st = dropout(u); break;
    default: st = simple(u); break;
    }
    if (!st && s->nops > first)
        s->op[s->nops - 1].expect = u->expect;
    return st;
}
