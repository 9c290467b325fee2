/*
 * run_measure.c — what an execution measured, brought to rank 0: each
 * op's and step's time per run on the slowest rank, the ranks whose
 * bytes handed to MPI differ from the plan (the ledger of the last run
 * against mrt_step_rank_bytes, and those across nodes against
 * mrt_step_rank_bytes_inter), and, with --profile, how the background
 * collectives overlapped other steps.  A fixed number of reductions
 * whatever the plan's size, so measuring costs no more for a long
 * program than for a short one.
 */
#include <stdlib.h>
#include <string.h>

#include "run_report.h"

mrt_status mrt_run_result_init(mrt_run_result *r, const mrt_exec *e, int runs,
                               int profile, int trace, mrt_error *err)
{
    size_t n = (size_t)e->plan->nsteps, nops = (size_t)e->plan->nops;
    memset(r, 0, sizeof *r);
    r->runs = runs;
    /* losses, op times, step times and differences, the trace's
     * snapshot, and the reductions' scratch (2 n + nops) */
    size_t total = (size_t)runs + 1 + nops + 2 * n + (trace ? n : 0) + 2 * n +
                   nops + 1;
    r->work = calloc(total, sizeof *r->work);
    if (!r->work)
        return mrt_error_set(err, MRT_E_NOMEM, "", (mrt_mark){0},
                             "out of memory");
    r->losses = r->work;
    r->op_time = r->losses + runs + 1;
    r->step_time = r->op_time + nops;
    r->step_differ = r->step_time + n;
    r->last = trace ? r->step_differ + n : NULL;
    r->scratch = r->step_differ + n + (trace ? n : 0);
    r->profiled = profile;
    return MRT_OK;
}

void mrt_run_result_free(mrt_run_result *r)
{
    free(r->work);
    free(r->verify);
    memset(r, 0, sizeof *r);
}

/* The background collectives' figures, per run, of the rank where other
 * steps ran least meanwhile (on rank 0).  Collective. */
static mrt_run_overlap measure_overlap(const mrt_exec *e, int runs)
{
    const mrt_plan *p = e->plan;
    mrt_run_overlap o = {0};
    double exposed = 0;
    for (int k = 0; k < p->nsteps; k++)
        if (p->step[k].wait >= 0 && !e->blocking) {
            o.count++;
            exposed += e->exposed[k] / runs;
        }
    /* (value, rank) of the least time other steps ran meanwhile */
    struct {
        double v;
        int r;
    } mine = {e->window / runs - exposed, 0}, least;
    int rank = e->comm->rank;
    MPI_Comm w = e->comm->world;
    mine.r = rank;
    MPI_Allreduce(&mine, &least, 1, MPI_DOUBLE_INT, MPI_MINLOC, w);
    double fig[2] = {e->window / runs, exposed};
    if (least.r != 0 && rank == least.r)
        MPI_Send(fig, 2, MPI_DOUBLE, 0, 0, w);
    if (least.r != 0 && rank == 0)
        MPI_Recv(fig, 2, MPI_DOUBLE, least.r, 0, w, MPI_STATUS_IGNORE);
    o.inflight = fig[0];
    o.exposed = fig[1];
    o.hidden = fig[0] - fig[1] > 0 ? fig[0] - fig[1] : 0;
    return o;
}

/* A pipeline's measured bubble: on each rank, the time of the forward
 * and backward steps it runs (its span: the steps run back to back, so
 * the waits of its transfers are the idle time) and of those that are
 * not transfers (busy); the largest of each over the ranks.  Collective. */
static void measure_bubble(const mrt_exec *e, mrt_run_result *r)
{
    const mrt_plan *p = e->plan;
    double mine[2] = {0, 0}, most[2];
    for (int k = 0; k < p->nsteps; k++) {
        const mrt_step *s = &p->step[k];
        if (p->op[s->op].phase == MRT_PHASE_UPDATE ||
            !mrt_step_on_rank(p, s, e->comm->coords))
            continue;
        mine[0] += e->step_time[k] / r->runs;
        if (s->kind != MRT_STEP_SENDRECV)
            mine[1] += e->step_time[k] / r->runs;
    }
    MPI_Allreduce(mine, most, 2, MPI_DOUBLE, MPI_MAX, e->comm->world);
    r->pipe_span_s = most[0];
    r->pipe_busy_s = most[1];
}

void mrt_run_measure(const mrt_exec *e, mrt_run_result *r)
{
    const mrt_plan *p = e->plan;
    int n = p->nsteps, nops = p->nops;
    /* this rank's figures: step times, byte differences, op times */
    double *mine = r->scratch;
    for (int k = 0; k < n; k++) {
        mine[k] = e->step_time[k] / r->runs;
        mine[n + k] = e->step_bytes[k] !=
                          mrt_step_rank_bytes(p, &p->step[k],
                                              e->comm->coords) ||
                      e->step_inter[k] != mrt_step_rank_bytes_inter(
                                              p, &p->step[k], e->comm->coords);
    }
    for (int i = 0; i < nops; i++) {
        mine[2 * n + i] = 0;
        for (int k = p->op[i].first_step;
             k < p->op[i].first_step + p->op[i].nsteps; k++)
            mine[2 * n + i] += mine[k];
    }
    MPI_Comm w = e->comm->world;
    double differ = 0, all_differ = 0;
    for (int k = 0; k < n; k++)
        differ += mine[n + k];
    /* int counts: a plan has at most INT_MAX steps and ops */
    MPI_Allreduce(&differ, &all_differ, 1, MPI_DOUBLE, MPI_SUM, w);
    r->mismatches = (int64_t)all_differ;
    MPI_Reduce(mine + 2 * n, r->op_time, nops, MPI_DOUBLE, MPI_MAX, 0, w);
    if (!r->profiled)
        return;
    MPI_Reduce(mine, r->step_time, n, MPI_DOUBLE, MPI_MAX, 0, w);
    MPI_Reduce(mine + n, r->step_differ, n, MPI_DOUBLE, MPI_SUM, 0, w);
    r->overlap = measure_overlap(e, r->runs);
    if (p->pipe.stages > 1)
        measure_bubble(e, r);
}
