/*
 * memory_picture.c — `meshrt plan SPEC --timeline [--svg FILE]`: a rank's
 * memory over the ops of its plan, by kind (meshrt.h's mrt_memory_kind),
 * as a text picture (a bar per op, one letter per kind, the letters in
 * proportion to the bytes) and as an SVG chart of stacked bars; a picture
 * per pipeline stage when the plan has stages (each stage's ranks hold
 * their stage's values).  The bytes are mrt_plan_memory_timeline's: per
 * op, those live at its step with the most.
 *
 * A plan of more than MAX_ROWS ops is drawn a bar per group of ops (the
 * group's largest), so the picture stays a screen long.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "draw.h"

#define NK MRT_MEM_KIND_COUNT
#define MAX_ROWS 48
#define BAR 60 /* characters for the largest total */

static const char letter[NK] = {'P', 'G', 'O', 'A', 'C', 'T', 'W'};
static const char *const what[NK] = {"parameters",
                                     "gradients",
                                     "optimizer state",
                                     "activations",
                                     "communication buffers",
                                     "other (temporaries)",
                                     "workspace and MPI scratch"};
static const char *const colour[NK] = {"#4e79a7", "#f28e2b", "#e15759",
                                       "#76b7b2", "#59a14f", "#bab0ac",
                                       "#edc948"};

/* One bar: ops first..last, the bytes of the op among them with most. */
typedef struct bar {
    int first, last;
    int64_t kind[NK], total;
} bar;

static int64_t sum(const int64_t *row)
{
    int64_t t = 0;
    for (int c = 0; c < NK; c++)
        t += row[c];
    return t;
}

/* The bars of stage's timeline (malloc'd, *n of them), or NULL. */
static bar *bars_of(const mrt_plan *p, int stage, int *n)
{
    int nops = mrt_plan_op_count(p);
    int64_t(*rows)[NK] = calloc((size_t)nops + 1, sizeof *rows);
    int per = nops > MAX_ROWS ? (nops + MAX_ROWS - 1) / MAX_ROWS : 1;
    bar *b = calloc((size_t)nops / (size_t)per + 2, sizeof *b);
    if (!rows || !b || mrt_plan_memory_timeline(p, stage, rows) < 0) {
        free(rows);
        free(b);
        return NULL;
    }
    *n = 0;
    for (int i = 0; i < nops; i += per) {
        bar *x = &b[(*n)++];
        x->first = i;
        x->last = i + per - 1 < nops ? i + per - 1 : nops - 1;
        x->total = -1;
        for (int k = x->first; k <= x->last; k++)
            if (sum(rows[k]) > x->total) {
                memcpy(x->kind, rows[k], sizeof x->kind);
                x->total = sum(rows[k]);
            }
    }
    free(rows);
    return b;
}

static const char *phase_name(int ph)
{
    return ph == 0 ? "fwd" : ph == 1 ? "bwd" : "upd";
}

/* The text bar: the letters of each kind, rounded so they add up. */
static void text_bar(const bar *x, double scale, FILE *f)
{
    int64_t cum = 0;
    int drawn = 0;
    for (int c = 0; c < NK; c++) {
        cum += x->kind[c];
        int upto = (int)((double)cum / scale + 0.5);
        for (; drawn < upto; drawn++)
            fputc(letter[c], f);
    }
}

static void text_picture(const mrt_plan *p, int stage, const bar *b, int n,
                         FILE *f)
{
    int64_t top = 1;
    char buf[64];
    for (int i = 0; i < n; i++)
        top = b[i].total > top ? b[i].total : top;
    double scale = (double)top / BAR;
    if (stage >= 0)
        fprintf(f, "pipeline stage %d:\n", stage);
    fprintf(f, "memory per rank by kind, per op (each character %s):\n",
            mrt_cli_fmt_bytes(scale, buf, sizeof buf));
    for (int i = 0; i < n; i++) {
        const bar *x = &b[i];
        char ops[32];
        if (x->first == x->last)
            snprintf(ops, sizeof ops, "%d", x->first);
        else
            snprintf(ops, sizeof ops, "%d-%d", x->first, x->last);
        fprintf(f, "  %9s %s %10s  ", ops,
                phase_name(mrt_plan_op_phase(p, x->first)),
                mrt_cli_fmt_bytes((double)x->total, buf, sizeof buf));
        text_bar(x, scale, f);
        fputc('\n', f);
    }
    fputs("  key:", f);
    for (int c = 0; c < NK; c++)
        fprintf(f, "%s %c %s", c ? "," : "", letter[c], what[c]);
    fputc('\n', f);
}

/* ---- SVG: stacked bars, an op per bar, bytes upwards ---- */

#define W_PLOT 720.0
#define H_PLOT 280.0
#define LEFT 80.0
#define TOP 40.0

static void svg_chart(const bar *b, int n, int stage, double y0, FILE *f)
{
    int64_t top = 1;
    char buf[64];
    for (int i = 0; i < n; i++)
        top = b[i].total > top ? b[i].total : top;
    double w = W_PLOT / n, base = y0 + TOP + H_PLOT;
    fprintf(f, "<text x=\"%g\" y=\"%g\" font-size=\"14\">", LEFT, y0 + 20);
    if (stage >= 0)
        fprintf(f, "pipeline stage %d: ", stage);
    fprintf(f, "memory per rank by kind, per op (at most %s live)</text>\n",
            mrt_cli_fmt_bytes((double)top, buf, sizeof buf));
    for (int i = 0; i < n; i++) {
        double y = base;
        for (int c = 0; c < NK; c++) {
            double h = H_PLOT * (double)b[i].kind[c] / (double)top;
            if (h <= 0)
                continue;
            y -= h;
            fprintf(f,
                    "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
                    "height=\"%.2f\" fill=\"%s\"/>\n",
                    LEFT + i * w, y, w * 0.9, h, colour[c]);
        }
    }
    fprintf(f,
            "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"black\"/>"
            "\n<text x=\"%g\" y=\"%g\" font-size=\"11\" text-anchor=\"end\">"
            "%s</text>\n<text x=\"%g\" y=\"%g\" font-size=\"11\" "
            "text-anchor=\"end\">0</text>\n<text x=\"%g\" y=\"%g\" "
            "font-size=\"11\">op 0 .. %d</text>\n",
            LEFT, base, LEFT + W_PLOT, base, LEFT - 4, y0 + TOP + 10,
            mrt_cli_fmt_bytes((double)top, buf, sizeof buf), LEFT - 4, base,
            LEFT, base + 16, b[n - 1].last);
}

static void svg_legend(double y, FILE *f)
{
    for (int c = 0; c < NK; c++) {
        double x = LEFT + (c % 4) * 180.0, yy = y + (c / 4) * 18.0;
        fprintf(f,
                "<rect x=\"%g\" y=\"%g\" width=\"12\" height=\"12\" "
                "fill=\"%s\"/><text x=\"%g\" y=\"%g\" font-size=\"11\">",
                x, yy, colour[c], x + 16, yy + 10);
        mrt_draw_xml_text(what[c], f);
        fputs("</text>\n", f);
    }
}

typedef struct picture {
    const mrt_plan *plan;
    int nstages; /* 0: no stages (one picture, stage -1) */
} picture;

static void write_svg(FILE *f, const void *ctx)
{
    const picture *pc = ctx;
    int np = pc->nstages ? pc->nstages : 1;
    double h = TOP + H_PLOT + 40;
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg "
            "xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" "
            "font-family=\"sans-serif\">\n<rect width=\"100%%\" "
            "height=\"100%%\" fill=\"white\"/>\n",
            LEFT + W_PLOT + 40, np * h + 50);
    for (int s = 0; s < np; s++) {
        int n = 0;
        bar *b = bars_of(pc->plan, pc->nstages ? s : -1, &n);
        if (b && n > 0)
            svg_chart(b, n, pc->nstages ? s : -1, s * h, f);
        free(b);
    }
    svg_legend(np * h + 8, f);
    fputs("</svg>\n", f);
}

int mrt_cli_memory_picture(const mrt_cli_args *a, const mrt_plan *plan)
{
    mrt_plan_memory m;
    mrt_error err = {0};
    if (mrt_plan_get_memory(plan, -1, &m, &err) != MRT_OK) {
        mrt_cli_print_error(&err);
        return mrt_cli_exit_code(err.code);
    }
    picture pc = {plan, m.stages > 1 ? m.stages : 0};
    for (int s = 0; a->timeline && s < (pc.nstages ? pc.nstages : 1); s++) {
        int n = 0;
        bar *b = bars_of(plan, pc.nstages ? s : -1, &n);
        if (!b) {
            fprintf(stderr, "meshrt: error: out of memory\n");
            return 1;
        }
        if (n > 0)
            text_picture(plan, pc.nstages ? s : -1, b, n, stdout);
        free(b);
    }
    fflush(stdout);
    if (a->svg &&
        mrt_file_write(a->svg, "the memory timeline", write_svg, &pc, &err)) {
        mrt_cli_print_error(&err);
        return mrt_cli_exit_code(err.code);
    }
    return 0;
}
