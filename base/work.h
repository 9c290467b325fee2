/*
 * work.h — a count of the elementary steps the spec loader and the
 * planner take where a careless data structure would make them
 * super-linear: a name compared in a lookup, a value examined while
 * buffers are placed in the arena.  Tests plan a program of n and of 4n
 * ops and compare the counts (tests/unit/test_scale.c): a count is exact where
 * a time is noisy, and it grows 4 times for a linear pass and 16 times for
 * a quadratic one.  One increment per step; per thread, as the planner.
 */
#ifndef MRT_WORK_H
#define MRT_WORK_H

#include <stdint.h>

extern _Thread_local uint64_t mrt_work_steps;

/* Counts n elementary steps. */
#define MRT_WORK(n) (mrt_work_steps += (uint64_t)(n))

#endif
