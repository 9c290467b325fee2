/*
 * bench.h — what every program of meshrt's benchmark suite shares: a
 * clock, medians, random operands, and the one line format results are
 * reported in (`./dev bench` gathers them into its table).
 *
 * The machines this runs on are shared and noisy, so no result is an
 * absolute time: each is a ratio against a reference measured in the
 * same process, repetitions interleaved with meshrt's, and the median of
 * the ratios of back-to-back pairs taken
 * (the one exception, planning time, is an absolute target by the
 * issue's own words and is labelled so).
 */
#ifndef MRT_BENCH_H
#define MRT_BENCH_H

#include <stdint.h>

#include "layout.h"

/* Seconds on a monotonic clock. */
double mrt_bench_now(void);
/* Repetitions are at most this many: the statistics below keep their
 * scratch on the stack. */
#define MRT_BENCH_MAX_REPS 64

/* The median of v[0..n) (v is left as it is). */
double mrt_bench_median(const double *v, int n);
/* The median of num[i] / den[i] over i < n: each repetition's pair was
 * timed back to back, under the same background load, so the ratio of a
 * pair is steadier than the ratio of two medians. */
double mrt_bench_median_ratio(const double *num, const double *den, int n);
/* n elements of type t, uniform in [-1, 1), a function of seed. */
void mrt_bench_fill(void *p, mrt_dtype t, int64_t n, uint64_t seed);

/* One result: a tab-separated line
 *   RESULT  TARGET  CASE  VALUE  GOAL  DETAIL
 * on stdout.  goal is ">= 0.9", "<= 1.05", "< 1 s", or "-" when the row
 * is context and no target; detail is free text.  value < 0 prints as
 * "n/a" (the row could not be measured; detail says why). */
void mrt_bench_result(int target, const char *name, double value,
                      const char *goal, const char *detail_fmt, ...)
    __attribute__((format(printf, 5, 6)));

#endif
