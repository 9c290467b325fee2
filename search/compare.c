/*
 * compare.c — a program planned under each of its partitionings, side by
 * side (mrt_compare_create in meshrt.h; `meshrt compare` prints it).
 * Row "spec" is the spec's own `layout:` rules; then one row per
 * `layouts:` alternative, in file order (mrt_spec_select_alternative: its
 * rules, and its mesh if it has one).  Mesh and dim overrides are the
 * loader's (mrt_spec_load_ex): an alternative that does not fit them
 * keeps its load error, shown in its row.  Each row is planned with the
 * same options; one that does not plan gets its one-line error instead
 * of figures.  The columns are the sets of mesh axes bytes travel over,
 * fewer axes first, then in the spec's mesh order.  A pinned row (pin:
 * true, --planner rules) also gets the auto planner's figures for the
 * same program (compare_auto.c).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare_auto.h"
#include "plan.h"
#include "spec.h"

static void mesh_str(const mrt_mesh *m, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int a = 0; a < m->naxes && n < size; a++)
        n += (size_t)snprintf(buf + n, size - n, "%s%s=%" PRId64, a ? "," : "",
                              m->name[a], m->size[a]);
    if (!m->naxes)
        snprintf(buf, size, "(1 rank)");
}

/* The column of axis set `name`, added (zero in every row) if new;
 * -1 when out of memory. */
static int column(mrt_compare *t, const char *name)
{
    for (int k = 0; k < t->ncols; k++)
        if (strcmp(t->col[k], name) == 0)
            return k;
    char(*nc)[600] = realloc(t->col, ((size_t)t->ncols + 1) * sizeof *nc);
    if (!nc)
        return -1;
    t->col = nc;
    snprintf(t->col[t->ncols], sizeof t->col[0], "%s", name);
    for (int r = 0; r < t->nrows; r++) {
        int64_t *b = realloc(t->row[r].axis_bytes,
                             ((size_t)t->ncols + 1) * sizeof *b);
        if (!b)
            return -1;
        b[t->ncols] = 0;
        t->row[r].axis_bytes = b;
    }
    return t->ncols++;
}

/* Appends a row for `name`: spec s planned (s NULL: it failed with
 * *why); the mesh shown is s's, else *mesh.  Fails only when out of
 * memory. */
static mrt_status add_row(mrt_compare *t, const char *name, const mrt_spec *s,
                          const mrt_mesh *mesh, const mrt_error *why,
                          const mrt_plan_options *opt)
{
    mrt_compare_row *nr = realloc(t->row, ((size_t)t->nrows + 1) * sizeof *nr);
    if (!nr)
        return MRT_E_NOMEM;
    t->row = nr;
    mrt_compare_row *row = &t->row[t->nrows];
    memset(row, 0, sizeof *row);
    if (!(row->axis_bytes = calloc((size_t)t->ncols + 1, sizeof(int64_t))))
        return MRT_E_NOMEM;
    t->nrows++;
    snprintf(row->name, sizeof row->name, "%s", name);
    mesh_str(s ? &s->mesh : mesh, row->mesh, sizeof row->mesh);
    mrt_error err = why ? *why : (mrt_error){0};
    mrt_plan *p = NULL;
    if (s && mrt_plan_create(s, opt, &p, &err) == MRT_OK) {
        row->ok = 1;
        row->totals = p->totals;
        mrt_plan_get_memory(p, -1, &row->memory, NULL);
        if (!t->machine[0])
            snprintf(t->machine, sizeof t->machine, "%s", p->profile.source);
        char axes[600];
        for (unsigned m = 1; m < (1u << p->mesh.naxes); m++) {
            if (!p->axis_bytes[m])
                continue;
            int k = column(t,
                           mrt_mesh_axes_str(&p->mesh, m, axes, sizeof axes));
            if (k < 0) {
                mrt_plan_destroy(p);
                return MRT_E_NOMEM;
            }
            row->axis_bytes[k] += p->axis_bytes[m];
        }
        row->pinned = p->planner == MRT_PLANNER_RULES;
        if (row->pinned && mrt_compare_auto(row, s, p, opt) == MRT_E_NOMEM) {
            mrt_plan_destroy(p);
            return MRT_E_NOMEM;
        }
    } else {
        if (err.code == MRT_E_NOMEM)
            return MRT_E_NOMEM;
        row->error = err;
    }
    mrt_plan_destroy(p);
    return MRT_OK;
}

void mrt_compare_destroy(mrt_compare *t)
{
    if (!t)
        return;
    for (int r = 0; r < t->nrows; r++)
        free(t->row[r].axis_bytes);
    free(t->row);
    free(t->col);
    free(t);
}

/* Where axis set `name` ("data,model") sorts: fewer axes first, then by
 * the positions of its axes in mesh m (names m lacks go last). */
static void column_key(const mrt_mesh *m, const char *name, int key[])
{
    char buf[600];
    int n = 0;
    snprintf(buf, sizeof buf, "%s", name);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save);
         tok && n < MRT_MAX_AXES; tok = strtok_r(NULL, ",", &save)) {
        int a = mrt_mesh_find_axis(m, tok);
        key[1 + n++] = a >= 0 ? a : MRT_MAX_AXES;
    }
    key[0] = n;
    for (int i = n; i < MRT_MAX_AXES; i++)
        key[1 + i] = -1;
}

/* Orders the columns by column_key (a stable insertion sort: a handful). */
static void sort_columns(mrt_compare *t, const mrt_mesh *m)
{
    for (int i = 1; i < t->ncols; i++)
        for (int j = i; j > 0; j--) {
            int a[MRT_MAX_AXES + 1], b[MRT_MAX_AXES + 1];
            column_key(m, t->col[j - 1], a);
            column_key(m, t->col[j], b);
            int lex = 0;
            for (int k = 0; k <= MRT_MAX_AXES && !lex; k++)
                lex = (a[k] > b[k]) - (a[k] < b[k]);
            if (lex <= 0)
                break;
            char tmp[600];
            memcpy(tmp, t->col[j], sizeof tmp);
            memcpy(t->col[j], t->col[j - 1], sizeof tmp);
            memcpy(t->col[j - 1], tmp, sizeof tmp);
            for (int r = 0; r < t->nrows; r++) {
                int64_t x = t->row[r].axis_bytes[j];
                t->row[r].axis_bytes[j] = t->row[r].axis_bytes[j - 1];
                t->row[r].axis_bytes[j - 1] = x;
            }
        }
}

/* Every row: the spec's own rules, then each alternative. */
static mrt_status build(mrt_compare *t, const mrt_spec *spec,
                        const mrt_plan_options *opt)
{
    mrt_status st = add_row(t, "spec", spec, &spec->mesh, NULL, opt);
    for (int i = 0; !st && i < spec->nlayouts; i++) {
        const mrt_spec_layout *l = &spec->layouts[i];
        mrt_spec *alt = NULL;
        mrt_error why = {0};
        if (mrt_spec_select_alternative(spec, l->name, &alt, &why) != MRT_OK &&
            why.code == MRT_E_NOMEM)
            return MRT_E_NOMEM;
        st = add_row(t, l->name, alt, l->has_mesh ? &l->mesh : &spec->mesh,
                     &why, opt);
        mrt_spec_destroy(alt);
    }
    sort_columns(t, &spec->mesh);
    t->training = spec->train.loss >= 0;
    t->fastest = -1;
    for (int r = 0; r < t->nrows; r++)
        if (t->row[r].ok &&
            (t->fastest < 0 ||
             t->row[r].totals.time_s < t->row[t->fastest].totals.time_s))
            t->fastest = r;
    return st;
}

mrt_status mrt_compare_create(const mrt_spec *spec, const mrt_plan_options *opt,
                              mrt_compare **out, mrt_error *err)
{
    static const mrt_mark none = {0};
    if (!out)
        return mrt_error_set(err, MRT_E_USAGE, "", none,
                             "mrt_compare_create: out is NULL");
    *out = NULL;
    if (!spec)
        return mrt_error_set(err, MRT_E_USAGE, "", none,
                             "mrt_compare_create: spec is NULL");
    mrt_compare *t = calloc(1, sizeof *t);
    if (!t)
        return mrt_error_set(err, MRT_E_NOMEM, spec->path, none,
                             "out of memory while comparing layouts");
    t->planner = opt ? opt->planner : MRT_PLANNER_AUTO;
    if (build(t, spec, opt) != MRT_OK) {
        mrt_compare_destroy(t);
        return mrt_error_set(err, MRT_E_NOMEM, spec->path, none,
                             "out of memory while comparing layouts");
    }
    *out = t;
    return MRT_OK;
}
