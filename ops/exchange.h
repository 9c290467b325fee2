/*
 * exchange.h — the geometry of an ALLTOALL_GROUP step (ops/exchange.c):
 * which rank holds which part of a shard before and after a move between
 * two layouts over the same axes.  The runtime reads it to build the
 * step's datatypes; the planner to cost the step and to find the group.
 */
#ifndef MRT_EXCHANGE_H
#define MRT_EXCHANGE_H

#include <stdint.h>

#include "layout.h"
#include "mesh.h"

/* Coordinates of member j of the group over mask that c belongs to. */
void mrt_exchange_member(const mrt_mesh *m, unsigned mask, const int64_t c[],
                         int64_t j, int64_t out[]);
/* The box where the block of the rank at src under layout a meets the
 * block of the rank at dst under b: its extents (ext), where it starts in
 * src's shard (at_src) and in dst's (at_dst); returns its elements (0:
 * the blocks do not meet). */
int64_t mrt_exchange_box(const mrt_layout *a, const mrt_layout *b,
                         const mrt_mesh *m, const int64_t src[],
                         const int64_t dst[], int64_t at_src[],
                         int64_t at_dst[], int64_t ext[]);
/* What an ALLTOALL_GROUP from a to b over axes moves, for its cost: the
 * most elements a rank sends to others (returned) and the most peers a
 * rank sends to (*peers). */
int64_t mrt_exchange_volume(const mrt_mesh *m, const mrt_layout *a,
                            const mrt_layout *b, unsigned axes, int64_t *peers);
/* The group of an ALLTOALL_GROUP from a to b: the axes of the dims that
 * differ (0: none); ~0u when no such step goes from a to b (the axes used,
 * or the pending sums, differ). */
unsigned mrt_exchange_axes(const mrt_layout *a, const mrt_layout *b);

#endif
