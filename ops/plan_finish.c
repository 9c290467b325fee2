/*
 * plan_finish.c — the last pass over a plan: lifetimes of the values,
 * the workspace each step needs, where each value lives in the run's one
 * arena, the peak memory per rank, the totals, and the communication
 * lower bound of matmul-like ops.
 *
 * Memory model.  Inputs and outputs live through the whole program (a
 * repeated run needs its inputs again); every other value lives from the
 * step that makes it to the last step that reads it.  A step also needs
 * its workspace while it runs (kernel packing, or packing for a
 * collective).  The peak is the largest sum of live values plus the
 * running step's workspace; the arena packs values by first fit over
 * their lifetimes, so it can exceed the largest live sum a little.
 *
 * Every figure of memory is at most the sum of all the buffers of a rank
 * (every value, rounded up to the arena's alignment, every workspace and
 * every MPI scratch), so that sum is checked first: when it does not fit
 * in 64 bits the planning context records an overflow at the tensor where
 * it stopped fitting (planning then fails there), and nothing past it is
 * computed.
 */
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "first_fit.h"
#include "step_widen.h"
#include "kernel_plan.h"
#include "memory.h"
#include "planning.h"
#include "schedule.h"

#define ARENA_ALIGN 64

static int64_t value_bytes(const mrt_plan *p, int v)
{
    return p->value[v].count * p->value[v].elsize;
}

static mrt_kview view_of(const mrt_value *v)
{
    return (mrt_kview){.ndims = v->layout.ndims,
                       .dim = v->layout.dim,
                       .ext = v->local,
                       .data = NULL};
}

/* The workspace of einsum steps by the shapes of their operands: a long
 * program repeats a few shapes, and planning a kernel for each step was
 * the costliest part of finishing a plan.  Direct-mapped. */
#define WS_SLOTS 64
#define WS_KEY_MAX (1 + 3 * (2 + 2 * MRT_MAX_DIMS))
typedef struct ws_slot {
    int len; /* 0: empty */
    int64_t key[WS_KEY_MAX];
    int64_t bytes;
} ws_slot;

/* The dims and local extents of the step's operands, into key. */
static int ws_key(const mrt_plan *p, const mrt_step *s, int64_t key[])
{
    int n = 0, v[3] = {s->in, s->in2, s->out};
    key[n++] = s->in2 >= 0;
    for (int k = 0; k < 3; k++) {
        if (v[k] < 0)
            continue;
        const mrt_value *x = &p->value[v[k]];
        key[n++] = x->layout.ndims;
        key[n++] = x->dtype;
        for (int i = 0; i < x->layout.ndims; i++) {
            key[n++] = x->layout.dim[i];
            key[n++] = x->local[i];
        }
    }
    return n;
}

static int64_t step_workspace(mrt_planning *pl, const mrt_step *s);

static int64_t cached_workspace(mrt_planning *pl, const mrt_step *s,
                                ws_slot *cache)
{
    const mrt_plan *p = pl->plan;
    if (!cache || s->kind != MRT_STEP_EINSUM)
        return step_workspace(pl, s);
    int64_t key[WS_KEY_MAX];
    int n = ws_key(p, s, key);
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < n; i++)
        h = (h ^ (uint64_t)key[i]) * 1099511628211ull;
    ws_slot *e = &cache[(h >> 32) % WS_SLOTS];
    if (e->len == n && !memcmp(e->key, key, (size_t)n * sizeof *key))
        return e->bytes;
    e->len = n;
    memcpy(e->key, key, (size_t)n * sizeof *key);
    e->bytes = step_workspace(pl, s);
    return e->bytes;
}

static int64_t step_workspace(mrt_planning *pl, const mrt_step *s)
{
    const mrt_plan *p = pl->plan;
    /* 16-bit operands widened around the kernel (step_widen.h) */
    int64_t widen = mrt_step_widen_bytes(p, s);
    if (s->kind == MRT_STEP_EINSUM) {
        mrt_kview a = view_of(&p->value[s->in]), c = view_of(&p->value[s->out]);
        mrt_kview b = s->in2 >= 0 ? view_of(&p->value[s->in2]) : a;
        size_t ws = mrt_einsum_workspace(mrt_step_compute_dtype(p, s), &a,
                                         s->in2 >= 0 ? &b : NULL, &c);
        if (ws <= INT64_MAX - (uint64_t)widen)
            return (int64_t)ws + widen;
        mrt_planning_overflow(pl, p->value[s->out].tensor,
                              MRT_PLAN_OVERFLOW_MEMORY);
        return 0;
    }
    if (!mrt_step_needs_packing(p, s))
        return widen;
    if (mrt_step_is_uneven(p, s)) { /* a block of the output per rank */
        int64_t ws;
        if (!mrt_checked_mul(value_bytes(p, s->out), s->group, &ws))
            return ws;
        mrt_planning_overflow(pl, p->value[s->out].tensor,
                              MRT_PLAN_OVERFLOW_MEMORY);
        return 0;
    }
    return value_bytes(p, s->in); /* the reduce-scatter's packed input */
}

static void lifetimes(mrt_plan *p)
{
    for (int v = 0; v < p->nvalues; v++) {
        p->value[v].def = -1;
        p->value[v].last_use = -1;
    }
    for (int k = 0; k < p->nsteps; k++) {
        const mrt_step *s = &p->step[k];
        p->value[s->out].def = k;
        p->value[s->in].last_use = k;
        if (s->in2 >= 0)
            p->value[s->in2].last_use = k;
    }
    /* a collective in the background reads its input until its wait
     * (and writes its output until then: below) */
    for (int k = 0; k < p->nsteps; k++) {
        const mrt_step *s = &p->step[k];
        if (s->wait > 0 && p->value[s->in].last_use < s->wait - 1)
            p->value[s->in].last_use = s->wait - 1;
    }
    for (int i = 0; i < p->ninputs; i++)
        p->value[p->tensor_value[p->input[i]]].last_use = p->nsteps;
    for (int k = 0; k < p->noutputs; k++)
        p->value[p->tensor_value[p->output[k]]].last_use = p->nsteps;
    for (int v = 0; v < p->nvalues; v++) /* made, never read: dies at once */
        if (p->value[v].last_use < p->value[v].def)
            p->value[v].last_use = p->value[v].def;
    /* ... unless a collective in the background still writes it */
    for (int k = 0; k < p->nsteps; k++) {
        const mrt_step *s = &p->step[k];
        if (s->wait > 0 && p->value[s->out].last_use < s->wait - 1)
            p->value[s->out].last_use = s->wait - 1;
    }
}

/* 1 if value v lives on the ranks of pipeline stage `stage` (-1: the
 * values every stage holds, or every value when not pipelined). */
static int on_stage(const mrt_plan *p, int v, int stage)
{
    return p->pipe.stages < 2 || p->value[v].stage == stage;
}

/* First fit over lifetimes of the values of one stage (values come in
 * order of creation), from offset `base`; the end of the last, in *end. */
static mrt_status place_stage(mrt_plan *p, int stage, int64_t base,
                              int64_t *end)
{
    mrt_fit *f = mrt_fit_create(p->nvalues);
    if (!f)
        return MRT_E_NOMEM;
    *end = base;
    for (int v = 0; v < p->nvalues; v++) {
        mrt_value *val = &p->value[v];
        if (!on_stage(p, v, stage))
            continue;
        if (val->alias_of) { /* in place: its buffer's (made before it) */
            val->offset = p->value[val->alias_of - 1].offset;
            continue;
        }
        int64_t size = (value_bytes(p, v) + ARENA_ALIGN - 1) / ARENA_ALIGN *
                       ARENA_ALIGN;
        mrt_fit_expire(f, val->def); /* the values dead before it is made */
        val->offset = base + mrt_fit_place(f, v, size, val->last_use);
        if (val->offset + size > *end)
            *end = val->offset + size;
    }
    mrt_fit_destroy(f);
    return MRT_OK;
}

/* The arena.  A pipeline's rank holds only its stage's values: the
 * values of every stage first, then each stage's packed apart from the
 * others' from the same offset, so the arena is the largest stage's. */
static mrt_status place(mrt_plan *p)
{
    int64_t common, end;
    mrt_status st = place_stage(p, -1, 0, &common);
    p->arena_bytes = common;
    for (int s = 0; st == MRT_OK && p->pipe.stages > 1 && s < p->pipe.stages;
         s++) {
        st = place_stage(p, s, common, &end);
        if (end > p->arena_bytes)
            p->arena_bytes = end;
    }
    return st;
}

/* The walk of the busiest pipeline stage (of every rank when not
 * pipelined: memory_timeline.c counts what each stage's ranks hold). */
static mrt_status busiest_stage(mrt_plan *p, mrt_memory_walk *w)
{
    mrt_status st = mrt_memory_walk_plan(p, -1, w);
    for (int s = 0; st == MRT_OK && p->pipe.stages > 1 && s < p->pipe.stages;
         s++) {
        mrt_memory_walk ws = {0};
        st = mrt_memory_walk_plan(p, s, &ws);
        if (s == 0 || ws.peak > w->peak) {
            *w = ws;
            p->pipe.peak_stage = s;
        }
    }
    return st;
}

/* First fit, and for a plan of few enough values the packing by size
 * too (memory_pack.c): the smaller arena is kept.  (Not for a pipeline,
 * whose stages' values share offsets: each rank holds its own.) */
static mrt_status pack(mrt_plan *p)
{
    if (place(p) != MRT_OK)
        return MRT_E_NOMEM;
    if (p->nvalues > MRT_PACK_MAX_VALUES || p->pipe.stages > 1)
        return MRT_OK; /* a pipeline's stages: packed apart by first fit */
    int64_t *off = malloc(((size_t)p->nvalues + 1) * sizeof *off);
    int64_t arena = off ? mrt_memory_pack(p, ARENA_ALIGN, off) : -1;
    if (arena >= 0 && arena < p->arena_bytes) {
        for (int v = 0; v < p->nvalues; v++)
            p->value[v].offset = off[v];
        p->arena_bytes = arena;
    }
    free(off);
    return arena >= 0 ? MRT_OK : MRT_E_NOMEM;
}

/* Words any plan must move per rank for a matmul-like op, in bytes. */
static void lower_bound(mrt_plan *p, int i)
{
    const mrt_plan_op *o = &p->op[i];
    for (int k = o->first_step; k < o->first_step + o->nsteps; k++) {
        const mrt_step *s = &p->step[k];
        if (s->kind != MRT_STEP_EINSUM || s->cls.ninputs != 2)
            continue;
        /* The global sizes of the classes: local sizes times the splits. */
        mrt_kview a = {0}, b = {0}, c = {0};
        const mrt_value *va = &p->value[s->in], *vb = &p->value[s->in2],
                        *vc = &p->value[s->out];
        a = (mrt_kview){va->layout.ndims, va->layout.dim, va->layout.size, 0};
        b = (mrt_kview){vb->layout.ndims, vb->layout.dim, vb->layout.size, 0};
        c = (mrt_kview){vc->layout.ndims, vc->layout.dim, vc->layout.size, 0};
        mrt_einsum_class g;
        if (mrt_einsum_classify(&a, &b, &c, &g, NULL) != MRT_OK)
            return;
        double words = mrt_cost_matmul_lower_bound(
            (double)g.size[MRT_IDX_M], (double)g.size[MRT_IDX_N],
            (double)g.size[MRT_IDX_K], (double)g.size[MRT_IDX_BATCH],
            (double)p->mesh.nranks);
        p->op[i].lower_bound_bytes = words * p->elsize;
    }
    unsigned all = 0;
    for (int a = 0; a < p->mesh.naxes; a++)
        if (p->mesh.size[a] > 1)
            all |= 1u << a;
    for (int k = 0; k < o->nin; k++)
        if ((mrt_layout_used_axes(&p->value[o->in_value[k]].layout) & all) !=
            all)
            p->op[i].bound_replicated = 1;
}

/* 1 if the sum of every buffer of a rank fits in 64 bits (it bounds
 * every figure of memory below); else records the overflow at the tensor
 * whose buffer (or whose step's workspace or scratch) makes it too much. */
static int buffers_fit(mrt_planning *pl)
{
    const mrt_plan *p = pl->plan;
    int64_t sum = 0, b;
    for (int v = 0; v < p->nvalues; v++)
        if (mrt_checked_round_up(value_bytes(p, v), ARENA_ALIGN, &b) ||
            mrt_checked_add(sum, b, &sum)) {
            mrt_planning_overflow(pl, p->value[v].tensor,
                                  MRT_PLAN_OVERFLOW_MEMORY);
            return 0;
        }
    for (int k = 0; k < p->nsteps; k++)
        if (mrt_checked_add(sum, p->step[k].workspace, &sum) ||
            mrt_checked_add(sum, p->step[k].mpi_scratch, &sum)) {
            mrt_planning_overflow(pl, p->value[p->step[k].out].tensor,
                                  MRT_PLAN_OVERFLOW_MEMORY);
            return 0;
        }
    return pl->overflow_tensor < 0;
}

static void totals(mrt_plan *p)
{
    mrt_plan_totals *t = &p->totals;
    memset(t, 0, sizeof *t);
    memset(p->axis_bytes, 0, sizeof p->axis_bytes);
    for (int k = 0; k < p->nsteps; k++) {
        const mrt_step *s = &p->step[k];
        int ph = p->op[s->op].phase;
        t->phase_time_s[ph] += s->time_s;
        if (mrt_step_is_collective(s->kind)) {
            t->phase_comm_bytes[ph] += s->bytes;
            t->phase_wire_bytes[ph] += s->cost.wire_bytes;
            t->phase_collectives[ph]++;
            t->comm_bytes += s->bytes;
            t->comm_bytes_total = mrt_saturating_add(t->comm_bytes_total,
                                                     s->bytes_total);
            t->wire_bytes += s->cost.wire_bytes;
            t->messages += s->cost.messages;
            t->collectives++;
            t->comm_time_s += s->time_s;
            p->axis_bytes[s->axes] += s->bytes;
        } else {
            t->compute_time_s += s->time_s;
        }
        t->flops += s->flops;
        p->op[s->op].time_s += s->time_s;
        if (mrt_step_is_collective(s->kind))
            p->op[s->op].comm_time_s += s->time_s;
    }
    t->time_s = t->comm_time_s + t->compute_time_s;
}

void mrt_plan_tally(mrt_plan *p)
{
    for (int i = 0; i < p->nops; i++)
        p->op[i].time_s = p->op[i].comm_time_s = 0;
    totals(p);
}

mrt_status mrt_planning_finish(mrt_planning *pl, mrt_error *err)
{
    mrt_plan *p = pl->plan;
    p->device_memory = pl->opt->device_memory > 0 ? pl->opt->device_memory
                                                  : p->profile.device_memory;
    mrt_plan_schedule_overlap(p, pl->opt->blocking);
    lifetimes(p);
    mrt_plan_alias_updates(p, pl->spec);
    p->max_workspace = 0;
    ws_slot *cache = calloc(WS_SLOTS, sizeof *cache); /* NULL: no cache */
    for (int k = 0; k < p->nsteps; k++) {
        p->step[k].workspace = cached_workspace(pl, &p->step[k], cache);
        if (p->step[k].workspace > p->max_workspace)
            p->max_workspace = p->step[k].workspace;
    }
    free(cache);
    for (int i = 0; i < p->nops; i++) {
        p->op[i].time_s = p->op[i].comm_time_s = 0;
        lower_bound(p, i);
    }
    totals(p);
    mrt_status st = mrt_schedule_plan(p, pl->spec, err);
    if (st != MRT_OK)
        return st;
    if (!buffers_fit(pl))
        return MRT_OK; /* the build reports the overflow */
    /* The most live bytes at any step (values, the step's workspace,
     * the scratch of the collectives running), split by kind: of the
     * busiest stage when pipelined. */
    mrt_memory_walk w = {0};
    if (mrt_memory_classify(p, pl->spec) != MRT_OK ||
        mrt_plan_blocks_tally(p, pl->spec) != MRT_OK ||
        busiest_stage(p, &w) != MRT_OK || pack(p) != MRT_OK)
        return mrt_error_set(err, MRT_E_NOMEM, p->spec_path, (mrt_mark){0},
                             "out of memory while planning");
    p->live_peak = w.peak;
    /* What a run holds at its peak: the arena (every value, at the
     * offsets placed above; it stays allocated), the workspace, and the
     * most scratch MPI allocates at once. */
    p->totals.peak_memory = p->arena_bytes + p->max_workspace + w.scratch_max;
    return MRT_OK;
}
