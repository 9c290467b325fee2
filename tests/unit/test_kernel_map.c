/*
 * test_kernel_map.c — the elementwise kernels (kernels/kernel_map.c)
 * against naive loops with the formulas written out again here, in
 * double.
 *
 * Shapes are written as letters, one per dim (dim id = letter - 'a'),
 * with extents "i3j4k5"; "" is a 0-dim tensor.  Every output starts
 * filled with NaNs, so an element the kernel misses shows.  Inputs are
 * stored in the tested dtype and read back for the reference, so both
 * sides see the same values.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"
#include "tview.h"

/* ---- views ------------------------------------------------------------ */

/* A view with dims `letters`, its buffer allocated and filled with NaN. */
static void tview_init(mrt_dtype t, tview *v, const char *letters,
                       const int64_t ext[26])
{
    memset(v, 0, sizeof *v);
    v->count = 1;
    for (int i = 0; letters[i]; i++) {
        v->dim[v->ndims] = letters[i] - 'a';
        v->ext[v->ndims] = ext[letters[i] - 'a'];
        v->count *= v->ext[v->ndims++];
    }
    v->data = malloc((size_t)v->count * (size_t)mrt_dtype_size(t));
    ck_assert_ptr_nonnull(v->data);
    for (int64_t i = 0; i < v->count; i++) {
        if (t == MRT_F64)
            ((double *)v->data)[i] = NAN;
        else
            ((float *)v->data)[i] = NAN;
    }
}

/* Row-major offset into v of the index idx (by dim id). */
static int64_t offset_of(const tview *v, const int64_t idx[26])
{
    int64_t off = 0;
    for (int i = 0; i < v->ndims; i++)
        off = off * v->ext[i] + idx[v->dim[i]];
    return off;
}

/* Advances idx over v's dims in row-major order; 0 after the last. */
static int next_index(const tview *v, int64_t idx[26])
{
    for (int i = v->ndims - 1; i >= 0; i--) {
        if (++idx[v->dim[i]] < v->ext[i])
            return 1;
        idx[v->dim[i]] = 0;
    }
    return 0;
}

/* ---- values ------------------------------------------------------------ */

static uint64_t rng_state = 12345;

static double uniform(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

typedef enum gen {
    GEN_ANY,       /* +-[0.25, 2.25], and some zeros */
    GEN_NONZERO,   /* +-[0.25, 2.25] */
    GEN_POSITIVE,  /* [0.25, 2.25] */
    GEN_SMALL_INT, /* -1, 0, 1, 2: equal pairs are common */
    GEN_NEGATIVE,  /* [-3, -1] */
} gen;

static double value(gen g)
{
    double u = uniform(), mag = 0.25 + 2 * uniform();
    switch (g) {
    case GEN_ANY: return u < 0.125 ? 0 : u < 0.5625 ? -mag : mag;
    case GEN_NONZERO: return u < 0.5 ? -mag : mag;
    case GEN_POSITIVE: return mag;
    case GEN_SMALL_INT: return floor(4 * u) - 1;
    case GEN_NEGATIVE: return -1 - 2 * u;
    }
    return 0;
}

static void fill(mrt_dtype t, tview *v, gen g)
{
    for (int64_t i = 0; i < v->count; i++)
        put(t, v->data, i, value(g));
}

/* ---- the reference ------------------------------------------------------ */

static const double sqrt_2_over_pi = 0.79788456080286535588;

/* fn(x, y) in double, from the formulas in mapfn.h. */
static double ref_map(mrt_map_fn fn, double x, double y, double c)
{
    double u = sqrt_2_over_pi * (x + 0.044715 * pow(x, 3));
    double uy = sqrt_2_over_pi * (y + 0.044715 * pow(y, 3));
    switch (fn) {
    case MRT_MAP_COPY:
    case MRT_MAP_CAST: return x;
    case MRT_MAP_ADD: return x + y;
    case MRT_MAP_SUB: return x - y;
    case MRT_MAP_MUL: return x * y;
    case MRT_MAP_DIV: return x / y;
    case MRT_MAP_RELU: return fmax(x, 0);
    case MRT_MAP_GELU: return 0.5 * x * (1 + tanh(u));
    case MRT_MAP_TANH: return tanh(x);
    case MRT_MAP_EXP: return exp(x);
    case MRT_MAP_LOG: return log(x);
    case MRT_MAP_NEG: return -x;
    case MRT_MAP_RSQRT: return 1 / sqrt(x);
    case MRT_MAP_SQUARE: return x * x;
    case MRT_MAP_SCALE: return c * x;
    case MRT_MAP_SHIFT: return x + c;
    case MRT_MAP_AXPY: return x + c * y;
    case MRT_MAP_RELU_GRAD: return y > 0 ? x : 0;
    case MRT_MAP_GELU_GRAD: {
        /* d/dy 0.5 y (1 + tanh uy), with tanh' = sech^2 = 1 / cosh^2 */
        double duy = sqrt_2_over_pi * (1 + 3 * 0.044715 * y * y);
        double sech2 = 1 / (cosh(uy) * cosh(uy));
        return x * (0.5 * (1 + tanh(uy)) + 0.5 * y * sech2 * duy);
    }
    case MRT_MAP_TANH_GRAD: return x * (1 - y * y);
    case MRT_MAP_RSQRT_GRAD: return -0.5 * x * y * y * y;
    case MRT_MAP_SQUARE_GRAD: return 2 * x * y;
    case MRT_MAP_EQ: return x == y;
    case MRT_MAP_MASK_FILL: return y != 0 ? x : c;
    case MRT_MAP_DROPOUT: return y != 0 ? c * x : 0;
    case MRT_MAP_LERP: return x + c * (y - x);
    case MRT_MAP_LERP_SQ: return x + c * (y * y - x);
    case MRT_MAP_SQRT_ADD: return sqrt(x) + y;
    case MRT_MAP_ONE_HOT:
    case MRT_MAP_FN_COUNT: break;
    }
    ck_abort_msg("no reference for %s", mrt_map_name(fn));
    return 0;
}

static gen gen_for(mrt_map_fn fn, int input)
{
    if (fn == MRT_MAP_EQ ||
        ((fn == MRT_MAP_MASK_FILL || fn == MRT_MAP_DROPOUT) && input == 1))
        return GEN_SMALL_INT; /* (a mask: zeros among them) */
    if (fn == MRT_MAP_LOG || fn == MRT_MAP_RSQRT ||
        (fn == MRT_MAP_SQRT_ADD && input == 0))
        return GEN_POSITIVE;
    if (fn == MRT_MAP_DIV && input == 1)
        return GEN_NONZERO;
    return GEN_ANY;
}

static int close_enough(mrt_dtype t, double got, double ref)
{
    double tol = t == MRT_F64 ? 1e-13 : 1e-5;
    return fabs(got - ref) <= tol * (1 + fabs(ref));
}

/* Compares out with fn over the broadcast inputs (b NULL for one-input
 * functions); a0 is a copy of a's data taken before the call (out may
 * alias a).  Returns the number of wrong elements, the first in msg. */
static int compare_map(mrt_dtype t, mrt_map_fn fn, double c, const tview *out,
                       const tview *a, const void *a0, const tview *b,
                       char *msg, size_t size)
{
    int64_t idx[26] = {0};
    int bad = 0;
    do {
        double x = get(t, a0, offset_of(a, idx));
        double y = b ? get(t, b->data, offset_of(b, idx)) : 0;
        double ref = ref_map(fn, x, y, c);
        int64_t o = offset_of(out, idx);
        double got = get(t, out->data, o);
        if (!close_enough(t, got, ref) && !bad++)
            snprintf(msg, size,
                     "element %lld: f(%.9g, %.9g) got %.17g, "
                     "expected %.17g",
                     (long long)o, x, y, got, ref);
    } while (next_index(out, idx));
    return bad;
}

/* ---- maps ------------------------------------------------------------ */

/* out = fn(a, b) for dims "out", "a", "b" (b ignored for one-input
 * functions), checked against the reference. */
static void check_map(mrt_dtype t, mrt_map_fn fn, const char *od,
                      const char *ad, const char *bd, const char *exts)
{
    int64_t ext[26];
    tview out, a, b;
    int two = mrt_map_arity(fn) == 2;
    double c = 1.75;
    parse_ext(exts, ext);
    tview_init(t, &out, od, ext);
    tview_init(t, &a, ad, ext);
    fill(t, &a, gen_for(fn, 0));
    if (two) {
        tview_init(t, &b, bd, ext);
        fill(t, &b, gen_for(fn, 1));
    }
    mrt_kview ko = kv(&out), ka = kv(&a), kb = two ? kv(&b) : (mrt_kview){0};
    mrt_kernel_map(t, fn, c, &ko, &ka, two ? &kb : NULL, NULL, 0);
    char msg[200] = "";
    int bad = compare_map(t, fn, c, &out, &a, a.data, two ? &b : NULL, msg,
                          sizeof msg);
    ck_assert_msg(!bad, "%s %s: %s <- %s, %s (%s): %d wrong, %s",
                  mrt_map_name(fn), mrt_dtype_name(t), od, ad, two ? bd : "-",
                  exts, bad, msg);
    free(out.data);
    free(a.data);
    if (two)
        free(b.data);
}

/* out, a, b dim strings and extents. */
static const char *const shapes[][4] = {
    {"ijk", "ijk", "ijk", "i3j4k5"},  /* same dims: the stride-1 path */
    {"ijk", "ijk", "ijk", "i2j3k67"}, /* longer rows */
    {"ijk", "kj", "ik", "i3j4k5"},    /* both broadcast, permuted */
    {"ijk", "kji", "j", "i3j4k5"},    /* a transposed, b a vector */
    {"ijk", "", "kij", "i3j4k5"},     /* 0-dim a */
    {"ijk", "jik", "", "i3j4k5"},     /* 0-dim b */
    {"", "", "", ""},                 /* all 0-dim */
    {"ij", "j", "i", "i6j7"},         /* outer product */
    {"i", "i", "", "i9"},             /* vector and scalar */
    {"iak", "ka", "ia", "i3a1k4"},    /* an extent of 1 */
    {"bhqk", "hk", "qb", "b2h3q4k5"}, /* four dims, mixed */
    {"ij", "ij", "j", "i2j77"},       /* rows of blocks and a tail */
    {"j", "j", "j", "j64"},           /* rows of whole blocks */
};

START_TEST(every_function)
{
    for (int f = 0; f < MRT_MAP_FN_COUNT; f++) {
        if (f == MRT_MAP_ONE_HOT)
            continue; /* needs labels and an offset: its own test */
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int t = 0; t < MRT_COMPUTE_DTYPE_COUNT; t++)
                check_map((mrt_dtype)t, (mrt_map_fn)f, shapes[s][0],
                          shapes[s][1], shapes[s][2], shapes[s][3]);
    }
}
END_TEST

/* One-input functions with an input that lacks out's dims: a broadcast
 * copy (b NULL). */
START_TEST(one_input_broadcast)
{
    for (int t = 0; t < MRT_COMPUTE_DTYPE_COUNT; t++) {
        check_map((mrt_dtype)t, MRT_MAP_COPY, "ijk", "ki", NULL, "i3j4k5");
        check_map((mrt_dtype)t, MRT_MAP_EXP, "ij", "", NULL, "i3j4");
        check_map((mrt_dtype)t, MRT_MAP_SCALE, "", "", NULL, "");
    }
}
END_TEST

/* The reference's formula must itself be checkable: a deliberately wrong
 * result is caught. */
START_TEST(compare_can_fail)
{
    int64_t ext[26];
    tview out, a, b;
    parse_ext("i3j4", ext);
    tview_init(MRT_F64, &out, "ij", ext);
    tview_init(MRT_F64, &a, "ij", ext);
    tview_init(MRT_F64, &b, "j", ext);
    fill(MRT_F64, &a, GEN_ANY);
    fill(MRT_F64, &b, GEN_ANY);
    mrt_kview ko = kv(&out), ka = kv(&a), kb = kv(&b);
    mrt_kernel_map(MRT_F64, MRT_MAP_SUB, 0, &ko, &ka, &kb, NULL, 0);
    char msg[200];
    ck_assert_int_eq(compare_map(MRT_F64, MRT_MAP_SUB, 0, &out, &a, a.data, &b,
                                 msg, sizeof msg),
                     0);
    ((double *)out.data)[5] += 1e-9;
    ck_assert_int_eq(compare_map(MRT_F64, MRT_MAP_SUB, 0, &out, &a, a.data, &b,
                                 msg, sizeof msg),
                     1);
    free(out.data);
    free(a.data);
    free(b.data);
}
END_TEST

/* out = fn(out, b) in place, out and a the same buffer with the same
 * dims, checked against a copy of a. */
static void check_alias(mrt_dtype t, mrt_map_fn fn, const char *bd)
{
    int64_t ext[26];
    tview a, b;
    int two = mrt_map_arity(fn) == 2;
    parse_ext("i3j5k17", ext);
    tview_init(t, &a, "ijk", ext);
    fill(t, &a, gen_for(fn, 0));
    size_t bytes = (size_t)a.count * (size_t)mrt_dtype_size(t);
    void *a0 = malloc(bytes);
    ck_assert_ptr_nonnull(a0);
    memcpy(a0, a.data, bytes);
    if (two) {
        tview_init(t, &b, bd, ext);
        fill(t, &b, gen_for(fn, 1));
    }
    mrt_kview ka = kv(&a), kb = two ? kv(&b) : (mrt_kview){0};
    mrt_kernel_map(t, fn, -0.5, &ka, &ka, two ? &kb : NULL, NULL, 0);
    char msg[200] = "";
    int bad = compare_map(t, fn, -0.5, &a, &a, a0, two ? &b : NULL, msg,
                          sizeof msg);
    ck_assert_msg(!bad, "in-place %s %s: %d wrong, %s", mrt_map_name(fn),
                  mrt_dtype_name(t), bad, msg);
    free(a0);
    free(a.data);
    if (two)
        free(b.data);
}

START_TEST(out_aliases_a)
{
    for (int t = 0; t < MRT_COMPUTE_DTYPE_COUNT; t++) {
        check_alias((mrt_dtype)t, MRT_MAP_ADD, "ijk");
        check_alias((mrt_dtype)t, MRT_MAP_ADD, "k");
        check_alias((mrt_dtype)t, MRT_MAP_AXPY, "kj");
        check_alias((mrt_dtype)t, MRT_MAP_GELU_GRAD, "ijk");
        check_alias((mrt_dtype)t, MRT_MAP_SCALE, NULL);
        check_alias((mrt_dtype)t, MRT_MAP_GELU, NULL);
    }
}
END_TEST

/* ---- ONE_HOT ------------------------------------------------------------ */

/* out[...] = (round(a) == offset[hot] + index along out dim `hot`). */
static void check_one_hot(mrt_dtype t, const char *od, const char *ad,
                          const char *exts, int hot, int64_t hot_offset)
{
    int64_t ext[26], offset[MRT_MAX_DIMS] = {0};
    tview out, a;
    parse_ext(exts, ext);
    tview_init(t, &out, od, ext);
    tview_init(t, &a, ad, ext);
    /* labels around this rank's classes, a little off the integers */
    int64_t nclass = out.ext[hot];
    for (int64_t i = 0; i < a.count; i++) {
        double label = floor(uniform() * (double)(nclass + 4)) - 2;
        put(t, a.data, i, hot_offset + label + 0.6 * (uniform() - 0.5));
    }
    offset[hot] = hot_offset;
    for (int d = 0; d < out.ndims; d++)
        if (d != hot)
            offset[d] = 1000 + d; /* not the class dim: must be ignored */
    mrt_kview ko = kv(&out), ka = kv(&a);
    mrt_kernel_map(t, MRT_MAP_ONE_HOT, 0, &ko, &ka, NULL, offset, hot);
    int64_t idx[26] = {0};
    int ones = 0;
    do {
        double label = get(t, a.data, offset_of(&a, idx));
        int64_t class = hot_offset + idx[out.dim[hot]];
        double ref = llround(label) == class;
        double got = get(t, out.data, offset_of(&out, idx));
        ones += got == 1;
        ck_assert_msg(got == ref,
                      "one_hot %s %s <- %s: label %.9g at "
                      "class %lld: got %g",
                      mrt_dtype_name(t), od, ad, label, (long long)class, got);
    } while (next_index(&out, idx));
    ck_assert_int_gt(ones, 0); /* the labels did hit this rank's classes */
    free(out.data);
    free(a.data);
}

START_TEST(one_hot)
{
    for (int t = 0; t < MRT_COMPUTE_DTYPE_COUNT; t++) {
        check_one_hot((mrt_dtype)t, "nc", "n", "n20c6", 1, 12); /* inner */
        check_one_hot((mrt_dtype)t, "cn", "n", "n20c6", 0, 6);  /* outer */
        check_one_hot((mrt_dtype)t, "bcn", "nb", "b3n9c5", 1, 5);
        check_one_hot((mrt_dtype)t, "nc", "n", "n30c4", 1, 0);
    }
}
END_TEST

/* ---- GELU_GRAD against a finite difference of GELU ---------------------- */

/* The kernel's own gelu and gelu_grad at one point, in dtype t. */
static double kernel_scalar(mrt_dtype t, mrt_map_fn fn, double x)
{
    double a64 = 1, b64 = x, o64 = NAN;
    float a32 = 1, b32 = (float)x, o32 = NAN;
    int two = fn == MRT_MAP_GELU_GRAD;
    if (!two)
        a64 = x, a32 = (float)x;
    mrt_kview ko = {0, NULL, NULL, t == MRT_F64 ? (void *)&o64 : &o32};
    mrt_kview ka = {0, NULL, NULL, t == MRT_F64 ? (void *)&a64 : &a32};
    mrt_kview kb = {0, NULL, NULL, t == MRT_F64 ? (void *)&b64 : &b32};
    mrt_kernel_map(t, fn, 0, &ko, &ka, two ? &kb : NULL, NULL, 0);
    return t == MRT_F64 ? o64 : o32;
}

START_TEST(gelu_grad_finite_difference)
{
    const double h = 1e-5;
    for (double x = -6; x <= 6; x += 0.125) {
        double fd = (kernel_scalar(MRT_F64, MRT_MAP_GELU, x + h) -
                     kernel_scalar(MRT_F64, MRT_MAP_GELU, x - h)) /
                    (2 * h);
        double g64 = kernel_scalar(MRT_F64, MRT_MAP_GELU_GRAD, x);
        double g32 = kernel_scalar(MRT_F32, MRT_MAP_GELU_GRAD, x);
        ck_assert_msg(fabs(g64 - fd) <= 1e-8,
                      "gelu'(%g): float64 %.17g, "
                      "finite difference %.17g",
                      x, g64, fd);
        ck_assert_msg(fabs(g32 - fd) <= 1e-5,
                      "gelu'(%g): float32 %.9g, "
                      "finite difference %.17g",
                      x, g32, fd);
    }
}
END_TEST

/* ---- reduce_max ------------------------------------------------------- */

/* out = max of in over the dims out lacks, against a naive loop; exact. */
static void check_max(mrt_dtype t, const char *id, const char *od,
                      const char *exts, gen g)
{
    int64_t ext[26];
    tview in, out;
    parse_ext(exts, ext);
    tview_init(t, &in, id, ext);
    tview_init(t, &out, od, ext);
    fill(t, &in, g);
    double *ref = malloc(sizeof *ref * (size_t)out.count);
    ck_assert_ptr_nonnull(ref);
    for (int64_t i = 0; i < out.count; i++)
        ref[i] = -INFINITY;
    int64_t idx[26] = {0};
    do {
        double v = get(t, in.data, offset_of(&in, idx));
        int64_t o = offset_of(&out, idx);
        ref[o] = fmax(ref[o], v);
    } while (next_index(&in, idx));
    mrt_kview ki = kv(&in), ko = kv(&out);
    mrt_kernel_reduce_max(t, &ki, &ko);
    for (int64_t i = 0; i < out.count; i++)
        ck_assert_msg(get(t, out.data, i) == ref[i],
                      "max %s %s -> %s (%s): element %lld got %.17g, "
                      "expected %.17g",
                      mrt_dtype_name(t), id, od, exts, (long long)i,
                      get(t, out.data, i), ref[i]);
    free(ref);
    free(in.data);
    free(out.data);
}

START_TEST(reduce_max)
{
    const char *const cases[][3] = {
        {"ijk", "ik", "i4j5k6"},  /* one dim, in the middle */
        {"ijk", "ij", "i4j5k6"},  /* the innermost dim */
        {"ijk", "jk", "i4j5k6"},  /* the outermost dim */
        {"ijk", "ki", "i4j5k6"},  /* one dim, out permuted */
        {"ijk", "j", "i4j5k6"},   /* two dims */
        {"ijk", "k", "i4j5k37"},  /* two dims, long rows kept */
        {"ijk", "", "i4j5k6"},    /* all dims: 0-dim out */
        {"ijk", "ijk", "i4j5k6"}, /* none: a copy */
        {"ijk", "kij", "i4j5k6"}, /* none: a transposition */
        {"", "", ""},             /* 0-dim in and out */
        {"iak", "ak", "i3a1k4"},  /* an extent of 1 */
        /* long contiguous rows reduced: the running maxima in lanes, and
         * the rest of the row after them */
        {"ijk", "ij", "i2j2k16"},
        {"ijk", "ij", "i3j2k100"},
        {"ijk", "i", "i2j50k40"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int t = 0; t < MRT_COMPUTE_DTYPE_COUNT; t++) {
            check_max((mrt_dtype)t, cases[c][0], cases[c][1], cases[c][2],
                      GEN_ANY);
            /* all negative: a max that started at 0 would show */
            check_max((mrt_dtype)t, cases[c][0], cases[c][1], cases[c][2],
                      GEN_NEGATIVE);
        }
}
END_TEST

/* A NaN in the input makes its maximum NaN, and only that one. */
START_TEST(reduce_max_nan)
{
    for (int t = 0; t < MRT_COMPUTE_DTYPE_COUNT; t++) {
        int64_t ext[26];
        tview in, out;
        parse_ext("i3j4", ext);
        tview_init((mrt_dtype)t, &in, "ij", ext);
        tview_init((mrt_dtype)t, &out, "i", ext);
        fill((mrt_dtype)t, &in, GEN_ANY);
        put((mrt_dtype)t, in.data, 1 * 4 + 2, NAN); /* row i = 1 */
        mrt_kview ki = kv(&in), ko = kv(&out);
        mrt_kernel_reduce_max((mrt_dtype)t, &ki, &ko);
        ck_assert(!isnan(get((mrt_dtype)t, out.data, 0)));
        ck_assert(isnan(get((mrt_dtype)t, out.data, 1)));
        ck_assert(!isnan(get((mrt_dtype)t, out.data, 2)));
        free(in.data);
        free(out.data);
        /* rows of 40: a NaN in the lanes' part (row 0), in the rest
         * (row 2), at the very end (row 3), none (row 1) */
        parse_ext("i4j40", ext);
        tview_init((mrt_dtype)t, &in, "ij", ext);
        tview_init((mrt_dtype)t, &out, "i", ext);
        fill((mrt_dtype)t, &in, GEN_ANY);
        put((mrt_dtype)t, in.data, 0 * 40 + 17, NAN);
        put((mrt_dtype)t, in.data, 2 * 40 + 35, NAN);
        put((mrt_dtype)t, in.data, 3 * 40 + 39, NAN);
        ki = kv(&in), ko = kv(&out);
        mrt_kernel_reduce_max((mrt_dtype)t, &ki, &ko);
        for (int r = 0; r < 4; r++)
            ck_assert_msg(isnan(get((mrt_dtype)t, out.data, r)) == (r != 1),
                          "%s row %d", mrt_dtype_name((mrt_dtype)t), r);
        free(in.data);
        free(out.data);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kernel_map");
    TCase *tc = tcase_create("map");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, every_function);
    tcase_add_test(tc, one_input_broadcast);
    tcase_add_test(tc, compare_can_fail);
    tcase_add_test(tc, out_aliases_a);
    tcase_add_test(tc, one_hot);
    tcase_add_test(tc, gelu_grad_finite_difference);
    suite_add_tcase(s, tc);
    TCase *tr = tcase_create("reduce_max");
    tcase_add_test(tr, reduce_max);
    tcase_add_test(tr, reduce_max_nan);
    suite_add_tcase(s, tr);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
