/*
 * compare_memory.c — `meshrt compare`'s memory by kind: under the table,
 * the layouts whose peak is over the device memory (--device-memory, or
 * the machine profile's device_memory:), and with --by-kind a table of
 * each layout's peak memory per rank split by kind (meshrt.h's
 * mrt_plan_memory: the kinds and the fragmentation add up to the peak);
 * the same as each row's "memory" in compare --json.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

void mrt_cmp_print_fits(const mrt_cmp_table *t, FILE *f)
{
    int64_t dev = 0;
    int over = 0;
    for (int r = 0; r < t->nrows; r++)
        if (t->row[r].ok) {
            dev = t->row[r].memory.device_memory;
            over += !t->row[r].memory.fits;
        }
    if (dev <= 0)
        return;
    char b[64];
    fprintf(f, "device memory %s per rank: ",
            mrt_cli_fmt_bytes((double)dev, b, sizeof b));
    if (!over) {
        fputs("every layout fits\n", f);
        return;
    }
    fprintf(f, "%d layout%s do%s not fit:", over, over == 1 ? "" : "s",
            over == 1 ? "es" : "");
    for (int r = 0, n = 0; r < t->nrows; r++)
        if (t->row[r].ok && !t->row[r].memory.fits)
            fprintf(f, "%s %s", n++ ? "," : "", t->row[r].name);
    fputc('\n', f);
}

void mrt_cmp_print_memory(const mrt_cmp_table *t, FILE *f)
{
    int w = (int)strlen("layout");
    for (int r = 0; r < t->nrows; r++)
        if ((int)strlen(t->row[r].name) > w)
            w = (int)strlen(t->row[r].name);
    fprintf(f, "\npeak memory per rank by kind (bytes):\n%-*s", w, "layout");
    for (int c = 0; c < MRT_MEM_KIND_COUNT; c++)
        fprintf(f, "  %11s", mrt_memory_kind_name((mrt_memory_kind)c));
    fprintf(f, "  %13s  %12s  %s\n", "fragmentation", "peak", "peak at");
    for (int r = 0; r < t->nrows; r++) {
        const mrt_cmp_row *row = &t->row[r];
        fprintf(f, "%-*s", w, row->name);
        if (!row->ok) {
            fputs("  (not planned)\n", f);
            continue;
        }
        const mrt_plan_memory *m = &row->memory;
        for (int c = 0; c < MRT_MEM_KIND_COUNT; c++)
            fprintf(f, "  %11" PRId64, m->by_kind[c]);
        fprintf(f, "  %13" PRId64 "  %12" PRId64 "  op %d (%s)%s\n",
                m->fragmentation, m->peak, m->peak_op,
                m->phase == 0 ? "forward" : m->phase == 1 ? "backward"
                                                          : "update",
                m->fits ? "" : "  does not fit");
    }
}

void mrt_cmp_write_memory_json(const mrt_plan_memory *m, FILE *f)
{
    fputc('{', f);
    for (int c = 0; c < MRT_MEM_KIND_COUNT; c++)
        fprintf(f, "\"%s\": %" PRId64 ", ",
                mrt_memory_kind_name((mrt_memory_kind)c), m->by_kind[c]);
    fprintf(f,
            "\"fragmentation\": %" PRId64 ", \"peak\": %" PRId64
            ", \"peak_op\": %d, \"device_memory\": %" PRId64
            ", \"fits\": %s}",
            m->fragmentation, m->peak, m->peak_op, m->device_memory,
            m->fits ? "true" : "false");
}
