/*
 * reference.c — the unsharded computation that --verify compares with:
 * every tensor whole on one rank, every op one call of the local kernel
 * on the full tensors.  No mesh, no layouts, no collectives.  With
 * `train:` it runs the same SGD steps, and it can check the gradients
 * of the backward program against central finite differences of the
 * forward one.
 *
 * Alongside each tensor it computes its magnitudes: per element, the
 * size of what was summed into it, which bounds its rounding error (a
 * first-order error analysis): |x| for an input; for an einsum, the same
 * einsum of its operands' magnitudes (the sum of |terms|); for a map
 * y = f(a, b), max(|y|, |df/da| m(a) + |df/db| m(b)) (+ |c| for a shift),
 * so a sum that cancels keeps the size of its terms; the largest
 * magnitude for a reduce_max; the input's for a rename; for a
 * mask_fill (causal softmax), the input's where the mask keeps it and 0
 * where it fills -1e30, so the fill never enters a bound.  --verify scales
 * its tolerance by them (verify.c): a result that is zero in exact
 * arithmetic is rounding noise of the size of its terms, not of itself.
 *
 * It computes in float64 when the program has a float64 type anywhere
 * (its dtype or a `precision:` type), else in float32: a 16-bit tensor
 * is held here in float32 (mrt_reference_dtype), its inputs rounded to
 * their own type first so that both runs start from the same values,
 * and never rounded again but where the program casts (precision:'s
 * 16-bit copies of the parameters: the program's meaning), so the
 * reference is the float32 answer that --verify's 16-bit tolerances
 * measure the run against.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "big_alloc.h"
#include "kernel.h"
#include "kernel_plan.h"
#include "local.h"

/* The tensor's layout with every split removed. */
static mrt_layout whole(const mrt_layout *l)
{
    mrt_layout w = *l;
    for (int i = 0; i < w.ndims; i++)
        w.naxes[i] = 0;
    w.partial = 0;
    return w;
}

static mrt_kview full_view(const mrt_spec *s, int t, void **bufs)
{
    const mrt_layout *l = &s->tensor[t].layout;
    return (mrt_kview){
        .ndims = l->ndims, .dim = l->dim, .ext = l->size, .data = bufs[t]};
}

mrt_dtype mrt_reference_dtype(const mrt_spec *s)
{
    const mrt_precision *q = &s->precision;
    return s->dtype == MRT_F64 || q->params == MRT_F64 ||
                   q->compute == MRT_F64 || q->grads == MRT_F64 ||
                   q->optimizer == MRT_F64
               ? MRT_F64
               : MRT_F32;
}

/* Tensor t's type here: int32 indices as they are, every float tensor
 * in the reference's type. */
static mrt_dtype ref_type(const mrt_spec *s, int t)
{
    return mrt_spec_tensor_dtype(s, t) == MRT_I32 ? MRT_I32
                                                  : mrt_reference_dtype(s);
}

static int64_t full_count(const mrt_spec *s, int t)
{
    int64_t n = 1;
    for (int i = 0; i < s->tensor[t].layout.ndims; i++)
        n *= s->tensor[t].layout.size[i];
    return n;
}

static size_t full_bytes(const mrt_spec *s, int t)
{
    return (size_t)full_count(s, t) * (size_t)mrt_dtype_size(ref_type(s, t));
}

/* The n values of buf (type rt) rounded to type t, kept in rt: a cast
 * to a 16-bit type is part of the program (precision:'s copies of the
 * parameters), so the reference rounds there as the run does; what it
 * does not round is every op's result. */
static void round_to(mrt_dtype t, mrt_dtype rt, void *buf, int64_t n)
{
    char tmp[8];
    for (int64_t i = 0; t != rt && i < n; i++) {
        mrt_kernel_put(t, tmp, 0, mrt_kernel_get(rt, buf, i));
        mrt_kernel_put(rt, buf, i, mrt_kernel_get(t, tmp, 0));
    }
}

static mrt_status run_op(const mrt_spec *s, int i, void **bufs)
{
    const mrt_spec_op *o = &s->op[i];
    mrt_dtype rt = mrt_reference_dtype(s);
    mrt_kview a = full_view(s, o->in[0], bufs), c = full_view(s, o->out, bufs);
    mrt_kview b = o->nin > 1 ? full_view(s, o->in[1], bufs) : a;
    const mrt_kview *bp = o->nin > 1 ? &b : NULL;
    int vdim = mrt_layout_find_dim(
        &s->tensor[o->kind == MRT_OP_GATHER ? o->in[0] : o->out].layout,
        o->from_dim);
    switch (o->kind) {
    case MRT_OP_GATHER:
        mrt_kernel_gather(rt, &a, vdim, 0, ref_type(s, o->in[1]), &b, &c);
        return MRT_OK;
    case MRT_OP_SCATTER_ADD:
        mrt_kernel_scatter_add(rt, ref_type(s, o->in[0]), &a, &b, vdim, 0, &c);
        return MRT_OK;
    case MRT_OP_MAP: {
        int64_t zero[MRT_MAX_DIMS] = {0};
        int hot = o->fn == MRT_MAP_ONE_HOT
                      ? mrt_layout_find_dim(&s->tensor[o->out].layout,
                                            o->from_dim)
                      : -1;
        if (o->fn == MRT_MAP_ONE_HOT &&
            mrt_spec_tensor_dtype(s, o->in[0]) == MRT_I32)
            mrt_kernel_one_hot_index(rt, &a, &c, hot, 0);
        else
            mrt_kernel_map(rt, o->fn, o->c, &c, &a, bp, zero, hot);
        if (o->fn == MRT_MAP_CAST) /* the program's own rounding */
            round_to(mrt_spec_tensor_dtype(s, o->out), rt, c.data,
                     full_count(s, o->out));
        return MRT_OK;
    }
    case MRT_OP_REDUCE_MAX: mrt_kernel_reduce_max(rt, &a, &c); return MRT_OK;
    case MRT_OP_RENAME:
        memcpy(c.data, a.data, full_bytes(s, o->out));
        return MRT_OK;
    case MRT_OP_EINSUM:
    case MRT_OP_KIND_COUNT: break;
    }
    size_t bytes = mrt_einsum_workspace(rt, &a, bp, &c);
    void *ws = bytes < SIZE_MAX - 64 ? malloc(bytes + 64) : NULL;
    if (!ws)
        return MRT_E_NOMEM;
    mrt_kernel_einsum(rt, &a, bp, &c, ws);
    free(ws);
    return MRT_OK;
}

/* ---- magnitudes ---------------------------------------------------------- */

/* gelu'(x), of gelu(x) = 0.5 x (1 + tanh(k (x + 0.044715 x^3))). */
static double gelu_prime(double x)
{
    const double k = 0.7978845608028654; /* sqrt(2 / pi) */
    double t = tanh(k * (x + 0.044715 * x * x * x));
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 0.134145 * x * x);
}

/* |df/da| and |df/db| of y = fn(a, b) (with constant c) at (a, b). */
static void partials(mrt_map_fn fn, double c, double a, double b, double y,
                     double d[2])
{
    double h = 1e-4 * fmax(1, fabs(b));
    d[0] = d[1] = 0;
    switch (fn) {
    case MRT_MAP_COPY:
    case MRT_MAP_CAST:
    case MRT_MAP_NEG:
    case MRT_MAP_SHIFT: d[0] = 1; break;
    case MRT_MAP_ADD:
    case MRT_MAP_SUB: d[0] = d[1] = 1; break;
    case MRT_MAP_MUL: d[0] = b, d[1] = a; break;
    case MRT_MAP_DIV: d[0] = 1 / b, d[1] = a / (b * b); break;
    case MRT_MAP_RELU: d[0] = a > 0; break;
    case MRT_MAP_GELU: d[0] = gelu_prime(a); break;
    case MRT_MAP_TANH: d[0] = 1 - y * y; break;
    case MRT_MAP_EXP: d[0] = y; break;
    case MRT_MAP_LOG: d[0] = 1 / a; break;
    case MRT_MAP_RSQRT: d[0] = 0.5 * y / a; break;
    case MRT_MAP_SQUARE: d[0] = 2 * a; break;
    case MRT_MAP_SCALE: d[0] = c; break;
    case MRT_MAP_AXPY: d[0] = 1, d[1] = c; break;
    case MRT_MAP_RELU_GRAD: d[0] = b > 0; break;
    case MRT_MAP_GELU_GRAD:
        d[0] = gelu_prime(b);
        d[1] = a * (gelu_prime(b + h) - gelu_prime(b - h)) / (2 * h);
        break;
    case MRT_MAP_TANH_GRAD: d[0] = 1 - b * b, d[1] = 2 * a * b; break;
    case MRT_MAP_RSQRT_GRAD:
        d[0] = 0.5 * b * b * b, d[1] = 1.5 * a * b * b;
        break;
    case MRT_MAP_SQUARE_GRAD: d[0] = 2 * b, d[1] = 2 * a; break;
    case MRT_MAP_MASK_FILL: d[0] = b != 0; break;
    case MRT_MAP_DROPOUT: d[0] = b != 0 ? c : 0; break;
    case MRT_MAP_LERP: d[0] = 1 - c, d[1] = c; break;
    case MRT_MAP_LERP_SQ: d[0] = 1 - c, d[1] = 2 * c * b; break;
    case MRT_MAP_SQRT_ADD: d[0] = a > 0 ? 0.5 / sqrt(a) : 0, d[1] = 1; break;
    case MRT_MAP_EQ:
    case MRT_MAP_ONE_HOT:
    case MRT_MAP_FN_COUNT: break;
    }
    d[0] = fabs(d[0]);
    d[1] = fabs(d[1]);
}

/* For each dim of out, the stride of input v along it (0 where v lacks
 * it: broadcast). */
static void broadcast_strides(const mrt_kview *out, const mrt_kview *v,
                              int64_t st[])
{
    for (int i = 0; i < out->ndims; i++) {
        st[i] = 0;
        for (int j = 0; v && j < v->ndims; j++) {
            int64_t stride = 1;
            for (int k = j + 1; k < v->ndims; k++)
                stride *= v->ext[k];
            if (v->dim[j] == out->dim[i])
                st[i] = stride;
        }
    }
}

static double get(const mrt_spec *s, const void *buf, int64_t i)
{
    return mrt_reference_dtype(s) == MRT_F64 ? ((const double *)buf)[i]
                                             : ((const float *)buf)[i];
}

static void set(const mrt_spec *s, void *buf, int64_t i, double x)
{
    if (mrt_reference_dtype(s) == MRT_F64)
        ((double *)buf)[i] = x;
    else
        ((float *)buf)[i] = (float)x;
}

/* The magnitudes of map op i's output: every element of out, with its
 * inputs' elements found through the broadcast strides. */
static void map_magnitude(const mrt_spec *s, const mrt_spec_op *o, void **v,
                          void **m)
{
    mrt_kview y = full_view(s, o->out, v), a = full_view(s, o->in[0], v);
    mrt_kview b = o->nin > 1 ? full_view(s, o->in[1], v) : a;
    int64_t sa[MRT_MAX_DIMS], sb[MRT_MAX_DIMS], idx[MRT_MAX_DIMS] = {0};
    int64_t ia = 0, ib = 0, n = full_count(s, o->out);
    broadcast_strides(&y, &a, sa);
    broadcast_strides(&y, o->nin > 1 ? &b : NULL, sb);
    double shift = o->fn == MRT_MAP_SHIFT ? fabs(o->c) : 0;
    for (int64_t k = 0; k < n; k++) {
        double yk = get(s, v[o->out], k), d[2];
        double ak = get(s, v[o->in[0]], ia);
        double bk = o->nin > 1 ? get(s, v[o->in[1]], ib) : 0;
        partials(o->fn, o->c, ak, bk, yk, d);
        double sum = d[0] * get(s, m[o->in[0]], ia) + shift +
                     (o->nin > 1 ? d[1] * get(s, m[o->in[1]], ib) : 0);
        /* a masked entry's fill is exact and never summed (its exp is
         * 0): magnitude 0, so the max over the row keeps the unmasked
         * entries' magnitudes */
        int filled = o->fn == MRT_MAP_MASK_FILL && bk == 0;
        set(s, m[o->out], k, filled ? 0 : fmax(fabs(yk), sum));
        for (int i = y.ndims - 1; i >= 0; i--) { /* the next element */
            ia += sa[i], ib += sb[i];
            if (++idx[i] < y.ext[i])
                break;
            ia -= sa[i] * y.ext[i], ib -= sb[i] * y.ext[i];
            idx[i] = 0;
        }
    }
}

/* The magnitudes of op i's output from its inputs' (m), once its values
 * (v) are known. */
static mrt_status op_magnitude(const mrt_spec *s, int i, void **v, void **m)
{
    const mrt_spec_op *o = &s->op[i];
    int ids = mrt_spec_op_ids(o);
    if (ids >= 0) { /* a lookup of magnitudes, at the ids' values */
        void *keep = m[o->in[ids]];
        m[o->in[ids]] = v[o->in[ids]];
        mrt_status st = run_op(s, i, m);
        m[o->in[ids]] = keep;
        return st;
    }
    if (o->kind == MRT_OP_MAP && o->fn == MRT_MAP_ONE_HOT) { /* 0s and 1s */
        memcpy(m[o->out], v[o->out], full_bytes(s, o->out));
        return MRT_OK;
    }
    if (o->kind != MRT_OP_MAP) /* einsum, reduce_max, rename: the same op
                                  of the magnitudes */
        return run_op(s, i, m);
    map_magnitude(s, o, v, m);
    return MRT_OK;
}

static void input_magnitude(const mrt_spec *s, int t, void **v, void **m)
{
    if (mrt_spec_tensor_dtype(s, t) == MRT_I32) { /* indices: unused */
        memcpy(m[t], v[t], full_bytes(s, t));
        return;
    }
    for (int64_t k = 0, n = full_count(s, t); k < n; k++)
        set(s, m[t], k, fabs(get(s, v[t], k)));
}

/* Input t whole, in its own type (16-bit values rounded as the run's
 * are), then in the reference's. */
static mrt_status init_input(const mrt_spec *s, int t, const mrt_layout *w,
                             const mrt_mesh *one, void *buf, mrt_error *err)
{
    mrt_dtype own = mrt_spec_tensor_dtype(s, t), rt = ref_type(s, t);
    if (own == rt)
        return mrt_shard_init(s, t, w, one, NULL, buf, err);
    int64_t n = full_count(s, t);
    void *tmp = mrt_alloc_big((size_t)n * (size_t)mrt_dtype_size(own) + 1, 0);
    if (!tmp)
        return MRT_E_NOMEM;
    mrt_status st = mrt_shard_init(s, t, w, one, NULL, tmp, err);
    if (st == MRT_OK)
        mrt_kernel_convert(rt, buf, own, tmp, n);
    free(tmp);
    return st;
}

/* Every tensor of s, whole, inputs initialised; with m, their
 * magnitudes too (the inputs' set). */
static mrt_status alloc_all(const mrt_spec *s, void ***out, void ***m,
                            mrt_error *err)
{
    void **bufs = calloc((size_t)s->ntensors + 1, sizeof *bufs);
    void **mags = m ? calloc((size_t)s->ntensors + 1, sizeof *mags) : NULL;
    mrt_mesh one = {.naxes = 0, .nranks = 1};
    mrt_status st = bufs && (mags || !m) ? MRT_OK : MRT_E_NOMEM;
    for (int t = 0; st == MRT_OK && t < s->ntensors; t++) {
        if (!(bufs[t] = mrt_alloc_big(full_bytes(s, t), 0)) ||
            (m && !(mags[t] = mrt_alloc_big(full_bytes(s, t), 0))))
            st = MRT_E_NOMEM;
        else if (s->tensor[t].producer < 0) {
            mrt_layout w = whole(&s->tensor[t].layout);
            st = init_input(s, t, &w, &one, bufs[t], err);
            if (st == MRT_OK && m)
                input_magnitude(s, t, bufs, mags);
        }
    }
    *out = bufs;
    if (m)
        *m = mags;
    return st;
}

static void free_all(const mrt_spec *s, void **bufs)
{
    if (bufs)
        for (int t = 0; t < s->ntensors; t++)
            free(bufs[t]);
    free(bufs);
}

/* Ops from .. to - 1, with their magnitudes when m is not NULL. */
static mrt_status run_ops(const mrt_spec *s, int from, int to, void **bufs,
                          void **m)
{
    mrt_status st = MRT_OK;
    for (int i = from; i < to && st == MRT_OK; i++) {
        st = run_op(s, i, bufs);
        if (st == MRT_OK && m)
            st = op_magnitude(s, i, bufs, m);
    }
    return st;
}

/* Tensor `to`'s value (and magnitude) into tensor `from`'s buffer. */
static void carry(const mrt_spec *s, void **bufs, void **m, int from, int to)
{
    size_t n = full_bytes(s, from);
    memcpy(bufs[from], bufs[to], n);
    if (m)
        memcpy(m[from], m[to], n);
}

/* The optimizer's scalars for step t (from 1), as the runner sets them. */
static void set_scalars(const mrt_spec *s, void **bufs, void **m, int64_t t)
{
    const mrt_train *tr = &s->train;
    double x[2];
    if (tr->loss < 0 || tr->step_scalar[0] < 0)
        return;
    mrt_optimizer_scalars(tr, t, x);
    for (int i = 0; i < 2; i++) {
        set(s, bufs[tr->step_scalar[i]], 0, x[i]);
        if (m)
            set(s, m[tr->step_scalar[i]], 0, fabs(x[i]));
    }
}

/* Training step t (from 1; or the whole program): every op, then each
 * parameter and optimizer state takes its updated value (and
 * magnitude). */
static mrt_status step(const mrt_spec *s, int64_t t, void **bufs, void **m,
                       double *loss)
{
    set_scalars(s, bufs, m, t);
    mrt_status st = run_ops(s, 0, s->nops, bufs, m);
    const mrt_train *tr = &s->train;
    if (st != MRT_OK || tr->loss < 0)
        return st;
    *loss = get(s, bufs[tr->loss], 0);
    for (int k = 0; k < tr->nparams; k++)
        carry(s, bufs, m, tr->param[k], tr->updated[k]);
    for (int k = 0; k < tr->nstate; k++)
        carry(s, bufs, m, tr->state[k], tr->state_next[k]);
    return MRT_OK;
}

/* The outputs of bufs, taken out of it into a new array. */
static void **take_outputs(const mrt_spec *s, void **bufs)
{
    void **res = calloc((size_t)s->noutputs + 1, sizeof *res);
    for (int k = 0; res && k < s->noutputs; k++) { /* outputs are distinct */
        res[k] = bufs[s->output[k]];
        bufs[s->output[k]] = NULL;
    }
    return res;
}

mrt_status mrt_reference_run(const mrt_spec *s, int64_t steps, double *losses,
                             void ***out, void ***mags, mrt_error *err)
{
    void **bufs = NULL, **m = NULL;
    *out = *mags = NULL;
    mrt_status st = alloc_all(s, &bufs, &m, err);
    for (int64_t k = 0; k < steps && st == MRT_OK; k++) {
        double loss = 0;
        st = step(s, k + 1, bufs, m, &loss);
        if (losses)
            losses[k] = loss;
    }
    if (st == MRT_OK &&
        (!(*out = take_outputs(s, bufs)) || !(*mags = take_outputs(s, m)))) {
        mrt_reference_free(s, *out);
        *out = NULL;
        st = MRT_E_NOMEM;
    }
    free_all(s, bufs);
    free_all(s, m);
    if (st == MRT_E_NOMEM)
        mrt_error_set(err, st, s->path, (mrt_mark){0},
                      "out of memory in the unsharded reference");
    return st;
}

void mrt_reference_free(const mrt_spec *s, void **outputs)
{
    for (int k = 0; outputs && k < s->noutputs; k++)
        free(outputs[k]);
    free(outputs);
}

/* The loss of the forward program with x[i] moved by h. */
static double loss_at(const mrt_spec *s, void **bufs, int x, int64_t i,
                      double h, mrt_status *st)
{
    double keep = get(s, bufs[x], i);
    set(s, bufs[x], i, keep + h);
    *st = run_ops(s, 0, s->train.nforward, bufs, NULL);
    set(s, bufs[x], i, keep);
    return get(s, bufs[s->train.loss], 0);
}

mrt_status mrt_reference_gradcheck(const mrt_spec *s, int per_tensor,
                                   mrt_gradcheck *out, int max_out, int *nout,
                                   mrt_error *err)
{
    const mrt_train *tr = &s->train;
    void **bufs = NULL, **m = NULL;
    *nout = 0;
    if (per_tensor > MRT_GRADCHECK_MAX)
        per_tensor = MRT_GRADCHECK_MAX;
    mrt_status st = alloc_all(s, &bufs, &m, err);
    if (st == MRT_OK) /* the gradients at the start, and their magnitudes */
        st = run_ops(s, 0, s->nops, bufs, m);
    for (int k = 0;
         st == MRT_OK && k < tr->nparams + tr->nextra && *nout < max_out; k++) {
        int x = k < tr->nparams ? tr->param[k] : tr->extra[k - tr->nparams];
        int gt = k < tr->nparams ? tr->grad[k]
                                 : tr->extra_grad[k - tr->nparams];
        int64_t n = full_count(s, x), picks = n < per_tensor ? n : per_tensor;
        mrt_gradcheck *g = &out[(*nout)++];
        memset(g, 0, sizeof *g);
        g->tensor = x;
        g->scale = mrt_verify_scale(mrt_reference_dtype(s), bufs[gt], n);
        for (int64_t j = 0; j < picks && st == MRT_OK; j++) {
            int64_t i = (j * 7919 + 13) % n; /* spread over the tensor */
            double x0 = get(s, bufs[x], i);
            double h = 1e-5 * fmax(1.0, fabs(x0));
            double up = loss_at(s, bufs, x, i, h, &st);
            double down = st == MRT_OK ? loss_at(s, bufs, x, i, -h, &st) : 0;
            if (!isfinite(up) || !isfinite(down)) { /* no difference to take */
                g->unchecked++;
                continue;
            }
            g->index[g->checked] = i;
            g->diff[g->checked] = (up - down) / (2 * h);
            g->grad[g->checked] = get(s, bufs[gt], i);
            g->mag[g->checked] = get(s, m[gt], i);
            g->checked++;
        }
    }
    free_all(s, bufs);
    free_all(s, m);
    if (st == MRT_E_NOMEM)
        mrt_error_set(err, st, s->path, (mrt_mark){0},
                      "out of memory in the gradient check");
    return st;
}
