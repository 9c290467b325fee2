/*
 * search_rules.h — private to search/: the pieces of the search over
 * global layout rules (`meshrt search`, meshrt.h's
 * mrt_search_rules_create) that the per-tensor search and the public
 * calls share.
 *
 * A candidate is one set of global rules for the program: every dim that
 * some tensor takes from the global rules maps to an ordered list of mesh
 * axes of size > 1, each axis on at most one dim (so no tensor can split
 * an axis twice), every split even; dims it leaves out are replicated.
 * Tensors with their own `layout:` keep it, so dims that only they have
 * are not searched (their rule would change nothing).
 *
 * Each candidate gets a cheap lower bound on its modeled time and on its
 * peak memory (search_bound.h), is visited in order of its time bound,
 * and is planned (mrt_spec_derive + mrt_plan_create) only if the bounds
 * say it could still enter the K best under the memory cap or the
 * time-versus-memory Pareto front.  What is pruned is provably out of
 * both, so the results equal those of planning everything.  Results are
 * deterministic: ties go to the earlier candidate in enumeration order.
 * Candidates that differ only in the order of the axes of some dims and
 * have the very same figures count as one entry of either list.
 *
 *   rules_enum.c     the candidates, in a fixed order
 *   search_bound.c   their bounds
 *   search_rules.c   the driver: bound, order, plan, report
 *   rules_front.c    the K best and the Pareto front as they grow
 *   rules_screen.c   screening, for searches too big to plan exactly
 *   rules_show.c     rules as text, and as meshrt.h's mrt_search_axes
 *   search_tensors.c the per-tensor search, over the rules search
 */
#ifndef MRT_SEARCH_RULES_H
#define MRT_SEARCH_RULES_H

#include <stdint.h>
#include <stdio.h>

#include "meshrt.h"
#include "spec.h"

/* Calls visit for every candidate set of rules of s ([s->ndims] rules,
 * valid during the call, marks zero) in a fixed order: axes in mesh
 * order, each first unused, then on each searched dim in dim order, at
 * each position of that dim's list from the last (so [data, model] comes
 * before [model, data]).  all_dims: every dim that some tensor has is
 * searched (Mesh-TF's planner, where every tensor follows the rules).
 * Stops when visit returns nonzero and returns that value; 0 after the
 * last, -1 when out of memory. */
int mrt_rules_enumerate(const mrt_spec *s, int all_dims,
                        int (*visit)(void *ctx, const mrt_rule *rules),
                        void *ctx);
/* 1 if dim d is searched: some tensor takes it from the global rules
 * (all_dims: some tensor has it). */
int mrt_rules_dim_searched(const mrt_spec *s, int all_dims, int d);

/* "batch: data, d_ff: [model, pipe]", or "(all replicated)". */
char *mrt_rules_str(const mrt_spec *s, const mrt_rule *rules, char *buf,
                    int size);
/* The rules as a `layout:` block to paste into a spec:
 * "layout:\n  batch: data\n  d_ff: [model, pipe]\n" ("layout: {}\n" when
 * every dim is replicated). */
void mrt_rules_print_yaml(const mrt_spec *s, const mrt_rule *rules, FILE *f);
/* n rules as meshrt.h's axes lists, and back (marks zero). */
void mrt_rules_to_axes(const mrt_rule *r, int n, mrt_search_axes *out);
void mrt_rules_from_axes(const mrt_search_axes *a, int n, mrt_rule *out);

/* Orders plans' totals by modeled time, then peak memory: < 0, 0 (the
 * very same figures) or > 0.  Both searches rank results so. */
int mrt_rules_cmp_totals(const mrt_plan_totals *a, const mrt_plan_totals *b);
/* 1 if a is off the time-versus-memory front because of b: b is faster
 * and no larger, or as fast and smaller. */
int mrt_rules_dominated(const mrt_plan_totals *a, const mrt_plan_totals *b);

#endif
