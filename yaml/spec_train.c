/*
 * spec_train.c — the `train:` section of a YAML spec:
 *
 *   train: {loss: L, params: [w1, w2], lr: 0.01, steps: 5, grads: [x]}
 *
 * read here and handed to the builder (mrt_ir_set_train_at), which
 * checks it against the program so far (L a scalar made by an op;
 * params and grads inputs, each once) and runs reverse mode (ir/grad.c):
 * the backward program and the updates.
 */
#include <stdio.h>
#include <string.h>

#include "spec_parse.h"

static const char *const train_keys[] = {"loss",  "params", "lr",
                                         "steps", "grads",  NULL};

/* Room for how the file wrote each name of a list. */
typedef char mrt_spec_how[MRT_SPEC_QUOTE_MAX + 32];

/* A list of tensors (`params:` or `grads:`) read for the builder: names
 * (NULL where an item is no name: the builder then calls it unknown,
 * as the file wrote it), their marks and how they were written. */
static mrt_status read_list(mrt_spec_parser *p, const yaml_node_t *n,
                            const char *what, const char **names,
                            mrt_mark *marks, mrt_spec_how *how,
                            const char **hows, int *count)
{
    char of[64];
    snprintf(of, sizeof of, "'%s' of 'train'", what);
    mrt_status st = mrt_spec_expect(p, n, YAML_SEQUENCE_NODE, of);
    if (st)
        return st;
    *count = mrt_spec_count(n);
    for (int j = 0; *count <= MRT_MAX_PARAMS && j < *count; j++) {
        const yaml_node_t *it = mrt_spec_item(p, n, j);
        names[j] = mrt_spec_is_null(it) ? NULL : mrt_spec_str(it);
        marks[j] = mrt_spec_mark(it);
        hows[j] = mrt_spec_what(it, how[j], sizeof how[j]);
    }
    return MRT_OK;
}

mrt_status mrt_spec_parse_train(mrt_spec_parser *p, const yaml_node_t *n)
{
    const char *params[MRT_MAX_PARAMS], *grads[MRT_MAX_PARAMS];
    const char *param_how[MRT_MAX_PARAMS], *grad_how[MRT_MAX_PARAMS];
    mrt_mark param_mark[MRT_MAX_PARAMS], grad_mark[MRT_MAX_PARAMS];
    mrt_spec_how how[2 * MRT_MAX_PARAMS + 1];
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
    mrt_ir_train t = {.loss = mrt_spec_is_null(loss) ? NULL
                                                     : mrt_spec_str(loss),
                      .params = params,
                      .grads = grads};
    mrt_ir_train_at at = {.mark = mrt_spec_mark(n),
                          .loss_mark = mrt_spec_mark(loss),
                          .params_mark = mrt_spec_mark(pn),
                          .grads_mark = mrt_spec_mark(gn),
                          .param_mark = param_mark,
                          .grad_mark = grad_mark,
                          .loss_what = mrt_spec_what(
                              loss, how[2 * MRT_MAX_PARAMS], sizeof how[0]),
                          .param_what = param_how,
                          .grad_what = grad_how,
                          .lr_mark = mrt_spec_mark(lr)};
    const char *all = pn->type == YAML_SCALAR_NODE ? mrt_spec_str(pn) : NULL;
    if (all && !strcmp(all, "all")) { /* every input with an init */
        params[0] = all;
        param_mark[0] = mrt_spec_mark(pn);
        param_how[0] = "'all'";
        t.nparams = 1;
    } else
        st = read_list(p, pn, "params", params, param_mark, how, param_how,
                       &t.nparams);
    if (!st && gn)
        st = read_list(p, gn, "grads", grads, grad_mark, how + MRT_MAX_PARAMS,
                       grad_how, &t.ngrads);
    if (!st && lr) {
        st = mrt_spec_positive(p, lr, "the 'lr' of 'train'", &t.lr);
        if (!st) /* a number, so a scalar */
            at.lr_text = (const char *)lr->data.scalar.value;
    }
    if (!st && steps)
        st = mrt_spec_count_max(p, steps, "the 'steps' of 'train'",
                                MRT_TRAIN_STEPS_MAX, &t.steps);
    return st ? st : mrt_ir_set_train_at(p->ir, &t, &at, p->err);
}
