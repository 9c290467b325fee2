/*
 * search_rules.h — the search over global layout rules (`meshrt search`).
 *
 * A candidate is one set of global rules for the program: every dim that
 * some tensor takes from the global rules maps to an ordered list of mesh
 * axes of size > 1, each axis on at most one dim (so no tensor can split
 * an axis twice), every split even; dims it leaves out are replicated.
 * Tensors with their own `layout:` keep it, so dims that only they have
 * are not searched (their rule would change nothing).
 *
 * Each candidate gets a cheap lower bound on its modeled time and on its
 * peak memory (ops/search_rules.c says why they are bounds, for every
 * lowering the planners may pick), is visited in order of its time bound,
 * and is planned (mrt_spec_derive + mrt_plan_create) only if the bounds
 * say it could still enter the K best under the memory cap or the
 * time-versus-memory Pareto front.  What is pruned is provably out of
 * both, so the results equal those of planning everything.  Results are
 * deterministic: ties go to the earlier candidate in enumeration order.
 * Candidates that differ only in the order of the axes of some dims and
 * have the very same figures count as one entry of either list.
 */
#ifndef MRT_SEARCH_RULES_H
#define MRT_SEARCH_RULES_H

#include <stdint.h>
#include <stdio.h>

#include "meshrt.h"
#include "profile.h"
#include "spec.h"

/* Calls visit for every candidate set of rules of s ([s->ndims] rules,
 * valid during the call, marks zero) in a fixed order: axes in mesh
 * order, each first unused, then on each searched dim in dim order, at
 * each position of that dim's list from the last (so [data, model] comes
 * before [model, data]).  Stops when visit returns nonzero and
 * returns that value; 0 after the last. */
int mrt_rules_enumerate(const mrt_spec *s,
                        int (*visit)(void *ctx, const mrt_rule *rules),
                        void *ctx);
/* 1 if dim d is searched: some tensor takes it from the global rules. */
int mrt_rules_dim_searched(const mrt_spec *s, int d);

/* "batch: data, d_ff: [model, pipe]", or "(all replicated)". */
char *mrt_rules_str(const mrt_spec *s, const mrt_rule *rules, char *buf,
                    int size);
/* The rules as a `layout:` block to paste into a spec:
 * "layout:\n  batch: data\n  d_ff: [model, pipe]\n" ("layout: {}\n" when
 * every dim is replicated). */
void mrt_rules_print_yaml(const mrt_spec *s, const mrt_rule *rules, FILE *f);

/* Orders plans' totals by modeled time, then peak memory: < 0, 0 (the
 * very same figures) or > 0.  Both searches rank results so. */
int mrt_rules_cmp_totals(const mrt_plan_totals *a, const mrt_plan_totals *b);
/* 1 if a is off the time-versus-memory front because of b: b is faster
 * and no larger, or as fast and smaller. */
int mrt_rules_dominated(const mrt_plan_totals *a, const mrt_plan_totals *b);

typedef struct mrt_rules_options {
    mrt_plan_options plan; /* planner and profile for every candidate */
    int top;               /* how many of the best to keep; 0: 5 */
    int64_t max_memory;    /* peak memory cap per rank, bytes; <= 0: none */
    int exhaustive;        /* plan every candidate: no pruning, no screen */
    int screen;            /* 0: screen when planning would be slow (see
                              mrt_search_rules); 1: always; -1: never */
} mrt_rules_options;

/* One planned candidate. */
typedef struct mrt_rules_result {
    mrt_rule *rule;         /* [ndims], owned by the report */
    mrt_plan_totals totals;
    double bound_s;         /* its lower bound on the modeled time */
    int64_t index;          /* in enumeration order */
    int orders;             /* other orders of the same axes on the same
                               dims with the very same time and memory,
                               listed as this one */
} mrt_rules_result;

typedef struct mrt_rules_report {
    int ndims;
    int nsearched;          /* dims searched */
    int64_t enumerated;     /* candidates */
    int64_t invalid;        /* derive or planning failed (e.g. meshtf) */
    int64_t pruned_time;    /* skipped: could beat neither the K-th best
                               nor the Pareto front */
    int64_t pruned_memory;  /* skipped: even the memory bound exceeds the
                               cap */
    int64_t planned;        /* with the chosen planner */
    int64_t over_memory;    /* planned, but over the cap */
    int screened;           /* 1: screened with the rules planner first */
    int64_t screen_plans;   /* screened: candidates planned with the rules
                               planner (an upper bound on auto's time) */
    int64_t not_replanned;  /* screened: left out by the screen, although
                               their time bound could not rule them out */
    int replan_each;        /* screened: how many were re-planned from the
                               top of the screen and of the time bound */
    double bound_seconds;   /* spent enumerating and bounding */
    double plan_seconds;    /* spent deriving and planning */
    double elapsed_seconds;
    int has_spec;           /* the spec's own rules planned (not with
                               meshtf on a spec it cannot plan) */
    mrt_plan_totals spec_totals;
    int ntop;
    mrt_rules_result *top;  /* best first: by time, then enumeration */
    int npareto;
    mrt_rules_result *pareto; /* not dominated in (time, peak memory),
                                 by time */
    char first_error[512];  /* the first invalid candidate's message */
} mrt_rules_report;

/* Searches the rules of s.  opt may be NULL (auto planner, default
 * profile, K = 5, no cap).  Fails only for an unusable profile, out of
 * memory, or more than 1000000 candidates.  The caller destroys *out.
 *
 * When planning every candidate the bounds keep would be slow (the auto
 * planner, and candidates times execution layouts per plan above a
 * fixed limit: a 3-axis mesh passes, most 4-axis ones do not), the
 * search screens instead: every candidate is planned with the fixed
 * rule (MRT_STRATEGY_RULES: one lowering per op, and the auto planner
 * never does worse), and only the best of that screen and the lowest
 * time bounds are re-planned with the auto planner.  The K best are then
 * the best of those (exact only if the screen kept the winners), and the
 * front is that of the re-planned candidates.  r->screened says so. */
mrt_status mrt_search_rules(const mrt_spec *s, const mrt_rules_options *opt,
                            mrt_rules_report **out, mrt_error *err);
void mrt_rules_report_destroy(mrt_rules_report *r);

/* ---- the bounds (ops/search_bound.c), for the search ---- */

typedef struct mrt_rules_bounds mrt_rules_bounds;
/* Works out, once, what the bounds of every candidate of s share: each
 * op's dims and the kernel time of its every execution layout under
 * prof (the profile its plans use).  meshtf: homes come from the rules
 * alone, as Mesh-TF has no per-tensor layouts.  NULL when out of
 * memory; the caller destroys it (NULL allowed). */
mrt_rules_bounds *mrt_rules_bounds_create(const mrt_spec *s,
                                          const mrt_profile *prof,
                                          int meshtf);
void mrt_rules_bounds_destroy(mrt_rules_bounds *b);
/* Lower bounds on the modeled time and the peak memory per rank of any
 * plan of s under rules ([ndims]; every split even). */
void mrt_rules_bounds_eval(mrt_rules_bounds *b, const mrt_rule *rules,
                           double *time_s, int64_t *memory);
/* How many execution layouts (cheapest kernel first) the time bound
 * weighs per op; past them it takes the next one's kernel time, a floor
 * for all the rest (default 256: on big meshes an op has thousands, many
 * with the same kernel time).  Fewer: cheaper, looser bounds. */
void mrt_rules_bounds_set_budget(mrt_rules_bounds *b, int execs);
/* The execution layouts of all ops, counted once each (orders of the
 * axes on a dim aside): what the auto planner's search weighs per plan,
 * so a measure of what planning one candidate costs. */
double mrt_rules_bounds_work(const mrt_rules_bounds *b);

#endif
