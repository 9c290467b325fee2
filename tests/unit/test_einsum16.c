/*
 * test_einsum16.c — the 16-bit einsum (kernels/kernel_einsum16.c)
 * against a naive loop einsum in double, rounded once by base/half.h.
 *
 * The inputs are small integers (or small multiples of 2^-24, float16's
 * subnormal unit) so that every partial sum is exact in float32 whatever
 * the order of the additions: the panelled product must then give, bit
 * for bit, the 16-bit rounding (to nearest, ties to even) of the exact
 * sum, and an element rounded twice, missed, or summed over the wrong
 * panel shows.  The shapes cross every panel edge (MC rows, KC of the
 * contraction, NC columns), take one column (gemv), transposed operands,
 * batch dims and mixed types; NaN and infinities in the inputs must come
 * out as the double reference has them.  The workspace is exactly what
 * mrt_einsum16_workspace asks, in its own block, and never more than
 * the float32 copies of the 16-bit operands that the planner counts; C
 * starts as NaNs.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "half.h"
#include "kernel.h"
#include "tview.h"

#include <blis.h>

/* "ab,bc->ac" into three views (extents from ext). */
static void views(const char *s, const int64_t ext[26], tview v[3])
{
    const char *comma = strchr(s, ','), *arrow = strstr(s, "->");
    const char *from[3] = {s, comma + 1, arrow + 2};
    int len[3] = {(int)(comma - s), (int)(arrow - comma - 1),
                  (int)strlen(arrow + 2)};
    for (int x = 0; x < 3; x++) {
        memset(&v[x], 0, sizeof v[x]);
        v[x].count = 1;
        for (int i = 0; i < len[x]; i++) {
            v[x].dim[v[x].ndims] = from[x][i] - 'a';
            v[x].ext[v[x].ndims] = ext[from[x][i] - 'a'];
            v[x].count *= v[x].ext[v[x].ndims++];
        }
    }
}

/* Element i of an array of type t, and x stored there (x exact in t). */
static double val(mrt_dtype t, const void *p, int64_t i)
{
    if (t == MRT_BF16)
        return mrt_bf16_to_f32(((const uint16_t *)p)[i]);
    if (t == MRT_F16)
        return mrt_f16_to_f32(((const uint16_t *)p)[i]);
    return ((const float *)p)[i];
}

static void store(mrt_dtype t, void *p, int64_t i, double x)
{
    if (t == MRT_BF16)
        ((uint16_t *)p)[i] = mrt_f32_to_bf16((float)x);
    else if (t == MRT_F16)
        ((uint16_t *)p)[i] = mrt_f32_to_f16((float)x);
    else
        ((float *)p)[i] = (float)x;
}

static int64_t offset(const tview *v, const int64_t idx[26])
{
    int64_t o = 0;
    for (int i = 0; i < v->ndims; i++)
        o = o * v->ext[i] + idx[v->dim[i]];
    return o;
}

/* C = einsum(A, B) in double over every index of the letters used. */
static void reference(const mrt_dtype t[3], const tview v[3], double *ref)
{
    int used[26] = {0}, n = 0, letters[26];
    int64_t ext[26] = {0}, idx[26] = {0};
    for (int x = 0; x < 3; x++)
        for (int i = 0; i < v[x].ndims; i++)
            if (!used[v[x].dim[i]]++) {
                letters[n++] = v[x].dim[i];
                ext[v[x].dim[i]] = v[x].ext[i];
            }
    for (int64_t i = 0; i < v[2].count; i++)
        ref[i] = 0;
    for (;;) {
        ref[offset(&v[2], idx)] += val(t[0], v[0].data, offset(&v[0], idx)) *
                                   val(t[1], v[1].data, offset(&v[1], idx));
        int j = n - 1;
        for (; j >= 0 && ++idx[letters[j]] == ext[letters[j]]; j--)
            idx[letters[j]] = 0;
        if (j < 0)
            return;
    }
}

/* The 16-bit rounding of an exact sum, compared with what came out:
 * equal bits, NaN for NaN, either zero for a zero. */
static void check_equal(mrt_dtype t, const void *c, int64_t i, double ref)
{
    double got = val(t, c, i);
    if (isnan(ref)) {
        ck_assert_msg(isnan(got), "element %lld: %g, expected NaN",
                      (long long)i, got);
        return;
    }
    union {
        uint16_t h;
        float f;
    } want;
    store(t, &want, 0, ref);
    double w = val(t, &want, 0);
    ck_assert_msg(got == w, "element %lld: %.9g, expected %.9g (sum %.9g)",
                  (long long)i, got, w, ref);
}

/* Integers in [-span, span], times unit; a few NaN and inf if specials. */
static void fill(mrt_dtype t, tview *v, uint64_t seed, int span, double unit)
{
    v->data = malloc((size_t)v->count * (size_t)mrt_dtype_size(t));
    ck_assert_ptr_nonnull(v->data);
    uint64_t z = seed * 0x9e3779b97f4a7c15ull + 1;
    for (int64_t i = 0; i < v->count; i++) {
        z = z * 6364136223846793005ull + 1442695040888963407ull;
        int k = (int)((z >> 33) % (uint64_t)(2 * span + 1)) - span;
        store(t, v->data, i, k * unit);
    }
}

/* Runs one case; returns what mrt_kernel_einsum16 returned. */
static int run(const char *spec, const char *sizes, const mrt_dtype t[3],
               double unit, int specials)
{
    int64_t ext[26];
    parse_ext(sizes, ext);
    tview v[3];
    views(spec, ext, v);
    fill(t[0], &v[0], 1, 8, unit);
    fill(t[1], &v[1], 2, 8, 1);
    if (specials) { /* a NaN in A, infinities of both signs in B */
        store(t[0], v[0].data, 0, NAN);
        store(t[1], v[1].data, v[1].count / 2, INFINITY);
        store(t[1], v[1].data, v[1].count - 1, -INFINITY);
    }
    size_t cbytes = (size_t)v[2].count * (size_t)mrt_dtype_size(t[2]);
    v[2].data = malloc(cbytes);
    memset(v[2].data, 0xff, cbytes); /* NaNs in every type */
    mrt_kview a = kv(&v[0]), b = kv(&v[1]), c = kv(&v[2]);
    size_t ws = mrt_einsum16_workspace(t, &a, &b, &c), copies = 0;
    for (int x = 0; x < 3; x++)
        if (t[x] != MRT_F32)
            copies += ((size_t)v[x].count * 4 + 63) & ~(size_t)63;
    ck_assert_uint_le(ws, copies);
    void *w = NULL;
    ck_assert_int_eq(posix_memalign(&w, 64, ws ? ws : 64), 0);
    int ran = mrt_kernel_einsum16(t, &a, &b, &c, w);
    double *ref = malloc((size_t)v[2].count * sizeof *ref);
    reference(t, v, ref);
    for (int64_t i = 0; ran && i < v[2].count; i++)
        check_equal(t[2], v[2].data, i, ref[i]);
    if (!ran) /* untouched */
        for (size_t i = 0; i < cbytes; i++)
            ck_assert_uint_eq(((unsigned char *)v[2].data)[i], 0xff);
    for (int x = 0; x < 3; x++)
        free(v[x].data);
    free(ref);
    free(w);
    return ran;
}

static const mrt_dtype bf[3] = {MRT_BF16, MRT_BF16, MRT_BF16},
                       hf[3] = {MRT_F16, MRT_F16, MRT_F16};

START_TEST(panel_edges)
{
    /* M past MC (256), K past three KC (256), N small; then N past NC */
    ck_assert(run("ik,kj->ij", "i300k777j5", bf, 1, 0));
    ck_assert(run("ik,kj->ij", "i300k777j5", hf, 1, 0));
    ck_assert(run("ik,kj->ij", "i3k5j4100", bf, 1, 0));
    ck_assert(run("ik,kj->ij", "i257k385j129", hf, 1, 0));
    ck_assert(run("ik,kj->ij", "i1k1j1", bf, 1, 0));
}
END_TEST

START_TEST(strides_and_batches)
{
    ck_assert(run("ki,kj->ij", "k400i33j17", bf, 1, 0)); /* A transposed */
    ck_assert(run("ik,jk->ij", "i70k390j9", hf, 1, 0));  /* B transposed */
    ck_assert(run("ik,k->i", "i300k500", bf, 1, 0));     /* one column */
    ck_assert(run("k,kj->j", "k500j7", hf, 1, 0));       /* one row */
    ck_assert(run("i,j->ij", "i20j30", bf, 1, 0));       /* K = 1 */
    ck_assert(run("bik,bkj->bij", "b3i40k50j30", bf, 1, 0));
    ck_assert(run("bhqd,bhkd->bhqk", "b2h3q17d400k9", hf, 1, 0));
    /* C transposed: whatever the plan does, a result equal to the
     * reference, or C untouched (run checks both) */
    run("ik,kj->ji", "i33k40j50", bf, 1, 0);
    /* a perceptron's forward and backward products, shard-sized */
    run("bi,ih->bh", "b8i12h10", bf, 1, 0);
    run("bo,ho->bh", "b8h10o8", bf, 1, 0);
    run("bh,bo->ho", "b8h10o8", bf, 1, 0);
    run("bi,bh->ih", "b8i12h10", bf, 1, 0);
    run("b,b->", "b8", bf, 1, 0);
    run("bo,b->bo", "b8o8", bf, 1, 0);
}
END_TEST

START_TEST(mixed_types)
{
    const mrt_dtype t1[3] = {MRT_BF16, MRT_F32, MRT_BF16},
                    t2[3] = {MRT_F32, MRT_F16, MRT_F16},
                    t3[3] = {MRT_BF16, MRT_BF16, MRT_F32},
                    t4[3] = {MRT_F32, MRT_F32, MRT_BF16};
    ck_assert(run("ik,kj->ij", "i300k400j20", t1, 1, 0));
    ck_assert(run("ik,kj->ij", "i300k400j20", t2, 1, 0));
    ck_assert(run("ik,kj->ij", "i300k400j20", t3, 1, 0));
    ck_assert(run("ki,kj->ij", "k390i260j3", t4, 1, 0));
}
END_TEST

/* NaN and infinities through the panels; float16 subnormal inputs and
 * results (multiples of 2^-24) rounded as IEEE says. */
START_TEST(specials)
{
    ck_assert(run("ik,kj->ij", "i260k390j40", bf, 1, 1));
    ck_assert(run("ik,kj->ij", "i260k390j40", hf, 1, 1));
    ck_assert(run("ik,kj->ij", "i260k390j40", hf, 0x1p-24, 0));
    ck_assert(run("ik,kj->ij", "i20k30j10", bf, 0x1p-130, 0));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("einsum16");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, panel_edges);
    tcase_add_test(tc, strides_and_batches);
    tcase_add_test(tc, mixed_types);
    tcase_add_test(tc, specials);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    bli_finalize();
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
