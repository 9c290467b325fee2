/*
 * checked.h — overflow-checked integer arithmetic, part of base/: the
 * small base of shared helpers every layer may use (mesh/ up to cli/).
 *
 * Sizes and counts come from files people write, so any product or sum
 * of them may not fit the type it is stored in.  Signed overflow is
 * undefined behaviour in C and silently wrong in practice, so every such
 * product or sum goes through these helpers, and the caller turns an
 * overflow into an error at the node that caused it.  They are GCC and
 * Clang's __builtin_*_overflow, which compute the exact result and say
 * whether it fits, with no undefined behaviour.
 *
 * Each helper returns 1 when the exact result does not fit (then *out
 * holds the wrapped value: do not use it), 0 when it does.
 */
#ifndef MRT_CHECKED_H
#define MRT_CHECKED_H

#include <stddef.h>
#include <stdint.h>

static inline int mrt_checked_add(int64_t a, int64_t b, int64_t *out)
{
    return __builtin_add_overflow(a, b, out);
}

static inline int mrt_checked_mul(int64_t a, int64_t b, int64_t *out)
{
    return __builtin_mul_overflow(a, b, out);
}

/* The product of v[0..n) (1 for n = 0). */
static inline int mrt_checked_product(const int64_t *v, int n, int64_t *out)
{
    int64_t p = 1;
    for (int i = 0; i < n; i++)
        if (__builtin_mul_overflow(p, v[i], &p))
            return 1;
    *out = p;
    return 0;
}

/* a rounded up to a multiple of align (> 0). */
static inline int mrt_checked_round_up(int64_t a, int64_t align, int64_t *out)
{
    int64_t r;
    if (__builtin_add_overflow(a, align - 1, &r))
        return 1;
    *out = r / align * align;
    return 0;
}

/* a + b, or INT64_MAX when that does not fit: for figures that only need
 * to stay lower bounds (a search's pruning bounds). */
static inline int64_t mrt_saturating_add(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

/* n * size as a size_t, for allocations. */
static inline int mrt_checked_size(size_t n, size_t size, size_t *out)
{
    return __builtin_mul_overflow(n, size, out);
}

#endif
