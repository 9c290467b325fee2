/*
 * verify.c — the one rule by which --verify decides that a result agrees
 * with the unsharded reference.  Every check uses it: each output (the
 * gradients and updated parameters of a `train:` spec are outputs), each
 * step's loss, and the gradients against finite differences.
 *
 * The rule, element by element (x the result, r the reference):
 *   - both NaN, or both the same infinity: they agree;
 *   - both finite: they agree if |x - r| <= tol * scale;
 *   - anything else (NaN against a number, an infinity against a number
 *     or against the other infinity) is a disagreement whatever the
 *     tolerance.
 * scale is the largest |r| over the finite elements of the reference, or
 * 1 when there is none or it is 0 (an all-zero reference is compared
 * absolutely).  Non-finite reference elements take no part in the scale,
 * so an infinity cannot hide a mismatch elsewhere.  A caller may pass its
 * own scale (the finite differences use the whole gradient's).
 *
 * With the reference's magnitudes (reference.c: per element, the size of
 * the terms summed into it), element i is compared against the larger
 * of scale and its magnitude: an element that is zero in exact
 * arithmetic (a gradient that cancels) is rounding noise of the size of
 * its terms in both runs, and two noises differ by as much.  A
 * magnitude is never smaller than |r|, so the rule only widens where a
 * sum cancelled; a non-finite magnitude is ignored.
 *
 * The tolerances (mrt_verify_tolerance).  float64: 1e-10 for the outputs
 * and 1e-9 for the loss; float32: 1e-4, about 840 units in the last
 * place (2^-23): sums of thousands of terms in another order, and the
 * errors of a few ops in series.  A program with a 16-bit type (its
 * dtype, a `precision:` type or a tensor's own dtype) computes in float32 as well, but
 * rounds the result of every op to its 16-bit type (half a unit in the
 * last place: 2^-9 of it for bfloat16's 8 bits of mantissa, 2^-12 for
 * float16's 11) and the partial sums of every reduction at every hop
 * (comm.c); the reference keeps float32 throughout (reference.c).
 * Those roundings add along the program, each bounded by the magnitude
 * of its value, so the rule is float32's tolerance plus
 * MRT_VERIFY_ROUNDINGS (16) half-units of the narrowest 16-bit type:
 * 2^-5 for bfloat16 and 2^-8 for float16 -- room for the ops of a layer
 * in series, the hops of a reduction over a few ranks, and the drift of
 * parameters rounded after each of a few SGD steps (measured: 0.017 on
 * examples/mlp.yaml's gradients after 4 bfloat16 steps, against a
 * float32 reference that never rounds), and still below the error of a
 * wrong shard (a sign, a block in the wrong place, a sum counted twice:
 * an error of the size of the value).  A maximum whose arguments tie in
 * 16 bits (reduce_max) may pick another element than the reference, and
 * its gradient then differs wholly: that is a property of the type.
 *
 * No MPI here: the comparison is pure, and unit-tested on crafted arrays
 * (tests/unit/test_verify.c).
 */
#include <math.h>
#include <string.h>

#include "local.h"

static double at(mrt_dtype t, const void *a, int64_t i)
{
    return t == MRT_F64 ? ((const double *)a)[i] : ((const float *)a)[i];
}

/* Half a unit in the last place of a 16-bit type, relative. */
static double half_unit(mrt_dtype t)
{
    return t == MRT_BF16 ? 0x1p-9 : t == MRT_F16 ? 0x1p-12 : 0;
}

double mrt_verify_tolerance(const mrt_spec *s, int loss)
{
    const mrt_precision *q = &s->precision;
    mrt_dtype all[] = {s->dtype, q->params, q->compute, q->grads, q->optimizer};
    double u = 0;
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        if (half_unit(all[k]) > u)
            u = half_unit(all[k]);
    for (int t = 0; t < s->ntensors; t++) /* a 16-bit tensor of its own */
        if (half_unit(mrt_spec_tensor_dtype(s, t)) > u)
            u = half_unit(mrt_spec_tensor_dtype(s, t));
    if (mrt_reference_dtype(s) == MRT_F64 && u == 0)
        return loss ? 1e-9 : 1e-10;
    return 1e-4 + MRT_VERIFY_ROUNDINGS * u;
}

double mrt_verify_scale(mrt_dtype t, const void *r, int64_t n)
{
    double scale = 0;
    for (int64_t i = 0; i < n; i++) {
        double b = fabs(at(t, r, i));
        if (isfinite(b) && b > scale)
            scale = b;
    }
    return scale > 0 ? scale : 1;
}

/* |x - r| / scale, 0 for a non-finite pair that agrees, INFINITY for one
 * that does not; *alike is set when both are non-finite and agree. */
static double element_error(double x, double r, double scale, int *alike)
{
    *alike = 0;
    if (isfinite(x) && isfinite(r))
        return fabs(x - r) / scale;
    if ((isnan(x) && isnan(r)) || (isinf(x) && isinf(r) && x == r)) {
        *alike = 1;
        return 0;
    }
    return INFINITY;
}

void mrt_verify_compare_mag(mrt_dtype t, const void *x, const void *r,
                            const void *mag, int64_t n, double tol,
                            double scale, mrt_verify_result *out)
{
    *out = (mrt_verify_result){.count = n, .worst = -1, .tolerance = tol};
    out->scale = scale > 0 && isfinite(scale) ? scale
                                              : mrt_verify_scale(t, r, n);
    out->element_scale = out->scale;
    out->error = 0;
    for (int64_t i = 0; i < n; i++) {
        double a = at(t, x, i), b = at(t, r, i);
        double m = mag ? at(t, mag, i) : 0;
        double si = isfinite(m) && m > out->scale ? m : out->scale;
        int alike;
        double e = element_error(a, b, si, &alike);
        out->nonfinite += alike;
        out->differ += !(e <= tol);
        if (out->worst < 0 || e > out->error) {
            out->worst = i;
            out->error = e;
            out->value = a;
            out->reference = b;
            out->element_scale = si;
        }
    }
    out->ok = out->differ == 0;
}

void mrt_verify_compare(mrt_dtype t, const void *x, const void *r, int64_t n,
                        double tol, double scale, mrt_verify_result *out)
{
    mrt_verify_compare_mag(t, x, r, NULL, n, tol, scale, out);
}

void mrt_verify_compare_index(const int32_t *x, const int32_t *r, int64_t n,
                              mrt_verify_result *out)
{
    memset(out, 0, sizeof *out);
    out->count = n;
    out->worst = n ? 0 : -1;
    out->scale = out->element_scale = 1;
    for (int64_t i = 0; i < n; i++)
        if (x[i] != r[i] && !out->differ++)
            out->worst = i; /* the first that differs */
    if (n) {
        out->value = x[out->worst];
        out->reference = r[out->worst];
        out->error = out->value == out->reference ? 0 : 1;
    }
    out->ok = out->differ == 0;
}
