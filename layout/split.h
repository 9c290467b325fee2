/*
 * split.h — the one rule for which splits of a dim over mesh axes are
 * supported: a dim of `size` elements cut into `parts` blocks.
 *
 * The loader (mrt_spec_check_even), the search's enumeration of rules
 * (ops/search_rules.c) and its bounds' execution layouts
 * (ops/search_bound.c) all ask this one function, so when uneven shards
 * are supported end to end, changing it here lets `meshrt search` weigh
 * non-divisible splits too, behind the very check the planner uses.
 * The bounds stay bounds for uneven splits: they take size / parts
 * rounded down, at most the largest block.
 */
#ifndef MRT_SPLIT_H
#define MRT_SPLIT_H

#include <stdint.h>

/* 1 if a dim of size elements may be split into parts blocks (today:
 * evenly, parts divides size). */
static inline int mrt_split_ok(int64_t size, int64_t parts)
{
    return parts > 0 && size % parts == 0;
}

#endif
