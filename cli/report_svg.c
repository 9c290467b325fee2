/*
 * report_svg.c — compare's table as a chart a person reads at a glance:
 * one horizontal bar per partitioning, its modeled communication time
 * stacked with its compute time (two colours, a legend), the total and
 * the layout's name beside it, and a time axis in readable units.
 * Layouts that do not plan get their error in place of a bar (and one
 * whose modeled time is not a finite number, which the limits of a
 * machine profile rule out, a note: no coordinate is ever nan).
 *
 * Plain SVG 1.1, self-contained: no scripts, no external fonts or
 * styles, every text escaped; each bar segment has a <title> tooltip.
 * The bytes chart (mrt_cmp_write_bytes_svg, for compare --html) stacks
 * instead the bytes per rank over each set of mesh axes.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "draw.h"

#define WIDTH 800.0
#define ROW 28.0
#define BAR 16.0
#define TOP 92.0
#define RIGHT 130.0
#define COMM_COLOUR "#d95f02"
#define COMPUTE_COLOUR "#1b9e77"

/* s escaped (draw_svg.c), cut at max characters with "..." after. */
static void xml_text(const char *s, FILE *f, size_t max)
{
    char cut[512];
    size_t n = strlen(s);
    snprintf(cut, sizeof cut, "%.*s", (int)(max < n ? max : n), s);
    for (char *p = cut; *p; p++)
        if (*p == '\n')
            *p = ' ';
    mrt_draw_xml_text(cut, f);
    if (n > max)
        fputs("...", f);
}

/* The unit that shows t (the axis's end) in numbers from 1 to 1000. */
static void time_unit(double t, double *scale, const char **name)
{
    if (t >= 1) {
        *scale = 1;
        *name = "s";
    } else if (t >= 1e-3) {
        *scale = 1e3;
        *name = "ms";
    } else {
        *scale = 1e6;
        *name = "us";
    }
}

static void fmt_time(double t, char *b, size_t n)
{
    double scale;
    const char *unit;
    time_unit(t, &scale, &unit);
    snprintf(b, n, "%.3g %s", t * scale, unit);
}

/* A tick step of 1, 2 or 5 times a power of ten giving 4 to 10 ticks. */
static double tick_step(double max)
{
    double raw = max / 5, p = pow(10, floor(log10(raw)));
    if (raw <= p)
        return p;
    if (raw <= 2 * p)
        return 2 * p;
    if (raw <= 5 * p)
        return 5 * p;
    return 10 * p;
}

static void bar(FILE *f, double x, double y, double w, const char *colour,
                const char *name, const char *what, double t)
{
    char buf[64];
    fmt_time(t, buf, sizeof buf);
    fprintf(f,
            "  <rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.0f\" "
            "fill=\"%s\"><title>",
            x, y, w, BAR, colour);
    xml_text(name, f, 200);
    fprintf(f, ": %s %s</title></rect>\n", what, buf);
}

static void legend(FILE *f, double x, double y)
{
    fprintf(f,
            "  <rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" "
            "fill=\"%s\"/>\n"
            "  <text x=\"%.1f\" y=\"%.1f\">communication (modeled)</text>\n"
            "  <rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" "
            "fill=\"%s\"/>\n"
            "  <text x=\"%.1f\" y=\"%.1f\">compute (modeled)</text>\n",
            x, y - 10, COMM_COLOUR, x + 18, y, x + 200, y - 10, COMPUTE_COLOUR,
            x + 218, y);
}

/* Where the chart's parts go, and its time axis. */
typedef struct {
    double left, plot, axis_y, height;
    double step, end, scale;
    const char *unit;
} chart;

/* The geometry of table t's chart: room for its longest name, an axis
 * ending at a tick past its slowest finite time. */
static chart chart_of(const mrt_cmp_table *t)
{
    chart c;
    size_t longest = 6;
    double max = 0;
    for (int r = 0; r < t->nrows; r++) {
        longest = strlen(t->row[r].name) > longest ? strlen(t->row[r].name)
                                                   : longest;
        if (t->row[r].ok && isfinite(t->row[r].totals.time_s))
            max = fmax(max, t->row[r].totals.time_s);
    }
    c.left = fmin(260, 24 + 7.5 * (double)longest);
    c.plot = WIDTH - c.left - RIGHT;
    c.axis_y = TOP + ROW * t->nrows + 6;
    c.height = c.axis_y + 56;
    c.step = max > 0 ? tick_step(max) : 1;
    c.end = max > 0 ? ceil(max / c.step - 1e-9) * c.step : 1;
    time_unit(c.end, &c.scale, &c.unit);
    return c;
}

/* The document's start: title, description, background, heading and
 * legend. */
static void header(FILE *f, const mrt_cmp_table *t, const chart *c)
{
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
            "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
            "font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n"
            "  <title>Modeled time per rank of each layout of ",
            WIDTH, c->height, WIDTH, c->height);
    xml_text(t->spec, f, 300);
    fputs("</title>\n  <desc>meshrt compare: one bar per layout, the modeled "
          "communication time stacked with the modeled compute time.</desc>\n",
          f);
    fprintf(f,
            "  <rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" "
            "fill=\"#ffffff\"/>\n"
            "  <text x=\"16\" y=\"26\" font-size=\"16\" font-weight=\"bold\">"
            "Modeled time per rank: ",
            WIDTH, c->height);
    xml_text(t->spec, f, 80);
    fputs("</text>\n  <text x=\"16\" y=\"46\" fill=\"#555555\">planner ", f);
    xml_text(t->planner, f, 20);
    fputs(", ", f);
    xml_text(t->profile, f, 80);
    fputs(" profile; shorter is faster</text>\n", f);
    legend(f, 16, 72);
}

/* The grid lines with their tick labels, and the time axis. */
static void axis(FILE *f, const chart *c)
{
    for (double v = 0; v <= c->end * (1 + 1e-9); v += c->step) {
        double x = c->left + c->plot * v / c->end;
        fprintf(f,
                "  <line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                "stroke=\"#dddddd\"/>\n"
                "  <text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                "fill=\"#333333\">%.4g</text>\n",
                x, TOP - 6, x, c->axis_y, x, c->axis_y + 16, v * c->scale);
    }
    fprintf(f,
            "  <line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
            "stroke=\"#333333\"/>\n"
            "  <text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">"
            "modeled time per rank (%s)</text>\n",
            c->left, c->axis_y, c->left + c->plot, c->axis_y,
            c->left + c->plot / 2, c->axis_y + 38, c->unit);
}

/* Row r of the table: its name, then its two bars and total, or the
 * reason it has none. */
static void row_of(FILE *f, const mrt_cmp_table *t, int r, const chart *c)
{
    const mrt_cmp_row *row = &t->row[r];
    double left = c->left;
    double y = TOP + ROW * r, mid = y + BAR / 2 + 4;
    fprintf(f, "  <text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\"%s>", left - 8,
            mid, r == t->fastest ? " font-weight=\"bold\"" : "");
    xml_text(row->name, f, 40);
    fputs("</text>\n", f);
    if (!row->ok || !isfinite(row->totals.time_s)) {
        fprintf(f,
                "  <text x=\"%.1f\" y=\"%.1f\" fill=\"#aa0000\" "
                "font-style=\"italic\">%s",
                left + 4, mid,
                row->ok ? "modeled time not finite" : "does not fit: ");
        char line[MRT_CLI_ERROR_MAX];
        xml_text(row->ok ? ""
                         : mrt_cli_error_line(&row->error, line, sizeof line),
                 f, 90);
        fputs("</text>\n", f);
        return;
    }
    const mrt_plan_totals *x = &row->totals;
    double wc = c->plot * x->comm_time_s / c->end;
    double wk = c->plot * x->compute_time_s / c->end;
    bar(f, left, y, wc, COMM_COLOUR, row->name, "communication",
        x->comm_time_s);
    bar(f, left + wc, y, wk, COMPUTE_COLOUR, row->name, "compute",
        x->compute_time_s);
    char total[64];
    fmt_time(x->time_s, total, sizeof total);
    fprintf(f, "  <text x=\"%.1f\" y=\"%.1f\"%s>%s%s</text>\n",
            left + wc + wk + 6, mid,
            r == t->fastest ? " font-weight=\"bold\"" : "", total,
            r == t->fastest ? " (fastest)" : "");
}

void mrt_cmp_write_svg(FILE *f, const void *table)
{
    const mrt_cmp_table *t = table;
    chart c = chart_of(t);
    header(f, t, &c);
    axis(f, &c);
    for (int r = 0; r < t->nrows; r++)
        row_of(f, t, r, &c);
    fputs("</svg>\n", f);
}

/* The helpers the sweep's chart (sweep_svg.c) shares with this one. */
void mrt_cli_svg_text(const char *s, FILE *f, size_t max)
{
    xml_text(s, f, max);
}

double mrt_cli_svg_tick(double max, double *scale, const char **unit)
{
    double step = max > 0 ? tick_step(max) : 1;
    time_unit(max > 0 ? ceil(max / step - 1e-9) * step : 1, scale, unit);
    return step;
}

/* ---- the bytes chart: one bar per layout, the bytes per rank handed to
 * MPI over each set of mesh axes stacked (one colour per set, a
 * legend), on an axis of bytes. */

static const char *const set_colour[] = {"#7570b3", "#e7298a", "#66a61e",
                                         "#e6ab02", "#a6761d", "#1f78b4",
                                         "#b2df8a", "#fb9a99"};

static void bytes_legend(FILE *f, const mrt_cmp_table *t, double y)
{
    double x = 16;
    for (int k = 0; k < t->ncols; k++) {
        fprintf(f,
                "  <rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" "
                "fill=\"%s\"/>\n  <text x=\"%.1f\" y=\"%.1f\">over ",
                x, y - 10, set_colour[k % 8], x + 18, y);
        xml_text(t->col[k], f, 40);
        fputs("</text>\n", f);
        x += 60 +
             7.0 * (double)(strlen(t->col[k]) < 40 ? strlen(t->col[k]) : 40);
    }
}

static void bytes_axis(FILE *f, const chart *c, double end, double step)
{
    for (double v = 0; v <= end * (1 + 1e-9); v += step) {
        char b[32];
        double x = c->left + c->plot * v / end;
        fprintf(f,
                "  <line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                "stroke=\"#dddddd\"/>\n"
                "  <text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                "fill=\"#333333\">%s</text>\n",
                x, TOP - 6, x, c->axis_y, x, c->axis_y + 16,
                mrt_cli_fmt_bytes(v, b, sizeof b));
    }
    fprintf(f,
            "  <line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
            "stroke=\"#333333\"/>\n"
            "  <text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">"
            "bytes per rank handed to MPI</text>\n",
            c->left, c->axis_y, c->left + c->plot, c->axis_y,
            c->left + c->plot / 2, c->axis_y + 38);
}

static void bytes_row(FILE *f, const mrt_cmp_table *t, int r, const chart *c,
                      double end)
{
    const mrt_cmp_row *row = &t->row[r];
    double x = c->left, y = TOP + ROW * r, mid = y + BAR / 2 + 4;
    char b[32];
    fprintf(f, "  <text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", x - 8,
            mid);
    xml_text(row->name, f, 40);
    fputs("</text>\n", f);
    if (!row->ok) {
        fprintf(f,
                "  <text x=\"%.1f\" y=\"%.1f\" fill=\"#aa0000\" "
                "font-style=\"italic\">does not fit</text>\n",
                x + 4, mid);
        return;
    }
    for (int k = 0; k < t->ncols; k++) {
        double w = c->plot * (double)row->axis_bytes[k] / end;
        if (w <= 0)
            continue;
        fprintf(f,
                "  <rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.0f\" "
                "fill=\"%s\"><title>",
                x, y, w, BAR, set_colour[k % 8]);
        xml_text(row->name, f, 200);
        fputs(" over ", f);
        xml_text(t->col[k], f, 100);
        fprintf(f, ": %s</title></rect>\n",
                mrt_cli_fmt_bytes((double)row->axis_bytes[k], b, sizeof b));
        x += w;
    }
    fprintf(f, "  <text x=\"%.1f\" y=\"%.1f\">%s</text>\n", x + 6, mid,
            mrt_cli_fmt_bytes((double)row->totals.comm_bytes, b, sizeof b));
}

void mrt_cmp_write_bytes_svg(FILE *f, const void *table)
{
    const mrt_cmp_table *t = table;
    chart c = chart_of(t);
    double max = 0;
    for (int r = 0; r < t->nrows; r++)
        if (t->row[r].ok)
            max = fmax(max, (double)t->row[r].totals.comm_bytes);
    double step = max > 0 ? tick_step(max) : 1;
    double end = max > 0 ? ceil(max / step - 1e-9) * step : 1;
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
            "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
            "font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n"
            "  <rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" "
            "fill=\"#ffffff\"/>\n"
            "  <text x=\"16\" y=\"26\" font-size=\"16\" font-weight=\"bold\">"
            "Bytes per rank over each set of mesh axes: ",
            WIDTH, c.height, WIDTH, c.height, WIDTH, c.height);
    xml_text(t->spec, f, 80);
    fputs("</text>\n  <text x=\"16\" y=\"46\" fill=\"#555555\">what each "
          "rank hands to MPI, by the axes its collectives run over</text>\n",
          f);
    bytes_legend(f, t, 72);
    bytes_axis(f, &c, end, step);
    for (int r = 0; r < t->nrows; r++)
        bytes_row(f, t, r, &c, end);
    fputs("</svg>\n", f);
}
