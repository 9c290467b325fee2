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
                     ch == '\n' ? 'n' : ch == '\r' ? 'r' : 't');
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

char *mrt_error_format(const mrt_error *e, char *buf, size_t size)
{
    size_t n = 0;
    char pos[32];
    if (size == 0)
        return buf;
    buf[0] = '\0';
    if (e->file[0]) {
        n = put_escaped(buf, size, n, e->file);
        n = put_escaped(buf, size, n, ":");
    }
    if (e->line > 0) {
        snprintf(pos, sizeof pos, "%d:%d:", e->line, e->column);
        n = put_escaped(buf, size, n, pos);
    }
    n = put_escaped(buf, size, n, n ? " error: " : "error: ");
    put_escaped(buf, size, n, e->message);
    return buf;
}
