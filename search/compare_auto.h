/*
 * compare_auto.h — beside a pinned row of a comparison, the auto
 * planner's plan of the same program and how it departs (compare_auto.c).
 */
#ifndef MRT_COMPARE_AUTO_H
#define MRT_COMPARE_AUTO_H

#include "plan.h"
#include "spec.h"

/* Plans s (whose pinned plan is `pinned`) with the auto planner and
 * fills row's auto_ok, auto_totals and auto_moves.  A plan that fails
 * leaves auto_ok 0; fails only when out of memory (MRT_E_NOMEM). */
mrt_status mrt_compare_auto(mrt_compare_row *row, const mrt_spec *s,
                            const mrt_plan *pinned,
                            const mrt_plan_options *opt);

#endif
