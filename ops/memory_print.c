/*
 * memory_print.c — the memory breakdown of a plan as `plan` prints it
 * (a short table after the totals) and as `plan --json`'s "memory" object:
 * the peak per rank split by kind (memory.h) with the op where it occurs,
 * and the timeline of live bytes by kind, per op.
 *
 * The text shows the timeline at the ends of the forward pass, the
 * backward pass and the update, and at the peak; the JSON has a row per
 * op where the figures change ([op, params, ..., workspace]: an op with no
 * row has the row before it), so a 10,000-op plan stays short where its
 * layers repeat.  Every byte count is exact and per rank.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memory.h"
#include "output.h"

#define NK MRT_MEM_KIND_COUNT

/* "op 9: grad:r = einsum (backward), layer2 of blocks" into buf. */
static const char *op_label(const mrt_plan *p, int i, char *buf, size_t size)
{
    if (i < 0) {
        snprintf(buf, size, "no op");
        return buf;
    }
    const mrt_plan_op *o = &p->op[i];
    int n = snprintf(buf, size, "op %d: %s = %s%s", i,
                     p->tensor_name[p->value[o->out_value].tensor], o->what,
                     o->phase == MRT_PHASE_BACKWARD ? " (backward)"
                     : o->phase == MRT_PHASE_UPDATE ? " (update)"
                                                    : "");
    if (o->block >= 0 && o->block < p->nblocks && n >= 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, ", %s instance %d",
                 p->block_name[o->block], o->layer);
    return buf;
}

/* The last op of phase ph, or -1. */
static int last_of_phase(const mrt_plan *p, int ph)
{
    for (int i = p->nops - 1; i >= 0; i--)
        if ((int)p->op[i].phase == ph)
            return i;
    return -1;
}

static void print_row(const char *what, const int64_t row[NK], FILE *f)
{
    int64_t total = 0;
    fprintf(f, "  %-24s", what);
    for (int c = 0; c < NK; c++) {
        fprintf(f, " %12" PRId64, row[c]);
        total += row[c];
    }
    fprintf(f, " %13" PRId64 "\n", total);
}

/* The rows of the text: the end of each phase and the peak, by op. */
static void print_timeline(const mrt_plan *p, int peak_op,
                           const int64_t (*rows)[NK], FILE *f)
{
    static const char *const end[] = {"end of forward", "end of backward",
                                      "end of update"};
    fprintf(f, "  %-24s", "live at");
    for (int c = 0; c < NK; c++)
        fprintf(f, " %12s", mrt_memory_kind_name((mrt_memory_kind)c));
    fprintf(f, " %13s\n", "total");
    int at[4], what[4], n = 0;
    for (int ph = 0; ph < MRT_PHASE_COUNT; ph++)
        if ((at[n] = last_of_phase(p, ph)) >= 0)
            what[n++] = ph;
    for (int k = 0, peak_done = peak_op < 0; k <= n; k++) {
        char buf[64];
        if (!peak_done && (k == n || peak_op <= at[k])) {
            snprintf(buf, sizeof buf, "peak (op %d)", peak_op);
            print_row(buf, rows[peak_op], f);
            peak_done = 1;
        }
        if (k < n && at[k] != peak_op) {
            snprintf(buf, sizeof buf, "%s (op %d)", end[what[k]], at[k]);
            print_row(buf, rows[at[k]], f);
        }
    }
}

void mrt_memory_print(const mrt_plan *p, FILE *f)
{
    mrt_plan_memory m;
    int64_t(*rows)[NK] = calloc((size_t)p->nops + 1, sizeof *rows);
    if (!rows || mrt_plan_get_memory(p, -1, &m, NULL) != MRT_OK ||
        mrt_plan_memory_timeline(p, -1, rows) < 0) {
        free(rows);
        fprintf(f, "memory by kind: out of memory\n");
        return;
    }
    char buf[4 * MRT_NAME_MAX + 64];
    fprintf(f, "memory per rank at the peak (%s):\n",
            op_label(p, m.peak_op, buf, sizeof buf));
    for (int c = 0; c < NK; c++)
        fprintf(f, "%s%s %" PRId64, c ? ", " : "  ",
                mrt_memory_kind_name((mrt_memory_kind)c), m.by_kind[c]);
    fprintf(f,
            "\n  = %" PRId64 " live + %" PRId64 " fragmentation = peak %" PRId64
            "\n  fragmentation: %" PRId64 " packing (arena %" PRId64
            " over the values live at the peak), %" PRId64
            " workspace and MPI scratch held apart\n",
            m.live_peak, m.fragmentation, m.peak, m.packing, m.arena,
            m.fragmentation - m.packing);
    if (m.device_memory > 0)
        fprintf(f,
                "  device memory %" PRId64 " bytes/rank: %s (%" PRId64
                " bytes %s)\n",
                m.device_memory, m.fits ? "fits" : "does not fit",
                m.fits ? m.device_memory - m.peak : m.peak - m.device_memory,
                m.fits ? "to spare" : "over");
    if (p->nops > 0)
        print_timeline(p, m.peak_op, (const int64_t(*)[NK])rows, f);
    free(rows);
}

static void json_kinds(const int64_t v[NK], FILE *f)
{
    fputc('{', f);
    for (int c = 0; c < NK; c++)
        fprintf(f, "%s\"%s\": %" PRId64, c ? ", " : "",
                mrt_memory_kind_name((mrt_memory_kind)c), v[c]);
    fputc('}', f);
}

static void json_timeline(const mrt_plan *p, const int64_t (*rows)[NK], FILE *f)
{
    fputs("{\"columns\": [\"op\"", f);
    for (int c = 0; c < NK; c++)
        fprintf(f, ", \"%s\"", mrt_memory_kind_name((mrt_memory_kind)c));
    fputs("],\n    \"rows\": [", f);
    for (int i = 0, n = 0; i < p->nops; i++) {
        if (i > 0 && !memcmp(rows[i], rows[i - 1], sizeof rows[i]))
            continue;
        fprintf(f, "%s[%d", n++ ? (n % 4 ? ", " : ",\n      ") : "", i);
        for (int c = 0; c < NK; c++)
            fprintf(f, ", %" PRId64, rows[i][c]);
        fputc(']', f);
    }
    fputs("]}", f);
}

void mrt_memory_print_json(const mrt_plan *p, FILE *f)
{
    mrt_plan_memory m;
    int64_t(*rows)[NK] = calloc((size_t)p->nops + 1, sizeof *rows);
    if (!rows || mrt_plan_get_memory(p, -1, &m, NULL) != MRT_OK ||
        mrt_plan_memory_timeline(p, -1, rows) < 0) {
        free(rows);
        fputs("null", f);
        return;
    }
    fprintf(f,
            "{\"peak\": %" PRId64 ", \"live_peak\": %" PRId64
            ", \"fragmentation\": %" PRId64 ", \"packing\": %" PRId64
            ", \"arena\": %" PRId64 ", \"values_peak\": %" PRId64
            ", \"peak_step\": %d, \"peak_op\": %d, \"peak_user_op\": %d, "
            "\"peak_tensor\": ",
            m.peak, m.live_peak, m.fragmentation, m.packing, m.arena,
            m.values_peak, m.peak_step, m.peak_op, m.user);
    mrt_json_string(f, m.peak_op >= 0 ? mrt_plan_op_name(p, m.peak_op) : "");
    fprintf(f, ", \"device_memory\": %" PRId64 ", \"fits\": %s",
            m.device_memory, m.fits ? "true" : "false");
    fputs(",\n   \"by_kind\": ", f);
    json_kinds(m.by_kind, f);
    fputs(",\n   \"timeline\": ", f);
    json_timeline(p, (const int64_t(*)[NK])rows, f);
    fputc('}', f);
    free(rows);
}
