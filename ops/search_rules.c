/*
 * search_rules.c — `meshrt search`: every set of global layout rules for
 * a program, bounded, pruned, the survivors planned; the K best under a
 * memory cap and the time-versus-memory Pareto front.
 *
 * The time bound.  A plan's modeled time is the sum of its steps' times,
 * and every step belongs to one op.  Whatever the planner (the search,
 * the fixed rule or Mesh-TF's lowering), an op is lowered through one
 * execution layout e (an assignment of the mesh axes of size > 1 to the
 * op's dims, order aside) and costs at least
 *     kernel(e) + moves(input 1 -> e) + moves(input 2 -> e)
 *               + moves(result under e -> output's home) + reduction,
 * where each term is a cost the layouts force, not the one the planner
 * pays:
 *   - kernel(e): the GEMM time of the local product under e (exact);
 *   - an axis that splits a dim of the moved value in its current layout
 *     but not that dim in the target needs a collective over a group
 *     holding that axis: an all-to-all at least when the target splits
 *     another dim over it, an all-gather when the target does not use it;
 *   - an axis over which the result is a pending sum (e splits a summed
 *     dim over it) needs a reduce-scatter at least when the home splits a
 *     dim over it, and an all-reduce when it does not, unless the result
 *     may stay pending for its consumer.  A sum left pending is still
 *     resolved by some later reduction (no output is left pending);
 *     which one is not known, so it counts one message's latency on its
 *     axis: a reduction that resolves k axes at once sends at least k
 *     messages (2 per doubling of the group for all-reduce) over a link
 *     no faster than any of theirs, so these latencies and the terms
 *     above never count one collective twice.
 * A collective over a group holding axis a costs at least what the cost
 * model charges for the group of axis a alone (its link is the slowest of
 * the group's, its wire bytes and messages grow with the group), and the
 * value it moves holds at least global size / (ranks of the axes split in
 * either layout).  Collectives of one move may merge, so each move counts
 * its dearest axis only; input moves, result moves and reductions are
 * different steps and add up.  The bound of an op is the minimum over
 * every e; the program's is the sum over ops, less 1e-9 of itself for
 * rounding.  Input values are taken in their home layouts (op results:
 * home dims, pending sums ignored), which is where every planner finds
 * them.  Slices (local copies) are counted as free.
 *
 * The memory bound.  A value lives from the step that makes it to the
 * last step that reads it, inputs and outputs to the end of the program
 * (ops/plan_finish.c).  Every op's result is made, at some step, in the
 * dims of its home layout (only its pending sums may differ, which
 * change no size), and that value is what later ops read.  So when op i
 * makes it, the inputs' home shards, the outputs made before, and the
 * home shards of earlier results that a later op still reads are live
 * with it: the peak is at least the largest such sum over the ops.
 *
 * Candidates are visited by time bound (then enumeration order); one is
 * planned unless its time bound exceeds the K-th best time so far and a
 * planned candidate beats its bounds in both time and memory (so it can
 * enter neither the K best nor the Pareto front), or its memory bound
 * exceeds the cap.
 */
#include "search_rules.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plan.h"

#define MAX_CANDIDATES 1000000

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- enumeration ---- */

static int searched(const mrt_spec *s, int all_dims, int d)
{
    for (int t = 0; t < s->ntensors; t++)
        if ((all_dims || !s->tensor[t].own_layout) &&
            mrt_layout_find_dim(&s->tensor[t].layout, d) >= 0)
            return 1;
    return 0;
}

int mrt_rules_dim_searched(const mrt_spec *s, int d)
{
    return searched(s, 0, d);
}

typedef struct rules_enum {
    const mrt_spec *s;
    int na, ax[MRT_MAX_AXES]; /* the axes of size > 1 */
    int nd, *dims;            /* searched dims */
    mrt_rule *rule;           /* [ndims], the candidate being built */
    int64_t *parts;           /* [ndims], blocks per dim so far */
    int (*visit)(void *, const mrt_rule *);
    void *ctx;
} rules_enum;

/* Axis number k goes nowhere, then into each searched dim's list at
 * each position from the end (so mesh order comes first); a split that
 * stops being even stays uneven, so such branches are cut at once. */
static int place_axis(rules_enum *en, int k)
{
    if (k == en->na)
        return en->visit(en->ctx, en->rule);
    int a = en->ax[k], rc = place_axis(en, k + 1);
    for (int i = 0; i < en->nd && !rc; i++) {
        int d = en->dims[i];
        mrt_rule *r = &en->rule[d];
        int64_t saved = en->parts[d];
        if (en->s->dim_size[d] % (saved * en->s->mesh.size[a]))
            continue;
        en->parts[d] = saved * en->s->mesh.size[a];
        for (int pos = r->naxes; pos >= 0 && !rc; pos--) {
            memmove(&r->axes[pos + 1], &r->axes[pos],
                    (size_t)(r->naxes - pos) * sizeof r->axes[0]);
            r->axes[pos] = a;
            r->naxes++;
            rc = place_axis(en, k + 1);
            r->naxes--;
            memmove(&r->axes[pos], &r->axes[pos + 1],
                    (size_t)(r->naxes - pos) * sizeof r->axes[0]);
        }
        en->parts[d] = saved;
    }
    return rc;
}

static int enumerate(const mrt_spec *s, int all_dims,
                     int (*visit)(void *, const mrt_rule *), void *ctx)
{
    rules_enum en = {.s = s, .visit = visit, .ctx = ctx};
    en.dims = calloc((size_t)s->ndims + 1, sizeof *en.dims);
    en.rule = calloc((size_t)s->ndims + 1, sizeof *en.rule);
    en.parts = calloc((size_t)s->ndims + 1, sizeof *en.parts);
    int rc = -1;
    if (en.dims && en.rule && en.parts) {
        for (int a = 0; a < s->mesh.naxes; a++)
            if (s->mesh.size[a] > 1)
                en.ax[en.na++] = a;
        for (int d = 0; d < s->ndims; d++) {
            en.parts[d] = 1;
            if (searched(s, all_dims, d))
                en.dims[en.nd++] = d;
        }
        rc = place_axis(&en, 0);
    }
    free(en.dims);
    free(en.rule);
    free(en.parts);
    return rc;
}

int mrt_rules_enumerate(const mrt_spec *s,
                        int (*visit)(void *ctx, const mrt_rule *rules),
                        void *ctx)
{
    return enumerate(s, 0, visit, ctx);
}

/* ---- printing rules ---- */

static int put_axes(const mrt_spec *s, const mrt_rule *r, char *buf,
                    int size)
{
    if (r->naxes == 1)
        return snprintf(buf, (size_t)size, "%s", s->mesh.name[r->axes[0]]);
    int n = snprintf(buf, (size_t)size, "[");
    for (int j = 0; j < r->naxes && n < size; j++)
        n += snprintf(buf + n, (size_t)(size - n), "%s%s", j ? ", " : "",
                      s->mesh.name[r->axes[j]]);
    if (n < size)
        n += snprintf(buf + n, (size_t)(size - n), "]");
    return n;
}

char *mrt_rules_str(const mrt_spec *s, const mrt_rule *rules, char *buf,
                    int size)
{
    int n = 0;
    buf[0] = '\0';
    for (int d = 0; d < s->ndims && n < size; d++) {
        if (!rules[d].naxes)
            continue;
        n += snprintf(buf + n, (size_t)(size - n), "%s%s: ", n ? ", " : "",
                      s->dim_name[d]);
        if (n < size)
            n += put_axes(s, &rules[d], buf + n, size - n);
    }
    if (!n)
        snprintf(buf, (size_t)size, "(all replicated)");
    return buf;
}

void mrt_rules_print_yaml(const mrt_spec *s, const mrt_rule *rules, FILE *f)
{
    int any = 0;
    char axes[MRT_MAX_AXES * (MRT_NAME_MAX + 2) + 4];
    for (int d = 0; d < s->ndims; d++) {
        if (!rules[d].naxes)
            continue;
        put_axes(s, &rules[d], axes, sizeof axes);
        fprintf(f, "%s  %s: %s\n", any++ ? "" : "layout:\n", s->dim_name[d],
                axes);
    }
    if (!any)
        fputs("layout: {}\n", f);
}

/* ---- the bounds ---- */

/* Where a tensor sits: for each searched axis k, the spec dim it splits
 * (or -1); the mask of those axes; its global bytes. */
typedef struct home_map {
    int dimof[MRT_MAX_AXES];
    unsigned used;
    double bytes;
} home_map;

enum { IN0 = 1, IN1 = 2, OUT = 4 };

typedef struct op_info {
    int nd;                          /* the op's dims (exec order) */
    int dim[MRT_MAX_EINSUM_DIMS];    /* spec dim ids */
    int64_t size[MRT_MAX_EINSUM_DIMS];
    int cls_of[MRT_MAX_EINSUM_DIMS]; /* class of each dim */
    mrt_einsum_class cls;            /* of the unsplit op */
    int member[MRT_MAX_EINSUM_DIMS]; /* IN0 | IN1 | OUT */
    int nin, in[2], out;             /* tensor ids */
    int may_defer;                   /* its result may stay pending */
    int nexec;                       /* execution layouts, by kernel time */
    signed char *exec;               /* [nexec][na]: exec dim per axis */
    double *kernel_s;                /* [nexec] */
} op_info;

typedef struct bounds {
    const mrt_spec *s;
    int meshtf;                 /* homes come from the rules alone */
    int na, ax[MRT_MAX_AXES];   /* the axes of size > 1 */
    int k_of[MRT_MAX_AXES];     /* mesh axis -> k, or -1 */
    double lat[MRT_MAX_AXES], bw[MRT_MAX_AXES], size[MRT_MAX_AXES];
    int lg[MRT_MAX_AXES];       /* ceil(log2 size) */
    double reduce_flops;
    int elsize;
    op_info *op;                /* [nops] */
    int *last_read;             /* [ntensors]: the last op reading it */
    char *output;               /* [ntensors]: 1 for the outputs */
    home_map *home;             /* [ntensors], of the current candidate */
} bounds;

/* ---- cost floors of one collective over a group holding axis k ---- */

static double floor_gather(const bounds *b, int k, double n)
{
    return b->lat[k] * b->lg[k] + (b->size[k] - 1) * n / b->bw[k];
}

static double floor_move(const bounds *b, int k, double n)
{
    /* all-to-all (or all-gather): min messages, min wire */
    return b->lat[k] * b->lg[k] + (b->size[k] - 1) / b->size[k] * n / b->bw[k];
}

static double floor_reduce(const bounds *b, int k, double n, int all)
{
    double share = (b->size[k] - 1) / b->size[k];
    return (all ? 2 : 1) * (b->lat[k] * b->lg[k] + share * n / b->bw[k]) +
           share * n / b->elsize / b->reduce_flops;
}

static double group(const bounds *b, unsigned mask)
{
    double g = 1;
    for (int k = 0; k < b->na; k++)
        if (mask & (1u << k))
            g *= b->size[k];
    return g;
}


/* ---- per op, once: its dims, and the kernel time of every exec ---- */

typedef struct exec_walk {
    const bounds *b;
    const mrt_profile *prof;
    op_info *o;
    int cap;
    signed char cur[MRT_MAX_AXES];
    int64_t parts[MRT_MAX_EINSUM_DIMS];
} exec_walk;

/* The local product's time under the current exec: the classes' sizes
 * are products of local extents, as in the plan's kernel step. */
static double kernel_time(const exec_walk *w)
{
    const op_info *o = w->o;
    mrt_einsum_class c = o->cls;
    for (int i = 0; i < MRT_IDX_CLASS_COUNT; i++)
        c.size[i] = 1;
    for (int i = 0; i < o->nd; i++)
        c.size[o->cls_of[i]] *= o->size[i] / w->parts[i];
    return mrt_cost_kernel(w->prof, w->b->s->dtype, mrt_einsum_flops(&c));
}

static int add_exec(exec_walk *w)
{
    op_info *o = w->o;
    if (o->nexec == w->cap) {
        int ncap = w->cap ? 2 * w->cap : 64;
        signed char *ne = realloc(o->exec, (size_t)ncap * MRT_MAX_AXES);
        if (ne)
            o->exec = ne;
        double *nk = realloc(o->kernel_s, (size_t)ncap * sizeof *nk);
        if (nk)
            o->kernel_s = nk;
        if (!ne || !nk)
            return -1;
        w->cap = ncap;
    }
    memcpy(o->exec + (size_t)o->nexec * MRT_MAX_AXES, w->cur, MRT_MAX_AXES);
    o->kernel_s[o->nexec++] = kernel_time(w);
    return 0;
}

/* Searched axis k on no dim, then on each dim it splits evenly (the
 * order of axes within a dim changes no kernel and no bound). */
static int walk_exec(exec_walk *w, int k)
{
    op_info *o = w->o;
    if (k == w->b->na)
        return add_exec(w);
    w->cur[k] = -1;
    if (walk_exec(w, k + 1))
        return -1;
    for (int i = 0; i < o->nd; i++) {
        int64_t saved = w->parts[i], parts = saved * (int64_t)w->b->size[k];
        if (o->size[i] % parts)
            continue;
        w->parts[i] = parts;
        w->cur[k] = (signed char)i;
        int rc = walk_exec(w, k + 1);
        w->parts[i] = saved;
        if (rc)
            return -1;
    }
    w->cur[k] = -1;
    return 0;
}

typedef struct by_kernel {
    double t;
    int i;
} by_kernel;

static int cmp_kernel(const void *x, const void *y)
{
    const by_kernel *a = x, *b = y;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    return a->i - b->i;
}

/* Sorts an op's execs by kernel time, so the bound can stop early. */
static int sort_execs(op_info *o)
{
    by_kernel *k = malloc(((size_t)o->nexec + 1) * sizeof *k);
    signed char *e = malloc(((size_t)o->nexec + 1) * MRT_MAX_AXES);
    if (!k || !e) {
        free(k);
        free(e);
        return -1;
    }
    for (int i = 0; i < o->nexec; i++)
        k[i] = (by_kernel){o->kernel_s[i], i};
    qsort(k, (size_t)o->nexec, sizeof *k, cmp_kernel);
    for (int i = 0; i < o->nexec; i++) {
        memcpy(e + (size_t)i * MRT_MAX_AXES,
               o->exec + (size_t)k[i].i * MRT_MAX_AXES, MRT_MAX_AXES);
        o->kernel_s[i] = k[i].t;
    }
    free(o->exec);
    o->exec = e;
    free(k);
    return 0;
}

static void add_op_dim(op_info *o, const mrt_layout *l, int bit)
{
    for (int i = 0; i < l->ndims; i++) {
        int x = 0;
        while (x < o->nd && o->dim[x] != l->dim[i])
            x++;
        if (x == o->nd) {
            o->dim[o->nd] = l->dim[i];
            o->size[o->nd++] = l->size[i];
        }
        o->member[x] |= bit;
    }
}

/* Whether op i's result may be left pending for a consumer: planners
 * only ever do that for a result that is read and is not an output, so
 * this is the widest the bound must allow. */
static int result_may_defer(const mrt_spec *s, int t)
{
    int readers = 0;
    for (int k = 0; k < s->noutputs; k++)
        if (s->output[k] == t)
            return 0;
    for (int i = 0; i < s->nops; i++)
        for (int k = 0; k < s->op[i].nin; k++)
            readers += s->op[i].in[k] == t;
    return readers > 0;
}

static mrt_status op_init(bounds *b, const mrt_profile *prof, int i)
{
    const mrt_spec *s = b->s;
    const mrt_spec_op *so = &s->op[i];
    op_info *o = &b->op[i];
    const mrt_layout *l[3] = {&s->tensor[so->in[0]].layout,
                              &s->tensor[so->in[so->nin - 1]].layout,
                              &s->tensor[so->out].layout};
    o->nin = so->nin;
    o->in[0] = so->in[0];
    o->in[1] = so->in[so->nin - 1];
    o->out = so->out;
    add_op_dim(o, l[2], OUT);
    add_op_dim(o, l[0], IN0);
    if (so->nin > 1)
        add_op_dim(o, l[1], IN1);
    mrt_kview v[3];
    for (int k = 0; k < 3; k++)
        v[k] = (mrt_kview){l[k]->ndims, l[k]->dim, l[k]->size, NULL};
    if (mrt_einsum_classify(&v[0], so->nin > 1 ? &v[1] : NULL, &v[2],
                            &o->cls, NULL) != MRT_OK)
        return MRT_E_SPEC; /* cannot happen: the spec loaded */
    for (int c = 0; c < MRT_IDX_CLASS_COUNT; c++)
        for (int j = 0; j < o->cls.n[c]; j++)
            for (int x = 0; x < o->nd; x++)
                if (o->dim[x] == o->cls.dim[c][j])
                    o->cls_of[x] = c;
    o->may_defer = result_may_defer(s, so->out);
    exec_walk w = {.b = b, .prof = prof, .o = o};
    for (int x = 0; x < o->nd; x++)
        w.parts[x] = 1;
    if (walk_exec(&w, 0) || sort_execs(o))
        return MRT_E_NOMEM;
    return MRT_OK;
}

static void bounds_free(bounds *b)
{
    for (int i = 0; b->op && i < b->s->nops; i++) {
        free(b->op[i].exec);
        free(b->op[i].kernel_s);
    }
    free(b->op);
    free(b->home);
    free(b->last_read);
    free(b->output);
}

static mrt_status bounds_init(bounds *b, const mrt_spec *s,
                              const mrt_profile *prof, int meshtf)
{
    memset(b, 0, sizeof *b);
    b->s = s;
    b->meshtf = meshtf;
    b->elsize = mrt_dtype_size(s->dtype);
    b->reduce_flops = prof->reduce_flops;
    for (int a = 0; a < s->mesh.naxes; a++) {
        b->k_of[a] = -1;
        if (s->mesh.size[a] < 2)
            continue;
        int k = b->na++;
        mrt_link l = mrt_profile_link(prof, &s->mesh, a);
        b->ax[k] = a;
        b->k_of[a] = k;
        b->lat[k] = l.latency_s;
        b->bw[k] = l.bandwidth_Bps;
        b->size[k] = (double)s->mesh.size[a];
        while ((1ll << b->lg[k]) < s->mesh.size[a])
            b->lg[k]++;
    }
    b->op = calloc((size_t)s->nops + 1, sizeof *b->op);
    b->home = calloc((size_t)s->ntensors + 1, sizeof *b->home);
    b->last_read = calloc((size_t)s->ntensors + 1, sizeof *b->last_read);
    b->output = calloc((size_t)s->ntensors + 1, 1);
    if (!b->op || !b->home || !b->last_read || !b->output)
        return MRT_E_NOMEM;
    for (int t = 0; t < s->ntensors; t++)
        b->last_read[t] = -1;
    for (int i = 0; i < s->nops; i++)
        for (int k = 0; k < s->op[i].nin; k++)
            b->last_read[s->op[i].in[k]] = i;
    for (int k = 0; k < s->noutputs; k++)
        b->output[s->output[k]] = 1;
    for (int i = 0; i < s->nops; i++) {
        mrt_status st = op_init(b, prof, i);
        if (st)
            return st;
    }
    return MRT_OK;
}

/* Tensor t's home under rules: its own layout if it has one (unless
 * Mesh-TF, which knows only the global rules), else the rules. */
static void home_of(bounds *b, const mrt_rule *rules, int t)
{
    const mrt_spec_tensor *st = &b->s->tensor[t];
    const mrt_layout *l = &st->layout;
    home_map *h = &b->home[t];
    int own = st->own_layout && !b->meshtf;
    double count = 1;
    h->used = 0;
    for (int k = 0; k < MRT_MAX_AXES; k++)
        h->dimof[k] = -1;
    for (int i = 0; i < l->ndims; i++) {
        int n = own ? l->naxes[i] : rules[l->dim[i]].naxes;
        const int *axes = own ? l->axes[i] : rules[l->dim[i]].axes;
        count *= (double)l->size[i];
        for (int j = 0; j < n; j++) {
            int k = b->k_of[axes[j]];
            if (k >= 0) {
                h->dimof[k] = l->dim[i];
                h->used |= 1u << k;
            }
        }
    }
    h->bytes = count * b->elsize;
}

/* Moving input w of op o (bit IN0 or IN1) from its home to exec e. */
static double in_moves(const bounds *b, const op_info *o,
                       const signed char *e, int bit, const home_map *h)
{
    unsigned want = 0;
    for (int k = 0; k < b->na; k++)
        if (e[k] >= 0 && (o->member[e[k]] & bit))
            want |= 1u << k;
    double n = h->bytes / group(b, h->used | want), worst = 0;
    for (int k = 0; k < b->na; k++) {
        int from = h->dimof[k];
        if (from < 0)
            continue;
        int to = want & (1u << k) ? o->dim[e[k]] : -1;
        if (to != from)
            worst = fmax(worst, to >= 0 ? floor_move(b, k, n)
                                        : floor_gather(b, k, n));
    }
    return worst;
}

/* Moving the result of exec e to the output's home, and its sums. */
static double out_cost(const bounds *b, const op_info *o,
                       const signed char *e, const home_map *h)
{
    unsigned split = 0;
    for (int k = 0; k < b->na; k++)
        if (e[k] >= 0 && (o->member[e[k]] & OUT))
            split |= 1u << k;
    double n = h->bytes / group(b, h->used | split), moves = 0, reduce = 0;
    double deferred = 0;
    for (int k = 0; k < b->na; k++) {
        if (e[k] < 0)
            continue;
        int to = h->dimof[k];
        if (split & (1u << k)) {
            if (to != o->dim[e[k]])
                moves = fmax(moves, to >= 0 ? floor_move(b, k, n)
                                            : floor_gather(b, k, n));
        } else if (to >= 0) {
            reduce = fmax(reduce, floor_reduce(b, k, n, 0));
        } else if (!o->may_defer) {
            reduce = fmax(reduce, floor_reduce(b, k, n, 1));
        } else {
            deferred += b->lat[k];
        }
    }
    return moves + reduce + deferred;
}

static double op_bound(const bounds *b, const op_info *o)
{
    const home_map *in0 = &b->home[o->in[0]], *in1 = &b->home[o->in[1]];
    const home_map *out = &b->home[o->out];
    double best = INFINITY;
    for (int x = 0; x < o->nexec && o->kernel_s[x] < best; x++) {
        const signed char *e = o->exec + (size_t)x * MRT_MAX_AXES;
        double t = o->kernel_s[x] + in_moves(b, o, e, IN0, in0);
        if (o->nin > 1)
            t += in_moves(b, o, e, IN1, in1);
        t += out_cost(b, o, e, out);
        best = fmin(best, t);
    }
    return best;
}

/* Bytes of tensor t's shard in its home layout. */
static int64_t shard_bytes(const bounds *b, int t)
{
    const mrt_layout *l = &b->s->tensor[t].layout;
    int64_t count = 1;
    for (int i = 0; i < l->ndims; i++)
        count *= l->size[i];
    return count / (int64_t)group(b, b->home[t].used) * b->elsize;
}

/* The time and memory bounds of the candidate `rules`. */
static void candidate_bounds(bounds *b, const mrt_rule *rules,
                             double *time_s, int64_t *memory)
{
    const mrt_spec *s = b->s;
    for (int t = 0; t < s->ntensors; t++)
        home_of(b, rules, t);
    double t = 0;
    for (int i = 0; i < s->nops; i++)
        t += op_bound(b, &b->op[i]);
    *time_s = t * (1 - 1e-9);
    /* When op i makes its result in its home dims, these are live: the
     * inputs, the outputs made before, and the results of earlier ops
     * that a later op still reads. */
    int64_t inputs = 0, peak = 0;
    for (int t2 = 0; t2 < s->ntensors; t2++)
        if (s->tensor[t2].producer < 0)
            inputs += shard_bytes(b, t2);
    for (int i = 0; i < s->nops; i++) {
        int64_t live = inputs + shard_bytes(b, s->op[i].out);
        for (int j = 0; j < i; j++) {
            int t2 = s->op[j].out;
            if (b->output[t2] || b->last_read[t2] > i)
                live += shard_bytes(b, t2);
        }
        peak = live > peak ? live : peak;
    }
    *memory = peak > inputs ? peak : inputs;
}

/* ---- the driver ---- */

/* A candidate, compactly: where each axis of size > 1 goes. */
typedef struct cand {
    int64_t index;
    double bound_s;
    int64_t memory;                /* its memory bound */
    int owner[MRT_MAX_AXES];       /* spec dim of searched axis k, or -1 */
    signed char pos[MRT_MAX_AXES]; /* its place in that dim's rule */
} cand;

/* A planned candidate within the cap. */
typedef struct result {
    int64_t index;
    double bound_s;
    mrt_plan_totals totals;
    int cand;                      /* into the candidate array */
    int orders;                    /* equivalent orders grouped with it */
} result;

typedef struct driver {
    const mrt_spec *s;
    const mrt_rules_options *opt;
    int top;
    bounds b;
    cand *c;
    int64_t n, cap;
    mrt_status st;
    mrt_rules_report *r;
    mrt_rule *rules;     /* [ndims] scratch */
    result *res;         /* planned within the cap */
    int64_t nres, cap_res;
    int *best;           /* the K best so far: indices into res, sorted */
    int nbest;
    int *front;          /* the Pareto front so far: indices into res */
    int nfront;
} driver;

static int collect(void *ctx, const mrt_rule *rules)
{
    driver *dr = ctx;
    if (dr->n == MAX_CANDIDATES) {
        dr->st = MRT_E_USAGE;
        return 1;
    }
    if (dr->n == dr->cap) {
        int64_t ncap = dr->cap ? 2 * dr->cap : 1024;
        cand *nc = realloc(dr->c, (size_t)ncap * sizeof *nc);
        if (!nc) {
            dr->st = MRT_E_NOMEM;
            return 1;
        }
        dr->c = nc;
        dr->cap = ncap;
    }
    cand *c = &dr->c[dr->n];
    c->index = dr->n++;
    for (int k = 0; k < MRT_MAX_AXES; k++)
        c->owner[k] = -1;
    for (int d = 0; d < dr->s->ndims; d++)
        for (int j = 0; j < rules[d].naxes; j++) {
            int k = dr->b.k_of[rules[d].axes[j]];
            c->owner[k] = d;
            c->pos[k] = (signed char)j;
        }
    candidate_bounds(&dr->b, rules, &c->bound_s, &c->memory);
    return 0;
}

static void rules_of(const driver *dr, const cand *c, mrt_rule *rules)
{
    memset(rules, 0, (size_t)dr->s->ndims * sizeof *rules);
    for (int k = 0; k < dr->b.na; k++) {
        if (c->owner[k] < 0)
            continue;
        mrt_rule *r = &rules[c->owner[k]];
        r->axes[(int)c->pos[k]] = dr->b.ax[k];
        if (c->pos[k] + 1 > r->naxes)
            r->naxes = c->pos[k] + 1;
    }
}

static int cmp_bound(const void *x, const void *y)
{
    const cand *a = x, *b = y;
    if (a->bound_s != b->bound_s)
        return a->bound_s < b->bound_s ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

/* Faster, then earlier in enumeration order. */
static int better(const result *a, const result *b)
{
    if (a->totals.time_s != b->totals.time_s)
        return a->totals.time_s < b->totals.time_s;
    return a->index < b->index;
}

/* Whether (time, memory) is beaten in one and matched in the other by
 * a point of the front. */
static int dominated(const driver *dr, double time_s, int64_t memory)
{
    for (int i = 0; i < dr->nfront; i++) {
        const mrt_plan_totals *t = &dr->res[dr->front[i]].totals;
        if ((t->time_s < time_s && t->peak_memory <= memory) ||
            (t->time_s <= time_s && t->peak_memory < memory))
            return 1;
    }
    return 0;
}

static double kth_time(const driver *dr)
{
    return dr->nbest < dr->top ? INFINITY
                               : dr->res[dr->best[dr->nbest - 1]].totals.time_s;
}

/* Whether results x and y put the same axes on the same dims (in some
 * order) with the very same time and memory: then they are shown as one
 * line, "and N other orders". */
static int same_but_order(const driver *dr, const result *x, const result *y)
{
    const cand *a = &dr->c[x->cand], *b = &dr->c[y->cand];
    if (x->totals.time_s != y->totals.time_s ||
        x->totals.peak_memory != y->totals.peak_memory)
        return 0;
    for (int k = 0; k < dr->b.na; k++)
        if (a->owner[k] != b->owner[k])
            return 0;
    return 1;
}

/* Groups result i into an equivalent one of list[0..n); 1 if it did.
 * The earlier candidate represents the group. */
static int group_into(driver *dr, int *list, int n, int i)
{
    for (int j = 0; j < n; j++) {
        result *g = &dr->res[list[j]], *r = &dr->res[i];
        if (!same_but_order(dr, g, r))
            continue;
        if (r->index < g->index) {
            r->orders = g->orders + 1;
            list[j] = i;
        } else {
            g->orders++;
        }
        /* The group keeps its place: its time is unchanged, and ties
         * are ordered by index. */
        while (j > 0 && list == dr->best &&
               better(&dr->res[list[j]], &dr->res[list[j - 1]])) {
            int t = list[j];
            list[j] = list[j - 1];
            list[--j] = t;
        }
        return 1;
    }
    return 0;
}

/* Files result i into the K best and the front. */
static void file_result(driver *dr, int i)
{
    const result *r = &dr->res[i];
    int at = dr->nbest;
    if (group_into(dr, dr->best, dr->nbest, i))
        at = dr->top;
    while (at > 0 && at <= dr->nbest && better(r, &dr->res[dr->best[at - 1]]))
        at--;
    if (at < dr->top) {
        int n = dr->nbest < dr->top ? dr->nbest : dr->top - 1;
        memmove(dr->best + at + 1, dr->best + at, (size_t)(n - at) * sizeof(int));
        dr->best[at] = i;
        dr->nbest = n + 1;
    }
    if (dominated(dr, r->totals.time_s, r->totals.peak_memory) ||
        group_into(dr, dr->front, dr->nfront, i))
        return;
    int n = 0;
    for (int j = 0; j < dr->nfront; j++) {
        const mrt_plan_totals *t = &dr->res[dr->front[j]].totals;
        int beaten = (r->totals.time_s < t->time_s &&
                      r->totals.peak_memory <= t->peak_memory) ||
                     (r->totals.time_s <= t->time_s &&
                      r->totals.peak_memory < t->peak_memory);
        if (!beaten)
            dr->front[n++] = dr->front[j];
    }
    dr->front[n++] = i;
    dr->nfront = n;
}

/* Derives and plans candidate ci; files it.  Fails only when out of
 * memory: a candidate that does not plan is counted as invalid. */
static mrt_status plan_candidate(driver *dr, int ci)
{
    const cand *c = &dr->c[ci];
    mrt_rules_report *r = dr->r;
    mrt_spec *ds = NULL;
    mrt_plan *p = NULL;
    mrt_error e = {0};
    rules_of(dr, c, dr->rules);
    mrt_status st = mrt_spec_derive(dr->s, dr->rules, NULL, &ds, &e);
    if (!st)
        st = mrt_plan_create(ds, &dr->opt->plan, &p, &e);
    mrt_spec_destroy(ds);
    if (st == MRT_E_NOMEM)
        return st;
    if (st) {
        if (!r->invalid++)
            mrt_error_format(&e, r->first_error, sizeof r->first_error);
        return MRT_OK;
    }
    r->planned++;
    mrt_plan_totals t = p->totals;
    mrt_plan_destroy(p);
    if (dr->opt->max_memory > 0 && t.peak_memory > dr->opt->max_memory) {
        r->over_memory++;
        return MRT_OK;
    }
    if (dr->nres == dr->cap_res) {
        int64_t ncap = dr->cap_res ? 2 * dr->cap_res : 256;
        result *nr = realloc(dr->res, (size_t)ncap * sizeof *nr);
        int *nf = realloc(dr->front, (size_t)ncap * sizeof *nf);
        if (nr)
            dr->res = nr;
        if (nf)
            dr->front = nf;
        if (!nr || !nf)
            return MRT_E_NOMEM;
        dr->cap_res = ncap;
    }
    dr->res[dr->nres] = (result){c->index, c->bound_s, t, ci, 0};
    file_result(dr, (int)dr->nres++);
    return MRT_OK;
}

static mrt_status run(driver *dr)
{
    const mrt_rules_options *opt = dr->opt;
    mrt_rules_report *r = dr->r;
    for (int64_t i = 0; i < dr->n; i++) {
        const cand *c = &dr->c[i];
        if (!opt->exhaustive) {
            if (opt->max_memory > 0 && c->memory > opt->max_memory) {
                r->pruned_memory++;
                continue;
            }
            if (c->bound_s > kth_time(dr) &&
                dominated(dr, c->bound_s, c->memory)) {
                r->pruned_time++;
                continue;
            }
        }
        mrt_status st = plan_candidate(dr, (int)i);
        if (st)
            return st;
    }
    return MRT_OK;
}

static int cmp_front(const void *x, const void *y)
{
    const mrt_rules_result *a = x, *b = y;
    if (a->totals.time_s != b->totals.time_s)
        return a->totals.time_s < b->totals.time_s ? -1 : 1;
    if (a->totals.peak_memory != b->totals.peak_memory)
        return a->totals.peak_memory < b->totals.peak_memory ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

static mrt_status export(driver *dr, const int *ids, int n,
                         mrt_rules_result **out)
{
    *out = calloc((size_t)n + 1, sizeof **out);
    if (!*out)
        return MRT_E_NOMEM;
    for (int i = 0; i < n; i++) {
        const result *res = &dr->res[ids[i]];
        mrt_rules_result *o = &(*out)[i];
        o->totals = res->totals;
        o->bound_s = res->bound_s;
        o->index = res->index;
        o->orders = res->orders;
        if (!(o->rule = calloc((size_t)dr->s->ndims + 1, sizeof *o->rule)))
            return MRT_E_NOMEM;
        rules_of(dr, &dr->c[res->cand], o->rule);
    }
    return MRT_OK;
}

/* The spec's own rules, for reference, and the profile every candidate
 * is planned with (the same for all: one mesh, one `network:`). */
static mrt_status plan_spec(driver *dr, mrt_profile *prof, mrt_error *err)
{
    mrt_plan *p = NULL;
    mrt_status st = mrt_plan_create_with(dr->s, &dr->opt->plan,
                                         MRT_STRATEGY_RULES, &p, err);
    if (st)
        return st;
    *prof = p->profile;
    mrt_plan_destroy(p);
    p = NULL;
    if (mrt_plan_create(dr->s, &dr->opt->plan, &p, NULL) == MRT_OK) {
        dr->r->has_spec = 1;
        dr->r->spec_totals = p->totals;
    }
    mrt_plan_destroy(p);
    return MRT_OK;
}

mrt_status mrt_search_rules(const mrt_spec *s, const mrt_rules_options *opt,
                            mrt_rules_report **out, mrt_error *err)
{
    mrt_rules_options defaults = {0};
    if (!opt)
        opt = &defaults;
    double t0 = now_s();
    driver dr = {.s = s, .opt = opt, .top = opt->top > 0 ? opt->top : 5,
                 .st = MRT_OK};
    mrt_profile prof;
    mrt_status st = MRT_E_NOMEM;
    *out = NULL;
    dr.r = calloc(1, sizeof *dr.r);
    dr.rules = calloc((size_t)s->ndims + 1, sizeof *dr.rules);
    dr.best = calloc((size_t)dr.top + 1, sizeof *dr.best);
    if (!dr.r || !dr.rules || !dr.best)
        goto nomem;
    dr.r->ndims = s->ndims;
    int meshtf = opt->plan.planner == MRT_PLANNER_MESHTF;
    for (int d = 0; d < s->ndims; d++)
        dr.r->nsearched += searched(s, meshtf, d);
    if ((st = plan_spec(&dr, &prof, err)))
        goto fail;
    if ((st = bounds_init(&dr.b, s, &prof, meshtf)))
        goto nomem;
    if (enumerate(s, meshtf, collect, &dr) < 0 || dr.st == MRT_E_NOMEM)
        goto nomem;
    if (dr.st) {
        st = mrt_error_set(err, MRT_E_USAGE, s->path, (mrt_mark){0},
                           "more than %d candidate layouts: too many to "
                           "search (use a smaller mesh, or give some "
                           "tensors their own layout:)", MAX_CANDIDATES);
        goto fail;
    }
    dr.r->enumerated = dr.n;
    qsort(dr.c, (size_t)dr.n, sizeof *dr.c, cmp_bound);
    double t1 = now_s();
    dr.r->bound_seconds = t1 - t0;
    if ((st = run(&dr)))
        goto nomem;
    dr.r->plan_seconds = now_s() - t1;
    dr.r->ntop = dr.nbest;
    dr.r->npareto = dr.nfront;
    if (export(&dr, dr.best, dr.nbest, &dr.r->top) ||
        export(&dr, dr.front, dr.nfront, &dr.r->pareto))
        goto nomem;
    qsort(dr.r->pareto, (size_t)dr.nfront, sizeof *dr.r->pareto, cmp_front);
    dr.r->elapsed_seconds = now_s() - t0;
    *out = dr.r;
    dr.r = NULL;
    st = MRT_OK;
    goto done;
nomem:
    st = mrt_error_set(err, MRT_E_NOMEM, s->path, (mrt_mark){0},
                       "out of memory while searching layouts");
fail:
done:
    mrt_rules_report_destroy(dr.r);
    bounds_free(&dr.b);
    free(dr.c);
    free(dr.rules);
    free(dr.res);
    free(dr.best);
    free(dr.front);
    return st;
}

void mrt_rules_report_destroy(mrt_rules_report *r)
{
    if (!r)
        return;
    for (int i = 0; r->top && i < r->ntop; i++)
        free(r->top[i].rule);
    for (int i = 0; r->pareto && i < r->npareto; i++)
        free(r->pareto[i].rule);
    free(r->top);
    free(r->pareto);
    free(r);
}
