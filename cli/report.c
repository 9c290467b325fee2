/*
 * report.c — compare's table as aligned text, CSV and JSON.  Files are
 * written with mrt_write_atomically (io/output.h): a reader never
 * sees half a file, and a failed write leaves nothing.  The SVG chart is
 * in report_svg.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* ---- readable figures ---- */

const char *mrt_cli_fmt_time(double t, char *b, size_t n)
{
    if (t >= 1)
        snprintf(b, n, "%.3g s", t);
    else if (t >= 1e-3)
        snprintf(b, n, "%.3g ms", t * 1e3);
    else if (t >= 1e-6 || t == 0)
        snprintf(b, n, "%.3g us", t * 1e6);
    else
        snprintf(b, n, "%.3g ns", t * 1e9);
    return b;
}

const char *mrt_cli_fmt_bytes(double v, char *b, size_t n)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(b, n, "%.0f B", v);
    else
        snprintf(b, n, "%.3g %s", v, unit[u]);
    return b;
}

/* ---- text ---- */

#define CELL 640

enum { C_MARK, C_NAME, C_MESH }; /* then the axis sets, then FIXED */
static const char *const fixed_head[] = {
    "to MPI", "wire",     "msgs",     "comm",     "compute",
    "total",  "peak mem", "fwd wire", "bwd wire", "upd wire"};
/* The last three (wire bytes by phase) only for specs that train; then
 * "auto saves" when a row is pinned. */
#define NFIXED_ALL ((int)(sizeof fixed_head / sizeof fixed_head[0]))
#define NFIXED ((t->training ? NFIXED_ALL : NFIXED_ALL - 3) + any_pinned(t))

/* 1 if a row of t was planned pinned (it then has auto's figures too). */
static int any_pinned(const mrt_cmp_table *t)
{
    for (int r = 0; r < t->nrows; r++)
        if (t->row[r].ok && t->row[r].pinned)
            return 1;
    return 0;
}

/* What auto saves against pinned row `row`: "12.3 us, 9 KiB" (time and
 * wire bytes; what it costs more is negative), "nothing", or "-" when
 * auto did not plan it; with `words`, "saves 12.3 us (modeled), with 9
 * KiB less on the wire" (or "costs ... more", "9 KiB more"). */
static void auto_saves(const mrt_cmp_row *row, int words, char *cell,
                       size_t size)
{
    char a[64], b[64];
    if (!row->pinned || !row->auto_ok) {
        snprintf(cell, size, "%s", row->pinned ? "-" : "");
        return;
    }
    double dt = row->totals.time_s - row->auto_totals.time_s;
    double dw = row->totals.wire_bytes - row->auto_totals.wire_bytes;
    if (dt == 0 && dw == 0) {
        snprintf(cell, size, "nothing");
        return;
    }
    mrt_cli_fmt_time(dt < 0 ? -dt : dt, a, sizeof a);
    mrt_cli_fmt_bytes(dw < 0 ? -dw : dw, b, sizeof b);
    if (!words)
        snprintf(cell, size, "%s%s, %s%s", dt < 0 ? "-" : "", a,
                 dw < 0 ? "-" : "", b);
    else
        snprintf(cell, size, "%s %s%s (modeled), with %s%s on the wire",
                 dt < 0 ? "costs" : "saves", a, dt < 0 ? " more" : "",
                 dw == 0 ? "the same bytes" : b,
                 dw == 0  ? ""
                 : dw < 0 ? " more"
                          : " less");
}

/* One line per pinned row that auto would plan otherwise: what it saves
 * and the collectives it drops and adds. */
static void print_auto_moves(const mrt_cmp_table *t, FILE *f)
{
    int head = 0;
    for (int r = 0; r < t->nrows; r++) {
        const mrt_cmp_row *row = &t->row[r];
        char saves[192];
        if (!row->ok || !row->auto_ok || !row->auto_moves[0])
            continue;
        if (!head++)
            fputs("\npinned: what the auto planner would change in "
                  "those rows (it may leave their layouts)\n",
                  f);
        auto_saves(row, 1, saves, sizeof saves);
        fprintf(f, "  %s: auto %s; it %s\n", row->name, saves, row->auto_moves);
    }
}

static void row_cells(const mrt_cmp_table *t, int r, char (*cell)[CELL])
{
    const mrt_cmp_row *row = &t->row[r];
    const mrt_plan_totals *x = &row->totals;
    snprintf(cell[C_MARK], CELL, "%s", r == t->fastest ? "*" : "");
    snprintf(cell[C_NAME], CELL, "%s", row->name);
    snprintf(cell[C_MESH], CELL, "%s", row->mesh);
    for (int k = 0; k < t->ncols + NFIXED; k++)
        cell[C_MESH + 1 + k][0] = '\0';
    if (!row->ok)
        return;
    for (int k = 0; k < t->ncols; k++)
        mrt_cli_fmt_bytes((double)row->axis_bytes[k], cell[C_MESH + 1 + k],
                          CELL);
    char(*f)[CELL] = cell + C_MESH + 1 + t->ncols;
    mrt_cli_fmt_bytes((double)x->comm_bytes, f[0], CELL);
    mrt_cli_fmt_bytes(x->wire_bytes, f[1], CELL);
    snprintf(f[2], CELL, "%" PRId64, x->messages);
    mrt_cli_fmt_time(x->comm_time_s, f[3], CELL);
    mrt_cli_fmt_time(x->compute_time_s, f[4], CELL);
    mrt_cli_fmt_time(x->time_s, f[5], CELL);
    mrt_cli_fmt_bytes((double)x->peak_memory, f[6], CELL);
    if (!row->memory.fits)
        strcat(f[6], " (does not fit)");
    for (int ph = 0; t->training && ph < 3; ph++)
        mrt_cli_fmt_bytes(x->phase_wire_bytes[ph], f[7 + ph], CELL);
    if (any_pinned(t))
        auto_saves(row, 0, f[NFIXED - 1], CELL);
}

void mrt_cmp_print_text(const mrt_cmp_table *t, FILE *f)
{
    int ncell = C_MESH + 1 + t->ncols + NFIXED;
    char(*cell)[CELL] = calloc((size_t)(t->nrows + 1) * (size_t)ncell, CELL);
    int *width = calloc((size_t)ncell, sizeof *width);
    if (!cell || !width) {
        free(cell);
        free(width);
        fputs("meshrt: out of memory\n", f);
        return;
    }
    snprintf(cell[C_NAME], CELL, "layout");
    snprintf(cell[C_MESH], CELL, "mesh");
    for (int k = 0; k < t->ncols; k++)
        snprintf(cell[C_MESH + 1 + k], CELL, "%s", t->col[k]);
    for (int k = 0; k < NFIXED; k++)
        snprintf(cell[C_MESH + 1 + t->ncols + k], CELL, "%s",
                 any_pinned(t) && k == NFIXED - 1 ? "auto saves"
                                                  : fixed_head[k]);
    for (int r = 0; r < t->nrows; r++)
        row_cells(t, r, cell + (size_t)(r + 1) * ncell);
    for (int r = 0; r <= t->nrows; r++)
        for (int k = 0; k < ncell; k++) {
            int w = (int)strlen(cell[(size_t)r * ncell + k]);
            width[k] = w > width[k] ? w : width[k];
        }
    fprintf(f,
            "%s: %d layout%s, planner %s, costs modeled with the %s "
            "profile; figures per rank (bytes by the mesh axes they "
            "cross)\n\n",
            t->spec, t->nrows, t->nrows == 1 ? "" : "s", t->planner,
            t->profile);
    for (int r = 0; r <= t->nrows; r++) {
        const char(*c)[CELL] = (const char(*)[CELL])cell + (size_t)r * ncell;
        fprintf(f, "%-*s %-*s  %-*s", width[C_MARK], c[C_MARK], width[C_NAME],
                c[C_NAME], width[C_MESH], c[C_MESH]);
        if (r > 0 && !t->row[r - 1].ok) {
            char line[MRT_CLI_ERROR_MAX];
            fprintf(
                f, "  %s\n",
                mrt_cli_error_line(&t->row[r - 1].error, line, sizeof line));
            continue;
        }
        for (int k = C_MESH + 1; k < ncell; k++)
            fprintf(f, "  %*s", width[k], c[k]);
        fputc('\n', f);
    }
    if (t->fastest >= 0)
        fprintf(
            f,
            "\n* fastest (modeled): %s, %s = communication %s + "
            "compute %s\n",
            t->row[t->fastest].name,
            mrt_cli_fmt_time(t->row[t->fastest].totals.time_s, cell[0], CELL),
            mrt_cli_fmt_time(t->row[t->fastest].totals.comm_time_s, cell[1],
                             CELL),
            mrt_cli_fmt_time(t->row[t->fastest].totals.compute_time_s, cell[2],
                             CELL));
    else
        fputs("\nno layout plans for this program\n", f);
    if (t->fastest >= 0 && t->training) {
        const mrt_plan_totals *x = &t->row[t->fastest].totals;
        fprintf(f,
                "  one training step of it: forward %s, backward %s, "
                "update %s (modeled)\n",
                mrt_cli_fmt_time(x->phase_time_s[0], cell[0], CELL),
                mrt_cli_fmt_time(x->phase_time_s[1], cell[1], CELL),
                mrt_cli_fmt_time(x->phase_time_s[2], cell[2], CELL));
    }
    print_auto_moves(t, f);
    free(cell);
    free(width);
}

/* ---- CSV (RFC 4180: fields with commas or quotes are quoted) ---- */

static void csv_field(const char *s, FILE *f, int last)
{
    if (strpbrk(s, ",\"\r\n")) {
        fputc('"', f);
        for (; *s; s++) {
            if (*s == '"')
                fputc('"', f);
            fputc(*s, f);
        }
        fputc('"', f);
    } else {
        fputs(s, f);
    }
    fputs(last ? "\r\n" : ",", f);
}

void mrt_cli_csv_field(const char *s, FILE *f, int last)
{
    csv_field(s, f, last);
}

void mrt_cmp_write_csv(FILE *f, const void *table)
{
    const mrt_cmp_table *t = table;
    char buf[700];
    csv_field("layout", f, 0);
    csv_field("mesh", f, 0);
    for (int k = 0; k < t->ncols; k++) {
        snprintf(buf, sizeof buf, "bytes over %s", t->col[k]);
        csv_field(buf, f, 0);
    }
    static const char *const head[] = {"comm_bytes",
                                       "wire_bytes",
                                       "messages",
                                       "collectives",
                                       "comm_time_s",
                                       "compute_time_s",
                                       "time_s",
                                       "peak_memory",
                                       "fastest",
                                       "forward_wire_bytes",
                                       "backward_wire_bytes",
                                       "update_wire_bytes",
                                       "forward_time_s",
                                       "backward_time_s",
                                       "update_time_s",
                                       "pinned",
                                       "auto_time_s",
                                       "auto_wire_bytes",
                                       "auto_moves"};
    for (size_t k = 0; k < sizeof head / sizeof head[0]; k++)
        csv_field(head[k], f, 0);
    csv_field("error", f, 1);
    for (int r = 0; r < t->nrows; r++) {
        const mrt_cmp_row *row = &t->row[r];
        const mrt_plan_totals *x = &row->totals;
        csv_field(row->name, f, 0);
        csv_field(row->mesh, f, 0);
        if (!row->ok) {
            for (size_t k = 0; k < (size_t)t->ncols + 19; k++)
                fputc(',', f);
            char line[MRT_CLI_ERROR_MAX];
            csv_field(mrt_cli_error_line(&row->error, line, sizeof line), f, 1);
            continue;
        }
        for (int k = 0; k < t->ncols; k++)
            fprintf(f, "%" PRId64 ",", row->axis_bytes[k]);
        fprintf(f,
                "%" PRId64 ",%.17g,%" PRId64 ",%" PRId64
                ",%.9g,%.9g,%.9g,%" PRId64 ",%d,",
                x->comm_bytes, x->wire_bytes, x->messages, x->collectives,
                x->comm_time_s, x->compute_time_s, x->time_s, x->peak_memory,
                r == t->fastest);
        fprintf(f, "%.17g,%.17g,%.17g,%.9g,%.9g,%.9g,%d,",
                x->phase_wire_bytes[0], x->phase_wire_bytes[1],
                x->phase_wire_bytes[2], x->phase_time_s[0], x->phase_time_s[1],
                x->phase_time_s[2], row->pinned);
        if (row->auto_ok)
            fprintf(f, "%.9g,%.17g,", row->auto_totals.time_s,
                    row->auto_totals.wire_bytes);
        else
            fputs(",,", f);
        csv_field(row->auto_moves, f, 0);
        fputs("\r\n", f);
    }
}

/* ---- JSON ---- */

/* A row's "pinned" and, for a pinned row, "auto": the auto planner's
 * figures for the same program and the collectives it changes. */
static void json_auto(const mrt_cmp_row *row, FILE *f)
{
    fprintf(f, ",\n   \"pinned\": %s", row->pinned ? "true" : "false");
    if (!row->pinned)
        return;
    if (!row->auto_ok) {
        fputs(", \"auto\": null", f);
        return;
    }
    const mrt_plan_totals *a = &row->auto_totals;
    fprintf(f,
            ", \"auto\": {\"comm_bytes\": %" PRId64 ", \"wire_bytes\": %s"
            ", \"messages\": %" PRId64 ", \"time_s\": %s, \"moves\": ",
            a->comm_bytes, MRT_CLI_JSON_NUM("%.17g", a->wire_bytes),
            a->messages, MRT_CLI_JSON_NUM("%.9g", a->time_s));
    mrt_json_write_string(f, row->auto_moves);
    fputc('}', f);
}

void mrt_cmp_write_json(FILE *f, const void *table)
{
    const mrt_cmp_table *t = table;
    fputs("{\"spec\": ", f);
    mrt_json_write_string(f, t->spec);
    fputs(", \"planner\": ", f);
    mrt_json_write_string(f, t->planner);
    fputs(", \"profile\": ", f);
    mrt_json_write_string(f, t->profile);
    fputs(",\n \"axis_sets\": [", f);
    for (int k = 0; k < t->ncols; k++) {
        fputs(k ? ", " : "", f);
        mrt_json_write_string(f, t->col[k]);
    }
    fputs("],\n \"fastest\": ", f);
    if (t->fastest >= 0)
        mrt_json_write_string(f, t->row[t->fastest].name);
    else
        fputs("null", f);
    fputs(",\n \"layouts\": [", f);
    for (int r = 0; r < t->nrows; r++) {
        const mrt_cmp_row *row = &t->row[r];
        const mrt_plan_totals *x = &row->totals;
        fputs(r ? ",\n  {\"name\": " : "\n  {\"name\": ", f);
        mrt_json_write_string(f, row->name);
        fputs(", \"mesh\": ", f);
        mrt_json_write_string(f, row->mesh);
        if (!row->ok) {
            fputs(", \"ok\": false, \"error\": ", f);
            char line[MRT_CLI_ERROR_MAX];
            mrt_json_write_string(
                f, mrt_cli_error_line(&row->error, line, sizeof line));
            fputc('}', f);
            continue;
        }
        fprintf(
            f, ", \"ok\": true, \"fastest\": %s,\n   \"comm_bytes_by_axis\": {",
            r == t->fastest ? "true" : "false");
        int n = 0;
        for (int k = 0; k < t->ncols; k++) {
            if (!row->axis_bytes[k])
                continue;
            fputs(n++ ? ", " : "", f);
            mrt_json_write_string(f, t->col[k]);
            fprintf(f, ": %" PRId64, row->axis_bytes[k]);
        }
        fprintf(f,
                "},\n   \"comm_bytes\": %" PRId64 ", \"wire_bytes\": %s"
                ", \"messages\": %" PRId64 ", \"collectives\": %" PRId64
                ", \"flops\": %s,\n   \"comm_time_s\": %s"
                ", \"compute_time_s\": %s, \"time_s\": %s"
                ", \"peak_memory\": %" PRId64 ",\n   \"memory\": ",
                x->comm_bytes, MRT_CLI_JSON_NUM("%.17g", x->wire_bytes),
                x->messages, x->collectives,
                MRT_CLI_JSON_NUM("%.17g", x->flops),
                MRT_CLI_JSON_NUM("%.9g", x->comm_time_s),
                MRT_CLI_JSON_NUM("%.9g", x->compute_time_s),
                MRT_CLI_JSON_NUM("%.9g", x->time_s), x->peak_memory);
        mrt_cmp_write_memory_json(&row->memory, f);
        fputs(",\n   \"phases\": {", f);
        static const char *const phase[] = {"forward", "backward", "update"};
        for (int ph = 0; ph < 3; ph++)
            fprintf(f,
                    "%s\"%s\": {\"comm_bytes\": %" PRId64
                    ", \"wire_bytes\": %s, \"collectives\": %" PRId64
                    ", \"time_s\": %s}",
                    ph ? ", " : "", phase[ph], x->phase_comm_bytes[ph],
                    MRT_CLI_JSON_NUM("%.17g", x->phase_wire_bytes[ph]),
                    x->phase_collectives[ph],
                    MRT_CLI_JSON_NUM("%.9g", x->phase_time_s[ph]));
        fputs("}", f);
        json_auto(row, f);
        fputs("}", f);
    }
    fputs("\n ]}\n", f);
}
