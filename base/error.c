/*
 * error.c — the error object: the first error wins, positions are
 * 1-based, and formatting follows the compiler convention
 * "FILE:LINE:COL: error: MESSAGE" that editors know how to jump to.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "meshrt.h"
#include "error.h"

static const char *const status_names[] = {
    [MRT_OK] = "ok",
    [MRT_E_SYNTAX] = "syntax error",
    [MRT_E_SPEC] = "spec error",
    [MRT_E_IO] = "i/o error",
    [MRT_E_USAGE] = "usage error",
    [MRT_E_MESH] = "mesh error",
    [MRT_E_NOMEM] = "out of memory",
    [MRT_E_RUNTIME] = "runtime error",
    [MRT_E_VERIFY] = "verification failed",
};
_Static_assert(sizeof status_names / sizeof status_names[0] ==
                   MRT_STATUS_COUNT,
               "one name per status");

const char *mrt_status_name(mrt_status s)
{
    return s >= 0 && s < MRT_STATUS_COUNT ? status_names[s] : "unknown";
}

mrt_status mrt_error_set(mrt_error *err, mrt_status code, const char *file,
                         mrt_mark at, const char *fmt, ...)
{
    if (!err || err->code != MRT_OK)
        return code;
    err->code = code;
    snprintf(err->file, sizeof err->file, "%s", file ? file : "");
    err->line = at.line;
    err->column = at.column;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return code;
}

mrt_status mrt_error_null(mrt_error *err, const char *fn, const char *arg)
{
    static const mrt_mark none;
    return mrt_error_set(err, MRT_E_USAGE, "", none,
                         "%s: argument '%s' is NULL", fn, arg);
}

char *mrt_error_format(const mrt_error *e, char *buf, size_t size)
{
    int n = 0;
    buf[0] = '\0';
    if (e->file[0])
        n += snprintf(buf, size, "%s:", e->file);
    if (e->line > 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, "%d:%d:", e->line,
                      e->column);
    if ((size_t)n < size)
        snprintf(buf + n, size - (size_t)n, "%serror: %s", n ? " " : "",
                 e->message);
    return buf;
}
