/*
 * runner_execute.c — mrt_runner_execute: a runner (runner.c: the plan
 * set up on the caller's ranks, its inputs filled) run N times with
 * --repeat (or one optimizer step per run with `train:`), then, each phase its
 * own function: the figures measured on every rank reduced to rank 0
 * (run_measure.c), the last run as a Chrome trace (trace.c), --verify
 * against the unsharded reference (verify_run.c), the outputs saved,
 * and the report written from what those phases found (run_report.c)
 * in one piece.  mrt_run is create + execute + destroy.
 *
 * The report goes to the caller's FILE, or to its callback as one text,
 * or nowhere (the library is quiet unless asked).
 *
 * Every rank returns the same status: the ranks first agree that they
 * were given the same options, and after each phase that can fail on
 * one rank only, they agree (the lowest failing rank's error is
 * broadcast to all), so no rank is left waiting in a collective.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kernel.h"
#include "name_index.h"
#include "npy.h"
#include "output.h"
#include "run_report.h"
#include "trace.h"

static mrt_status nomem(mrt_error *err)
{
    return mrt_error_set(err, MRT_E_NOMEM, "", (mrt_mark){0}, "out of memory");
}

/* What the options make the ranks do together; the same everywhere, or
 * one rank would wait in a collective the others never reach. */
static uint64_t options_hash(const mrt_run_options *o)
{
    uint64_t parts[6] = {(uint64_t)(o->repeat > 1 ? o->repeat : 1),
                         (uint64_t) !!o->verify,
                         (uint64_t) !!o->profile,
                         (uint64_t) !!o->trace,
                         (uint64_t) !!o->save_dir,
                         (uint64_t) !!o->json};
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < 6; i++)
        h = (h ^ parts[i]) * 1099511628211ull;
    return h;
}

/* The ranks' arguments, agreed: the same options everywhere, and verify
 * only on the spec's own inputs.  Collective. */
static mrt_status check_options(const mrt_runner *r, const mrt_run_options *opt,
                                mrt_error *err)
{
    MPI_Comm w = r->comm->world;
    uint64_t h[2] = {options_hash(opt), ~options_hash(opt)}, lo[2];
    int own = !(r->caller_inputs || r->trained), all_own;
    /* min of h and of ~h: the least and (negated) the greatest hash */
    MPI_Allreduce(h, lo, 2, MPI_UINT64_T, MPI_MIN, w);
    MPI_Allreduce(&own, &all_own, 1, MPI_INT, MPI_LAND, w);
    if (lo[0] != ~lo[1])
        return mrt_error_set(err, MRT_E_USAGE, r->spec->path, (mrt_mark){0},
                             "mrt_runner_execute: argument 'opt': the ranks "
                             "were given different options (repeat, verify, "
                             "profile, trace, save_dir and json must be the "
                             "same on every rank)");
    if (opt->verify && !all_own)
        return mrt_error_set(err, MRT_E_USAGE, r->spec->path, (mrt_mark){0},
                             "verify recomputes the spec from its own inputs: "
                             "not after mrt_runner_set_input or a training "
                             "run (create a new runner)");
    return MRT_OK;
}

/* Tensor `from`'s shard into tensor `to`'s (the same layout), unless
 * the update wrote it in place (the plan gave both one buffer). */
static void carry(mrt_exec *e, int from, int to)
{
    const mrt_plan *p = e->plan;
    int a = p->tensor_value[from], b = p->tensor_value[to];
    if (!mrt_value_on_rank(p, a, e->comm->coords) ||
        !mrt_value_on_rank(p, b, e->comm->coords))
        return; /* another pipeline stage's (its room is this rank's) */
    if (e->buf[a] != e->buf[b]) /* (rounded if the types differ) */
        mrt_kernel_convert(p->value[b].dtype, e->buf[b], p->value[a].dtype,
                           e->buf[a], p->value[b].count);
}

/* A replicated scalar's value (the loss), or set to *set (Adam's). */
static double scalar(mrt_exec *e, int t, const double *set)
{
    const mrt_plan *p = e->plan;
    const mrt_value *v = &p->value[p->tensor_value[t]];
    void *b = e->buf[p->tensor_value[t]];
    if (set)
        mrt_kernel_convert(v->dtype, b, MRT_F64, set, 1);
    return mrt_kernel_get(v->dtype, b, 0);
}

/* After a training step: the loss (a replicated scalar); each
 * parameter's and optimizer state's shard takes its updated value, and
 * the optimizer's scalars their values for the next step, the same on
 * every rank (mrt_optimizer_scalars). */
static double take_step(mrt_runner *r)
{
    const mrt_train *tr = &r->spec->train;
    mrt_exec *e = r->exec;
    double next[2], loss = mrt_exec_stage_scalar(
                        e, e->plan->tensor_value[tr->loss],
                        scalar(e, tr->loss, NULL)); /* from its stage */
    for (int k = 0; k < tr->nparams; k++)
        carry(e, tr->updated[k], tr->param[k]);
    for (int k = 0; k < tr->nstate; k++)
        carry(e, tr->state_next[k], tr->state[k]);
    r->steps_run++;
    mrt_optimizer_scalars(tr, r->steps_run + 1, next);
    for (int i = 0; i < 2 && tr->step_scalar[0] >= 0; i++)
        scalar(e, tr->step_scalar[i], &next[i]);
    return loss;
}

/* The runs, each from a barrier; with --trace, the step times before
 * the last one kept in res->last.  Collective. */
static mrt_status run_all(mrt_runner *r, mrt_run_result *res, mrt_error *err)
{
    mrt_exec *e = r->exec;
    size_t n = (size_t)e->plan->nsteps;
    int training = r->spec->train.loss >= 0;
    mrt_status st = MRT_OK;
    /* the executor sums its timings over runs: this execution's only */
    memset(e->step_time, 0, n * sizeof *e->step_time);
    if (e->exposed && e->inflight) {
        memset(e->exposed, 0, n * sizeof *e->exposed);
        memset(e->inflight, 0, n * sizeof *e->inflight);
    }
    e->window = 0;
    r->computed = 0;
    for (int run = 0; run < res->runs && st == MRT_OK; run++) {
        if (res->last && run == res->runs - 1)
            memcpy(res->last, e->step_time, n * sizeof *res->last);
        MPI_Barrier(e->comm->world);
        st = mrt_comm_agree(e->comm->world, mrt_exec_run(e, err), err);
        if (st == MRT_OK && training)
            res->losses[run] = take_step(r);
        r->trained |= training;
    }
    r->computed = st == MRT_OK;
    return st;
}

/* The last run's step times as a Chrome trace.  Collective. */
static mrt_status trace(const mrt_runner *r, mrt_run_result *res,
                        const char *path, mrt_error *err)
{
    const mrt_exec *e = r->exec;
    for (int k = 0; k < e->plan->nsteps; k++)
        res->last[k] = e->step_time[k] - res->last[k];
    return mrt_comm_agree(
        e->comm->world, mrt_trace_write(e, res->last, path, r->spec->path, err),
        err);
}

/* --verify, its report kept in res for the report.  Collective. */
static mrt_status verify(const mrt_runner *r, const mrt_run_options *opt,
                         mrt_run_result *res, mrt_error *err)
{
    MPI_Comm w = r->comm->world;
    FILE *f = open_memstream(&res->verify, &res->verify_len);
    mrt_status st = mrt_comm_agree(w, f ? MRT_OK : nomem(err), err);
    if (st == MRT_OK)
        st = mrt_run_verify(r->spec, r->exec, opt, res->losses, res->runs, f,
                            err);
    if (f && fclose(f) != 0 && st == MRT_OK)
        st = nomem(err);
    return mrt_comm_agree(w, st, err);
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
                               "two outputs would be saved as %s/%s.npy", dir,
                               name);
        else if (mrt_name_index_add(&ix, name, k, output_name, p))
            st = mrt_error_set(err, MRT_E_NOMEM, "", (mrt_mark){0},
                               "out of memory");
    }
    mrt_name_index_free(&ix);
    return st;
}

/* Every output gathered to rank 0 and written as DIR/NAME.npy.
 * Collective. */
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
            st = mrt_npy_write(path, p->value[p->tensor_value[t]].dtype,
                               l->ndims, l->size, full, err);
        }
        free(full);
        st = mrt_comm_agree(e->comm->world, st, err);
    }
    return st;
}

/* Rank 0's report, built from res and handed on in one piece: to the
 * callback, or written to the caller's FILE, or to nobody (quiet).
 * Collective (rank 0 may run out of memory). */
static mrt_status report(const mrt_runner *r, const mrt_run_options *opt,
                         const mrt_run_result *res, mrt_error *err)
{
    mrt_status st = MRT_OK;
    if (r->comm->rank == 0 && (opt->report || opt->report_fn)) {
        size_t len = 0;
        char *text = mrt_run_report(r->spec, r->exec, res, opt->json, &len);
        if (!text)
            st = nomem(err);
        else if (opt->report_fn && len)
            opt->report_fn(text, len, opt->report_ctx);
        else if (!opt->report_fn) {
            fwrite(text, 1, len, opt->report);
            fflush(opt->report);
        }
        free(text);
    }
    return mrt_comm_agree(r->comm->world, st, err);
}

/* The phases after the runs, as the options ask.  Collective. */
static mrt_status after_runs(mrt_runner *r, const mrt_run_options *opt,
                             mrt_run_result *res, mrt_error *err)
{
    mrt_status st = MRT_OK;
    mrt_run_measure(r->exec, res);
    mrt_exec_stage_bytes(r->exec); /* a pipeline's: each stage's figures */
    if (opt->trace)
        st = trace(r, res, opt->trace, err);
    if (st == MRT_OK && opt->verify)
        st = verify(r, opt, res, err);
    if (st == MRT_OK && opt->save_dir)
        st = save(r->spec, r->exec, opt->save_dir, err);
    /* the report says what was found, even when a check failed */
    mrt_status rs = report(r, opt, res, err);
    if (st == MRT_OK)
        st = rs;
    if (st == MRT_OK && res->mismatches)
        st = mrt_error_set(err, MRT_E_RUNTIME, r->spec->path, (mrt_mark){0},
                           "the bytes handed to MPI differ from the plan");
    return st;
}

mrt_status mrt_runner_execute(mrt_runner *r, const mrt_run_options *opt_in,
                              mrt_error *err)
{
    static const mrt_run_options quiet;
    const mrt_run_options *opt = opt_in ? opt_in : &quiet;
    /* no runner, no communicator to agree on: a failed mrt_runner_create
     * left every rank without one */
    if (!r)
        return mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0},
                             "mrt_runner_execute: argument 'r': NULL (no "
                             "runner)");
    mrt_status st = check_options(r, opt, err);
    if (st != MRT_OK)
        return st;
    /* With `train:`, each run is one SGD step (--repeat sets how many). */
    const mrt_spec *s = r->spec;
    int runs = opt->repeat > 1      ? opt->repeat
               : s->train.loss >= 0 ? (int)s->train.steps
                                    : 1;
    mrt_run_result res;
    st = mrt_comm_agree(r->comm->world,
                        mrt_run_result_init(&res, r->exec, runs, opt->profile,
                                            opt->trace != NULL, err),
                        err);
    if (st == MRT_OK)
        st = run_all(r, &res, err);
    if (st == MRT_OK)
        st = after_runs(r, opt, &res, err);
    mrt_run_result_free(&res);
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
