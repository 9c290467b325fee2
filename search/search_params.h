/*
 * search_params.h — `meshrt search --per-tensor`: the search over global
 * rules (search_rules.h) widened to a layout of its own for each
 * parameter (the `train:` params; without `train:`, every input).
 *
 * Each parameter either keeps what the spec gives it (the global rules,
 * or the `layout:` of its entry) or has a layout of its own, in place
 * of that: every mesh axis of size > 1 on none or one of its dims (axes on
 * a dim in mesh order), every split one the planner takes
 * (mrt_split_ok).  For every combination of those choices the spec is
 * loaded again with them, as if each chosen layout were written in the
 * parameter's `layout:` (mrt_spec_load_layouts: its gradient and update
 * then follow it, exactly as in the spec one pastes), and the global
 * rules are searched on it with mrt_search_rules.  The K best and the
 * Pareto front of the whole space are merged from those of each
 * combination, which is exact: a layout among the K best overall is
 * among the K best of its combination, and one on the overall front is
 * on its combination's front.  --exhaustive plans every candidate of
 * every combination.  Equal candidates (a parameter given by its own
 * layout exactly what the rules give it, same figures) count once.
 *
 * Activations (op results) named in `acts` ("h,r", or "all") are
 * searched the same way after the parameters: each either follows the
 * rules (or its op's `layout:`) or has a layout of its own, loaded as if
 * written in its op's `layout:`.  With "all", op results are taken in
 * op order while the combinations stay within MRT_PARAMS_MAX_COMBOS; the
 * rest are listed in `left` (the cap cut the space).
 */
#ifndef MRT_SEARCH_PARAMS_H
#define MRT_SEARCH_PARAMS_H

#include "search_rules.h"

/* Combinations of per-parameter choices searched at most. */
#define MRT_PARAMS_MAX_COMBOS 4096

typedef struct mrt_params_result {
    mrt_rule *rule;        /* [ndims] global rules */
    mrt_rule *own;         /* [nparams * ndims]: parameter i's own rules */
    unsigned char *follows; /* [nparams]: 1 if it follows the rules */
    mrt_plan_totals totals;
    int64_t combo;         /* the combination, in enumeration order */
    int64_t index;         /* the candidate within it */
} mrt_params_result;

typedef struct mrt_params_report {
    int ndims, nparams;
    int param[MRT_MAX_PARAMS];  /* tensor ids: parameters, then the
                                   activations (from nparams - nacts) */
    int nacts;
    int nleft, left[MRT_MAX_PARAMS]; /* activations the cap left out */
    int64_t combos;             /* combinations of per-parameter choices */
    int64_t failed;             /* combinations whose spec does not load */
    int64_t enumerated, planned, invalid, pruned, over_memory;
    int screened;               /* some combination was screened */
    int ntop;
    mrt_params_result *top;     /* best first */
    int npareto;
    mrt_params_result *pareto;  /* by time */
    char first_error[512];
} mrt_params_report;

/* Searches s (loaded from s->path with overrides ov, which may be NULL)
 * over global rules and per-parameter layouts, and per-activation ones
 * for acts (NULL: none).  Fails for more than MRT_PARAMS_MAX_COMBOS
 * combinations or a name in acts that no op makes (MRT_E_USAGE), out of
 * memory, or what mrt_search_rules fails for.  The caller destroys
 * *out. */
mrt_status mrt_search_params(const mrt_spec *s, const char *acts, const mrt_rules_options *opt,
                             mrt_params_report **out, mrt_error *err);
void mrt_params_report_destroy(mrt_params_report *r);

#endif
