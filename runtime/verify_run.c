/*
 * verify_run.c — `meshrt run --verify`: after the runs, rank 0 recomputes
 * the spec unsharded (reference.c) and checks, each by the one rule of
 * verify.c:
 *   - every step's loss against the reference's (a `train:` spec);
 *   - the unsharded gradients against central finite differences
 *     (float64 only);
 *   - every output, gathered from the shards, against the reference's.
 * Each check is one line of the report (or one JSON object): the worst
 * element's index (flat, and by dim names), both values and the error,
 * how many elements differ and how many are NaN or infinite in both, and
 * "ok" or "FAILED".  Any failed check makes every rank return
 * MRT_E_VERIFY.
 *
 * JSON has no NaN or infinity: such a value is written as null, as
 * every JSON number of meshrt is (mrt_json_num, io/output.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"
#include "output.h"
#include "runtime.h"

#define FD_TOLERANCE 1e-5
#define FD_PER_TENSOR 6

static void json_number(FILE *f, double v)
{
    fputs(MRT_JSON_NUM("%.10g", v), f);
}

/* "name[b=1, f=3] (element 9)" for element flat of a tensor of layout l
 * (storage order, row-major); just "name" for a scalar. */
static const char *where(const mrt_spec *s, const char *name,
                         const mrt_layout *l, int64_t flat, char *buf,
                         size_t size)
{
    int64_t idx[MRT_MAX_DIMS], rest = flat;
    for (int i = l->ndims - 1; i >= 0; i--) {
        idx[i] = rest % l->size[i];
        rest /= l->size[i];
    }
    size_t n = (size_t)snprintf(buf, size, "%s", name);
    for (int i = 0; i < l->ndims && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%s=%lld", i ? ", " : "[",
                              s->dim_name[l->dim[i]], (long long)idx[i]);
    if (l->ndims && n < size)
        snprintf(buf + n, size - n, "] (element %lld)", (long long)flat);
    return buf;
}

/* A value as the report prints it, "nan" whatever its sign bit. */
static const char *num(double v, int digits, char buf[32])
{
    if (isnan(v))
        snprintf(buf, 32, "nan");
    else
        snprintf(buf, 32, "%.*g", digits, v);
    return buf;
}

static void json_where(FILE *f, const mrt_spec *s, const mrt_layout *l,
                       int64_t flat)
{
    int64_t idx[MRT_MAX_DIMS];
    fprintf(f, "\"index\": %lld, \"at\": {", (long long)flat);
    for (int i = l->ndims - 1; i >= 0; i--) {
        idx[i] = flat % l->size[i];
        flat /= l->size[i];
    }
    for (int i = 0; i < l->ndims; i++)
        fprintf(f, "%s\"%s\": %lld", i ? ", " : "", s->dim_name[l->dim[i]],
                (long long)idx[i]);
    fputc('}', f);
}

/* The part of a check's line after its name: the worst element, the
 * counts, the verdict.  x_is and r_is name the two values. */
static void text_result(FILE *f, const mrt_verify_result *r, const char *at,
                        const char *x_is, const char *r_is,
                        const char *error_is, const char *error_of)
{
    if (r->count == 0) {
        fprintf(f, "no elements: ok\n");
        return;
    }
    char x[32], ref[32];
    fprintf(f, "%s %.3g%s at %s: %s%s, %s %s (", error_is, r->error, error_of,
            at, x_is, num(r->value, 10, x), r_is, num(r->reference, 10, ref));
    if (isinf(r->error) && !(isfinite(r->value) && isfinite(r->reference)))
        fprintf(f, "a NaN or infinity not matched; ");
    fprintf(f, "tolerance %.0e of %.3g%s); %lld element%s", r->tolerance,
            r->element_scale,
            r->element_scale > r->scale ? ", the magnitude summed into it" : "",
            (long long)r->count, r->count == 1 ? "" : "s");
    if (r->differ)
        fprintf(f, ", %lld differ", (long long)r->differ);
    if (r->nonfinite)
        fprintf(f, ", %lld NaN or infinite in both", (long long)r->nonfinite);
    fprintf(f, ": %s\n", r->ok ? "ok" : "FAILED");
}

static void json_result(FILE *f, const mrt_spec *s, const mrt_layout *l,
                        const mrt_verify_result *r)
{
    fprintf(f,
            "\"elements\": %lld, \"differ\": %lld, \"nonfinite\": %lld, "
            "\"max_rel_error\": ",
            (long long)r->count, (long long)r->differ, (long long)r->nonfinite);
    json_number(f, r->error);
    fputs(", \"worst\": ", f);
    if (r->worst < 0) {
        fputs("null", f);
    } else {
        fputc('{', f);
        json_where(f, s, l, r->worst);
        fputs(", \"value\": ", f);
        json_number(f, r->value);
        fputs(", \"reference\": ", f);
        json_number(f, r->reference);
        fputc('}', f);
    }
    fputs(", \"scale\": ", f);
    json_number(f, r->scale);
    fputs(", \"element_scale\": ", f);
    json_number(f, r->element_scale);
    fprintf(f, ", \"tolerance\": %.0e, \"ok\": %s}", r->tolerance,
            r->ok ? "true" : "false");
}

/* Each step's loss against the reference's (rank 0). */
static int verify_losses(const mrt_spec *s, const double *loss,
                         const double *ref, int runs, int json, FILE *f)
{
    int failed = 0;
    int *depth = malloc(((size_t)s->ntensors + 1) * sizeof *depth);
    double tol = mrt_verify_tolerance(
        s, 1, depth ? mrt_verify_chain(s, s->train.loss, depth) : 1);
    free(depth);
    if (json)
        fputs(", \"verify_losses\": [", f);
    for (int k = 0; k < runs; k++) {
        mrt_verify_result r;
        mrt_verify_compare(MRT_F64, &loss[k], &ref[k], 1, tol, 0, &r);
        failed += !r.ok;
        if (json) {
            fprintf(f, "%s{\"step\": %d, \"loss\": ", k ? ", " : "", k + 1);
            json_number(f, loss[k]);
            fputs(", \"reference\": ", f);
            json_number(f, ref[k]);
            fputs(", \"rel_error\": ", f);
            json_number(f, r.error);
            fprintf(f, ", \"tolerance\": %.0e, \"ok\": %s}", tol,
                    r.ok ? "true" : "false");
        } else {
            char x[32], y[32];
            fprintf(f,
                    "verify loss of step %d: %s, unsharded %s "
                    "(relative error %.2g%s, tolerance %.0e): %s\n",
                    k + 1, num(loss[k], 8, x), num(ref[k], 8, y), r.error,
                    isinf(r.error) && !(isfinite(loss[k]) && isfinite(ref[k]))
                        ? ", a NaN or infinity not matched"
                        : "",
                    tol, r.ok ? "ok" : "FAILED");
        }
    }
    if (json)
        fputc(']', f);
    return failed;
}

/* One tensor's finite differences (rank 0). */
static int report_gradcheck(const mrt_spec *s, const mrt_gradcheck *g,
                            int first, int json, FILE *f)
{
    const mrt_spec_tensor *t = &s->tensor[g->tensor];
    mrt_verify_result r;
    mrt_verify_compare_mag(MRT_F64, g->diff, g->grad, g->mag, g->checked,
                           FD_TOLERANCE, g->scale, &r);
    if (r.worst >= 0)
        r.worst = g->index[r.worst];
    if (json) {
        fprintf(f, "%s{\"tensor\": \"%s\", \"unchecked\": %d, ",
                first ? "" : ", ", t->name, g->unchecked);
        json_result(f, s, &t->layout, &r);
        return !r.ok;
    }
    fprintf(f, "finite differences grad:%s: ", t->name);
    if (g->checked == 0) {
        fprintf(f,
                "not checked: the loss is not finite at x + h or x - h "
                "for any of the %d elements tried\n",
                g->unchecked);
        return 0;
    }
    char at[512];
    where(s, t->name, &t->layout, r.worst, at, sizeof at);
    text_result(f, &r, at, "difference ", "gradient", "max error",
                " of the largest gradient");
    if (g->unchecked)
        fprintf(f,
                "  (%d more not checked: the loss is not finite at "
                "x + h or x - h)\n",
                g->unchecked);
    return !r.ok;
}

/* The unsharded gradients against central differences (rank 0; float64
 * only: float32 differences are too coarse to check anything). */
static mrt_status verify_gradients(const mrt_spec *s, int json, FILE *f,
                                   int *failed, mrt_error *err)
{
    int n = 0, max = s->train.nparams + s->train.nextra;
    if (s->dtype != MRT_F64) {
        if (!json)
            fprintf(f, "finite differences: not checked for float32 "
                       "(use dtype: float64)\n");
        return MRT_OK;
    }
    mrt_gradcheck *g = calloc((size_t)max + 1, sizeof *g);
    if (!g)
        return mrt_error_set(err, MRT_E_NOMEM, s->path, (mrt_mark){0},
                             "out of memory in the gradient check");
    mrt_status st = mrt_reference_gradcheck(s, FD_PER_TENSOR, g, max, &n, err);
    if (st == MRT_OK && json)
        fputs(", \"finite_differences\": [", f);
    for (int k = 0; st == MRT_OK && k < n; k++)
        *failed += report_gradcheck(s, &g[k], k == 0, json, f);
    if (st == MRT_OK && json)
        fputc(']', f);
    free(g);
    return st;
}

static int64_t global_count(const mrt_layout *l)
{
    int64_t n = 1;
    for (int i = 0; i < l->ndims; i++)
        n *= l->size[i];
    return n;
}

/* The roundings in series behind tensor t (mrt_verify_chain). */
static int64_t chain_of(const mrt_spec *s, int t)
{
    int *depth = malloc(((size_t)s->ntensors + 1) * sizeof *depth);
    int64_t chain = depth ? mrt_verify_chain(s, t, depth) : 1;
    free(depth);
    return chain;
}

/* Output k, gathered in full, against the reference's (rank 0). */
static int verify_output(const mrt_spec *s, const mrt_plan *p, int k,
                         const void *full, const void *ref, const void *mag,
                         int json, FILE *f)
{
    int t = p->output[k];
    const mrt_layout *l = &p->value[p->tensor_value[t]].layout;
    mrt_verify_result r;
    mrt_dtype vt = p->value[p->tensor_value[t]].dtype,
              rt = mrt_reference_dtype(s);
    void *wide = NULL; /* a 16-bit (or float32) output in the reference's
                          type, exactly */
    if (vt != MRT_I32 && vt != rt &&
        (wide = malloc((size_t)global_count(l) * (size_t)mrt_dtype_size(rt) +
                       1)))
        mrt_kernel_convert(rt, wide, vt, full, global_count(l));
    if (vt == MRT_I32) /* ids, labels */
        mrt_verify_compare_index(full, ref, global_count(l), &r);
    else
        mrt_verify_compare_mag(
            rt, wide ? wide : full, ref, mag, global_count(l),
            mrt_verify_tolerance(s, 0, chain_of(s, t)), 0, &r);
    free(wide);
    if (json) {
        fprintf(f, "%s{\"tensor\": \"%s\", ", k ? ", " : "", p->tensor_name[t]);
        json_result(f, s, l, &r);
    } else {
        char at[512];
        where(s, p->tensor_name[t], l, r.worst < 0 ? 0 : r.worst, at,
              sizeof at);
        fprintf(f, "verify %s: ", p->tensor_name[t]);
        text_result(f, &r, at, "", "unsharded", "max relative error", "");
    }
    return !r.ok;
}

mrt_status mrt_run_verify(const mrt_spec *s, mrt_exec *e,
                          const mrt_run_options *opt, const double *losses,
                          int runs, FILE *f, mrt_error *err)
{
    const mrt_plan *p = e->plan;
    int root = e->comm->rank == 0;
    void **ref = NULL, **mag = NULL;
    int training = s->train.loss >= 0;
    double *ref_losses = calloc((size_t)runs + 1, sizeof *ref_losses);
    mrt_status st = !ref_losses ? MRT_E_NOMEM
                    : root      ? mrt_reference_run(s, training ? runs : 1,
                                                    ref_losses, &ref, &mag, err)
                                : MRT_OK;
    if (st == MRT_E_NOMEM)
        mrt_error_set(err, st, s->path, (mrt_mark){0}, "out of memory");
    if ((st = mrt_comm_agree(e->comm->world, st, err)) != MRT_OK) {
        free(ref_losses);
        return st;
    }
    int failed = 0;
    if (root && training)
        failed += verify_losses(s, losses, ref_losses, runs, opt->json, f);
    free(ref_losses);
    if (training)
        st = mrt_comm_agree(
            e->comm->world,
            root ? verify_gradients(s, opt->json, f, &failed, err) : MRT_OK,
            err);
    if (root && opt->json)
        fputs(", \"verify\": [", f);
    for (int k = 0; k < p->noutputs && st == MRT_OK; k++) {
        void *full = NULL;
        st = mrt_comm_agree(
            e->comm->world,
            mrt_shard_gather(e, p->tensor_value[p->output[k]], &full, err),
            err);
        if (st == MRT_OK && root)
            failed += verify_output(s, p, k, full, ref[k], mag[k], opt->json,
                                    f);
        free(full);
    }
    if (root && opt->json)
        fputc(']', f);
    mrt_reference_free(s, ref);
    mrt_reference_free(s, mag);
    if (st != MRT_OK)
        return st;
    MPI_Bcast(&failed, 1, MPI_INT, 0, e->comm->world);
    if (failed)
        return mrt_error_set(err, MRT_E_VERIFY, s->path, (mrt_mark){0},
                             "%d check%s failed against the unsharded "
                             "reference",
                             failed, failed == 1 ? "" : "s");
    return MRT_OK;
}
