/*
 * cmd_compare.c — `meshrt compare SPEC`: the program planned under each
 * of its partitionings, side by side.  The comparison is the library's
 * (mrt_compare_create, search/compare.c: row "spec", then one row per
 * `layouts:` alternative); --mesh and --dim are given to the loader
 * (--mesh replaces the mesh of the spec and of every alternative without
 * its own; --dim resizes dims for all).  This file prints it: the exit
 * status is 0 if any row planned, else 2.  --csv, --json and --svg write
 * the same table to files, atomically, and --html one page with the
 * table, the charts and each layout's pictures (report_html.c).
 */
#include <stdio.h>

#include "cli.h"

void mrt_cmp_table_free(mrt_cmp_table *t)
{
    mrt_compare_destroy(t->owner);
    t->owner = NULL;
}

/* The library's comparison (mrt_compare_create, search/compare.c), its
 * rows and columns borrowed into t. */
mrt_status mrt_cmp_build(mrt_cmp_table *t, const mrt_spec *spec,
                         const mrt_plan_options *opt)
{
    mrt_status st = mrt_compare_create(spec, opt, &t->owner, NULL);
    if (st)
        return st;
    const mrt_compare *c = t->owner;
    snprintf(t->profile, sizeof t->profile, "%s", c->machine);
    t->nrows = c->nrows;
    t->row = c->row;
    t->ncols = c->ncols;
    t->col = c->col;
    t->fastest = c->fastest;
    t->training = c->training;
    return MRT_OK;
}

/* The first failure's status (MRT_E_RUNTIME when the system refused
 * the write, else MRT_E_IO), after trying every file. */
static mrt_status write_reports(const mrt_cli_args *a, const mrt_cmp_table *t,
                                const mrt_spec *spec)
{
    const mrt_cmp_html html = {.table = t, .spec = spec, .opt = &a->plan};
    mrt_error herr = {0};
    if (a->html && mrt_file_write(a->html, "the comparison page",
                                  mrt_cmp_write_html, &html, &herr))
        mrt_cli_print_error(&herr);
    const char *path[3] = {a->csv, a->json_file, a->svg};
    void (*writer[3])(FILE *, const void *) = {
        mrt_cmp_write_csv, mrt_cmp_write_json, mrt_cmp_write_svg};
    mrt_status first = MRT_OK;
    for (int k = 0; k < 3; k++) {
        mrt_error err = {0};
        if (path[k] &&
            mrt_file_write(path[k], "the comparison", writer[k], t, &err)) {
            mrt_cli_print_error(&err);
            first = first ? first : err.code;
        }
    }
    return first ? first : herr.code;
}

int mrt_cli_compare(const mrt_cli_args *a)
{
    mrt_error err = {0};
    mrt_spec *spec = NULL;
    mrt_cmp_table t = {0};
    if (a->nsweep || a->nsweep_mesh)
        return mrt_cli_sweep(a);
    mrt_status st = mrt_cli_load_spec(a, NULL, &spec, &err);
    if (st) {
        mrt_cli_print_error(&err);
        return mrt_cli_exit_code(st);
    }
    mrt_spec_info info;
    mrt_spec_get_info(spec, &info);
    t.spec = info.path;
    t.planner = mrt_planner_name(a->plan.planner);
    st = mrt_cmp_build(&t, spec, &a->plan);
    if (st) {
        mrt_cli_error(&err, st, info.path,
                      "out of memory while comparing layouts");
        mrt_cli_print_error(&err);
    } else {
        if (!t.profile[0])
            snprintf(t.profile, sizeof t.profile, "%s",
                     a->plan.machine ? a->plan.machine : "default");
        mrt_cmp_print_text(&t, stdout);
        mrt_cmp_print_fits(&t, stdout);
        if (a->by_kind)
            mrt_cmp_print_memory(&t, stdout);
        fflush(stdout);
        st = write_reports(a, &t, spec);
        if (!st && t.fastest < 0)
            st = MRT_E_SPEC;
    }
    mrt_cmp_table_free(&t);
    mrt_spec_destroy(spec);
    return mrt_cli_exit_code(st);
}
