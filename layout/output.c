/*
 * output.c — atomic file writes (temporary file, fsync, rename) and JSON
 * string literals and numbers, shared by every writer: .npy outputs,
 * profiles, traces, plans and reports.
 */
#include "output.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spec.h"

mrt_status mrt_write_atomically(const char *path, const char *what,
                                void (*write)(FILE *f, const void *ctx),
                                const void *ctx, mrt_error *err)
{
    char tmp[PATH_MAX + 16];
    snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp), e;
    if (fd < 0) {
        e = errno;
        goto fail_open;
    }
    FILE *f = fdopen(fd, "w");
    if (!f) {
        e = errno;
        close(fd);
        goto fail;
    }
    write(f, ctx);
    mode_t mask = umask(0); /* mkstemp made it private; fopen would not */
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0 || fflush(f) != 0 || ferror(f) ||
        fsync(fd) != 0) {
        e = errno ? errno : EIO;
        fclose(f);
        goto fail;
    }
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        e = errno;
        goto fail;
    }
    return MRT_OK;
fail:
    unlink(tmp);
fail_open:
    return mrt_error_set(err, MRT_E_IO, path, (mrt_mark){0},
                         "cannot write %s: %s", what, strerror(e));
}

void mrt_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

const char *mrt_json_num(char *buf, const char *fmt, double v)
{
    if (!isfinite(v)) { /* JSON has no inf or nan */
        snprintf(buf, MRT_JSON_NUM_MAX, "null");
        return buf;
    }
    /* "%.3f" of 1e300 is too long, and "%.10g" of DBL_MAX reads back as
     * inf: both take all the digits a double needs */
    int n = snprintf(buf, MRT_JSON_NUM_MAX, fmt, v);
    if (n < 0 || n >= MRT_JSON_NUM_MAX || !isfinite(strtod(buf, NULL)))
        snprintf(buf, MRT_JSON_NUM_MAX, "%.17g", v);
    return buf;
}
