/*
 * spec_train.c — the `train:` section of a YAML spec:
 *
 *   train: {loss: L, params: [w1, w2], lr: 0.01, steps: 5, grads: [x]}
 *
 * checked against the program read so far (L a scalar made by an op;
 * params and grads inputs, each once), then handed to reverse mode
 * (ir/grad.c), which appends the backward program and the updates.
 */
#include <stdio.h>
#include <string.h>

#include "spec_parse.h"

static const char *const train_keys[] = {"loss", "params", "lr", "steps",
                                         "grads", NULL};

/* A list of input tensors (`params:` or `grads:`) into ids[]. */
static mrt_status tensor_list(mrt_spec_parser *p, const yaml_node_t *n,
                              const char *what, int ids[], mrt_mark marks[],
                              int *count)
{
    const mrt_spec *s = p->spec;
    char of[64], q[MRT_SPEC_QUOTE_MAX + 32];
    snprintf(of, sizeof of, "'%s' of 'train'", what);
    mrt_status st = mrt_spec_expect(p, n, YAML_SEQUENCE_NODE, of);
    if (st)
        return st;
    if (mrt_spec_count(n) > MRT_MAX_PARAMS)
        return mrt_spec_fail(p, n, "%s lists %d tensors (at most %d)", of,
                             mrt_spec_count(n), MRT_MAX_PARAMS);
    *count = 0;
    for (int j = 0; j < mrt_spec_count(n); j++) {
        const yaml_node_t *it = mrt_spec_item(p, n, j);
        const char *name = mrt_spec_str(it);
        int id = name && !mrt_spec_is_null(it) ? mrt_spec_find_tensor(s, name)
                                               : -1;
        if (id < 0)
            return mrt_spec_fail(p, it, "unknown tensor %s in %s",
                                 mrt_spec_what(it, q, sizeof q), of);
        if (s->tensor[id].producer >= 0)
            return mrt_spec_fail(p, it, "'%s' in %s is made by op %d; only "
                                 "inputs (under 'tensors') can be trained",
                                 name, of, s->op[s->tensor[id].producer].user);
        for (int k = 0; k < *count; k++)
            if (ids[k] == id)
                return mrt_spec_fail(p, it, "'%s' is listed twice in %s",
                                     name, of);
        marks[*count] = mrt_spec_mark(it);
        ids[(*count)++] = id;
    }
    return MRT_OK;
}

mrt_status mrt_spec_parse_train(mrt_spec_parser *p, const yaml_node_t *n)
{
    mrt_spec *s = p->spec;
    mrt_train *tr = &s->train;
    char q[MRT_SPEC_QUOTE_MAX + 32];
    mrt_status st = mrt_spec_expect(p, n, YAML_MAPPING_NODE, "'train'");
    if (!st)
        st = mrt_spec_check_keys(p, n, train_keys, "'train'");
    if (!st && !mrt_spec_get(p, n, "loss"))
        st = mrt_spec_fail(p, n, "'train' needs 'loss' and 'params'");
    if (!st && !mrt_spec_get(p, n, "params"))
        st = mrt_spec_fail(p, n, "'train' needs 'loss' and 'params'");
    if (st)
        return st;
    tr->mark = mrt_spec_mark(n);
    const yaml_node_t *loss = mrt_spec_get(p, n, "loss");
    tr->loss_mark = mrt_spec_mark(loss);
    const char *name = mrt_spec_str(loss);
    tr->loss = name && !mrt_spec_is_null(loss) ? mrt_spec_find_tensor(s, name)
                                               : -1;
    if (tr->loss < 0)
        return mrt_spec_fail(p, loss, "unknown tensor %s as the loss",
                             mrt_spec_what(loss, q, sizeof q));
    if (s->tensor[tr->loss].layout.ndims != 0)
        return mrt_spec_fail(p, loss, "the loss '%s' has %d dims; it must be "
                             "a scalar (reduce it, or use mse or "
                             "softmax_cross_entropy)", name,
                             s->tensor[tr->loss].layout.ndims);
    if (s->tensor[tr->loss].producer < 0)
        return mrt_spec_fail(p, loss, "the loss '%s' is an input; it must be "
                             "made by an op", name);
    if ((st = tensor_list(p, mrt_spec_get(p, n, "params"), "params",
                          tr->param, tr->param_mark, &tr->nparams)))
        return st;
    if (mrt_spec_get(p, n, "grads") &&
        (st = tensor_list(p, mrt_spec_get(p, n, "grads"), "grads", tr->extra,
                          tr->extra_mark, &tr->nextra)))
        return st;
    tr->lr = 0.01;
    tr->steps = 1;
    const yaml_node_t *lr = mrt_spec_get(p, n, "lr");
    if (lr && ((st = mrt_spec_positive(p, lr, "the 'lr' of 'train'",
                                       &tr->lr)) ||
               (st = mrt_spec_fits_dtype(p, lr, "the 'lr' of 'train'",
                                         tr->lr))))
        return st;
    if (mrt_spec_get(p, n, "steps") &&
        (st = mrt_spec_count_max(p, mrt_spec_get(p, n, "steps"),
                                 "the 'steps' of 'train'",
                                 MRT_TRAIN_STEPS_MAX, &tr->steps)))
        return st;
    return mrt_ir_grad(s, p->err);
}
