/*
 * cmd_compare.c — `meshrt compare SPEC`: the program planned under each
 * of its partitionings, side by side.  Row "spec" is the spec's own
 * `layout:` rules; then one row per `layouts:` alternative, in file
 * order (mrt_spec_select_layout: its rules, and its mesh if it has one;
 * --mesh replaces the mesh of the spec and of every alternative without
 * its own; --dim resizes dims for all).  Each row is planned with the
 * same planner and profile.  An alternative that does not fit a --mesh
 * or --dim keeps its load error (spec_alts.c), shown in its row.  A
 * partitioning that does not fit the program gets its one-line error
 * instead of figures; the exit status is 0 if any row planned, else 2.
 * --csv, --json and --svg write the same table to files, atomically.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "output.h"
#include "plan.h"
#include "spec.h"

static void mesh_str(const mrt_mesh *m, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int a = 0; a < m->naxes && n < size; a++)
        n += (size_t)snprintf(buf + n, size - n, "%s%s=%" PRId64,
                              a ? "," : "", m->name[a], m->size[a]);
    if (!m->naxes)
        snprintf(buf, size, "(1 rank)");
}

/* The column of axis set `name`, added (zero in every row) if new;
 * -1 when out of memory. */
static int column(mrt_cmp_table *t, const char *name)
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
static mrt_status add_row(mrt_cmp_table *t, const char *name,
                          const mrt_spec *s, const mrt_mesh *mesh,
                          const mrt_error *why, const mrt_plan_options *opt)
{
    mrt_cmp_row *nr = realloc(t->row, ((size_t)t->nrows + 1) * sizeof *nr);
    if (!nr)
        return MRT_E_NOMEM;
    t->row = nr;
    mrt_cmp_row *row = &t->row[t->nrows];
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
        if (!t->profile[0])
            snprintf(t->profile, sizeof t->profile, "%s", p->profile.source);
        char axes[600];
        for (unsigned m = 1; m < (1u << p->mesh.naxes); m++) {
            if (!p->axis_bytes[m])
                continue;
            int k = column(t, mrt_mesh_axes_str(&p->mesh, m, axes,
                                                sizeof axes));
            if (k < 0) {
                mrt_plan_destroy(p);
                return MRT_E_NOMEM;
            }
            row->axis_bytes[k] += p->axis_bytes[m];
        }
    } else {
        if (err.code == MRT_E_NOMEM)
            return MRT_E_NOMEM;
        mrt_error_format(&err, row->error, sizeof row->error);
    }
    mrt_plan_destroy(p);
    return MRT_OK;
}

void mrt_cmp_table_free(mrt_cmp_table *t)
{
    for (int r = 0; r < t->nrows; r++)
        free(t->row[r].axis_bytes);
    free(t->row);
    free(t->col);
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
static void sort_columns(mrt_cmp_table *t, const mrt_mesh *m)
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
mrt_status mrt_cmp_build(mrt_cmp_table *t, const mrt_spec *spec,
                         const mrt_plan_options *opt)
{
    mrt_status st = add_row(t, "spec", spec, &spec->mesh, NULL, opt);
    for (int i = 0; !st && i < spec->nlayouts; i++) {
        const mrt_spec_layout *l = &spec->layouts[i];
        mrt_spec *alt = NULL;
        mrt_error why = {0};
        if (mrt_spec_select_layout(spec, l->name, &alt, &why) != MRT_OK &&
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

/* The first failure's status (MRT_E_RUNTIME when the system refused
 * the write, else MRT_E_IO), after trying every file. */
static mrt_status write_reports(const mrt_cli_args *a, const mrt_cmp_table *t)
{
    const char *path[3] = {a->csv, a->json_file, a->svg};
    void (*writer[3])(FILE *, const void *) = {
        mrt_cmp_write_csv, mrt_cmp_write_json, mrt_cmp_write_svg};
    mrt_status first = MRT_OK;
    for (int k = 0; k < 3; k++) {
        mrt_error err = {0};
        if (path[k] && mrt_write_atomically(path[k], "the comparison", writer[k], t, &err)) {
            mrt_cli_print_error(&err);
            first = first ? first : err.code;
        }
    }
    return first;
}

int mrt_cli_compare(const mrt_cli_args *a)
{
    mrt_error err = {0};
    mrt_spec *spec = NULL;
    mrt_cmp_table t = {0};
    if (a->sweep)
        return mrt_cli_sweep(a);
    mrt_status st = mrt_cli_load_spec(a, NULL, &spec, &err);
    if (st) {
        mrt_cli_print_error(&err);
        return mrt_cli_exit_code(st);
    }
    t.spec = spec->path;
    t.planner = a->plan.planner == MRT_PLANNER_MESHTF ? "meshtf" : "auto";
    st = mrt_cmp_build(&t, spec, &a->plan);
    if (st) {
        mrt_error_set(&err, st, spec->path, (mrt_mark){0},
                      "out of memory while comparing layouts");
        mrt_cli_print_error(&err);
    } else {
        if (!t.profile[0])
            snprintf(t.profile, sizeof t.profile, "%s",
                     a->plan.profile ? a->plan.profile : "default");
        mrt_cmp_print_text(&t, stdout);
        fflush(stdout);
        st = write_reports(a, &t);
        if (!st && t.fastest < 0)
            st = MRT_E_SPEC;
    }
    mrt_cmp_table_free(&t);
    mrt_spec_destroy(spec);
    return mrt_cli_exit_code(st);
}
