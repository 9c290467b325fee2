/*
 * bench.c — the benchmark suite's shared helpers (bench.h).
 */
#include "bench.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "init.h"

double mrt_bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

double mrt_bench_median(const double *v, int n)
{
    double s[MRT_BENCH_MAX_REPS];
    if (n > MRT_BENCH_MAX_REPS)
        n = MRT_BENCH_MAX_REPS;
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

double mrt_bench_median_ratio(const double *num, const double *den, int n)
{
    double r[MRT_BENCH_MAX_REPS];
    if (n > MRT_BENCH_MAX_REPS)
        n = MRT_BENCH_MAX_REPS;
    for (int i = 0; i < n; i++)
        r[i] = num[i] / den[i];
    return mrt_bench_median(r, n);
}

void mrt_bench_fill(void *p, mrt_dtype t, int64_t n, uint64_t seed)
{
    for (int64_t i = 0; i < n; i++) {
        double x = mrt_init_random_value(seed, (uint64_t)i);
        if (t == MRT_F64)
            ((double *)p)[i] = x;
        else
            ((float *)p)[i] = (float)x;
    }
}

void mrt_bench_result(int target, const char *name, double value,
                      const char *goal, const char *detail_fmt, ...)
{
    char detail[512];
    va_list ap;
    va_start(ap, detail_fmt);
    vsnprintf(detail, sizeof detail, detail_fmt, ap);
    va_end(ap);
    if (value < 0)
        printf("RESULT\t%d\t%s\tn/a\t%s\t%s\n", target, name, goal, detail);
    else
        printf("RESULT\t%d\t%s\t%.3f\t%s\t%s\n", target, name, value, goal,
               detail);
    fflush(stdout);
}
