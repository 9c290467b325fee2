/*
 * run_report.c — the report of one execution, written from its
 * mrt_run_result alone (no MPI here: the figures were reduced to rank 0
 * before): per spec op and part of a training step its time per run,
 * the bytes handed to MPI and the plan's bytes; the losses of a
 * training run; with --profile every step's modeled time and bytes next
 * to the measured ones, and the overlap of the background collectives;
 * then --verify's checks.  As text, or as one JSON object with the
 * same figures (every primitive op, not one row per spec op), built in
 * memory so that the caller hands the report on in one piece.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "output.h"
#include "run_report.h"
#include "schedule.h"

static const char *out_name(const mrt_plan *p, int value)
{
    return p->tensor_name[p->value[value].tensor];
}

static int64_t op_bytes(const mrt_exec *e, int i)
{
    const mrt_plan_op *o = &e->plan->op[i];
    int64_t b = 0;
    for (int k = o->first_step; k < o->first_step + o->nsteps; k++)
        b += e->step_bytes[k];
    return b;
}

static double sum(const double *v, int n)
{
    double t = 0;
    for (int i = 0; i < n; i++)
        t += v[i];
    return t;
}

static int64_t measured_bytes(const mrt_exec *e)
{
    int64_t b = 0;
    for (int i = 0; i < e->plan->nops; i++)
        b += op_bytes(e, i);
    return b;
}

static int64_t measured_inter(const mrt_exec *e)
{
    int64_t b = 0;
    for (int k = 0; k < e->plan->nsteps; k++)
        b += e->step_inter[k];
    return b;
}

/* With nodes: the bytes per tier, measured and planned (rank 0's), and
 * whether MPI placed the ranks as the plan's nodes say. */
static void tiers_text(const mrt_exec *e, FILE *f)
{
    const mrt_plan *p = e->plan;
    if (p->profile.ranks_per_node <= 0)
        return;
    int64_t in = measured_inter(e), pin = mrt_plan_bytes_inter(p);
    fprintf(f,
            "  by tier (nodes of %lld ranks): %" PRId64 " bytes inside "
            "nodes, %" PRId64 " across (planned %" PRId64 " and %" PRId64 ")\n",
            (long long)p->profile.ranks_per_node, measured_bytes(e) - in, in,
            p->comm_bytes - pin, pin);
    if (e->comm->placement_differs)
        fprintf(f,
                "  warning: the ranks MPI says share a node are not the "
                "plan's nodes of %lld ranks (ranks fill nodes in order); "
                "the plan's nodes were used\n",
                (long long)p->profile.ranks_per_node);
}

/* The last primitive op of a row: one spec op, one part of the step. */
static int row_ends(const mrt_plan *p, int i)
{
    return i + 1 == p->nops || p->op[i + 1].user != p->op[i].user ||
           p->op[i + 1].phase != p->op[i].phase ||
           p->op[i].phase == MRT_PHASE_UPDATE;
}

static void times_text(const mrt_spec *s, const mrt_exec *e,
                       const mrt_run_result *r, FILE *f)
{
    static const char *const part[] = {"forward", "backward", "update"};
    const mrt_plan *p = e->plan;
    int w = 12; /* the widest name */
    for (int i = 0; i < p->nops; i++) {
        int n = (int)strlen(out_name(p, p->op[i].out_value));
        w = n > w ? n : w;
    }
    fprintf(f,
            "run %s: %d ranks, %s, %d run%s (a row per spec op and "
            "part of the step; --json lists the %d primitive ops)\n"
            "  %-3s %-8s %-*s %14s %16s %16s\n",
            s->path, e->comm->size, mrt_dtype_name(p->dtype), r->runs,
            r->runs == 1 ? "" : "s", p->nops, "op", "part", w, "out", "ms/run",
            "bytes to MPI", "planned bytes");
    double gt = 0;
    int64_t gb = 0, gp = 0;
    for (int i = 0; i < p->nops; i++) {
        gt += r->op_time[i];
        gb += op_bytes(e, i);
        gp += p->op[i].comm_bytes;
        if (!row_ends(p, i))
            continue;
        char num[16] = "-";
        if (p->op[i].user > 0)
            snprintf(num, sizeof num, "%d", p->op[i].user);
        fprintf(f, "  %-3s %-8s %-*s %14.3f %16" PRId64 " %16" PRId64 "\n", num,
                part[p->op[i].phase], w, out_name(p, p->op[i].out_value),
                gt * 1e3, gb, gp);
        gt = 0, gb = gp = 0;
    }
    fprintf(f, "  %-*s %14.3f %16" PRId64 " %16" PRId64 "  %s\n", w + 13,
            "total", sum(r->op_time, p->nops) * 1e3, measured_bytes(e),
            p->comm_bytes, r->mismatches ? "MISMATCH" : "bytes match the plan");
    tiers_text(e, f);
}

static void losses_text(const mrt_spec *s, const mrt_run_result *r, FILE *f)
{
    fprintf(f, "train: %d %s step%s (lr %g) of %s\n", r->runs,
            mrt_optimizer_name(s->train.optimizer), r->runs == 1 ? "" : "s",
            s->train.lr, s->tensor[s->train.loss].name);
    for (int k = 0; k < r->runs; k++)
        fprintf(f, "  step %-4d loss %.8g\n", k + 1,
                isnan(r->losses[k]) ? fabs(r->losses[k])
                                    : r->losses[k]); /* not "-nan" */
}

/* "1.23" or "-" when there is nothing to divide by. */
static const char *ratio(double num, double den, char *buf, size_t size)
{
    if (den > 0 && num > 0)
        snprintf(buf, size, "%.2f", num / den);
    else
        snprintf(buf, size, "-");
    return buf;
}

/* The op's bytes equal the plan's, on every rank. */
static int op_bytes_equal(const mrt_exec *e, const mrt_run_result *r, int i)
{
    const mrt_plan_op *o = &e->plan->op[i];
    int bad = 0;
    for (int k = o->first_step; k < o->first_step + o->nsteps; k++)
        bad |= r->step_differ[k] != 0;
    return !bad && op_bytes(e, i) == o->comm_bytes;
}

static void profile_step_text(const mrt_exec *e, const mrt_run_result *r, int k,
                              int w, FILE *f)
{
    const mrt_plan *p = e->plan;
    const mrt_step *s = &p->step[k];
    double t = r->step_time[k];
    char axes[256], q[16], gf[32] = "-";
    if (s->kind == MRT_STEP_EINSUM && t > 0)
        snprintf(gf, sizeof gf, "%.2f", s->flops / t / 1e9);
    mrt_mesh_axes_str(&p->mesh, s->axes, axes, sizeof axes);
    fprintf(f,
            "  %4d %3d %-15s %-*s %-12s %10.4f %11.4f %6s %13" PRId64
            " %13" PRId64 " %-6s %8s\n",
            k, s->op, mrt_step_kind_name(s->kind), w, out_name(p, s->out),
            axes[0] ? axes : "-", s->time_s * 1e3, t * 1e3,
            ratio(t, s->time_s, q, sizeof q), s->bytes, e->step_bytes[k],
            r->step_differ[k] ? "DIFFER" : "equal", gf);
}

static void profile_text(const mrt_exec *e, const mrt_run_result *r, FILE *f)
{
    const mrt_plan *p = e->plan;
    char q[16];
    int w = 10; /* the widest tensor name */
    for (int k = 0; k < p->nsteps; k++) {
        int n = (int)strlen(out_name(p, p->step[k].out));
        w = n > w ? n : w;
    }
    fprintf(f,
            "profile: the plan's model against this run (time per run of "
            "the slowest rank; bytes handed to MPI by every rank in the "
            "last run); BLIS kernel %s\n  %4s %3s %-15s %-*s %-12s %10s "
            "%11s %6s %13s %13s %-6s %8s\n",
            mrt_blis_kernel_family(), "step", "op", "kind", w, "tensor", "axes",
            "model ms", "measured ms", "ratio", "planned bytes", "bytes to MPI",
            "ledger", "GFLOP/s");
    for (int i = 0; i < p->nops; i++) {
        const mrt_plan_op *o = &p->op[i];
        for (int k = o->first_step; k < o->first_step + o->nsteps; k++)
            profile_step_text(e, r, k, w, f);
        fprintf(f,
                "  op %d (%s): model %.4f ms, measured %.4f ms (ratio %s);"
                " planned bytes %" PRId64 ", handed to MPI %" PRId64 ": %s\n",
                i, out_name(p, o->out_value), o->time_s * 1e3,
                r->op_time[i] * 1e3,
                ratio(r->op_time[i], o->time_s, q, sizeof q), o->comm_bytes,
                op_bytes(e, i), op_bytes_equal(e, r, i) ? "equal" : "DIFFER");
    }
}

static void overlap_text(const mrt_run_overlap *o, FILE *f)
{
    if (!o->count) {
        fputs("overlap: no collective ran in the background (each result "
              "is read by the very next step, or --blocking)\n",
              f);
        return;
    }
    fprintf(f,
            "overlap: %d collective%s in the background; per run, at "
            "least one in flight for %.4f ms, of which %.4f ms in MPI for "
            "them and %.4f ms running other steps (what they could hide "
            "behind)\n",
            o->count, o->count == 1 ? "" : "s", o->inflight * 1e3,
            o->exposed * 1e3, o->hidden * 1e3);
}

/* A pipeline's bubble, measured (run_measure.c) beside the plan's. */
static void bubble_text(const mrt_exec *e, const mrt_run_result *r, FILE *f)
{
    const mrt_plan *p = e->plan;
    if (p->pipe.stages < 2 || !p->schedule || !(r->pipe_busy_s > 0))
        return;
    fprintf(f,
            "pipeline: bubble measured %.4g%% (forward and backward steps "
            "%.4f ms per run on the slowest rank, %.4f ms of computing on "
            "the busiest), modeled %.4g%% with the p2p time hidden, %.4g%% "
            "with it\n",
            100 * (r->pipe_span_s - r->pipe_busy_s) / r->pipe_busy_s,
            r->pipe_span_s * 1e3, r->pipe_busy_s * 1e3,
            100 * p->pipe.bubble_fraction, 100 * p->schedule->bubble_fraction);
}

static void report_text(const mrt_spec *s, const mrt_exec *e,
                        const mrt_run_result *r, FILE *f)
{
    times_text(s, e, r, f);
    if (s->train.loss >= 0)
        losses_text(s, r, f);
    if (r->profiled) {
        profile_text(e, r, f);
        overlap_text(&r->overlap, f);
        bubble_text(e, r, f);
    }
}

static void times_json(const mrt_spec *s, const mrt_exec *e,
                       const mrt_run_result *r, FILE *f)
{
    const mrt_plan *p = e->plan;
    fputs("{\"spec\": ", f);
    mrt_json_string(f, s->path);
    fprintf(f, ", \"ranks\": %d, \"runs\": %d, \"ops\": [", e->comm->size,
            r->runs);
    for (int i = 0; i < p->nops; i++)
        fprintf(f,
                "%s{\"out\": \"%s\", \"time_s\": %s, \"bytes\": %" PRId64
                ", \"planned_bytes\": %" PRId64 "}",
                i ? ", " : "", out_name(p, p->op[i].out_value),
                MRT_JSON_NUM("%.9g", r->op_time[i]), op_bytes(e, i),
                p->op[i].comm_bytes);
    fprintf(f,
            "], \"totals\": {\"time_s\": %s, \"bytes\": %" PRId64
            ", \"planned_bytes\": %" PRId64 ", \"bytes_match\": %s",
            MRT_JSON_NUM("%.9g", sum(r->op_time, p->nops)), measured_bytes(e),
            p->comm_bytes, r->mismatches ? "false" : "true");
    if (p->profile.ranks_per_node <= 0) {
        fputc('}', f);
    } else {
        int64_t in = measured_inter(e), pin = mrt_plan_bytes_inter(p);
        fprintf(f,
                ", \"ranks_per_node\": %lld, \"bytes_intra\": %" PRId64
                ", \"bytes_inter\": %" PRId64
                ", \"planned_bytes_intra\": %" PRId64
                ", \"planned_bytes_inter\": %" PRId64
                ", \"placement_differs\": %s}",
                (long long)p->profile.ranks_per_node, measured_bytes(e) - in,
                in, p->comm_bytes - pin, pin,
                e->comm->placement_differs ? "true" : "false");
    }
}

static void losses_json(const mrt_run_result *r, FILE *f)
{
    fputs(", \"losses\": [", f);
    for (int k = 0; k < r->runs; k++)
        fprintf(f, "%s%s", k ? ", " : "", MRT_JSON_NUM("%.10g", r->losses[k]));
    fputc(']', f);
}

static void profile_step_json(const mrt_exec *e, const mrt_run_result *r, int k,
                              FILE *f)
{
    const mrt_plan *p = e->plan;
    const mrt_step *s = &p->step[k];
    double t = r->step_time[k];
    char axes[256];
    fprintf(f,
            "%s{\"step\": %d, \"op\": %d, \"kind\": \"%s\", "
            "\"tensor\": \"%s\", \"axes\": \"%s\", \"group\": %" PRId64
            ", \"model_s\": %s, \"measured_s\": %s, "
            "\"planned_bytes\": %" PRId64 ", \"bytes\": %" PRId64
            ", \"bytes_equal\": %s, \"flops\": %s, \"gflops\": %s}",
            k ? ", " : "", k, s->op, mrt_step_kind_name(s->kind),
            out_name(p, s->out),
            mrt_mesh_axes_str(&p->mesh, s->axes, axes, sizeof axes), s->group,
            MRT_JSON_NUM("%.9g", s->time_s), MRT_JSON_NUM("%.9g", t), s->bytes,
            e->step_bytes[k], r->step_differ[k] ? "false" : "true",
            MRT_JSON_NUM("%.9g", s->flops),
            s->kind == MRT_STEP_EINSUM && t > 0
                ? MRT_JSON_NUM("%.6g", s->flops / t / 1e9)
                : "null");
}

static void profile_json(const mrt_exec *e, const mrt_run_result *r, FILE *f)
{
    const mrt_plan *p = e->plan;
    const mrt_run_overlap *o = &r->overlap;
    fprintf(f, ", \"profile\": {\"blis_kernel\": \"%s\", \"steps\": [",
            mrt_blis_kernel_family());
    for (int k = 0; k < p->nsteps; k++)
        profile_step_json(e, r, k, f);
    fputs("], \"ops\": [", f);
    for (int i = 0; i < p->nops; i++)
        fprintf(f,
                "%s{\"op\": %d, \"out\": \"%s\", \"model_s\": %s, "
                "\"measured_s\": %s, \"planned_bytes\": %" PRId64
                ", \"bytes\": %" PRId64 ", \"bytes_equal\": %s}",
                i ? ", " : "", i, out_name(p, p->op[i].out_value),
                MRT_JSON_NUM("%.9g", p->op[i].time_s),
                MRT_JSON_NUM("%.9g", r->op_time[i]), p->op[i].comm_bytes,
                op_bytes(e, i), op_bytes_equal(e, r, i) ? "true" : "false");
    fprintf(f,
            "]}, \"overlap\": {\"background_collectives\": %d, "
            "\"inflight_s\": %s, \"exposed_s\": %s, \"hidden_s\": %s}",
            o->count, MRT_JSON_NUM("%.9g", o->inflight),
            MRT_JSON_NUM("%.9g", o->exposed), MRT_JSON_NUM("%.9g", o->hidden));
    if (p->pipe.stages > 1 && p->schedule && r->pipe_busy_s > 0)
        fprintf(f,
                ", \"pipeline\": {\"span_s\": %s, \"busy_s\": %s, "
                "\"bubble_measured\": %s, \"bubble_fraction\": %s, "
                "\"bubble_fraction_p2p\": %s}",
                MRT_JSON_NUM("%.9g", r->pipe_span_s),
                MRT_JSON_NUM("%.9g", r->pipe_busy_s),
                MRT_JSON_NUM("%.9g", (r->pipe_span_s - r->pipe_busy_s) /
                                         r->pipe_busy_s),
                MRT_JSON_NUM("%.9g", p->pipe.bubble_fraction),
                MRT_JSON_NUM("%.9g", p->schedule->bubble_fraction));
}

static void report_json(const mrt_spec *s, const mrt_exec *e,
                        const mrt_run_result *r, FILE *f)
{
    times_json(s, e, r, f);
    if (s->train.loss >= 0)
        losses_json(r, f);
    if (r->profiled)
        profile_json(e, r, f);
}

char *mrt_run_report(const mrt_spec *s, const mrt_exec *e,
                     const mrt_run_result *r, int json, size_t *len)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    if (!f)
        return NULL;
    if (json)
        report_json(s, e, r, f);
    else
        report_text(s, e, r, f);
    if (r->verify)
        fwrite(r->verify, 1, r->verify_len, f);
    if (json)
        fputs("}\n", f);
    if (ferror(f)) {
        fclose(f);
        free(text);
        return NULL;
    }
    fclose(f);
    return text;
}
