/*
 * plan_print.c — the plan as text for people.  Deterministic: the same
 * plan prints the same bytes, so plans can be golden-tested.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "checked.h"
#include "plan.h"

/* A modeled time in readable units; a static buffer per call site is
 * enough for one fprintf. */
static const char *fmt_time(double t)
{
    static char buf[4][32];
    static int k;
    char *b = buf[k++ % 4];
    if (t >= 1)
        snprintf(b, 32, "%.3g s", t);
    else if (t >= 1e-3)
        snprintf(b, 32, "%.3g ms", t * 1e3);
    else
        snprintf(b, 32, "%.3g us", t * 1e6);
    return b;
}

/* Text built in memory and written a block at a time: a plan of
 * 100,000s of ops printed with an fprintf per piece spent most of its
 * time parsing formats.  Numbers that are not integers still go through
 * snprintf, in the plan's formats. */
typedef struct text {
    FILE *f;
    int n;
    char b[8192];
    /* numbers already formatted: a long program prints the same few
     * figures (a layer's flops, a step's time) thousands of times */
    struct {
        const char *fmt; /* NULL: empty */
        double v;
        char s[32];
    } seen[256];
} text;

static void flush(text *t)
{
    fwrite(t->b, 1, (size_t)t->n, t->f);
    t->n = 0;
}

static void put(text *t, const char *s)
{
    size_t len = strlen(s);
    if ((size_t)t->n + len > sizeof t->b) {
        flush(t);
        if (len > sizeof t->b) {
            fwrite(s, 1, len, t->f);
            return;
        }
    }
    memcpy(t->b + t->n, s, len);
    t->n += (int)len;
}

/* s left-aligned in width characters ("%-*s"). */
static void put_padded(text *t, const char *s, int width)
{
    static const char spaces[] = "                ";
    put(t, s);
    for (int n = (int)strlen(s); n < width;) {
        int k = width - n < 16 ? width - n : 16;
        put(t, spaces + 16 - k);
        n += k;
    }
}

static void put_int(text *t, int64_t v)
{
    char d[24];
    int n = (int)sizeof d;
    uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
    d[--n] = '\0';
    do
        d[--n] = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0)
        d[--n] = '-';
    put(t, d + n);
}

/* v in printf format fmt, a single conversion of a double ("%.4g"). */
static void put_num(text *t, const char *fmt, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    bits ^= (uint64_t)(uintptr_t)fmt;
    bits *= 0x9e3779b97f4a7c15ull;
    int k = (int)(bits >> 56);
    if (t->seen[k].fmt == fmt && memcmp(&t->seen[k].v, &v, sizeof v) == 0) {
        put(t, t->seen[k].s);
        return;
    }
    char d[384]; /* %.0f of the largest double */
    int n = snprintf(d, sizeof d, fmt, v);
    if (n > 0 && n < (int)sizeof t->seen[k].s) {
        t->seen[k].fmt = fmt;
        t->seen[k].v = v;
        memcpy(t->seen[k].s, d, (size_t)n + 1);
    }
    put(t, d);
}

/* A modeled time, as fmt_time writes it. */
static void put_time(text *t, double v)
{
    if (v >= 1) {
        put_num(t, "%.3g", v);
        put(t, " s");
    } else if (v >= 1e-3) {
        put_num(t, "%.3g", v * 1e3);
        put(t, " ms");
    } else {
        put_num(t, "%.3g", v * 1e6);
        put(t, " us");
    }
}

static void print_layout(const mrt_plan *p, const mrt_layout *l, text *t)
{
    char buf[512];
    put(t, mrt_layout_str(l, &p->mesh, p->dim_names, buf, sizeof buf));
}

static void print_shard(const mrt_value *v, text *t)
{
    for (int i = 0; i < v->layout.ndims; i++) {
        put(t, i ? "x" : "");
        put_int(t, v->local[i]);
    }
}

static void print_mesh(const mrt_mesh *m, FILE *f)
{
    fputc('{', f);
    for (int i = 0; i < m->naxes; i++)
        fprintf(f, "%s%s: %" PRId64, i ? ", " : "", m->name[i], m->size[i]);
    fprintf(f, "} (%" PRId64 " rank%s)", m->nranks, m->nranks == 1 ? "" : "s");
}

static void print_kernel(const mrt_step *s, text *t)
{
    const mrt_einsum_shape *c = &s->cls;
    put(t, "    einsum          gemm M=");
    put_int(t, c->size[MRT_IDX_M]);
    put(t, " N=");
    put_int(t, c->size[MRT_IDX_N]);
    put(t, " K=");
    put_int(t, c->size[MRT_IDX_K]);
    put(t, " batch=");
    put_int(t, c->size[MRT_IDX_BATCH]);
    if (c->n[MRT_IDX_SUM_A] || c->n[MRT_IDX_SUM_B]) {
        put(t, " (sums away ");
        put_int(t, c->size[MRT_IDX_SUM_A]);
        put(t, "x");
        put_int(t, c->size[MRT_IDX_SUM_B]);
        put(t, ")");
    }
    put(t, "   ");
    put_num(t, "%.4g", s->flops);
    put(t, " flops/rank   ");
    put_time(t, s->time_s);
    put(t, "\n");
}

/* How far the op's traffic is from what any plan must move. */
static void print_bound(const mrt_plan *p, const mrt_plan_op *o, text *t)
{
    if (o->lower_bound_bytes < 0)
        return;
    double wire = 0;
    for (int k = o->first_step; k < o->first_step + o->nsteps; k++)
        wire += p->step[k].cost.wire_bytes;
    if (o->lower_bound_bytes > 0 && o->bound_replicated) {
        put(t, "    lower bound ");
        put_num(t, "%.0f", o->lower_bound_bytes);
        put(t, " bytes/rank on the wire for operands stored once; its inputs "
               "start replicated, and this plan moves ");
        put_num(t, "%.0f", wire);
        put(t, "\n");
    } else if (o->lower_bound_bytes > 0) {
        put(t, "    lower bound ");
        put_num(t, "%.0f", o->lower_bound_bytes);
        put(t, " bytes/rank on the wire; this plan ");
        put_num(t, "%.0f", wire);
        put(t, " (");
        put_num(t, "%.2f", wire / o->lower_bound_bytes);
        put(t, "x)\n");
    } else {
        put(t, "    lower bound 0 bytes/rank (the work splits with no "
               "communication); this plan ");
        put_num(t, "%.0f", wire);
        put(t, "\n");
    }
}

static void print_step(const mrt_plan *p, const mrt_step *s, text *t)
{
    if (s->kind == MRT_STEP_EINSUM) {
        print_kernel(s, t);
        return;
    }
    if (!mrt_step_is_collective(s->kind) && s->kind != MRT_STEP_SLICE) {
        put(t, "    ");
        put_padded(t,
                   s->kind == MRT_STEP_MAP ? mrt_map_name(s->fn)
                                           : mrt_step_kind_name(s->kind),
                   15);
        put(t, " ");
        put(t, p->tensor_name[p->value[s->out].tensor]);
        put(t, "   ");
        put_time(t, s->time_s);
        put(t, "\n");
        return;
    }
    const mrt_value *in = &p->value[s->in], *out = &p->value[s->out];
    char axes[256];
    put(t, "    ");
    put_padded(t, s->max ? "allreduce(max)" : mrt_step_kind_name(s->kind), 15);
    put(t, " ");
    put_padded(t, p->tensor_name[in->tensor], 6);
    put(t, " over ");
    put(t, mrt_mesh_axes_str(&p->mesh, s->axes, axes, sizeof axes));
    if (mrt_step_is_collective(s->kind)) {
        put(t, " (group ");
        put_int(t, s->group);
        put(t, ")   ");
        put_int(t, s->bytes);
        put(t, " bytes/rank, wire ");
        put_num(t, "%.0f", s->cost.wire_bytes);
        put(t, " in ");
        put_int(t, s->cost.messages);
        put(t, s->cost.messages == 1 ? " msg, " : " msgs, ");
        put_time(t, s->time_s);
    }
    if (s->wait >= 0 && s->wait < p->nsteps) {
        put(t, "; in the background until op ");
        put_int(t, p->step[s->wait].op);
        put(t, " (");
        put(t, p->tensor_name[p->value[p->op[p->step[s->wait].op].out_value]
                                  .tensor]);
        put(t, ") reads it");
    } else if (s->wait >= 0) {
        put(t, "; in the background until the end");
    }
    put(t, "\n      ");
    print_layout(p, &in->layout, t);
    put(t, " -> ");
    print_layout(p, &out->layout, t);
    put(t, "\n");
}

/* The first lines: the spec, the mesh, the planner and the profile. */
static void print_header(const mrt_plan *p, FILE *f)
{
    if (!p || !f)
        return;
    fprintf(f, "plan for %s on mesh ", p->spec_path);
    print_mesh(&p->mesh, f);
    fprintf(f, ", %s\nplanner %s%s; costs modeled with the %s profile\n",
            mrt_dtype_name(p->dtype), mrt_planner_name(p->planner),
            p->fell_back
                ? " (the fixed rule beat the cost-aware choice on this program)"
                : "",
            p->profile.source);
    if (p->ignored[0])
        fprintf(f,
                "(meshtf has no per-tensor layouts: the global rules "
                "replace those of %s, so this plan computes them in "
                "other layouts than the spec asks)\n",
                p->ignored);
    fprintf(f, "\ninputs (global layout, shard per rank):\n");
}

static void print_inputs(const mrt_plan *p, text *tx)
{
    for (int i = 0; i < p->ninputs; i++) {
        int in = p->input[i];
        const mrt_value *val = &p->value[p->tensor_value[in]];
        put(tx, "  ");
        put_padded(tx, p->tensor_name[in], 8);
        put(tx, " ");
        print_layout(p, &val->layout, tx);
        put(tx, "  shard ");
        print_shard(val, tx);
        put(tx, "\n");
    }
}

/* Op i, its steps and its figures; returns how many collectives. */
static int64_t print_op(const mrt_plan *p, int i, text *tx)
{
    const mrt_plan_op *o = &p->op[i];
    const mrt_value *res = &p->value[o->out_value];
    int64_t ncoll = 0;
    put(tx, "\nop ");
    put_int(tx, i);
    put(tx, ": ");
    put(tx, p->tensor_name[res->tensor]);
    put(tx, " = ");
    put(tx, o->what);
    put(tx, o->phase == MRT_PHASE_BACKWARD ? " (backward)"
            : o->phase == MRT_PHASE_UPDATE ? " (update)"
                                           : "");
    put(tx, "  ");
    print_layout(p, &res->layout, tx);
    put(tx, "  shard ");
    print_shard(res, tx);
    put(tx, "\n");
    for (int k = o->first_step; k < o->first_step + o->nsteps; k++) {
        print_step(p, &p->step[k], tx);
        ncoll += mrt_step_is_collective(p->step[k].kind);
    }
    put(tx, "    = ");
    put_int(tx, o->comm_bytes);
    put(tx, " bytes/rank, ");
    put_num(tx, "%.4g", o->flops);
    put(tx, " flops/rank, ");
    put_time(tx, o->time_s);
    put(tx, " modeled\n");
    print_bound(p, o, tx);
    return ncoll;
}

/* The totals per rank, per phase and per set of axes. */
static void print_totals(const mrt_plan *p, int64_t ncoll, FILE *f)
{
    const mrt_plan_totals *t = &p->totals;
    fprintf(f,
            "\ntotals per rank: %" PRId64 " bytes handed to MPI in %" PRId64
            " collective%s (%.0f on the wire, %" PRId64 " message%s), "
            "%.4g flops\n",
            t->comm_bytes, ncoll, ncoll == 1 ? "" : "s", t->wire_bytes,
            t->messages, t->messages == 1 ? "" : "s", t->flops);
    int64_t even;
    if (mrt_checked_mul(t->comm_bytes, p->mesh.nranks, &even) ||
        t->comm_bytes_total != even)
        fprintf(f,
                "uneven shards: per-rank figures are the largest rank's "
                "(rank 0); all %" PRId64 " ranks hand %" PRId64 " bytes "
                "to MPI together\n",
                p->mesh.nranks, t->comm_bytes_total);
    fprintf(f,
            "modeled time %s = communication %s + compute %s; "
            "peak memory %" PRId64 " bytes/rank\n",
            fmt_time(t->time_s), fmt_time(t->comm_time_s),
            fmt_time(t->compute_time_s), t->peak_memory);
    if (t->phase_time_s[1] > 0 || t->phase_time_s[2] > 0) {
        static const char *const phase[] = {"forward", "backward", "update"};
        for (int ph = 0; ph < 3; ph++)
            fprintf(f,
                    "  %-9s %" PRId64 " bytes/rank in %" PRId64
                    " collectives (%.0f on the wire), %s modeled\n",
                    phase[ph], t->phase_comm_bytes[ph],
                    t->phase_collectives[ph], t->phase_wire_bytes[ph],
                    fmt_time(t->phase_time_s[ph]));
    }
    char axes[256];
    for (unsigned m = 1; m < (1u << p->mesh.naxes); m++)
        if (p->axis_bytes[m])
            fprintf(f, "  over %-16s %" PRId64 " bytes/rank\n",
                    mrt_mesh_axes_str(&p->mesh, m, axes, sizeof axes),
                    p->axis_bytes[m]);
}

void mrt_plan_print(const mrt_plan *p, FILE *f)
{
    if (!p || !f)
        return;
    print_header(p, f);
    text tx = {.f = f};
    print_inputs(p, &tx);
    int64_t ncoll = 0;
    for (int i = 0; i < p->nops; i++)
        ncoll += print_op(p, i, &tx);
    flush(&tx);
    print_totals(p, ncoll, f);
}

void mrt_plan_print_explain(const mrt_plan *p, FILE *f)
{
    if (!p || !f)
        return;
    fprintf(f, "alternatives weighed per op (modeled time, best first):\n");
    for (int i = 0; i < p->nops; i++) {
        const mrt_plan_op *o = &p->op[i];
        fprintf(f, "\nop %d: %s  (%d alternatives)\n", i,
                p->tensor_name[p->value[o->out_value].tensor], o->nalts);
        fprintf(f, "    %-12s %-12s %-12s %14s  %s\n", "time", "comm", "kernel",
                "bytes/rank", "execution layout");
        for (int k = 0; k < o->nalts && k < 12; k++) {
            const mrt_alt *a = &p->alt[o->first_alt + k];
            fprintf(f, "  %s %-12s %-12s %-12s %14" PRId64 "  %s%s%s\n",
                    k == 0 ? "*" : " ", fmt_time(a->time_s),
                    fmt_time(a->comm_time_s), fmt_time(a->kernel_time_s),
                    a->comm_bytes, a->exec, a->keep[0] ? ", sums over " : "",
                    a->keep[0] ? a->keep : "");
        }
        if (o->nalts > 12)
            fprintf(f, "    ... %d more\n", o->nalts - 12);
    }
}
