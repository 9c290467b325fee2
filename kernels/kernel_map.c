/*
 * kernel_map.c — the elementwise kernels: out = fn(a, b) with the inputs
 * broadcast by dim id (mrt_kernel_map), and the maximum over some dims
 * (mrt_kernel_reduce_max), on one rank's dense row-major buffers.
 *
 * Both walk one tensor (out for a map, in for a reduction) in row-major
 * order: an odometer over every dim but the last, and a tight loop over
 * the last.  Each other operand is addressed through its element stride
 * along each dim of the walked tensor, 0 along a dim it lacks, so
 * broadcasting, permuted dim orders and reductions are all just strides;
 * no operand is copied and nothing is allocated.  A 0-dim tensor is a
 * walk of one row of one element.
 *
 * Arithmetic is done in the element type (float or double); the loops
 * are written once, as macros instantiated per type, with the switch over
 * the function outside the inner loop so each case is a plain loop the
 * compiler can vectorise.
 */
#include "kernel.h"

#include <assert.h>
#include <math.h>

/* ---- strides and the walk ------------------------------------------- */

enum { MAX_OPS = 3 }; /* the walked tensor and up to two others */

/* A row-major walk over a shape: ext[0..n-1] is the shape; st[k][d] is
 * operand k's element stride along dim d.  Dims 0..n-2 are the odometer,
 * dim n-1 the inner row (a 0-dim shape is one row of length 1). */
typedef struct walk {
    int n, nops;
    int64_t ext[MRT_MAX_DIMS];
    int64_t st[MAX_OPS][MRT_MAX_DIMS];
    int64_t idx[MRT_MAX_DIMS]; /* the current row's index, dims 0..n-2 */
    int64_t off[MAX_OPS];      /* each operand's offset of that row */
} walk;

/* st[d] = v's element stride along shape's dim d (0 if v lacks it).
 * Every dim of v must be a dim of shape with the same extent. */
static void strides_along(const mrt_kview *shape, const mrt_kview *v,
                          int64_t *st)
{
    assert(v->ndims >= 0 && v->ndims <= shape->ndims);
    for (int d = 0; d < shape->ndims; d++)
        st[d] = 0;
    int64_t s = 1;
    for (int i = v->ndims - 1; i >= 0; i--) {
        int d = 0;
        while (d < shape->ndims && shape->dim[d] != v->dim[i])
            d++;
        assert(d < shape->ndims && shape->ext[d] == v->ext[i]);
        if (d < shape->ndims)
            st[d] = s;
        s *= v->ext[i];
    }
}

static int64_t count(const mrt_kview *v)
{
    int64_t n = 1;
    for (int i = 0; i < v->ndims; i++)
        n *= v->ext[i];
    return n;
}

/* Sets up a walk over shape with operand 0 = shape itself and the others
 * (ops[1..nops-1]) addressed by dim id. */
static void walk_init(walk *w, const mrt_kview *shape,
                      const mrt_kview *const *ops, int nops)
{
    assert(shape->ndims >= 0 && shape->ndims <= MRT_MAX_DIMS);
    assert(nops >= 1 && nops <= MAX_OPS);
    w->n = shape->ndims;
    w->nops = nops;
    for (int d = 0; d < w->n; d++) {
        w->ext[d] = shape->ext[d];
        w->idx[d] = 0;
    }
    strides_along(shape, shape, w->st[0]);
    for (int k = 1; k < nops; k++)
        strides_along(shape, ops[k], w->st[k]);
    for (int k = 0; k < nops; k++)
        w->off[k] = 0;
}

/* Length of the inner row and operand k's stride along it. */
static int64_t row_len(const walk *w)
{
    return w->n ? w->ext[w->n - 1] : 1;
}

static int64_t row_stride(const walk *w, int k)
{
    return w->n ? w->st[k][w->n - 1] : 0;
}

/* Moves to the next row; returns 0 after the last one. */
static int walk_next(walk *w)
{
    for (int d = w->n - 2; d >= 0; d--) {
        if (++w->idx[d] < w->ext[d]) {
            for (int k = 0; k < w->nops; k++)
                w->off[k] += w->st[k][d];
            return 1;
        }
        w->idx[d] = 0;
        for (int k = 0; k < w->nops; k++)
            w->off[k] -= w->st[k][d] * (w->ext[d] - 1);
    }
    return 0;
}

/* ---- one row, per element type --------------------------------------- */

/* What a map row needs besides its pointers. */
typedef struct maprow {
    mrt_map_fn fn;
    double c;
    int64_t len, sa, sb; /* row length, input strides along it */
    int64_t j0, dj;      /* ONE_HOT: class index of element 0, its step */
} maprow;

/* The loop over one row: x and y are the input elements, EXPR the
 * output.  One-input functions get b = a, so y is a harmless reload. */
#define MAP_LOOP(T, EXPR)                                                        \
    do {                                                                    \
        if (r->sa == 1 && r->sb == 1) {                                     \
            for (int64_t i = 0; i < r->len; i++) {                          \
                T x = a[i], y = b[i];                                       \
                (void)x, (void)y;                                           \
                o[i] = (EXPR);                                              \
            }                                                               \
        } else {                                                            \
            for (int64_t i = 0; i < r->len; i++) {                          \
                T x = a[i * r->sa], y = b[i * r->sb];                       \
                (void)x, (void)y;                                           \
                o[i] = (EXPR);                                              \
            }                                                               \
        }                                                                   \
    } while (0)

/* GELU (tanh approximation) and its exact derivative, in type T:
 *   u = k (x + 0.044715 x^3),  k = sqrt(2/pi)
 *   gelu(x)  = 0.5 x (1 + tanh u)
 *   gelu'(x) = 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) k (1 + 3 0.044715 x^2)
 */
#define GELU_K 0.79788456080286535587989211986876
#define GELU_A 0.044715

#define DEFINE_MAP(T, SUF, TANH, EXP, LOG, SQRT)                            \
    static T gelu_##SUF(T x)                                                \
    {                                                                       \
        T u = (T)GELU_K * (x + (T)GELU_A * x * x * x);                      \
        return (T)0.5 * x * ((T)1 + TANH(u));                               \
    }                                                                       \
    static T gelu_grad_##SUF(T x)                                           \
    {                                                                       \
        T u = (T)GELU_K * (x + (T)GELU_A * x * x * x);                      \
        T th = TANH(u);                                                     \
        T du = (T)GELU_K * ((T)1 + (T)(3 * GELU_A) * x * x);                \
        return (T)0.5 * ((T)1 + th) + (T)0.5 * x * ((T)1 - th * th) * du;   \
    }                                                                       \
    static void map_row_##SUF(const maprow *r, T *o, const T *a,            \
                              const T *b)                                   \
    {                                                                       \
        const T c = (T)r->c;                                                \
        switch (r->fn) {                                                    \
        case MRT_MAP_COPY: MAP_LOOP(T, x); break;                                \
        case MRT_MAP_ADD: MAP_LOOP(T, x + y); break;                             \
        case MRT_MAP_SUB: MAP_LOOP(T, x - y); break;                             \
        case MRT_MAP_MUL: MAP_LOOP(T, x * y); break;                             \
        case MRT_MAP_DIV: MAP_LOOP(T, x / y); break;                             \
        case MRT_MAP_RELU: MAP_LOOP(T, x > 0 ? x : (T)0); break;                 \
        case MRT_MAP_GELU: MAP_LOOP(T, gelu_##SUF(x)); break;                    \
        case MRT_MAP_TANH: MAP_LOOP(T, TANH(x)); break;                          \
        case MRT_MAP_EXP: MAP_LOOP(T, EXP(x)); break;                            \
        case MRT_MAP_LOG: MAP_LOOP(T, LOG(x)); break;                            \
        case MRT_MAP_NEG: MAP_LOOP(T, -x); break;                                \
        case MRT_MAP_RSQRT: MAP_LOOP(T, (T)1 / SQRT(x)); break;                  \
        case MRT_MAP_SQUARE: MAP_LOOP(T, x * x); break;                          \
        case MRT_MAP_SCALE: MAP_LOOP(T, c * x); break;                           \
        case MRT_MAP_SHIFT: MAP_LOOP(T, x + c); break;                           \
        case MRT_MAP_AXPY: MAP_LOOP(T, x + c * y); break;                        \
        case MRT_MAP_RELU_GRAD: MAP_LOOP(T, y > 0 ? x : (T)0); break;            \
        case MRT_MAP_GELU_GRAD: MAP_LOOP(T, x * gelu_grad_##SUF(y)); break;      \
        case MRT_MAP_TANH_GRAD: MAP_LOOP(T, x * ((T)1 - y * y)); break;          \
        case MRT_MAP_RSQRT_GRAD: MAP_LOOP(T, (T)-0.5 * x * y * y * y); break;    \
        case MRT_MAP_SQUARE_GRAD: MAP_LOOP(T, (T)2 * x * y); break;              \
        case MRT_MAP_EQ: MAP_LOOP(T, x == y ? (T)1 : (T)0); break;               \
        case MRT_MAP_ONE_HOT:                                               \
            /* labels are integers stored as T: round, then compare in */   \
            /* double, where any class index of interest is exact */        \
            MAP_LOOP(T, round((double)x) == (double)(r->j0 + i * r->dj)          \
                       ? (T)1 : (T)0);                                      \
            break;                                                          \
        case MRT_MAP_FN_COUNT: assert(0); break;                            \
        }                                                                   \
    }                                                                       \
    /* o[i * so] = max(o[i * so], a[i * sa]); NaN wins, as in numpy */      \
    static void max_row_##SUF(int64_t len, T *o, int64_t so, const T *a,    \
                              int64_t sa)                                   \
    {                                                                       \
        if (so == 0) {                                                      \
            T m = o[0];                                                     \
            for (int64_t i = 0; i < len; i++) {                             \
                T x = a[i * sa];                                            \
                if (x > m || isnan(x))                                        \
                    m = x;                                                  \
            }                                                               \
            o[0] = m;                                                       \
            return;                                                         \
        }                                                                   \
        for (int64_t i = 0; i < len; i++) {                                 \
            T x = a[i * sa];                                                \
            if (x > o[i * so] || isnan(x))                                    \
                o[i * so] = x;                                              \
        }                                                                   \
    }

DEFINE_MAP(float, f32, tanhf, expf, logf, sqrtf)
DEFINE_MAP(double, f64, tanh, exp, log, sqrt)

/* ---- the entry points ------------------------------------------------ */

void mrt_kernel_map(mrt_dtype t, mrt_map_fn fn, double c, const mrt_kview *out,
                    const mrt_kview *a, const mrt_kview *b,
                    const int64_t *offset, int hot)
{
    assert(t >= 0 && t < MRT_DTYPE_COUNT);
    assert(fn >= 0 && fn < MRT_MAP_FN_COUNT);
    assert(mrt_map_arity(fn) == 1 || b);
    assert(fn != MRT_MAP_ONE_HOT ||
           (offset && hot >= 0 && hot < out->ndims));
    if (mrt_map_arity(fn) == 1)
        b = a; /* never read for its value */
    if (count(out) == 0)
        return;
    const mrt_kview *ops[MAX_OPS] = {out, a, b};
    walk w;
    walk_init(&w, out, ops, MAX_OPS);
    maprow r = {fn, c, row_len(&w), row_stride(&w, 1), row_stride(&w, 2),
                0, 0};
    int hot_inner = fn == MRT_MAP_ONE_HOT && hot == out->ndims - 1;
    do {
        if (fn == MRT_MAP_ONE_HOT) {
            r.j0 = offset[hot] + (hot_inner ? 0 : w.idx[hot]);
            r.dj = hot_inner;
        }
        if (t == MRT_F64)
            map_row_f64(&r, (double *)out->data + w.off[0],
                        (const double *)a->data + w.off[1],
                        (const double *)b->data + w.off[2]);
        else
            map_row_f32(&r, (float *)out->data + w.off[0],
                        (const float *)a->data + w.off[1],
                        (const float *)b->data + w.off[2]);
    } while (walk_next(&w));
}

void mrt_kernel_reduce_max(mrt_dtype t, const mrt_kview *in,
                           const mrt_kview *out)
{
    assert(t >= 0 && t < MRT_DTYPE_COUNT);
    int64_t n = count(out);
    for (int64_t i = 0; i < n; i++) {
        if (t == MRT_F64)
            ((double *)out->data)[i] = -INFINITY;
        else
            ((float *)out->data)[i] = -INFINITY;
    }
    if (count(in) == 0)
        return;
    /* Walk in; out is addressed with stride 0 along the reduced dims. */
    const mrt_kview *ops[2] = {in, out};
    walk w;
    walk_init(&w, in, ops, 2);
    int64_t len = row_len(&w), si = row_stride(&w, 0),
            so = row_stride(&w, 1);
    do {
        if (t == MRT_F64)
            max_row_f64(len, (double *)out->data + w.off[1], so,
                        (const double *)in->data + w.off[0], si);
        else
            max_row_f32(len, (float *)out->data + w.off[1], so,
                        (const float *)in->data + w.off[0], si);
    } while (walk_next(&w));
}
