/*
 * sweep_svg.c — `compare --sweep ... --svg FILE`: how each partitioning's
 * modeled time per step moves across the sweep's points, as a line
 * chart: the points along the x axis (named as the columns of the text
 * table), the time up the y axis from 0, one coloured line with a dot per
 * point for each layout (a layout that does not plan at a point has no
 * dot there, and its line breaks), a legend of the layouts, and the
 * fastest at each point ringed.  Plain SVG 1.1 as report_svg.c writes
 * (its escaping and axis ticks are shared); each dot has a <title>.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

#define W 820.0
#define H 420.0
#define LEFT 80.0
#define TOP 70.0
#define PLOT_W 520.0
#define PLOT_H 260.0

static const char *const colour[] = {"#1b9e77", "#d95f02", "#7570b3",
                                     "#e7298a", "#66a61e", "#e6ab02",
                                     "#a6761d", "#666666"};
#define NCOLOUR (int)(sizeof colour / sizeof colour[0])

#define CELL(t, r, v) (&(t)->cell[(size_t)(r)*MRT_SWEEP_MAX + (v)])

/* The largest finite modeled time of the sweep (0: none). */
static double max_time(const mrt_sweep *t)
{
    double max = 0;
    for (int r = 0; r < t->nrows; r++)
        for (int v = 0; v < t->nvalues; v++)
            if (CELL(t, r, v)->ok && isfinite(CELL(t, r, v)->totals.time_s))
                max = fmax(max, CELL(t, r, v)->totals.time_s);
    return max;
}

static double x_of(const mrt_sweep *t, int v)
{
    return LEFT + (t->nvalues > 1 ? PLOT_W * v / (t->nvalues - 1) : PLOT_W / 2);
}

/* Title, background, heading; the y axis (its grid and labels) and the
 * points' names under the x axis.  Returns the axis's end, in seconds. */
static double frame(FILE *f, const mrt_sweep_chart *c)
{
    const mrt_sweep *t = c->t;
    double scale, max = max_time(t);
    const char *unit;
    double step = mrt_cli_svg_tick(max, &scale, &unit);
    double end = max > 0 ? ceil(max / step - 1e-9) * step : 1;
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
            "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
            "font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n"
            "  <title>Modeled time per step of each layout as ",
            W, H, W, H);
    mrt_cli_svg_text(c->what, f, 200);
    fputs(c->plural ? " change</title>" : " changes</title>", f);
    fputs("\n  <rect x=\"0\" y=\"0\" width=\"100%\" "
          "height=\"100%\" fill=\"#ffffff\"/>\n  <text x=\"16\" y=\"26\" "
          "font-size=\"16\" font-weight=\"bold\">Modeled time per step: ",
          f);
    mrt_cli_svg_text(c->spec, f, 80);
    fputs("</text>\n  <text x=\"16\" y=\"46\" fill=\"#555555\">as ", f);
    mrt_cli_svg_text(c->what, f, 120);
    fputs(c->plural ? " change; planner " : " changes; planner ", f);
    mrt_cli_svg_text(c->planner, f, 20);
    fputs("; lower is faster, a ring marks the fastest</text>\n", f);
    for (double v = 0; v <= end * (1 + 1e-9); v += step) {
        double y = TOP + PLOT_H * (1 - v / end);
        fprintf(f,
                "  <line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                "stroke=\"#dddddd\"/>\n  <text x=\"%.1f\" y=\"%.1f\" "
                "text-anchor=\"end\" fill=\"#333333\">%.4g</text>\n",
                LEFT, y, LEFT + PLOT_W, y, LEFT - 6, y + 4, v * scale);
    }
    fprintf(f,
            "  <text x=\"18\" y=\"%.1f\" transform=\"rotate(-90 18 %.1f)\" "
            "text-anchor=\"middle\">modeled time per step (%s)</text>\n",
            TOP + PLOT_H / 2, TOP + PLOT_H / 2, unit);
    for (int v = 0; v < t->nvalues; v++) {
        fprintf(f,
                "  <text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                "fill=\"#333333\">",
                x_of(t, v), TOP + PLOT_H + 18 + 14 * (v % 2));
        mrt_cli_svg_text(t->label[v], f, 40);
        fputs("</text>\n", f);
    }
    return end;
}

/* Row r's line (broken where a point does not plan), dots and legend. */
static void line_of(FILE *f, const mrt_sweep *t, int r, double end)
{
    const char *col = colour[r % NCOLOUR];
    char a[32], b[32];
    int open = 0;
    for (int v = 0; v < t->nvalues; v++) {
        const mrt_sweep_cell *c = CELL(t, r, v);
        int ok = c->ok && isfinite(c->totals.time_s);
        if (!ok && open)
            fputs("\"/>\n", f);
        if (ok && !open)
            fprintf(f,
                    "  <polyline fill=\"none\" stroke=\"%s\" "
                    "stroke-width=\"2\" points=\"",
                    col);
        if (ok)
            fprintf(f, "%s%.1f,%.1f", open ? " " : "", x_of(t, v),
                    TOP + PLOT_H * (1 - c->totals.time_s / end));
        open = ok;
    }
    if (open)
        fputs("\"/>\n", f);
    for (int v = 0; v < t->nvalues; v++) {
        const mrt_sweep_cell *c = CELL(t, r, v);
        if (!c->ok || !isfinite(c->totals.time_s))
            continue;
        fprintf(f,
                "  <circle cx=\"%.1f\" cy=\"%.1f\" r=\"%s\" fill=\"%s\"%s>"
                "<title>",
                x_of(t, v), TOP + PLOT_H * (1 - c->totals.time_s / end),
                t->fastest[v] == r ? "6" : "3.5", col,
                t->fastest[v] == r ? " stroke=\"#000000\" stroke-width=\"1.5\""
                                   : "");
        mrt_cli_svg_text(t->name[r], f, 60);
        fputs(" at ", f);
        mrt_cli_svg_text(t->label[v], f, 120);
        fprintf(f, ": %s per step, %s on the wire per rank</title></circle>\n",
                mrt_cli_fmt_time(c->totals.time_s, a, sizeof a),
                mrt_cli_fmt_bytes(c->totals.wire_bytes, b, sizeof b));
    }
    double y = TOP + 8 + 20 * r;
    fprintf(f,
            "  <rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"4\" "
            "fill=\"%s\"/>\n  <text x=\"%.1f\" y=\"%.1f\">",
            LEFT + PLOT_W + 30, y - 4, col, LEFT + PLOT_W + 50, y + 2);
    mrt_cli_svg_text(t->name[r], f, 28);
    fputs("</text>\n", f);
}

void mrt_sweep_write_svg(FILE *f, const void *chart)
{
    const mrt_sweep_chart *c = chart;
    double end = frame(f, c);
    for (int r = 0; r < c->t->nrows; r++)
        line_of(f, c->t, r, end);
    fputs("</svg>\n", f);
}
