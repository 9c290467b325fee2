/*
 * split.h — which splits of a dim over mesh axes `meshrt search` weighs:
 * a dim of `size` elements cut into `parts` blocks.
 *
 * The loader and the planner accept every split (uneven ones too:
 * layout.h's block rule).  The search's enumeration of rules
 * (ops/search_rules.c) and its bounds' execution layouts
 * (ops/search_bound.c) ask this one function, and today it keeps the
 * search to even splits: with uneven ones allowed, the search enumerated
 * candidates its brute-force check (tests/test_search.c) does not find,
 * and that difference is not understood yet.  Widening the search is
 * changing this function once the two agree.
 */
#ifndef MRT_SPLIT_H
#define MRT_SPLIT_H

#include <stdint.h>

/* 1 if the search may split a dim of size elements into parts blocks
 * (today: evenly, parts divides size). */
static inline int mrt_split_ok(int64_t size, int64_t parts)
{
    return parts > 0 && size % parts == 0;
}

#endif
