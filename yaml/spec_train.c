/*
 * spec_train.c — the `train:` section of a YAML spec:
 *
 *   train: {loss: L, params: [w1, w2], lr: 0.01, steps: 5, grads: [x],
 *           optimizer: adamw, betas: [0.9, 0.95], eps: 1e-8,
 *           weight_decay: 0.1, momentum: 0.9, master_grads: false}
 *
 * read here and handed to the builder (mrt_ir_set_train_at), which
 * checks it against the program so far (L a scalar made by an op;
 * params and grads inputs, each once) and runs reverse mode (ir/grad.c):
 * the backward program and the updates.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec_parse.h"

static const char *const train_keys[] = {"loss",
                                         "params",
                                         "lr",
                                         "steps",
                                         "grads",
                                         "optimizer",
                                         "betas",
                                         "eps",
                                         "weight_decay",
                                         "momentum",
                                         "master_grads",
                                         "microbatches",
                                         "microbatch_dim",
                                         "schedule",
                                         "virtual_stages",
                                         NULL};

/* Room for how the file wrote each name of a list. */
typedef char mrt_spec_how[MRT_SPEC_QUOTE_MAX + 32];

/* A list of tensors (`params:` or `grads:`) read for the builder: names
 * (NULL where an item is no name: the builder then calls it unknown,
 * as the file wrote it), their marks and how they were written, in
 * arrays of l's own. */
typedef struct train_list {
    int count;
    const char **names, **hows;
    mrt_mark *marks;
    mrt_spec_how *how;
} train_list;

static void list_free(train_list *l)
{
    free(l->names);
    free(l->hows);
    free(l->marks);
    free(l->how);
}

static mrt_status read_list(mrt_spec_parser *p, const yaml_node_t *n,
                            const char *what, train_list *l)
{
    char of[64];
    snprintf(of, sizeof of, "'%s' of 'train'", what);
    mrt_status st = mrt_spec_expect(p, n, YAML_SEQUENCE_NODE, of);
    if (st)
        return st;
    l->count = mrt_spec_count(n);
    size_t room = (size_t)l->count + 1;
    l->names = calloc(room, sizeof *l->names);
    l->hows = calloc(room, sizeof *l->hows);
    l->marks = calloc(room, sizeof *l->marks);
    l->how = calloc(room, sizeof *l->how);
    if (!l->names || !l->hows || !l->marks || !l->how)
        return mrt_spec_nomem(p);
    for (int j = 0; j < l->count; j++) {
        const yaml_node_t *it = mrt_spec_item(p, n, j);
        l->names[j] = mrt_spec_is_null(it) ? NULL : mrt_spec_str(it);
        l->marks[j] = mrt_spec_mark(it);
        l->hows[j] = mrt_spec_what(it, l->how[j], sizeof l->how[j]);
    }
    return MRT_OK;
}

/* `params: all`: a list of the one name, which the builder expands. */
static mrt_status one_name(mrt_spec_parser *p, const yaml_node_t *n,
                           const char *name, train_list *l)
{
    l->count = 1;
    l->names = calloc(1, sizeof *l->names);
    l->hows = calloc(1, sizeof *l->hows);
    l->marks = calloc(1, sizeof *l->marks);
    if (!l->names || !l->hows || !l->marks)
        return mrt_spec_nomem(p);
    l->names[0] = name;
    l->marks[0] = mrt_spec_mark(n);
    l->hows[0] = "'all'";
    return MRT_OK;
}

/* A name from scalar n (or NULL when n is absent): a mapping or a
 * sequence is an error about `what`. */
static mrt_status read_name(mrt_spec_parser *p, const yaml_node_t *n,
                            const char *what, const char **out)
{
    *out = NULL;
    if (!n)
        return MRT_OK;
    if (n->type != YAML_SCALAR_NODE)
        return mrt_spec_fail(p, n, "%s must be a name", what);
    *out = mrt_spec_str(n);
    return MRT_OK;
}

/* microbatches, microbatch_dim, schedule and virtual_stages (the
 * builder checks them against the program: microbatch.c). */
static mrt_status read_pipeline(mrt_spec_parser *p, const yaml_node_t *n,
                                mrt_ir_train *t, mrt_ir_train_at *at)
{
    const yaml_node_t *m = mrt_spec_get(p, n, "microbatches");
    const yaml_node_t *d = mrt_spec_get(p, n, "microbatch_dim");
    const yaml_node_t *sc = mrt_spec_get(p, n, "schedule");
    const yaml_node_t *v = mrt_spec_get(p, n, "virtual_stages");
    mrt_status st = MRT_OK;
    at->micro_mark = mrt_spec_mark(m);
    at->micro_dim_mark = mrt_spec_mark(d);
    at->schedule_mark = mrt_spec_mark(sc);
    at->virtual_mark = mrt_spec_mark(v);
    if (m)
        st = mrt_spec_count_max(p, m, "the 'microbatches' of 'train'",
                                MRT_MICROBATCHES_MAX, &t->microbatches);
    if (!st && v)
        st = mrt_spec_count_max(p, v, "the 'virtual_stages' of 'train'",
                                MRT_MICROBATCHES_MAX, &t->virtual_stages);
    if (!st)
        st = read_name(p, d, "the 'microbatch_dim' of 'train'",
                       &t->microbatch_dim);
    if (!st)
        st = read_name(p, sc, "the 'schedule' of 'train'", &t->schedule);
    return st;
}

/* A number of the optimizer's settings; zero (the builder's "not
 * given") is refused where it is out of range: (0, 1) or eps > 0. */
static mrt_status setting(mrt_spec_parser *p, const yaml_node_t *n,
                          const char *key, double *out)
{
    char what[64];
    snprintf(what, sizeof what, "the '%s' of 'train'", key);
    mrt_status st = mrt_spec_number(p, n, what, out);
    if (!st && *out == 0 && strcmp(key, "weight_decay"))
        st = mrt_spec_fail(p, n, "the '%s' of 'train' must be in (0, 1): got 0",
                           key);
    if (!st && *out < 0 && !strcmp(key, "weight_decay"))
        st = mrt_spec_fail(p, n,
                           "the 'weight_decay' of 'train' must be 0 or "
                           "more: got %g",
                           *out);
    return st;
}

/* optimizer, betas, eps, weight_decay, momentum and master_grads. */
static mrt_status read_optimizer(mrt_spec_parser *p, const yaml_node_t *n,
                                 mrt_ir_train *t, mrt_ir_train_at *at)
{
    const yaml_node_t *o = mrt_spec_get(p, n, "optimizer"),
                      *b = mrt_spec_get(p, n, "betas"),
                      *e = mrt_spec_get(p, n, "eps"),
                      *d = mrt_spec_get(p, n, "weight_decay"),
                      *m = mrt_spec_get(p, n, "momentum"),
                      *g = mrt_spec_get(p, n, "master_grads");
    mrt_status st = MRT_OK;
    at->optimizer_mark = mrt_spec_mark(o);
    at->betas_mark = mrt_spec_mark(b);
    at->eps_mark = mrt_spec_mark(e);
    at->decay_mark = mrt_spec_mark(d);
    at->momentum_mark = mrt_spec_mark(m);
    if (o) {
        const char *name = o->type == YAML_SCALAR_NODE ? mrt_spec_str(o) : "";
        int k = 0;
        while (k < MRT_OPTIMIZER_COUNT &&
               strcmp(name, mrt_optimizer_name((mrt_optimizer)k)))
            k++;
        char q[MRT_SPEC_QUOTE_MAX + 8];
        if (k == MRT_OPTIMIZER_COUNT)
            return mrt_spec_fail(p, o,
                                 "unknown optimizer %s (expected: sgd, "
                                 "momentum, adam, adamw)",
                                 mrt_spec_what(o, q, sizeof q));
        t->optimizer = (mrt_optimizer)k;
    }
    if (b &&
        !(st = mrt_spec_expect(p, b, YAML_SEQUENCE_NODE,
                               "the 'betas' of 'train'")) &&
        mrt_spec_count(b) != 2)
        st = mrt_spec_fail(p, b,
                           "the 'betas' of 'train' are two numbers [b1, b2]: "
                           "got %d",
                           mrt_spec_count(b));
    for (int j = 0; b && !st && j < 2; j++)
        st = setting(p, mrt_spec_item(p, b, j), "betas",
                     j ? &t->beta2 : &t->beta1);
    if (!st && e)
        st = setting(p, e, "eps", &t->eps);
    if (!st && d)
        st = setting(p, d, "weight_decay", &t->weight_decay);
    if (!st && m)
        st = setting(p, m, "momentum", &t->momentum);
    if (!st && g) {
        const char *v = g->type == YAML_SCALAR_NODE ? mrt_spec_str(g) : "";
        char q[MRT_SPEC_QUOTE_MAX + 8];
        if (strcmp(v, "true") && strcmp(v, "false"))
            st = mrt_spec_fail(p, g,
                               "the 'master_grads' of 'train' must be true "
                               "or false, got %s",
                               mrt_spec_what(g, q, sizeof q));
        t->no_master_grads = !strcmp(v, "false");
    }
    return st;
}

/* The keys of n, checked, and the builder's train block. */
static mrt_status read_train(mrt_spec_parser *p, const yaml_node_t *n,
                             train_list *pl, train_list *gl)
{
    mrt_spec_how loss_how;
    mrt_status st = mrt_spec_expect(p, n, YAML_MAPPING_NODE, "'train'");
    if (!st)
        st = mrt_spec_check_keys(p, n, train_keys, "'train'");
    if (!st && !mrt_spec_get(p, n, "loss"))
        st = mrt_spec_fail(p, n, "'train' needs 'loss' and 'params'");
    if (!st && !mrt_spec_get(p, n, "params"))
        st = mrt_spec_fail(p, n, "'train' needs 'loss' and 'params'");
    if (st)
        return st;
    const yaml_node_t *loss = mrt_spec_get(p, n, "loss");
    const yaml_node_t *pn = mrt_spec_get(p, n, "params");
    const yaml_node_t *gn = mrt_spec_get(p, n, "grads");
    const yaml_node_t *lr = mrt_spec_get(p, n, "lr");
    const yaml_node_t *steps = mrt_spec_get(p, n, "steps");
    const char *all = pn->type == YAML_SCALAR_NODE ? mrt_spec_str(pn) : NULL;
    if (all && !strcmp(all, "all")) /* every input with an init */
        st = one_name(p, pn, all, pl);
    else
        st = read_list(p, pn, "params", pl);
    if (!st && gn)
        st = read_list(p, gn, "grads", gl);
    mrt_ir_train t = {.loss = mrt_spec_is_null(loss) ? NULL
                                                     : mrt_spec_str(loss),
                      .params = pl->names,
                      .nparams = pl->count,
                      .grads = gl->names,
                      .ngrads = gl->count};
    mrt_ir_train_at at = {
        .mark = mrt_spec_mark(n),
        .loss_mark = mrt_spec_mark(loss),
        .params_mark = mrt_spec_mark(pn),
        .grads_mark = mrt_spec_mark(gn),
        .param_mark = pl->marks,
        .grad_mark = gl->marks,
        .loss_what = mrt_spec_what(loss, loss_how, sizeof loss_how),
        .param_what = pl->hows,
        .grad_what = gl->hows,
        .lr_mark = mrt_spec_mark(lr)};
    if (!st && lr) {
        st = mrt_spec_positive(p, lr, "the 'lr' of 'train'", &t.lr);
        if (!st) /* a number, so a scalar */
            at.lr_text = (const char *)lr->data.scalar.value;
    }
    if (!st && steps)
        st = mrt_spec_count_max(p, steps, "the 'steps' of 'train'",
                                MRT_TRAIN_STEPS_MAX, &t.steps);
    if (!st)
        st = read_optimizer(p, n, &t, &at);
    if (!st)
        st = read_pipeline(p, n, &t, &at);
    return st ? st : mrt_ir_set_train_at(p->ir, &t, &at, p->err);
}

mrt_status mrt_spec_parse_train(mrt_spec_parser *p, const yaml_node_t *n)
{
    train_list pl = {0}, gl = {0};
    mrt_status st = read_train(p, n, &pl, &gl);
    list_free(&pl);
    list_free(&gl);
    return st;
}
