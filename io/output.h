/*
 * output.h — writing what the user asked to save (the one module that
 * does: .npy outputs, profiles, traces, reports), and JSON strings.
 */
#ifndef MRT_OUTPUT_H
#define MRT_OUTPUT_H

#include <stdio.h>

#include "meshrt.h"

/* Writes path by calling write(f, ctx), according to what path is:
 *  - "-", or a path that leads to the file or pipe that the standard
 *    output (or error) is (/dev/stdout, /proc/self/fd/1): written to that
 *    stream, after what was printed on it;
 *  - a new file or a regular file: written to a temporary file
 *    PATH.tmp.RANDOM created exclusively in the same folder (mode 0666
 *    less the umask), flushed to disk and renamed over path: readers see
 *    the old file or the whole new one, and a failure leaves nothing;
 *  - a symbolic link to a regular file: the file it leads to is replaced
 *    so, in its own folder; the link is kept (a link to a missing file is
 *    an error);
 *  - a pipe or a device: written through, in place (never replaced);
 *  - a folder: an error.
 * Errors are on path: "cannot write WHAT: REASON"; the code is
 * mrt_output_status(errno). */
mrt_status mrt_write_atomically(const char *path, const char *what,
                                void (*write)(FILE *f, const void *ctx),
                                const void *ctx, mrt_error *err);

/* The status of a failure to write with errno e: MRT_E_IO (exit 2) when
 * the path named cannot be a file (a missing folder, a folder, a name too
 * long), MRT_E_RUNTIME (exit 1) when the system refused to store it (disk
 * full, read-only, permission denied, I/O error). */
mrt_status mrt_output_status(int e);

/* Unlinks the temporary file being written, if there is one.
 * Async-signal-safe: for a handler of SIGINT/SIGTERM/SIGHUP that is about
 * to end the process.  (A SIGKILL cannot be handled: it can leave a
 * PATH.tmp.RANDOM behind, which nothing reads.) */
void mrt_output_remove_partial(void);

/* Writes s as a JSON string literal (quotes and escapes included). */
void mrt_json_string(FILE *f, const char *s);

/* Every JSON number meshrt writes goes through mrt_json_num: v in
 * printf format fmt (one conversion of a double: "%.9g", "%.3f"), or
 * `null` when v is not finite, since JSON has no inf or nan
 * (docs/plan.md).  A number too long for the buffer, or whose digits
 * would read back as infinite, is written with "%.17g" instead.  It
 * writes into buf (MRT_JSON_NUM_MAX bytes) and returns it, for a "%s" in
 * a longer format; MRT_JSON_NUM does the same into a buffer of its own
 * that lives until the end of the enclosing block, so several may be
 * arguments of one fprintf. */
#define MRT_JSON_NUM_MAX 32
const char *mrt_json_num(char *buf, const char *fmt, double v);
#define MRT_JSON_NUM(fmt, v) mrt_json_num((char[MRT_JSON_NUM_MAX]){0}, fmt, v)

#endif
