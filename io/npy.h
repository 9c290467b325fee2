/*
 * npy.h — reading and writing NumPy .npy files (format versions 1.0, 2.0
 * and 3.0 on read; 1.0 on write): little-endian float32 ('<f4') and
 * float64 ('<f8'), C order, up to MRT_MAX_DIMS dims.
 *
 * Errors carry the .npy path as `file` and no position (line 0); a caller
 * that knows where the file was named (the spec's `init: {file: ...}`)
 * re-positions the message there.
 */
#ifndef MRT_NPY_H
#define MRT_NPY_H

#include <stdint.h>

#include "layout.h"
#include "meshrt.h"

typedef struct mrt_npy_header {
    mrt_dtype dtype;
    int wide; /* '<i8': int64 in the file, read as MRT_I32 (dtype), each
                 value within int32's range (mrt_npy_read narrows them) */
    int ndims;
    int64_t shape[MRT_MAX_DIMS];
    int64_t count;    /* product of shape (1 for a 0-d array) */
    long data_offset; /* where the data starts in the file */
    /* The file as it was when read (its stat): a later read checks that
     * it is still that file, unchanged (mrt_npy_read_same). */
    uint64_t dev, ino;
    int64_t size, mtime_sec, mtime_nsec;
} mrt_npy_header;

/* Reads and checks the header only (type, order, shape, that the file is
 * long enough for the data). */
mrt_status mrt_npy_read_header(const char *path, mrt_npy_header *h,
                               mrt_error *err);
/* Reads header and data.  On success *data is a malloc'd buffer of
 * h->count elements of h->dtype that the caller frees. */
mrt_status mrt_npy_read(const char *path, mrt_npy_header *h, void **data,
                        mrt_error *err);
/* Reads the data again for a caller that read the header before (`was`,
 * from mrt_npy_read_header or mrt_npy_read of this path): only while the
 * file is the one read then, unmodified (same device and inode, size
 * and modification time, before and after the read; the same header).
 * Otherwise MRT_E_RUNTIME, the file as `file`, saying what changed: a
 * file replaced or rewritten after it was checked must not be used.
 * Other errors as mrt_npy_read.  The caller frees *data. */
mrt_status mrt_npy_read_same(const char *path, const mrt_npy_header *was,
                             void **data, mrt_error *err);
/* Writes data (count = product of shape) as a .npy file with
 * mrt_write_atomically (output.h): a new or regular file is replaced
 * atomically, nothing is left next to it on failure, and the error's code
 * is MRT_E_IO for a path that cannot be a file, MRT_E_RUNTIME when the
 * system refuses the write (disk full, read-only, permission). */
mrt_status mrt_npy_write(const char *path, mrt_dtype t, int ndims,
                         const int64_t shape[], const void *data,
                         mrt_error *err);

#endif
