/*
 * test_kernel.c — the local einsum kernel (kernels/kernel.c) against a
 * naive loop einsum with double accumulation, and the index classifier
 * (ops/classify.c).
 *
 * Einsums are written as strings, "ik,kj->ij", one letter per dim (dim id
 * = letter - 'a'), with extents "i3k4j5".  Every kernel call gets a
 * workspace of exactly the size the kernel asked for, in its own malloc
 * block, so valgrind and ASan catch any use beyond it, and an output
 * filled with NaNs, so a missed element shows.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "classify.h"
#include "kernel.h"
#include "tview.h"
#include "kernel_plan.h"

#include <blis.h> /* bli_finalize: frees BLIS's pools before exit */

/* ---- einsum strings ------------------------------------------------- */

static void tview_init(tview *v, const char *letters, int len,
                       const int64_t ext[26])
{
    memset(v, 0, sizeof *v);
    v->count = 1;
    for (int i = 0; i < len; i++) {
        v->dim[v->ndims] = letters[i] - 'a';
        v->ext[v->ndims] = ext[letters[i] - 'a'];
        v->count *= v->ext[v->ndims++];
    }
}

/* Parses "ab,bc->ac" (or "ab->a") into up to three views. */
static int parse_einsum(const char *s, const int64_t ext[26], tview *a,
                        tview *b, tview *c)
{
    const char *comma = strchr(s, ','), *arrow = strstr(s, "->");
    ck_assert_ptr_nonnull(arrow);
    const char *a_end = comma && comma < arrow ? comma : arrow;
    tview_init(a, s, (int)(a_end - s), ext);
    if (a_end == comma)
        tview_init(b, comma + 1, (int)(arrow - comma - 1), ext);
    tview_init(c, arrow + 2, (int)strlen(arrow + 2), ext);
    return a_end == comma ? 2 : 1;
}

/* "i3k4j5" -> ext['i'] = 3, ... */
/* ---- data and the reference ---------------------------------------- */

/* Element i of a test tensor: uniform-looking in [-1, 1), a function of
 * (seed, i) only, so a failing case can be rerun. */
static double test_value(uint64_t seed, uint64_t i)
{
    uint64_t z = ((seed + 1) * 0x9e3779b97f4a7c15ull) ^
                 ((i + 1) * 0xd1b54a32d192ed03ull);
    z ^= z >> 31;
    z *= 0xbf58476d1ce4e5b9ull;
    z ^= z >> 29;
    return (double)(z >> 11) / (double)(1ull << 52) - 1.0;
}

static void fill_random(mrt_dtype t, tview *v, uint64_t seed)
{
    v->data = malloc((size_t)v->count * (size_t)mrt_dtype_size(t));
    ck_assert_ptr_nonnull(v->data);
    for (int64_t i = 0; i < v->count; i++)
        put(t, v->data, i, test_value(seed, (uint64_t)i));
}

/* Row-major offset of the current index (idx by dim id) into v. */
static int64_t offset(const tview *v, const int64_t idx[26])
{
    int64_t off = 0;
    for (int i = 0; i < v->ndims; i++)
        off = off * v->ext[i] + idx[v->dim[i]];
    return off;
}

/* ref[c] = sum of a*b (or a), scale[c] = sum of |a*b|, in double. */
static void naive_einsum(mrt_dtype t, const tview *a, const tview *b,
                         const tview *c, double *ref, double *scale)
{
    int used[26] = {0}, ndim = 0, dims[26] = {0};
    int64_t ext[26] = {0}, idx[26] = {0};
    const tview *ops[3] = {a, b, c};
    for (int o = 0; o < 3; o++)
        for (int i = 0; ops[o] && i < ops[o]->ndims; i++)
            if (!used[ops[o]->dim[i]]++) {
                dims[ndim++] = ops[o]->dim[i];
                ext[ops[o]->dim[i]] = ops[o]->ext[i];
            }
    memset(ref, 0, sizeof *ref * (size_t)c->count);
    memset(scale, 0, sizeof *scale * (size_t)c->count);
    for (;;) {
        double v = get(t, a->data, offset(a, idx));
        if (b)
            v *= get(t, b->data, offset(b, idx));
        ref[offset(c, idx)] += v;
        scale[offset(c, idx)] += fabs(v);
        int j = ndim - 1;
        for (; j >= 0 && ++idx[dims[j]] == ext[dims[j]]; j--)
            idx[dims[j]] = 0;
        if (j < 0)
            break;
    }
}

/* Runs the kernel on views with data in a and b; returns the workspace
 * size it asked for and leaves the result in c->data. */
static size_t run_kernel(mrt_dtype t, tview *a, tview *b, tview *c)
{
    mrt_kview ka = kv(a), kb = b ? kv(b) : (mrt_kview){0}, kc;
    c->data = malloc((size_t)c->count * (size_t)mrt_dtype_size(t));
    ck_assert_ptr_nonnull(c->data);
    for (int64_t i = 0; i < c->count; i++)
        put(t, c->data, i, NAN);
    kc = kv(c);
    size_t ws = mrt_einsum_workspace(t, &ka, b ? &kb : NULL, &kc);
    void *w = ws ? malloc(ws) : NULL;
    ck_assert(!ws || w);
    mrt_kernel_einsum(t, &ka, b ? &kb : NULL, &kc, w);
    free(w);
    return ws;
}

/* Compares c->data with the reference; returns the number of bad
 * elements and describes the first in msg. */
static int compare(mrt_dtype t, const tview *a, const tview *b, const tview *c,
                   char *msg, size_t size)
{
    double *ref = malloc(sizeof *ref * (size_t)c->count);
    double *scale = malloc(sizeof *scale * (size_t)c->count);
    ck_assert(ref && scale);
    naive_einsum(t, a, b, c, ref, scale);
    double tol = t == MRT_F64 ? 1e-12 : 1e-5;
    int bad = 0;
    for (int64_t i = 0; i < c->count; i++) {
        double got = get(t, c->data, i);
        if (!(fabs(got - ref[i]) <= tol * (scale[i] + 1e-300)) && !bad++)
            snprintf(msg, size, "element %lld: got %.17g, expected %.17g",
                     (long long)i, got, ref[i]);
    }
    free(ref);
    free(scale);
    return bad;
}

/* Checks one einsum in one dtype; returns the workspace size used. */
static size_t check_case(mrt_dtype t, const char *einsum, const char *exts)
{
    int64_t ext[26];
    tview a, b, c;
    parse_ext(exts, ext);
    int nin = parse_einsum(einsum, ext, &a, &b, &c);
    fill_random(t, &a, 11);
    if (nin == 2)
        fill_random(t, &b, 12);
    size_t ws = run_kernel(t, &a, nin == 2 ? &b : NULL, &c);
    char msg[200] = "";
    int bad = compare(t, &a, nin == 2 ? &b : NULL, &c, msg, sizeof msg);
    ck_assert_msg(!bad, "%s %s (%s): %d wrong, %s", einsum, exts,
                  mrt_dtype_name(t), bad, msg);
    free(a.data);
    if (nin == 2)
        free(b.data);
    free(c.data);
    return ws;
}

/* The kernel's plan for an einsum in dtype t. */
static void plan_of(mrt_dtype t, const char *einsum, const char *exts,
                    mrt_kplan *p)
{
    int64_t ext[26];
    tview a, b, c;
    parse_ext(exts, ext);
    int nin = parse_einsum(einsum, ext, &a, &b, &c);
    mrt_kview ka = kv(&a), kb = kv(&b), kc = kv(&c);
    mrt_kplan_make(t, &ka, nin == 2 ? &kb : NULL, &kc, p);
}

/* Bytes of the block B is copied into one batch index at a time (0 when
 * it is not): float32 only, when BLIS would read B against its grain. */
static size_t grain_bytes(mrt_dtype t, const char *einsum, const char *exts)
{
    mrt_kplan p;
    plan_of(t, einsum, exts, &p);
    const mrt_kop *b = &p.op[MRT_KOP_B];
    if (!b->slice)
        return 0;
    int64_t end = p.op[MRT_KOP_C].copy ? p.op[MRT_KOP_C].ws_off : p.ws_elems;
    return (size_t)(end - b->ws_off) * (size_t)mrt_dtype_size(t);
}

/* Both dtypes; returns the float64 workspace size.  The workspaces agree
 * but for float32's grain copy. */
static size_t check_both(const char *einsum, const char *exts)
{
    size_t w32 = check_case(MRT_F32, einsum, exts);
    size_t w64 = check_case(MRT_F64, einsum, exts);
    ck_assert_uint_eq(grain_bytes(MRT_F64, einsum, exts), 0);
    ck_assert_uint_eq(2 * (w32 - grain_bytes(MRT_F32, einsum, exts)), w64);
    return w64;
}

/* ---- fixed cases ---------------------------------------------------- */

START_TEST(matmul)
{
    ck_assert_uint_eq(check_both("ik,kj->ij", "i3k4j5"), 0);
    ck_assert_uint_eq(check_both("ik,kj->ij", "i37k29j41"), 0);
    ck_assert_uint_eq(check_both("ik,kj->ij", "i150k130j170"), 0);
    ck_assert_uint_eq(check_both("ik,kj->ij", "i1k7j5"), 0);
    ck_assert_uint_eq(check_both("ik,kj->ij", "i6k1j5"), 0);
    ck_assert_uint_eq(check_both("ik,kj->ij", "i6k7j1"), 0);
}
END_TEST

START_TEST(matmul_transposed)
{
    const char *forms[] = {"ik,kj->ij", "ki,kj->ij", "ik,jk->ij", "ki,jk->ij"};
    for (int f = 0; f < 4; f++) {
        ck_assert_uint_eq(check_both(forms[f], "i37k29j41"), 0);
        ck_assert_uint_eq(check_both(forms[f], "i70k90j60"), 0);
    }
    /* C transposed too: C^T = B^T A^T, still no copy. */
    ck_assert_uint_eq(check_both("ik,kj->ji", "i37k29j41"), 0);
    ck_assert_uint_eq(check_both("ki,jk->ji", "i37k29j41"), 0);
}
END_TEST

START_TEST(batched)
{
    ck_assert_uint_eq(check_both("bhqd,bhkd->bhqk", "b2h3q7d5k6"), 0);
    /* batch dims in different places in each operand */
    ck_assert_uint_eq(check_both("bqhd,hbdk->hqbk", "b2h3q7d5k6"), 0);
    ck_assert_uint_eq(check_both("qdb,bkd->bqk", "b4q9d5k6"), 0);
    ck_assert_uint_eq(check_both("bij,bjk->bik", "b5i16j17k18"), 0);
}
END_TEST

START_TEST(mixed_k_order)
{
    /* K = (b, c) in A but (c, b) in B: one input is copied, the smaller. */
    size_t ws = check_both("abc,cbd->ad", "a4b3c5d7");
    ck_assert_uint_eq(ws, 3 * 5 * 4 * sizeof(double)); /* A is smaller */
    ws = check_both("abc,cbd->ad", "a9b3c5d2");
    ck_assert_uint_eq(ws, 3 * 5 * 2 * sizeof(double)); /* B is smaller */
}
END_TEST

START_TEST(permuted_output)
{
    check_both("ik,kj->ji", "i5k4j3");
    check_both("bik,bkj->jbi", "b3i5k4j6");
    check_both("bik,bkj->ibj", "b3i5k4j6");
    /* M = (i, l) split around N in C: C is computed in the workspace. */
    ck_assert_uint_gt(check_both("ilk,kj->ijl", "i3l4k5j6"), 0);
    ck_assert_uint_eq(check_both("ilk,kj->ijl", "i33l35k5j34"),
                      33 * 35 * 34 * sizeof(double));
    /* A packed with a transpose: its M = (i, l) is split by K */
    ck_assert_uint_eq(check_both("ikl,kj->ilj", "i33l35k36j3"),
                      33 * 35 * 36 * sizeof(double));
}
END_TEST

/* float32 products that BLIS would read against its grain (A row-stored,
 * B column-stored, on its small-matrix path): B is copied row-stored, one
 * batch index at a time, into a block of K x N (row stride padded off
 * multiples of 1 KiB); float64 copies nothing. */
static void expect_grain(const char *einsum, const char *exts, int64_t k,
                         int64_t ld)
{
    ck_assert_uint_eq(check_case(MRT_F32, einsum, exts),
                      (size_t)(k * ld) * sizeof(float));
    ck_assert_uint_eq(grain_bytes(MRT_F32, einsum, exts),
                      (size_t)(k * ld) * sizeof(float));
    ck_assert_uint_eq(check_case(MRT_F64, einsum, exts), 0);
}

static void expect_no_grain(const char *einsum, const char *exts)
{
    ck_assert_uint_eq(grain_bytes(MRT_F32, einsum, exts), 0);
}

START_TEST(grain_copy)
{
    /* attention scores: K = d is the unit stride of both inputs */
    expect_grain("bhqd,bhkd->bhqk", "b2h3q40k50d36", 36, 50);
    /* batch dims ordered differently in every operand */
    expect_grain("hbqd,bhkd->bkhq", "b2h3q40k50d36", 36, 50);
    expect_grain("qbd,kbd->bqk", "b3q33d20k7", 20, 7);
    /* C column-stored (BLIS's CRC case) */
    expect_grain("bqd,bkd->bkq", "b3q40k45d20", 20, 45);
    /* N = 256 float32 (1 KiB rows): the row stride is padded to 272 */
    expect_grain("qd,kd->qk", "q32k256d9", 9, 272);
    /* M = (q, r) and N = (k, l) of two dims each */
    expect_grain("qrd,kld->qrkl", "q8r5d7k6l9", 7, 54);
    /* A copied for its sum dim (row-stored): B still goes by the grain */
    size_t w = check_case(MRT_F32, "sqd,kd->qk", "s3q40d20k30");
    ck_assert_uint_eq(w, (40 * 20 + 20 * 30) * sizeof(float));
    ck_assert_uint_eq(grain_bytes(MRT_F32, "sqd,kd->qk", "s3q40d20k30"),
                      20 * 30 * sizeof(float));
    check_both("sqd,kd->qk", "s3q40d20k30");
    /* not against the grain: B row-stored, A column-stored, float64 */
    expect_no_grain("qd,dk->qk", "q40d20k30");
    expect_no_grain("dq,kd->qk", "q40d20k30");
    expect_no_grain("qbd,kdb->bqk", "b3q33d20k7"); /* B general-stored */
    /* N = 1: a copy changes nothing (the kernel calls gemv then: see
     * the test n_one_in_bounds) */
    expect_no_grain("qd,d->q", "q40d20");
    /* M too small to pay for the copy: below 32, or below 128 once the
     * block (K x N) is over 256 KiB */
    expect_no_grain("qd,kd->qk", "q31d20k30");
    expect_no_grain("qd,kd->qk", "q127d250k270");
    ck_assert_uint_gt(grain_bytes(MRT_F32, "qd,kd->qk", "q128d250k270"), 0);
    check_case(MRT_F32, "qd,kd->qk", "q128d250k270");
    /* off BLIS's small-matrix path (M >= 512, N >= 200, K >= 240) */
    expect_no_grain("qd,kd->qk", "q512d240k200");
    ck_assert_uint_gt(grain_bytes(MRT_F32, "qd,kd->qk", "q511d240k200"), 0);
}
END_TEST

/* N = 1 with B ending right at an unreadable page: BLIS 0.9's float32
 * gemm reads past the end of such a B (row-stored A, M >= 16, K not a
 * multiple of 16); the kernel's gemv must not. */
START_TEST(n_one_in_bounds)
{
    long page = sysconf(_SC_PAGESIZE);
    char *m = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(m, MAP_FAILED);
    ck_assert_int_eq(mprotect(m + page, (size_t)page, PROT_NONE), 0);
    for (int t = 0; t < 2; t++) {
        int64_t ext[26];
        tview a, b, c;
        parse_ext("q40d20", ext);
        parse_einsum("qd,d->q", ext, &a, &b, &c);
        mrt_dtype dt = t ? MRT_F64 : MRT_F32;
        fill_random(dt, &a, 11);
        fill_random(dt, &b, 12);
        size_t bytes = (size_t)b.count * (size_t)mrt_dtype_size(dt);
        void *guarded = m + page - bytes;
        memcpy(guarded, b.data, bytes);
        free(b.data);
        b.data = guarded;
        run_kernel(dt, &a, &b, &c);
        char msg[200] = "";
        ck_assert_msg(!compare(dt, &a, &b, &c, msg, sizeof msg), "%s", msg);
        free(a.data);
        free(c.data);
    }
    munmap(m, 2 * (size_t)page);
}
END_TEST

START_TEST(one_input)
{
    ck_assert_uint_eq(check_both("ij->ji", "i7j9"), 0);
    ck_assert_uint_eq(check_both("ijk->kij", "i4j5k6"), 0);
    ck_assert_uint_eq(check_both("ij->i", "i7j9"), 0);
    ck_assert_uint_eq(check_both("ij->j", "i7j9"), 0);
    ck_assert_uint_eq(check_both("ijk->ki", "i4j5k6"), 0);
    ck_assert_uint_eq(check_both("ij->ij", "i7j9"), 0);
    ck_assert_uint_eq(check_both("ijk->j", "i40j3k50"), 0);
    /* big enough for the tiled transpose, with and without sums */
    check_both("ij->ji", "i40j70");
    check_both("ijk->kji", "i33j5k40");
    check_both("ijk->ki", "i40j3k50");
    check_both("ijk->kj", "i3j40k50");
    /* transposing tiles with every remainder of the 4 x 4 blocks */
    check_both("ij->ji", "i37j45");
    check_both("ij->ji", "i46j39");
    check_both("bij->bji", "b3i35j33");
}
END_TEST

START_TEST(sum_dims)
{
    check_both("isk,kj->ij", "i4s3k5j6");         /* sum_a */
    check_both("ik,ksj->ij", "i4s3k5j6");         /* sum_b */
    check_both("sik,kjt->ij", "i4s3k5j6t2");      /* both */
    check_both("bsik,tbkj->bji", "b2i4s3k5j6t2"); /* with batch */
    check_both("si,j->ij", "s5i4j3");             /* sum_a, no K */
}
END_TEST

START_TEST(outer_and_dot)
{
    ck_assert_uint_eq(check_both("i,j->ij", "i7j9"), 0);
    ck_assert_uint_eq(check_both("i,j->ji", "i7j9"), 0);
    check_both("xk,xk->x", "x6k50"); /* a dot product per batch index */
    check_both("x,x->x", "x9");      /* elementwise */
    check_both("k,k->", "k40");      /* a plain dot product, 0-d C */
    check_both("ij,->ij", "i3j4");   /* times a scalar */
}
END_TEST

START_TEST(extent_one)
{
    check_both("iak,kbj->ijab", "i3a1k4b1j5");
    check_both("aik,kj->ija", "a1i3k4j5");
    check_both("ik,kj->ij", "i1k1j1");
}
END_TEST

/* ---- randomized cases ----------------------------------------------- */

static uint64_t rng_state = 12345;

static int rnd(int n)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (int)((rng_state >> 33) % (uint64_t)n);
}

static void shuffle(char *s)
{
    for (int i = (int)strlen(s) - 1; i > 0; i--) {
        int j = rnd(i + 1);
        char t = s[i];
        s[i] = s[j];
        s[j] = t;
    }
}

/* A random einsum of 1-6 dims; classes: 0 batch, 1 M, 2 N, 3 K,
 * 4 sum_a, 5 sum_b. */
static void random_einsum(char *einsum, char *exts)
{
    int nin = rnd(4) ? 2 : 1, nd = 1 + rnd(6);
    char a[8] = "", b[8] = "", c[8] = "";
    char *e = exts;
    int in_c = 0;
    for (int i = 0; i < nd; i++) {
        int cl = nin == 2 ? rnd(6) : (rnd(2) ? 1 : 4);
        if (i == nd - 1 && !in_c)
            cl = nin == 2 ? rnd(3) : 1; /* C needs a dim */
        char l[2] = {(char)('a' + i), 0};
        if (cl == 0 || cl == 1 || cl == 3 || cl == 4)
            strcat(a, l);
        if (cl == 0 || cl == 2 || cl == 3 || cl == 5)
            strcat(b, l);
        if (cl <= 2)
            strcat(c, l), in_c = 1;
        e += sprintf(e, "%c%d", l[0], 1 + rnd(5));
    }
    shuffle(a), shuffle(b), shuffle(c);
    if (nin == 2)
        sprintf(einsum, "%s,%s->%s", a, b, c);
    else
        sprintf(einsum, "%s->%s", a, c);
}

START_TEST(randomized)
{
    char einsum[40], exts[40];
    for (int i = 0; i < 300; i++) {
        random_einsum(einsum, exts);
        check_both(einsum, exts);
    }
}
END_TEST

/* ---- the classifier ------------------------------------------------- */

static mrt_status classify(const char *einsum, const char *exts,
                           mrt_einsum_class *k, mrt_error *err)
{
    int64_t ext[26];
    tview a, b, c;
    parse_ext(exts, ext);
    int nin = parse_einsum(einsum, ext, &a, &b, &c);
    mrt_kview ka = kv(&a), kb = kv(&b), kc = kv(&c);
    return mrt_einsum_classify(&ka, nin == 2 ? &kb : NULL, &kc, k, err);
}

static void expect_class(const mrt_einsum_class *k, mrt_idx_class cl,
                         const char *letters)
{
    ck_assert_int_eq(k->n[cl], (int)strlen(letters));
    for (int i = 0; letters[i]; i++)
        ck_assert_int_eq(k->dim[cl][i], letters[i] - 'a');
}

START_TEST(classify_classes)
{
    mrt_einsum_class k;
    mrt_error err = {0};
    ck_assert_int_eq(classify("bsqhd,hbkdt->hqkb", "b2h3q4d5k6s7t8", &k, &err),
                     MRT_OK);
    expect_class(&k, MRT_IDX_BATCH, "hb"); /* C order */
    expect_class(&k, MRT_IDX_M, "q");
    expect_class(&k, MRT_IDX_N, "k");
    expect_class(&k, MRT_IDX_K, "d"); /* A order */
    expect_class(&k, MRT_IDX_SUM_A, "s");
    expect_class(&k, MRT_IDX_SUM_B, "t");
    ck_assert_int_eq(k.size[MRT_IDX_BATCH], 6);
    ck_assert_int_eq(k.size[MRT_IDX_SUM_B], 8);
    ck_assert_int_eq(k.ext[MRT_IDX_K][0], 5);

    ck_assert_int_eq(classify("ijk->ki", "i2j3k4", &k, &err), MRT_OK);
    expect_class(&k, MRT_IDX_M, "ki");
    expect_class(&k, MRT_IDX_SUM_A, "j");
    ck_assert_int_eq(k.n[MRT_IDX_N] + k.n[MRT_IDX_K] + k.n[MRT_IDX_BATCH], 0);
    ck_assert_int_eq(k.size[MRT_IDX_N] * k.size[MRT_IDX_K], 1);
    ck_assert_int_eq(err.code, MRT_OK);

    ck_assert_str_eq(mrt_idx_class_name(MRT_IDX_BATCH), "batch");
    ck_assert_str_eq(mrt_idx_class_name(MRT_IDX_SUM_B), "sum_b");
    ck_assert_str_eq(mrt_idx_class_name(MRT_IDX_CLASS_COUNT), "unknown");
}
END_TEST

static void expect_error(const char *einsum, const char *exts,
                         const char *needle)
{
    mrt_einsum_class k;
    mrt_error err = {0};
    ck_assert_int_eq(classify(einsum, exts, &k, &err), MRT_E_SPEC);
    ck_assert_int_eq(err.code, MRT_E_SPEC);
    ck_assert_int_eq(err.line, 0);
    ck_assert_str_eq(err.file, "");
    ck_assert_msg(strstr(err.message, needle), "%s: '%s' lacks '%s'", einsum,
                  err.message, needle);
    ck_assert_int_eq(classify(einsum, exts, &k, NULL), MRT_E_SPEC);
}

START_TEST(classify_errors)
{
    expect_error("ik,kj->iz", "i2k3j4z5", "neither input");
    expect_error("ik->iz", "i2k3z5", "neither input");
    expect_error("iki,kj->ij", "i2k3j4", "twice");
    expect_error("ik,kj->ii", "i2k3j4", "twice");
    expect_error("ik,kjj->ij", "i2k3j4", "twice");

    /* extents that differ between operands */
    int dims_a[] = {0, 1}, dims_b[] = {1, 2}, dims_c[] = {0, 2};
    int64_t ext_a[] = {2, 3}, ext_b[] = {4, 5}, ext_c[] = {2, 5};
    mrt_kview a = {2, dims_a, ext_a, NULL}, b = {2, dims_b, ext_b, NULL},
              c = {2, dims_c, ext_c, NULL};
    mrt_einsum_class k;
    mrt_error err = {0};
    ck_assert_int_eq(mrt_einsum_classify(&a, &b, &c, &k, &err), MRT_E_SPEC);
    ck_assert_ptr_nonnull(strstr(err.message, "extent"));
    ext_b[0] = 3, ext_c[0] = 7; /* now C and A disagree */
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(mrt_einsum_classify(&a, &b, &c, &k, &err), MRT_E_SPEC);
    ck_assert_ptr_nonnull(strstr(err.message, "extent"));
    ext_c[0] = 2, ext_c[1] = 6; /* C and B */
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(mrt_einsum_classify(&a, &b, &c, &k, &err), MRT_E_SPEC);
    ext_c[1] = 5;
    ck_assert_int_eq(mrt_einsum_classify(&a, &b, &c, &k, NULL), MRT_OK);
}
END_TEST

/* mrt_kernel_init flushes subnormals (kernel.c says why): a subnormal
 * operand reads as 0, and a product that would be subnormal is 0, in a
 * BLIS product and in plain arithmetic on the same thread.  Elsewhere
 * than x86 the mode is left alone, and so is this test. */
START_TEST(subnormals_flushed)
{
#if defined(__SSE2__)
    volatile float tiny = 0x1p-140f, small = 0x1p-70f;
    ck_assert(tiny * 1.0f == 0.0f);   /* read as 0 */
    ck_assert(small * small == 0.0f); /* 2^-140 written as 0 */
    int64_t ext[26] = {0};
    ext['i' - 'a'] = 40, ext['k' - 'a'] = 30, ext['j' - 'a'] = 50;
    tview a, b, c;
    parse_einsum("ik,kj->ij", ext, &a, &b, &c);
    float *fa = malloc(sizeof *fa * (size_t)a.count);
    float *fb = malloc(sizeof *fb * (size_t)b.count);
    ck_assert(fa && fb);
    for (int64_t i = 0; i < a.count; i++)
        fa[i] = 1.0f + (float)(i % 7);
    /* subnormal bit patterns, set as bits: a product made here would be
     * flushed already */
    for (int64_t i = 0; i < b.count; i++) {
        uint32_t bits = 1u + (uint32_t)(i % 7) * 0x1000u;
        memcpy(&fb[i], &bits, sizeof bits);
    }
    uint32_t first; /* exponent 0, fraction not: subnormal (read as bits:
                     * fpclassify compares, and reads it as 0 here) */
    memcpy(&first, &fb[0], sizeof first);
    ck_assert(first != 0 && (first & 0x7f800000u) == 0);
    a.data = fa, b.data = fb;
    run_kernel(MRT_F32, &a, &b, &c);
    for (int64_t i = 0; i < c.count; i++)
        ck_assert_msg(((float *)c.data)[i] == 0.0f, "C[%lld] = %g, not 0",
                      (long long)i, ((float *)c.data)[i]);
    free(fa), free(fb), free(c.data);
#endif
}
END_TEST

START_TEST(classify_flops)
{
    mrt_einsum_class k;
    ck_assert_int_eq(classify("ik,kj->ij", "i3k4j5", &k, NULL), MRT_OK);
    ck_assert_double_eq(mrt_einsum_flops(&k), 2.0 * 3 * 4 * 5);
    ck_assert_int_eq(classify("bik,bkj->bij", "b2i3k4j5", &k, NULL), MRT_OK);
    ck_assert_double_eq(mrt_einsum_flops(&k), 2.0 * 2 * 3 * 4 * 5);
    /* summing s=6 into one takes 5 adds for each of i*k = 12 results */
    ck_assert_int_eq(classify("isk,kj->ij", "i3s6k4j5", &k, NULL), MRT_OK);
    ck_assert_double_eq(mrt_einsum_flops(&k), 2.0 * 3 * 4 * 5 + 12 * 5);
}
END_TEST

int main(void)
{
    mrt_kernel_init();
    Suite *s = suite_create("kernel");
    TCase *tc = tcase_create("kernel");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, matmul);
    tcase_add_test(tc, matmul_transposed);
    tcase_add_test(tc, batched);
    tcase_add_test(tc, mixed_k_order);
    tcase_add_test(tc, permuted_output);
    tcase_add_test(tc, grain_copy);
    tcase_add_test(tc, n_one_in_bounds);
    tcase_add_test(tc, one_input);
    tcase_add_test(tc, sum_dims);
    tcase_add_test(tc, outer_and_dot);
    tcase_add_test(tc, extent_one);
    tcase_add_test(tc, randomized);
    tcase_add_test(tc, subnormals_flushed);
    suite_add_tcase(s, tc);
    TCase *tk = tcase_create("classify");
    tcase_add_test(tk, classify_classes);
    tcase_add_test(tk, classify_errors);
    tcase_add_test(tk, classify_flops);
    suite_add_tcase(s, tk);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    /* Without this, valgrind reports BLIS's packing pools as "possibly
     * lost" (BLIS keeps only aligned pointers into them). */
    bli_finalize();
    return failed ? 1 : 0;
}
