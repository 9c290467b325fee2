/*
 * mpi_random.c — randomized end-to-end test of the planner and executor
 * on however many MPI ranks it is started with.
 *
 * Every rank generates the same cases from a fixed seed: a random mesh of
 * exactly P ranks (1-3 axes), random named dims, global layout rules, a
 * program of 1-4 steps, each an einsum (one and two inputs; batch, free,
 * contracted and one-input-summed dims in random orders; later ops may
 * read earlier outputs) or (40%) a newer op kind on a tensor already made:
 * add/sub/mul/div broadcast by dim name (div by square(x) + a fill of 1),
 * relu/tanh/exp (after a tanh)/neg/square/scale, reduce_sum/max/mean over
 * a strict subset of dims, softmax, layer_norm (times a random gain),
 * relayout to a random layout; about 1 case in 5 trains (float64): mse of
 * a made tensor against a new target, a few inputs as params.  Per-tensor
 * and per-op layouts on some tensors, a random dtype.
 * Each case is written as YAML to /tmp/mrt_random_<pid>_<rank>.yaml,
 * loaded, planned and run with verification on (mrt_run compares with the
 * unsharded reference and checks the bytes handed to MPI against the
 * plan).  About a third of the dims that are split get a size their
 * splits do not divide (uneven shards, some of them empty).  The
 * generator predicts whether the spec is valid (no axis twice in a
 * tensor); a case it predicts invalid must be rejected by the loader, and
 * one it predicts valid must load and run.
 * A fixed list of hand-picked cases follows, run on every mesh {a, b, c}
 * of P ranks.
 *
 * The ranks agree on every outcome before counting it (MPI_Allreduce), so
 * no rank leaves early and all exit with the same status: 0 when nothing
 * failed and at least 70% of the random cases were accepted.  A failing
 * case's YAML is printed by rank 0.  If the library crashes, the spec that
 * crashed it is left in rank 0's temp file.
 *
 * Usage: mpi_random [--seed S] [--cases N] [--case K] [--verbose]
 *   --case K  runs random case K only (same seed), to reproduce a failure.
 */
#include <mpi.h>

#include "mpi_agree.h"
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "meshrt_mpi.h"

#define G_AXES 3 /* mesh axes at most */
#define G_POOL 7 /* named dims at most */
#define G_TD 5   /* dims per einsum (and so per tensor) at most */
#define G_OPS 16 /* ops of a program at most (einsums and newer kinds) */
#define G_TENSORS (3 * G_OPS + 2)

static const char *const axis_names[G_AXES] = {"a", "b", "c"};
static const char *const dim_names[G_POOL] = {"i", "j", "k", "l",
                                              "p", "q", "r"};

/* The op kinds generated: einsums as before, and the newer kinds, each
 * on tensors already made. */
enum {
    O_EINSUM,
    O_ADD,
    O_SUB,
    O_MUL,
    O_DIV,
    O_RELU,
    O_TANH,
    O_EXP,
    O_NEG,
    O_SQUARE,
    O_SCALE,
    O_RSUM,
    O_RMAX,
    O_RMEAN,
    O_SOFTMAX,
    O_LNORM,
    O_RELAYOUT,
    O_MSE,
    O_NKINDS
};
static const char *const kind_names[O_NKINDS] = {
    "einsum",     "add",        "sub",        "mul",         "div",
    "relu",       "tanh",       "exp",        "neg",         "square",
    "scale",      "reduce_sum", "reduce_max", "reduce_mean", "softmax",
    "layer_norm", "relayout",   "mse"};

/* ---- random numbers (splitmix64: the same stream on every rank) ---- */

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t rng_next(rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int rnd(rng *r, int n) /* uniform in [0, n) */
{
    return (int)(rng_next(r) % (uint64_t)n);
}

static int chance(rng *r, double p)
{
    return (double)(rng_next(r) >> 11) * 0x1.0p-53 < p;
}

static void shuffle(rng *r, int *v, int n)
{
    for (int i = n - 1; i > 0; i--) {
        int j = rnd(r, i + 1), t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

/* ---- a text buffer ------------------------------------------------- */

typedef struct sbuf {
    char s[16384];
    size_t n;
} sbuf;

static void put(sbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void put(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->s + b->n, sizeof b->s - b->n, fmt, ap);
    va_end(ap);
    if (k > 0)
        b->n += (size_t)k < sizeof b->s - b->n ? (size_t)k
                                               : sizeof b->s - b->n - 1;
}

/* ---- the generated case -------------------------------------------- */

typedef struct g_rule {
    int n;          /* axes that split the dim (0: replicated) */
    int ax[G_AXES]; /* major first */
    int seq;        /* write a single axis as [a] */
} g_rule;

typedef struct g_tensor {
    char name[16];
    int nd, dim[G_TD]; /* pool dim ids, storage order */
    int own;           /* has its own layout: (or its op's) */
    g_rule rule[G_TD]; /* that layout, by position */
    int init;          /* 0 default, 1 {random: seed}, 2 {fill: fill} */
    int seed;
    double fill;
    int op;          /* producing op, or -1 for an input */
    int scalar;      /* mse's result: dim[] are its inputs' dims, and
                             own/rule the layout of the tensors inside */
    int one;         /* an input of ones (a div's denominator) */
    int hidden;      /* a layer_norm's result, before its gain: no
                             other op reads it (a sum over its dim is all
                             rounding error) */
    unsigned varies; /* dims along which the values may differ */
    uint64_t dep;    /* the inputs (bit k: tensor k) it depends on */
} g_tensor;

typedef struct g_case {
    int naxes, axsize[G_AXES];
    int f64;
    int npool, size[G_POOL];
    g_rule global[G_POOL];
    int nt;
    g_tensor t[G_TENSORS];
    int nops, nin[G_OPS], in[G_OPS][2], out[G_OPS];
    int kind[G_OPS];       /* O_* */
    unsigned rdims[G_OPS]; /* reductions: the dims reduced */
    int pdim[G_OPS];       /* softmax, layer_norm: the dim */
    int noshape[G_OPS];    /* leave out the result's shape: (not einsum) */
    int dims1[G_OPS];      /* one reduced dim written as `dims: d` */
    int eps[G_OPS];        /* layer_norm: write eps: 0.001 */
    double by[G_OPS];      /* scale */
    int nout, output[G_TENSORS], write_outputs;
    int train, loss, nparams, params[3], ngrads, grads[1];
} g_case;

static const g_rule *rule_of(const g_case *c, const g_tensor *t, int i)
{
    return t->own ? &t->rule[i] : &c->global[t->dim[i]];
}

/* A mesh of P ranks: P's prime factors dealt to 1-3 axes at random. */
static void gen_mesh(g_case *c, rng *r, int P)
{
    c->naxes = 1 + rnd(r, G_AXES);
    for (int a = 0; a < c->naxes; a++)
        c->axsize[a] = 1;
    int n = P;
    for (int f = 2; n > 1; f++)
        while (n % f == 0) {
            c->axsize[rnd(r, c->naxes)] *= f;
            n /= f;
        }
}

/* A random rule of 1 or 2 distinct axes not in `used`; n = 0 when no
 * axis is free. */
static g_rule gen_rule(const g_case *c, rng *r, unsigned used, int max2)
{
    g_rule g = {0};
    int free_ax[G_AXES], nfree = 0;
    for (int a = 0; a < c->naxes; a++)
        if (!(used & (1u << a)))
            free_ax[nfree++] = a;
    shuffle(r, free_ax, nfree);
    g.n = nfree >= 2 && max2 && chance(r, 0.3) ? 2 : nfree > 0;
    for (int j = 0; j < g.n; j++)
        g.ax[j] = free_ax[j];
    g.seq = g.n == 1 && chance(r, 0.15);
    return g;
}

/* Global rules: about 30% replicated, 50% one axis, 20% two; two dims
 * may share an axis (a tensor holding both is then invalid). */
static void gen_global(g_case *c, rng *r)
{
    for (int d = 0; d < c->npool; d++) {
        int k = rnd(r, 10);
        c->global[d] = k < 3 ? (g_rule){0} : gen_rule(c, r, 0, k >= 8);
    }
}

/* An own layout that uses no axis twice. */
static void gen_own(const g_case *c, rng *r, g_tensor *t)
{
    unsigned used = 0;
    int order[G_TD];
    for (int i = 0; i < t->nd; i++)
        order[i] = i;
    shuffle(r, order, t->nd);
    t->own = 1;
    for (int k = 0; k < t->nd; k++) {
        int i = order[k];
        t->rule[i] = chance(r, 0.55) ? gen_rule(c, r, used, 1) : (g_rule){0};
        for (int j = 0; j < t->rule[i].n; j++)
            used |= 1u << t->rule[i].ax[j];
    }
}

static unsigned dim_mask_of(const int *dims, int nd)
{
    unsigned m = 0;
    for (int i = 0; i < nd; i++)
        m |= 1u << dims[i];
    return m;
}

static int add_tensor(g_case *c, rng *r, int op, const int *dims, int nd)
{
    g_tensor *t = &c->t[c->nt];
    memset(t, 0, sizeof *t);
    t->op = op;
    t->nd = nd;
    memcpy(t->dim, dims, sizeof(int) * (size_t)nd);
    shuffle(r, t->dim, nd);
    if (op >= 0) {
        snprintf(t->name, sizeof t->name, "y%d", op);
    } else {
        int nin = 0;
        for (int k = 0; k < c->nt; k++)
            nin += c->t[k].op < 0;
        snprintf(t->name, sizeof t->name, "x%d", nin);
        int k = rnd(r, 10);
        t->init = k < 7 ? 0 : k < 9 ? 1 : 2;
        t->seed = rnd(r, 1000);
        t->fill = (double)(rnd(r, 9) - 4) * 0.25;
        if (c->train && t->init == 2) /* no ties for reduce_max's gradient */
            t->init = 1;
        t->dep = 1ull << c->nt;
        t->varies = t->init == 2 ? 0 : dim_mask_of(dims, nd);
    }
    if (chance(r, op >= 0 ? 0.35 : 0.3))
        gen_own(c, r, t);
    return c->nt++;
}

/* n distinct pool dims not in `not` (a mask), into out; returns count. */
static int pick_dims(const g_case *c, rng *r, int n, unsigned not, int *out)
{
    int all[G_POOL], k = 0;
    for (int d = 0; d < c->npool; d++)
        if (!(not &(1u << d)))
            all[k++] = d;
    shuffle(r, all, k);
    n = n < k ? n : k;
    memcpy(out, all, sizeof(int) * (size_t)n);
    return n;
}

static unsigned dim_mask(const g_tensor *t)
{
    unsigned m = 0;
    for (int i = 0; i < t->nd; i++)
        m |= 1u << t->dim[i];
    return m;
}

static int popcount(unsigned m)
{
    int n = 0;
    for (; m; m &= m - 1)
        n++;
    return n;
}

/* Any existing tensor that later ops may read. */
static int any_tensor(const g_case *c, rng *r)
{
    int k;
    do
        k = rnd(r, c->nt);
    while (c->t[k].hidden || c->t[k].scalar);
    return k;
}

/* An existing tensor: usually the latest op output. */
static int pick_existing(const g_case *c, rng *r, int op)
{
    if (op > 0 && chance(r, 0.7))
        return c->out[op - 1];
    return any_tensor(c, r);
}

/* The dims of a new partner for existing tensor e: some of e's dims
 * (batch or contracted) plus up to 2 of its own (free or summed). */
static int partner_dims(const g_case *c, rng *r, const g_tensor *e, int *d)
{
    int n = 0;
    for (int i = 0; i < e->nd; i++)
        if (chance(r, 0.55))
            d[n++] = e->dim[i];
    int room = G_TD - e->nd;
    int extra = rnd(r, (room < 2 ? room : 2) + 1);
    n += pick_dims(c, r, extra, dim_mask(e), d + n);
    if (n == 0)
        d[n++] = e->dim[rnd(r, e->nd)];
    return n;
}

/* Two new inputs over 2-5 pool dims, each dim in A, in B, or in both. */
static void two_new(g_case *c, rng *r, int *a, int *b)
{
    int u[G_TD] = {0}, nu = pick_dims(c, r, 2 + rnd(r, G_TD - 1), 0, u);
    int da[G_TD], db[G_TD], na = 0, nb = 0;
    for (int i = 0; i < nu; i++) {
        int k = rnd(r, 10);
        if (k < 3 || k >= 6)
            da[na++] = u[i];
        if (k >= 3)
            db[nb++] = u[i];
    }
    if (na == 0)
        da[na++] = u[0];
    if (nb == 0)
        db[nb++] = u[nu - 1];
    *a = add_tensor(c, r, -1, da, na);
    *b = add_tensor(c, r, -1, db, nb);
}

static void gen_inputs(g_case *c, rng *r, int op, int nin, int in[2])
{
    int d[G_TD], n;
    in[0] = in[1] = -1;
    if (c->nt > 0 && chance(r, op > 0 ? 0.6 : 0.3))
        in[0] = pick_existing(c, r, op);
    if (nin == 1) {
        if (in[0] < 0)
            in[0] = add_tensor(c, r, -1, d,
                               pick_dims(c, r, 1 + rnd(r, 4), 0, d));
        return;
    }
    if (in[0] < 0) {
        two_new(c, r, &in[0], &in[1]);
        return;
    }
    for (int tries = 0; tries < 3 && in[1] < 0 && chance(r, 0.35); tries++) {
        int e = any_tensor(c, r);
        if (popcount(dim_mask(&c->t[e]) | dim_mask(&c->t[in[0]])) <= G_TD)
            in[1] = e;
    }
    if (in[1] < 0) {
        n = partner_dims(c, r, &c->t[in[0]], d);
        in[1] = add_tensor(c, r, -1, d, n);
    }
    if (chance(r, 0.5)) {
        int t = in[0];
        in[0] = in[1];
        in[1] = t;
    }
}

static void gen_op(g_case *c, rng *r, int op)
{
    int nin = chance(r, 0.65) ? 2 : 1;
    gen_inputs(c, r, op, nin, c->in[op]);
    c->nin[op] = nin;
    unsigned u = 0;
    for (int k = 0; k < nin; k++)
        u |= dim_mask(&c->t[c->in[op][k]]);
    int d[G_TD], n = 0, all[G_TD], na = 0;
    for (int x = 0; x < G_POOL; x++)
        if (u & (1u << x)) {
            all[na++] = x;
            if (chance(r, 0.55))
                d[n++] = x;
        }
    if (n == 0)
        d[n++] = all[rnd(r, na)];
    c->out[op] = add_tensor(c, r, op, d, n);
    c->kind[op] = O_EINSUM;
    g_tensor *t = &c->t[c->out[op]];
    for (int k = 0; k < nin; k++) {
        t->dep |= c->t[c->in[op][k]].dep;
        t->varies |= c->t[c->in[op][k]].varies;
    }
    t->varies &= dim_mask(t);
}

/* ---- the newer op kinds --------------------------------------------- */

/* A tensor to work on: usually the latest op's result (never a scalar);
 * a new input when there is none yet. */
static int pick_made(g_case *c, rng *r)
{
    if (c->nops > 0 && !c->t[c->out[c->nops - 1]].scalar && chance(r, 0.7))
        return c->out[c->nops - 1];
    int cand[G_TENSORS], n = 0;
    for (int k = 0; k < c->nt; k++)
        if (!c->t[k].scalar && !c->t[k].hidden)
            cand[n++] = k;
    if (n > 0)
        return cand[rnd(r, n)];
    int d[G_TD];
    return add_tensor(c, r, -1, d, pick_dims(c, r, 1 + rnd(r, 4), 0, d));
}

/* Appends op `kind` on in0 (and in1, or -1), reducing rd or over dim pd;
 * its result has the dims the kind makes.  Returns the result. */
static int new_op(g_case *c, rng *r, int kind, int in0, int in1, unsigned rd,
                  int pd)
{
    static const double bys[] = {0.5, -0.5, 2, 0.25};
    int op = c->nops++;
    const g_tensor *a = &c->t[in0];
    unsigned m = dim_mask(a), v = a->varies;
    uint64_t dep = a->dep;
    if (in1 >= 0) {
        m |= dim_mask(&c->t[in1]);
        v |= c->t[in1].varies;
        dep |= c->t[in1].dep;
    }
    m &= ~rd;
    v &= ~rd;
    if ((kind == O_SOFTMAX || kind == O_LNORM) && !(v & (1u << pd)))
        v = 0; /* constant along pd: the result is constant */
    c->kind[op] = kind;
    c->nin[op] = in1 >= 0 ? 2 : 1;
    c->in[op][0] = in0;
    c->in[op][1] = in1;
    c->rdims[op] = rd;
    c->pdim[op] = pd;
    int d[G_TD], n = 0;
    for (int x = 0; x < G_POOL; x++)
        if (m & (1u << x))
            d[n++] = x;
    int k = add_tensor(c, r, op, d, n);
    g_tensor *t = &c->t[k];
    t->dep = dep;
    t->varies = v;
    t->scalar = kind == O_MSE;
    if (kind == O_RELAYOUT && !t->own)
        gen_own(c, r, t);
    c->noshape[op] = kind == O_MSE || chance(r, 0.4);
    c->dims1[op] = popcount(rd) == 1 && chance(r, 0.5);
    c->eps[op] = kind == O_LNORM && chance(r, 0.3);
    c->by[op] = bys[rnd(r, 4)];
    c->out[op] = k;
    return k;
}

/* A partner for e in an elementwise op: an existing tensor sharing a dim
 * with it (the union at most G_TD dims), or a new input over some of e's
 * dims and maybe one more. */
static int partner(g_case *c, rng *r, int e)
{
    unsigned m = dim_mask(&c->t[e]);
    if (chance(r, 0.5)) {
        int cand[G_TENSORS], n = 0;
        for (int k = 0; k < c->nt; k++) {
            unsigned o = dim_mask(&c->t[k]);
            if (!c->t[k].scalar && !c->t[k].hidden && (o & m) &&
                popcount(o | m) <= G_TD)
                cand[n++] = k;
        }
        if (n > 0)
            return cand[rnd(r, n)];
    }
    const g_tensor *t = &c->t[e];
    int d[G_TD], n = 0;
    for (int i = 0; i < t->nd; i++)
        if (chance(r, 0.6))
            d[n++] = t->dim[i];
    if (n == 0)
        d[n++] = t->dim[rnd(r, t->nd)];
    if (t->nd < G_TD && chance(r, 0.4))
        n += pick_dims(c, r, 1, m, d + n);
    return add_tensor(c, r, -1, d, n);
}

/* One op of a newer kind (1-3 ops: div divides by square(x) + 1, exp
 * takes a tanh) on a tensor already made. */
static void gen_newop(g_case *c, rng *r)
{
    int e = pick_made(c, r);
    int kind = O_ADD + rnd(r, O_MSE - O_ADD);
    const g_tensor *t = &c->t[e];
    int d[G_TD], n = 0;
    if ((kind == O_RSUM || kind == O_RMAX || kind == O_RMEAN) && t->nd < 2)
        kind = O_NEG;
    if (kind == O_LNORM && !t->varies)
        kind = O_SOFTMAX;
    switch (kind) {
    case O_ADD:
    case O_SUB:
    case O_MUL: {
        int b = partner(c, r, e);
        if (chance(r, 0.5))
            new_op(c, r, kind, b, e, 0, -1);
        else
            new_op(c, r, kind, e, b, 0, -1);
        return;
    }
    case O_DIV: {
        int b = partner(c, r, e), num = e;
        if (chance(r, 0.5)) {
            num = b;
            b = e;
        }
        const g_tensor *bt = &c->t[b];
        for (int i = 0; i < bt->nd; i++)
            if (chance(r, 0.5))
                d[n++] = bt->dim[i];
        if (n == 0)
            d[n++] = bt->dim[rnd(r, bt->nd)];
        int one = add_tensor(c, r, -1, d, n);
        c->t[one].init = 2;
        c->t[one].fill = 1;
        c->t[one].one = 1;
        c->t[one].varies = 0;
        int sq = new_op(c, r, O_SQUARE, b, -1, 0, -1);
        int den = chance(r, 0.5) ? new_op(c, r, O_ADD, sq, one, 0, -1)
                                 : new_op(c, r, O_ADD, one, sq, 0, -1);
        new_op(c, r, O_DIV, num, den, 0, -1);
        return;
    }
    case O_EXP:
        if (t->op < 0 || c->kind[t->op] != O_TANH)
            e = new_op(c, r, O_TANH, e, -1, 0, -1);
        new_op(c, r, O_EXP, e, -1, 0, -1);
        return;
    case O_RSUM:
    case O_RMAX:
    case O_RMEAN: {
        unsigned rd = 0;
        memcpy(d, t->dim, sizeof(int) * (size_t)t->nd);
        shuffle(r, d, t->nd);
        for (int j = 1 + rnd(r, t->nd - 1); j-- > 0;)
            rd |= 1u << d[j];
        if (kind == O_RMAX && c->train && (rd & ~t->varies))
            kind = O_RSUM; /* ties: finite differences disagree */
        new_op(c, r, kind, e, -1, rd, -1);
        return;
    }
    case O_SOFTMAX:
    case O_LNORM: {
        /* training: over a dim every input it depends on has, so that no
         * input only shifts (or scales) the values along it, which
         * softmax and layer_norm ignore (a zero gradient, all rounding:
         * finite differences cannot check it) */
        unsigned ok = ~0u;
        for (int k = 0; c->train && k < c->nt; k++)
            if (t->dep >> k & 1)
                ok &= dim_mask(&c->t[k]);
        for (int i = 0; i < t->nd; i++)
            if ((kind == O_SOFTMAX || (t->varies & (1u << t->dim[i]))) &&
                (ok & (1u << t->dim[i])))
                d[n++] = t->dim[i];
        if (n == 0) {
            new_op(c, r, O_TANH, e, -1, 0, -1);
            return;
        }
        int pd = d[rnd(r, n)];
        int y = new_op(c, r, kind, e, -1, 0, pd);
        if (kind == O_SOFTMAX && !c->train)
            return;
        /* times a random gain over pd and maybe more of its dims, as a
         * layer norm's gain: later sums over pd are then no cancellation
         * (nor, when training, a softmax's constant sum of 1) */
        const g_tensor *yt = &c->t[y];
        n = 0;
        d[n++] = pd;
        for (int i = 0; i < yt->nd; i++)
            if (yt->dim[i] != pd && chance(r, 0.3))
                d[n++] = yt->dim[i];
        int g = add_tensor(c, r, -1, d, n);
        if (c->t[g].init == 2)
            c->t[g].init = 1;
        c->t[g].varies = dim_mask(&c->t[g]);
        c->t[y].hidden = 1;
        if (chance(r, 0.5))
            new_op(c, r, O_MUL, y, g, 0, -1);
        else
            new_op(c, r, O_MUL, g, y, 0, -1);
        return;
    }
    default: new_op(c, r, kind, e, -1, 0, -1);
    }
}

/* The train: block: mse of a made tensor against a new target, and a few
 * of the inputs the loss depends on as params (and maybe one as grads). */
static void gen_train(g_case *c, rng *r)
{
    int p = c->out[c->nops - 1];
    if (chance(r, 0.3)) {
        int cand[G_OPS], n = 0;
        for (int op = 0; op < c->nops; op++)
            if (!c->t[c->out[op]].hidden)
                cand[n++] = c->out[op];
        p = cand[rnd(r, n)];
    }
    const g_tensor *pt = &c->t[p];
    int tg = add_tensor(c, r, -1, pt->dim, pt->nd);
    c->loss = chance(r, 0.5) ? new_op(c, r, O_MSE, p, tg, 0, -1)
                             : new_op(c, r, O_MSE, tg, p, 0, -1);
    int cand[G_TENSORS], n = 0;
    for (int k = 0; k < c->nt; k++)
        if (c->t[k].op < 0 && (pt->dep >> k & 1))
            cand[n++] = k;
    shuffle(r, cand, n);
    c->nparams = 1 + rnd(r, n < 3 ? n : 3);
    memcpy(c->params, cand, sizeof(int) * (size_t)c->nparams);
    c->ngrads = n > c->nparams && chance(r, 0.3);
    if (c->ngrads)
        c->grads[0] = cand[c->nparams];
}

/* Tensors whose global layout uses an axis twice mostly get their own. */
static int axis_clash(const g_case *c, const g_tensor *t)
{
    unsigned used = 0;
    for (int i = 0; i < t->nd; i++) {
        const g_rule *g = rule_of(c, t, i);
        for (int j = 0; j < g->n; j++) {
            if (used & (1u << g->ax[j]))
                return 1;
            used |= 1u << g->ax[j];
        }
    }
    return 0;
}

static int64_t split_parts(const g_case *c, const g_rule *g)
{
    int64_t p = 1;
    for (int j = 0; j < g->n; j++)
        p *= c->axsize[g->ax[j]];
    return p;
}

static int64_t lcm(int64_t a, int64_t b)
{
    int64_t x = a, y = b;
    while (y) {
        int64_t t = x % y;
        x = y;
        y = t;
    }
    return a / x * b;
}

/* Split dims given a size their splits do not divide, and split dims
 * in all (over every case). */
static int n_uneven, n_split;

/* Sizes: multiples of every split of the dim, at most 12, or (a third of
 * the split dims) one more than a multiple, up to unit - 1 more (so
 * uneven, and smaller than the parts now and then); now and then any size
 * from 1 to 12. */
static void gen_sizes(g_case *c, rng *r)
{
    int64_t unit[G_POOL];
    for (int d = 0; d < c->npool; d++)
        unit[d] = 1;
    for (int k = 0; k < c->nt; k++)
        for (int i = 0; i < c->t[k].nd; i++)
            unit[c->t[k].dim[i]] = lcm(unit[c->t[k].dim[i]],
                                       split_parts(c, rule_of(c, &c->t[k], i)));
    for (int d = 0; d < c->npool; d++) {
        int64_t most = 12 / unit[d];
        if (unit[d] > 1 && chance(r, 1.0 / 3))
            c->size[d] = (int)(unit[d] * rnd(r, most < 2 ? 1 : 2) + 1 +
                               rnd(r, (int)unit[d] - 1));
        else if (chance(r, 0.03) || most < 1)
            c->size[d] = 1 + rnd(r, 12);
        else if (unit[d] == 1)
            c->size[d] = 1 + rnd(r, 8);
        else
            c->size[d] = (int)(unit[d] *
                               (1 + rnd(r, most < 3 ? (int)most : 3)));
    }
}

static void gen_outputs(g_case *c, rng *r)
{
    c->nout = 0;
    for (int k = 0; k < c->nt; k++) {
        const g_tensor *t = &c->t[k];
        if (k == c->out[c->nops - 1] || (t->op >= 0 && chance(r, 0.85)) ||
            (t->op < 0 && chance(r, 0.05)))
            c->output[c->nout++] = k;
    }
    c->write_outputs = c->nout > 1 || chance(r, 0.7);
}

static void gen_case(g_case *c, uint64_t seed, int P)
{
    rng r = {seed};
    memset(c, 0, sizeof *c);
    gen_mesh(c, &r, P);
    c->train = chance(&r, 0.2);
    c->f64 = c->train || chance(&r, 0.5);
    c->npool = 3 + rnd(&r, G_POOL - 2);
    gen_global(c, &r);
    /* 1-4 steps: an einsum (60%) or a newer kind (1-3 ops) */
    for (int steps = 1 + rnd(&r, 4); steps > 0; steps--) {
        if (chance(&r, 0.6)) {
            gen_op(c, &r, c->nops);
            c->nops++;
        } else {
            gen_newop(c, &r);
        }
    }
    if (c->train)
        gen_train(c, &r);
    for (int k = 0; k < c->nt; k++)
        if (axis_clash(c, &c->t[k]) && chance(&r, 0.85))
            gen_own(c, &r, &c->t[k]);
    gen_sizes(c, &r);
    /* training: a layer_norm over a dim of 1-3 elements barely depends
     * on its input (only through eps); finite differences cannot check
     * such small gradients, so it becomes a softmax */
    for (int op = 0; c->train && op < c->nops; op++)
        if (c->kind[op] == O_LNORM && c->size[c->pdim[op]] < 4) {
            c->kind[op] = O_SOFTMAX;
            c->eps[op] = 0;
        }
    gen_outputs(c, &r);
}

/* What the loader must decide: no axis twice in a tensor (uneven splits
 * are valid). */
static int predict_valid(const g_case *c)
{
    for (int k = 0; k < c->nt; k++)
        if (axis_clash(c, &c->t[k]))
            return 0;
    return 1;
}

/* Tallies the split dims of the case and those split unevenly. */
static void count_uneven(const g_case *c)
{
    int split[G_POOL] = {0}, uneven[G_POOL] = {0};
    for (int k = 0; k < c->nt; k++)
        for (int i = 0; i < c->t[k].nd; i++) {
            int64_t parts = split_parts(c, rule_of(c, &c->t[k], i));
            int d = c->t[k].dim[i];
            split[d] |= parts > 1;
            uneven[d] |= parts > 1 && c->size[d] % parts != 0;
        }
    for (int d = 0; d < c->npool; d++) {
        n_split += split[d];
        n_uneven += uneven[d];
    }
}

/* ---- writing the YAML ---------------------------------------------- */

static void put_rule(sbuf *b, const g_rule *g)
{
    if (g->n == 1 && !g->seq) {
        put(b, "%s", axis_names[g->ax[0]]);
        return;
    }
    put(b, "[");
    for (int j = 0; j < g->n; j++)
        put(b, "%s%s", j ? ", " : "", axis_names[g->ax[j]]);
    put(b, "]");
}

static void put_own_layout(sbuf *b, const g_tensor *t)
{
    int first = 1;
    put(b, ", layout: {");
    for (int i = 0; i < t->nd; i++) {
        if (!t->rule[i].n)
            continue;
        put(b, "%s%s: ", first ? "" : ", ", dim_names[t->dim[i]]);
        put_rule(b, &t->rule[i]);
        first = 0;
    }
    put(b, "}");
}

static void put_shape(sbuf *b, const g_tensor *t)
{
    put(b, "shape: [");
    for (int i = 0; i < t->nd; i++)
        put(b, "%s%s", i ? ", " : "", dim_names[t->dim[i]]);
    put(b, "]");
}

static void put_header(sbuf *b, const g_case *c)
{
    put(b, "mesh: {");
    for (int a = 0; a < c->naxes; a++)
        put(b, "%s%s: %d", a ? ", " : "", axis_names[a], c->axsize[a]);
    put(b, "}\ndtype: %s\ndims: {", c->f64 ? "float64" : "float32");
    for (int d = 0; d < c->npool; d++)
        put(b, "%s%s: %d", d ? ", " : "", dim_names[d], c->size[d]);
    put(b, "}\n");
    int first = 1;
    for (int d = 0; d < c->npool; d++) {
        if (!c->global[d].n)
            continue;
        put(b, "%s%s: ", first ? "layout: {" : ", ", dim_names[d]);
        put_rule(b, &c->global[d]);
        first = 0;
    }
    if (!first)
        put(b, "}\n");
}

static void write_yaml(const g_case *c, sbuf *b)
{
    b->n = 0;
    put_header(b, c);
    put(b, "tensors:\n");
    for (int k = 0; k < c->nt; k++) {
        const g_tensor *t = &c->t[k];
        if (t->op >= 0)
            continue;
        put(b, "  %s: {", t->name);
        put_shape(b, t);
        if (t->own)
            put_own_layout(b, t);
        if (t->init == 1)
            put(b, ", init: {random: %d}", t->seed);
        if (t->init == 2)
            put(b, ", init: {fill: %g}", t->fill);
        put(b, "}\n");
    }
    put(b, "ops:\n");
    for (int op = 0; op < c->nops; op++) {
        const g_tensor *t = &c->t[c->out[op]], *a = &c->t[c->in[op][0]];
        int k = c->kind[op];
        put(b, "  - {op: %s, in: [%s", kind_names[k], a->name);
        if (c->nin[op] == 2)
            put(b, ", %s", c->t[c->in[op][1]].name);
        put(b, "], out: %s", t->name);
        if (!c->noshape[op]) {
            put(b, ", ");
            put_shape(b, t);
        }
        if (t->own)
            put_own_layout(b, t);
        if (k == O_SCALE)
            put(b, ", by: %g", c->by[op]);
        if (k == O_RSUM || k == O_RMAX || k == O_RMEAN) {
            put(b, ", dims: %s", c->dims1[op] ? "" : "[");
            for (int i = 0, n = 0; i < a->nd; i++)
                if (c->rdims[op] & (1u << a->dim[i]))
                    put(b, "%s%s", n++ ? ", " : "", dim_names[a->dim[i]]);
            put(b, "%s", c->dims1[op] ? "" : "]");
        }
        if (k == O_SOFTMAX || k == O_LNORM)
            put(b, ", dim: %s", dim_names[c->pdim[op]]);
        if (c->eps[op])
            put(b, ", eps: 0.001");
        put(b, "}\n");
    }
    if (c->write_outputs) {
        put(b, "outputs: [");
        for (int k = 0; k < c->nout; k++)
            put(b, "%s%s", k ? ", " : "", c->t[c->output[k]].name);
        put(b, "]\n");
    }
    if (c->train) {
        put(b, "train: {loss: %s, params: [", c->t[c->loss].name);
        for (int k = 0; k < c->nparams; k++)
            put(b, "%s%s", k ? ", " : "", c->t[c->params[k]].name);
        put(b, "], lr: 0.1, steps: 2");
        if (c->ngrads)
            put(b, ", grads: [%s]", c->t[c->grads[0]].name);
        put(b, "}\n");
    }
}

/* ---- hand-picked cases ---------------------------------------------- */

/* Each runs on every mesh {a, b, c} of P ranks (P dividing 12: every dim
 * that is split has size 12). */

static const struct tricky {
    const char *name, *body;
} tricky[] = {
    {"nesting [a, b] -> [b, a]",
     "dtype: float64\n"
     "dims: {i: 12, j: 5, k: 3}\n"
     "tensors:\n"
     "  x: {shape: [i, k], layout: {i: [a, b]}}\n"
     "  w: {shape: [k, j], layout: {}}\n"
     "ops:\n"
     "  - {op: einsum, in: [x], out: xt, shape: [k, i], layout: {i: [b, a]}}\n"
     "  - {op: einsum, in: [x, w], out: y, shape: [i, j], layout: {i: [b, a]}}\n"
     "outputs: [xt, y]\n"},
    {"reduce-scatter onto the contracted dim's axis",
     "dtype: float32\n"
     "dims: {i: 12, j: 12, k: 12}\n"
     "layout: {k: a}\n"
     "tensors:\n"
     "  x: {shape: [i, k]}\n"
     "  w: {shape: [k, j], layout: {k: a, j: b}}\n"
     "ops:\n"
     "  - {op: einsum, in: [x, w], out: y, shape: [i, j], layout: {i: a, j: b}}\n"
     "  - {op: einsum, in: [x, w], out: z, shape: [j, i], layout: {j: [a, b]}}\n"
     "outputs: [y, z]\n"},
    {"all-to-all: input splits another dim on the exec axis",
     "dtype: float64\n"
     "dims: {i: 12, j: 12, k: 5}\n"
     "layout: {i: a}\n"
     "tensors:\n"
     "  x: {shape: [i, j, k], layout: {j: a}}\n"
     "  w: {shape: [k, j], layout: {}}\n"
     "ops:\n"
     "  - {op: einsum, in: [x, w], out: y, shape: [i, j]}\n"
     "  - {op: einsum, in: [y], out: yt, shape: [j, i], layout: {j: a, i: b}}\n"
     "outputs: [y, yt]\n"},
    {"one-input einsum summing a split dim",
     "dtype: float32\n"
     "dims: {i: 12, s: 12, t: 3}\n"
     "tensors:\n"
     "  x: {shape: [s, i, t], layout: {s: [a, b], i: c}}\n"
     "ops:\n"
     "  - {op: einsum, in: [x], out: r, shape: [i], layout: {i: c}}\n"
     "  - {op: einsum, in: [x], out: q, shape: [t, i], layout: {i: [c, a]}}\n"
     "outputs: [r, q]\n"},
    {"replicated work: axes used by no dim",
     "dtype: float64\n"
     "dims: {i: 12, j: 4, k: 6}\n"
     "layout: {i: a}\n"
     "tensors:\n"
     "  x: {shape: [i, k]}\n"
     "  w: {shape: [k, j]}\n"
     "ops:\n"
     "  - {op: einsum, in: [x, w], out: y, shape: [j, i]}\n"
     "  - {op: einsum, in: [y], out: z, shape: [j], layout: {}}\n"
     "outputs: [y, z]\n"},
    {"axis on a dim only one input has, summed",
     "dtype: float64\n"
     "dims: {i: 12, s: 12, k: 12, j: 12}\n"
     "layout: {i: a}\n"
     "tensors:\n"
     "  x: {shape: [s, i, k], layout: {s: b, i: a, k: c}}\n"
     "  w: {shape: [j, k], layout: {k: b}}\n"
     "ops:\n"
     "  - {op: einsum, in: [x, w], out: y, shape: [i, j]}\n"
     "  - {op: einsum, in: [x, w], out: z, shape: [j, i], layout: {i: a, j: b}}\n"
     "outputs: [y, z]\n"},
    {"same tensor twice, sums reduce-scattered over two axes",
     "dtype: float64\n"
     "dims: {i: 12, j: 12}\n"
     "tensors:\n"
     "  x: {shape: [i, j], layout: {i: [b, a]}}\n"
     "ops:\n"
     "  - {op: einsum, in: [x, x], out: g, shape: [j], layout: {j: [a, b]}}\n"
     "outputs: [g]\n"},
};

/* ---- running one spec on every rank --------------------------------- */

typedef struct runner {
    int rank;
    char path[128];
    int verbose;
    int failed, rejected, run;
} runner;

/* Counts a failure; rank 0 prints it with the spec and mrt_run's report
 * (NULL when there is none). */
static void fail(runner *R, const char *label, const char *yaml,
                 const char *what, const mrt_error *e, const char *report)
{
    char msg[1024] = "";
    if (e)
        mrt_error_format(e, msg, sizeof msg);
    R->failed++;
    if (R->rank == 0) {
        printf("FAIL %s: %s%s%s (%s)\n--- spec ---\n%s", label, what,
               e ? ": " : "", msg, e ? mrt_status_name(e->code) : "-", yaml);
        if (report && *report)
            printf("--- report ---\n%s", report);
        printf("------------\n");
        fflush(stdout);
    }
}

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return 0;
    int ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok;
}

static uint64_t fnv(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* Plans (with each planner) and runs a loaded spec; the spec stays the
 * caller's.  Mesh-TensorFlow's planner may refuse a spec whose per-tensor
 * layouts the global rules cannot replace: that is not a failure. */
static void plan_and_run_with(runner *R, const char *label, const char *yaml,
                              const mrt_spec *spec, mrt_planner planner)
{
    mrt_error err = {0};
    mrt_plan *plan = NULL;
    mrt_plan_options popt = {.planner = planner};
    mrt_status st = mrt_plan_create(spec, &popt, &plan, &err);
    if (planner == MRT_PLANNER_MESHTF && same(st) && st == MRT_E_SPEC)
        return;
    if (!all(st == MRT_OK)) {
        fail(R, label, yaml,
             same(st) ? "plan failed" : "plan failed on some ranks only", &err,
             NULL);
        mrt_plan_destroy(plan);
        return;
    }
    char *report = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&report, &len); /* NULL: mrt_run uses stdout */
    mrt_run_options opt = {.verify = 1, .report = f};
    st = mrt_run(spec, plan, &opt, &err);
    if (f)
        fclose(f);
    int agreed = same(st);
    R->run++;
    if (!all(st == MRT_OK) || !agreed)
        fail(R, label, yaml,
             agreed ? "run failed"
                    : "run returned different statuses on different ranks",
             &err, report);
    free(report);
    mrt_plan_destroy(plan);
}

/* 1 when Mesh-TF's plan replaced some tensor's own layout by the global
 * rules (its JSON lists them under "ignored_layouts"). */
static int ignores_layouts(const mrt_plan *plan)
{
    char *json = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&json, &len);
    if (!f)
        return 1; /* unknown: not the same program */
    mrt_plan_print_json(plan, f);
    fclose(f);
    int ignored = !json || !strstr(json, "\"ignored_layouts\": \"\"");
    free(json);
    return ignored;
}

/* Where Mesh-TF plans the same program (no per-tensor layouts to
 * replace), the cost-aware planner's modeled time is never above it. */
static void check_planners(runner *R, const char *label, const char *yaml,
                           const mrt_spec *spec)
{
    mrt_plan *a = NULL, *m = NULL;
    mrt_plan_options oa = {.planner = MRT_PLANNER_AUTO};
    mrt_plan_options om = {.planner = MRT_PLANNER_MESHTF};
    int ok = 1;
    if (mrt_plan_create(spec, &oa, &a, NULL) == MRT_OK &&
        mrt_plan_create(spec, &om, &m, NULL) == MRT_OK && !ignores_layouts(m))
        ok = mrt_plan_get_totals(a).time_s <=
             mrt_plan_get_totals(m).time_s * (1 + 1e-9);
    if (!all(ok))
        fail(R, label, yaml, "auto costs more than meshtf in the model", NULL,
             NULL);
    mrt_plan_destroy(a);
    mrt_plan_destroy(m);
}

static void plan_and_run(runner *R, const char *label, const char *yaml,
                         const mrt_spec *spec)
{
    check_planners(R, label, yaml, spec);
    plan_and_run_with(R, label, yaml, spec, MRT_PLANNER_AUTO);
    plan_and_run_with(R, label, yaml, spec, MRT_PLANNER_MESHTF);
}

/* expect: 1 must be valid, 0 must be rejected by the loader. */
static void run_spec(runner *R, const char *label, const char *yaml, int expect)
{
    mrt_error err = {0};
    mrt_spec *spec = NULL;
    if (R->verbose && R->rank == 0) {
        printf("--- %s (%s)\n%s", label, expect ? "valid" : "invalid", yaml);
        fflush(stdout);
    }
    if (!same((int)(fnv(yaml) >> 33))) {
        fail(R, label, yaml, "the ranks generated different specs", NULL, NULL);
        return;
    }
    if (!all(write_file(R->path, yaml))) {
        fail(R, label, yaml, "cannot write the temp file", NULL, NULL);
        return;
    }
    mrt_status st = mrt_spec_load(R->path, &spec, &err);
    if (!same(st))
        fail(R, label, yaml, "the ranks disagree on loading the spec", &err,
             NULL);
    else if (st != MRT_OK && (expect || st != MRT_E_SPEC))
        fail(R, label, yaml,
             expect ? "a valid spec was rejected"
                    : "rejected, but not as a spec error",
             &err, NULL);
    else if (st != MRT_OK)
        R->rejected++;
    else if (!expect)
        fail(R, label, yaml,
             "an invalid spec was accepted (no axis may "
             "split a tensor twice)",
             NULL, NULL);
    else
        plan_and_run(R, label, yaml, spec);
    mrt_spec_destroy(spec);
}

static void run_tricky(runner *R, int P)
{
    sbuf b;
    for (size_t t = 0; t < sizeof tricky / sizeof tricky[0]; t++)
        for (int x = 1; x <= P; x++)
            for (int y = 1; y <= P / x; y++) {
                if (P % (x * y))
                    continue;
                char label[160];
                b.n = 0;
                put(&b, "mesh: {a: %d, b: %d, c: %d}\n%s", x, y, P / (x * y),
                    tricky[t].body);
                snprintf(label, sizeof label,
                         "tricky '%s' on {a: %d, b: %d, "
                         "c: %d}",
                         tricky[t].name, x, y, P / (x * y));
                run_spec(R, label, b.s, 1);
            }
}

int main(int argc, char **argv)
{
    uint64_t seed = 20240611;
    int ncases = 200, only = -1, rank, P;
    runner R = {0};
    mrt_init(NULL); /* before MPI_Init, as mrt_run requires */
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--cases") && i + 1 < argc)
            ncases = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--case") && i + 1 < argc)
            only = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--verbose"))
            R.verbose = 1;
    }
    R.rank = rank;
    snprintf(R.path, sizeof R.path, "/tmp/mrt_random_%ld_%d.yaml",
             (long)getpid(), rank);
    double t0 = MPI_Wtime();

    int cases = 0, ntrain = 0, kinds[O_NKINDS] = {0};
    sbuf b;
    for (int k = only >= 0 ? only : 0; k < (only >= 0 ? only + 1 : ncases);
         k++) {
        g_case c;
        char label[96];
        rng mix = {seed ^ ((uint64_t)k << 32) ^ (uint64_t)P};
        gen_case(&c, rng_next(&mix), P);
        ntrain += c.train;
        for (int op = 0; op < c.nops; op++)
            kinds[c.kind[op]]++;
        write_yaml(&c, &b);
        snprintf(label, sizeof label,
                 "random case %d (rerun: --seed %llu "
                 "--case %d)",
                 k, (unsigned long long)seed, k);
        run_spec(&R, label, b.s, predict_valid(&c));
        count_uneven(&c);
        cases++;
    }
    int random_failed = R.failed, random_rejected = R.rejected;
    if (only < 0 && 12 % P == 0) /* their split dims have size 12 */
        run_tricky(&R, P);
    unlink(R.path);

    int accepted_ok = cases == 0 || random_rejected * 10 <= cases * 3;
    double secs = MPI_Wtime() - t0;
    if (rank == 0) {
        printf("random: %d cases, %d rejected, %d failed at %d ranks\n", cases,
               random_rejected, random_failed, P);
        printf("random ops:");
        for (int k = 0; k < O_NKINDS; k++)
            printf(" %s %d%s", kind_names[k], kinds[k],
                   k + 1 < O_NKINDS ? "," : "");
        printf("; %d cases train\n", ntrain);
        printf("random dims split unevenly: %d of %d split dims\n", n_uneven,
               n_split);
        printf("tricky: %d failed\n", R.failed - random_failed);
        printf("%d runs in %.1f s%s\n", R.run, secs,
               accepted_ok ? ""
                           : "; FAIL: over 30% of random cases were "
                             "rejected (the generator needs tuning)");
    }
    int status = R.failed == 0 && accepted_ok ? 0 : 1;
    MPI_Finalize();
    return status;
}
