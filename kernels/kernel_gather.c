/*
 * kernel_gather.c — the local kernels of an embedding: the masked lookup
 * (gather), its gradient (scatter_add), and one_hot of int32 labels.
 *
 * A rank holds the block [voff, voff + V) of the table's vocab dim.  The
 * lookup copies, for each index of the ids, the table's row at that id
 * when it falls in the block and writes zeros otherwise; summed over the
 * ranks of the vocab's axes (the all-reduce or reduce-scatter the planner
 * puts after it), every row appears exactly once.  An id outside
 * [0, vocab) is in no block: its row is zeros, as the one-hot einsum
 * gives.  The gradient adds each row of g into the table at its id, the
 * same test deciding which rank adds it.
 *
 * Ids are int32, or floats holding integers (rounded to the nearest).
 * Operands are dense row-major views with dims in any order: every walk
 * goes over one view's elements with, for each of its dims, the stride of
 * that dim in the others (0 where a view lacks it).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernel.h"

/* st[i]: the stride in `in` of dim i of `over` (0 if `in` lacks it). */
static void strides_in(const mrt_kview *over, const mrt_kview *in, int64_t st[])
{
    int64_t own[MRT_MAX_DIMS], s = 1;
    for (int j = in->ndims - 1; j >= 0; j--) {
        own[j] = s;
        s *= in->ext[j];
    }
    for (int i = 0; i < over->ndims; i++) {
        st[i] = 0;
        for (int j = 0; j < in->ndims; j++)
            if (in->dim[j] == over->dim[i])
                st[i] = own[j];
    }
}

static int64_t count_of(const mrt_kview *v)
{
    int64_t n = 1;
    for (int i = 0; i < v->ndims; i++)
        n *= v->ext[i];
    return n;
}

/* Element i of ids of type t, as an index. */
static int64_t id_at(mrt_dtype t, const void *ids, int64_t i)
{
    double x;
    if (t == MRT_I32)
        return ((const int32_t *)ids)[i];
    x = t == MRT_F64 ? ((const double *)ids)[i] : ((const float *)ids)[i];
    return x == x && fabs(x) < 9e18 ? (int64_t)llround(x) : -1;
}

/* A walk over the elements of a view, two strides followed along. */
typedef struct walk {
    int n;
    const int64_t *ext;
    int64_t idx[MRT_MAX_DIMS], s1[MRT_MAX_DIMS], s2[MRT_MAX_DIMS];
    int64_t o1, o2; /* the offsets of the current element */
} walk;

static void walk_next(walk *w)
{
    for (int i = w->n - 1; i >= 0; i--) {
        w->o1 += w->s1[i];
        w->o2 += w->s2[i];
        if (++w->idx[i] < w->ext[i])
            return;
        w->o1 -= w->s1[i] * w->ext[i];
        w->o2 -= w->s2[i] * w->ext[i];
        w->idx[i] = 0;
    }
}

static void walk_init(walk *w, const mrt_kview *over, const mrt_kview *a,
                      const mrt_kview *b)
{
    memset(w, 0, sizeof *w);
    w->n = over->ndims;
    w->ext = over->ext;
    strides_in(over, a, w->s1);
    if (b)
        strides_in(over, b, w->s2);
}

/* Rows copied whole: when the ids stay the same along the walked view's
 * last dim and the table is contiguous along it (d last in both, the
 * usual case), the walk goes over the other dims and each step moves a
 * run of that dim's extent.  Returns the run (1: element by element). */
static int64_t whole_rows(walk *w)
{
    if (w->n == 0 || w->s1[w->n - 1] != 0 || w->s2[w->n - 1] != 1)
        return 1;
    w->n--;
    return w->ext[w->n];
}

/* The stride of dim index d of v (row-major). */
static int64_t stride_of(const mrt_kview *v, int d)
{
    int64_t s = 1;
    for (int j = v->ndims - 1; j > d; j--)
        s *= v->ext[j];
    return s;
}

void mrt_kernel_gather(mrt_dtype t, const mrt_kview *table, int vdim,
                       int64_t voff, mrt_dtype idt, const mrt_kview *ids,
                       const mrt_kview *out)
{
    int64_t n = count_of(out), nv = table->ext[vdim];
    int64_t sv = stride_of(table, vdim);
    size_t es = (size_t)mrt_dtype_size(t);
    char *o = out->data;
    const char *tb = table->data;
    walk w;
    walk_init(&w, out, ids, table);
    int64_t run = whole_rows(&w);
    size_t bytes = (size_t)run * es;
    for (int64_t e = 0; e < n; e += run, walk_next(&w)) {
        int64_t r = id_at(idt, ids->data, w.o1) - voff;
        if (r >= 0 && r < nv)
            memcpy(o + (size_t)e * es, tb + (size_t)(w.o2 + r * sv) * es,
                   bytes);
        else
            memset(o + (size_t)e * es, 0, bytes);
    }
}

void mrt_kernel_scatter_add(mrt_dtype t, mrt_dtype idt, const mrt_kview *ids,
                            const mrt_kview *g, int vdim, int64_t voff,
                            const mrt_kview *out)
{
    int64_t n = count_of(g), nv = out->ext[vdim];
    int64_t sv = stride_of(out, vdim);
    memset(out->data, 0, (size_t)count_of(out) * (size_t)mrt_dtype_size(t));
    walk w;
    walk_init(&w, g, ids, out);
    int64_t run = whole_rows(&w);
    for (int64_t e = 0; e < n; e += run, walk_next(&w)) {
        int64_t r = id_at(idt, ids->data, w.o1) - voff;
        if (r < 0 || r >= nv)
            continue;
        int64_t at = w.o2 + r * sv;
        for (int64_t j = 0; j < run; j++)
            if (t == MRT_F64)
                ((double *)out->data)[at + j] +=
                    ((const double *)g->data)[e + j];
            else
                ((float *)out->data)[at + j] += ((const float *)g->data)[e + j];
    }
}

void mrt_kernel_one_hot_index(mrt_dtype t, const mrt_kview *ids,
                              const mrt_kview *out, int hot, int64_t off)
{
    int64_t n = count_of(out);
    walk w;
    walk_init(&w, out, ids, NULL);
    for (int64_t e = 0; e < n; e++, walk_next(&w)) {
        int on = id_at(MRT_I32, ids->data, w.o1) == off + w.idx[hot];
        if (t == MRT_F64)
            ((double *)out->data)[e] = on;
        else
            ((float *)out->data)[e] = (float)on;
    }
}
