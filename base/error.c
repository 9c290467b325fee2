/*
 * error.c — the error object: the first error wins, positions are
 * 1-based, and formatting follows the compiler convention
 * "FILE:LINE:COL: error: MESSAGE" that editors know how to jump to, on
 * one line: control characters in a file name or a message (a name
 * written with "\n" in a YAML string) are escaped as \n, \r, \t, \xNN.
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
_Static_assert(sizeof status_names / sizeof status_names[0] == MRT_STATUS_COUNT,
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
    err->context_line = err->context_column = 0;
    err->context[0] = '\0';
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

void mrt_error_set_context(mrt_error *err, mrt_mark at, const char *fmt, ...)
{
    if (!err || err->code == MRT_OK || err->context[0] || at.line <= 0 ||
        (at.line == err->line && at.column == err->column))
        return; /* none, one already, or where the error itself is */
    err->context_line = at.line;
    err->context_column = at.column;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->context, sizeof err->context, fmt, ap);
    va_end(ap);
}

/* s at buf + n with each control character escaped (\n, \r, \t, \xNN),
 * so that a name or a path that holds one cannot split the error's one
 * line; stops before size.  Returns the new length. */
static size_t put_escaped(char *buf, size_t size, size_t n, const char *s)
{
    for (; *s && n + 1 < size; s++) {
        unsigned char ch = (unsigned char)*s;
        char esc[8];
        if (ch >= 0x20 && ch != 0x7f) {
            buf[n++] = (char)ch;
            continue;
        }
        if (ch == '\n' || ch == '\r' || ch == '\t')
            snprintf(esc, sizeof esc, "\\%c",
                     ch == '\n'   ? 'n'
                     : ch == '\r' ? 'r'
                                  : 't');
        else
            snprintf(esc, sizeof esc, "\\x%02x", ch);
        size_t k = strlen(esc);
        if (n + k + 1 > size)
            break;
        memcpy(buf + n, esc, k);
        n += k;
    }
    buf[n] = '\0';
    return n;
}

/* "FILE:LINE:COL: KIND: TEXT" at buf + n, escaped; the new length. */
static size_t format_line(char *buf, size_t size, size_t n, const char *file,
                          int line, int column, const char *kind,
                          const char *text)
{
    size_t start = n;
    char pos[32];
    if (file[0]) {
        n = put_escaped(buf, size, n, file);
        n = put_escaped(buf, size, n, ":");
    }
    if (line > 0) {
        snprintf(pos, sizeof pos, "%d:%d:", line, column);
        n = put_escaped(buf, size, n, pos);
    }
    n = put_escaped(buf, size, n, n > start ? " " : "");
    n = put_escaped(buf, size, n, kind);
    n = put_escaped(buf, size, n, ": ");
    return put_escaped(buf, size, n, text);
}

char *mrt_error_format(const mrt_error *e, char *buf, size_t size)
{
    if (!buf || size == 0)
        return NULL;
    buf[0] = '\0';
    if (!e)
        return buf;
    size_t n = format_line(buf, size, 0, e->file, e->line, e->column, "error",
                           e->message);
    if (e->context[0] && n + 1 < size) {
        buf[n++] = '\n';
        format_line(buf, size, n, e->file, e->context_line, e->context_column,
                    "note", e->context);
    }
    return buf;
}
