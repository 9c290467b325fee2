/*
 * local.h — what runtime/ computes on one rank without MPI: an input's
 * values (shard.c's mrt_shard_init), the unsharded reference
 * (reference.c) and the rule by which a result agrees with it
 * (verify.c).  No mpi.h: reference.c and verify.c are built where mpi.h
 * is refused (meson.build's runtime row), and the unit tests of the
 * rule need no MPI.  runtime.h includes it for the code that does call
 * MPI.
 */
#ifndef MRT_LOCAL_H
#define MRT_LOCAL_H

#include <stdint.h>

#include "layout.h"
#include "spec.h"

/* ---- shard.c ---- */
/* Fills buf with this rank's shard (layout l, rank coords) of input
 * tensor t.  A NULL coords and an unsplit layout give the full tensor. */
mrt_status mrt_shard_init(const mrt_spec *s, int t, const mrt_layout *l,
                          const mrt_mesh *m, const int64_t coords[], void *buf,
                          mrt_error *err);
/* ---- reference.c ---- */
/* Recomputes the whole spec unsharded on this rank, `steps` times (one
 * SGD step each with `train:`, the loss of each in losses[] when not
 * NULL); out[i] is a new full buffer for spec output i after the last,
 * mags[i] its magnitudes (reference.c: per element, the size of what was
 * summed into it).  Free both with mrt_reference_free. */
mrt_status mrt_reference_run(const mrt_spec *s, int64_t steps, double *losses,
                             void ***out, void ***mags, mrt_error *err);
void mrt_reference_free(const mrt_spec *s, void **outputs);
/* What reference_mag.c shares with it.  The reference holds a float
 * tensor whole in mrt_reference_dtype(s), row-major in its layout's dim
 * order: mrt_reference_count(s, t) elements, read and written as
 * doubles by mrt_reference_get and _set. */
int64_t mrt_reference_count(const mrt_spec *s, int t);
double mrt_reference_get(const mrt_spec *s, const void *buf, int64_t i);
void mrt_reference_set(const mrt_spec *s, void *buf, int64_t i, double x);
/* Op i of s on whole tensors: out = op(in0, in1) (in1 unused for an op
 * of one input), each buffer borrowed.  MRT_E_NOMEM when an einsum's
 * workspace cannot be had. */
mrt_status mrt_reference_op(const mrt_spec *s, int i, void *in0, void *in1,
                            void *out);
/* ---- reference_mag.c ---- */
/* m[t] = the magnitudes of input t (v[t] its values): |x|, or the
 * indices themselves for an int32 tensor. */
void mrt_reference_input_magnitude(const mrt_spec *s, int t, void **v,
                                   void **m);
/* m[out] = the magnitudes of op i's output, from its inputs' (m) and the
 * values of its inputs and output (v).  MRT_E_NOMEM without memory for
 * the temporaries. */
mrt_status mrt_reference_op_magnitude(const mrt_spec *s, int i, void **v,
                                      void **m);
/* ---- verify.c ---- */
/* The tolerance of --verify for s's outputs (loss 0) or its loss (1),
 * relative to the scale of each comparison, by the program's types and,
 * with a 16-bit type, the number of roundings in series behind the
 * value compared (`chain`: mrt_verify_chain): 1e-4 + 4 sqrt(chain) u;
 * verify.c says how it is derived. */
double mrt_verify_tolerance(const mrt_spec *s, int loss, int64_t chain);
/* The roundings in series behind tensor t after the run's steps: the
 * longest chain of ops from an input to t (a forward op, its backward
 * ops, the update: each rounds its result once), times the steps of
 * `train:` (each step's parameters carry the previous steps' errors),
 * plus the hops of a reduction over the mesh (log2 of its ranks,
 * rounded up).  depth is scratch of s->ntensors ints. */
int64_t mrt_verify_chain(const mrt_spec *s, int t, int *depth);

/* The type the reference computes and holds s's float tensors in:
 * float64 if any of s's types is float64, else float32 (a 16-bit
 * program's reference is float32). */
mrt_dtype mrt_reference_dtype(const mrt_spec *s);

/* One trained tensor's gradient against central differences of the
 * loss, at up to MRT_GRADCHECK_MAX elements: where the loss at x + h and
 * x - h is finite, the element's flat index, its central difference and
 * its gradient (`checked` of them); where it is not, no difference can be
 * taken (`unchecked` of them).  scale is mrt_verify_scale of the whole
 * gradient; mag[] each checked element's magnitude (reference.c). */
#define MRT_GRADCHECK_MAX 16
typedef struct mrt_gradcheck {
    int tensor;
    int checked, unchecked;
    int64_t index[MRT_GRADCHECK_MAX];
    double diff[MRT_GRADCHECK_MAX], grad[MRT_GRADCHECK_MAX];
    double mag[MRT_GRADCHECK_MAX];
    double scale;
} mrt_gradcheck;
/* Checks up to per_tensor (at most MRT_GRADCHECK_MAX) elements of each
 * parameter (and `grads:` input) of a `train:` spec, unsharded, before
 * any update. */
mrt_status mrt_reference_gradcheck(const mrt_spec *s, int per_tensor,
                                   mrt_gradcheck *out, int max_out, int *nout,
                                   mrt_error *err);

/* ---- verify.c ---- */
/* What mrt_verify_compare found. */
typedef struct mrt_verify_result {
    int64_t count;           /* elements compared */
    int64_t differ;          /* elements that disagree */
    int64_t nonfinite;       /* elements NaN or infinite alike in both */
    int64_t worst;           /* flat index of the largest error (the first of
                          equals); -1 when count is 0 */
    double value, reference; /* the two elements there */
    double error;            /* |value - reference| / scale there; INFINITY
                          when one is not finite and they disagree */
    double scale, tolerance;
    double element_scale; /* the scale at the worst element: scale, or
                             its larger magnitude */
    int ok;               /* differ == 0 */
} mrt_verify_result;

/* The largest |r[i]| over the finite elements of r, or 1 when none is
 * finite or that is 0. */
double mrt_verify_scale(mrt_dtype t, const void *r, int64_t n);
/* Compares x with the reference r, n elements of type t, element by
 * element: both NaN, or both the same infinity, agree; both finite agree
 * when |x - r| <= tol * scale; any other pair disagrees.  scale <= 0 (or
 * not finite) means mrt_verify_scale(t, r, n). */
void mrt_verify_compare(mrt_dtype t, const void *x, const void *r, int64_t n,
                        double tol, double scale, mrt_verify_result *out);
/* Integers (MRT_I32: ids, labels) agree only when equal: x against r,
 * n int32 elements (scale 1, tolerance 0). */
void mrt_verify_compare_index(const int32_t *x, const int32_t *r, int64_t n,
                              mrt_verify_result *out);
/* The same with the reference's magnitudes mag (n elements of type t, or
 * NULL for none): element i's scale is the larger of scale and mag[i]
 * when that is finite, so a sum that cancels is compared with the size
 * of its terms. */
void mrt_verify_compare_mag(mrt_dtype t, const void *x, const void *r,
                            const void *mag, int64_t n, double tol,
                            double scale, mrt_verify_result *out);

#endif
