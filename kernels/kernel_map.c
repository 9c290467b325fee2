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
 * Arithmetic is done in the element type (float or double): each
 * function's row loop is written once, as a small macro instantiated for
 * both types, and chosen by a table indexed by the function, outside
 * the inner loop.  A contiguous row goes by blocks of a fixed length,
 * which GCC vectorises at -O2.  The float32 transcendentals (exp, log,
 * tanh, gelu and its derivative) are kernels/fast_math.h's: no branches
 * or calls, so they vectorise too, and take the same time for any
 * values; relu's are selects for the same reason.  The float64 ones
 * keep libm (<tgmath.h>): they are the reference that float32 runs are
 * verified against.  kernels/ builds with -fno-math-errno (meson.build),
 * so that sqrt is one instruction, which rsqrt's and sqrt_add's loops
 * vectorise.
 */
#include "fast_math.h"
#include "kernel.h"

#include <assert.h>
#include <string.h>
#include <tgmath.h>

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
    double c;
    int64_t len, sa, sb; /* row length, input strides along it */
    int64_t j0, dj;      /* ONE_HOT: class index of element 0, its step */
} maprow;

/* GELU (tanh approximation) and its exact derivative:
 *   u = k (x + 0.044715 x^3),  k = sqrt(2/pi)
 *   gelu(x)  = 0.5 x (1 + tanh u)
 *   gelu'(x) = 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) k (1 + 3 0.044715 x^2)
 * The float64 ones are these formulas on libm (<tgmath.h>: tanh of a
 * double), the reference a float32 run is verified against.  The
 * float32 ones are branch-free (kernels/fast_math.h), written with
 * 0.5 (1 + tanh u) = sigmoid(2u): gelu(x) = x sigmoid(2u) and
 * gelu'(x) = sigmoid(2u) + 2 x u' sigmoid(2u) sigmoid(-2u), from the
 * logistic pair (q, p) of u, which neither cancels (1 + tanh u does, in
 * float, for x below -3) nor overflows.  x is clamped to -20 (20 for
 * the derivative), where both are at their limits in float, so that
 * x = -inf gives 0 rather than -inf * 0. */
#define GELU_K 0.79788456080286535587989211986876
#define GELU_A 0.044715
#define GELU_U(T, x) ((T)GELU_K * ((x) + (T)GELU_A * (x) * (x) * (x)))
#define GELU_DU(T, x) ((T)GELU_K * ((T)1 + (T)(3 * GELU_A) * (x) * (x)))

/* x clamped to -20, and 0 where it is under 2^-30 (gelu is x / 2 there,
 * and its derivative 1/2; no subnormal cube; what the logistic pair
 * takes) */
MRT_FAST_INLINE float gelu_clamp_f32(float x)
{
    return mrt_fast_select(fabsf(x) < 0x1p-30f, 0.0f, x);
}

MRT_FAST_INLINE float gelu_f32(float x)
{
    float xo = mrt_fast_select(x < -20.0f, -20.0f, x), xc = gelu_clamp_f32(xo);
    float u = GELU_U(float, xc), q, p;
    mrt_fast_logistic(u, &q, &p);
    return xo * mrt_fast_select(u >= 0.0f, q, p);
}

static double gelu_f64(double x)
{
    return 0.5 * x * (1.0 + tanh(GELU_U(double, x)));
}

MRT_FAST_INLINE float gelu_grad_f32(float x)
{
    float xc = mrt_fast_select(x < -20.0f, -20.0f, x);
    xc = gelu_clamp_f32(mrt_fast_select(xc > 20.0f, 20.0f, xc));
    float u = GELU_U(float, xc), du = GELU_DU(float, xc), q, p;
    mrt_fast_logistic(u, &q, &p);
    return mrt_fast_select(u >= 0.0f, q, p) + 2.0f * xc * du * p * q;
}

static double gelu_grad_f64(double x)
{
    double th = tanh(GELU_U(double, x));
    return 0.5 * (1 + th) + 0.5 * x * (1 - th * th) * GELU_DU(double, x);
}

#define GELU(x) _Generic((x), float : gelu_f32, double : gelu_f64)(x)
#define GELU_GRAD(x)                                                           \
    _Generic((x), float : gelu_grad_f32, double : gelu_grad_f64)(x)

/* The float32 transcendentals are kernels/fast_math.h's, the float64
 * ones libm's; SELECT is a select by masks in either type. */
#define TANH(x) _Generic((x), float : mrt_fast_tanhf, double : tanh)(x)
#define EXP(x) _Generic((x), float : mrt_fast_expf, double : exp)(x)
#define LOG(x) _Generic((x), float : mrt_fast_logf, double : log)(x)
#define SELECT(c, x, y)                                                        \
    _Generic((x), float                                                        \
             : mrt_fast_select, double                                         \
             : mrt_fast_select_f64)(c, x, y)

/* The loop over row elements FROM..len-1: x and y are the input
 * elements (strides SA and SB), EXPR the output, T the element type.
 * One-input functions get b = a, so y is a harmless reload. */
#define MAP_LOOP(FROM, SA, SB, EXPR)                                           \
    for (int64_t i = (FROM); i < r->len; i++) {                                \
        T x = a[i * (SA)], y = b[i * (SB)];                                    \
        (void)x, (void)y;                                                      \
        o[i] = (EXPR);                                                         \
    }

/* Contiguous rows go by blocks of MAP_BLOCK elements into a local
 * buffer, then copied out: a loop of a fixed count that cannot alias
 * its output (a map may run in place, ops/inplace.c) is what GCC's -O2
 * vectorises (its "very cheap" cost model: no peeling, no runtime alias
 * checks).  The last partial block goes element by element. */
enum { MAP_BLOCK = 32 };
#define MAP_BLOCKS(EXPR)                                                       \
    int64_t i0 = 0;                                                            \
    for (; i0 + MAP_BLOCK <= r->len; i0 += MAP_BLOCK) {                        \
        T t[MAP_BLOCK];                                                        \
        for (int j = 0; j < MAP_BLOCK; j++) {                                  \
            int64_t i = i0 + j;                                                \
            T x = a[i], y = b[i];                                              \
            (void)x, (void)y, (void)i;                                         \
            t[j] = (EXPR);                                                     \
        }                                                                      \
        memcpy(o + i0, t, sizeof t);                                           \
    }                                                                          \
    MAP_LOOP(i0, 1, 1, EXPR)

/* On x86-64 with GCC each row function is also built for AVX2, chosen
 * when the program loads if the processor has it: eight floats per
 * vector instead of SSE2's four, and three-operand instructions (half
 * of SSE2's gelu loop is register copies).  Not FMA: the clones do the
 * same IEEE operations in the same order, so their results are the
 * same bits. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define MAP_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define MAP_CLONES
#endif

/* The row function row_NAME_SUF of one elementwise function, for elements of
 * type ELEM: by blocks for contiguous inputs, and element by element for
 * strided ones. */
#define MAP_ROW_FN(SUF, ELEM, NAME, EXPR)                                      \
    MAP_CLONES static void row_##NAME##_##SUF(const maprow *r, ELEM *o,        \
                                              const ELEM *a, const ELEM *b)    \
    {                                                                          \
        typedef ELEM T;                                                        \
        const T c = (T)r->c;                                                   \
        (void)c;                                                               \
        if (r->sa == 1 && r->sb == 1) {                                        \
            MAP_BLOCKS(EXPR)                                                   \
        } else                                                                 \
            MAP_LOOP(0, r->sa, r->sb, EXPR)                                    \
    }
#define MAP_ROW(NAME, EXPR)                                                    \
    MAP_ROW_FN(f32, float, NAME, EXPR) MAP_ROW_FN(f64, double, NAME, EXPR)

MAP_ROW(copy, x)
MAP_ROW(add, x + y)
MAP_ROW(sub, x - y)
MAP_ROW(mul, x *y)
MAP_ROW(div, x / y)
MAP_ROW(relu, SELECT(x > 0, x, (T)0))
MAP_ROW(gelu, GELU(x))
MAP_ROW(tanh, TANH(x))
MAP_ROW(exp, EXP(x))
MAP_ROW(log, LOG(x))
MAP_ROW(neg, -x)
MAP_ROW(rsqrt, (T)1 / sqrt(x))
MAP_ROW(square, x *x)
MAP_ROW(scale, c *x)
MAP_ROW(shift, x + c)
MAP_ROW(axpy, x + c * y)
MAP_ROW(relu_grad, SELECT(y > 0, x, (T)0))
MAP_ROW(gelu_grad, x *GELU_GRAD(y))
MAP_ROW(tanh_grad, x *((T)1 - y * y))
MAP_ROW(rsqrt_grad, (T)-0.5 * x * y * y * y)
MAP_ROW(square_grad, (T)2 * x * y)
MAP_ROW(eq, x == y ? (T)1 : (T)0)
/* labels are integers stored as T: a label is its class if it is within
 * 1/2 of the class index (rounded, without a call to round: it stopped
 * the loop and cost 2 ns an element), compared in double, where any
 * class index of interest is exact */
MAP_ROW(one_hot,
        fabs((double)x - (double)(r->j0 + i * r->dj)) < 0.5 ? (T)1 : (T)0)
MAP_ROW(mask_fill, y != 0 ? x : c)
MAP_ROW(dropout, y != 0 ? c * x : (T)0)
MAP_ROW(lerp, x + c * (y - x))
MAP_ROW(lerp_sq, x + c * (y * y - x))
MAP_ROW(sqrt_add, sqrt(x) + y)

/* Each function's row loops, by mrt_map_fn. */
typedef void row_f32(const maprow *, float *, const float *, const float *);
typedef void row_f64(const maprow *, double *, const double *, const double *);
#define BOTH(NAME)                                                             \
    {                                                                          \
        row_##NAME##_f32, row_##NAME##_f64                                     \
    }
static const struct {
    row_f32 *f32;
    row_f64 *f64;
} map_rows[] = {
    [MRT_MAP_COPY] = BOTH(copy),
    [MRT_MAP_ADD] = BOTH(add),
    [MRT_MAP_SUB] = BOTH(sub),
    [MRT_MAP_MUL] = BOTH(mul),
    [MRT_MAP_DIV] = BOTH(div),
    [MRT_MAP_RELU] = BOTH(relu),
    [MRT_MAP_GELU] = BOTH(gelu),
    [MRT_MAP_TANH] = BOTH(tanh),
    [MRT_MAP_EXP] = BOTH(exp),
    [MRT_MAP_LOG] = BOTH(log),
    [MRT_MAP_NEG] = BOTH(neg),
    [MRT_MAP_RSQRT] = BOTH(rsqrt),
    [MRT_MAP_SQUARE] = BOTH(square),
    [MRT_MAP_SCALE] = BOTH(scale),
    [MRT_MAP_SHIFT] = BOTH(shift),
    [MRT_MAP_AXPY] = BOTH(axpy),
    [MRT_MAP_RELU_GRAD] = BOTH(relu_grad),
    [MRT_MAP_GELU_GRAD] = BOTH(gelu_grad),
    [MRT_MAP_TANH_GRAD] = BOTH(tanh_grad),
    [MRT_MAP_RSQRT_GRAD] = BOTH(rsqrt_grad),
    [MRT_MAP_SQUARE_GRAD] = BOTH(square_grad),
    [MRT_MAP_EQ] = BOTH(eq),
    [MRT_MAP_ONE_HOT] = BOTH(one_hot),
    [MRT_MAP_MASK_FILL] = BOTH(mask_fill),
    [MRT_MAP_DROPOUT] = BOTH(dropout),
    [MRT_MAP_LERP] = BOTH(lerp),
    [MRT_MAP_LERP_SQ] = BOTH(lerp_sq),
    [MRT_MAP_SQRT_ADD] = BOTH(sqrt_add),
    [MRT_MAP_CAST] = BOTH(copy), /* (the types: widen.c, around it) */
};
_Static_assert(sizeof map_rows / sizeof map_rows[0] == MRT_MAP_FN_COUNT,
               "a row loop for every mrt_map_fn");

/* Along a dim out keeps (so != 0): o[i so] = max(o[i so], a[i sa]); NaN
 * wins, as in numpy. */
#define MAX_EACH(SUF, T)                                                       \
    static void max_each_##SUF(int64_t len, T *o, int64_t so, const T *a,      \
                               int64_t sa)                                     \
    {                                                                          \
        for (int64_t i = 0; i < len; i++)                                      \
            if (a[i * sa] > o[i * so] || isnan(a[i * sa]))                     \
                o[i * so] = a[i * sa];                                         \
    }
/* Along a dim out lacks (so == 0): the row's maximum into o[0]; NaN
 * wins.  A contiguous row in MAX_LANES running maxima (a compare and a
 * select each, which vectorize, where one running maximum is a chain of
 * dependent branches: 2.6 ns per element on a softmax's 4,096-wide rows,
 * 4x the exp beside it); a NaN seen on the way sends the row to the
 * element-by-element loop, whose NaN is the result. */
enum { MAX_LANES = 16 };
#define MAX_ALL(SUF, T)                                                        \
    MAP_CLONES static void max_all_##SUF(int64_t len, T *o, const T *a,        \
                                         int64_t sa)                           \
    {                                                                          \
        T m = o[0];                                                            \
        int64_t i = 0;                                                         \
        if (sa == 1 && len >= MAX_LANES && !isnan(m)) {                        \
            T lane[MAX_LANES];                                                 \
            int nan = 0;                                                       \
            for (int j = 0; j < MAX_LANES; j++)                                \
                lane[j] = m;                                                   \
            for (; i + MAX_LANES <= len; i += MAX_LANES)                       \
                for (int j = 0; j < MAX_LANES; j++) {                          \
                    T x = a[i + j];                                            \
                    lane[j] = x > lane[j] ? x : lane[j];                       \
                    nan |= x != x;                                             \
                }                                                              \
            if (nan)                                                           \
                i = 0; /* m is still o[0]: the loop below decides */           \
            else                                                               \
                for (int j = 0; j < MAX_LANES; j++)                            \
                    m = lane[j] > m ? lane[j] : m;                             \
        }                                                                      \
        for (; i < len; i++)                                                   \
            if (a[i * sa] > m || isnan(a[i * sa]))                             \
                m = a[i * sa];                                                 \
        o[0] = m;                                                              \
    }
MAX_EACH(f32, float)
MAX_EACH(f64, double)
MAX_ALL(f32, float)
MAX_ALL(f64, double)

/* One row of a reduction of elements of type t. */
static void max_row(mrt_dtype t, int64_t len, void *o, int64_t so,
                    const void *a, int64_t sa)
{
    if (t == MRT_F64 && so)
        max_each_f64(len, o, so, a, sa);
    else if (t == MRT_F64)
        max_all_f64(len, o, a, sa);
    else if (so)
        max_each_f32(len, o, so, a, sa);
    else
        max_all_f32(len, o, a, sa);
}

/* ---- the entry points ------------------------------------------------ */

void mrt_kernel_map(mrt_dtype t, mrt_map_fn fn, double c, const mrt_kview *out,
                    const mrt_kview *a, const mrt_kview *b,
                    const int64_t *offset, int hot)
{
    assert(t >= 0 && t < MRT_COMPUTE_DTYPE_COUNT);
    assert(fn >= 0 && fn < MRT_MAP_FN_COUNT);
    assert(mrt_map_arity(fn) == 1 || b);
    assert(fn != MRT_MAP_ONE_HOT || (offset && hot >= 0 && hot < out->ndims));
    if (mrt_map_arity(fn) == 1)
        b = a; /* never read for its value */
    if (count(out) == 0)
        return;
    const mrt_kview *ops[MAX_OPS] = {out, a, b};
    walk w;
    walk_init(&w, out, ops, MAX_OPS);
    maprow r = {c, row_len(&w), row_stride(&w, 1), row_stride(&w, 2), 0, 0};
    int hot_inner = fn == MRT_MAP_ONE_HOT && hot == out->ndims - 1;
    do {
        if (fn == MRT_MAP_ONE_HOT) {
            r.j0 = offset[hot] + (hot_inner ? 0 : w.idx[hot]);
            r.dj = hot_inner;
        }
        if (t == MRT_F64)
            map_rows[fn].f64(&r, (double *)out->data + w.off[0],
                             (const double *)a->data + w.off[1],
                             (const double *)b->data + w.off[2]);
        else
            map_rows[fn].f32(&r, (float *)out->data + w.off[0],
                             (const float *)a->data + w.off[1],
                             (const float *)b->data + w.off[2]);
    } while (walk_next(&w));
}

void mrt_kernel_reduce_max(mrt_dtype t, const mrt_kview *in,
                           const mrt_kview *out)
{
    assert(t >= 0 && t < MRT_COMPUTE_DTYPE_COUNT);
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
    int64_t len = row_len(&w), si = row_stride(&w, 0), so = row_stride(&w, 1);
    do {
        size_t el = (size_t)mrt_dtype_size(t);
        max_row(t, len, (char *)out->data + (size_t)w.off[1] * el, so,
                (const char *)in->data + (size_t)w.off[0] * el, si);
    } while (walk_next(&w));
}
