/*
 * planning_auto.c — the auto planner's choice of strategy: the cheapest
 * lowering of each op (cheapest.c), unless a fixed lowering (the rule,
 * or Mesh-TF's when it plans the same program) is cheaper over the whole
 * program, since the per-op choice is greedy.  The three plans take
 * turns in one set of tables in one planning context (a long program's
 * tables are hundreds of MB, and mapping fresh memory is much of the
 * time): the fixed lowerings are only tallied, then the per-op choice
 * fills the tables; in the rare case a fixed lowering is cheaper, it is
 * built again to be kept.  Only the plan kept is finished.
 */
#include "planning.h"

#include <stdlib.h>

/* 1 if Mesh-TensorFlow's global-rules layouts are the spec's own, so its
 * plan computes the same program and may compete. */
static int meshtf_compatible(const mrt_spec *s)
{
    for (int t = 0; t < s->ntensors; t++) {
        mrt_layout l;
        if (mrt_meshtf_home(s, t, &l, NULL) != MRT_OK ||
            !mrt_layout_equal(&l, &s->tensor[t].layout))
            return 0;
    }
    return 1;
}

/* Rebuilds the plan of strategy `keep` (a fixed lowering found cheaper
 * than the cheapest-per-op one) in the tables of `costed`, which it
 * destroys; the alternatives costed per op stay with the plan shown. */
static mrt_status rebuild(mrt_planning *pl, mrt_strategy keep, mrt_plan *costed,
                          mrt_plan **out, mrt_error *err)
{
    int *alts = malloc(2 * ((size_t)costed->nops + 1) * sizeof *alts);
    if (!alts) {
        mrt_plan_destroy(costed);
        return mrt_planning_nomem(pl->spec, err);
    }
    for (int i = 0; i < costed->nops; i++) {
        alts[2 * i] = costed->op[i].first_alt;
        alts[2 * i + 1] = costed->op[i].nalts;
    }
    mrt_alt *alt = costed->alt;
    int nalts = costed->nalts, cap_alts = pl->cap_alts;
    costed->alt = NULL;
    mrt_planning_recycle(pl, costed);
    mrt_status st = mrt_planning_build(pl, keep, 0, out, err);
    if (st == MRT_OK) {
        mrt_plan *p = *out;
        p->alt = alt;
        p->nalts = nalts;
        pl->cap_alts = cap_alts;
        alt = NULL;
        for (int i = 0; i < p->nops; i++) {
            p->op[i].first_alt = alts[2 * i];
            p->op[i].nalts = alts[2 * i + 1];
        }
    }
    free(alt);
    free(alts);
    return st;
}

/* The fixed lowerings, tallied: the rule's time (*t_rules) and, when it
 * may compete, Mesh-TF's (*t_meshtf, *have_meshtf); their tables are left
 * to the next build.  Returns the rule's status (its error in *err). */
static mrt_status tally_fixed(mrt_planning *pl, double *t_rules,
                              double *t_meshtf, int *have_meshtf,
                              mrt_error *err)
{
    mrt_plan *fixed = NULL;
    mrt_status st = mrt_planning_build(pl, MRT_STRATEGY_RULES, 0, &fixed, err);
    if (st != MRT_OK)
        return st;
    *t_rules = fixed->totals.time_s;
    mrt_planning_recycle(pl, fixed);
    if (meshtf_compatible(pl->spec)) {
        mrt_plan *m = NULL;
        *have_meshtf = mrt_planning_build(pl, MRT_STRATEGY_MESHTF, 0, &m,
                                          NULL) == MRT_OK;
        *t_meshtf = *have_meshtf ? m->totals.time_s : 0;
        mrt_planning_recycle(pl, m);
    }
    return MRT_OK;
}

/* Plans s the auto way in pl: the plan kept, finished, in *out. */
static mrt_status plan_auto(mrt_planning *pl, mrt_plan **out, mrt_error *err)
{
    mrt_error rules_err = {0};
    mrt_plan *p = NULL;
    double t_rules = 0, t_meshtf = 0;
    int have_meshtf = 0;
    mrt_status st_rules = tally_fixed(pl, &t_rules, &t_meshtf, &have_meshtf,
                                      &rules_err);
    /* The per-op choice's error is reported before the rule's, as when
     * it was planned first. */
    mrt_status st = mrt_planning_build(pl, MRT_STRATEGY_CHEAPEST, 0, &p, err);
    if (st != MRT_OK)
        return st;
    if (st_rules != MRT_OK) {
        mrt_plan_destroy(p);
        if (err && err->code == MRT_OK)
            *err = rules_err;
        return st_rules;
    }
    /* ties keep the earlier of cheapest, rule, Mesh-TF */
    mrt_strategy keep = MRT_STRATEGY_CHEAPEST;
    double best = p->totals.time_s;
    if (t_rules < best * (1 - 1e-9)) {
        keep = MRT_STRATEGY_RULES;
        best = t_rules;
    }
    if (have_meshtf && t_meshtf < best * (1 - 1e-9))
        keep = MRT_STRATEGY_MESHTF;
    if (keep != MRT_STRATEGY_CHEAPEST &&
        (st = rebuild(pl, keep, p, &p, err)) != MRT_OK)
        return st;
    p->planner = MRT_PLANNER_AUTO;
    p->fell_back = keep != MRT_STRATEGY_CHEAPEST;
    pl->plan = p; /* the kept plan was the last built: its overflow */
    st = mrt_planning_finish(pl, err);
    if (st == MRT_OK)
        st = mrt_planning_overflow_error(pl, err);
    pl->plan = NULL;
    if (st != MRT_OK) {
        mrt_plan_destroy(p);
        return st;
    }
    *out = p;
    return MRT_OK;
}

mrt_status mrt_plan_create(const mrt_spec *s, const mrt_plan_options *opt,
                           mrt_plan **out, mrt_error *err)
{
    mrt_plan_options defaults = {0};
    if (out)
        *out = NULL;
    if (!s || !out)
        return mrt_error_null(err, "mrt_plan_create", !s ? "spec" : "out");
    if (!opt)
        opt = &defaults;
    if (opt->planner < 0 || opt->planner >= MRT_PLANNER_COUNT)
        return mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0, 0},
                             "mrt_plan_create: argument 'opt': planner %d "
                             "is not an mrt_planner (auto, meshtf, rules)",
                             (int)opt->planner);
    if (opt->planner == MRT_PLANNER_MESHTF)
        return mrt_plan_create_with(s, opt, MRT_STRATEGY_MESHTF, out, err);
    if (opt->planner == MRT_PLANNER_RULES || s->pinned) {
        mrt_status st = mrt_plan_create_with(s, opt, MRT_STRATEGY_PINNED, out,
                                             err);
        if (st == MRT_OK)
            (*out)->planner = MRT_PLANNER_RULES;
        return st;
    }
    *out = NULL;
    mrt_planning *pl = mrt_planning_create(s, opt);
    if (!pl)
        return mrt_planning_nomem(s, err);
    mrt_status st = plan_auto(pl, out, err);
    mrt_planning_destroy(pl);
    return st;
}
