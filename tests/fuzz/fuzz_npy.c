/*
 * fuzz_npy.c — fuzz target for the .npy reader (io/npy.c): the input
 * is the bytes of a .npy file, read with mrt_npy_read_header and
 * mrt_npy_read through their own path (fopen, fstat, fread): the bytes go
 * into a memory file (memfd_create) named /proc/self/fd/N, so nothing
 * touches the disk and nothing is left behind after a crash.
 *
 * What it checks besides "no crash, no leak, no undefined behaviour": the
 * two calls agree; a failure is MRT_E_IO with a message, naming the file,
 * with no position (npy.h's promise); a success has a sane header (dims
 * in range, count the product of the shape, the data inside the file)
 * and its data are exactly the file's bytes after the header (no silent
 * wrong answer; checked on little-endian hosts, where nothing is
 * swapped).
 *
 * The reader refuses data the file does not hold, so memory is bounded by
 * the input's size (libFuzzer's -max_len).
 */
#define _GNU_SOURCE /* memfd_create */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "npy.h"

static int fd = -1;
static char path[64];

static void check_error(mrt_status st, const mrt_error *err, const char *what)
{
    MRT_FUZZ_CHECK(st == MRT_E_IO && err->code == st, "%s: status %d (%d)",
                   what, (int)st, (int)err->code);
    MRT_FUZZ_CHECK(err->message[0] && !strcmp(err->file, path) &&
                       err->line == 0,
                   "%s: error '%s' in '%s' at line %d", what, err->message,
                   err->file, err->line);
}

static void check_header(const mrt_npy_header *h, size_t size)
{
    int64_t count = 1;
    MRT_FUZZ_CHECK(h->dtype == MRT_F32 || h->dtype == MRT_F64 ||
                       h->dtype == MRT_I32,
                   "dtype %d", (int)h->dtype);
    MRT_FUZZ_CHECK(h->ndims >= 0 && h->ndims <= MRT_MAX_DIMS, "%d dims",
                   h->ndims);
    for (int i = 0; i < h->ndims; i++) {
        MRT_FUZZ_CHECK(h->shape[i] >= 0, "extent %lld", (long long)h->shape[i]);
        count *= h->shape[i]; /* bounded: the data fit in the file */
    }
    MRT_FUZZ_CHECK(count == h->count, "count %lld, shape says %lld",
                   (long long)h->count, (long long)count);
    MRT_FUZZ_CHECK(h->data_offset >= 10 &&
                       (size_t)h->data_offset +
                               (size_t)h->count *
                                   (size_t)mrt_dtype_size(h->dtype) <=
                           size,
                   "data at %ld, %lld elements, in a file of %zu bytes",
                   h->data_offset, (long long)h->count, size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (fd < 0) {
        fd = memfd_create("mrt_fuzz_npy", 0);
        MRT_FUZZ_CHECK(fd >= 0, "memfd_create failed");
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    MRT_FUZZ_CHECK(ftruncate(fd, 0) == 0 &&
                       pwrite(fd, data, size, 0) == (ssize_t)size,
                   "cannot write the input to %s", path);

    mrt_npy_header h1, h2;
    mrt_error e1 = {0}, e2 = {0};
    void *values = (void *)&h2; /* must be reset to NULL on failure */
    mrt_status st1 = mrt_npy_read_header(path, &h1, &e1);
    mrt_status st2 = mrt_npy_read(path, &h2, &values, &e2);
    MRT_FUZZ_CHECK(st1 == st2, "read_header says %d, read says %d", (int)st1,
                   (int)st2);
    if (st1 != MRT_OK) {
        check_error(st1, &e1, "read_header");
        check_error(st2, &e2, "read");
        MRT_FUZZ_CHECK(!values, "a failed read returned data");
        MRT_FUZZ_CHECK(!strcmp(e1.message, e2.message),
                       "read_header says '%s', read says '%s'", e1.message,
                       e2.message);
        return 0;
    }
    check_header(&h1, size);
    MRT_FUZZ_CHECK(!memcmp(&h1, &h2, sizeof h1), "the headers differ");
    size_t bytes = (size_t)h2.count * (size_t)mrt_dtype_size(h2.dtype);
    const uint16_t one = 1;
    int little = *(const uint8_t *)&one;
    MRT_FUZZ_CHECK(
        values && (!little || !memcmp(values, data + h2.data_offset, bytes)),
        "the data differ from the file's bytes");
    free(values);
    return 0;
}
