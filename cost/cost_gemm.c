/*
 * cost_gemm.c — the time of a local product C (M x N) = A (M x K) B
 * (K x N) from the profile's `gemm:` rows (profile_rows.c), as BLIS runs
 * it on this machine.
 *
 * A cube's rate (an s x s x s product) is interpolated in log s between
 * the rows of its type and form.  A product with one short side is not
 * a cube of its volume: BLIS packs B once per product and A once per
 * NC columns, and writes C once per KC of K, so what the packing and
 * the writes cost over the flops grows as 1/M, 1/N and 1/K, each at its
 * own rate.  Measured here (docs/calibration.md, round I), 64 x 1024 x
 * 1024 ran at 57-75 GFLOP/s, 1024 x 64 x 1024 at 111-130 and 1024 x
 * 1024 x 64 at 165-177, where the cube of the same volume runs at 175.
 * With `thin:` rows (`meshrt calibrate` writes them: the short side of
 * 16 to 256, the other two of 1024), a product's rate is the cube's of
 * its volume, or the thin rows' of its shortest side at that side's
 * length when that is slower (their cost over the flops does not depend
 * on the other two sides to first order).  Without them, the rule of
 * profiles written before: a cube of the volume unless a thin side
 * holds it back, at twice that side.
 *
 * All of that is for a shape the profile has not timed: a shape with a
 * `products:` row (meshrt validate times those its plans run) is priced
 * at its own rate.  BLIS's rate is no smooth function of the sides:
 * below its small-matrix thresholds it takes an unpacked path whose
 * rate moves with the strides (profile.h), which no interpolation
 * between rows of other shapes finds.
 */
#include <math.h>

#include "cost.h"

/* Rows [lo, lo + n) of type t, thin side `thin` and form f, sorted by
 * n (profile_rows.c keeps them so); n = 0 when there are none. */
static int rows_of(const mrt_profile *p, int t, int thin, int f, int *n)
{
    int lo = 0;
    *n = 0;
    for (int i = 0; i < p->ngemm; i++) {
        const mrt_gemm_row *r = &p->gemm[i];
        if (r->dtype == t && r->thin == thin && r->form == f && !(*n)++)
            lo = i;
    }
    return lo;
}

/* The rate of rows [lo, lo + n) at size s, interpolated in log s
 * (held at the ends). */
static double rate_along(const mrt_gemm_row *r, int n, double s)
{
    if (s <= (double)r[0].n)
        return r[0].flops;
    if (s >= (double)r[n - 1].n)
        return r[n - 1].flops;
    int i = 1;
    while (s > (double)r[i].n)
        i++;
    double x0 = log((double)r[i - 1].n), x1 = log((double)r[i].n);
    return r[i - 1].flops +
           (r[i].flops - r[i - 1].flops) * (log(s) - x0) / (x1 - x0);
}

/* The GEMM rate in type t (MRT_F32 or MRT_F64) of an s x s x s product
 * of form f; a form the rows lack takes those of nn; -1 when there are
 * no cube rows of type t. */
static double cube_rate(const mrt_profile *p, int t, int f, double s)
{
    int n, lo = rows_of(p, t, MRT_GEMM_CUBE, f, &n);
    if (n)
        return rate_along(p->gemm + lo, n, s);
    if (f != MRT_GEMM_NN)
        return cube_rate(p, t, MRT_GEMM_NN, s);
    for (int i = 0; i < p->ngemm; i++) /* only other forms: the first's */
        if (p->gemm[i].dtype == t && p->gemm[i].thin == MRT_GEMM_CUBE)
            return p->gemm[i].flops;
    return -1;
}

/* The rate in type t of a product whose side `thin` is the shortest, of
 * length s, in form f: the thin rows of that form, else those of nn
 * times the form's cost on a cube of that length; -1 when the profile
 * has no thin rows of that side and type. */
static double thin_rate(const mrt_profile *p, int t, int thin, int f, double s)
{
    int n, lo = rows_of(p, t, thin, f, &n);
    if (n)
        return rate_along(p->gemm + lo, n, s);
    lo = rows_of(p, t, thin, MRT_GEMM_NN, &n);
    if (!n)
        return -1;
    double nn = cube_rate(p, t, MRT_GEMM_NN, s), form = cube_rate(p, t, f, s);
    return rate_along(p->gemm + lo, n, s) * (nn > 0 ? form / nn : 1);
}

/* The rate in type t of an m x n x k product of form f from the rows of
 * type t; -1 when there are none. */
static double shape_rate(const mrt_profile *p, int t, int f, double m, double n,
                         double k)
{
    double shortest = fmin(m, fmin(n, k)), volume = cbrt(m * n * k);
    int side = shortest == m   ? MRT_GEMM_THIN_M
               : shortest == n ? MRT_GEMM_THIN_N
                               : MRT_GEMM_THIN_K;
    double thin = thin_rate(p, t, side, f, shortest);
    if (thin < 0) /* the rule before thin rows */
        return cube_rate(p, t, f, fmin(volume, 2 * shortest));
    double cube = cube_rate(p, t, f, volume);
    return cube < 0 ? thin : fmin(cube, thin);
}

double mrt_cost_gemm_form(const mrt_profile *p, mrt_dtype t, double flops,
                          double m, double n, double k, mrt_gemm_form form)
{
    t = mrt_dtype_compute(t); /* a 16-bit GEMM runs as float32's */
    const mrt_product_row *own = m >= 1 && n >= 1 && k >= 1 && m < 0x1p62 &&
                                         n < 0x1p62 && k < 0x1p62
                                     ? mrt_profile_product(
                                           p, t, (int)form, (int64_t)m,
                                           (int64_t)n, (int64_t)k)
                                     : NULL;
    if (own)
        return flops / own->flops;
    double rate = p->gemm_flops[t];
    if (p->ngemm && m >= 1 && n >= 1 && k >= 1) {
        /* Float64's own rows when the profile has them, as they are:
         * like float32's they are rates measured in their type, the
         * peak (kernel: gflops_float64) their largest nn row, so the
         * peak is already in them (scaling them by it again would count
         * it twice).  Without them, float32's curve times the peaks'
         * ratio: but dgemm is not sgemm scaled (measured here 0.9-1.1
         * of it up to n = 64, 0.5-0.6 at 512), and the ratio of two
         * peaks, one product each, moves with the load. */
        double r = t == MRT_F64 ? shape_rate(p, MRT_F64, (int)form, m, n, k)
                                : -1;
        if (r < 0)
            r = shape_rate(p, MRT_F32, (int)form, m, n, k) * p->gemm_flops[t] /
                p->gemm_flops[MRT_F32];
        if (r > 0)
            rate = r;
    }
    return flops / rate;
}

double mrt_cost_gemm_cube(const mrt_profile *p, mrt_dtype t, double s)
{
    return cube_rate(p, mrt_dtype_compute(t) == MRT_F64 ? MRT_F64 : MRT_F32,
                     MRT_GEMM_NN, s);
}

double mrt_cost_gemm(const mrt_profile *p, mrt_dtype t, double flops, double m,
                     double n, double k)
{
    return mrt_cost_gemm_form(p, t, flops, m, n, k, MRT_GEMM_NN);
}
