/*
 * split.h — which splits of a dim over mesh axes `meshrt search` weighs:
 * a dim of `size` elements cut into `parts` blocks.
 *
 * The loader and the planner accept every split (uneven ones too:
 * layout.h's block rule).  The search's enumeration of rules
 * (search/search_rules.c) and its bounds' execution layouts
 * (search/search_bound.c) ask this one function; the brute force that
 * checks the search (tests/unit/test_search.c, meshrt.h only) keeps a copy
 * of it, which must change with it.  They weigh every split whose
 * blocks all hold something; a dim smaller than its parts leaves
 * ranks empty-handed and only adds candidates.  The bounds stay bounds
 * for uneven splits: they take size / parts rounded down, at most the
 * largest block.
 */
#ifndef MRT_SPLIT_H
#define MRT_SPLIT_H

#include <stdint.h>

/* 1 if the search may split a dim of size elements into parts blocks:
 * every block holds at least one element. */
static inline int mrt_split_ok(int64_t size, int64_t parts)
{
    return parts > 0 && size >= parts;
}

#endif
