/*
 * plan_print.c — the plan as text for people.  Deterministic: the same
 * plan prints the same bytes, so plans can be golden-tested.
 */
#include <inttypes.h>
#include <stdio.h>

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

static void print_layout(const mrt_plan *p, const mrt_layout *l, FILE *f)
{
    char buf[512];
    fputs(mrt_layout_str(l, &p->mesh, p->dim_names, buf, sizeof buf), f);
}

static void print_shard(const mrt_value *v, FILE *f)
{
    for (int i = 0; i < v->layout.ndims; i++)
        fprintf(f, "%s%" PRId64, i ? "x" : "", v->local[i]);
}

static void print_mesh(const mrt_mesh *m, FILE *f)
{
    fputc('{', f);
    for (int i = 0; i < m->naxes; i++)
        fprintf(f, "%s%s: %" PRId64, i ? ", " : "", m->name[i], m->size[i]);
    fprintf(f, "} (%" PRId64 " rank%s)", m->nranks, m->nranks == 1 ? "" : "s");
}

static void print_kernel(const mrt_step *s, FILE *f)
{
    const mrt_einsum_shape *c = &s->cls;
    fprintf(f, "    %-15s gemm M=%" PRId64 " N=%" PRId64 " K=%" PRId64
               " batch=%" PRId64,
            "einsum", c->size[MRT_IDX_M], c->size[MRT_IDX_N],
            c->size[MRT_IDX_K], c->size[MRT_IDX_BATCH]);
    if (c->n[MRT_IDX_SUM_A] || c->n[MRT_IDX_SUM_B])
        fprintf(f, " (sums away %" PRId64 "x%" PRId64 ")",
                c->size[MRT_IDX_SUM_A], c->size[MRT_IDX_SUM_B]);
    fprintf(f, "   %.4g flops/rank   %s\n", s->flops,
            fmt_time(s->time_s));
}

/* How far the op's traffic is from what any plan must move. */
static void print_bound(const mrt_plan *p, const mrt_plan_op *o, FILE *f)
{
    if (o->lower_bound_bytes < 0)
        return;
    double wire = 0;
    for (int k = o->first_step; k < o->first_step + o->nsteps; k++)
        wire += p->step[k].cost.wire_bytes;
    if (o->lower_bound_bytes > 0 && o->bound_replicated)
        fprintf(f, "    lower bound %.0f bytes/rank on the wire for operands "
                   "stored once; its inputs start replicated, and this plan "
                   "moves %.0f\n",
                o->lower_bound_bytes, wire);
    else if (o->lower_bound_bytes > 0)
        fprintf(f, "    lower bound %.0f bytes/rank on the wire; this plan "
                   "%.0f (%.2fx)\n",
                o->lower_bound_bytes, wire, wire / o->lower_bound_bytes);
    else
        fprintf(f, "    lower bound 0 bytes/rank (the work splits with no "
                   "communication); this plan %.0f\n", wire);
}

static void print_step(const mrt_plan *p, const mrt_step *s, FILE *f)
{
    if (s->kind == MRT_STEP_EINSUM) {
        print_kernel(s, f);
        return;
    }
    if (!mrt_step_is_collective(s->kind) && s->kind != MRT_STEP_SLICE) {
        fprintf(f, "    %-15s %s   %s\n",
                s->kind == MRT_STEP_MAP ? mrt_map_name(s->fn)
                                        : mrt_step_kind_name(s->kind),
                p->tensor_name[p->value[s->out].tensor], fmt_time(s->time_s));
        return;
    }
    const mrt_value *in = &p->value[s->in], *out = &p->value[s->out];
    char axes[256];
    fprintf(f, "    %-15s %-6s over %s",
            s->max ? "allreduce(max)" : mrt_step_kind_name(s->kind),
            p->tensor_name[in->tensor],
            mrt_mesh_axes_str(&p->mesh, s->axes, axes, sizeof axes));
    if (mrt_step_is_collective(s->kind))
        fprintf(f, " (group %" PRId64 ")   %" PRId64 " bytes/rank, wire %.0f"
                   " in %" PRId64 " msg%s, %s",
                s->group, s->bytes, s->cost.wire_bytes, s->cost.messages,
                s->cost.messages == 1 ? "" : "s", fmt_time(s->time_s));
    if (s->wait >= 0 && s->wait < p->nsteps)
        fprintf(f, "; in the background until op %d (%s) reads it",
                p->step[s->wait].op,
                p->tensor_name[p->value[p->op[p->step[s->wait].op].out_value]
                                   .tensor]);
    else if (s->wait >= 0)
        fputs("; in the background until the end", f);
    fputs("\n      ", f);
    print_layout(p, &in->layout, f);
    fputs(" -> ", f);
    print_layout(p, &out->layout, f);
    fputc('\n', f);
}

void mrt_plan_print(const mrt_plan *p, FILE *f)
{
    fprintf(f, "plan for %s on mesh ", p->spec_path);
    print_mesh(&p->mesh, f);
    fprintf(f, ", %s\nplanner %s%s; costs modeled with the %s profile\n",
            mrt_dtype_name(p->dtype),
            p->planner == MRT_PLANNER_MESHTF ? "meshtf" : "auto",
            p->fell_back ? " (the fixed rule beat the search on this program)"
                         : "",
            p->profile.source);
    if (p->ignored[0])
        fprintf(f, "(meshtf has no per-tensor layouts: the global rules "
                   "replace those of %s, so this plan computes them in "
                   "other layouts than the spec asks)\n", p->ignored);
    fprintf(f, "\ninputs (global layout, shard per rank):\n");
    for (int i = 0; i < p->ninputs; i++) {
        int t = p->input[i];
        const mrt_value *val = &p->value[p->tensor_value[t]];
        fprintf(f, "  %-8s ", p->tensor_name[t]);
        print_layout(p, &val->layout, f);
        fputs("  shard ", f);
        print_shard(val, f);
        fputc('\n', f);
    }
    int64_t ncoll = 0;
    for (int i = 0; i < p->nops; i++) {
        const mrt_plan_op *o = &p->op[i];
        const mrt_value *res = &p->value[o->out_value];
        fprintf(f, "\nop %d: %s = %s%s  ", i, p->tensor_name[res->tensor],
                o->what, o->phase == MRT_PHASE_BACKWARD ? " (backward)"
                         : o->phase == MRT_PHASE_UPDATE ? " (update)" : "");
        print_layout(p, &res->layout, f);
        fputs("  shard ", f);
        print_shard(res, f);
        fputc('\n', f);
        for (int k = o->first_step; k < o->first_step + o->nsteps; k++) {
            print_step(p, &p->step[k], f);
            ncoll += mrt_step_is_collective(p->step[k].kind);
        }
        fprintf(f, "    = %" PRId64 " bytes/rank, %.4g flops/rank, %s modeled\n",
                o->comm_bytes, o->flops, fmt_time(o->time_s));
        print_bound(p, o, f);
    }
    const mrt_plan_totals *t = &p->totals;
    fprintf(f, "\ntotals per rank: %" PRId64 " bytes handed to MPI in %" PRId64
               " collective%s (%.0f on the wire, %" PRId64 " message%s), "
               "%.4g flops\n",
            t->comm_bytes, ncoll, ncoll == 1 ? "" : "s", t->wire_bytes,
            t->messages, t->messages == 1 ? "" : "s", t->flops);
    fprintf(f, "modeled time %s = communication %s + compute %s; "
               "peak memory %" PRId64 " bytes/rank\n",
            fmt_time(t->time_s), fmt_time(t->comm_time_s),
            fmt_time(t->compute_time_s), t->peak_memory);
    if (t->phase_time_s[1] > 0 || t->phase_time_s[2] > 0) {
        static const char *const phase[] = {"forward", "backward", "update"};
        for (int ph = 0; ph < 3; ph++)
            fprintf(f, "  %-9s %" PRId64 " bytes/rank in %" PRId64
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

void mrt_plan_print_explain(const mrt_plan *p, FILE *f)
{
    fprintf(f, "alternatives weighed per op (modeled time, best first):\n");
    for (int i = 0; i < p->nops; i++) {
        const mrt_plan_op *o = &p->op[i];
        fprintf(f, "\nop %d: %s  (%d alternatives)\n", i,
                p->tensor_name[p->value[o->out_value].tensor], o->nalts);
        fprintf(f, "    %-12s %-12s %-12s %14s  %s\n", "time", "comm",
                "kernel", "bytes/rank", "execution layout");
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
