/*
 * report_html.c — `compare --html FILE`: the comparison as one
 * self-contained HTML page: the table (as compare prints it), the
 * modeled-time and bytes-per-axis charts of report_svg.c, and for each
 * layout that plans, the pictures of its inputs (show_value.c), every
 * SVG inline.  Nothing is fetched: no external fonts, styles, images or
 * scripts; one inline script only marks the page as rendered
 * (data-rendered on <html>: the number of pictures), which the suite's
 * headless browser reads back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "show.h"

static void head(FILE *f, const mrt_cmp_table *t)
{
    fputs(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<title>meshrt compare ",
        f);
    mrt_draw_xml_text(t->spec, f);
    fputs("</title>\n<style>\n"
          "body { font-family: sans-serif; margin: 2em; color: #222; }\n"
          "pre { background: #f6f6f6; padding: 1em; overflow-x: auto; }\n"
          "h2 { border-bottom: 1px solid #ccc; }\n"
          "svg { display: block; margin: 0.5em 0; }\n"
          ".error { color: #a00; }\n"
          "</style>\n</head>\n<body>\n<h1>meshrt compare ",
          f);
    mrt_draw_xml_text(t->spec, f);
    fputs("</h1>\n<p>planner ", f);
    mrt_draw_xml_text(t->planner, f);
    fputs(", costs modeled with the ", f);
    mrt_draw_xml_text(t->profile, f);
    fputs(" profile</p>\n", f);
}

/* What write(f, ctx) writes, escaped (pre) or as an inline SVG element:
 * without its XML declaration. */
static void embed(FILE *f, void (*write)(FILE *, const void *), const void *ctx,
                  int pre)
{
    char *text = NULL;
    size_t size = 0;
    FILE *m = open_memstream(&text, &size);
    if (!m)
        return;
    write(m, ctx);
    if (fclose(m) != 0 || !text) {
        free(text);
        return;
    }
    const char *s = text;
    if (strncmp(s, "<?xml", 5) == 0 && strchr(s, '\n'))
        s = strchr(s, '\n') + 1;
    if (pre) {
        fputs("<pre>", f);
        mrt_draw_xml_text(s, f);
        fputs("</pre>\n", f);
    } else
        fputs(s, f);
    free(text);
}

static void table_text(FILE *f, const void *t)
{
    mrt_cmp_print_text(t, f);
}

/* The pictures of row r's inputs, or why there are none. */
static int row_pictures(FILE *f, const mrt_cmp_html *h, int r)
{
    const mrt_cmp_row *row = &h->table->row[r];
    mrt_spec *alt = NULL;
    mrt_plan *plan = NULL;
    mrt_draw_page page = {0};
    mrt_error err = {0};
    char line[MRT_CLI_ERROR_MAX];
    fputs("<h3>", f);
    mrt_draw_xml_text(row->name, f);
    fputs(" <small>(", f);
    mrt_draw_xml_text(row->mesh, f);
    fputs(")</small></h3>\n", f);
    mrt_status st = r == 0 ? mrt_plan_create(h->spec, h->opt, &plan, &err)
                           : mrt_spec_select_alternative(h->spec, row->name,
                                                         &alt, &err);
    if (!st && r > 0)
        st = mrt_plan_create(alt, h->opt, &plan, &err);
    int n = 0;
    for (int v = 0; !st && v < mrt_plan_value_count(plan); v++) {
        mrt_plan_value_info vi;
        if (mrt_plan_get_value(plan, v, &vi, NULL) || !vi.input ||
            strchr(vi.name, ':'))
            continue;
        mrt_show_value(&page, plan, v, NULL);
        mrt_draw_page_line(&page, 0, "%s", "");
        n++;
    }
    if (st) {
        fputs("<p class=\"error\">", f);
        mrt_draw_xml_text(mrt_cli_error_line(&err, line, sizeof line), f);
        fputs("</p>\n", f);
    } else if (!page.failed)
        mrt_draw_page_svg_element(&page, f);
    mrt_draw_page_free(&page);
    mrt_plan_destroy(plan);
    mrt_spec_destroy(alt);
    return n ? 1 : 0;
}

void mrt_cmp_write_html(FILE *f, const void *ctx)
{
    const mrt_cmp_html *h = ctx;
    const mrt_cmp_table *t = h->table;
    head(f, t);
    fputs("<h2>The comparison</h2>\n", f);
    embed(f, table_text, t, 1);
    fputs("<h2>Modeled time per rank</h2>\n", f);
    embed(f, mrt_cmp_write_svg, t, 0);
    fputs("<h2>Bytes per rank over each set of mesh axes</h2>\n", f);
    embed(f, mrt_cmp_write_bytes_svg, t, 0);
    fputs("<h2>How each layout spreads the inputs</h2>\n"
          "<p>Each block of a tensor with the ranks that hold it, and the "
          "mesh with the block each rank holds (<code>meshrt show SPEC "
          "--layout NAME</code> draws the same).</p>\n",
          f);
    for (int r = 0; r < t->nrows; r++)
        row_pictures(f, h, r);
    fputs("<script>\ndocument.documentElement.setAttribute('data-rendered',"
          " String(document.querySelectorAll('svg').length));\n</script>\n"
          "</body>\n</html>\n",
          f);
}
