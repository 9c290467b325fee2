/*
 * search_bound.h — lower bounds on the modeled time and the peak memory
 * of any plan of a program under a set of global rules (search_bound.c
 * says why they are bounds, for every lowering the planners may pick):
 * what lets the rules search skip candidates unplanned.
 */
#ifndef MRT_SEARCH_BOUND_H
#define MRT_SEARCH_BOUND_H

#include <stdint.h>

#include "profile.h"
#include "spec.h"

typedef struct mrt_rules_bounds mrt_rules_bounds;
/* Works out, once, what the bounds of every candidate of s share: each
 * op's dims and the kernel time of its every execution layout under
 * prof (the profile its plans use).  meshtf: homes come from the rules
 * alone, as Mesh-TF has no per-tensor layouts.  NULL when out of
 * memory; the caller destroys it (NULL allowed). */
mrt_rules_bounds *mrt_rules_bounds_create(const mrt_spec *s,
                                          const mrt_profile *prof, int meshtf);
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
