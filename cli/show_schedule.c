/*
 * show_schedule.c — `meshrt show SPEC --schedule`: a pipelined plan's
 * schedule as a grid of time x stage (draw.h), from meshrt.h's
 * mrt_plan_get_schedule and its slots.  One row per stage; one column
 * per span between two consecutive slot boundaries of any stage, as
 * wide in SVG as the span is long (so the picture is to the time
 * scale), one box per column in text.  A cell is the slot running then
 * ("F3": microbatch 3's forward, B its backward, W its weight gradient;
 * with virtual stages a letter for the stage's chunk, F3a, F3b), "-"
 * where a slot goes on from the column before, "." a stage idle: the
 * bubble.  Shades: one per phase (and chunk).  Above it, the figures:
 * the bubble, the makespan, the activations in flight.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "show.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The distinct slot boundaries of every stage, sorted, into *out
 * (malloc'd); their count, -1 when out of memory. */
static int boundaries(const mrt_schedule *s, const mrt_schedule_info *in,
                      double **out)
{
    int n = 0, cap = 2 * in->stages * in->slots + 1;
    double *t = malloc((size_t)cap * sizeof *t);
    if (!t)
        return -1;
    t[n++] = 0;
    for (int k = 0; k < in->stages; k++)
        for (int i = 0; i < in->slots; i++) {
            mrt_schedule_slot_info sl;
            mrt_schedule_get_slot(s, k, i, &sl, NULL);
            t[n++] = sl.start_s;
            t[n++] = sl.end_s;
        }
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    int m = 0;
    double eps = in->makespan_s * 1e-9;
    for (int i = 0; i < n; i++)
        if (m == 0 || t[i] > t[m - 1] + eps)
            t[m++] = t[i];
    *out = t;
    return m;
}

/* The column of time x among the m boundaries t. */
static int column(const double *t, int m, double x, double eps)
{
    int lo = 0, hi = m - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (t[mid] <= x + eps)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static void fill_stage(mrt_draw_page *page, mrt_draw_grid *g,
                       const mrt_schedule *s, const mrt_schedule_info *in,
                       int k, const double *t, int m)
{
    double eps = in->makespan_s * 1e-9;
    for (int c = 0; c + 1 < m; c++)
        mrt_draw_grid_set(page, g, k, c, ".");
    for (int i = 0; i < in->slots; i++) {
        mrt_schedule_slot_info sl;
        mrt_schedule_get_slot(s, k, i, &sl, NULL);
        int a = column(t, m, sl.start_s, eps), b = column(t, m, sl.end_s, eps);
        int local = sl.chunk / in->stages;
        int ph = sl.phase == 'F' ? 0 : sl.phase == 'B' ? 1 : 2;
        for (int c = a; c < b; c++) {
            if (c > a)
                mrt_draw_grid_set(page, g, k, c, "-");
            else if (in->virtual_stages > 1)
                mrt_draw_grid_set(page, g, k, c, "%c%d%c", sl.phase, sl.micro,
                                  'a' + local % 26);
            else
                mrt_draw_grid_set(page, g, k, c, "%c%d", sl.phase, sl.micro);
            g->shade[k * g->ncols + c] = ph + 3 * (local % 2);
        }
    }
    mrt_draw_grid_set(page, g, k, -1, "stage %d", k);
}

int mrt_show_schedule(mrt_draw_page *page, const mrt_schedule *s)
{
    mrt_schedule_info in;
    mrt_schedule_get_info(s, &in);
    mrt_draw_page_line(page, 0,
                       "schedule %s: %d stages, %d microbatches, %d virtual "
                       "stage%s per stage",
                       in.kind, in.stages, in.microbatches,
                       in.virtual_stages, in.virtual_stages == 1 ? "" : "s");
    mrt_draw_page_line(page, 0,
                       "makespan %.4g ms, bubble %.4g%% of the busy time of "
                       "stage %d (the busiest)",
                       in.makespan_s * 1e3, 100 * in.bubble_fraction,
                       in.busiest);
    char buf[512];
    int n = 0;
    for (int k = 0; k < in.stages && n < (int)sizeof buf - 16; k++)
        n += snprintf(buf + n, sizeof buf - (size_t)n, " %d",
                      mrt_schedule_in_flight(s, k));
    mrt_draw_page_line(page, 0, "activations in flight per stage:%s", buf);
    double *t;
    int m = boundaries(s, &in, &t);
    if (m < 0)
        return -1;
    if ((m - 1) * in.stages > 64 * MRT_SHOW_MAX_CELLS) {
        mrt_draw_page_line(page, 0, "(%d columns: too many to draw)", m - 1);
        free(t);
        return 0;
    }
    mrt_draw_grid *g = mrt_draw_page_grid(page, 2, in.stages, m - 1);
    for (int c = 0; g && c + 1 < m; c++)
        g->col_weight[c] = (t[c + 1] - t[c]) / in.makespan_s * (m - 1);
    for (int k = 0; g && k < in.stages; k++)
        fill_stage(page, g, s, &in, k, t, m);
    free(t);
    return g ? 0 : -1;
}
