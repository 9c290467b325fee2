/*
 * test_masks.c — the masks of causal softmax and dropout (no MPI).
 *
 *   - every shard of a mask, filled by mrt_shard_init at its rank's
 *     coordinates and put back in place, gives bit for bit the tensor
 *     filled whole, under layouts that split it differently (7 and 5
 *     over 2, 3 and 2x2 ranks): the masks are functions of the global
 *     indices, never of the rank or the layout;
 *   - dropout at p = 0.5 drops about half (a bound 6 standard deviations
 *     wide), its mask is uint8 holding 1 for the others, and p = 0.1
 *     drops about a tenth;
 *   - causal softmax, run by the unsharded reference, is causal: its
 *     masked entries are exactly 0, every row equals a softmax by hand
 *     over the keys at or before its query, and it is bit for bit the
 *     same when every masked score is raised by 1000 (a max taken over
 *     masked entries would underflow every kept exp to 0 there);
 *   - the C builder refuses what the spec file's bad specs refuse.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "block.h"
#include "init.h"
#include "kernel.h"
#include "local.h"
#include "meshrt.h"
#include "npy.h"

static mrt_spec *load(const char *path, const char *mesh)
{
    mrt_error err = {0};
    mrt_spec *s = NULL;
    mrt_status st = mrt_spec_load_ex(
        path, &(mrt_spec_load_options){.mesh = mesh}, &s, &err);
    ck_assert_msg(st == MRT_OK, "%s on %s: %s", path, mesh, err.message);
    return s;
}

static int64_t count_of(const mrt_layout *l)
{
    int64_t n = 1;
    for (int i = 0; i < l->ndims; i++)
        n *= l->size[i];
    return n;
}

/* The n elements of raw (tensor t's own type: a dropout mask's is
 * uint8) as doubles, in raw's place (raw holds n doubles). */
static double *as_doubles(const mrt_spec *s, int t, void *raw, int64_t n)
{
    mrt_dtype own = mrt_spec_tensor_dtype(s, t);
    double *d = malloc((size_t)n * sizeof *d);
    for (int64_t i = 0; i < n; i++)
        d[i] = mrt_kernel_get(own, raw, i);
    memcpy(raw, d, (size_t)n * sizeof *d);
    free(d);
    return raw;
}

/* Tensor `name` of s filled whole (a new buffer, as doubles). */
static double *whole(const mrt_spec *s, int t)
{
    mrt_layout w = s->tensor[t].layout;
    for (int i = 0; i < w.ndims; i++)
        w.naxes[i] = 0;
    mrt_mesh one = {.naxes = 0, .nranks = 1};
    double *buf = calloc((size_t)count_of(&w), sizeof *buf);
    ck_assert_int_eq(mrt_shard_init(s, t, &w, &one, NULL, buf, NULL), MRT_OK);
    return as_doubles(s, t, buf, count_of(&w));
}

/* Tensor t of s filled shard by shard in its home layout on s's mesh,
 * each rank's shard copied to its place (a new buffer). */
static double *by_shards(const mrt_spec *s, int t, int *split)
{
    const mrt_layout *l = &s->tensor[t].layout;
    double *full = calloc((size_t)count_of(l), sizeof *full);
    double *shard = calloc((size_t)count_of(l), sizeof *shard);
    int64_t coords[MRT_MAX_AXES], off[MRT_MAX_DIMS], local[MRT_MAX_DIMS];
    int64_t zero[MRT_MAX_DIMS] = {0};
    *split = 0;
    for (int64_t r = 0; r < s->mesh.nranks; r++) {
        mrt_mesh_coords(&s->mesh, r, coords);
        mrt_layout_shard_shape_at(l, &s->mesh, coords, local);
        mrt_layout_shard_offset(l, &s->mesh, coords, off);
        ck_assert_int_eq(mrt_shard_init(s, t, l, &s->mesh, coords, shard, NULL),
                         MRT_OK);
        mrt_block_copy(l->ndims, local, full, l->size, off, shard, local, zero,
                       (size_t)mrt_dtype_size(mrt_spec_tensor_dtype(s, t)));
    }
    for (int i = 0; i < l->ndims; i++)
        *split += l->naxes[i];
    free(shard);
    return as_doubles(s, t, full, count_of(l));
}

/* Mask `mask` of spec `path` on each of the meshes: every layout's shards
 * give the same bits as the whole tensor of the first mesh. */
static void same_bits(const char *path, const char *mask,
                      const char *const *meshes, int n)
{
    double *first = NULL;
    int64_t count = 0;
    for (int k = 0; k < n; k++) {
        mrt_spec *s = load(path, meshes[k]);
        int t = -1;
        for (int i = 0; i < s->ntensors; i++)
            if (!strcmp(s->tensor[i].name, mask))
                t = i;
        ck_assert_msg(t >= 0, "%s has no tensor %s", path, mask);
        ck_assert_int_lt(s->tensor[t].producer, 0); /* an input: counted */
        int split;
        double *w = whole(s, t), *sh = by_shards(s, t, &split);
        count = count_of(&s->tensor[t].layout);
        ck_assert_msg(split > 0 || s->mesh.nranks == 1, "%s is not split on %s",
                      mask, meshes[k]);
        ck_assert_msg(!memcmp(w, sh, (size_t)count * sizeof *w),
                      "%s on %s: the shards differ from the whole", mask,
                      meshes[k]);
        if (!first)
            first = w;
        else {
            ck_assert_msg(!memcmp(first, w, (size_t)count * sizeof *w),
                          "%s on %s differs from it on %s", mask, meshes[k],
                          meshes[0]);
            free(w);
        }
        free(sh);
        mrt_spec_destroy(s);
    }
    free(first);
}

static const char *const meshes[] = {"data=1,model=1", "data=2,model=1",
                                     "data=1,model=3", "data=2,model=2",
                                     "data=3,model=1"};

START_TEST(dropout_same_bits)
{
    same_bits("tests/specs/ops/dropout.yaml", "d:mask", meshes, 5);
    same_bits("tests/specs/ops/dropout.yaml", "d2:mask", meshes, 5);
}
END_TEST

START_TEST(causal_same_bits)
{
    same_bits("tests/specs/ops/softmax_causal.yaml", "p:mask", meshes, 5);
    same_bits("tests/specs/ops/softmax_causal.yaml", "m", meshes, 5);
}
END_TEST

/* A dropout of p on n elements: the fraction dropped. */
static double dropped(uint64_t seed, double p, int64_t n)
{
    int64_t drops = 0;
    for (int64_t i = 0; i < n; i++)
        drops += !mrt_init_dropout_keep(seed, (uint64_t)i, p);
    return (double)drops / (double)n;
}

START_TEST(dropout_drops_p)
{
    /* n = 10^5: a standard deviation of 0.0016 at p = 0.5, 0.00095 at
     * p = 0.1; the bounds are 6 of them */
    ck_assert_double_le(fabs(dropped(7, 0.5, 100000) - 0.5), 0.01);
    ck_assert_double_le(fabs(dropped(8, 0.1, 100000) - 0.1), 0.006);
    ck_assert_double_eq(dropped(7, 0, 1000), 0);
    /* the masks of two seeds are not the same mask */
    int same = 0;
    for (uint64_t i = 0; i < 1000; i++)
        same += mrt_init_dropout_keep(7, i, 0.5) ==
                mrt_init_dropout_keep(8, i, 0.5);
    ck_assert_int_lt(same, 600);
    /* the spec's mask: 1 byte per element, 0 or 1, about half each (the
     * map that reads it scales by 1 / (1 - p) = 2) */
    mrt_spec *s = load("tests/specs/ops/dropout.yaml", "data=1,model=1");
    int t = mrt_spec_find_tensor(s, "d:mask");
    ck_assert_int_ge(t, 0);
    ck_assert_int_eq(mrt_spec_tensor_dtype(s, t), MRT_U8);
    double *m = whole(s, t);
    int64_t n = count_of(&s->tensor[t].layout), zeros = 0;
    for (int64_t i = 0; i < n; i++) {
        ck_assert_msg(m[i] == 0 || m[i] == 1, "mask element %lld is %g",
                      (long long)i, m[i]);
        zeros += m[i] == 0;
    }
    ck_assert_int_gt(zeros, n / 5); /* 35 elements: 7 to 28 dropped */
    ck_assert_int_lt(zeros, n - n / 5);
    free(m);
    mrt_spec_destroy(s);
}
END_TEST

/* ---- the 1-byte mask type ------------------------------------------------ */

/* uint8: 1 byte, named, converted exactly to and from the floating
 * types (any nonzero value becomes 1: a mask holds 0 or 1). */
START_TEST(mask_type)
{
    ck_assert_int_eq(mrt_dtype_size(MRT_U8), 1);
    ck_assert_str_eq(mrt_dtype_name(MRT_U8), "uint8");
    const uint8_t m[4] = {0, 1, 1, 0};
    float f[4];
    double d[4];
    uint16_t h[4];
    mrt_kernel_convert(MRT_F32, f, MRT_U8, m, 4);
    mrt_kernel_convert(MRT_F64, d, MRT_U8, m, 4);
    mrt_kernel_convert(MRT_BF16, h, MRT_U8, m, 4);
    for (int i = 0; i < 4; i++) {
        ck_assert_double_eq(f[i], m[i]);
        ck_assert_double_eq(d[i], m[i]);
        ck_assert_double_eq(mrt_kernel_get(MRT_BF16, h, i), m[i]);
    }
    const float back[4] = {0, 2.5f, -1, 1};
    uint8_t b[4];
    mrt_kernel_convert(MRT_U8, b, MRT_F32, back, 4);
    ck_assert(b[0] == 0 && b[1] == 1 && b[2] == 1 && b[3] == 1);
}
END_TEST

/* The planned masks of tests/specs/ops/dropout.yaml (float64) are uint8:
 * 1 byte per element of rank 0's 4 x 3 shard. */
START_TEST(dropout_mask_one_byte)
{
    mrt_error err = {0};
    mrt_spec *s = load("tests/specs/ops/dropout.yaml", NULL);
    mrt_plan *plan = NULL;
    ck_assert_msg(mrt_plan_create(s, NULL, &plan, &err) == MRT_OK, "%s",
                  err.message);
    const char *const masks[] = {"d:mask", "d2:mask"};
    for (int k = 0; k < 2; k++) {
        mrt_plan_value_info v;
        int i = mrt_plan_find_value(plan, masks[k]);
        ck_assert_int_ge(i, 0);
        ck_assert_int_eq(mrt_plan_get_value(plan, i, &v, &err), MRT_OK);
        ck_assert_int_eq(v.elsize, 1);
        ck_assert_int_eq(v.shard_bytes, 4 * 3);
    }
    mrt_plan_destroy(plan);
    mrt_spec_destroy(s);
}
END_TEST

/* Dropout by the unsharded reference: each element x / (1 - p) where
 * the (seed, index) draw keeps it, exactly 0 where it drops it. */
START_TEST(dropout_scales_kept)
{
    const char *text = "mesh: {data: 1}\n"
                       "dtype: float64\n"
                       "dims: {b: 6, f: 7}\n"
                       "tensors:\n"
                       "  x: {shape: [b, f], init: {random: 5}}\n"
                       "ops:\n"
                       "  - {op: dropout, in: [x], out: y, p: 0.3, seed: 9}\n"
                       "outputs: [y]\n";
    mrt_error err = {0};
    mrt_spec *s = NULL;
    ck_assert_msg(
        mrt_spec_load_string("dropout", text, strlen(text), &s, &err) == MRT_OK,
        "%s", err.message);
    void **out = NULL, **mags = NULL;
    ck_assert_msg(mrt_reference_run(s, 1, NULL, &out, &mags, &err) == MRT_OK,
                  "%s", err.message);
    const double *y = out[0];
    int kept = 0;
    for (uint64_t i = 0; i < 42; i++) {
        double x = mrt_init_random_value(5, i);
        int keep = mrt_init_dropout_keep(9, i, 0.3);
        ck_assert_double_eq_tol(y[i], keep ? x / 0.7 : 0, 1e-15);
        kept += keep;
    }
    ck_assert(kept > 0 && kept < 42);
    mrt_reference_free(s, out);
    mrt_reference_free(s, mags);
    mrt_spec_destroy(s);
}
END_TEST

/* ---- causal softmax by the unsharded reference ------------------------ */

enum { B = 2, Q = 7, K = 5 };

/* p = softmax over k of the scores in the .npy file at path, causal over
 * [q, k], by the unsharded reference (a new buffer). */
static double *causal_softmax(const char *path)
{
    char text[1024];
    snprintf(text, sizeof text,
             "mesh: {data: 1}\n"
             "dtype: float64\n"
             "dims: {b: %d, q: %d, k: %d}\n"
             "tensors:\n"
             "  s: {shape: [b, q, k], init: {file: '%s'}}\n"
             "ops:\n"
             "  - {op: softmax, in: [s], out: p, dim: k, causal: [q, k]}\n"
             "outputs: [p]\n",
             B, Q, K, path);
    mrt_error err = {0};
    mrt_spec *s = NULL;
    ck_assert_msg(
        mrt_spec_load_string("causal", text, strlen(text), &s, &err) == MRT_OK,
        "%s", err.message);
    void **out = NULL, **mags = NULL;
    ck_assert_msg(mrt_reference_run(s, 1, NULL, &out, &mags, &err) == MRT_OK,
                  "%s", err.message);
    double *p = malloc(sizeof(double) * B * Q * K);
    memcpy(p, out[0], sizeof(double) * B * Q * K);
    mrt_reference_free(s, out);
    mrt_reference_free(s, mags);
    mrt_spec_destroy(s);
    return p;
}

static void write_scores(const char *path, const double *x)
{
    const int64_t shape[] = {B, Q, K};
    mrt_error err = {0};
    ck_assert_msg(mrt_npy_write(path, MRT_F64, 3, shape, x, &err) == MRT_OK,
                  "%s", err.message);
}

START_TEST(causal_is_causal)
{
    double x[B * Q * K], raised[B * Q * K];
    char a[64], b[64];
    snprintf(a, sizeof a, "/tmp/test_masks_%d_a.npy", (int)getpid());
    snprintf(b, sizeof b, "/tmp/test_masks_%d_b.npy", (int)getpid());
    for (int i = 0; i < B * Q * K; i++) {
        int q = i / K % Q, k = i % K;
        x[i] = 3 * mrt_init_random_value(99, (uint64_t)i);
        raised[i] = x[i] + (k > q ? 1000 : 0); /* only what is masked */
    }
    write_scores(a, x);
    write_scores(b, raised);
    double *p = causal_softmax(a), *pr = causal_softmax(b);
    unlink(a);
    unlink(b);
    ck_assert_msg(!memcmp(p, pr, sizeof x),
                  "the masked scores changed the kept probabilities");
    for (int r = 0; r < B * Q; r++) { /* by hand, row r = (b, q) */
        int q = r % Q;
        double m = -INFINITY, sum = 0;
        for (int k = 0; k <= q && k < K; k++)
            m = fmax(m, x[r * K + k]);
        for (int k = 0; k <= q && k < K; k++)
            sum += exp(x[r * K + k] - m);
        for (int k = 0; k < K; k++) {
            double want = k <= q ? exp(x[r * K + k] - m) / sum : 0;
            double got = p[r * K + k];
            ck_assert_msg(k <= q ? fabs(got - want) <= 1e-14 : got == 0,
                          "p[%d, %d, %d] = %.17g, want %.17g", r / Q, q, k, got,
                          want);
        }
    }
    free(p);
    free(pr);
}
END_TEST

/* ---- the masks' memory ---------------------------------------------------- */

/* The peak memory per rank of the plan of the YAML text. */
static int64_t peak_of(const char *text)
{
    mrt_error err = {0};
    mrt_spec *s = NULL;
    mrt_plan *plan = NULL;
    ck_assert_msg(mrt_spec_load_string("peak", text, strlen(text), &s, &err) ==
                      MRT_OK,
                  "%s", err.message);
    ck_assert_msg(mrt_plan_create(s, NULL, &plan, &err) == MRT_OK, "%s",
                  err.message);
    int64_t peak = mrt_plan_get_totals(plan).peak_memory;
    mrt_plan_destroy(plan);
    mrt_spec_destroy(s);
    return peak;
}

/* The file at path (a new string). */
static char *read_text(const char *path)
{
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char *buf = calloc(8192, 1);
    size_t n = fread(buf, 1, 8191, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

/* text with each `from` replaced by `to`; text is freed (a new string). */
static char *replaced(char *text, const char *from, const char *to)
{
    char *out = calloc(2 * strlen(text) + strlen(to) + 1, 1), *o = out;
    int n = 0;
    for (const char *p = text; *p;) {
        if (!strncmp(p, from, strlen(from))) {
            o += sprintf(o, "%s", to);
            p += strlen(from);
            n++;
        } else
            *o++ = *p++;
    }
    ck_assert_int_gt(n, 0);
    free(text);
    return out;
}

/* Each mask is an input of the plan, held for the whole run: the peak
 * memory with the masks is at least their shards' bytes over the same
 * program without them (dropout at p = 0 makes none: a copy; softmax
 * without causal). */
START_TEST(masks_memory_counted)
{
    const char *path = "tests/specs/ops/dropout.yaml";
    char *with = read_text(path);
    char *without = replaced(replaced(read_text(path), "p: 0.5", "p: 0"),
                             "p: 0.2", "p: 0");
    /* two masks [b/data, f/model] of 4 x 3 uint8 on rank 0 of 2x2 */
    ck_assert_int_ge(peak_of(with) - peak_of(without), 2 * 4 * 3 * 1);
    free(with);
    free(without);
    path = "tests/specs/ops/softmax_causal.yaml";
    with = read_text(path);
    without = replaced(read_text(path), ", causal: [q, k]", "");
    /* one mask [q/data, k/model]: 4 x 3 float64 on rank 0 */
    ck_assert_int_ge(peak_of(with) - peak_of(without), 4 * 3 * 8);
    free(with);
    free(without);
}
END_TEST

/* The causal softmaxes of three layers read one mask (stored once), and
 * each layer's dropout its own (seeded by its out name, h0.pd, h1.pd,
 * ...: three different masks). */
START_TEST(causal_mask_shared)
{
    const char *text =
        "mesh: {rows: 2, cols: 2}\n"
        "dtype: float64\n"
        "dims: {batch: 2, q: 5, k: 5, d: 4, layers: 3}\n"
        "layout: {batch: rows, k: cols}\n"
        "tensors:\n"
        "  x: {shape: [batch, k, d]}\n"
        "  xq: {shape: [batch, q, d]}\n"
        "ops:\n"
        "  - {op: relu, in: [x], out: h_in}\n"
        "  - repeat: layers\n"
        "    name: h\n"
        "    in: {z: h_in}\n"
        "    carry: {z: r}\n"
        "    out: {h_out: r}\n"
        "    ops:\n"
        "      - {op: einsum, in: [xq, z], out: s, shape: [batch, q, k]}\n"
        "      - {op: softmax, in: [s], out: p, dim: k, causal: [q, k]}\n"
        "      - {op: dropout, in: [p], out: pd, p: 0.25}\n"
        "      - {op: einsum, in: [pd, xq], out: a, shape: [batch, k, d]}\n"
        "      - {op: add, in: [z, a], out: r}\n"
        "  - {op: reduce_sum, in: [h_out], out: loss}\n";
    mrt_error err = {0};
    mrt_spec *s = NULL;
    ck_assert_msg(
        mrt_spec_load_string("blocks", text, strlen(text), &s, &err) == MRT_OK,
        "%s", err.message);
    int causal = 0, dropout = 0;
    uint64_t seeds[3] = {0};
    for (int t = 0; t < s->ntensors; t++) {
        causal += s->tensor[t].init == MRT_INIT_CAUSAL;
        if (s->tensor[t].init == MRT_INIT_DROPOUT && dropout < 3)
            seeds[dropout++] = s->tensor[t].seed;
    }
    ck_assert_int_eq(causal, 1);
    ck_assert_int_eq(dropout, 3);
    ck_assert(seeds[0] != seeds[1] && seeds[1] != seeds[2] &&
              seeds[0] != seeds[2]);
    mrt_spec_destroy(s);
}
END_TEST

/* ---- the masks under an alternative --------------------------------------- */

/* An alternative's `ops:` entry places the masks its op makes inside, as
 * it places the op's other tensors: no relayout of a mask made in
 * place. */
START_TEST(masks_follow_alternative_ops)
{
    const char *text = "mesh: {data: 2, model: 2}\n"
                       "dims: {b: 2, q: 7, k: 5}\n"
                       "layout: {b: data}\n"
                       "tensors:\n"
                       "  s: {shape: [b, q, k]}\n"
                       "ops:\n"
                       "  - {op: softmax, in: [s], out: p, dim: k, "
                       "causal: [q, k]}\n"
                       "  - {op: dropout, in: [p], out: d, p: 0.3}\n"
                       "layouts:\n"
                       "  seq:\n"
                       "    b: data\n"
                       "    ops:\n"
                       "      p: {layout: {b: data, q: model}}\n"
                       "      d: {layout: {q: data, k: model}}\n";
    mrt_error err = {0};
    mrt_spec *s = NULL, *alt = NULL;
    ck_assert_msg(mrt_spec_load_string("alt", text, strlen(text), &s, &err) ==
                      MRT_OK,
                  "%s", err.message);
    ck_assert_msg(mrt_spec_select_alternative(s, "seq", &alt, &err) == MRT_OK,
                  "%s", err.message);
    const mrt_layout
        *pm = &alt->tensor[mrt_spec_find_tensor(alt, "p:mask")].layout,
        *dm = &alt->tensor[mrt_spec_find_tensor(alt, "d:mask")].layout;
    char a[128] = "", b[128] = ""; /* (mrt_layout_str appends) */
    mrt_layout_str(pm, &alt->mesh, alt->dim_names, a, sizeof a);
    mrt_layout_str(dm, &alt->mesh, alt->dim_names, b, sizeof b);
    ck_assert_str_eq(a, "[q/model, k]");
    ck_assert_str_eq(b, "[b, q/data, k/model]");
    mrt_spec_destroy(alt);
    mrt_spec_destroy(s);
}
END_TEST

/* ---- the C builder ------------------------------------------------------ */

/* A builder on {data: 2} with b, q, k and the input s [b, q, k]. */
static mrt_ir *scores(void)
{
    mrt_ir *ir = NULL;
    mrt_error err = {0};
    const char *axes[] = {"data"};
    const int64_t sizes[] = {2};
    const char *shape[] = {"b", "q", "k"};
    ck_assert_int_eq(mrt_ir_create("masks", 1, axes, sizes, &ir, &err), 0);
    ck_assert_int_eq(mrt_ir_add_dim(ir, "b", B, &err), 0);
    ck_assert_int_eq(mrt_ir_add_dim(ir, "q", Q, &err), 0);
    ck_assert_int_eq(mrt_ir_add_dim(ir, "k", K, &err), 0);
    ck_assert_int_eq(mrt_ir_add_dim(ir, "f", 3, &err), 0);
    ck_assert_int_eq(
        mrt_ir_add_tensor(
            ir, &(mrt_ir_tensor){.name = "s", .ndims = 3, .shape = shape},
            &err),
        0);
    return ir;
}

/* Op o on scores() fails with message msg (MRT_E_SPEC). */
static void op_fails(const mrt_ir_op *o, const char *msg)
{
    mrt_ir *ir = scores();
    mrt_error err = {0};
    ck_assert_int_eq(mrt_ir_add_op(ir, o, &err), MRT_E_SPEC);
    ck_assert_str_eq(err.message, msg);
    mrt_ir_destroy(ir);
}

START_TEST(builder_checks)
{
    mrt_ir_op sm = {.kind = MRT_IR_SOFTMAX, {"s"}, "p", .dim = "k"};
    sm.causal[0] = "f", sm.causal[1] = "k";
    op_fails(&sm, "mrt_ir_add_op: argument 'causal': dim 'f' in causal is "
                  "not a dim of 's' [b, q, k]");
    sm.causal[0] = "k";
    op_fails(&sm, "mrt_ir_add_op: argument 'causal': causal names dim 'k' "
                  "twice (it takes the query dim, then the key dim: two "
                  "different dims)");
    sm.causal[0] = "k", sm.causal[1] = "q";
    op_fails(&sm, "mrt_ir_add_op: argument 'causal': the key dim of causal "
                  "(its second) must be the softmax's dim 'k', not 'q'");
    sm.causal[0] = "q", sm.causal[1] = NULL;
    op_fails(&sm, "mrt_ir_add_op: argument 'causal': causal needs two dims "
                  "(the query dim, then the key dim)");
    mrt_ir_op relu = {.kind = MRT_IR_RELU, {"s"}, "r"};
    relu.causal[0] = "q", relu.causal[1] = "k";
    op_fails(&relu, "mrt_ir_add_op: argument 'causal': relu takes no causal");
    mrt_ir_op drop = {.kind = MRT_IR_DROPOUT, {"s"}, "y", .p = 1};
    op_fails(&drop, "mrt_ir_add_op: argument 'p': p is 1; dropout takes "
                    "0 <= p < 1");
    drop.p = -0.1;
    op_fails(&drop, "mrt_ir_add_op: argument 'p': p is -0.1; dropout takes "
                    "0 <= p < 1");
    drop.p = NAN;
    op_fails(&drop, "mrt_ir_add_op: argument 'p': p is nan; dropout takes "
                    "0 <= p < 1");
    mrt_ir_op seeded = {.kind = MRT_IR_RELU, {"s"}, "r", .seeded = 1};
    op_fails(&seeded, "mrt_ir_add_op: argument 'seed': relu takes no seed");
    /* a causal init names two dims of its shape */
    mrt_ir *ir = scores();
    mrt_error err = {0};
    const char *shape[] = {"q", "k"};
    mrt_ir_tensor m = {.name = "m",
                       .ndims = 2,
                       .shape = shape,
                       .init = MRT_IR_INIT_CAUSAL,
                       .causal = {"q", "f"}};
    ck_assert_int_eq(mrt_ir_add_tensor(ir, &m, &err), MRT_E_SPEC);
    ck_assert_str_eq(err.message, "mrt_ir_add_tensor: argument 'causal': dim "
                                  "'f' in causal is not a dim of 'm' [q, k]");
    mrt_ir_destroy(ir);
}
END_TEST

/* What mrt_plan_print writes for spec (a new string). */
static char *plan_text(const mrt_spec *spec)
{
    mrt_plan *plan = NULL;
    mrt_error err = {0};
    char *text = NULL;
    size_t len = 0;
    ck_assert_msg(mrt_plan_create(spec, NULL, &plan, &err) == MRT_OK, "%s",
                  err.message);
    FILE *f = open_memstream(&text, &len);
    mrt_plan_print(plan, f);
    fclose(f);
    mrt_plan_destroy(plan);
    return text;
}

/* tests/specs/ops/dropout.yaml built in C plans as the file does. */
START_TEST(builder_as_yaml)
{
    mrt_ir *ir = NULL;
    mrt_error err = {0};
    const char *axes[] = {"data", "model"};
    const int64_t sizes[] = {2, 2};
    const char *bk[] = {"b", "k"}, *kf[] = {"k", "f"}, *bf[] = {"b", "f"};
    ck_assert_int_eq(mrt_ir_create("tests/specs/ops/dropout.yaml", 2, axes,
                                   sizes, &ir, &err),
                     0);
    mrt_ir_set_dtype(ir, MRT_F64, &err);
    mrt_ir_add_dim(ir, "b", 7, &err);
    mrt_ir_add_dim(ir, "k", 4, &err);
    mrt_ir_add_dim(ir, "f", 5, &err);
    mrt_ir_set_rule(ir, &(mrt_ir_rule){"b", {"data"}}, &err);
    mrt_ir_set_rule(ir, &(mrt_ir_rule){"f", {"model"}}, &err);
    mrt_ir_add_tensor(ir,
                      &(mrt_ir_tensor){.name = "x",
                                       .ndims = 2,
                                       .shape = bk,
                                       .init = MRT_IR_INIT_RANDOM,
                                       .seed = 311},
                      &err);
    mrt_ir_add_tensor(ir,
                      &(mrt_ir_tensor){.name = "w",
                                       .ndims = 2,
                                       .shape = kf,
                                       .init = MRT_IR_INIT_RANDOM,
                                       .seed = 312},
                      &err);
    mrt_ir_add_tensor(ir,
                      &(mrt_ir_tensor){.name = "t",
                                       .ndims = 2,
                                       .shape = bf,
                                       .init = MRT_IR_INIT_RANDOM,
                                       .seed = 313},
                      &err);
    mrt_ir_add_op(
        ir,
        &(mrt_ir_op){
            .kind = MRT_IR_EINSUM, {"x", "w"}, "h", .ndims = 2, .shape = bf},
        &err);
    mrt_ir_add_op(ir,
                  &(mrt_ir_op){.kind = MRT_IR_DROPOUT,
                               {"h"},
                               "d",
                               .p = 0.5,
                               .seeded = 1,
                               .seed = 7},
                  &err);
    mrt_ir_add_op(
        ir, &(mrt_ir_op){.kind = MRT_IR_DROPOUT, {"d"}, "d2", .p = 0.2}, &err);
    mrt_ir_add_op(ir, &(mrt_ir_op){.kind = MRT_IR_MSE, {"d2", "t"}, "loss"},
                  &err);
    mrt_ir_set_train(ir,
                     &(mrt_ir_train){.loss = "loss",
                                     .nparams = 2,
                                     .params = (const char *[]){"x", "w"},
                                     .lr = 0.1,
                                     .steps = 2},
                     &err);
    mrt_ir_set_outputs(ir, 1, (const char *[]){"d2"}, &err);
    mrt_spec *built = NULL;
    ck_assert_msg(mrt_ir_finish(ir, &built, &err) == MRT_OK, "%s", err.message);
    mrt_ir_destroy(ir);
    mrt_spec *loaded = load("tests/specs/ops/dropout.yaml", NULL);
    /* the same masks, seeded alike */
    for (int k = 0; k < 2; k++) {
        const char *name = k ? "d2:mask" : "d:mask";
        int a = mrt_spec_find_tensor(built, name);
        int b = mrt_spec_find_tensor(loaded, name);
        ck_assert_int_ge(a, 0);
        ck_assert_int_ge(b, 0);
        ck_assert_uint_eq(built->tensor[a].seed, loaded->tensor[b].seed);
        ck_assert_double_eq(built->tensor[a].fill, loaded->tensor[b].fill);
    }
    char *x = plan_text(built), *y = plan_text(loaded);
    ck_assert_str_eq(x, y);
    free(x);
    free(y);
    mrt_spec_destroy(built);
    mrt_spec_destroy(loaded);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("masks");
    TCase *tc = tcase_create("masks");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, dropout_same_bits);
    tcase_add_test(tc, causal_same_bits);
    tcase_add_test(tc, dropout_drops_p);
    tcase_add_test(tc, mask_type);
    tcase_add_test(tc, dropout_mask_one_byte);
    tcase_add_test(tc, dropout_scales_kept);
    tcase_add_test(tc, causal_is_causal);
    tcase_add_test(tc, masks_memory_counted);
    tcase_add_test(tc, causal_mask_shared);
    tcase_add_test(tc, masks_follow_alternative_ops);
    tcase_add_test(tc, builder_checks);
    tcase_add_test(tc, builder_as_yaml);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
