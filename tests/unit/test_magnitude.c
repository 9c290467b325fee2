/*
 * test_magnitude.c — the unsharded reference's magnitudes
 * (runtime/reference_mag.c), by which --verify scales its tolerance, on
 * examples/gpt2.yaml at its "# test-dims:" (2 layers, float32, one SGD
 * step; every gradient and updated parameter an output):
 *   - honest: float32's real rounding noise, the float32 reference
 *     against the same program computed in float64, is within the
 *     tolerance of every output, the key biases' gradients too (zero in
 *     exact arithmetic: rounding noise in float32, ~1e-17 in float64;
 *     before, their magnitudes were infinite, ignored, and the check
 *     failed against their own noise);
 *   - not vacuous: the sign of the largest element of every output whose
 *     value is real (float32 and float64 agree on it) flipped is caught
 *     (before, magnitudes of 1e31 let every such error pass);
 *   - every magnitude finite and at least |value|;
 * and on a causal softmax, a masked entry has magnitude 0 in the
 * softmax's output and in its shifted scores (which hold the -1e30);
 * and the finite differences of gpt2 in float64, judged against the
 * gradients' magnitudes, pass as derived and catch a wrong backward
 * gelu (gelu_grad made a copy: before, at magnitudes of 1e60, they
 * passed it).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "local.h"

#define GPT2 "examples/gpt2.yaml"

typedef struct run {
    mrt_spec *s;
    void **out, **mag;
} run;

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *text = f ? malloc(1 << 20) : NULL;
    *len = text ? fread(text, 1, (1 << 20) - 1, f) : 0;
    if (text)
        text[*len] = 0;
    if (f)
        fclose(f);
    return text;
}

/* gpt2.yaml at its test dims, in float32 or float64. */
static mrt_spec *load_gpt2(int f64)
{
    size_t len;
    char *text = slurp(GPT2, &len), dims[256] = "";
    ck_assert_ptr_nonnull(text);
    const char *d = strstr(text, "# test-dims: ");
    ck_assert_ptr_nonnull(d);
    sscanf(d + strlen("# test-dims: "), "%255s", dims);
    char *dt = strstr(text, "\ndtype: float32");
    ck_assert_ptr_nonnull(dt);
    if (f64)
        memcpy(dt + strlen("\ndtype: float"), "64", 2);
    mrt_spec *s = NULL;
    mrt_error err = {0};
    mrt_spec_load_options opt = {.dims = dims, .text = text, .len = len};
    ck_assert_int_eq(mrt_spec_load_ex(GPT2, &opt, &s, &err), MRT_OK);
    free(text);
    ck_assert_int_eq(s->dtype, f64 ? MRT_F64 : MRT_F32);
    return s;
}

/* The reference of gpt2.yaml at its test dims, in float32 or float64. */
static run reference(int f64)
{
    run r = {.s = load_gpt2(f64)};
    mrt_error err = {0};
    double loss;
    ck_assert_int_eq(mrt_reference_run(r.s, 1, &loss, &r.out, &r.mag, &err),
                     MRT_OK);
    return r;
}

static void done(run *r)
{
    mrt_reference_free(r->s, r->out);
    mrt_reference_free(r->s, r->mag);
    mrt_spec_destroy(r->s);
}

/* Output k of r64 in float32, for comparing with r32's. */
static float *narrowed(const run *r64, int k, int64_t n)
{
    float *x = malloc((size_t)n * sizeof *x + 1);
    for (int64_t i = 0; i < n; i++)
        x[i] = (float)((const double *)r64->out[k])[i];
    return x;
}

START_TEST(float32_noise_within_tolerance_and_wrong_signs_caught)
{
    run r32 = reference(0), r64 = reference(1);
    const mrt_spec *s = r32.s;
    double tol = mrt_verify_tolerance(s, 0, 1);
    int real = 0, zero_in_exact = 0;
    ck_assert_int_eq(s->noutputs, r64.s->noutputs);
    for (int k = 0; k < s->noutputs; k++) {
        int t = s->output[k];
        int64_t n = mrt_reference_count(s, t);
        const float *r = r32.out[k], *m = r32.mag[k];
        float *x = narrowed(&r64, k, n);
        int64_t top = 0;
        for (int64_t i = 0; i < n; i++) {
            ck_assert_msg(isfinite(m[i]) && m[i] >= fabsf(r[i]),
                          "%s[%lld]: magnitude %g of value %g",
                          s->tensor[t].name, (long long)i, m[i], r[i]);
            if (fabsf(r[i]) > fabsf(r[top]))
                top = i;
        }
        mrt_verify_result v;
        mrt_verify_compare_mag(MRT_F32, x, r, m, n, tol, 0, &v);
        ck_assert_msg(v.ok, "%s: float64 %g, float32 %g, error %g of %g",
                      s->tensor[t].name, v.value, v.reference, v.error,
                      v.element_scale);
        if (fabs(x[top] - r[top]) <= 1e-3 * fabsf(r[top])) { /* real */
            x[top] = -r[top];
            mrt_verify_compare_mag(MRT_F32, x, r, m, n, tol, 0, &v);
            ck_assert_msg(!v.ok, "%s: %g for %g passed (tolerance %g of %g)",
                          s->tensor[t].name, x[top], r[top], tol,
                          v.element_scale);
            real++;
        } else if (strstr(s->tensor[t].name, "grad:h0.attn.bk")) {
            zero_in_exact++;
        }
        free(x);
    }
    /* the test tests something: most outputs are real values, and the
     * key bias's gradient is noise */
    ck_assert_int_ge(real, s->noutputs * 3 / 4);
    ck_assert_int_eq(zero_in_exact, 1);
    done(&r32);
    done(&r64);
}
END_TEST

START_TEST(masked_entries_have_magnitude_zero)
{
    static const char text[] =
        "mesh: {data: 1}\n"
        "dims: {q: 5, k: 5}\n"
        "tensors:\n"
        "  x: {shape: [q, k], init: {random: 3}}\n"
        "ops:\n"
        "  - {op: softmax, in: [x], dim: k, causal: [q, k], out: p}\n"
        "outputs: [p, \"p:shifted\"]\n";
    mrt_spec *s = NULL;
    mrt_error err = {0};
    ck_assert_int_eq(
        mrt_spec_load_string("masked.yaml", text, strlen(text), &s, &err),
        MRT_OK);
    void **out = NULL, **mag = NULL;
    ck_assert_int_eq(mrt_reference_run(s, 1, NULL, &out, &mag, &err), MRT_OK);
    int masked = 0;
    for (int k = 0; k < 2; k++) {
        const float *v = out[k], *m = mag[k];
        for (int q = 0; q < 5; q++)
            for (int j = 0; j < 5; j++) {
                int hidden = j > q;
                masked += hidden;
                if (hidden)
                    ck_assert_msg(m[q * 5 + j] == 0, "%s[%d, %d]: %g",
                                  k ? "p:shifted" : "p", q, j, m[q * 5 + j]);
                else /* the kept entries keep a magnitude of their size */
                    ck_assert(m[q * 5 + j] >= fabsf(v[q * 5 + j]) &&
                              m[q * 5 + j] > 0 && m[q * 5 + j] < 1e3);
            }
    }
    ck_assert_int_eq(masked, 2 * 10);
    mrt_reference_free(s, out);
    mrt_reference_free(s, mag);
    mrt_spec_destroy(s);
}
END_TEST

/* How many of s's trained tensors fail their finite differences (as
 * --verify judges them: verify_run.c's tolerance, 1e-5 of the larger of
 * the largest gradient and each element's magnitude); *checked, how many
 * were checked. */
static int fd_failures(const mrt_spec *s, int *checked)
{
    int max = s->train.nparams + s->train.nextra, n = 0, failed = 0;
    mrt_gradcheck *g = calloc((size_t)max + 1, sizeof *g);
    mrt_error err = {0};
    ck_assert_ptr_nonnull(g);
    ck_assert_int_eq(mrt_reference_gradcheck(s, 6, g, max, &n, &err), MRT_OK);
    *checked = 0;
    for (int k = 0; k < n; k++) {
        mrt_verify_result v;
        mrt_verify_compare_mag(MRT_F64, g[k].diff, g[k].grad, g[k].mag,
                               g[k].checked, 1e-5, g[k].scale, &v);
        *checked += g[k].checked > 0;
        failed += !v.ok;
    }
    free(g);
    return failed;
}

START_TEST(finite_differences_catch_a_wrong_backward_gelu)
{
    mrt_spec *s = load_gpt2(1);
    int checked, broken = 0, failed = fd_failures(s, &checked);
    ck_assert_int_eq(failed, 0);
    ck_assert_int_ge(checked, s->train.nparams); /* every parameter */
    for (int i = 0; i < s->nops && !broken; i++) {
        mrt_spec_op *o = &s->op[i];
        if (o->phase == MRT_PHASE_BACKWARD && o->kind == MRT_OP_MAP &&
            o->fn == MRT_MAP_GELU_GRAD) {
            o->fn = MRT_MAP_COPY; /* the gradient as if gelu were x */
            broken = 1;
        }
    }
    ck_assert(broken);
    failed = fd_failures(s, &checked);
    ck_assert_int_ge(failed, 1);
    mrt_spec_destroy(s);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("magnitude");
    TCase *tc = tcase_create("reference");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, float32_noise_within_tolerance_and_wrong_signs_caught);
    tcase_add_test(tc, masked_entries_have_magnitude_zero);
    tcase_add_test(tc, finite_differences_catch_a_wrong_backward_gelu);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
