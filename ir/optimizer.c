/*
 * optimizer.c — the update of a training step: after reverse mode
 * (grad.c) has made each parameter's gradient, the optimizer's ops,
 * built from the same primitive maps as the rest of the program so the
 * planner shards and costs them like any op.
 *
 *   sgd       w' = w - lr g
 *   momentum  b' = g + mu b;            w' = w - lr b'
 *   adam      m' = m + (1 - b1)(g - m)  (lerp)
 *             v' = v + (1 - b2)(g² - v) (lerp_sq)
 *             w' = w - lr_t m' / (sqrt(v') + eps_t)
 *   adamw     the same, and w' = w - (that + lr wd w): decoupled decay
 *
 * with g = g + wd w (L2 decay) for sgd, momentum and adam when
 * weight_decay is given.  Adam's bias correction is folded into two
 * scalars, exactly: m̂/(sqrt(v̂) + eps) = m sqrt(1-b2^t)/(1-b1^t) /
 * (sqrt(v) + eps sqrt(1-b2^t)), so lr_t = lr sqrt(1-b2^t)/(1-b1^t) and
 * eps_t = eps sqrt(1-b2^t) are 0-dim inputs ("optimizer:lr_t",
 * "optimizer:eps_t") that the runner and the reference set before step
 * t (mrt_optimizer_scalars), the same on every rank.
 *
 * The state (b; m and v) is made of input tensors filled with zeros,
 * tagged opt_state and opt_role, and carried from step to step as the
 * parameters are: train.state[k] takes train.state_next[k] after each
 * step.  State, the update's temporaries and its state results take
 * the parameter's optimizer layout (opt_layout): the parameter's own
 * layout unless an alternative's `optimizer_layout:` or `zero:` says
 * otherwise; the updated parameter w' keeps w's layout, so a sharded
 * update ends in an all-gather.  Each result is written over its input
 * (in place: ops/inplace.c makes the plan's value share the buffer).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grad_names.h"
#include "ir.h"

static const char *const optimizer_names[] = {"sgd", "momentum", "adam",
                                              "adamw"};
_Static_assert(sizeof optimizer_names / sizeof optimizer_names[0] ==
                   MRT_OPTIMIZER_COUNT,
               "a name per optimizer");

const char *mrt_optimizer_name(mrt_optimizer o)
{
    return o >= 0 && o < MRT_OPTIMIZER_COUNT ? optimizer_names[o] : NULL;
}

void mrt_optimizer_scalars(const mrt_train *tr, int64_t t, double out[2])
{
    double c1 = 1 - pow(tr->beta1, (double)t),
           c2 = sqrt(1 - pow(tr->beta2, (double)t));
    out[0] = tr->lr * c2 / c1;
    out[1] = tr->eps * c2;
}

/* The update of one parameter being built. */
typedef struct upd {
    mrt_spec *s;
    mrt_error *err;
    mrt_status st;
    int k;          /* the parameter's index in train.param */
    int w;          /* its tensor */
    int state;      /* its optimizer keeps state: temporaries take its layout */
    mrt_dtype type; /* the optimizer's: its state's and temporaries' */
    mrt_dtype ptype, gtype; /* the parameter's and its gradient's */
} upd;

static int fail_nomem(upd *u)
{
    if (!u->st)
        u->st = mrt_ir_nomem(u->s, u->err);
    return -1;
}

/* A tensor with the parameter's dims named "<w><suffix>": with opt, in
 * the optimizer's layout and type; else in the parameter's. */
static int like_param(upd *u, const char *suffix, int opt)
{
    mrt_spec *s = u->s;
    if (u->st)
        return -1;
    char name[MRT_NAME_MAX];
    mrt_ir_name(s, "", s->tensor[u->w].name, suffix, 0, name);
    mrt_spec_tensor w = s->tensor[u->w];
    int id = mrt_spec_add_tensor(s, name, w.layout.dim, w.layout.ndims, -1,
                                 s->train.param_mark[u->k]);
    if (id < 0)
        return fail_nomem(u);
    mrt_spec_tensor *t = &s->tensor[id];
    t->layout = w.layout;
    t->layout.partial = 0;
    t->own_layout = w.own_layout;
    memcpy(t->split_mark, w.split_mark, sizeof w.split_mark);
    if (opt) { /* the optimizer's layout (derive.c: w's unless given) */
        t->opt_layout = 1 + u->w;
        t->stored = u->type == s->dtype ? 0 : 1 + (int)u->type;
    } else { /* w's layout and type (grad_piece 0: no gradient piece) */
        t->grad_like = 1 + u->w;
        t->stored = w.stored;
    }
    t->block = w.block;
    t->layer = w.layer;
    return id;
}

/* A state tensor of the parameter (an input of zeros) with its role. */
static int state_tensor(upd *u, const char *suffix, int role)
{
    int id = like_param(u, suffix, 1);
    if (id >= 0) {
        mrt_spec_tensor *t = &u->s->tensor[id];
        t->init = MRT_INIT_FILL;
        t->fill = 0;
        t->opt_state = 1 + u->w;
        t->opt_role = role;
    }
    return id;
}

/* The master weights: a state tensor with w's initial values (its init
 * copied), in the optimizer's type. */
static int master_tensor(upd *u)
{
    int id = state_tensor(u, ":master", MRT_OPT_ROLE_MASTER);
    if (id < 0)
        return -1;
    mrt_spec_tensor *t = &u->s->tensor[id];
    const mrt_spec_tensor *w = &u->s->tensor[u->w];
    t->init = w->init;
    t->seed = w->seed;
    t->fill = w->fill;
    t->init_mark = w->init_mark;
    t->file_header = w->file_header;
    if (w->file && !(t->file = strdup(w->file)))
        return fail_nomem(u);
    return id;
}

/* Appends the update op out = fn(a, b; c) (b < 0: one input). */
static int op(upd *u, mrt_map_fn fn, double c, int a, int b, int out)
{
    mrt_spec *s = u->s;
    if (u->st || a < 0 || out < 0)
        return -1;
    mrt_mark at = s->train.param_mark[u->k];
    mrt_spec_op o = {.kind = MRT_OP_MAP,
                     .mark = at,
                     .nin = b >= 0 ? 2 : 1,
                     .in = {a, b >= 0 ? b : 0},
                     .in_mark = {at, at},
                     .out = out,
                     .expect = {-1, -1, {0, 0}},
                     .fn = fn,
                     .c = c,
                     .from_dim = -1,
                     .to_dim = -1,
                     .phase = MRT_PHASE_UPDATE,
                     .user = 0,
                     .micro = -1};
    int k = mrt_spec_add_op(s, &o);
    if (k < 0)
        return fail_nomem(u);
    s->op[k].block = s->tensor[u->w].block; /* its parameter's instance */
    s->op[k].layer = s->tensor[u->w].layer;
    return out;
}

/* A temporary of the update: out = fn(a, b; c); in the optimizer's
 * layout (sgd, with no state: the parameter's, as grad_like). */
static int temp(upd *u, const char *suffix, mrt_map_fn fn, double c, int a,
                int b)
{
    return op(u, fn, c, a, b, like_param(u, suffix, u->state));
}

/* state[k] and state_next[k]: carried from step to step. */
static void carry(upd *u, int from, int to)
{
    mrt_train *tr = &u->s->train;
    if (u->st || from < 0 || to < 0)
        return;
    tr->state[tr->nstate] = from;
    tr->state_next[tr->nstate++] = to;
    mrt_spec_tensor *t = &u->s->tensor[to];
    t->opt_state = u->s->tensor[from].opt_state;
    t->opt_role = u->s->tensor[from].opt_role;
}

/* The state's result "<w><suffix>:next" = fn(a, b; c). */
static int state_next(upd *u, int state, const char *suffix, mrt_map_fn fn,
                      double c, int a, int b)
{
    char next[32];
    snprintf(next, sizeof next, "%s:next", suffix);
    int to = op(u, fn, c, a, b, like_param(u, next, 1));
    carry(u, state, to);
    return to;
}

/* Adam's step direction scaled by lr_t: lr_t m' / (sqrt(v') + eps_t). */
static int adam_step(upd *u, int g)
{
    const mrt_train *tr = &u->s->train;
    int m = state_tensor(u, ":m", MRT_OPT_ROLE_M);
    int v = state_tensor(u, ":v", MRT_OPT_ROLE_V);
    int m1 = state_next(u, m, ":m", MRT_MAP_LERP, 1 - tr->beta1, m, g);
    int v1 = state_next(u, v, ":v", MRT_MAP_LERP_SQ, 1 - tr->beta2, v, g);
    int den = temp(u, ":opt:den", MRT_MAP_SQRT_ADD, 0, v1, tr->step_scalar[1]);
    int d = temp(u, ":opt:dir", MRT_MAP_DIV, 0, m1, den);
    return temp(u, ":opt:step", MRT_MAP_MUL, 0, d, tr->step_scalar[0]);
}

/* The last op of the update, out = x - the step: sgd's x - lr g,
 * momentum's x - lr b', Adam's x - (its step). */
static int apply_step(upd *u, int x, int g, int out)
{
    mrt_spec *s = u->s;
    const mrt_train *tr = &s->train;
    switch (tr->optimizer) {
    case MRT_OPTIMIZER_SGD: return op(u, MRT_MAP_AXPY, -tr->lr, x, g, out);
    case MRT_OPTIMIZER_MOMENTUM: {
        int b = state_tensor(u, ":momentum", MRT_OPT_ROLE_M);
        int b1 = state_next(u, b, ":momentum", MRT_MAP_AXPY, tr->momentum, g,
                            b);
        return op(u, MRT_MAP_AXPY, -tr->lr, x, b1, out);
    }
    case MRT_OPTIMIZER_ADAM:
    case MRT_OPTIMIZER_ADAMW: {
        int d = adam_step(u, g);
        if (tr->weight_decay > 0 && tr->optimizer == MRT_OPTIMIZER_ADAMW)
            d = temp(u, ":opt:decay", MRT_MAP_AXPY, tr->lr * tr->weight_decay,
                     d, x);
        return op(u, MRT_MAP_SUB, 0, x, d, out);
    }
    case MRT_OPTIMIZER_COUNT: break;
    }
    return -1;
}

/* The ops that update parameter k; train.updated[k] is its result.
 * With master weights (the parameters' type narrower than the
 * optimizer's), the update runs on them in place and w:next is their
 * copy in w's type (converted on the optimizer's shard, <w>:opt:cast,
 * so a sharded update gathers the parameter in its own type, as ZeRO
 * does) and layout; with a gradient narrower than the
 * optimizer's type (and master_grads), its copy in that type is kept
 * as state. */
static void update(upd *u)
{
    mrt_spec *s = u->s;
    mrt_train *tr = &s->train;
    int w = u->w, g = tr->grad[u->k];
    int wide = mrt_dtype_size(u->type);
    int master = wide > mrt_dtype_size(u->ptype);
    u->state = tr->optimizer != MRT_OPTIMIZER_SGD || master;
    if (u->state && tr->master_grads && wide > mrt_dtype_size(u->gtype)) {
        int gc = state_tensor(u, ":grad", MRT_OPT_ROLE_GRAD);
        g = state_next(u, gc, ":grad", MRT_MAP_COPY, 0, g, -1);
    }
    int x = master ? master_tensor(u) : w; /* what the update runs on */
    if (tr->weight_decay > 0 && tr->optimizer != MRT_OPTIMIZER_ADAMW)
        g = temp(u, ":opt:g", MRT_MAP_AXPY, tr->weight_decay, g, x);
    int next = like_param(u, ":next", 0);
    if (master) { /* converted on the shard, then gathered in w's type */
        int x1 = apply_step(u, x, g, like_param(u, ":master:next", 1));
        int h = like_param(u, ":opt:cast", 1);
        if (h >= 0)
            s->tensor[h].stored = u->ptype == s->dtype ? 0 : 1 + (int)u->ptype;
        carry(u, x, x1);
        op(u, MRT_MAP_COPY, 0, op(u, MRT_MAP_COPY, 0, x1, -1, h), -1, next);
    } else {
        apply_step(u, x, g, next);
    }
    tr->updated[u->k] = next;
}

/* Adam's scalars lr_t and eps_t, filled for step 1, in the optimizer's
 * type (a bfloat16 lr_t would be off by up to 0.4%). */
static mrt_status scalars(mrt_spec *s, mrt_error *err)
{
    mrt_train *tr = &s->train;
    static const char *const names[2] = {"optimizer:lr_t", "optimizer:eps_t"};
    double at1[2];
    tr->step_scalar[0] = tr->step_scalar[1] = -1;
    if (tr->optimizer != MRT_OPTIMIZER_ADAM &&
        tr->optimizer != MRT_OPTIMIZER_ADAMW)
        return MRT_OK;
    mrt_optimizer_scalars(tr, 1, at1);
    for (int i = 0; i < 2; i++) {
        char name[MRT_NAME_MAX];
        mrt_ir_name(s, "", names[i], "", 0, name);
        int id = mrt_spec_add_tensor(s, name, NULL, 0, -1, tr->mark);
        if (id < 0)
            return mrt_ir_nomem(s, err);
        s->tensor[id].init = MRT_INIT_FILL;
        s->tensor[id].fill = at1[i];
        if (s->precision.given && s->precision.optimizer != s->dtype)
            s->tensor[id].stored = 1 + (int)s->precision.optimizer;
        tr->step_scalar[i] = id;
    }
    return MRT_OK;
}

mrt_status mrt_optimizer_emit(mrt_spec *s, const int *order, mrt_error *err)
{
    mrt_train *tr = &s->train;
    size_t room = (size_t)MRT_OPT_ROLE_COUNT * (size_t)tr->nparams + 1;
    free(tr->state);
    free(tr->state_next);
    tr->nstate = 0;
    tr->state = malloc(room * sizeof *tr->state);
    tr->state_next = malloc(room * sizeof *tr->state_next);
    if (!tr->state || !tr->state_next)
        return mrt_ir_nomem(s, err);
    mrt_status st = scalars(s, err);
    for (int j = 0; j < tr->nparams && !st; j++) {
        upd u = {.s = s, .err = err, .k = order[j]};
        u.w = tr->param[u.k];
        /* precision:'s types (the builder gives the parameters and
         * gradients theirs after reverse mode), else the tensors' own */
        const mrt_precision *q = &s->precision;
        u.ptype = q->given ? q->params : mrt_spec_tensor_dtype(s, u.w);
        u.gtype = q->given ? q->grads : mrt_spec_tensor_dtype(s, tr->grad[u.k]);
        u.type = q->given ? q->optimizer : u.ptype;
        update(&u);
        st = u.st;
    }
    return st;
}
