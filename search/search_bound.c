/*
 * search_bound.c — lower bounds on the modeled time and the peak memory
 * of any plan of a program under a set of global rules, cheap enough to
 * compute for every candidate of `meshrt search` (search_rules.c),
 * which plans only the candidates these bounds cannot rule out.
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
 * every e (maps, reduce_max and rename count 0, a floor that holds for
 * any op; and an input's move counts only for its first reader, since a
 * later reader may reuse a value an earlier one moved to the same
 * layout); the program's is the sum over ops, less 1e-9 of itself for
 * rounding.  Input values are taken in their home layouts (op results:
 * home dims, pending sums ignored), which is where every planner finds
 * them.  Two more floors of a move: only all-gathers grow a shard, and
 * each puts on the wire exactly what it adds (p - 1 times its input), so
 * a move to a larger shard costs at least the growth over the fastest
 * link plus one latency; and an axis the target splits that the value
 * neither splits nor sums over can only come from a slice, a local copy
 * of at least the smallest shard the move can make.
 *
 * The memory bound.  A value lives from the step that makes it to the
 * last step that reads it, inputs and outputs to the end of the program
 * (ops/plan_finish.c).  Every op's result is made, at some step, in the
 * dims of its home layout (only its pending sums may differ, which
 * change no size), and that value is what later ops read.  So when op i
 * makes it, the inputs' home shards, the outputs made before, and the
 * home shards of earlier results that a later op still reads are live
 * with it: the peak is at least the largest such sum over the ops.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "plan.h"
#include "split.h"
#include "search_bound.h"

/* Where a tensor sits: for each searched axis k, the spec dim it splits
 * (or -1); the mask of those axes; its global bytes. */
typedef struct home_map {
    int dimof[MRT_MAX_AXES];
    unsigned used;
    double bytes;
} home_map;

enum { IN0 = 1, IN1 = 2, OUT = 4 };

typedef struct op_info {
    int nd;                       /* the op's dims (exec order) */
    int dim[MRT_MAX_EINSUM_DIMS]; /* spec dim ids */
    int64_t size[MRT_MAX_EINSUM_DIMS];
    int cls_of[MRT_MAX_EINSUM_DIMS]; /* class of each dim */
    mrt_einsum_class cls;            /* of the unsplit op */
    int member[MRT_MAX_EINSUM_DIMS]; /* IN0 | IN1 | OUT */
    int nin, in[2], out;             /* tensor ids */
    int may_defer;                   /* its result may stay pending */
    int index;                       /* the op's number in the spec */
    int local;                       /* a map, reduce_max or rename: its
                                        bound is 0 (always a floor) */
    int nexec;                       /* execution layouts, by kernel time */
    signed char *exec;               /* [nexec][na]: exec dim per axis */
    double *kernel_s;                /* [nexec] */
} op_info;

typedef struct mrt_rules_bounds bounds;

struct mrt_rules_bounds {
    const mrt_spec *s;
    int meshtf;               /* homes come from the rules alone */
    int na, ax[MRT_MAX_AXES]; /* the axes of size > 1 */
    int k_of[MRT_MAX_AXES];   /* mesh axis -> k, or -1 */
    double lat[MRT_MAX_AXES], bw[MRT_MAX_AXES], size[MRT_MAX_AXES];
    double lat_min, bw_max; /* over those axes */
    double copy_Bps;
    int budget;           /* execs weighed per op and candidate */
    int lg[MRT_MAX_AXES]; /* ceil(log2 size) */
    double reduce_flops;
    int elsize;
    op_info *op;     /* [nops] */
    int *last_read;  /* [ntensors]: the last op reading it */
    int *first_read; /* [ntensors]: the first op reading it */
    char *output;    /* [ntensors]: 1 for the outputs */
    home_map *home;  /* [ntensors], of the current candidate */
};

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

/* Searched axis k on no dim, then on each dim it may split (the
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
        if (!mrt_split_ok(o->size[i], parts))
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
    o->index = i;
    if (so->kind != MRT_OP_EINSUM) {
        o->local = 1;
        return MRT_OK;
    }
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
    if (mrt_einsum_classify(&v[0], so->nin > 1 ? &v[1] : NULL, &v[2], &o->cls,
                            NULL) != MRT_OK)
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
    free(b->first_read);
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
    b->copy_Bps = prof->copy_Bps;
    b->budget = 256;
    b->lat_min = INFINITY;
    b->bw_max = 0;
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
        b->lat_min = fmin(b->lat_min, l.latency_s);
        b->bw_max = fmax(b->bw_max, l.bandwidth_Bps);
    }
    b->op = calloc((size_t)s->nops + 1, sizeof *b->op);
    b->home = calloc((size_t)s->ntensors + 1, sizeof *b->home);
    b->last_read = calloc((size_t)s->ntensors + 1, sizeof *b->last_read);
    b->first_read = calloc((size_t)s->ntensors + 1, sizeof *b->first_read);
    b->output = calloc((size_t)s->ntensors + 1, 1);
    if (!b->op || !b->home || !b->last_read || !b->first_read || !b->output)
        return MRT_E_NOMEM;
    for (int t = 0; t < s->ntensors; t++)
        b->last_read[t] = b->first_read[t] = -1;
    for (int i = 0; i < s->nops; i++)
        for (int k = 0; k < s->op[i].nin; k++) {
            b->last_read[s->op[i].in[k]] = i;
            if (b->first_read[s->op[i].in[k]] < 0)
                b->first_read[s->op[i].in[k]] = i;
        }
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
        int axes[MRT_MAX_AXES];
        for (int j = 0; j < n; j++)
            axes[j] = own ? l->axes[i][j] : rules[l->dim[i]].axes[j];
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

/* The floor of moving a value of `bytes` global bytes from layout
 * `from` to layout `to` (per searched axis the spec dim it splits, or
 * -1; `partial`: the axes over which `from` is a pending sum, whose
 * reductions the caller counts). */
static double move_floor(const bounds *b, const int *from, const int *to,
                         unsigned partial, double bytes)
{
    unsigned from_used = 0, to_used = 0;
    for (int k = 0; k < b->na; k++) {
        from_used |= from[k] >= 0 ? 1u << k : 0;
        to_used |= to[k] >= 0 ? 1u << k : 0;
    }
    double n = bytes / group(b, from_used | to_used), worst = 0;
    int slices = 0;
    for (int k = 0; k < b->na; k++) {
        if (from[k] >= 0 && to[k] != from[k])
            worst = fmax(worst, to[k] >= 0 ? floor_move(b, k, n)
                                           : floor_gather(b, k, n));
        else if (from[k] < 0 && to[k] >= 0 && !(partial & (1u << k)))
            slices++;
    }
    /* Only all-gathers grow a shard, each by what it puts on the wire. */
    double grow = bytes / group(b, to_used) - bytes / group(b, from_used);
    if (grow > 0)
        worst = fmax(worst, b->lat_min + grow / b->bw_max);
    return worst + slices * n / b->copy_Bps;
}

/* Moving input w of op o (bit IN0 or IN1) from its home to exec e. */
static double in_moves(const bounds *b, const op_info *o, const signed char *e,
                       int bit, const home_map *h)
{
    int to[MRT_MAX_AXES];
    for (int k = 0; k < b->na; k++)
        to[k] = e[k] >= 0 && (o->member[e[k]] & bit) ? o->dim[e[k]] : -1;
    return move_floor(b, h->dimof, to, 0, h->bytes);
}

/* Moving the result of exec e to the output's home, and its sums. */
static double out_cost(const bounds *b, const op_info *o, const signed char *e,
                       const home_map *h)
{
    int from[MRT_MAX_AXES];
    unsigned split = 0, partial = 0;
    for (int k = 0; k < b->na; k++) {
        from[k] = -1;
        if (e[k] >= 0 && (o->member[e[k]] & OUT)) {
            split |= 1u << k;
            from[k] = o->dim[e[k]];
        } else if (e[k] >= 0) {
            partial |= 1u << k;
        }
    }
    double n = h->bytes / group(b, h->used | split), reduce = 0;
    double deferred = 0;
    for (int k = 0; k < b->na; k++) {
        if (!(partial & (1u << k)))
            continue;
        if (h->dimof[k] >= 0)
            reduce = fmax(reduce, floor_reduce(b, k, n, 0));
        else if (!o->may_defer)
            reduce = fmax(reduce, floor_reduce(b, k, n, 1));
        else
            deferred += b->lat[k];
    }
    return move_floor(b, from, h->dimof, partial, h->bytes) + reduce + deferred;
}

static double op_bound(const bounds *b, const op_info *o)
{
    const home_map *in0 = &b->home[o->in[0]], *in1 = &b->home[o->in[1]];
    const home_map *out = &b->home[o->out];
    double best = INFINITY;
    if (o->local)
        return 0;
    for (int x = 0; x < o->nexec && o->kernel_s[x] < best; x++) {
        /* Past the budget, every exec left costs at least its kernel,
         * and they come by kernel time: that is the floor. */
        if (x == b->budget)
            return o->kernel_s[x];
        const signed char *e = o->exec + (size_t)x * MRT_MAX_AXES;
        /* a later reader may find its input already moved by an earlier
         * one (ops/relayout.c): only the first reader surely pays */
        double t = o->kernel_s[x];
        if (b->first_read[o->in[0]] == o->index)
            t += in_moves(b, o, e, IN0, in0);
        if (o->nin > 1 && b->first_read[o->in[1]] == o->index &&
            o->in[1] != o->in[0])
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
void mrt_rules_bounds_eval(bounds *b, const mrt_rule *rules, double *time_s,
                           int64_t *memory)
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
    int64_t inputs = 0, peak = 0; /* (a bound: it may saturate) */
    for (int t2 = 0; t2 < s->ntensors; t2++)
        if (s->tensor[t2].producer < 0)
            inputs = mrt_saturating_add(inputs, shard_bytes(b, t2));
    for (int i = 0; i < s->nops; i++) {
        int64_t live = mrt_saturating_add(inputs, shard_bytes(b, s->op[i].out));
        for (int j = 0; j < i; j++) {
            int t2 = s->op[j].out;
            if (b->output[t2] || b->last_read[t2] > i)
                live = mrt_saturating_add(live, shard_bytes(b, t2));
        }
        peak = live > peak ? live : peak;
    }
    *memory = peak > inputs ? peak : inputs;
}

mrt_rules_bounds *mrt_rules_bounds_create(const mrt_spec *s,
                                          const mrt_profile *prof, int meshtf)
{
    bounds *b = malloc(sizeof *b);
    if (b && bounds_init(b, s, prof, meshtf) != MRT_OK) {
        mrt_rules_bounds_destroy(b);
        b = NULL;
    }
    return b;
}

void mrt_rules_bounds_destroy(mrt_rules_bounds *b)
{
    if (!b)
        return;
    bounds_free(b);
    free(b);
}

double mrt_rules_bounds_work(const mrt_rules_bounds *b)
{
    double n = 0;
    for (int i = 0; i < b->s->nops; i++)
        n += b->op[i].nexec;
    return n;
}

void mrt_rules_bounds_set_budget(mrt_rules_bounds *b, int execs)
{
    b->budget = execs > 0 ? execs : 1;
}
