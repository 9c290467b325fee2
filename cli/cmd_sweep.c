/*
 * cmd_sweep.c — `meshrt compare SPEC --sweep DIM=N,N,...`: how the cost
 * of each partitioning grows with one dim.  The library's mrt_sweep
 * (search/sweep.c) loads the spec once per size (--dim DIM=N on top of
 * the other --dim and --mesh overrides) and compares it; this file
 * checks the dim, prints one table (a row per partitioning, the spec's
 * own rules, then each alternative; a column per size, each cell the
 * modeled time per step and the wire bytes per rank; errors listed
 * under it) and writes --csv (one line per cell), --json (one
 * object) and --svg (a line chart, sweep_svg.c).  The exit status is 0 if any cell planned, else 2.
 *
 * Several --sweep move together (zipped: `--sweep length=256,512
 * --sweep klen=256,512` compares at length=256,klen=256 and then at
 * 512,512), and --sweep-mesh compares on each mesh given (any rank
 * count: compare only plans, and its figures are per rank), zipped with
 * the --sweep sizes when both are given; each column is then a point of
 * mrt_sweep_create_points, named as the user wrote it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* What the printers read: the library's table, and how it was made:
 * the size shown for each point (the dim's size; zipped: the first
 * dim's; a mesh sweep: the rank count), what grows ("dim batch", "dims
 * length,klen", "the mesh"). */
typedef struct sweep_out {
    const char *spec, *planner;
    const mrt_sweep *t;
    int64_t size[MRT_SWEEP_MAX];
    char what[600];
    int plural;
} sweep_out;

#define CELL(t, r, v) (&(t)->cell[(size_t)(r)*MRT_SWEEP_MAX + (v)])

/* Reads "DIM=N,N,..." (checked by args.c). */
static void parse_sweep(const char *s, char *dim, size_t size, int *n,
                        int64_t *value)
{
    const char *eq = strchr(s, '=');
    snprintf(dim, size, "%.*s", (int)(eq - s), s);
    *n = 0;
    for (const char *p = eq + 1; *n < MRT_SWEEP_MAX;) {
        char *end;
        value[(*n)++] = strtoll(p, &end, 10);
        if (*end != ',')
            break;
        p = end + 1;
    }
}

/* The swept dim must be one the spec names: loads it as it is (with
 * the other overrides) to say so in one line, as --dim would.  A spec
 * that does not load at its own sizes is left to the sweep's points. */
static mrt_status check_dim(const mrt_cli_args *a, const char *dim)
{
    char list[1024];
    mrt_error err = {0};
    mrt_spec *spec = NULL;
    mrt_status st = mrt_cli_load_spec(a, NULL, &spec, &err);
    if (!st && mrt_spec_find_dim(spec, dim) < 0) {
        size_t n = 0;
        list[0] = '\0';
        mrt_spec_info info;
        mrt_spec_get_info(spec, &info);
        for (int d = 0; d < info.ndims && n < sizeof list; d++)
            n += (size_t)snprintf(list + n, sizeof list - n, "%s%s",
                                  d ? ", " : "",
                                  mrt_spec_get_dim(spec, d, NULL));
        st = mrt_cli_error(&err, MRT_E_USAGE, "",
                           "--sweep: no dim '%s' in %.200s (dims: %.200s)", dim,
                           info.path, list);
    }
    if (st == MRT_E_USAGE || st == MRT_E_NOMEM)
        mrt_cli_print_error(&err);
    mrt_spec_destroy(spec);
    return st == MRT_E_USAGE || st == MRT_E_NOMEM ? st : MRT_OK;
}

/* Time at the last size that planned over time at the first, or 0. */
static double growth(const mrt_sweep *t, int r)
{
    int first = -1, last = -1;
    for (int v = 0; v < t->nvalues; v++)
        if (CELL(t, r, v)->ok) {
            first = first < 0 ? v : first;
            last = v;
        }
    if (first < 0 || last == first || !(CELL(t, r, first)->totals.time_s > 0))
        return 0;
    return CELL(t, r, last)->totals.time_s / CELL(t, r, first)->totals.time_s;
}

static void print_text(const sweep_out *o, FILE *f)
{
    char line[MRT_CLI_ERROR_MAX];
    const mrt_sweep *t = o->t;
    char cell[MRT_CLI_SWEEP_MAX + 2][96], a[32], b[32];
    int namew = 6, w[MRT_CLI_SWEEP_MAX + 1];
    for (int r = 0; r < t->nrows; r++)
        namew = (int)strlen(t->name[r]) > namew ? (int)strlen(t->name[r])
                                                : namew;
    fprintf(f,
            "%s: %d layout%s as %s grow%s, planner %s, costs modeled "
            "with the %s profile; each cell: modeled time per step / wire "
            "bytes per rank ('*' the fastest at that size)\n\n",
            o->spec, t->nrows, t->nrows == 1 ? "" : "s", o->what,
            o->plural ? "" : "s", o->planner,
            t->machine[0] ? t->machine : "default");
    for (int v = 0; v < t->nvalues; v++) {
        snprintf(cell[v], sizeof cell[v], "%s", t->label[v]);
        w[v] = (int)strlen(cell[v]);
    }
    /* widths: the header or the widest cell of the column */
    for (int r = 0; r < t->nrows; r++)
        for (int v = 0; v < t->nvalues; v++) {
            const mrt_sweep_cell *c = CELL(t, r, v);
            int n = c->ok ? snprintf(
                                NULL, 0, "%s / %s *",
                                mrt_cli_fmt_time(c->totals.time_s, a, sizeof a),
                                mrt_cli_fmt_bytes(c->totals.wire_bytes, b,
                                                  sizeof b))
                          : 5;
            w[v] = n > w[v] ? n : w[v];
        }
    fprintf(f, "%-*s", namew, "layout");
    for (int v = 0; v < t->nvalues; v++)
        fprintf(f, "  %*s", w[v], cell[v]);
    fputs("  growth\n", f);
    for (int r = 0; r < t->nrows; r++) {
        fprintf(f, "%-*s", namew, t->name[r]);
        for (int v = 0; v < t->nvalues; v++) {
            const mrt_sweep_cell *c = CELL(t, r, v);
            if (c->ok)
                snprintf(cell[v], sizeof cell[v], "%s / %s%s",
                         mrt_cli_fmt_time(c->totals.time_s, a, sizeof a),
                         mrt_cli_fmt_bytes(c->totals.wire_bytes, b, sizeof b),
                         t->fastest[v] == r ? " *" : "  ");
            else
                snprintf(cell[v], sizeof cell[v], "error");
            fprintf(f, "  %*s", w[v], cell[v]);
        }
        double g = growth(t, r);
        if (g > 0)
            fprintf(f, "  %.3gx\n", g);
        else
            fputs("  -\n", f);
    }
    fprintf(f, "\ngrowth: modeled time at the last size that plans over "
               "that at the first\n");
    int shown = 0;
    for (int r = 0; r < t->nrows; r++)
        for (int v = 0; v < t->nvalues; v++)
            if (!CELL(t, r, v)->ok) {
                fprintf(f, "%s%s at %s: %s\n", shown++ ? "" : "\nerrors:\n",
                        t->name[r], t->label[v],
                        mrt_cli_error_line(&CELL(t, r, v)->error, line,
                                           sizeof line));
            }
}

static void write_csv(FILE *f, const void *table)
{
    char line[MRT_CLI_ERROR_MAX];
    const sweep_out *o = table;
    const mrt_sweep *t = o->t;
    static const char *const head[] = {
        "layout",   "dim",         "size",           "point",      "ok",
        "time_s",   "comm_time_s", "compute_time_s", "wire_bytes", "comm_bytes",
        "messages", "peak_memory", "fastest",        "error"};
    size_t nhead = sizeof head / sizeof head[0];
    for (size_t k = 0; k < nhead; k++)
        mrt_cli_csv_field(head[k], f, k + 1 == nhead);
    for (int r = 0; r < t->nrows; r++)
        for (int v = 0; v < t->nvalues; v++) {
            const mrt_sweep_cell *c = CELL(t, r, v);
            const mrt_plan_totals *x = &c->totals;
            mrt_cli_csv_field(t->name[r], f, 0);
            mrt_cli_csv_field(t->dim, f, 0);
            fprintf(f, "%" PRId64 ",", o->size[v]);
            mrt_cli_csv_field(t->label[v], f, 0);
            fprintf(f, "%d,", c->ok);
            if (c->ok)
                fprintf(f,
                        "%.9g,%.9g,%.9g,%.17g,%" PRId64 ",%" PRId64 ",%" PRId64
                        ",%d,",
                        x->time_s, x->comm_time_s, x->compute_time_s,
                        x->wire_bytes, x->comm_bytes, x->messages,
                        x->peak_memory, t->fastest[v] == r);
            else
                fputs(",,,,,,,,", f);
            mrt_cli_csv_field(
                c->ok ? "" : mrt_cli_error_line(&c->error, line, sizeof line),
                f, 1);
        }
}

static void write_json(FILE *f, const void *table)
{
    char line[MRT_CLI_ERROR_MAX];
    const sweep_out *o = table;
    const mrt_sweep *t = o->t;
    fputs("{\"spec\": ", f);
    mrt_json_write_string(f, o->spec);
    fputs(", \"planner\": ", f);
    mrt_json_write_string(f, o->planner);
    fputs(", \"profile\": ", f);
    mrt_json_write_string(f, t->machine[0] ? t->machine : "default");
    fputs(",\n \"sweep\": {\"dim\": ", f);
    mrt_json_write_string(f, t->dim);
    fputs(", \"sizes\": [", f);
    for (int v = 0; v < t->nvalues; v++)
        fprintf(f, "%s%" PRId64, v ? ", " : "", o->size[v]);
    fputs("], \"points\": [", f);
    for (int v = 0; v < t->nvalues; v++) {
        fputs(v ? ", " : "", f);
        mrt_json_write_string(f, t->label[v]);
    }
    fputs("]},\n \"layouts\": [", f);
    for (int r = 0; r < t->nrows; r++) {
        fputs(r ? ",\n  {\"name\": " : "\n  {\"name\": ", f);
        mrt_json_write_string(f, t->name[r]);
        fputs(", \"points\": [", f);
        for (int v = 0; v < t->nvalues; v++) {
            const mrt_sweep_cell *c = CELL(t, r, v);
            const mrt_plan_totals *x = &c->totals;
            fprintf(f,
                    "%s\n   {\"size\": %" PRId64 ", \"point\": ", v ? "," : "",
                    o->size[v]);
            mrt_json_write_string(f, t->label[v]);
            if (!c->ok) {
                fputs(", \"ok\": false, \"error\": ", f);
                mrt_json_write_string(
                    f, mrt_cli_error_line(&c->error, line, sizeof line));
                fputc('}', f);
                continue;
            }
            fprintf(f,
                    ", \"ok\": true, \"fastest\": %s, \"time_s\": %s"
                    ", \"comm_time_s\": %s, \"compute_time_s\": %s"
                    ", \"wire_bytes\": %s, \"comm_bytes\": %" PRId64
                    ", \"messages\": %" PRId64 ", \"peak_memory\": %" PRId64
                    "}",
                    t->fastest[v] == r ? "true" : "false",
                    MRT_CLI_JSON_NUM("%.9g", x->time_s),
                    MRT_CLI_JSON_NUM("%.9g", x->comm_time_s),
                    MRT_CLI_JSON_NUM("%.9g", x->compute_time_s),
                    MRT_CLI_JSON_NUM("%.17g", x->wire_bytes), x->comm_bytes,
                    x->messages, x->peak_memory);
        }
        fputs("]}", f);
    }
    fputs("\n ]}\n", f);
}

/* The first failure's status, after trying every file. */
static mrt_status write_reports(const mrt_cli_args *a, const sweep_out *o)
{
    const char *path[3] = {a->csv, a->json_file, a->svg};
    void (*writer[3])(FILE *, const void *) = {write_csv, write_json,
                                               mrt_sweep_write_svg};
    const mrt_sweep_chart chart = {o->spec, o->planner, o->what, o->plural,
                                   o->t};
    const void *what[3] = {o, o, &chart};
    mrt_status first = MRT_OK;
    for (int k = 0; k < 3; k++) {
        mrt_error err = {0};
        if (path[k] &&
            mrt_file_write(path[k], "the sweep", writer[k], what[k], &err)) {
            mrt_cli_print_error(&err);
            first = first ? first : err.code;
        }
    }
    return first;
}

/* What grows, for the header: "dim batch", "dims length,klen", "the
 * mesh", "dim batch and the mesh". */
static void say_what(const mrt_cli_args *a, sweep_out *o)
{
    size_t n = 0;
    o->plural = a->nsweep + (a->nsweep_mesh > 0) > 1;
    if (a->nsweep)
        n = (size_t)snprintf(o->what, sizeof o->what, "%s ",
                             a->nsweep > 1 ? "dims" : "dim");
    for (int k = 0; k < a->nsweep && n < sizeof o->what; k++)
        n += (size_t)snprintf(
            o->what + n, sizeof o->what - n, "%s%.*s", k ? "," : "",
            (int)(strchr(a->sweep[k], '=') - a->sweep[k]), a->sweep[k]);
    if (a->nsweep_mesh && n < sizeof o->what)
        snprintf(o->what + n, sizeof o->what - n, "%sthe mesh",
                 a->nsweep ? " and " : "");
}

/* The swept dims (each checked against the spec) into dims[k] with
 * their sizes; *n: the sizes each (zipped, so the same; or the meshes). */
static mrt_status read_sweeps(const mrt_cli_args *a, char (*dims)[64],
                              int64_t (*value)[MRT_SWEEP_MAX], int *n)
{
    *n = a->nsweep_mesh;
    for (int k = 0; k < a->nsweep; k++) {
        parse_sweep(a->sweep[k], dims[k], sizeof dims[k], n, value[k]);
        mrt_status st = check_dim(a, dims[k]);
        if (st)
            return st;
    }
    return MRT_OK;
}

/* The sweep of a: one dim (mrt_sweep_create), or points that set several
 * dims at once and/or the mesh (mrt_sweep_create_points). */
static mrt_status make_sweep(const mrt_cli_args *a, sweep_out *o, mrt_sweep **t,
                             mrt_error *err)
{
    char dims[MRT_CLI_SWEEP_DIMS][64], set[MRT_SWEEP_MAX][600];
    int64_t value[MRT_CLI_SWEEP_DIMS][MRT_SWEEP_MAX];
    mrt_sweep_point pts[MRT_SWEEP_MAX];
    int n;
    mrt_status st = read_sweeps(a, dims, value, &n);
    if (st)
        return st;
    const mrt_spec_load_options ov = {.mesh = a->mesh, .dims = a->dims};
    say_what(a, o);
    if (a->nsweep == 1 && !a->nsweep_mesh) {
        memcpy(o->size, value[0], (size_t)n * sizeof value[0][0]);
        return mrt_sweep_create(a->spec, &ov, dims[0], n, value[0], &a->plan, t,
                                err);
    }
    for (int v = 0; v < n; v++) {
        size_t len = 0;
        set[v][0] = '\0';
        for (int k = 0; k < a->nsweep && len < sizeof set[v]; k++)
            len += (size_t)snprintf(set[v] + len, sizeof set[v] - len,
                                    "%s%s=%" PRId64, k ? "," : "", dims[k],
                                    value[k][v]);
        pts[v] = (mrt_sweep_point){.dims = a->nsweep ? set[v] : NULL,
                                   .mesh = a->nsweep_mesh ? a->sweep_mesh[v]
                                                          : NULL};
        o->size[v] = a->nsweep ? value[0][v] : 0;
    }
    char what[64];
    snprintf(what, sizeof what, "%s", a->nsweep ? "dims" : "mesh");
    if (a->nsweep > 1 || a->nsweep_mesh)
        for (int k = 0, len = 0; k < a->nsweep && len < (int)sizeof what; k++)
            len += snprintf(what + len, sizeof what - len, "%s%s", k ? "," : "",
                            dims[k]);
    if (a->nsweep && a->nsweep_mesh)
        snprintf(what + strlen(what), sizeof what - strlen(what), ",mesh");
    st = mrt_sweep_create_points(a->spec, &ov, what, n, pts, &a->plan, t, err);
    for (int v = 0; !st && !a->nsweep && v < n; v++)
        o->size[v] = (*t)->value[v];
    return st;
}

int mrt_cli_sweep(const mrt_cli_args *a)
{
    mrt_error err = {0};
    mrt_sweep *t = NULL;
    sweep_out o = {.spec = a->spec,
                   .planner = mrt_planner_name(a->plan.planner)};
    mrt_status st = make_sweep(a, &o, &t, &err);
    if (st) {
        if (err.code)
            mrt_cli_print_error(&err);
        return mrt_cli_exit_code(st);
    }
    o.t = t;
    if (!t->nrows) {
        /* no size loaded: the spec (or --dim) is wrong; say it once */
        char line[MRT_CLI_ERROR_MAX];
        fprintf(stderr, "%s\n",
                mrt_cli_error_line(&t->load_error[0], line, sizeof line));
        st = MRT_E_SPEC;
    } else {
        print_text(&o, stdout);
        fflush(stdout);
        st = write_reports(a, &o);
        int any = 0;
        for (int v = 0; v < t->nvalues; v++)
            any |= t->fastest[v] >= 0;
        if (!st && !any)
            st = MRT_E_SPEC;
    }
    mrt_sweep_destroy(t);
    return mrt_cli_exit_code(st);
}
