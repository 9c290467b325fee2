/*
 * draw_page.c — a page of pictures (draw.h) as data: lines of text and
 * grids of cells, built up by the caller and then drawn by draw_text.c
 * or draw_svg.c.  Running out of memory marks the page failed and drops
 * what could not be kept; the caller reports it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "draw.h"

static mrt_draw_item *add_item(mrt_draw_page *page)
{
    if (page->n == page->cap) {
        int cap = page->cap ? 2 * page->cap : 16;
        mrt_draw_item *it = realloc(page->item, (size_t)cap * sizeof *it);
        if (!it) {
            page->failed = 1;
            return NULL;
        }
        page->item = it;
        page->cap = cap;
    }
    page->item[page->n] = (mrt_draw_item){0};
    return &page->item[page->n++];
}

static char *vformat(mrt_draw_page *page, const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s)
        vsnprintf(s, (size_t)n + 1, fmt, again);
    else
        page->failed = 1;
    va_end(again);
    return s;
}

void mrt_draw_page_line(mrt_draw_page *page, int indent, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = vformat(page, fmt, ap);
    va_end(ap);
    mrt_draw_item *it = s ? add_item(page) : NULL;
    if (!it) {
        free(s);
        return;
    }
    it->text = s;
    it->indent = indent;
}

static void grid_free(mrt_draw_grid *g)
{
    if (!g)
        return;
    for (int i = 0; g->cell && i < g->nrows * g->ncols; i++)
        free(g->cell[i]);
    for (int i = 0; g->row_label && i < g->nrows; i++)
        free(g->row_label[i]);
    for (int i = 0; g->col_label && i < g->ncols; i++)
        free(g->col_label[i]);
    free(g->cell);
    free(g->row_label);
    free(g->col_label);
    free(g->row_weight);
    free(g->col_weight);
    free(g->shade);
    free(g);
}

mrt_draw_grid *mrt_draw_page_grid(mrt_draw_page *page, int indent, int nrows,
                                  int ncols)
{
    size_t n = (size_t)nrows * (size_t)ncols;
    mrt_draw_grid *g = calloc(1, sizeof *g);
    if (g) {
        *g = (mrt_draw_grid){
            .nrows = nrows,
            .ncols = ncols,
            .cell = calloc(n, sizeof(char *)),
            .row_label = calloc((size_t)nrows, sizeof(char *)),
            .col_label = calloc((size_t)ncols, sizeof(char *)),
            .row_weight = malloc((size_t)nrows * sizeof(double)),
            .col_weight = malloc((size_t)ncols * sizeof(double)),
            .shade = malloc(n * sizeof(int))};
    }
    mrt_draw_item *it = NULL;
    if (g && g->cell && g->row_label && g->col_label && g->row_weight &&
        g->col_weight && g->shade)
        it = add_item(page);
    if (!it) {
        page->failed = 1;
        grid_free(g);
        return NULL;
    }
    for (int r = 0; r < nrows; r++)
        g->row_weight[r] = 1;
    for (int c = 0; c < ncols; c++)
        g->col_weight[c] = 1;
    for (size_t i = 0; i < n; i++)
        g->shade[i] = -1;
    it->grid = g;
    it->indent = indent;
    return g;
}

void mrt_draw_grid_set(mrt_draw_page *page, mrt_draw_grid *g, int row, int col,
                       const char *fmt, ...)
{
    if (!g)
        return;
    va_list ap;
    va_start(ap, fmt);
    char *s = vformat(page, fmt, ap);
    va_end(ap);
    char **slot = row < 0   ? &g->col_label[col]
                  : col < 0 ? &g->row_label[row]
                            : &g->cell[row * g->ncols + col];
    free(*slot);
    *slot = s;
}

void mrt_draw_page_free(mrt_draw_page *page)
{
    for (int i = 0; i < page->n; i++) {
        free(page->item[i].text);
        grid_free(page->item[i].grid);
    }
    free(page->item);
    *page = (mrt_draw_page){0};
}
