/*
 * reference_mag.c — the magnitudes of the unsharded reference
 * (reference.c): per element of every tensor, the size of the rounding
 * noise it carries, by which --verify scales its tolerance (verify.c).
 * A result that is zero in exact arithmetic (a gradient that cancels) is
 * rounding noise of the size of its terms in both runs, and two noises
 * differ by as much; a result that is not is compared against itself.
 *
 * An element's magnitude is the larger of
 *   - its own terms: the sum of |terms| the op sums into it (sum |a| |b|
 *     for an einsum, sum |a| for a sum, |y| for a map), the size of what
 *     another order of the same sum rounds differently;
 *   - what its inputs carry in: their magnitudes times the op's partial
 *     derivatives, added in quadrature (the root of the sum of squares):
 *     sqrt(sum (m(a) b)^2 + (a m(b))^2) for an einsum, sqrt(sum m(a)^2)
 *     for a sum, hypot(|df/da| m(a), |df/db| m(b)) for a map
 *     y = f(a, b) (+ |c| for a shift), so a sum that cancels keeps the
 *     size of its terms; for Adam's second moment and its root, what the
 *     first order misses where the gradient is noise (carried_in).
 * |x| for an input; the input's for a rename and a gather (copies), the
 * largest of those compared for a reduce_max; a scatter_add is a sum.
 *
 * In quadrature because the roundings behind different terms are
 * independent, and independent roundings add like a random walk (the
 * probabilistic analysis of Higham and Mary, SIAM J. Sci. Comput. 41(5),
 * 2019, that verify.c's 16-bit tolerances rest on too).  Added in full,
 * the worst case, each op multiplies the ratio of magnitude to value by
 * its condition number (the sum of |terms| over |their sum|: about
 * sqrt(n) for n terms of random sign), so the bound grows as a power of
 * the depth; the einsum of the magnitudes (sum m(a) m(b), the rule
 * before) even multiplied its two inputs' ratios.  examples/gpt2.yaml at
 * its test dims (2 layers) reached magnitudes of 1e31 in float32, past
 * its range in the gradients (infinite, so ignored: the key bias's
 * gradient, zero in exact arithmetic, was judged against its own noise
 * and failed) and of 1e60 in float64, so no check of it could fail; in
 * quadrature they stay below 500.  The price: a noise that reaches an
 * op by several paths is not independent of itself, and adds in full
 * there, up to sqrt(n) times the quadrature's sum of n: well inside the
 * margin of the float32 tolerance (840 units in the last place, where
 * reordered sums differ by a few).
 *
 * Known limits (measured 2026-12-02, session 12):
 *   - The bound still grows as a power of the depth and of the SGD
 *     steps, through attention: a softmax's exp turns its scores'
 *     absolute noise into relative noise of p, so the ratio of magnitude
 *     to value is multiplied by about the scores' size at every layer
 *     (examples/blocks.yaml, 3 layers: p's ratio 75, 1.4e3, 1.2e4 in
 *     layers 0-2, 5e5 in grad:h0.s), and each step's parameters carry
 *     it into the next step.  That is first-order conditioning, not a
 *     double count, but in float64 blocks.yaml peaks at 5e3 after 1 step,
 *     1.4e7 after 2 and 4.9e10 after 3 (h0.ln1.g:next), so at 3 steps
 *     those checks are vacuous (1e-10 of 5e10); gpt2 at 1 step peaks at
 *     451.
 *   - Adam's step for a gradient that is zero in exact arithmetic
 *     divides noise by a denominator that is noise too (sqrt(v) + eps,
 *     eps far below sqrt(v)'s noise), and to first order that has no
 *     bound: the parameter's magnitude is about lr m(m) / eps
 *     (tests/specs/verify/zero_gradient_adam_bf16.yaml: c:next's is 2e7,
 *     so it and the second step's results are judged against 1e2-1e7,
 *     vacuous).  The true bound, |m| / sqrt(v) <= (1 - beta1) /
 *     sqrt(1 - beta2) and so on over the steps, is not local to an op.
 *
 * A causal softmax's masked entries hold mask_fill's -1e30, exact and
 * never summed (its exp is 0): magnitude 0, and so is what the shift by
 * the row's max makes of it (-1e30 - max is -1e30 in both runs), so the
 * fill never enters a bound and the max over a row keeps the kept
 * entries' magnitudes.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "big_alloc.h"
#include "kernel.h"
#include "local.h"

static double get(const mrt_spec *s, const void *buf, int64_t i)
{
    return mrt_reference_get(s, buf, i);
}

static void set(const mrt_spec *s, void *buf, int64_t i, double x)
{
    mrt_reference_set(s, buf, i, x);
}

/* A buffer for float tensor t whole (free it), or NULL. */
static void *alloc_like(const mrt_spec *s, int t)
{
    size_t size = (size_t)mrt_dtype_size(mrt_reference_dtype(s));
    return mrt_alloc_big((size_t)mrt_reference_count(s, t) * size, 0);
}

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

/* What map y = fn(a, b) (with constant c) carries in from inputs whose
 * noise is at most tol m(a) and tol m(b), in magnitudes (divided by tol):
 * the partials' terms in quadrature (to first order), and two terms the
 * first order misses where an input is pure noise (tol m above its value,
 * as a gradient that is zero in exact arithmetic is):
 *   - the square of Adam's second moment (lerp_sq, (1 - c) a + c b^2):
 *     its second-order term c tol m(b)^2.  The run's v is the square of
 *     its own noise, which in bfloat16 is ~1e5 times the reference's
 *     float32 noise, so the first-order 2 c |b| m(b), at the reference's
 *     |b|, is ~1e5 times too small: v:next FAILED at 1-4 ranks
 *     (tests/specs/verify/zero_gradient_adam_bf16.yaml; examples/gpt3.yaml
 *     in its own precision, h*.attn.bk:v:next);
 *   - the root that follows it (sqrt_add): |sqrt(a + h) - sqrt(a)| <=
 *     sqrt(|h|), so it carries at most sqrt(m(a) / tol), where its
 *     partial 0.5 / sqrt(a) is singular at a noise-sized a.  For Adam's
 *     sqrt(v) that is sqrt(c) m(g), as the first order gives at a real
 *     g; without the cap the term above reached every updated parameter
 *     through Adam's division (tests/specs/zero_adam_bf16.yaml's largest
 *     magnitude 3 -> 4e5, gpt3's 5e4 -> 1e12).
 * A plain square (a layer norm's variance) and a product get no
 * second-order term: their inputs are real values in practice, and where
 * a magnitude has grown far above its value (over SGD steps, below) the
 * term squares the excess: with it examples/blocks.yaml's 16-bit runs
 * lost their magnitudes in 3 steps (past float32's range, so ignored:
 * the float16 run FAILED again, as under the rule before). */
static double carried_in(mrt_map_fn fn, double c, double a, double b, double y,
                         double ma, double mb, double tol)
{
    double d[2];
    partials(fn, c, a, b, y, d);
    double da = d[0] * ma, db = d[1] * mb;
    if (fn == MRT_MAP_SQRT_ADD && tol > 0) /* sqrt(a) + b */
        da = a > 0 ? fmin(da, sqrt(ma / tol)) : sqrt(ma / tol);
    double carried = hypot(da, db);
    if (fn == MRT_MAP_LERP_SQ) /* (1 - c) a + c b^2 */
        carried += fabs(c) * tol * mb * mb;
    return carried;
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

/* A masked entry: mask_fill's value, exact, with magnitude 0 (no other
 * element has a zero magnitude under a non-zero value). */
static int filled(double value, double mag)
{
    return mag == 0 && value != 0;
}

/* The magnitudes of map op o's output: every element of out, with its
 * inputs' elements found through the broadcast strides; tol is
 * --verify's tolerance for out (an upper bound of its inputs'). */
static void map_magnitude(const mrt_spec *s, const mrt_spec_op *o, void **v,
                          void **m, double tol)
{
    const mrt_layout *ly = &s->tensor[o->out].layout;
    const mrt_layout *la = &s->tensor[o->in[0]].layout;
    mrt_kview y = {.ndims = ly->ndims, .dim = ly->dim, .ext = ly->size};
    mrt_kview a = {.ndims = la->ndims, .dim = la->dim, .ext = la->size}, b = a;
    if (o->nin > 1) {
        const mrt_layout *lb = &s->tensor[o->in[1]].layout;
        b = (mrt_kview){.ndims = lb->ndims, .dim = lb->dim, .ext = lb->size};
    }
    int64_t sa[MRT_MAX_DIMS], sb[MRT_MAX_DIMS], idx[MRT_MAX_DIMS] = {0};
    int64_t ia = 0, ib = 0, n = mrt_reference_count(s, o->out);
    broadcast_strides(&y, &a, sa);
    broadcast_strides(&y, o->nin > 1 ? &b : NULL, sb);
    double shift = o->fn == MRT_MAP_SHIFT ? fabs(o->c) : 0;
    int additive = o->fn == MRT_MAP_ADD || o->fn == MRT_MAP_SUB ||
                   o->fn == MRT_MAP_SHIFT;
    for (int64_t k = 0; k < n; k++) {
        double yk = get(s, v[o->out], k);
        double ak = get(s, v[o->in[0]], ia), ma = get(s, m[o->in[0]], ia);
        double bk = o->nin > 1 ? get(s, v[o->in[1]], ib) : 0;
        double mb = o->nin > 1 ? get(s, m[o->in[1]], ib) : 0;
        double carried = carried_in(o->fn, o->c, ak, bk, yk, ma, mb, tol) +
                         shift;
        /* the fill, where the mask puts it and where a shift leaves it
         * as it is, stays exact */
        int exact = (o->fn == MRT_MAP_MASK_FILL && bk == 0) ||
                    (additive && filled(ak, ma) && yk == ak);
        set(s, m[o->out], k, exact ? 0 : fmax(fabs(yk), carried));
        for (int i = y.ndims - 1; i >= 0; i--) { /* the next element */
            ia += sa[i], ib += sb[i];
            if (++idx[i] < y.ext[i])
                break;
            ia -= sa[i] * y.ext[i], ib -= sb[i] * y.ext[i];
            idx[i] = 0;
        }
    }
}

/* out = op i of its inputs' terms: |x| of each (with -1), or x^2 of each
 * but input `with`, read as its magnitudes squared; a scatter_add's ids
 * as they are.  tmp[k]: a buffer the size of input k. */
static mrt_status terms_pass(const mrt_spec *s, int i, void **v, void **m,
                             int with, void *tmp[2], void *out)
{
    const mrt_spec_op *o = &s->op[i];
    int ids = mrt_spec_op_ids(o);
    void *in[2] = {NULL, NULL};
    for (int k = 0; k < o->nin; k++) {
        int t = o->in[k];
        in[k] = k == ids ? v[t] : tmp[k];
        for (int64_t j = 0, n = mrt_reference_count(s, t); k != ids && j < n;
             j++) {
            double x = fabs(get(s, k == with ? m[t] : v[t], j));
            set(s, tmp[k], j, with < 0 ? x : x * x);
        }
    }
    return mrt_reference_op(s, i, in[0], in[1], out);
}

/* The magnitudes of a sum, op i (an einsum or a scatter_add): the larger
 * of the sum of |terms| and the inputs' magnitudes carried in, in
 * quadrature. */
static mrt_status sum_magnitude(const mrt_spec *s, int i, void **v, void **m)
{
    const mrt_spec_op *o = &s->op[i];
    int c = o->out, ids = mrt_spec_op_ids(o), first = ids == 0 ? 1 : 0;
    int64_t n = mrt_reference_count(s, c);
    void *tmp[2] = {NULL, NULL}, *own = alloc_like(s, c);
    void *more = alloc_like(s, c);
    mrt_status st = own && more ? MRT_OK : MRT_E_NOMEM;
    for (int k = 0; k < o->nin; k++)
        if (k != ids && !(tmp[k] = alloc_like(s, o->in[k])))
            st = MRT_E_NOMEM;
    if (st == MRT_OK) /* sum |a| |b| */
        st = terms_pass(s, i, v, m, -1, tmp, own);
    if (st == MRT_OK) /* sum (m(a) b)^2 */
        st = terms_pass(s, i, v, m, first, tmp, m[c]);
    if (st == MRT_OK && o->nin > 1 && ids < 0) { /* + sum (a m(b))^2 */
        st = terms_pass(s, i, v, m, 1, tmp, more);
        if (st == MRT_OK)
            mrt_kernel_add(mrt_reference_dtype(s), n, more, m[c]);
    }
    for (int64_t k = 0; st == MRT_OK && k < n; k++)
        set(s, m[c], k, fmax(get(s, own, k), sqrt(get(s, m[c], k))));
    free(tmp[0]);
    free(tmp[1]);
    free(own);
    free(more);
    return st;
}

mrt_status mrt_reference_op_magnitude(const mrt_spec *s, int i, void **v,
                                      void **m)
{
    const mrt_spec_op *o = &s->op[i];
    switch (o->kind) {
    case MRT_OP_EINSUM:
    case MRT_OP_SCATTER_ADD: return sum_magnitude(s, i, v, m);
    case MRT_OP_GATHER: /* the table's magnitudes, at the ids' values */
        return mrt_reference_op(s, i, m[o->in[0]], v[o->in[1]], m[o->out]);
    case MRT_OP_REDUCE_MAX:
    case MRT_OP_RENAME:
        return mrt_reference_op(s, i, m[o->in[0]], NULL, m[o->out]);
    case MRT_OP_MAP:
        if (o->fn == MRT_MAP_ONE_HOT) /* 0s and 1s, exact */
            memcpy(m[o->out], v[o->out],
                   (size_t)mrt_reference_count(s, o->out) *
                       (size_t)mrt_dtype_size(mrt_reference_dtype(s)));
        else {
            int *depth = malloc(((size_t)s->ntensors + 1) * sizeof *depth);
            if (!depth)
                return MRT_E_NOMEM;
            map_magnitude(
                s, o, v, m,
                mrt_verify_tolerance(s, 0, mrt_verify_chain(s, o->out, depth)));
            free(depth);
        }
        return MRT_OK;
    case MRT_OP_KIND_COUNT: break;
    }
    return MRT_OK;
}

void mrt_reference_input_magnitude(const mrt_spec *s, int t, void **v, void **m)
{
    int64_t n = mrt_reference_count(s, t);
    if (mrt_spec_tensor_dtype(s, t) == MRT_I32) { /* indices: unused */
        memcpy(m[t], v[t], (size_t)n * sizeof(int32_t));
        return;
    }
    for (int64_t k = 0; k < n; k++)
        set(s, m[t], k, fabs(get(s, v[t], k)));
}
