/*
 * error.h — positions and the error setter every layer shares (error.c).
 *
 * A position is a 1-based line and column in the file an error names
 * (a spec, a machine profile, a .npy header); {0, 0} means none, as for
 * a program built in C (ir/build.c), whose errors name the builder call
 * and argument instead.
 */
#ifndef MRT_ERROR_H
#define MRT_ERROR_H

#include "meshrt.h"

typedef struct mrt_mark {
    int line, column; /* 1-based; 0 = unknown */
} mrt_mark;

/* Records an error at a position (the first error wins: does nothing if
 * err already holds one).  Returns code.  A NULL err is allowed. */
mrt_status mrt_error_set(mrt_error *err, mrt_status code, const char *file,
                         mrt_mark at, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Gives err's error (if it has one, and no context yet) the context
 * "while ..." at `at` in the same file, printed by mrt_error_format as a
 * note line; not where there is no position or at the error's own. */
void mrt_error_set_context(mrt_error *err, mrt_mark at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The error of a public call given a NULL pointer where it needs one:
 * MRT_E_USAGE, "FN: argument 'ARG' is NULL", no file.  Returns
 * MRT_E_USAGE. */
mrt_status mrt_error_null(mrt_error *err, const char *fn, const char *arg);

#endif
