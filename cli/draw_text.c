/*
 * draw_text.c — a page (draw.h) as text for a terminal: each grid in
 * boxes of Unicode line drawing (or + - | with --ascii), every column
 * as wide as its widest line, every row as tall as its tallest cell,
 * row labels to the left, column labels above.
 */
#include <stdlib.h>
#include <string.h>

#include "draw.h"

/* The box characters: corners and joints, in the order
 * top-left, top, top-right, left, cross, right, bottom-left, bottom,
 * bottom-right, then the horizontal and vertical lines. */
static const char *const unicode_box[] = {"┌", "┬", "┐", "├", "┼", "┤",
                                          "└", "┴", "┘", "─", "│"};
static const char *const ascii_box[] = {"+", "+", "+", "+", "+", "+",
                                        "+", "+", "+", "-", "|"};
enum { TL, TOP, TR, LEFT, CROSS, RIGHT, BL, BOTTOM, BR, HORIZ, VERT };

/* Line k of s (lines split at '\n'): its start and length; 0 length
 * past the last. */
static int line_of(const char *s, int k, const char **start)
{
    *start = "";
    if (!s)
        return 0;
    for (; k > 0; k--) {
        const char *nl = strchr(s, '\n');
        if (!nl)
            return 0;
        s = nl + 1;
    }
    *start = s;
    const char *nl = strchr(s, '\n');
    return nl ? (int)(nl - s) : (int)strlen(s);
}

static int count_lines(const char *s)
{
    int n = 1;
    for (; s && *s; s++)
        n += *s == '\n';
    return n;
}

static int widest(const char *s)
{
    int w = 0, n = count_lines(s);
    const char *p;
    for (int k = 0; k < n; k++) {
        int len = line_of(s, k, &p);
        w = len > w ? len : w;
    }
    return w;
}

static void repeat(const char *s, int n, FILE *f)
{
    for (int i = 0; i < n; i++)
        fputs(s, f);
}

/* A rule between rows (or above the first, or below the last). */
static void rule(const int *width, int ncols, int lead, const char *const *b,
                 int l, int m, int r, FILE *f)
{
    fprintf(f, "%*s%s", lead, "", b[l]);
    for (int c = 0; c < ncols; c++) {
        repeat(b[HORIZ], width[c] + 2, f);
        fputs(b[c + 1 < ncols ? m : r], f);
    }
    fputc('\n', f);
}

static void grid_text(const mrt_draw_grid *g, int indent, const char *const *b,
                      FILE *f)
{
    int *width = calloc((size_t)g->ncols, sizeof *width), label = 0;
    if (!width)
        return;
    for (int r = 0; r < g->nrows; r++) {
        int w = widest(g->row_label[r]);
        label = w > label ? w : label;
    }
    for (int c = 0; c < g->ncols; c++) {
        width[c] = widest(g->col_label[c]);
        for (int r = 0; r < g->nrows; r++) {
            int w = widest(g->cell[r * g->ncols + c]);
            width[c] = w > width[c] ? w : width[c];
        }
    }
    int lead = indent + (label ? label + 1 : 0);
    const char *p;
    int heads = 0;
    for (int c = 0; c < g->ncols; c++)
        heads |= g->col_label[c] != NULL;
    if (heads) { /* padded to each column, no blanks at the end */
        int pad = lead + 2;
        for (int c = 0; c < g->ncols; c++) {
            int len = line_of(g->col_label[c], 0, &p);
            if (len)
                fprintf(f, "%*s%.*s", pad, "", len, p);
            pad = (len ? 0 : pad) + width[c] - len + 3;
        }
        fputc('\n', f);
    }
    rule(width, g->ncols, lead, b, TL, TOP, TR, f);
    for (int r = 0; r < g->nrows; r++) {
        int h = count_lines(g->row_label[r]);
        for (int c = 0; c < g->ncols; c++) {
            int k = count_lines(g->cell[r * g->ncols + c]);
            h = k > h ? k : h;
        }
        for (int k = 0; k < h; k++) {
            int len = line_of(g->row_label[r], k, &p);
            fprintf(f, "%*s%*s%.*s%s%s", indent, "", label - len, "", len, p,
                    label ? " " : "", b[VERT]);
            for (int c = 0; c < g->ncols; c++) {
                len = line_of(g->cell[r * g->ncols + c], k, &p);
                fprintf(f, " %.*s%*s %s", len, p, width[c] - len, "", b[VERT]);
            }
            fputc('\n', f);
        }
        if (r + 1 < g->nrows)
            rule(width, g->ncols, lead, b, LEFT, CROSS, RIGHT, f);
    }
    rule(width, g->ncols, lead, b, BL, BOTTOM, BR, f);
    free(width);
}

void mrt_draw_page_text(const mrt_draw_page *page, int ascii, FILE *f)
{
    const char *const *b = ascii ? ascii_box : unicode_box;
    for (int i = 0; i < page->n; i++) {
        const mrt_draw_item *it = &page->item[i];
        if (it->text)
            fprintf(f, "%*s%s\n", it->text[0] ? it->indent : 0, "", it->text);
        else
            grid_text(it->grid, it->indent, b, f);
    }
}
