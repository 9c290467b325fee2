/*
 * output.h — writing what the user asked to save: files that are never
 * seen half-written, and JSON strings.
 */
#ifndef MRT_OUTPUT_H
#define MRT_OUTPUT_H

#include <stdio.h>

#include "meshrt.h"

/* Writes path by calling write(f, ctx) on a temporary file in the same
 * folder, then flushing it to disk and renaming it over path: readers see
 * the old file or the whole new one, never a part, and a failure leaves
 * nothing behind.  The file gets the permissions fopen would give it.
 * Errors are MRT_E_IO on path: "cannot write WHAT: REASON". */
mrt_status mrt_write_atomically(const char *path, const char *what,
                                void (*write)(FILE *f, const void *ctx),
                                const void *ctx, mrt_error *err);

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
