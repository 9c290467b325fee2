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
#include "spec.h"

/* Calls visit for every candidate set of rules of s ([s->ndims] rules,
 * valid during the call, marks zero) in a fixed order: axes in mesh
 * order, each first unused, then on each searched dim in dim order and at
 * each position of that dim's list.  Stops when visit returns nonzero and
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

typedef struct mrt_rules_options {
    mrt_plan_options plan; /* planner and profile for every candidate */
    int top;               /* how many of the best to keep; 0: 5 */
    int64_t max_memory;    /* peak memory cap per rank, bytes; <= 0: none */
    int exhaustive;        /* plan every candidate: no pruning */
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
    int64_t planned;
    int64_t over_memory;    /* planned, but over the cap */
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
 * memory, or more than 1000000 candidates.  The caller destroys *out. */
mrt_status mrt_search_rules(const mrt_spec *s, const mrt_rules_options *opt,
                            mrt_rules_report **out, mrt_error *err);
void mrt_rules_report_destroy(mrt_rules_report *r);

#endif
