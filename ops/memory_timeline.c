/*
 * memory_timeline.c — what is live on a rank at each step of a plan, by
 * kind (memory.h): the peak (the step with the most bytes live: values,
 * the step's workspace and the scratch of the collectives MPI is running)
 * split by kind, and the timeline, one row per op (the bytes at the op's
 * step with the most).  mrt_planning_finish takes its live peak from here,
 * so the figure printed and the figure split are the same one.
 *
 * A value is live from the step that makes it (inputs: from the start)
 * to its last use (plan_finish.c's lifetimes); a stage's walk counts the
 * values the ranks of that pipeline stage hold (their stage's, and every
 * stage's) and the workspace and scratch of the steps they run (a
 * SENDRECV on both sides).
 */
#include <stdlib.h>
#include <string.h>

#include "memory.h"

#define NK MRT_MEM_KIND_COUNT

static int64_t value_bytes(const mrt_plan *p, int v)
{
    return p->value[v].count * p->value[v].elsize;
}

static int value_on_stage(const mrt_plan *p, int v, int stage)
{
    return stage < 0 || p->pipe.stages < 2 || p->value[v].stage < 0 ||
           p->value[v].stage == stage;
}

static int step_on_stage(const mrt_plan *p, const mrt_step *s, int stage)
{
    return stage < 0 || p->pipe.stages < 2 || s->stage < 0 ||
           s->stage == stage ||
           (s->kind == MRT_STEP_SENDRECV && s->from_stage == stage);
}

/* delta[k][kind]: the bytes of each kind that become live at step k
 * (negative: die before it); the workspace column holds MPI's scratch. */
static void fill_deltas(const mrt_plan *p, int stage, int64_t (*delta)[NK])
{
    for (int v = 0; v < p->nvalues; v++) {
        const mrt_value *x = &p->value[v];
        if (x->alias_of || !value_on_stage(p, v, stage))
            /* (in place: the bytes of the value it replaces) */
            continue;
        delta[x->def < 0 ? 0 : x->def][x->kind] += value_bytes(p, v);
        delta[x->last_use + 1][x->kind] -= value_bytes(p, v);
    }
    for (int k = 0; k < p->nsteps; k++) { /* to its wait in the background */
        const mrt_step *s = &p->step[k];
        int end = s->wait > k ? s->wait : k + 1;
        if (!step_on_stage(p, s, stage))
            continue;
        delta[k][MRT_MEM_WORKSPACE] += s->mpi_scratch;
        delta[end][MRT_MEM_WORKSPACE] -= s->mpi_scratch;
    }
}

static int64_t row_sum(const int64_t row[NK])
{
    int64_t t = 0;
    for (int c = 0; c < NK; c++)
        t += row[c];
    return t;
}

mrt_status mrt_memory_walk_plan(const mrt_plan *p, int stage,
                                mrt_memory_walk *w)
{
    int64_t(*delta)[NK] = calloc((size_t)p->nsteps + 2, sizeof *delta);
    if (!delta)
        return MRT_E_NOMEM;
    fill_deltas(p, stage, delta);
    int64_t live[NK] = {0}, scratch = 0;
    w->peak = -1;
    w->peak_step = 0;
    w->scratch_max = 0;
    w->values_max = 0;
    memset(w->kind_max, 0, sizeof w->kind_max);
    if (w->rows)
        memset(w->rows, 0, (size_t)p->nops * sizeof *w->rows);
    for (int k = 0; k <= p->nsteps; k++) {
        for (int c = 0; c < NK; c++)
            live[c] += delta[k][c];
        scratch = live[MRT_MEM_WORKSPACE];
        int64_t values = row_sum(live) - scratch;
        w->values_max = values > w->values_max ? values : w->values_max;
        w->scratch_max = scratch > w->scratch_max ? scratch : w->scratch_max;
        int64_t now[NK];
        memcpy(now, live, sizeof now);
        if (k < p->nsteps && step_on_stage(p, &p->step[k], stage))
            now[MRT_MEM_WORKSPACE] += p->step[k].workspace;
        for (int c = 0; c < NK; c++)
            w->kind_max[c] = now[c] > w->kind_max[c] ? now[c] : w->kind_max[c];
        int64_t total = row_sum(now);
        if (total > w->peak) {
            w->peak = total;
            w->peak_step = k;
            memcpy(w->by_kind, now, sizeof now);
        }
        int op = k < p->nsteps ? p->step[k].op : -1;
        if (w->rows && op >= 0 && total > row_sum(w->rows[op]))
            memcpy(w->rows[op], now, sizeof now);
    }
    free(delta);
    return MRT_OK;
}

int mrt_plan_op_count(const mrt_plan *plan)
{
    return plan ? plan->nops : 0;
}

int mrt_plan_op_user(const mrt_plan *plan, int i)
{
    return plan && i >= 0 && i < plan->nops ? plan->op[i].user : -1;
}

int mrt_plan_op_phase(const mrt_plan *plan, int i)
{
    return plan && i >= 0 && i < plan->nops ? (int)plan->op[i].phase : -1;
}

const char *mrt_plan_op_name(const mrt_plan *plan, int i)
{
    if (!plan || i < 0 || i >= plan->nops)
        return NULL;
    return plan->tensor_name[plan->value[plan->op[i].out_value].tensor];
}

static int peak_op(const mrt_plan *p, int step)
{
    if (p->nsteps == 0)
        return -1;
    return p->step[step < p->nsteps ? step : p->nsteps - 1].op;
}

mrt_status mrt_plan_get_memory(const mrt_plan *plan, int stage,
                               mrt_plan_memory *out, mrt_error *err)
{
    if (!plan || !out)
        return mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0},
                             "mrt_plan_get_memory: argument '%s': NULL",
                             plan ? "out" : "plan");
    if (stage < -1 || stage >= (plan->pipe.stages < 2 ? 0 : plan->pipe.stages))
        return mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0},
                             "mrt_plan_get_memory: argument 'stage': %d "
                             "(the plan has %d pipeline stages; -1: all)",
                             stage,
                             plan->pipe.stages < 2 ? 0 : plan->pipe.stages);
    mrt_memory_walk w = {0};
    int all = stage < 0; /* a pipeline's rank: its busiest stage's */
    if (all && plan->pipe.stages > 1)
        stage = plan->pipe.peak_stage;
    if (mrt_memory_walk_plan(plan, stage, &w) != MRT_OK)
        return mrt_error_set(err, MRT_E_NOMEM, "", (mrt_mark){0},
                             "out of memory");
    memset(out, 0, sizeof *out);
    out->live_peak = w.peak;
    memcpy(out->by_kind, w.by_kind, sizeof w.by_kind);
    out->peak = all ? plan->totals.peak_memory : w.peak;
    out->arena = plan->arena_bytes;
    out->values_peak = w.values_max;
    out->fragmentation = out->peak - out->live_peak;
    if (stage < 0)
        out->packing = plan->arena_bytes -
                       (w.peak - w.by_kind[MRT_MEM_WORKSPACE]);
    out->peak_step = w.peak_step;
    out->peak_op = peak_op(plan, w.peak_step);
    out->user = out->peak_op >= 0 ? plan->op[out->peak_op].user : 0;
    out->phase = out->peak_op >= 0 ? (int)plan->op[out->peak_op].phase : 0;
    out->device_memory = plan->device_memory;
    out->stages = plan->pipe.stages > 1 ? plan->pipe.stages : 1;
    out->fits = !plan->device_memory || out->peak <= plan->device_memory;
    return MRT_OK;
}

int mrt_plan_memory_timeline(const mrt_plan *plan, int stage,
                             int64_t (*rows)[MRT_MEM_KIND_COUNT])
{
    if (!plan || stage < -1 ||
        stage >= (plan->pipe.stages < 2 ? 0 : plan->pipe.stages))
        return -1;
    if (!rows)
        return plan->nops;
    mrt_memory_walk w = {.rows = rows};
    if (stage < 0 && plan->pipe.stages > 1) /* a rank: its busiest stage */
        stage = plan->pipe.peak_stage;
    return mrt_memory_walk_plan(plan, stage, &w) == MRT_OK ? plan->nops : -1;
}
