/*
 * show_schedule.c — `meshrt show SPEC --schedule`: a pipelined plan's
 * schedule as a grid of time x stage (draw.h), from meshrt.h's
 * mrt_plan_get_schedule and its slots.  One row per stage; one column
 * per time unit, the shortest slot's time (coarser past MAX_COLUMNS
 * columns), each slot from the column of its start to that of its end,
 * rounded.  A slot's first cell names it ("F3": microbatch 3's forward,
 * B its backward, W its weight gradient; with virtual stages a letter
 * for the stage's chunk, F3a, F3b), its other cells are empty in its
 * shade, and "." is a stage idle: the bubble.  Shades: one per phase (and chunk).  Above it, the figures:
 * the bubble, the makespan, the activations in flight.
 */
#include <math.h>
#include <stdio.h>

#include "cli.h"
#include "show.h"

#define MAX_COLUMNS 160

/* The time of one column: the shortest slot, or coarser when the
 * makespan would need more than MAX_COLUMNS. */
static double unit_of(const mrt_schedule *s, const mrt_schedule_info *in)
{
    double u = in->makespan_s;
    for (int k = 0; k < in->stages; k++)
        for (int i = 0; i < in->slots; i++) {
            mrt_schedule_slot_info sl;
            mrt_schedule_get_slot(s, k, i, &sl, NULL);
            double d = sl.end_s - sl.start_s;
            if (d > in->makespan_s * 1e-9 && d < u)
                u = d;
        }
    return u * MAX_COLUMNS < in->makespan_s ? in->makespan_s / MAX_COLUMNS : u;
}

static void fill_stage(mrt_draw_page *page, mrt_draw_grid *g,
                       const mrt_schedule *s, const mrt_schedule_info *in,
                       int k, double u)
{
    for (int c = 0; c < g->ncols; c++)
        mrt_draw_grid_set(page, g, k, c, ".");
    for (int i = 0; i < in->slots; i++) {
        mrt_schedule_slot_info sl;
        mrt_schedule_get_slot(s, k, i, &sl, NULL);
        int a = (int)lround(sl.start_s / u), b = (int)lround(sl.end_s / u);
        int local = sl.chunk / in->stages;
        int ph = sl.phase == 'F' ? 0 : sl.phase == 'B' ? 1 : 2;
        for (int c = a; c < b && c < g->ncols; c++) {
            if (c > a)
                mrt_draw_grid_set(page, g, k, c, "%s", "");
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
                       in.kind, in.stages, in.microbatches, in.virtual_stages,
                       in.virtual_stages == 1 ? "" : "s");
    mrt_draw_page_line(page, 0,
                       "makespan %.4g ms, bubble %.4g%% of the busy time of "
                       "stage %d (the busiest), transfers included",
                       in.makespan_s * 1e3, 100 * in.bubble_fraction,
                       in.busiest);
    char buf[512];
    int n = 0;
    for (int k = 0; k < in.stages && n < (int)sizeof buf - 16; k++)
        n += snprintf(buf + n, sizeof buf - (size_t)n, " %d",
                      mrt_schedule_in_flight(s, k));
    mrt_draw_page_line(page, 0, "activations in flight per stage:%s", buf);
    double u = unit_of(s, &in);
    int ncols = u > 0 ? (int)lround(in.makespan_s / u) : 0;
    mrt_draw_page_line(page, 0,
                       "one column per %.3g us; F forward, B backward%s, "
                       ". idle",
                       u * 1e6,
                       in.slots > 2 * in.virtual_stages * in.microbatches
                           ? ", W weight gradient"
                           : "");
    mrt_draw_grid *g = ncols > 0 ? mrt_draw_page_grid(page, 2, in.stages, ncols)
                                 : NULL;
    for (int k = 0; g && k < in.stages; k++)
        fill_stage(page, g, s, &in, k, u);
    return g ? 0 : -1;
}
