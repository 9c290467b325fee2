/*
 * schedule_print.c — a pipelined plan's schedule in the printed plan and
 * in its JSON: the stages, microbatches and schedule, the bubble, the
 * point-to-point bytes, the makespan, the activations in flight (their
 * count per stage, and the most bytes of them live at once), and
 * in the text a grid of time × stage; the JSON also has each chunk's
 * durations as the replay took them (f_s, b_s, w_s for one microbatch,
 * p2p_s to the next chunk), so a test can replay the schedule itself.
 *
 * The grid has one column per time unit: the shortest slot's time
 * (coarser when the makespan would need more than GRID_MAX columns, so a
 * slot may then lose its column).  A slot is written where it starts
 * (F3: microbatch 3's forward; with virtual stages a letter for the
 * stage's chunk, F3a, F3b ...) and "-" fills the rest of its time; "."
 * is a stage idle, the bubble.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memory.h"
#include "output.h"
#include "plan.h"
#include "schedule.h"

#define GRID_MAX 160

static double grid_unit(const mrt_schedule *s)
{
    double u = s->makespan_s;
    for (int i = 0; i < s->stages * s->per_stage; i++) {
        double d = s->slot[i].end_s - s->slot[i].start_s;
        if (d > s->makespan_s * 1e-9 && d < u)
            u = d;
    }
    return u * GRID_MAX < s->makespan_s ? s->makespan_s / GRID_MAX : u;
}

static void slot_label(const mrt_schedule *s, const mrt_slot *sl, char *b,
                       size_t n)
{
    if (s->virtual_stages > 1)
        snprintf(b, n, "%c%d%c", "FBW"[sl->phase], sl -> micro,
                 'a' + sl->chunk / s->stages % 26);
    else
        snprintf(b, n, "%c%d", "FBW"[sl->phase], sl -> micro);
}

/* Stage k's row: ncols cells of w characters and a space. */
static void grid_row(const mrt_schedule *s, int k, double u, int ncols, int w,
                     char *row, FILE *f)
{
    memset(row, ' ', (size_t)ncols * (w + 1));
    for (int c = 0; c < ncols; c++)
        row[c * (w + 1)] = '.';
    for (int i = 0; i < s->per_stage; i++) {
        const mrt_slot *sl = &s->slot[k * s->per_stage + i];
        int a = (int)lround(sl->start_s / u), b = (int)lround(sl->end_s / u);
        char label[16];
        slot_label(s, sl, label, sizeof label);
        for (int c = a; c < b && c < ncols; c++) {
            char *cell = row + c * (w + 1);
            memset(cell, c == a ? ' ' : '-', (size_t)w);
            if (c == a)
                memcpy(cell, label, strlen(label));
        }
    }
    int end = ncols * (w + 1);
    while (end > 0 && row[end - 1] == ' ')
        end--;
    fprintf(f, "    stage %-3d %.*s\n", k, end, row);
}

static void print_grid(const mrt_schedule *s, FILE *f)
{
    double u = grid_unit(s);
    if (!(u > 0))
        return;
    int ncols = (int)lround(s->makespan_s / u);
    char widest[16];
    mrt_slot last = {.phase = MRT_SLOT_F, .micro = s->microbatches - 1};
    slot_label(s, &last, widest, sizeof widest);
    int w = (int)strlen(widest);
    char *row = malloc((size_t)ncols * (w + 1) + 1);
    if (!row)
        return;
    fprintf(f,
            "  the schedule, one column per %.3g us (F forward, B backward%s, "
            ". idle):\n",
            u * 1e6, s->phases == 3 ? ", W weight gradient" : "");
    for (int k = 0; k < s->stages; k++)
        grid_row(s, k, u, ncols, w, row, f);
    free(row);
}

/* The most bytes of activations (values a backward step reads: what the
 * forward pass saves, memory_kind.c) live at once on stage k's ranks,
 * at any step; -1 when out of memory. */
static int64_t stage_activations(const mrt_plan *p, int k)
{
    mrt_memory_walk w = {0};
    if (mrt_memory_walk_plan(p, k, &w) != MRT_OK)
        return -1;
    return w.kind_max[MRT_MEM_ACTIVATIONS];
}

static void print_activations(const mrt_plan *p, int json, FILE *f)
{
    for (int k = 0; k < p->pipe.stages; k++) {
        int64_t a = stage_activations(p, k);
        if (a < 0)
            fprintf(f, "%snull", k && json ? ", " : " ");
        else
            fprintf(f, "%s%" PRId64, k && json ? ", " : json ? "" : " ", a);
    }
}

void mrt_schedule_print(const mrt_plan *p, FILE *f)
{
    const mrt_schedule *s = p->schedule;
    const mrt_plan_pipeline *pp = &p->pipe;
    if (pp->stages < 2 || !s)
        return;
    fprintf(f,
            "\npipeline: %d stages over '%s', %d microbatch%s, schedule %s, "
            "%d virtual stage%s per stage\n",
            pp->stages, pp->axis >= 0 ? p->mesh.name[pp->axis] : "?",
            s->microbatches, s->microbatches == 1 ? "" : "es",
            mrt_schedule_kind_name(s->kind), s->virtual_stages,
            s->virtual_stages == 1 ? "" : "s");
    fprintf(f,
            "  bubble %.4g%% of the busiest stage's busy time in the block's "
            "slots with the p2p time hidden, %.4g%% with it\n",
            100 * pp->bubble_fraction, 100 * s->bubble_fraction);
    fprintf(f,
            "  %" PRId64 " bytes/rank point to point; modeled time %.6g s "
            "= the schedule's makespan %.6g s + %.6g s outside it (ops "
            "outside the block, the update)\n",
            pp->p2p_bytes, p->totals.time_s, s->makespan_s,
            p->totals.time_s - s->makespan_s);
    fputs("  activations in flight (chunk-microbatches) per stage:", f);
    for (int k = 0; k < s->stages; k++)
        fprintf(f, " %d", s->in_flight[k]);
    fputs("\n  activations saved for the backward, the most live at once per "
          "stage (bytes/rank):",
          f);
    print_activations(p, 0, f);
    fputc('\n', f);
    print_grid(s, f);
}

void mrt_schedule_print_json(const mrt_plan *p, FILE *f)
{
    const mrt_schedule *s = p->schedule;
    const mrt_plan_pipeline *pp = &p->pipe;
    if (pp->stages < 2 || !s)
        return;
    fputs(",\n \"pipeline\": {\"axis\": ", f);
    mrt_json_string(f, pp->axis >= 0 ? p->mesh.name[pp->axis] : "");
    fprintf(f,
            ", \"stages\": %d, \"microbatches\": %d, \"schedule\": \"%s\", "
            "\"virtual_stages\": %d, \"bubble_fraction\": %s, "
            "\"bubble_fraction_p2p\": %s, \"p2p_bytes\": %" PRId64
            ", \"makespan_s\": %s, \"outside_s\": %s, \"busiest_stage\": %d, "
            "\"in_flight\": [",
            pp->stages, s->microbatches, mrt_schedule_kind_name(s->kind),
            s->virtual_stages, MRT_JSON_NUM("%.17g", pp->bubble_fraction),
            MRT_JSON_NUM("%.17g", s->bubble_fraction), pp->p2p_bytes,
            MRT_JSON_NUM("%.9g", s->makespan_s),
            MRT_JSON_NUM("%.9g", p->totals.time_s - s->makespan_s), s->busiest);
    for (int k = 0; k < s->stages; k++)
        fprintf(f, "%s%d", k ? ", " : "", s->in_flight[k]);
    fputs("], \"activations_peak\": [", f);
    print_activations(p, 1, f);
    fputs("],\n   \"chunks\": [", f);
    for (int c = 0; c < s->chunks; c++) {
        const double *d = &s->times[4 * c];
        fprintf(f, "%s{\"f_s\": %s, \"b_s\": %s, \"w_s\": %s, \"p2p_s\": %s}",
                c ? ", " : "", MRT_JSON_NUM("%.17g", d[0]),
                MRT_JSON_NUM("%.17g", d[1]), MRT_JSON_NUM("%.17g", d[2]),
                MRT_JSON_NUM("%.17g", d[3]));
    }
    fputs("]}", f);
}
