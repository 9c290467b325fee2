/*
 * sweep.c — meshrt.h's mrt_sweep (`meshrt compare --sweep DIM=N,N,...`):
 * how the cost of each partitioning grows with one dim.  The spec is
 * loaded once per size (the dim set on top of the caller's other dim
 * and mesh overrides, so a sweep needs no copies of the spec) and
 * compared with mrt_compare_create; the table gathers a row per
 * partitioning (the spec's own rules, then each alternative, as first
 * met) and a column per size.  A size at which the spec does not load
 * gives every row that error there.  The general sweep
 * (mrt_sweep_create_points) does the same at points that each set
 * several dims (zipped: `--sweep length=256,512 --sweep klen=256,512`)
 * and/or the mesh (`--sweep-mesh`); the one-dim sweep is its points
 * DIM=N.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec.h"

#define CELL(t, r, v) (&(t)->cell[(size_t)(r)*MRT_SWEEP_MAX + (v)])

/* The row of partitioning `name`, added if new; -1 when out of memory. */
static int row_of(mrt_sweep *t, const char *name)
{
    for (int r = 0; r < t->nrows; r++)
        if (!strcmp(t->name[r], name))
            return r;
    char(*nn)[64] = realloc(t->name, ((size_t)t->nrows + 1) * sizeof *nn);
    if (!nn)
        return -1;
    t->name = nn;
    mrt_sweep_cell *nc = realloc(t->cell, ((size_t)t->nrows + 1) *
                                              MRT_SWEEP_MAX * sizeof *nc);
    if (!nc)
        return -1;
    t->cell = nc;
    memset(CELL(t, t->nrows, 0), 0, MRT_SWEEP_MAX * sizeof *nc);
    snprintf(t->name[t->nrows], sizeof t->name[0], "%s", name);
    return t->nrows++;
}

/* Loads and compares the spec at point pt into column v; fails only
 * when out of memory.  With set_ranks, value[v] is the rank count of
 * the mesh it loaded with. */
static mrt_status sweep_point(mrt_sweep *t, const char *path,
                              const mrt_spec_load_options *ov,
                              const mrt_plan_options *opt, int v,
                              const mrt_sweep_point *pt, int set_ranks)
{
    char dims[4096];
    mrt_error err = {0};
    mrt_spec *spec = NULL;
    mrt_compare *c = NULL;
    const char *user = ov && ov->dims ? ov->dims : NULL;
    const char *more = pt->dims && *pt->dims ? pt->dims : NULL;
    int n = snprintf(dims, sizeof dims, "%s%s%s", user ? user : "",
                     user && more ? "," : "", more ? more : "");
    mrt_status st = n < 0 || (size_t)n >= sizeof dims
                        ? mrt_error_set(&err, MRT_E_USAGE, "", (mrt_mark){0},
                                        "--dim: too long")
                        : MRT_OK;
    mrt_spec_load_options here = ov ? *ov : (mrt_spec_load_options){0};
    here.dims = user || more ? dims : NULL;
    if (pt->mesh)
        here.mesh = pt->mesh;
    if (!st)
        st = mrt_spec_load_ex(path, &here, &spec, &err);
    if (st == MRT_E_NOMEM)
        return st;
    if (st) {
        t->load_error[v] = err;
        return MRT_OK;
    }
    if (set_ranks)
        t->value[v] = spec->mesh.nranks;
    st = mrt_compare_create(spec, opt, &c, NULL);
    for (int r = 0; !st && r < c->nrows; r++) {
        int row = row_of(t, c->row[r].name);
        if (row < 0) {
            st = MRT_E_NOMEM;
            break;
        }
        mrt_sweep_cell *cell = CELL(t, row, v);
        cell->ok = c->row[r].ok;
        cell->totals = c->row[r].totals;
        cell->error = c->row[r].error;
    }
    if (!st && !t->machine[0] && c->machine[0])
        snprintf(t->machine, sizeof t->machine, "%s", c->machine);
    mrt_compare_destroy(c);
    mrt_spec_destroy(spec);
    return st;
}

/* Cells of sizes that did not load take the load's error; then the
 * fastest row of each size. */
static void finish(mrt_sweep *t)
{
    for (int v = 0; v < t->nvalues; v++) {
        t->fastest[v] = -1;
        for (int r = 0; r < t->nrows; r++) {
            mrt_sweep_cell *c = CELL(t, r, v);
            if (t->load_error[v].code != MRT_OK)
                c->error = t->load_error[v];
            if (c->ok &&
                (t->fastest[v] < 0 ||
                 c->totals.time_s < CELL(t, t->fastest[v], v)->totals.time_s))
                t->fastest[v] = r;
        }
    }
}

/* The sweep at n points named `what`; values: each point's size (NULL:
 * its rank count). */
static mrt_status sweep(const char *path, const mrt_spec_load_options *ov,
                        const char *what, int n, const mrt_sweep_point *pts,
                        const int64_t *values, const mrt_plan_options *opt,
                        mrt_sweep **out, mrt_error *err)
{
    mrt_sweep *t = calloc(1, sizeof *t);
    if (!t)
        return mrt_error_set(err, MRT_E_NOMEM, path, (mrt_mark){0},
                             "out of memory while sweeping %s", what);
    snprintf(t->dim, sizeof t->dim, "%s", what);
    t->nvalues = n;
    mrt_status st = MRT_OK;
    for (int v = 0; !st && v < n; v++) {
        const mrt_sweep_point *p = &pts[v];
        if (p->label)
            snprintf(t->label[v], sizeof t->label[v], "%s", p->label);
        else
            snprintf(t->label[v], sizeof t->label[v], "%s%s%s",
                     p->dims ? p->dims : "", p->dims && p->mesh ? " " : "",
                     p->mesh ? p->mesh : "");
        t->value[v] = values ? values[v] : 0;
        st = sweep_point(t, path, ov, opt, v, p, !values);
    }
    if (st) {
        mrt_sweep_destroy(t);
        return mrt_error_set(err, st, path, (mrt_mark){0},
                             "out of memory while sweeping %s", what);
    }
    finish(t);
    *out = t;
    return MRT_OK;
}

mrt_status mrt_sweep_create(const char *path, const mrt_spec_load_options *ov,
                            const char *dim, int nvalues, const int64_t *values,
                            const mrt_plan_options *opt, mrt_sweep **out,
                            mrt_error *err)
{
    if (!out)
        return mrt_error_null(err, "mrt_sweep_create", "out");
    *out = NULL;
    if (!path || !dim || !values || nvalues < 1 || nvalues > MRT_SWEEP_MAX ||
        strlen(dim) >= sizeof((mrt_sweep *)0)->dim)
        return mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0},
                             "mrt_sweep_create: argument '%s': missing or "
                             "out of range",
                             !path     ? "path"
                             : !dim    ? "dim"
                             : !values ? "values"
                             : nvalues < 1 || nvalues > MRT_SWEEP_MAX
                                 ? "nvalues"
                                 : "dim");
    for (int v = 0; v < nvalues; v++)
        if (values[v] < 1)
            return mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0},
                                 "mrt_sweep_create: argument 'values': "
                                 "size %" PRId64 " is not positive",
                                 values[v]);
    char dims[MRT_SWEEP_MAX][96];
    mrt_sweep_point pts[MRT_SWEEP_MAX];
    for (int v = 0; v < nvalues; v++) {
        snprintf(dims[v], sizeof dims[v], "%s=%" PRId64, dim, values[v]);
        pts[v] = (mrt_sweep_point){.dims = dims[v]};
    }
    return sweep(path, ov, dim, nvalues, pts, values, opt, out, err);
}

mrt_status mrt_sweep_create_points(const char *path,
                                   const mrt_spec_load_options *ov,
                                   const char *what, int npoints,
                                   const mrt_sweep_point *points,
                                   const mrt_plan_options *opt, mrt_sweep **out,
                                   mrt_error *err)
{
    if (!out)
        return mrt_error_null(err, "mrt_sweep_create_points", "out");
    *out = NULL;
    if (!path || !points || npoints < 1 || npoints > MRT_SWEEP_MAX ||
        (what && strlen(what) >= sizeof((mrt_sweep *)0)->dim))
        return mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0},
                             "mrt_sweep_create_points: argument '%s': "
                             "missing or out of range",
                             !path     ? "path"
                             : !points ? "points"
                             : npoints < 1 || npoints > MRT_SWEEP_MAX
                                 ? "npoints"
                                 : "what");
    return sweep(path, ov, what ? what : "point", npoints, points, NULL, opt,
                 out, err);
}

void mrt_sweep_destroy(mrt_sweep *t)
{
    if (!t)
        return;
    free(t->name);
    free(t->cell);
    free(t);
}
