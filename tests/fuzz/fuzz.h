/*
 * fuzz.h — what the fuzz targets of tests/fuzz share: libFuzzer's entry
 * point, and the check that turns a broken promise into a crash that
 * libFuzzer (or the replay test) reports with the input that caused it.
 */
#ifndef MRT_FUZZ_H
#define MRT_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Called once per input; returns 0 (libFuzzer's contract). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Aborts with a one-line reason when cond is false.  For the harness
 * only: the library itself never aborts on bad input. */
#define MRT_FUZZ_CHECK(cond, ...)                                              \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: fuzz check failed: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            abort();                                                           \
        }                                                                      \
    } while (0)

#endif
