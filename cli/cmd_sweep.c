/*
 * cmd_sweep.c — `meshrt compare SPEC --sweep DIM=N,N,...`: how the cost
 * of each partitioning grows with one dim.  The spec is loaded once per
 * size (--dim DIM=N on top of the other --dim and --mesh overrides, so a
 * sweep needs no copies of the spec) and compared as `compare` does
 * (mrt_cmp_build); one table follows: a row per partitioning (the
 * spec's own rules, then each alternative), a column per size, each cell
 * the modeled time per step and the wire bytes per rank.  A partitioning
 * that does not fit one size gets an error cell there, its error listed
 * under the table; a size at which the spec itself does not load gives
 * every row that error.  --csv writes one line per cell, --json one
 * object; the exit status is 0 if any cell planned, else 2.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct sweep_cell {
    int ok;
    mrt_plan_totals totals;
    char error[1024];
} sweep_cell;

typedef struct sweep_table {
    const char *spec, *planner;
    char profile[PATH_MAX];
    char dim[64];
    int nvalues;
    int64_t value[MRT_CLI_SWEEP_MAX];
    char load_error[MRT_CLI_SWEEP_MAX][1024]; /* "" when that size loaded */
    int nrows;
    char (*name)[64];  /* [nrows] */
    sweep_cell *cell;  /* [nrows][MRT_CLI_SWEEP_MAX] */
} sweep_table;

#define CELL(t, r, v) (&(t)->cell[(size_t)(r) * MRT_CLI_SWEEP_MAX + (v)])

/* Reads "DIM=N,N,..." (checked by args.c) into t. */
static void parse_sweep(const char *s, sweep_table *t)
{
    const char *eq = strchr(s, '=');
    snprintf(t->dim, sizeof t->dim, "%.*s", (int)(eq - s), s);
    for (const char *p = eq + 1; t->nvalues < MRT_CLI_SWEEP_MAX;) {
        char *end;
        t->value[t->nvalues++] = strtoll(p, &end, 10);
        if (*end != ',')
            break;
        p = end + 1;
    }
}

/* The row of partitioning `name`, added if new; -1 when out of memory. */
static int row_of(sweep_table *t, const char *name)
{
    for (int r = 0; r < t->nrows; r++)
        if (!strcmp(t->name[r], name))
            return r;
    char(*nn)[64] = realloc(t->name, ((size_t)t->nrows + 1) * sizeof *nn);
    if (!nn)
        return -1;
    t->name = nn;
    sweep_cell *nc = realloc(t->cell, ((size_t)t->nrows + 1) *
                                          MRT_CLI_SWEEP_MAX * sizeof *nc);
    if (!nc)
        return -1;
    t->cell = nc;
    memset(CELL(t, t->nrows, 0), 0, MRT_CLI_SWEEP_MAX * sizeof *nc);
    snprintf(t->name[t->nrows], sizeof t->name[0], "%s", name);
    return t->nrows++;
}

/* The --dim string for size v: the user's --dim, then DIM=v. */
static mrt_status dims_at(const mrt_cli_args *a, const sweep_table *t, int v,
                          char *buf, size_t size, mrt_error *err)
{
    int n = snprintf(buf, size, "%s%s%s=%" PRId64, a->dims ? a->dims : "",
                     a->dims ? "," : "", t->dim, t->value[v]);
    if (n < 0 || (size_t)n >= size)
        return mrt_cli_error(err, MRT_E_USAGE, "", "--dim: too long");
    return MRT_OK;
}

/* The swept dim must be one the spec names: loads it as it is (with
 * the other overrides) to say so in one line, as --dim would.  A spec
 * that does not load at its own sizes is left to the sweep's points. */
static mrt_status check_dim(const mrt_cli_args *a, const sweep_table *t)
{
    char list[1024];
    mrt_error err = {0};
    mrt_spec *spec = NULL;
    mrt_status st = mrt_cli_load_spec(a, NULL, &spec, &err);
    if (!st && mrt_spec_find_dim(spec, t->dim) < 0) {
        size_t n = 0;
        list[0] = '\0';
        mrt_spec_info info;
        mrt_spec_get_info(spec, &info);
        for (int d = 0; d < info.ndims && n < sizeof list; d++)
            n += (size_t)snprintf(list + n, sizeof list - n, "%s%s",
                                  d ? ", " : "",
                                  mrt_spec_get_dim(spec, d, NULL));
        st = mrt_cli_error(&err, MRT_E_USAGE, "",
                           "--sweep: no dim '%s' in %.200s (dims: %.200s)",
                           t->dim, info.path, list);
    }
    if (st == MRT_E_USAGE || st == MRT_E_NOMEM)
        mrt_cli_print_error(&err);
    mrt_spec_destroy(spec);
    return st == MRT_E_USAGE || st == MRT_E_NOMEM ? st : MRT_OK;
}

/* Loads and compares the spec at size v into column v. */
static mrt_status sweep_point(const mrt_cli_args *a, sweep_table *t, int v)
{
    char dims[4096];
    mrt_error err = {0};
    mrt_spec *spec = NULL;
    mrt_cmp_table c = {0};
    mrt_status st = dims_at(a, t, v, dims, sizeof dims, &err);
    if (!st)
        st = mrt_cli_load_spec(a, dims, &spec, &err);
    if (st == MRT_E_NOMEM)
        return st;
    if (st) {
        mrt_error_format(&err, t->load_error[v], sizeof t->load_error[v]);
        return MRT_OK;
    }
    mrt_spec_info info;
    mrt_spec_get_info(spec, &info);
    c.spec = info.path;
    c.planner = t->planner;
    st = mrt_cmp_build(&c, spec, &a->plan);
    for (int r = 0; !st && r < c.nrows; r++) {
        int row = row_of(t, c.row[r].name);
        if (row < 0) {
            st = MRT_E_NOMEM;
            break;
        }
        sweep_cell *cell = CELL(t, row, v);
        cell->ok = c.row[r].ok;
        cell->totals = c.row[r].totals;
        snprintf(cell->error, sizeof cell->error, "%s", c.row[r].error);
    }
    if (!t->profile[0] && c.profile[0])
        snprintf(t->profile, sizeof t->profile, "%s", c.profile);
    mrt_cmp_table_free(&c);
    mrt_spec_destroy(spec);
    return st;
}

/* Cells of size v that could not load take the load's error. */
static void spread_load_errors(sweep_table *t)
{
    for (int v = 0; v < t->nvalues; v++)
        for (int r = 0; t->load_error[v][0] && r < t->nrows; r++)
            snprintf(CELL(t, r, v)->error, sizeof CELL(t, r, v)->error, "%s",
                     t->load_error[v]);
}

/* The fastest row at size v, or -1. */
static int fastest(const sweep_table *t, int v)
{
    int best = -1;
    for (int r = 0; r < t->nrows; r++)
        if (CELL(t, r, v)->ok &&
            (best < 0 || CELL(t, r, v)->totals.time_s <
                             CELL(t, best, v)->totals.time_s))
            best = r;
    return best;
}

/* Time at the last size that planned over time at the first, or 0. */
static double growth(const sweep_table *t, int r)
{
    int first = -1, last = -1;
    for (int v = 0; v < t->nvalues; v++)
        if (CELL(t, r, v)->ok) {
            first = first < 0 ? v : first;
            last = v;
        }
    if (first < 0 || last == first ||
        !(CELL(t, r, first)->totals.time_s > 0))
        return 0;
    return CELL(t, r, last)->totals.time_s / CELL(t, r, first)->totals.time_s;
}

static void print_text(const sweep_table *t, FILE *f)
{
    char cell[MRT_CLI_SWEEP_MAX + 2][96], a[32], b[32];
    int namew = 6, w[MRT_CLI_SWEEP_MAX + 1];
    for (int r = 0; r < t->nrows; r++)
        namew = (int)strlen(t->name[r]) > namew ? (int)strlen(t->name[r])
                                                : namew;
    fprintf(f, "%s: %d layout%s as dim %s grows, planner %s, costs modeled "
               "with the %s profile; each cell: modeled time per step / wire "
               "bytes per rank ('*' the fastest at that size)\n\n",
            t->spec, t->nrows, t->nrows == 1 ? "" : "s", t->dim, t->planner,
            t->profile[0] ? t->profile : "default");
    for (int v = 0; v < t->nvalues; v++) {
        snprintf(cell[v], sizeof cell[v], "%s=%" PRId64, t->dim, t->value[v]);
        w[v] = (int)strlen(cell[v]);
    }
    /* widths: the header or the widest cell of the column */
    for (int r = 0; r < t->nrows; r++)
        for (int v = 0; v < t->nvalues; v++) {
            const sweep_cell *c = CELL(t, r, v);
            int n = c->ok ? snprintf(NULL, 0, "%s / %s *",
                                     mrt_cli_fmt_time(c->totals.time_s, a,
                                                      sizeof a),
                                     mrt_cli_fmt_bytes(c->totals.wire_bytes,
                                                       b, sizeof b))
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
            const sweep_cell *c = CELL(t, r, v);
            if (c->ok)
                snprintf(cell[v], sizeof cell[v], "%s / %s%s",
                         mrt_cli_fmt_time(c->totals.time_s, a, sizeof a),
                         mrt_cli_fmt_bytes(c->totals.wire_bytes, b, sizeof b),
                         fastest(t, v) == r ? " *" : "  ");
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
                fprintf(f, "%s%s at %s=%" PRId64 ": %s\n",
                        shown++ ? "" : "\nerrors:\n", t->name[r], t->dim,
                        t->value[v], CELL(t, r, v)->error);
            }
}

static void write_csv(FILE *f, const void *table)
{
    const sweep_table *t = table;
    static const char *const head[] = {
        "layout", "dim", "size", "ok", "time_s", "comm_time_s",
        "compute_time_s", "wire_bytes", "comm_bytes", "messages",
        "peak_memory", "fastest", "error"};
    size_t nhead = sizeof head / sizeof head[0];
    for (size_t k = 0; k < nhead; k++)
        mrt_cli_csv_field(head[k], f, k + 1 == nhead);
    for (int r = 0; r < t->nrows; r++)
        for (int v = 0; v < t->nvalues; v++) {
            const sweep_cell *c = CELL(t, r, v);
            const mrt_plan_totals *x = &c->totals;
            mrt_cli_csv_field(t->name[r], f, 0);
            mrt_cli_csv_field(t->dim, f, 0);
            fprintf(f, "%" PRId64 ",%d,", t->value[v], c->ok);
            if (c->ok)
                fprintf(f, "%.9g,%.9g,%.9g,%.17g,%" PRId64 ",%" PRId64
                           ",%" PRId64 ",%d,",
                        x->time_s, x->comm_time_s, x->compute_time_s,
                        x->wire_bytes, x->comm_bytes, x->messages,
                        x->peak_memory, fastest(t, v) == r);
            else
                fputs(",,,,,,,,", f);
            mrt_cli_csv_field(c->ok ? "" : c->error, f, 1);
        }
}

static void write_json(FILE *f, const void *table)
{
    const sweep_table *t = table;
    fputs("{\"spec\": ", f);
    mrt_json_write_string(f, t->spec);
    fputs(", \"planner\": ", f);
    mrt_json_write_string(f, t->planner);
    fputs(", \"profile\": ", f);
    mrt_json_write_string(f, t->profile[0] ? t->profile : "default");
    fputs(",\n \"sweep\": {\"dim\": ", f);
    mrt_json_write_string(f, t->dim);
    fputs(", \"sizes\": [", f);
    for (int v = 0; v < t->nvalues; v++)
        fprintf(f, "%s%" PRId64, v ? ", " : "", t->value[v]);
    fputs("]},\n \"layouts\": [", f);
    for (int r = 0; r < t->nrows; r++) {
        fputs(r ? ",\n  {\"name\": " : "\n  {\"name\": ", f);
        mrt_json_write_string(f, t->name[r]);
        fputs(", \"points\": [", f);
        for (int v = 0; v < t->nvalues; v++) {
            const sweep_cell *c = CELL(t, r, v);
            const mrt_plan_totals *x = &c->totals;
            fprintf(f, "%s\n   {\"size\": %" PRId64, v ? "," : "",
                    t->value[v]);
            if (!c->ok) {
                fputs(", \"ok\": false, \"error\": ", f);
                mrt_json_write_string(f, c->error);
                fputc('}', f);
                continue;
            }
            fprintf(f, ", \"ok\": true, \"fastest\": %s, \"time_s\": %s"
                       ", \"comm_time_s\": %s, \"compute_time_s\": %s"
                       ", \"wire_bytes\": %s, \"comm_bytes\": %" PRId64
                       ", \"messages\": %" PRId64 ", \"peak_memory\": %" PRId64
                       "}",
                    fastest(t, v) == r ? "true" : "false",
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

/* The first failure's status, after trying both files. */
static mrt_status write_reports(const mrt_cli_args *a, const sweep_table *t)
{
    const char *path[2] = {a->csv, a->json_file};
    void (*writer[2])(FILE *, const void *) = {write_csv, write_json};
    mrt_status first = MRT_OK;
    for (int k = 0; k < 2; k++) {
        mrt_error err = {0};
        if (path[k] && mrt_file_write(path[k], "the sweep", writer[k],
                                            t, &err)) {
            mrt_cli_print_error(&err);
            first = first ? first : err.code;
        }
    }
    return first;
}

int mrt_cli_sweep(const mrt_cli_args *a)
{
    sweep_table *t = calloc(1, sizeof *t);
    mrt_error err = {0};
    mrt_status st = MRT_OK;
    if (!t)
        return mrt_cli_exit_code(MRT_E_NOMEM);
    t->spec = a->spec;
    t->planner = a->plan.planner == MRT_PLANNER_MESHTF ? "meshtf" : "auto";
    parse_sweep(a->sweep, t);
    if ((st = check_dim(a, t))) {
        free(t);
        return mrt_cli_exit_code(st);
    }
    for (int v = 0; !st && v < t->nvalues; v++)
        st = sweep_point(a, t, v);
    if (st) {
        mrt_cli_error(&err, st, a->spec,
                      "out of memory while sweeping dim %s", t->dim);
        mrt_cli_print_error(&err);
    } else if (!t->nrows) {
        /* no size loaded: the spec (or --dim) is wrong; say it once */
        fprintf(stderr, "%s\n", t->load_error[0]);
        st = MRT_E_SPEC;
    } else {
        spread_load_errors(t);
        print_text(t, stdout);
        fflush(stdout);
        st = write_reports(a, t);
        int any = 0;
        for (int v = 0; v < t->nvalues; v++)
            any |= fastest(t, v) >= 0;
        if (!st && !any)
            st = MRT_E_SPEC;
    }
    free(t->name);
    free(t->cell);
    free(t);
    return mrt_cli_exit_code(st);
}
