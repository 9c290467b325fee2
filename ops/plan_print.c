/*
 * plan_print.c — the plan as text for people.  Deterministic: the same
 * plan prints the same bytes, so plans can be golden-tested.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "memory.h"
#include "plan.h"
#include "schedule.h"

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
    if (s->kind == MRT_STEP_SENDRECV) { /* between two pipeline stages */
        put(t, " stage ");
        put_int(t, s->from_stage);
        put(t, " -> ");
        put_int(t, s->stage);
    }
    if (mrt_step_is_collective(s->kind)) {
        int nodes = p->profile.ranks_per_node > 0;
        put(t, " (group ");
        put_int(t, s->group);
        if (nodes) {
            put(t, ", ");
            put(t, mrt_tier_name(
                       mrt_cost_span(&p->profile, &p->mesh, s->axes).tier));
            put(t, s->hier ? ", hierarchical" : "");
        }
        put(t, ")   ");
        put_int(t, s->bytes);
        put(t, " bytes/rank, ");
        if (in->dtype != p->dtype) { /* (mixed precision: its own type) */
            put(t, mrt_dtype_name(in->dtype));
            put(t, ", ");
        }
        if (nodes) {
            put_int(t, s->bytes_inter);
            put(t, " across nodes, ");
        }
        put(t, "wire ");
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

/* With a profile that places ranks on nodes: the tiers, and where each
 * mesh axis's groups sit. */
static void print_nodes(const mrt_plan *p, FILE *f)
{
    const mrt_profile *pr = &p->profile;
    if (pr->ranks_per_node <= 0)
        return;
    fprintf(f,
            "nodes of %lld ranks: intra-node link %.3g us, %.4g GB/s; "
            "inter-node %.3g us, %.4g GB/s; axes:",
            (long long)pr->ranks_per_node, pr->intra.latency_s * 1e6,
            pr->intra.bandwidth_Bps / 1e9, pr->inter.latency_s * 1e6,
            pr->inter.bandwidth_Bps / 1e9);
    for (int a = 0; a < p->mesh.naxes; a++)
        fprintf(f, " %s %s", p->mesh.name[a],
                mrt_tier_name(mrt_cost_span(pr, &p->mesh, 1u << a).tier));
    fputc('\n', f);
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
    print_nodes(p, f);
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
    if (p->pipe.stages > 1 && o->stage >= 0) { /* its pipeline stage */
        put(tx, " on stage ");
        put_int(tx, o->stage);
    }
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
    mrt_plan_blocks_print(p, f);
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
    if (p->profile.ranks_per_node > 0) {
        int64_t inter = mrt_plan_bytes_inter(p);
        fprintf(f,
                "  by tier   %" PRId64 " bytes/rank inside nodes, %" PRId64
                " across nodes\n",
                t->comm_bytes - inter, inter);
    }
    char axes[256];
    for (unsigned m = 1; m < (1u << p->mesh.naxes); m++)
        if (p->axis_bytes[m])
            fprintf(f, "  over %-16s %" PRId64 " bytes/rank\n",
                    mrt_mesh_axes_str(&p->mesh, m, axes, sizeof axes),
                    p->axis_bytes[m]);
}

/* ---- repeated blocks: instances that plan alike, summarized ------- */

static int same_layout(const mrt_layout *a, const mrt_layout *b)
{
    if (a->ndims != b->ndims || a->partial != b->partial)
        return 0;
    for (int d = 0; d < a->ndims; d++) {
        if (a->dim[d] != b->dim[d] || a->size[d] != b->size[d] ||
            a->naxes[d] != b->naxes[d])
            return 0;
        for (int k = 0; k < a->naxes[d]; k++)
            if (a->axes[d][k] != b->axes[d][k])
                return 0;
    }
    return 1;
}

/* 1 if ops i and j have the same steps: kinds, axes, layouts, bytes. */
static int same_op(const mrt_plan *p, int i, int j)
{
    const mrt_plan_op *a = &p->op[i], *b = &p->op[j];
    if (a->phase != b->phase || strcmp(a->what, b->what) ||
        a->nsteps != b->nsteps || a->comm_bytes != b->comm_bytes)
        return 0;
    for (int k = 0; k < a->nsteps; k++) {
        const mrt_step *x = &p->step[a->first_step + k];
        const mrt_step *y = &p->step[b->first_step + k];
        if (x->kind != y->kind || x->axes != y->axes || x->bytes != y->bytes ||
            x->max != y->max || x->fn != y->fn ||
            !same_layout(&p->value[x->in].layout, &p->value[y->in].layout) ||
            !same_layout(&p->value[x->out].layout, &p->value[y->out].layout))
            return 0;
    }
    return 1;
}

/* The ops of one block and phase, by instance: instance L's ops are
 * idx[off[L] .. off[L + 1]), in plan order; order[0..nl) the instances
 * in the order their first op comes. */
typedef struct by_layer {
    int nl, *off, *idx, *order, norder;
} by_layer;

static int gather(const mrt_plan *p, int b, int ph, by_layer *g)
{
    int nl = 0;
    for (int i = 0; i < p->nops; i++)
        if (p->op[i].block == b && (int)p->op[i].phase == ph &&
            p->op[i].layer >= nl)
            nl = p->op[i].layer + 1;
    g->nl = nl;
    g->norder = 0;
    g->off = calloc((size_t)nl + 2, sizeof(int));
    g->idx = malloc(((size_t)p->nops + 1) * sizeof(int));
    g->order = malloc(((size_t)nl + 1) * sizeof(int));
    int *fill = calloc((size_t)nl + 1, sizeof(int));
    if (!g->off || !g->idx || !g->order || !fill) {
        free(fill);
        return -1;
    }
    for (int i = 0; i < p->nops; i++)
        if (p->op[i].block == b && (int)p->op[i].phase == ph &&
            p->op[i].layer >= 0 && !g->off[p->op[i].layer + 1]++)
            g->order[g->norder++] = p->op[i].layer;
    for (int l = 0; l < nl; l++)
        g->off[l + 1] += g->off[l];
    for (int i = 0; i < p->nops; i++)
        if (p->op[i].block == b && (int)p->op[i].phase == ph &&
            p->op[i].layer >= 0) {
            int l = p->op[i].layer;
            g->idx[g->off[l] + fill[l]++] = i;
        }
    free(fill);
    return 0;
}

/* 1 if instances l and m of g plan alike, op by op. */
static int same_layer(const mrt_plan *p, const by_layer *g, int l, int m)
{
    int n = g->off[l + 1] - g->off[l];
    if (n != g->off[m + 1] - g->off[m])
        return 0;
    for (int k = 0; k < n; k++)
        if (!same_op(p, g->idx[g->off[l] + k], g->idx[g->off[m] + k]))
            return 0;
    return 1;
}

/* One summary line: instances first..last (n of them) plan as ref. */
typedef struct summary {
    int n, first, last, ref, phase, block;
    int64_t steps, bytes;
} summary;

/* The instances of block b in phase ph that plan as the last one
 * printed before them (in the order they come): their ops skipped
 * (skip[op] = 1), a summary line at the first op of each group of them
 * (line[op]). */
static int plan_summaries(const mrt_plan *p, int b, int ph, char *skip,
                          summary *line)
{
    by_layer g = {0};
    int st = gather(p, b, ph, &g);
    int ref = g.norder ? g.order[0] : 0;
    for (int k = 1; !st && k < g.norder;) {
        int l = g.order[k], n = 0;
        if (!same_layer(p, &g, ref, l)) { /* printed: the next reference */
            ref = l;
            k++;
            continue;
        }
        summary *s = &line[g.idx[g.off[l]]];
        *s = (summary){.first = l, .ref = ref, .phase = ph, .block = b};
        for (int j = g.off[ref]; j < g.off[ref + 1]; j++) {
            s->steps += p->op[g.idx[j]].nsteps;
            s->bytes += p->op[g.idx[j]].comm_bytes;
        }
        for (; k < g.norder && same_layer(p, &g, ref, g.order[k]); k++, n++) {
            s->last = g.order[k];
            for (int j = g.off[s->last]; j < g.off[s->last + 1]; j++)
                skip[g.idx[j]] = 1;
        }
        s->n = n;
    }
    free(g.off);
    free(g.idx);
    free(g.order);
    return st;
}

static void print_summary(const mrt_plan *p, const summary *s, text *tx)
{
    const char *name = p->block_name[s->block];
    char buf[4 * MRT_NAME_MAX + 160];
    const char *phase = s->phase == MRT_PHASE_BACKWARD ? ", backward"
                        : s->phase == MRT_PHASE_UPDATE ? ", update"
                                                       : "";
    int len = s->n == 1 ? snprintf(buf, sizeof buf, "\n%s%d (layer %d%s)", name,
                                   s->first, s->first, phase)
                        : snprintf(buf, sizeof buf,
                                   "\n%s%d–%s%d (%d instances, layers %d–%d%s)",
                                   name, s->first, name, s->last, s->n,
                                   s->first, s->last, phase);
    snprintf(buf + len, sizeof buf - (size_t)len,
             ": as %s%d, each %" PRId64 " steps, %" PRId64 " bytes/rank\n",
             name, s->ref, s->steps, s->bytes);
    put(tx, buf);
}

/* Every op, with the instances that plan alike summarized; returns the
 * collectives. */
static int64_t print_ops(const mrt_plan *p, text *tx)
{
    int64_t ncoll = 0;
    char *skip = calloc((size_t)p->nops + 1, 1);
    summary *line = calloc((size_t)p->nops + 1, sizeof *line);
    int st = !skip || !line; /* out of memory: every op printed */
    for (int b = 0; !st && b < p->nblocks; b++)
        for (int ph = 0; !st && ph < MRT_PHASE_COUNT; ph++)
            st = plan_summaries(p, b, ph, skip, line);
    for (int i = 0; i < p->nops; i++) {
        if (!st && line[i].n)
            print_summary(p, &line[i], tx);
        if (st || !skip[i]) {
            ncoll += print_op(p, i, tx);
            continue;
        }
        const mrt_plan_op *o = &p->op[i];
        for (int k = o->first_step; k < o->first_step + o->nsteps; k++)
            ncoll += mrt_step_is_collective(p->step[k].kind);
    }
    free(skip);
    free(line);
    return ncoll;
}

void mrt_plan_print(const mrt_plan *p, FILE *f)
{
    if (!p || !f)
        return;
    print_header(p, f);
    text tx = {.f = f};
    print_inputs(p, &tx);
    int64_t ncoll = print_ops(p, &tx);
    flush(&tx);
    print_totals(p, ncoll, f);
    mrt_memory_print(p, f);
    mrt_schedule_print(p, f);
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
