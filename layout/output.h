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

#endif
