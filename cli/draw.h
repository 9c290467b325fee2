/*
 * draw.h — pictures for terminals and for SVG: a page of lines of text
 * and grids of cells, drawn as text (Unicode box drawing, or plain
 * ASCII) or as one SVG document.  No MPI, no meshrt types: `meshrt show`
 * (show_value.c) fills pages with sharding pictures, and a grid is what
 * a pipeline schedule (timestep x stage) or a memory timeline will be
 * drawn with too.
 *
 * A grid has rows and columns, an optional label for each row and each
 * column, and one text per cell (lines split at '\n', ASCII, so text
 * widths are character counts).  Row and column weights make an SVG
 * grid's cells proportional to them (a block of 3 elements wider than
 * one of 2), text widths permitting; a cell's shade picks its fill
 * colour (-1: none), so cells of one group look alike.
 */
#ifndef MRT_DRAW_H
#define MRT_DRAW_H

#include <stdio.h>

typedef struct mrt_draw_grid {
    int nrows, ncols;
    char **cell;        /* [nrows * ncols], row major, owned */
    char **row_label;   /* [nrows] or NULL entries, owned */
    char **col_label;   /* [ncols] */
    double *row_weight; /* [nrows], > 0 */
    double *col_weight; /* [ncols] */
    int *shade;         /* [nrows * ncols], -1: none */
} mrt_draw_grid;

typedef struct mrt_draw_item {
    char *text;          /* a line of text (owned), or NULL: */
    mrt_draw_grid *grid; /* a grid (owned) */
    int indent;          /* in characters */
} mrt_draw_item;

typedef struct mrt_draw_page {
    int n, cap;
    mrt_draw_item *item;
    int failed; /* out of memory at some point: the page is cut short */
} mrt_draw_page;

/* A new grid of nrows x ncols empty cells, weights 1, no shades, added
 * to page (which owns it) after a line of indent; NULL when out of
 * memory (page->failed is set). */
mrt_draw_grid *mrt_draw_page_grid(mrt_draw_page *page, int indent, int nrows,
                                  int ncols);
/* A line of text, printf style. */
void mrt_draw_page_line(mrt_draw_page *page, int indent, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Sets a cell's text, or a label (row < 0: column col's label; col < 0:
 * row row's), printf style. */
void mrt_draw_grid_set(mrt_draw_page *page, mrt_draw_grid *g, int row, int col,
                       const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void mrt_draw_page_free(mrt_draw_page *page);

/* The page as text: Unicode box drawing, or + - | with ascii. */
void mrt_draw_page_text(const mrt_draw_page *page, int ascii, FILE *f);
/* The page as one SVG 1.1 document (no scripts, no external fonts). */
void mrt_draw_page_svg(const mrt_draw_page *page, FILE *f);
/* The same without the XML declaration: an <svg> element to put inline
 * in an HTML page. */
void mrt_draw_page_svg_element(const mrt_draw_page *page, FILE *f);
/* s with &, <, >, " and ' escaped for XML and HTML (control characters
 * but tab and newline left out). */
void mrt_draw_xml_text(const char *s, FILE *f);

#endif
