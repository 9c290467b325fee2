/*
 * search_api.c — meshrt.h's "searching layouts": the rules search
 * (ops/search_rules.c) and the per-tensor search (search_params.c)
 * behind create/destroy, their reports copied into plain data whose
 * rules are meshrt.h's mrt_search_axes, and the two ways a set of rules
 * is shown (one line; a `layout:` block to paste).  What `meshrt search`
 * prints; a program may search the same way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planning.h"
#include "search_params.h"
#include "search_rules.h"
#include "spec.h"

_Static_assert(MRT_SEARCH_MAX_COMBOS == MRT_PARAMS_MAX_COMBOS,
               "the public cap is the search's");
_Static_assert(MRT_SEARCH_MAX_TENSORS == MRT_MAX_PARAMS,
               "the public count of tensors is the search's");

static void to_axes(const mrt_rule *r, int n, mrt_search_axes *out)
{
    for (int d = 0; d < n; d++) {
        memset(&out[d], 0, sizeof out[d]);
        out[d].naxes = r[d].naxes;
        memcpy(out[d].axis, r[d].axes, (size_t)r[d].naxes * sizeof(int));
    }
}

static void to_rules(const mrt_search_axes *a, int n, mrt_rule *out)
{
    memset(out, 0, (size_t)n * sizeof *out);
    for (int d = 0; d < n; d++) {
        int k = a[d].naxes < MRT_MAX_AXES ? a[d].naxes : MRT_MAX_AXES;
        out[d].naxes = k < 0 ? 0 : k;
        memcpy(out[d].axes, a[d].axis, (size_t)out[d].naxes * sizeof(int));
    }
}

static mrt_rules_options rules_options(const mrt_search_options *o)
{
    mrt_rules_options r = {0};
    if (o)
        r = (mrt_rules_options){.plan = o->plan, .top = o->top,
                                .max_memory = o->max_memory,
                                .exhaustive = o->exhaustive,
                                .screen = o->screen};
    r.plan.explain = 0;
    return r;
}

/* The profile's name as the planner reports it. */
static void profile_name(const mrt_spec *s, const mrt_plan_options *opt,
                         char *buf, size_t size)
{
    mrt_plan *p = NULL;
    snprintf(buf, size, "%s", opt->profile ? opt->profile : "default");
    if (mrt_plan_create_with(s, opt, MRT_STRATEGY_RULES, &p, NULL) == MRT_OK)
        snprintf(buf, size, "%s", p->profile.source);
    mrt_plan_destroy(p);
}

/* ---- the rules search ---- */

static mrt_status copy_rules_items(const mrt_rules_result *in, int n,
                                   int ndims, mrt_search_rules_item **out)
{
    *out = calloc((size_t)n + 1, sizeof **out);
    if (!*out)
        return MRT_E_NOMEM;
    for (int i = 0; i < n; i++) {
        mrt_search_rules_item *x = &(*out)[i];
        x->rule = calloc((size_t)ndims + 1, sizeof *x->rule);
        if (!x->rule)
            return MRT_E_NOMEM;
        to_axes(in[i].rule, ndims, x->rule);
        x->totals = in[i].totals;
        x->bound_s = in[i].bound_s;
        x->index = in[i].index;
        x->orders = in[i].orders;
    }
    return MRT_OK;
}

static void free_rules_items(mrt_search_rules_item *x, int n)
{
    for (int i = 0; x && i < n; i++)
        free(x[i].rule);
    free(x);
}

void mrt_search_rules_destroy(mrt_search_rules_report *r)
{
    if (!r)
        return;
    free(r->searched);
    free_rules_items(r->top, r->ntop);
    free_rules_items(r->pareto, r->npareto);
    free(r);
}

/* The figures a public report copies from the search's own, field by
 * field under the same name (the public structs of meshrt.h mirror the
 * internal ones of ops/search_rules.h and search/search_params.h, whose
 * result items hold internal rule types and are converted apart). */
#define COPY_FIGURE(f) r->f = in->f;
#define RULES_FIGURES(X)                                                    \
    X(nsearched) X(enumerated) X(invalid) X(pruned_time) X(pruned_memory)   \
    X(planned) X(over_memory) X(screened) X(screen_plans) X(not_replanned)  \
    X(replan_each) X(bound_seconds) X(plan_seconds) X(elapsed_seconds)      \
    X(has_spec) X(spec_totals) X(ntop) X(npareto)
#define TENSORS_FIGURES(X)                                                  \
    X(nacts) X(nleft) X(combos) X(failed) X(enumerated) X(planned)          \
    X(invalid) X(pruned) X(over_memory) X(screened) X(ntop) X(npareto)

mrt_status mrt_search_rules_create(const mrt_spec *s,
                                   const mrt_search_options *opt,
                                   mrt_search_rules_report **out,
                                   mrt_error *err)
{
    *out = NULL;
    mrt_rules_options o = rules_options(opt);
    mrt_rules_report *in = NULL;
    mrt_status st = mrt_search_rules(s, &o, &in, err);
    if (st)
        return st;
    mrt_search_rules_report *r = calloc(1, sizeof *r);
    if (!r || !(r->searched = calloc((size_t)s->ndims + 1, 1)))
        goto nomem;
    r->ndims = s->ndims;
    for (int d = 0; d < s->ndims; d++)
        r->searched[d] = o.plan.planner == MRT_PLANNER_MESHTF ||
                         mrt_rules_dim_searched(s, d);
    RULES_FIGURES(COPY_FIGURE)
    snprintf(r->first_error, sizeof r->first_error, "%s", in->first_error);
    if (copy_rules_items(in->top, in->ntop, s->ndims, &r->top) ||
        copy_rules_items(in->pareto, in->npareto, s->ndims, &r->pareto))
        goto nomem;
    profile_name(s, &o.plan, r->profile, sizeof r->profile);
    mrt_rules_report_destroy(in);
    *out = r;
    return MRT_OK;
nomem:
    mrt_rules_report_destroy(in);
    mrt_search_rules_destroy(r);
    return mrt_error_set(err, MRT_E_NOMEM, s->path, (mrt_mark){0},
                         "out of memory while searching layouts");
}

/* ---- the per-tensor search ---- */

static mrt_status copy_tensors_items(const mrt_params_result *in, int n,
                                     int ndims, int np,
                                     mrt_search_tensors_item **out)
{
    *out = calloc((size_t)n + 1, sizeof **out);
    if (!*out)
        return MRT_E_NOMEM;
    for (int i = 0; i < n; i++) {
        mrt_search_tensors_item *x = &(*out)[i];
        x->rule = calloc((size_t)ndims + 1, sizeof *x->rule);
        x->own = calloc((size_t)np * (size_t)ndims + 1, sizeof *x->own);
        x->follows = calloc((size_t)np + 1, 1);
        if (!x->rule || !x->own || !x->follows)
            return MRT_E_NOMEM;
        to_axes(in[i].rule, ndims, x->rule);
        to_axes(in[i].own, np * ndims, x->own);
        memcpy(x->follows, in[i].follows, (size_t)np);
        x->totals = in[i].totals;
        x->combo = in[i].combo;
        x->index = in[i].index;
    }
    return MRT_OK;
}

static void free_tensors_items(mrt_search_tensors_item *x, int n)
{
    for (int i = 0; x && i < n; i++) {
        free(x[i].rule);
        free(x[i].own);
        free(x[i].follows);
    }
    free(x);
}

void mrt_search_tensors_destroy(mrt_search_tensors_report *r)
{
    if (!r)
        return;
    free_tensors_items(r->top, r->ntop);
    free_tensors_items(r->pareto, r->npareto);
    free(r);
}

mrt_status mrt_search_tensors_create(const mrt_spec *s,
                                     const mrt_spec_overrides *ov,
                                     const mrt_search_options *opt,
                                     mrt_search_tensors_report **out,
                                     mrt_error *err)
{
    *out = NULL;
    mrt_rules_options o = rules_options(opt);
    mrt_params_report *in = NULL;
    mrt_status st = mrt_search_params(s, ov, opt ? opt->activations : NULL,
                                      &o, &in, err);
    if (st)
        return st;
    mrt_search_tensors_report *r = calloc(1, sizeof *r);
    if (!r)
        goto nomem;
    r->ndims = in->ndims;
    r->ntensors = in->nparams;
    memcpy(r->tensor, in->param, sizeof r->tensor);
    memcpy(r->left, in->left, sizeof r->left);
    TENSORS_FIGURES(COPY_FIGURE)
    snprintf(r->first_error, sizeof r->first_error, "%s", in->first_error);
    if (copy_tensors_items(in->top, in->ntop, in->ndims, in->nparams,
                           &r->top) ||
        copy_tensors_items(in->pareto, in->npareto, in->ndims, in->nparams,
                           &r->pareto))
        goto nomem;
    mrt_params_report_destroy(in);
    *out = r;
    return MRT_OK;
nomem:
    mrt_params_report_destroy(in);
    mrt_search_tensors_destroy(r);
    return mrt_error_set(err, MRT_E_NOMEM, s->path, (mrt_mark){0},
                         "out of memory while searching layouts");
}

/* ---- showing rules ---- */

char *mrt_search_format_rules(const mrt_spec *s, const mrt_search_axes *a,
                              char *buf, size_t size)
{
    mrt_rule *r = calloc((size_t)s->ndims + 1, sizeof *r);
    if (!r) {
        snprintf(buf, size, "(out of memory)");
        return buf;
    }
    to_rules(a, s->ndims, r);
    mrt_rules_str(s, r, buf, size > 1 << 30 ? 1 << 30 : (int)size);
    free(r);
    return buf;
}

void mrt_search_write_layout(const mrt_spec *s, const mrt_search_axes *a,
                             FILE *f)
{
    mrt_rule *r = calloc((size_t)s->ndims + 1, sizeof *r);
    if (!r)
        return;
    to_rules(a, s->ndims, r);
    mrt_rules_print_yaml(s, r, f);
    free(r);
}
