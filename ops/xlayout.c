/*
 * xlayout.c — the execution layout of an einsum (mrt_xlayout): for each
 * dim of the op, the mesh axes that split it while the local kernel runs.
 * Its dims, lookup and printed form, and the enumeration of every valid
 * execution layout that cheapest.c costs: each mesh axis (of size > 1)
 * splits at most one dim or none, a dim split over several axes takes
 * them in any order, and every block of a split holds something
 * (layout/split.h): uneven splits are candidates like even ones, since
 * the kernels, collectives and costs all work on each rank's own block,
 * so a vocabulary of 50,257 over 4 ranks is planned as 50,256 is.  The
 * enumeration starts from the unsplit layout.
 */
#include <stdio.h>
#include <string.h>

#include "planning.h"
#include "split.h"

static void add_dim(mrt_xlayout *e, int dim, int64_t size)
{
    if (mrt_xlayout_find(e, dim) >= 0)
        return;
    e->dim[e->ndims] = dim;
    e->size[e->ndims] = size;
    e->naxes[e->ndims++] = 0;
}

void mrt_xlayout_init(const mrt_plan *p, const mrt_spec *s, int op,
                      mrt_xlayout *e)
{
    const mrt_spec_op *o = &s->op[op];
    const mrt_layout *out = &s->tensor[o->out].layout;
    memset(e, 0, sizeof *e);
    for (int i = 0; i < out->ndims; i++)
        add_dim(e, out->dim[i], out->size[i]);
    for (int k = 0; k < o->nin; k++) {
        const mrt_layout *in = &p->value[p->tensor_value[o->in[k]]].layout;
        for (int i = 0; i < in->ndims; i++)
            add_dim(e, in->dim[i], in->size[i]);
    }
}

int mrt_xlayout_find(const mrt_xlayout *e, int dim)
{
    for (int i = 0; i < e->ndims; i++)
        if (e->dim[i] == dim)
            return i;
    return -1;
}

char *mrt_xlayout_str(const mrt_plan *p, const mrt_xlayout *e, char *buf,
                      int size)
{
    int n = 0;
    buf[0] = '\0';
    for (int i = 0; i < e->ndims && n < size; i++) {
        if (!e->naxes[i])
            continue;
        n += snprintf(buf + n, (size_t)(size - n), "%s%s", n ? " " : "",
                      p->dim_names[e->dim[i]]);
        for (int j = 0; j < e->naxes[i] && n < size; j++)
            n += snprintf(buf + n, (size_t)(size - n), "%c%s", j ? '+' : '/',
                          p->mesh.name[e->axes[i][j]]);
    }
    if (!n)
        snprintf(buf, (size_t)size, "(all replicated)");
    return buf;
}

/* ---- enumeration ---- */

typedef struct enumerator {
    const mrt_plan *p;
    mrt_xlayout cur;
    int axes[MRT_MAX_AXES], naxes; /* the axes of size > 1 */
    int (*visit)(void *, const mrt_xlayout *);
    void *ctx;
} enumerator;

/* 1 if every block of every split dim of e holds something. */
static int splits_ok(const enumerator *en, const mrt_xlayout *e)
{
    for (int i = 0; i < e->ndims; i++) {
        int64_t parts = 1;
        for (int j = 0; j < e->naxes[i]; j++)
            parts *= en->p->mesh.size[e->axes[i][j]];
        if (!mrt_split_ok(e->size[i], parts))
            return 0;
    }
    return 1;
}

/* Visits every order of the axes within each dim, from dim i on. */
static int permute_dims(enumerator *en, int i)
{
    mrt_xlayout *e = &en->cur;
    if (i == e->ndims)
        return en->visit(en->ctx, e);
    int n = e->naxes[i];
    if (n < 2)
        return permute_dims(en, i + 1);
    /* Heap's algorithm over e->axes[i][0..n), restored afterwards. */
    int c[MRT_MAX_AXES] = {0}, saved[MRT_MAX_AXES], rc;
    memcpy(saved, e->axes[i], sizeof saved);
    if ((rc = permute_dims(en, i + 1)))
        goto out;
    for (int k = 1; k < n;) {
        if (c[k] < k) {
            int j = k % 2 ? c[k] : 0, t = e->axes[i][j];
            e->axes[i][j] = e->axes[i][k];
            e->axes[i][k] = t;
            if ((rc = permute_dims(en, i + 1)))
                goto out;
            c[k]++;
            k = 1;
        } else {
            c[k++] = 0;
        }
    }
out:
    memcpy(e->axes[i], saved, sizeof saved);
    return rc;
}

/* Assigns axis number k (of en->axes) to no dim or to each dim in turn. */
static int assign(enumerator *en, int k)
{
    mrt_xlayout *e = &en->cur;
    if (k == en->naxes)
        return splits_ok(en, e) ? permute_dims(en, 0) : 0;
    int rc = assign(en, k + 1);
    for (int i = 0; i < e->ndims && !rc; i++) {
        e->axes[i][e->naxes[i]++] = en->axes[k];
        rc = assign(en, k + 1);
        e->naxes[i]--;
    }
    return rc;
}

int mrt_xlayout_enumerate(const mrt_plan *p, const mrt_xlayout *dims,
                          int (*visit)(void *ctx, const mrt_xlayout *e),
                          void *ctx)
{
    enumerator en = {.p = p, .cur = *dims, .visit = visit, .ctx = ctx};
    for (int i = 0; i < en.cur.ndims; i++)
        en.cur.naxes[i] = 0;
    for (int a = 0; a < p->mesh.naxes; a++)
        if (p->mesh.size[a] > 1 && !(p->pipe.stages > 1 && a == p->pipe.axis))
            en.axes[en.naxes++] = a; /* (the pipe axis splits no dim) */
    return assign(&en, 0);
}
