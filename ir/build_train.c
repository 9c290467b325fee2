/*
 * build_train.c — the builder's training block (meshrt.h, "building a
 * program in code"): mrt_ir_set_train, and mrt_ir_set_train_at for the
 * YAML front end's `train:`.  It checks the loss (a scalar made by an
 * op), the params and grads (inputs, each once), lr and steps, the
 * optimizer and its settings, then runs reverse mode (grad.c): the
 * backward program and the updates (optimizer.c).
 */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"

/* The message for names[j] of `what`, listed before in the list. */
static mrt_status listed_twice(mrt_ir_call *c, const char *name, const char *of)
{
    return mrt_ir_yaml(c)
               ? mrt_ir_fail(c, MRT_E_SPEC, "'%s' is listed twice in %s", name,
                             of)
               : mrt_ir_fail(c, MRT_E_SPEC, "'%s' is listed twice", name);
}

/* params or grads (`what`): inputs, each once; marks and how the file
 * wrote them (at NULL: from C).  seen ([ntensors], zeroed) marks the
 * tensors listed so far. */
static mrt_status input_list(mrt_ir_call *c, const char *what, int n,
                             const char *const *names, mrt_mark list_mark,
                             const mrt_mark *marks, const char *const *how,
                             int ids[], mrt_mark out_marks[], int *count,
                             unsigned char *seen)
{
    const mrt_spec *s = c->ir->s;
    char of[64];
    int yaml = mrt_ir_yaml(c);
    snprintf(of, sizeof of, "'%s' of 'train'", what);
    mrt_ir_at(c, what, &list_mark);
    if (n < 0 || (n > 0 && !names))
        return mrt_ir_fail(c, MRT_E_SPEC, "%d tensors and %s names", n,
                           names ? "their" : "no");
    *count = 0;
    for (int j = 0; j < n; j++) {
        int id = names[j] ? mrt_spec_find_tensor(s, names[j]) : -1;
        mrt_status st = MRT_OK;
        mrt_ir_at(c, what, marks ? &marks[j] : NULL);
        if (id < 0 && yaml)
            return mrt_ir_fail(c, MRT_E_SPEC, "unknown tensor %s in %s",
                               how ? how[j] : names[j], of);
        if (id < 0 && (st = mrt_ir_tensor_id(c, names[j], &id)))
            return st;
        if (s->tensor[id].producer >= 0)
            return yaml ? mrt_ir_fail(c, MRT_E_SPEC,
                                      "'%s' in %s is made by "
                                      "op %d; only inputs (under 'tensors') "
                                      "can be trained",
                                      names[j], of,
                                      s->op[s->tensor[id].producer].user)
                        : mrt_ir_fail(c, MRT_E_SPEC,
                                      "'%s' is made by op %d; "
                                      "only inputs can be trained",
                                      names[j],
                                      s->op[s->tensor[id].producer].user);
        if (mrt_spec_tensor_dtype(s, id) == MRT_I32)
            return mrt_ir_fail(c, MRT_E_SPEC,
                               "'%s' in %s is an int32 tensor of indices: "
                               "it has no gradient",
                               names[j], of);
        if (seen[id]++)
            return listed_twice(c, names[j], of);
        out_marks[*count] = marks ? marks[j] : (mrt_mark){0, 0};
        ids[(*count)++] = id;
    }
    return MRT_OK;
}

/* params and grads: the lists of t into tr, block references expanded
 * (a tensor may be in both, once in each). */
static mrt_status train_lists(mrt_ir_call *c, const mrt_ir_train *t,
                              const mrt_ir_train_at *at, mrt_train *tr)
{
    mrt_spec *s = c->ir->s;
    mrt_ir_names pn = {0}, gn = {0};
    mrt_ir_at(c, "params", &at->params_mark);
    if (t->nparams < 1 && !mrt_ir_yaml(c))
        return mrt_ir_fail(c, MRT_E_SPEC, "name at least one input to train");
    mrt_status st = mrt_ir_block_expand(c, 1, t->nparams, t->params,
                                        at->param_mark, at->param_what, &pn);
    if (!st)
        st = mrt_ir_block_expand(c, 1, t->ngrads, t->grads, at->grad_mark,
                                 at->grad_what, &gn);
    unsigned char *seen = st ? NULL : calloc((size_t)s->ntensors + 1, 1);
    if (!st && (!seen || mrt_train_alloc(tr, pn.n, gn.n)))
        st = mrt_ir_fail(c, MRT_E_NOMEM, "out of memory");
    if (!st)
        st = input_list(c, "params", pn.n, pn.names, at->params_mark, pn.marks,
                        at->param_what ? pn.how : NULL, tr->param,
                        tr->param_mark, &tr->nparams, seen);
    if (seen)
        memset(seen, 0, (size_t)s->ntensors + 1);
    if (!st)
        st = input_list(c, "grads", gn.n, gn.names, at->grads_mark, gn.marks,
                        at->grad_what ? gn.how : NULL, tr->extra,
                        tr->extra_mark, &tr->nextra, seen);
    free(seen);
    mrt_ir_names_free(&pn);
    mrt_ir_names_free(&gn);
    return st;
}

/* The loss: a scalar made by an op. */
static mrt_status train_loss(mrt_ir_call *c, const mrt_ir_train *t,
                             const mrt_ir_train_at *at, int *loss)
{
    const mrt_spec *s = c->ir->s;
    int yaml = mrt_ir_yaml(c);
    mrt_status st;
    mrt_ir_at(c, "loss", &at->loss_mark);
    *loss = t->loss ? mrt_spec_find_tensor(s, t->loss) : -1;
    if (*loss < 0 && yaml)
        return mrt_ir_fail(c, MRT_E_SPEC, "unknown tensor %s as the loss",
                           at->loss_what ? at->loss_what : "?");
    if (*loss < 0 && (st = mrt_ir_tensor_id(c, t->loss, loss)))
        return st;
    int nd = s->tensor[*loss].layout.ndims;
    if (nd != 0)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "the loss '%s' has %d dims; it "
                           "must be a scalar%s",
                           t->loss, nd,
                           yaml ? " (reduce it, or use mse or "
                                  "softmax_cross_entropy)"
                                : "");
    if (s->tensor[*loss].producer < 0)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "the loss '%s' is an input; it "
                           "must be made by an op",
                           t->loss);
    return MRT_OK;
}

/* lr and steps (0: their defaults, 0.01 and 1). */
static mrt_status train_rates(mrt_ir_call *c, const mrt_ir_train *t,
                              const mrt_ir_train_at *at, mrt_train *tr)
{
    char q[MRT_SPEC_QUOTE_MAX + 8];
    mrt_ir_at(c, "lr", &at->lr_mark);
    tr->lr = t->lr == 0 ? 0.01 : t->lr;
    if (mrt_ir_yaml(c) && c->ir->s->dtype == MRT_F32 && tr->lr > FLT_MAX)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "the 'lr' of 'train' is out of "
                           "float32's range: %s (at most %.8g in magnitude; "
                           "or use dtype: float64)",
                           mrt_ir_quote(at->lr_text, q, sizeof q),
                           (double)FLT_MAX);
    if (!mrt_ir_yaml(c) && !(tr->lr > 0 && tr->lr < 3.4e38))
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "the learning rate must be a "
                           "positive number");
    mrt_ir_at(c, "steps", NULL);
    tr->steps = t->steps == 0 ? 1 : t->steps;
    if (tr->steps < 1 || tr->steps > MRT_TRAIN_STEPS_MAX)
        return mrt_ir_fail(c, MRT_E_SPEC, "steps must be from 1 to %d",
                           MRT_TRAIN_STEPS_MAX);
    return MRT_OK;
}

/* The microbatch dim: the named one, else `batch`; m must divide it. */
static mrt_status train_micro_dim(mrt_ir_call *c, const mrt_ir_train *t,
                                  const mrt_ir_train_at *at, mrt_train *tr)
{
    const mrt_spec *s = c->ir->s;
    char q[MRT_SPEC_QUOTE_MAX + 8], list[MRT_SPEC_LIST_MAX];
    const char *name = t->microbatch_dim ? t->microbatch_dim : "batch";
    mrt_ir_at(c, "microbatch_dim",
              t->microbatch_dim ? &at->micro_dim_mark : &at->micro_mark);
    int d = mrt_spec_find_dim(s, name);
    if (d < 0)
        return mrt_ir_fail(
            c, MRT_E_SPEC,
            "%s dim '%s' to split into microbatches (the dims are: %s)%s",
            t->microbatch_dim ? "unknown" : "no",
            mrt_ir_quote(name, q, sizeof q),
            mrt_spec_join(list, sizeof list, s->dim_name ? s->dim_name[0] : "",
                          sizeof s->dim_name[0], s->ndims),
            t->microbatch_dim ? "" : "; name one with 'microbatch_dim'");
    if (s->dim_size[d] % tr->microbatches)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "%d microbatches do not divide dim '%s' of size "
                           "%lld",
                           tr->microbatches, name, (long long)s->dim_size[d]);
    tr->micro_dim = d;
    /* (a `grads:` input with the dim is m inputs, each with its gradient:
     * microbatch.c) */
    for (int k = 0; k < tr->nparams; k++) {
        int x = tr->param[k];
        mrt_ir_at(c, "params", &tr->param_mark[k]);
        if (mrt_layout_find_dim(&s->tensor[x].layout, d) >= 0)
            return mrt_ir_fail(c, MRT_E_SPEC,
                               "'%s' has the microbatch dim '%s': with "
                               "microbatches it is one tensor per "
                               "microbatch, and has no gradient of its own",
                               s->tensor[x].name, name);
    }
    return MRT_OK;
}

/* microbatches, microbatch_dim, schedule, virtual_stages. */
static mrt_status train_pipeline(mrt_ir_call *c, const mrt_ir_train *t,
                                 const mrt_ir_train_at *at, mrt_train *tr)
{
    mrt_ir_at(c, "microbatches", &at->micro_mark);
    if (t->microbatches < 0 || t->microbatches > MRT_MICROBATCHES_MAX ||
        t->virtual_stages < 0 || t->virtual_stages > MRT_MICROBATCHES_MAX)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "microbatches and virtual stages must be from 1 "
                           "to %d",
                           MRT_MICROBATCHES_MAX);
    tr->microbatches = t->microbatches > 1 ? (int)t->microbatches : 1;
    tr->virtual_stages = t->virtual_stages > 1 ? (int)t->virtual_stages : 1;
    tr->micro_mark = at->micro_mark;
    tr->schedule_mark = at->schedule_mark;
    tr->micro_dim = -1;
    mrt_ir_at(c, "schedule", &at->schedule_mark);
    int k = t->schedule ? mrt_schedule_kind_find(t->schedule) : 0;
    if (k < 0)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "unknown schedule '%s' (expected: gpipe, 1f1b, "
                           "interleaved, zero_bubble)",
                           t->schedule);
    tr->schedule = (mrt_schedule_kind)k;
    if (tr->microbatches > 1 || t->microbatch_dim)
        return train_micro_dim(c, t, at, tr);
    return MRT_OK;
}

/* A setting of the optimizer: in (lo, hi) (hi_closed: up to hi), or 0
 * when not given; a setting given that `opt` does not take is refused. */
static mrt_status setting(mrt_ir_call *c, const char *key, const mrt_mark *at,
                          double x, double lo, double hi, int takes)
{
    const mrt_train *tr = &c->ir->s->train;
    mrt_ir_at(c, key, at);
    if (x == 0)
        return MRT_OK;
    if (!takes)
        return mrt_ir_fail(c, MRT_E_SPEC, "optimizer '%s' takes no '%s' (%s)",
                           mrt_optimizer_name(tr->optimizer), key,
                           !strcmp(key, "momentum") ? "optimizer momentum does"
                                                    : "adam and adamw do");
    if (!(x > lo && x < hi))
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "the '%s' of 'train' must be in (%g, %g): got %g",
                           key, lo, hi, x);
    return MRT_OK;
}

/* The optimizer and its settings, defaults filled in. */
static mrt_status train_optimizer(mrt_ir_call *c, const mrt_ir_train *t,
                                  const mrt_ir_train_at *at, mrt_train *tr)
{
    mrt_ir_at(c, "optimizer", &at->optimizer_mark);
    if (t->optimizer < 0 || t->optimizer >= MRT_OPTIMIZER_COUNT)
        return mrt_ir_fail(c, MRT_E_USAGE, "unknown optimizer %d (0 to %d)",
                           (int)t->optimizer, MRT_OPTIMIZER_COUNT - 1);
    tr->optimizer = t->optimizer;
    int adam = t->optimizer == MRT_OPTIMIZER_ADAM ||
               t->optimizer == MRT_OPTIMIZER_ADAMW;
    mrt_status st = setting(c, "betas", &at->betas_mark, t->beta1, 0, 1, adam);
    if (!st)
        st = setting(c, "betas", &at->betas_mark, t->beta2, 0, 1, adam);
    if (!st)
        st = setting(c, "eps", &at->eps_mark, t->eps, 0, 1, adam);
    if (!st)
        st = setting(c, "weight_decay", &at->decay_mark, t->weight_decay, 0,
                     1e30, 1);
    if (!st)
        st = setting(c, "momentum", &at->momentum_mark, t->momentum, 0, 1,
                     t->optimizer == MRT_OPTIMIZER_MOMENTUM);
    tr->beta1 = t->beta1 ? t->beta1 : 0.9;
    tr->beta2 = t->beta2 ? t->beta2 : 0.999;
    tr->eps = t->eps ? t->eps : 1e-8;
    tr->weight_decay = t->weight_decay;
    tr->momentum = t->momentum ? t->momentum : 0.9;
    tr->master_grads = !t->no_master_grads;
    return st;
}

mrt_status mrt_ir_set_train_at(mrt_ir *ir, const mrt_ir_train *t,
                               const mrt_ir_train_at *at, mrt_error *err)
{
    static const mrt_ir_train_at none;
    mrt_ir_call c;
    mrt_status st = mrt_ir_begin_untrained(&c, ir, "mrt_ir_set_train", "t", t,
                                           "the program has a training block "
                                           "already");
    if (!at)
        at = &none;
    c.entry = at->mark;
    if (st)
        return mrt_ir_end(&c, st, err);
    mrt_spec *s = ir->s;
    mrt_train *tr = &s->train;
    int loss = -1;
    tr->mark = at->mark;
    tr->loss_mark = at->loss_mark;
    st = train_loss(&c, t, at, &loss);
    if (!st)
        st = train_lists(&c, t, at, tr);
    if (!st)
        st = train_rates(&c, t, at, tr);
    if (!st)
        st = train_optimizer(&c, t, at, tr);
    if (!st)
        st = train_pipeline(&c, t, at, tr);
    if (!st) {
        tr->loss = loss;
        mrt_ir_at(&c, "params", NULL); /* reverse mode's errors: about them */
        st = mrt_ir_precision_cast(s, &c.e); /* precision:'s copies */
        if (!st) /* (each microbatch reads its own) */
            st = mrt_ir_microbatch(s, &c.e);
        if (!st)
            st = mrt_ir_grad(s, &c.e);
        if (!st) /* `precision:`'s types of parameters and gradients */
            mrt_ir_precision_apply(s);
        if (!st)
            st = mrt_ir_block_apply_recompute(&c);
        ir->trained = 1;
    }
    if (st && tr->loss >= 0)
        tr->loss = -1;
    return mrt_ir_end(&c, st, err);
}

mrt_status mrt_ir_set_train(mrt_ir *ir, const mrt_ir_train *t, mrt_error *err)
{
    return mrt_ir_set_train_at(ir, t, NULL, err);
}
