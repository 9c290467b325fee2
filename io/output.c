/*
 * output.c — the one way meshrt writes a file the user asked for (.npy
 * outputs, profiles, traces, compare's and search's reports), and JSON
 * string literals and numbers.
 *
 * What is at the path decides how it is written (output.h has the rules):
 * a new file or a regular file is replaced atomically through a temporary
 * file in its own folder; a pipe or a device is written through, never
 * replaced; "-" and any path that leads to the standard output or error
 * write to that stream.  The temporary file's name is random and it is
 * created exclusively (O_EXCL, O_NOFOLLOW), so nothing planted in the
 * folder, a symbolic link least of all, is ever opened or followed; it is
 * created with mode 0666 and the umask, as any new file.  While it exists
 * its name is kept where mrt_output_remove_partial, called from a signal
 * handler, can unlink it.
 */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "error.h"

#define TMP_RANDOM 12 /* characters of [0-9A-Za-z]: 71 bits */
#define TMP_TRIES 64

/* The temporary file being written, for the signal handler.  The name is
 * complete before live is set; live is cleared before the name changes. */
static char partial[PATH_MAX];
static atomic_int live;

void mrt_output_remove_partial(void)
{
    if (atomic_load(&live))
        unlink(partial); /* async-signal-safe; ENOENT after the rename */
}

mrt_status mrt_output_status(int e)
{
    switch (e) {
    case ENOENT:
    case ENOTDIR:
    case EISDIR:
    case ENAMETOOLONG:
    case ELOOP:
    case ENXIO:
    case EINVAL: return MRT_E_IO; /* the path the user gave cannot be written */
    case ENOMEM: return MRT_E_NOMEM;
    default:
        return MRT_E_RUNTIME; /* ENOSPC, EDQUOT, EACCES, EPERM, EROFS, EIO */
    }
}

static mrt_status fail_with(mrt_error *err, const char *path, int e,
                            const char *what, const char *fmt)
{
    return mrt_error_set(err, mrt_output_status(e), path, (mrt_mark){0}, fmt,
                         what, strerror(e));
}

/* Random characters for a temporary name: getrandom, or if the kernel
 * has none to give yet, the clock and the pid (O_EXCL keeps even a
 * guessed name safe; guessing only costs a retry). */
static void random_chars(char *out, int n)
{
    static const char set[] =
        "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    unsigned char b[TMP_RANDOM];
    if (getrandom(b, (size_t)n, GRND_NONBLOCK) != n) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        unsigned long x = (unsigned long)ts.tv_nsec * 2654435761u ^
                          (unsigned long)getpid() ^ (unsigned long)rand();
        for (int i = 0; i < n; i++, x = x * 6364136223846793005u + 1442695)
            b[i] = (unsigned char)(x >> 33);
    }
    for (int i = 0; i < n; i++)
        out[i] = set[b[i] % (sizeof set - 1)];
    out[n] = '\0';
}

/* Creates TARGET.tmp.RANDOM exclusively; its name goes to partial. */
static int create_partial(const char *target)
{
    size_t len = strlen(target);
    if (len + 5 + TMP_RANDOM >= sizeof partial) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (int tries = 0; tries < TMP_TRIES; tries++) {
        atomic_store(&live, 0);
        memcpy(partial, target, len);
        memcpy(partial + len, ".tmp.", 5);
        random_chars(partial + len + 5, TMP_RANDOM);
        /* Set before open, so a signal during it removes the file: the
         * name is ours unless it existed (EEXIST), and then it is
         * unguessable to whoever placed it there. */
        atomic_store(&live, 1);
        int fd = open(partial,
                      O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                      0666);
        if (fd >= 0)
            return fd;
        if (errno != EEXIST) {
            int e = errno;
            atomic_store(&live, 0);
            errno = e;
            return -1;
        }
    }
    atomic_store(&live, 0);
    errno = EEXIST;
    return -1;
}

/* Calls write on f, flushes it and returns 0, or the errno of the first
 * failure. */
static int write_stream(FILE *f, void (*write)(FILE *, const void *),
                        const void *ctx)
{
    errno = 0;
    write(f, ctx);
    int e = errno;
    if (fflush(f) != 0 || ferror(f))
        return errno ? errno : e ? e : EIO;
    return 0;
}

/* Temporary file, written, synced, renamed over target. */
static mrt_status replace(const char *path, const char *target,
                          const char *what, void (*write)(FILE *, const void *),
                          const void *ctx, mrt_error *err)
{
    int fd = create_partial(target), e;
    if (fd < 0)
        return fail_with(err, path, errno, what, "cannot write %s: %s");
    FILE *f = fdopen(fd, "w");
    if (!f) {
        e = errno;
        close(fd);
        goto fail;
    }
    e = write_stream(f, write, ctx);
    if (!e && fsync(fd) != 0)
        e = errno;
    if (fclose(f) != 0 && !e)
        e = errno;
    if (e)
        goto fail;
    if (rename(partial, target) != 0) {
        e = errno;
        unlink(partial);
        atomic_store(&live, 0);
        return fail_with(err, path, e, what, "cannot put %s in place: %s");
    }
    atomic_store(&live, 0);
    return MRT_OK;
fail:
    unlink(partial);
    atomic_store(&live, 0);
    return fail_with(err, path, e, what, "cannot write %s: %s");
}

/* A pipe or a device: opened as it is (no O_CREAT, no O_TRUNC) and
 * written in place. */
static mrt_status write_through(const char *path, const char *what,
                                void (*write)(FILE *, const void *),
                                const void *ctx, mrt_error *err)
{
    int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC), e;
    if (fd < 0)
        return fail_with(err, path, errno, what, "cannot write %s: %s");
    FILE *f = fdopen(fd, "w");
    if (!f) {
        e = errno;
        close(fd);
    } else {
        e = write_stream(f, write, ctx);
        if (fclose(f) != 0 && !e)
            e = errno;
    }
    return e ? fail_with(err, path, e, what, "cannot write %s: %s") : MRT_OK;
}

/* The standard output or error; path NULL: it was named "-". */
static mrt_status write_stdio(FILE *f, const char *path, const char *what,
                              void (*write)(FILE *, const void *),
                              const void *ctx, mrt_error *err)
{
    fflush(f == stdout ? stderr : stdout); /* what was printed comes first */
    int e = write_stream(f, write, ctx);
    if (!e)
        return MRT_OK;
    return path ? fail_with(err, path, e, what, "cannot write %s: %s")
                : fail_with(err, "meshrt", e, what,
                            "cannot write %s to the standard output: %s");
}

/* The standard stream (stdout, stderr) that is the file st is, or NULL. */
static FILE *standard_stream(const struct stat *st)
{
    struct stat s;
    if (fstat(STDOUT_FILENO, &s) == 0 && s.st_dev == st->st_dev &&
        s.st_ino == st->st_ino)
        return stdout;
    if (fstat(STDERR_FILENO, &s) == 0 && s.st_dev == st->st_dev &&
        s.st_ino == st->st_ino)
        return stderr;
    return NULL;
}

mrt_status mrt_write_atomically(const char *path, const char *what,
                                void (*write)(FILE *f, const void *ctx),
                                const void *ctx, mrt_error *err)
{
    if (strcmp(path, "-") == 0)
        return write_stdio(stdout, NULL, what, write, ctx, err);
    struct stat st, lst;
    if (stat(path, &st) != 0) {
        int e = errno;
        if (e == ENOENT && lstat(path, &lst) == 0)
            return mrt_error_set(err, MRT_E_IO, path, (mrt_mark){0},
                                 "cannot write %s: it is a symbolic link to "
                                 "a missing file",
                                 what);
        if (e != ENOENT)
            return fail_with(err, path, e, what, "cannot write %s: %s");
        return replace(path, path, what, write, ctx, err); /* a new file */
    }
    FILE *stream = standard_stream(&st);
    if (stream)
        return write_stdio(stream, path, what, write, ctx, err);
    if (S_ISDIR(st.st_mode))
        return mrt_error_set(err, MRT_E_IO, path, (mrt_mark){0},
                             "cannot write %s: it is a folder", what);
    if (!S_ISREG(st.st_mode))
        return write_through(path, what, write, ctx, err);
    if (lstat(path, &lst) != 0 || !S_ISLNK(lst.st_mode))
        return replace(path, path, what, write, ctx, err);
    /* A link to a regular file: the file it leads to is replaced, in
     * its own folder; the link stays as it is. */
    char *target = realpath(path, NULL);
    if (!target)
        return fail_with(err, path, errno, what, "cannot write %s: %s");
    mrt_status rc = replace(path, target, what, write, ctx, err);
    free(target);
    return rc;
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

/* ---- meshrt.h's names for the helpers above ---- */

mrt_status mrt_file_write(const char *path, const char *what,
                          void (*write)(FILE *f, const void *ctx),
                          const void *ctx, mrt_error *err)
{
    if (!path || !what || !write)
        return mrt_error_null(err, "mrt_file_write",
                              !path   ? "path"
                              : !what ? "what"
                                      : "write");
    return mrt_write_atomically(path, what, write, ctx, err);
}

void mrt_file_remove_partial(void)
{
    mrt_output_remove_partial();
}

void mrt_json_write_string(FILE *f, const char *s)
{
    if (f && s)
        mrt_json_string(f, s);
    else if (f)
        fputs("null", f);
}

const char *mrt_json_format_number(char buf[MRT_JSON_NUMBER_MAX],
                                   const char *fmt, double v)
{
    return buf ? mrt_json_num(buf, fmt ? fmt : "%.17g", v) : NULL;
}
