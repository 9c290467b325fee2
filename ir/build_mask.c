/*
 * build_mask.c — the builder's checks of the masks (meshrt.h): softmax's
 * `causal: [query, key]` (two distinct dims of its input, the key dim
 * the one the softmax runs over), a tensor's `init: {causal: [query,
 * key]}` (two distinct dims of its shape), and dropout's `p` (0 <= p <
 * 1) and seed (default: the FNV-1a hash of the op's out name, as for a
 * tensor's random seed).  The YAML front end only reads the keys; both
 * front ends get these checks, the file's at the key's position.
 */
#include <stdio.h>
#include <string.h>

#include "build.h"
#include "init.h"

/* Dim `name` (written at `at`) of layout l, owned by tensor `owner`,
 * into *id; of says what names it ("'causal' of op 3"). */
static mrt_status mask_dim(mrt_ir_call *c, const char *of, const char *name,
                           const mrt_mark *at, const char *owner,
                           const mrt_layout *l, int *id)
{
    const mrt_spec *s = c->ir->s;
    char q[MRT_SPEC_QUOTE_MAX + 8], list[MRT_SPEC_LIST_MAX];
    mrt_ir_at(c, "causal", at);
    if (!name)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "%s needs two dims (the query dim, then the key "
                           "dim)",
                           of);
    *id = mrt_spec_find_dim(s, name);
    if (*id < 0)
        return mrt_ir_fail(
            c, MRT_E_SPEC, "unknown dim '%s' in %s (the dims are: %s)",
            mrt_ir_quote(name, q, sizeof q), of,
            mrt_spec_join(list, sizeof list, s->dim_name ? s->dim_name[0] : "",
                          sizeof s->dim_name[0], s->ndims));
    if (mrt_layout_find_dim(l, *id) < 0)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "dim '%s' in %s is not a dim of '%s' %s", name, of,
                           owner, mrt_spec_shape_str(s, l, list, sizeof list));
    return MRT_OK;
}

/* The two dims of a causal mask: names[0..2) (n as written; marks may
 * be NULL), distinct dims of l (tensor `owner`), into ids. */
static mrt_status mask_dims(mrt_ir_call *c, const char *of, int n,
                            const char *const names[2], const mrt_mark *marks,
                            const mrt_mark *list_mark, const char *owner,
                            const mrt_layout *l, int ids[2])
{
    mrt_ir_at(c, "causal", list_mark);
    if (mrt_ir_yaml(c) && n != 2)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "%s names %d dim%s (it takes two: the query dim, "
                           "then the key dim)",
                           of, n, n == 1 ? "" : "s");
    for (int j = 0; j < 2; j++) {
        mrt_status st = mask_dim(c, of, names[j], marks ? &marks[j] : NULL,
                                 owner, l, &ids[j]);
        if (st)
            return st;
    }
    if (ids[0] != ids[1])
        return MRT_OK;
    mrt_ir_at(c, "causal", marks ? &marks[1] : NULL);
    return mrt_ir_fail(c, MRT_E_SPEC,
                       "%s names dim '%s' twice (it takes the query dim, "
                       "then the key dim: two different dims)",
                       of, names[1]);
}

mrt_status mrt_ir_check_causal_op(mrt_ir_call *c, const mrt_ir_op *o,
                                  const mrt_ir_op_at *at, mrt_user_op *u)
{
    const mrt_spec *s = c->ir->s;
    const mrt_spec_tensor *x = &s->tensor[u->in[0]];
    char of[48];
    u->causal[0] = u->causal[1] = -1;
    if (!o->causal[0] && !o->causal[1] && !at->causal_given)
        return MRT_OK;
    if (mrt_ir_yaml(c))
        snprintf(of, sizeof of, "'causal' of op %d", u->number);
    else
        snprintf(of, sizeof of, "causal");
    int ids[2];
    mrt_status st = mask_dims(c, of, at->causal_given ? at->ncausal : 2,
                              o->causal,
                              at->causal_given ? at->causal_dim_mark : NULL,
                              &at->causal_mark, x->name, &x->layout, ids);
    if (st)
        return st;
    if (ids[1] != u->dim) {
        mrt_ir_at(c, "causal",
                  at->causal_given ? &at->causal_dim_mark[1] : NULL);
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "the key dim of %s (its second) must be the "
                           "softmax's dim '%s', not '%s'",
                           of, s->dim_name[u->dim], o->causal[1]);
    }
    u->causal[0] = ids[0];
    u->causal[1] = ids[1];
    return MRT_OK;
}

mrt_status mrt_ir_check_dropout(mrt_ir_call *c, const mrt_ir_op *o,
                                const mrt_ir_op_at *at, mrt_user_op *u)
{
    char q[MRT_SPEC_QUOTE_MAX + 8];
    double p = o->p;
    mrt_ir_at(c, "p", at->p_given ? &at->p_mark : NULL);
    if (!(p >= 0 && p < 1))
        return mrt_ir_yaml(c)
                   ? mrt_ir_fail(c, MRT_E_SPEC,
                                 "'p' of op %d (dropout) is %s; it must be "
                                 "at least 0 and less than 1 (the "
                                 "probability of dropping an element)",
                                 u->number,
                                 mrt_ir_quote(at->p_text ? at->p_text : "?", q,
                                              sizeof q))
                   : mrt_ir_fail(c, MRT_E_SPEC,
                                 "p is %g; dropout takes 0 <= p < 1", p);
    u->c = p;
    u->seed = o->seeded ? o->seed
                        : mrt_init_seed_from_name(o->out ? o->out : "");
    return MRT_OK;
}

mrt_status mrt_ir_check_causal_init(mrt_ir_call *c, const mrt_ir_tensor *d,
                                    const mrt_ir_tensor_at *at,
                                    mrt_spec_tensor *t)
{
    char of[MRT_NAME_MAX + 48];
    if (mrt_ir_yaml(c))
        snprintf(of, sizeof of, "the causal init of tensor '%s'", t->name);
    else
        snprintf(of, sizeof of, "causal");
    t->init = MRT_INIT_CAUSAL;
    return mask_dims(c, of, at->ncausal, d->causal,
                     at->ncausal ? at->causal_dim_mark : NULL, &at->value_mark,
                     t->name, &t->layout, t->mask_dim);
}
