/*
 * npy_header.h — the parser of a .npy file's header dict (npy_header.c),
 * and the error helper npy.c shares with it.  Internal to io/.
 */
#ifndef MRT_NPY_HEADER_H
#define MRT_NPY_HEADER_H

#include <stddef.h>

#include "npy.h"

/* Records an MRT_E_IO error about the file at path (no position). */
mrt_status mrt_npy_error(mrt_error *err, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Parses the header dict text[0..len) of the file at path into h: its
 * dtype, ndims, shape and count (the rest of h is left as it was). */
mrt_status mrt_npy_parse_dict(const char *text, size_t len, const char *path,
                              mrt_npy_header *h, mrt_error *err);

/* h->count from h's dtype and shape; an error if the byte count would
 * overflow 64 bits. */
mrt_status mrt_npy_shape_count(const char *path, mrt_npy_header *h,
                               mrt_error *err);

#endif
