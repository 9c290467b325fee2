/*
 * run.c — mrt_runner_execute: walk the plan of a runner (runner.c: the
 * mesh set up on MPI, the input shards filled) N times with --repeat,
 * then report per-op times and the
 * bytes handed to MPI next to the plan's prediction, verify against the
 * unsharded reference (verify_run.c) and save outputs as asked.  With
 * --profile, every step's modeled time and bytes next to the measured
 * ones; with --trace, the last run's steps as a Chrome trace (trace.c).
 *
 * The report goes to the caller's FILE, or to its callback as one text,
 * or nowhere (the library is quiet unless asked).  mrt_run is
 * create + execute + destroy.
 *
 * Every rank returns the same status: after each phase that can fail on
 * one rank only, the ranks agree (the lowest failing rank's error is
 * broadcast to all), so no rank is left waiting in a collective.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "calibrate.h"
#include "kernel.h"
#include "name_index.h"
#include "npy.h"
#include "output.h"
#include "runtime.h"
#include "trace.h"


/* Steps whose bytes handed to MPI differ from the plan, on any rank. */
static int64_t byte_mismatches(const mrt_exec *e)
{
    int64_t bad = 0, all;
    for (int k = 0; k < e->plan->nsteps; k++)
        bad += e->step_bytes[k] != mrt_step_rank_bytes(e->plan,
                                                       &e->plan->step[k],
                                                       e->comm->coords);
    MPI_Allreduce(&bad, &all, 1, MPI_INT64_T, MPI_SUM, e->comm->world);
    return all;
}

/* The op's time per run, the maximum over ranks (valid on rank 0). */
static double op_time(const mrt_exec *e, int i, int runs)
{
    const mrt_plan_op *o = &e->plan->op[i];
    double t = 0, tmax = 0;
    for (int k = o->first_step; k < o->first_step + o->nsteps; k++)
        t += e->step_time[k];
    t /= runs;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, e->comm->world);
    return tmax;
}

static int64_t op_bytes(const mrt_exec *e, int i)
{
    const mrt_plan_op *o = &e->plan->op[i];
    int64_t b = 0;
    for (int k = o->first_step; k < o->first_step + o->nsteps; k++)
        b += e->step_bytes[k];
    return b;
}

static void report_times(const mrt_spec *s, const mrt_exec *e,
                         const mrt_run_options *opt, int runs, FILE *f)
{
    const mrt_plan *p = e->plan;
    int root = e->comm->rank == 0;
    int64_t bad = byte_mismatches(e), measured = 0;
    double total = 0;
    int w = 12; /* the widest name */
    for (int i = 0; i < p->nops; i++) {
        int n = (int)strlen(p->tensor_name[p->value[p->op[i].out_value].tensor]);
        w = n > w ? n : w;
    }
    if (root && !opt->json)
        fprintf(f, "run %s: %d ranks, %s, %d run%s (a row per spec op and "
                   "part of the step; --json lists the %d primitive ops)\n"
                   "  %-3s %-8s %-*s %14s %16s %16s\n",
                s->path, e->comm->size, mrt_dtype_name(p->dtype), runs,
                runs == 1 ? "" : "s", p->nops, "op", "part", w, "out",
                "ms/run", "bytes to MPI", "planned bytes");
    if (root && opt->json) {
        fputs("{\"spec\": ", f);
        mrt_json_string(f, s->path);
        fprintf(f, ", \"ranks\": %d, \"runs\": %d, \"ops\": [",
                e->comm->size, runs);
    }
    static const char *const part[] = {"forward", "backward", "update"};
    double gt = 0;
    int64_t gb = 0, gp = 0;
    for (int i = 0; i < p->nops; i++) {
        double t = op_time(e, i, runs);
        int64_t b = op_bytes(e, i);
        const char *name = p->tensor_name[p->value[p->op[i].out_value].tensor];
        total += t;
        measured += b;
        /* the primitive ops of one spec op and part, as one row */
        gt += t;
        gb += b;
        gp += p->op[i].comm_bytes;
        int last = i + 1 == p->nops || p->op[i + 1].user != p->op[i].user ||
                   p->op[i + 1].phase != p->op[i].phase ||
                   p->op[i].phase == MRT_PHASE_UPDATE;
        if (root && !opt->json && last) {
            char num[16] = "-";
            if (p->op[i].user > 0)
                snprintf(num, sizeof num, "%d", p->op[i].user);
            fprintf(f, "  %-3s %-8s %-*s %14.3f %16" PRId64 " %16" PRId64
                       "\n", num, part[p->op[i].phase], w, name, gt * 1e3,
                    gb, gp);
        }
        if (last)
            gt = 0, gb = gp = 0;
        if (root && opt->json)
            fprintf(f, "%s{\"out\": \"%s\", \"time_s\": %s, \"bytes\": %" PRId64
                       ", \"planned_bytes\": %" PRId64 "}",
                    i ? ", " : "", name, MRT_JSON_NUM("%.9g", t), b,
                    p->op[i].comm_bytes);
    }
    if (root && !opt->json)
        fprintf(f, "  %-*s %14.3f %16" PRId64 " %16" PRId64 "  %s\n", w + 13,
                "total", total * 1e3, measured, p->comm_bytes,
                bad ? "MISMATCH" : "bytes match the plan");
    if (root && opt->json)
        fprintf(f, "], \"totals\": {\"time_s\": %s, \"bytes\": %" PRId64
                   ", \"planned_bytes\": %" PRId64 ", \"bytes_match\": %s}",
                MRT_JSON_NUM("%.9g", total), measured, p->comm_bytes,
                bad ? "false" : "true");
}

/* ---- training ------------------------------------------------------- */

/* After a training step: the loss (a replicated scalar), and each
 * parameter's shard takes its updated value (the same layout). */
static double take_step(const mrt_spec *s, mrt_exec *e)
{
    const mrt_plan *p = e->plan;
    const mrt_train *tr = &s->train;
    int lv = p->tensor_value[tr->loss];
    double loss = p->dtype == MRT_F64 ? *(const double *)e->buf[lv]
                                      : *(const float *)e->buf[lv];
    for (int k = 0; k < tr->nparams; k++) {
        int from = p->tensor_value[tr->updated[k]],
            to = p->tensor_value[tr->param[k]];
        memcpy(e->buf[to], e->buf[from],
               (size_t)p->value[to].count * (size_t)p->elsize);
    }
    return loss;
}

static void report_losses(const mrt_spec *s, const double *loss, int runs,
                          int json, FILE *f)
{
    if (json) {
        fputs(", \"losses\": [", f);
        for (int r = 0; r < runs; r++)
            fprintf(f, "%s%s", r ? ", " : "", MRT_JSON_NUM("%.10g", loss[r]));
        fputc(']', f);
        return;
    }
    fprintf(f, "train: %d SGD step%s (lr %g) of %s\n", runs,
            runs == 1 ? "" : "s", s->train.lr,
            s->tensor[s->train.loss].name);
    for (int r = 0; r < runs; r++)
        fprintf(f, "  step %-4d loss %.8g\n", r + 1,
                isnan(loss[r]) ? fabs(loss[r]) : loss[r]); /* not "-nan" */
}

/* ---- --profile ------------------------------------------------------ */

/* What the run measured, on rank 0, per step and per op. */
typedef struct measured {
    const double *time;    /* [nsteps] seconds per run, slowest rank */
    const double *differ;  /* [nsteps] ranks whose bytes differ from the
                              plan (the ledger, last run) */
    const double *op_time; /* [nops] seconds per run, slowest rank */
} measured;

/* Reduces the step timings and byte checks to rank 0; work has room for
 * 2 (2 nsteps + nops) doubles.  Collective. */
static measured measure_steps(const mrt_exec *e, int runs, double *work)
{
    const mrt_plan *p = e->plan;
    int n = p->nsteps, nops = p->nops;
    double *mine = work, *all = work + 2 * n + nops;
    for (int k = 0; k < n; k++) {
        mine[k] = e->step_time[k] / runs;
        mine[n + k] = e->step_bytes[k] !=
                      mrt_step_rank_bytes(p, &p->step[k], e->comm->coords);
    }
    for (int i = 0; i < nops; i++) {
        mine[2 * n + i] = 0;
        for (int k = p->op[i].first_step;
             k < p->op[i].first_step + p->op[i].nsteps; k++)
            mine[2 * n + i] += mine[k];
    }
    MPI_Comm w = e->comm->world;
    /* int counts: a plan has at most INT_MAX steps and ops */
    MPI_Reduce(mine, all, n, MPI_DOUBLE, MPI_MAX, 0, w);
    MPI_Reduce(mine + n, all + n, n, MPI_DOUBLE, MPI_SUM, 0, w);
    MPI_Reduce(mine + 2 * n, all + 2 * n, nops, MPI_DOUBLE, MPI_MAX, 0, w);
    return (measured){all, all + n, all + 2 * n};
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

static int op_bytes_equal(const mrt_exec *e, const measured *m, int i)
{
    const mrt_plan_op *o = &e->plan->op[i];
    int bad = 0;
    for (int k = o->first_step; k < o->first_step + o->nsteps; k++)
        bad |= m->differ[k] != 0;
    return !bad && op_bytes(e, i) == o->comm_bytes;
}

static void profile_step_text(const mrt_exec *e, const measured *m, int k,
                              int w, FILE *f)
{
    const mrt_plan *p = e->plan;
    const mrt_step *s = &p->step[k];
    char axes[256], r[16], gf[32] = "-";
    if (s->kind == MRT_STEP_EINSUM && m->time[k] > 0)
        snprintf(gf, sizeof gf, "%.2f", s->flops / m->time[k] / 1e9);
    mrt_mesh_axes_str(&p->mesh, s->axes, axes, sizeof axes);
    fprintf(f, "  %4d %3d %-15s %-*s %-12s %10.4f %11.4f %6s %13" PRId64
               " %13" PRId64 " %-6s %8s\n",
            k, s->op, mrt_step_kind_name(s->kind), w,
            p->tensor_name[p->value[s->out].tensor], axes[0] ? axes : "-",
            s->time_s * 1e3, m->time[k] * 1e3,
            ratio(m->time[k], s->time_s, r, sizeof r), s->bytes,
            e->step_bytes[k], m->differ[k] ? "DIFFER" : "equal", gf);
}

static void profile_text(const mrt_exec *e, const measured *m, FILE *f)
{
    const mrt_plan *p = e->plan;
    char r[16];
    int w = 10; /* the widest tensor name */
    for (int k = 0; k < p->nsteps; k++) {
        int n = (int)strlen(p->tensor_name[p->value[p->step[k].out].tensor]);
        w = n > w ? n : w;
    }
    fprintf(f, "profile: the plan's model against this run (time per run of "
               "the slowest rank; bytes handed to MPI by every rank in the "
               "last run); BLIS kernel %s\n  %4s %3s %-15s %-*s %-12s %10s "
               "%11s %6s %13s %13s %-6s %8s\n",
            mrt_blis_kernel_family(), "step", "op", "kind", w, "tensor", "axes",
            "model ms", "measured ms", "ratio", "planned bytes",
            "bytes to MPI", "ledger", "GFLOP/s");
    for (int i = 0; i < p->nops; i++) {
        const mrt_plan_op *o = &p->op[i];
        for (int k = o->first_step; k < o->first_step + o->nsteps; k++)
            profile_step_text(e, m, k, w, f);
        fprintf(f, "  op %d (%s): model %.4f ms, measured %.4f ms (ratio %s);"
                   " planned bytes %" PRId64 ", handed to MPI %" PRId64
                   ": %s\n",
                i, p->tensor_name[p->value[o->out_value].tensor],
                o->time_s * 1e3, m->op_time[i] * 1e3,
                ratio(m->op_time[i], o->time_s, r, sizeof r), o->comm_bytes,
                op_bytes(e, i), op_bytes_equal(e, m, i) ? "equal" : "DIFFER");
    }
}

/* The collectives that ran in the background, per run, on the rank where
 * other steps ran least meanwhile (valid on rank 0): the time at least
 * one was in flight, the part of it the rank spent in MPI for them (the
 * issues, the progress tests, the waits), and the rest, in which other
 * steps ran.  Open MPI moves their data only inside MPI calls, so that
 * rest bounds the time hidden from above; bench_overlap measures what
 * overlap saves against a blocking run. */
typedef struct overlap {
    int count;
    double inflight, exposed, hidden;
} overlap;

static overlap measure_overlap(const mrt_exec *e, int runs)
{
    const mrt_plan *p = e->plan;
    int rank;
    overlap o = {0};
    double exposed = 0;
    for (int k = 0; k < p->nsteps; k++)
        if (p->step[k].wait >= 0 && !e->blocking) {
            o.count++;
            exposed += e->exposed[k] / runs;
        }
    /* (value, rank) of the least time other steps ran meanwhile */
    struct { double v; int r; } mine = {e->window / runs - exposed, 0}, least;
    MPI_Comm_rank(e->comm->world, &rank);
    mine.r = rank;
    MPI_Allreduce(&mine, &least, 1, MPI_DOUBLE_INT, MPI_MINLOC,
                  e->comm->world);
    double fig[2] = {e->window / runs, exposed};
    if (least.r != 0 && rank == least.r)
        MPI_Send(fig, 2, MPI_DOUBLE, 0, 0, e->comm->world);
    if (least.r != 0 && rank == 0)
        MPI_Recv(fig, 2, MPI_DOUBLE, least.r, 0, e->comm->world,
                 MPI_STATUS_IGNORE);
    o.inflight = fig[0];
    o.exposed = fig[1];
    o.hidden = fig[0] - fig[1] > 0 ? fig[0] - fig[1] : 0;
    return o;
}

static void overlap_text(const overlap *o, FILE *f)
{
    if (!o->count) {
        fputs("overlap: no collective ran in the background (each result "
              "is read by the very next step, or --blocking)\n", f);
        return;
    }
    fprintf(f, "overlap: %d collective%s in the background; per run, at "
               "least one in flight for %.4f ms, of which %.4f ms in MPI for "
               "them and %.4f ms running other steps (what they could hide "
               "behind)\n",
            o->count,
            o->count == 1 ? "" : "s", o->inflight * 1e3, o->exposed * 1e3,
            o->hidden * 1e3);
}

static void profile_json(const mrt_exec *e, const measured *m, FILE *f)
{
    const mrt_plan *p = e->plan;
    char axes[256];
    fprintf(f, ", \"profile\": {\"blis_kernel\": \"%s\", \"steps\": [",
            mrt_blis_kernel_family());
    for (int k = 0; k < p->nsteps; k++) {
        const mrt_step *s = &p->step[k];
        fprintf(f, "%s{\"step\": %d, \"op\": %d, \"kind\": \"%s\", "
                   "\"tensor\": \"%s\", \"axes\": \"%s\", \"group\": %"
                   PRId64 ", \"model_s\": %s, \"measured_s\": %s, "
                   "\"planned_bytes\": %" PRId64 ", \"bytes\": %" PRId64
                   ", \"bytes_equal\": %s, \"flops\": %s, \"gflops\": ",
                k ? ", " : "", k, s->op, mrt_step_kind_name(s->kind),
                p->tensor_name[p->value[s->out].tensor],
                mrt_mesh_axes_str(&p->mesh, s->axes, axes, sizeof axes),
                s->group, MRT_JSON_NUM("%.9g", s->time_s),
                MRT_JSON_NUM("%.9g", m->time[k]), s->bytes, e->step_bytes[k],
                m->differ[k] ? "false" : "true",
                MRT_JSON_NUM("%.9g", s->flops));
        if (s->kind == MRT_STEP_EINSUM && m->time[k] > 0)
            fprintf(f, "%s}",
                    MRT_JSON_NUM("%.6g", s->flops / m->time[k] / 1e9));
        else
            fputs("null}", f);
    }
    fputs("], \"ops\": [", f);
    for (int i = 0; i < p->nops; i++) {
        const mrt_plan_op *o = &p->op[i];
        fprintf(f, "%s{\"op\": %d, \"out\": \"%s\", \"model_s\": %s, "
                   "\"measured_s\": %s, \"planned_bytes\": %" PRId64
                   ", \"bytes\": %" PRId64 ", \"bytes_equal\": %s}",
                i ? ", " : "", i,
                p->tensor_name[p->value[o->out_value].tensor],
                MRT_JSON_NUM("%.9g", o->time_s),
                MRT_JSON_NUM("%.9g", m->op_time[i]), o->comm_bytes,
                op_bytes(e, i),
                op_bytes_equal(e, m, i) ? "true" : "false");
    }
    fputs("]}", f);
}

static const char *output_name(const void *ctx, int k)
{
    const mrt_plan *p = ctx;
    return p->tensor_name[p->output[k]];
}

/* Refuses two outputs that would be written to one file (which would
 * keep one of them silently): the names ir/ makes are unique, so this
 * is a guard, on every rank alike. */
static mrt_status distinct_files(const mrt_spec *s, const mrt_plan *p,
                                 const char *dir, mrt_error *err)
{
    mrt_name_index ix = {0};
    mrt_status st = MRT_OK;
    for (int k = 0; k < p->noutputs && !st; k++) {
        const char *name = output_name(p, k);
        if (mrt_name_index_find(&ix, name, output_name, p) >= 0)
            st = mrt_error_set(err, MRT_E_SPEC, s->path, (mrt_mark){0},
                               "two outputs would be saved as %s/%s.npy",
                               dir, name);
        else if (mrt_name_index_add(&ix, name, k, output_name, p))
            st = mrt_error_set(err, MRT_E_NOMEM, "", (mrt_mark){0},
                               "out of memory");
    }
    mrt_name_index_free(&ix);
    return st;
}

static mrt_status save(const mrt_spec *s, mrt_exec *e, const char *dir,
                       mrt_error *err)
{
    const mrt_plan *p = e->plan;
    int root = e->comm->rank == 0;
    mrt_status st = distinct_files(s, p, dir, err);
    struct stat sb;
    if (st)
        return st;
    if (root && mkdir(dir, 0777) != 0 && errno != EEXIST)
        st = mrt_error_set(err, mrt_output_status(errno), dir, (mrt_mark){0},
                           "cannot create the folder: %s", strerror(errno));
    else if (root && (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)))
        st = mrt_error_set(err, MRT_E_IO, dir, (mrt_mark){0},
                           "cannot save into it: it is not a folder");
    st = mrt_comm_agree(e->comm->world, st, err);
    for (int k = 0; k < p->noutputs && st == MRT_OK; k++) {
        int t = p->output[k];
        const mrt_layout *l = &p->value[p->tensor_value[t]].layout;
        void *full = NULL;
        st = mrt_shard_gather(e, p->tensor_value[t], &full, err);
        if (st == MRT_OK && root) {
            char path[PATH_MAX + MRT_NAME_MAX + 8];
            snprintf(path, sizeof path, "%s/%s.npy", dir, p->tensor_name[t]);
            st = mrt_npy_write(path, p->dtype, l->ndims, l->size, full, err);
        }
        free(full);
        st = mrt_comm_agree(e->comm->world, st, err);
    }
    return st;
}

/* Where the report goes: the caller's FILE, or a text in memory that
 * the callback receives (or that nobody reads: quiet). */
typedef struct report_sink {
    FILE *f;
    FILE *mem;
    char *text;
    size_t len;
} report_sink;

static mrt_status sink_open(const mrt_run_options *opt, report_sink *k,
                            mrt_error *err)
{
    memset(k, 0, sizeof *k);
    if (opt->report && !opt->report_fn) {
        k->f = opt->report;
        return MRT_OK;
    }
    k->f = k->mem = open_memstream(&k->text, &k->len);
    return k->mem ? MRT_OK
                  : mrt_error_set(err, MRT_E_NOMEM, "", (mrt_mark){0},
                                  "out of memory");
}

static void sink_close(const mrt_run_options *opt, report_sink *k, int root)
{
    if (k->mem) {
        fclose(k->mem);
        if (root && opt->report_fn && k->text && k->len)
            opt->report_fn(k->text, k->len, opt->report_ctx);
        free(k->text);
    } else if (k->f) {
        fflush(k->f);
    }
}

mrt_status mrt_runner_execute(mrt_runner *r, const mrt_run_options *opt_in,
                              mrt_error *err)
{
    static const mrt_run_options quiet;
    const mrt_run_options *opt = opt_in ? opt_in : &quiet;
    if (!r)
        return mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0},
                             "mrt_runner_execute needs a runner");
    const mrt_spec *s = r->spec;
    const mrt_plan *p = r->plan;
    mrt_comm *comm = r->comm;
    mrt_exec *e = r->exec;
    MPI_Comm w = comm->world;
    report_sink sink;
    mrt_status st = mrt_comm_agree(w, sink_open(opt, &sink, err), err);
    if (st != MRT_OK) {
        sink_close(&(mrt_run_options){0}, &sink, 0); /* silently */
        return st;
    }
    FILE *f = sink.f;
    /* the executor sums its timings over runs: this execution's only */
    size_t n = (size_t)p->nsteps;
    memset(e->step_time, 0, n * sizeof *e->step_time);
    if (e->exposed && e->inflight) {
        memset(e->exposed, 0, n * sizeof *e->exposed);
        memset(e->inflight, 0, n * sizeof *e->inflight);
    }
    e->window = 0;
    int own_inputs = !(r->caller_inputs || r->trained), all_own;
    MPI_Allreduce(&own_inputs, &all_own, 1, MPI_INT, MPI_LAND, w);
    if (opt->verify && !all_own)
        st = mrt_error_set(err, MRT_E_USAGE, s->path, (mrt_mark){0},
                           "verify recomputes the spec from its own inputs: "
                           "not after mrt_runner_set_input or a training "
                           "run (create a new runner)");
    /* --profile and --trace: room for the reductions and for the step
     * times before the last run (the executor sums over runs). */
    double *work = NULL, *last = NULL;
    if (st == MRT_OK && (opt->profile || opt->trace)) {
        work = calloc(5 * (size_t)p->nsteps + 2 * (size_t)p->nops + 1,
                      sizeof *work);
        last = work ? work + 4 * p->nsteps + 2 * p->nops : NULL;
        st = mrt_comm_agree(w, work ? MRT_OK
                   : mrt_error_set(err, MRT_E_NOMEM, "", (mrt_mark){0},
                                   "out of memory"), err);
    }
    /* With `train:`, each run is one SGD step (--repeat sets how many). */
    int training = s->train.loss >= 0;
    int runs = opt->repeat > 1 ? opt->repeat
               : training      ? (int)s->train.steps
                               : 1;
    double *losses = calloc((size_t)runs + 1, sizeof *losses);
    if (st == MRT_OK && !losses)
        st = mrt_error_set(err, MRT_E_NOMEM, "", (mrt_mark){0},
                           "out of memory");
    for (int run = 0; run < runs && st == MRT_OK; run++) {
        if (last && run == runs - 1)
            memcpy(last, e->step_time, (size_t)p->nsteps * sizeof *last);
        MPI_Barrier(w);
        st = mrt_comm_agree(w, mrt_exec_run(e, err), err);
        if (st == MRT_OK && training)
            losses[run] = take_step(s, e);
        r->trained |= training;
    }
    int reported = st == MRT_OK;
    if (reported)
        report_times(s, e, opt, runs, f);
    if (reported && training && comm->rank == 0)
        report_losses(s, losses, runs, opt->json, f);
    if (reported && opt->profile) {
        measured m = measure_steps(e, runs, work);
        overlap o = measure_overlap(e, runs);
        if (comm->rank == 0 && opt->json) {
            profile_json(e, &m, f);
            fprintf(f, ", \"overlap\": {\"background_collectives\": %d, "
                       "\"inflight_s\": %s, \"exposed_s\": %s, "
                       "\"hidden_s\": %s}", o.count,
                    MRT_JSON_NUM("%.9g", o.inflight),
                    MRT_JSON_NUM("%.9g", o.exposed),
                    MRT_JSON_NUM("%.9g", o.hidden));
        } else if (comm->rank == 0) {
            profile_text(e, &m, f);
            overlap_text(&o, f);
        }
    }
    if (st == MRT_OK && opt->trace) {
        for (int k = 0; k < p->nsteps; k++)
            last[k] = e->step_time[k] - last[k];
        st = mrt_comm_agree(w,
                   mrt_trace_write(e, last, opt->trace, s->path, err), err);
    }
    free(work);
    if (st == MRT_OK && opt->verify)
        st = mrt_run_verify(s, e, opt, losses, runs, f, err);
    free(losses);
    if (st == MRT_OK && opt->save_dir)
        st = save(s, e, opt->save_dir, err);
    if (reported && comm->rank == 0 && opt->json)
        fputs("}\n", f);
    if (st == MRT_OK && comm && byte_mismatches(e))
        st = mrt_error_set(err, MRT_E_RUNTIME, s->path, (mrt_mark){0},
                           "the bytes handed to MPI differ from the plan");
    sink_close(opt, &sink, comm->rank == 0);
    return st;
}

mrt_status mrt_run(const mrt_spec *spec, const mrt_plan *plan,
                   const mrt_run_options *opt, mrt_error *err)
{
    static const mrt_run_options quiet;
    opt = opt ? opt : &quiet;
    MPI_Comm comm = opt->comm;
    if (comm == (MPI_Comm)0 || comm == MPI_COMM_NULL)
        comm = MPI_COMM_WORLD;
    mrt_runner *r = NULL;
    mrt_status st = mrt_runner_create(spec, plan, comm, &r, err);
    if (st == MRT_OK)
        st = mrt_runner_execute(r, opt, err);
    mrt_runner_destroy(r);
    return st;
}
