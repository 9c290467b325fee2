/*
 * cheapest.c — the cost-aware choice of how to lower one einsum
 * (MRT_STRATEGY_CHEAPEST): the cheapest execution layout by modeled time.
 *
 * Every execution layout of the op's dims is a candidate (xlayout.c
 * enumerates them: each mesh axis of size > 1 splits at most one dim or
 * none, a dim split over several axes takes them in any order, and every
 * block of a split must hold something: uneven splits are candidates).
 * For each one, and for each way of handling
 * pending sums (an input's pending sum may ride through the kernel, since
 * the product is linear in each input, when the layout does not use its
 * axes; the result's pending sums may be left for its one consumer), the
 * steps are emitted for real, costed with
 * the cost model, and rolled back.  The cheapest by modeled time wins
 * (ties: fewer bytes, then the order of enumeration, which starts from
 * the unsplit layout), and is emitted again to stay.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "planning.h"

/* ---- the choice ---- */

typedef struct chooser {
    mrt_planning *pl;
    mrt_plan *p;
    const mrt_spec *s;
    int op;
    const mrt_layout *home;
    int may_defer;
    mrt_error *err;
    mrt_status st;
    int found;
    mrt_lowering best;
    double best_time;
    int64_t best_bytes;
    int first_alt;
} chooser;

static unsigned exec_axes(const mrt_xlayout *e)
{
    unsigned m = 0;
    for (int i = 0; i < e->ndims; i++)
        for (int j = 0; j < e->naxes[i]; j++)
            m |= 1u << e->axes[i][j];
    return m;
}

static void record(chooser *sr, const mrt_lowering *lw, mrt_planning_mark m)
{
    mrt_planning *pl = sr->pl;
    mrt_plan *p = sr->p;
    double t = 0, tc = 0, tk = 0;
    for (int k = m.nsteps; k < p->nsteps; k++) {
        t += p->step[k].time_s;
        if (p->step[k].kind == MRT_STEP_EINSUM ||
            p->step[k].kind == MRT_STEP_GATHER ||
            p->step[k].kind == MRT_STEP_SCATTER_ADD)
            tk += p->step[k].time_s;
        else
            tc += p->step[k].time_s;
    }
    int64_t bytes = p->comm_bytes - m.comm_bytes;
    if (!sr->found || t < sr->best_time * (1 - 1e-12) ||
        (t <= sr->best_time * (1 + 1e-12) && bytes < sr->best_bytes)) {
        sr->found = 1;
        sr->best = *lw;
        sr->best_time = t;
        sr->best_bytes = bytes;
    }
    if (!pl->explain)
        return;
    if (p->nalts == pl->cap_alts) {
        int ncap = pl->cap_alts ? 2 * pl->cap_alts : 64;
        mrt_alt *na = realloc(p->alt, (size_t)ncap * sizeof *na);
        if (!na)
            return; /* explain is best effort; the plan is unaffected */
        p->alt = na;
        pl->cap_alts = ncap;
    }
    mrt_alt *a = &p->alt[p->nalts++];
    memset(a, 0, sizeof *a);
    mrt_xlayout_str(p, &lw->exec, a->exec, sizeof a->exec);
    if (lw->keep_out)
        mrt_mesh_axes_str(&p->mesh, lw->keep_out, a->keep, sizeof a->keep);
    a->time_s = t;
    a->comm_time_s = tc;
    a->kernel_time_s = tk;
    a->comm_bytes = bytes;
    a->nsteps = p->nsteps - m.nsteps;
}

/* Costs one lowering: emit, measure, roll back. */
static int try_lowering(chooser *sr, const mrt_lowering *lw)
{
    mrt_planning_mark m = mrt_planning_get_mark(sr->pl);
    mrt_status st = mrt_lower_emit(sr->pl, sr->op, sr->home, lw, 0, sr->err);
    if (st != MRT_OK) {
        sr->st = st;
        return 1;
    }
    record(sr, lw, m);
    mrt_planning_rollback(sr->pl, m);
    return 0;
}

static int visit(void *ctx, const mrt_xlayout *e)
{
    chooser *sr = ctx;
    const mrt_spec_op *o = &sr->s->op[sr->op];
    unsigned used = exec_axes(e), pend[2] = {0, 0};
    for (int k = 0; k < o->nin; k++)
        pend[k] = sr->p->value[sr->p->tensor_value[o->in[k]]].layout.partial;
    /* Options: each input's pending sum rides through or is resolved
     * first; the result's sums are resolved or (if allowed) left. */
    for (int opt = 0; opt < 8; opt++) {
        mrt_lowering lw = {.exec = *e};
        for (int k = 0; k < 2; k++)
            if (opt & (1 << k)) {
                if (!pend[k] || (pend[k] & used) || k == mrt_spec_op_ids(o))
                    goto next; /* (a lookup is not linear in its ids) */
                lw.keep_in[k] = pend[k];
            }
        if (lw.keep_in[0] & lw.keep_in[1])
            continue;
        if (opt & 4) {
            if (!sr->may_defer)
                continue;
            unsigned res = lw.keep_in[0] | lw.keep_in[1];
            for (int i = 0; i < e->ndims; i++)
                if (mrt_layout_find_dim(sr->home, e->dim[i]) < 0)
                    for (int j = 0; j < e->naxes[i]; j++)
                        res |= 1u << e->axes[i][j];
            for (int a = 0; a < sr->p->mesh.naxes; a++)
                if (sr->p->mesh.size[a] == 1)
                    res &= ~(1u << a);
            lw.keep_out = res & ~mrt_layout_used_axes(sr->home);
            if (!lw.keep_out)
                continue;
        }
        if (try_lowering(sr, &lw))
            return 1;
    next:;
    }
    return 0;
}

static int by_time(const void *x, const void *y)
{
    const mrt_alt *a = x, *b = y;
    if (a->time_s != b->time_s)
        return a->time_s < b->time_s ? -1 : 1;
    return (a->comm_bytes > b->comm_bytes) - (a->comm_bytes < b->comm_bytes);
}

/* ---- memo ---- */

#define MEMO_KEY_MAX 512

typedef struct memo_entry {
    uint64_t hash;
    int len;
    int32_t key[MEMO_KEY_MAX];
    mrt_lowering best;
} memo_entry;

struct mrt_cheapest_memo {
    memo_entry *e;
    int n, cap; /* cap: a power of two; open addressing */
};

struct mrt_cheapest_memo *mrt_cheapest_memo_create(void)
{
    return calloc(1, sizeof(struct mrt_cheapest_memo));
}

void mrt_cheapest_memo_destroy(struct mrt_cheapest_memo *m)
{
    if (m)
        free(m->e);
    free(m);
}

static void key_layout(int32_t *key, int *len, const mrt_layout *l)
{
    int n = *len;
    key[n++] = l->ndims;
    key[n++] = (int32_t)l->partial;
    for (int i = 0; i < l->ndims; i++) {
        key[n++] = l->dim[i];
        key[n++] = (int32_t)(l->size[i] & 0x7fffffff);
        key[n++] = (int32_t)(l->size[i] >> 31);
        key[n++] = l->naxes[i];
        for (int j = 0; j < l->naxes[i]; j++)
            key[n++] = l->axes[i][j];
    }
    *len = n;
}

/* The op's situation, canonically: inputs' layouts, home, deferral. */
static int make_key(const mrt_plan *p, const mrt_spec *s, int op,
                    const mrt_layout *home, int may_defer, int32_t *key)
{
    int len = 0;
    const mrt_spec_op *o = &s->op[op];
    key[len++] = o->nin;
    key[len++] = (int32_t)o->kind;
    key[len++] = may_defer;
    for (int k = 0; k < o->nin; k++)
        key_layout(key, &len, &p->value[p->tensor_value[o->in[k]]].layout);
    key_layout(key, &len, home);
    return len;
}

static uint64_t key_hash(const int32_t *key, int len)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < len; i++)
        h = (h ^ (uint32_t)key[i]) * 1099511628211ull;
    return h;
}

static memo_entry *memo_find(struct mrt_cheapest_memo *m, uint64_t h,
                             const int32_t *key, int len)
{
    if (!m || !m->cap)
        return NULL;
    for (int i = (int)(h & (uint64_t)(m->cap - 1));;
         i = (i + 1) & (m->cap - 1)) {
        memo_entry *e = &m->e[i];
        if (!e->len)
            return NULL;
        if (e->hash == h && e->len == len &&
            !memcmp(e->key, key, (size_t)len * sizeof *key))
            return e;
    }
}

static void memo_put(struct mrt_cheapest_memo *m, uint64_t h,
                     const int32_t *key, int len, const mrt_lowering *best)
{
    if (!m)
        return;
    if (2 * (m->n + 1) > m->cap) { /* grow; a failure just forgets */
        int cap = m->cap ? 2 * m->cap : 64;
        memo_entry *ne = calloc((size_t)cap, sizeof *ne);
        if (!ne)
            return;
        for (int i = 0; i < m->cap; i++) {
            if (!m->e[i].len)
                continue;
            int j = (int)(m->e[i].hash & (uint64_t)(cap - 1));
            while (ne[j].len)
                j = (j + 1) & (cap - 1);
            ne[j] = m->e[i];
        }
        free(m->e);
        m->e = ne;
        m->cap = cap;
    }
    int i = (int)(h & (uint64_t)(m->cap - 1));
    while (m->e[i].len)
        i = (i + 1) & (m->cap - 1);
    m->e[i] = (memo_entry){.hash = h, .len = len, .best = *best};
    memcpy(m->e[i].key, key, (size_t)len * sizeof *key);
    m->n++;
}

mrt_status mrt_cheapest_einsum(mrt_planning *pl, int op, const mrt_layout *home,
                               int may_defer, mrt_error *err)
{
    const mrt_spec *s = pl->spec;
    mrt_plan *p = pl->plan;
    int32_t key[MEMO_KEY_MAX];
    int len = 0;
    uint64_t h = 0;
    /* The key fits: 2 + 3 layouts of at most 2 + 12 * (4 + 8) ints. */
    if (!pl->explain) {
        len = make_key(p, s, op, home, may_defer, key);
        h = key_hash(key, len);
        memo_entry *e = memo_find(pl->memo, h, key, len);
        if (e)
            return mrt_lower_emit(pl, op, home, &e->best, 0, err);
    }
    chooser sr = {.pl = pl,
                  .p = p,
                  .s = s,
                  .op = op,
                  .home = home,
                  .may_defer = may_defer,
                  .err = err,
                  .st = MRT_OK,
                  .first_alt = p->nalts};
    mrt_xlayout dims;
    mrt_xlayout_init(p, s, op, &dims);
    mrt_xlayout_enumerate(p, &dims, visit, &sr);
    if (sr.st != MRT_OK)
        return sr.st;
    if (pl->explain) {
        p->op[op].first_alt = sr.first_alt;
        p->op[op].nalts = p->nalts - sr.first_alt;
        qsort(p->alt + sr.first_alt, (size_t)p->op[op].nalts, sizeof *p->alt,
              by_time);
    }
    /* The unsplit layout is always valid, so something was found. */
    if (!pl->explain)
        memo_put(pl->memo, h, key, len, &sr.best);
    return mrt_lower_emit(pl, op, home, &sr.best, 0, err);
}
