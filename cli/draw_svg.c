/*
 * draw_svg.c — a page (draw.h) as one SVG 1.1 document: lines of text,
 * and each grid as rectangles with its cells' lines in them.  A grid's
 * columns are as wide as their weights say (in proportion, as far as
 * MAX_GRID_WIDTH allows) and never narrower than their text; rows the
 * same in height.  A cell's shade is a fill from a fixed palette.
 *
 * Self-contained: no scripts, no external fonts or styles (the generic
 * monospace family), every text escaped.
 */
#include <stdlib.h>
#include <string.h>

#include "draw.h"

#define FONT 12.0
#define CHAR_W 7.3 /* a monospace character at FONT, generously */
#define LINE_H 15.0
#define PAD 6.0
#define MARGIN 12.0
#define MAX_GRID_WIDTH 720.0
#define MAX_GRID_HEIGHT 420.0

static const char *const palette[] = {"#cfe3f7", "#fbd9b8", "#cdebc6",
                                      "#f4c9d6", "#e0d4f0", "#f7efb4",
                                      "#c9ece9", "#e6d3c3"};

void mrt_draw_xml_text(const char *s, FILE *f)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\t' || *s == '\n')
                fputc(*s, f);
        }
    }
}

static int lines_in(const char *s, int *widest)
{
    int n = 1, w = 0, cur = 0;
    for (; s && *s; s++) {
        if (*s == '\n') {
            n++;
            cur = 0;
        } else if (++cur > w)
            w = cur;
    }
    *widest = w;
    return s ? n : 0;
}

/* Sizes of n tracks: each at least need[i], in proportion to weight[i]
 * where the total allows it. */
static double tracks(int n, const double *need, const double *weight,
                     double max, double *size)
{
    double unit = 0, wsum = 0, total = 0;
    for (int i = 0; i < n; i++) {
        wsum += weight[i];
        if (need[i] / weight[i] > unit)
            unit = need[i] / weight[i];
    }
    if (unit * wsum > max)
        unit = max / wsum;
    for (int i = 0; i < n; i++) {
        size[i] = weight[i] * unit > need[i] ? weight[i] * unit : need[i];
        total += size[i];
    }
    return total;
}

typedef struct geometry {
    double label_w, head_h, *col, *row, width, height;
} geometry;

static int measure(const mrt_draw_grid *g, geometry *m)
{
    int w;
    double *need = calloc((size_t)(g->ncols + g->nrows), sizeof *need);
    m->col = calloc((size_t)g->ncols, sizeof *m->col);
    m->row = calloc((size_t)g->nrows, sizeof *m->row);
    if (!need || !m->col || !m->row) {
        free(need);
        free(m->col);
        free(m->row);
        return -1;
    }
    m->label_w = m->head_h = 0;
    for (int r = 0; r < g->nrows; r++) {
        if (lines_in(g->row_label[r], &w) && w * CHAR_W + PAD > m->label_w)
            m->label_w = w * CHAR_W + PAD;
        for (int c = 0; c < g->ncols; c++) {
            int k = lines_in(g->cell[r * g->ncols + c], &w);
            double cw = w * CHAR_W + 2 * PAD, ch = k * LINE_H + 2 * PAD;
            need[c] = cw > need[c] ? cw : need[c];
            need[g->ncols + r] = ch > need[g->ncols + r] ? ch
                                                         : need[g->ncols + r];
        }
    }
    for (int c = 0; c < g->ncols; c++)
        if (lines_in(g->col_label[c], &w)) {
            m->head_h = LINE_H + 4;
            need[c] = w * CHAR_W + PAD > need[c] ? w * CHAR_W + PAD : need[c];
        }
    m->width = m->label_w +
               tracks(g->ncols, need, g->col_weight, MAX_GRID_WIDTH, m->col);
    m->height = m->head_h + tracks(g->nrows, need + g->ncols, g->row_weight,
                                   MAX_GRID_HEIGHT, m->row);
    free(need);
    return 0;
}

static void text_at(FILE *f, double x, double y, const char *s, int len,
                    const char *anchor)
{
    char *t = strndup(s, (size_t)len);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\"%s%s%s>", x, y,
            anchor ? " text-anchor=\"" : "", anchor ? anchor : "",
            anchor ? "\"" : "");
    mrt_draw_xml_text(t ? t : "", f);
    fputs("</text>\n", f);
    free(t);
}

/* The lines of s from (x, y) down. */
static void lines_at(FILE *f, double x, double y, const char *s,
                     const char *anchor)
{
    for (int k = 0; s; k++) {
        const char *nl = strchr(s, '\n');
        int len = nl ? (int)(nl - s) : (int)strlen(s);
        text_at(f, x, y + FONT + k * LINE_H, s, len, anchor);
        s = nl ? nl + 1 : NULL;
    }
}

static void grid_svg(const mrt_draw_grid *g, const geometry *m, double x0,
                     double y0, FILE *f)
{
    double x = x0 + m->label_w;
    for (int c = 0; c < g->ncols; c++) {
        if (g->col_label[c])
            lines_at(f, x + m->col[c] / 2, y0, g->col_label[c], "middle");
        double y = y0 + m->head_h;
        for (int r = 0; r < g->nrows; r++) {
            int s = g->shade[r * g->ncols + c];
            fprintf(f,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                    "height=\"%.1f\" fill=\"%s\" stroke=\"#333\"/>\n",
                    x, y, m->col[c], m->row[r],
                    s >= 0 ? palette[s % 8] : "#ffffff");
            lines_at(f, x + PAD, y + PAD, g->cell[r * g->ncols + c], NULL);
            if (c == 0 && g->row_label[r])
                lines_at(f, x0 + m->label_w - PAD / 2,
                         y + m->row[r] / 2 - LINE_H / 2, g->row_label[r],
                         "end");
            y += m->row[r];
        }
        x += m->col[c];
    }
}

/* Height of item i, and its width in *w. */
static double item_size(const mrt_draw_item *it, double *w)
{
    if (it->text) {
        *w = (double)strlen(it->text) * CHAR_W + it->indent * CHAR_W;
        return LINE_H + 2;
    }
    geometry m;
    if (measure(it->grid, &m) != 0) {
        *w = 0;
        return 0;
    }
    free(m.col);
    free(m.row);
    *w = m.width + it->indent * CHAR_W;
    return m.height + LINE_H / 2;
}

void mrt_draw_page_svg_element(const mrt_draw_page *page, FILE *f)
{
    double width = 0, height = 2 * MARGIN, w;
    for (int i = 0; i < page->n; i++) {
        height += item_size(&page->item[i], &w);
        width = w > width ? w : width;
    }
    width += 2 * MARGIN;
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
            "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
            "font-family=\"monospace\" font-size=\"%.0f\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
            width, height, width, height, FONT);
    double y = MARGIN;
    for (int i = 0; i < page->n; i++) {
        const mrt_draw_item *it = &page->item[i];
        double x = MARGIN + it->indent * CHAR_W, h = item_size(it, &w);
        geometry m;
        if (it->text && it->text[0])
            lines_at(f, x, y, it->text, NULL);
        else if (it->grid && measure(it->grid, &m) == 0) {
            grid_svg(it->grid, &m, x, y, f);
            free(m.col);
            free(m.row);
        }
        y += h;
    }
    fputs("</svg>\n", f);
}

void mrt_draw_page_svg(const mrt_draw_page *page, FILE *f)
{
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
    mrt_draw_page_svg_element(page, f);
}
