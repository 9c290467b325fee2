/*
 * rules_driver.h — private to the rules search: the state of one search
 * (search_rules.c makes it), which the K best and the front
 * (rules_front.c) and screening (rules_screen.c) work on.
 */
#ifndef MRT_RULES_DRIVER_H
#define MRT_RULES_DRIVER_H

#include "search_bound.h"
#include "search_rules.h"

#define MRT_RULES_MAX_SHARE 8 /* dims one axis may split in one candidate */

/* A candidate, compactly: where each axis of size > 1 goes. */
typedef struct mrt_rules_cand {
    int64_t index;
    double bound_s;
    int64_t memory; /* its memory bound */
    double upper_s; /* screened: its rules plan's time */
    int replan;     /* screened: to re-plan with auto */
    /* Searched axis k splits the spec dims own[k][0..nown[k]) (no two
     * in one tensor), at place pos[k][i] in each one's rule. */
    unsigned char nown[MRT_MAX_AXES];
    short own[MRT_MAX_AXES][MRT_RULES_MAX_SHARE];
    signed char pos[MRT_MAX_AXES][MRT_RULES_MAX_SHARE];
} mrt_rules_cand;

/* A planned candidate within the cap. */
typedef struct mrt_rules_planned {
    int64_t index;
    double bound_s;
    mrt_plan_totals totals;
    int cand;      /* into the candidate array */
    int orders[2]; /* equivalent orders grouped with it
                                      in the K best, in the front */
} mrt_rules_planned;

typedef struct mrt_rules_driver {
    const mrt_spec *s;
    const mrt_search_options *opt; /* explain off */
    int top;
    mrt_rules_bounds *b;
    int na, ax[MRT_MAX_AXES]; /* the mesh axes of size > 1 */
    int k_of[MRT_MAX_AXES];   /* mesh axis -> its place in ax, or -1 */
    mrt_rules_cand *c;
    int64_t n, cap;
    mrt_status st;
    mrt_search_rules_report *r;
    mrt_rule *rules;        /* [ndims] scratch */
    mrt_rules_planned *res; /* planned within the cap */
    int64_t nres, cap_res;
    int *best; /* the K best so far: indices into res, sorted */
    int nbest;
    int *front; /* the Pareto front so far: indices into res */
    int nfront;
    int64_t max_memory; /* the cap in effect: opt's, else the device
                           memory the plans are made for; 0: none */
} mrt_rules_driver;

/* The rules of candidate c into rules[ndims]. */
void mrt_rules_of(const mrt_rules_driver *dr, const mrt_rules_cand *c,
                  mrt_rule *rules);
/* Derives and plans candidate ci with the planner asked for; files it
 * into the K best and the front.  Fails only when out of memory: a
 * candidate that does not plan is counted as invalid. */
mrt_status mrt_rules_plan_candidate(mrt_rules_driver *dr, int ci);
/* 1 if candidate c's memory bound is over the cap. */
int mrt_rules_over_cap(const mrt_rules_driver *dr, const mrt_rules_cand *c);

/* ---- rules_front.c ---- */

/* Files planned result i into the K best and the front. */
void mrt_rules_file_result(mrt_rules_driver *dr, int i);
/* Whether (time, memory) is beaten in one and matched in the other by
 * a point of the front so far. */
int mrt_rules_front_dominates(const mrt_rules_driver *dr, double time_s,
                              int64_t memory);
/* The K-th best time so far (INFINITY while fewer than K). */
double mrt_rules_kth_time(const mrt_rules_driver *dr);
/* 1 if a and b split the same dims by each axis (orders aside). */
int mrt_rules_same_dims(const mrt_rules_cand *a, const mrt_rules_cand *b);

/* ---- rules_screen.c ---- */

/* The screened search: every candidate planned with the fixed rule,
 * only the best of that (and of the time bound) with the auto planner.
 * Fails only when out of memory. */
mrt_status mrt_rules_run_screened(mrt_rules_driver *dr);

#endif
