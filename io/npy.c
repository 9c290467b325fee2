/*
 * npy.c — NumPy .npy files: read versions 1.0, 2.0 and 3.0, write 1.0;
 * little-endian float16 / float32 / float64 (and int32 indices) in C
 * order only.  numpy has no bfloat16: a bfloat16 array is written as
 * float32 ('<f4', exact: every bfloat16 is a float32), and a caller that
 * reads a float32 file into a bfloat16 tensor rounds it (runtime/shard.c).
 *
 * A .npy file is the magic "\x93NUMPY", two version bytes, the header
 * length (2 bytes little-endian in 1.0, 4 bytes in 2.0 and 3.0), then a
 * Python dict literal such as
 *   {'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }
 * padded with spaces and a newline, then the raw data.  Files come from
 * users, so nothing in them is trusted: every malformation (bad magic,
 * truncation, missing or unknown keys, other dtypes, Fortran order, too
 * many dims, overflowing sizes, data shorter than the shape) is an
 * MRT_E_IO error with the file's path and no position, never a crash.
 * The header dict is parsed apart (npy_header.c); this file reads the
 * bytes around it and the data, and writes files.
 *
 * Writes go through mrt_write_atomically (output.h): a temporary file
 * in the same folder, renamed over PATH once complete and synced, so
 * readers never see half a file.  The header is padded so the data
 * starts at a multiple of 64 bytes, as numpy >= 1.14 does.
 */
#include "npy.h"
#include "npy_header.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "half.h"
#include "output.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_HEADER_MAX (1L << 20) /* no sane header dict is larger */
#define NPY_ALIGN 64

static const mrt_mark no_mark = {0, 0};

static int host_is_big_endian(void)
{
    const uint16_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    return first == 0;
}

/* Reverses the bytes of each of count elements of esize bytes. */
static void swap_bytes(void *p, size_t count, int esize)
{
    unsigned char *b = p;
    for (size_t i = 0; i < count; i++, b += esize)
        for (int lo = 0, hi = esize - 1; lo < hi; lo++, hi--) {
            unsigned char t = b[lo];
            b[lo] = b[hi];
            b[hi] = t;
        }
}

/* ---- reading -------------------------------------------------------- */

static uint32_t read_le(const unsigned char *b, int n)
{
    uint32_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | b[i];
    return v;
}

/* Reads magic, version and header length; *hlen and *prefix are set. */
static mrt_status read_prefix(FILE *f, const char *path, int64_t fsize,
                              long *prefix, uint32_t *hlen, mrt_error *err)
{
    unsigned char b[12];
    if (fsize < 10 || fread(b, 1, 8, f) != 8)
        return mrt_npy_error(err, path,
                             "not a .npy file (too short: %lld bytes)",
                             (long long)fsize);
    if (memcmp(b, NPY_MAGIC, NPY_MAGIC_LEN))
        return mrt_npy_error(err, path,
                             "not a .npy file (bad magic string: it must "
                             "start with \\x93NUMPY)");
    int major = b[6], minor = b[7];
    if ((major != 1 && major != 2 && major != 3) || minor != 0)
        return mrt_npy_error(err, path,
                             "unsupported .npy format version %d.%d (meshrt "
                             "reads 1.0, 2.0 and 3.0)",
                             major, minor);
    int lsize = major == 1 ? 2 : 4;
    if (fsize < 8 + lsize || fread(b + 8, 1, (size_t)lsize, f) != (size_t)lsize)
        return mrt_npy_error(err, path,
                             "truncated header (the file ends "
                             "inside the header length)");
    *hlen = read_le(b + 8, lsize);
    *prefix = 8 + lsize;
    if (*hlen > NPY_HEADER_MAX)
        return mrt_npy_error(err, path, "header of %lu bytes is too long",
                             (unsigned long)*hlen);
    if ((int64_t)*prefix + *hlen > fsize)
        return mrt_npy_error(err, path,
                             "truncated header (the header is %lu bytes but "
                             "the file ends after %lld)",
                             (unsigned long)*hlen,
                             (long long)(fsize - *prefix));
    return MRT_OK;
}

static mrt_status read_header_fp(FILE *f, const char *path, int64_t fsize,
                                 mrt_npy_header *h, mrt_error *err)
{
    long prefix = 0;
    uint32_t hlen = 0;
    mrt_status st = read_prefix(f, path, fsize, &prefix, &hlen, err);
    if (st)
        return st;
    char *text = malloc((size_t)hlen + 1);
    if (!text)
        return mrt_error_set(err, MRT_E_NOMEM, path, no_mark,
                             "out of memory reading the header");
    if (fread(text, 1, hlen, f) != hlen) {
        free(text);
        return mrt_npy_error(err, path, "cannot read the header: %s",
                             ferror(f) ? strerror(errno) : "short read");
    }
    text[hlen] = '\0';
    mrt_npy_header tmp = {0};
    st = mrt_npy_parse_dict(text, hlen, path, &tmp, err);
    free(text);
    if (st)
        return st;
    tmp.data_offset = prefix + (long)hlen;
    int64_t need = tmp.count * (tmp.wide ? 8 : mrt_dtype_size(tmp.dtype));
    if (fsize - tmp.data_offset < need)
        return mrt_npy_error(err, path,
                             "the data is shorter than the shape says (%lld "
                             "bytes expected, %lld present)",
                             (long long)need,
                             (long long)(fsize - tmp.data_offset));
    *h = tmp;
    return MRT_OK;
}

/* Opens path for reading and stats it; *f is NULL on failure.
 * The open does not block (O_NONBLOCK), so a FIFO named as an input is
 * refused as "not a regular file" instead of waiting for a writer. */
static mrt_status open_read(const char *path, FILE **f, struct stat *sb,
                            mrt_error *err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    *f = NULL;
    if (fd < 0)
        return mrt_npy_error(err, path, "cannot open for reading: %s",
                             strerror(errno));
    if (fstat(fd, sb) != 0 || !S_ISREG(sb->st_mode)) {
        close(fd);
        return mrt_npy_error(err, path, "not a regular file");
    }
    if (fcntl(fd, F_SETFL, 0) != 0 || !(*f = fdopen(fd, "rb"))) {
        mrt_status st = mrt_npy_error(err, path, "cannot open for reading: %s",
                                      strerror(errno));
        close(fd);
        return st;
    }
    return MRT_OK;
}

static void set_identity(mrt_npy_header *h, const struct stat *sb)
{
    h->dev = (uint64_t)sb->st_dev;
    h->ino = (uint64_t)sb->st_ino;
    h->size = (int64_t)sb->st_size;
    h->mtime_sec = (int64_t)sb->st_mtim.tv_sec;
    h->mtime_nsec = (int64_t)sb->st_mtim.tv_nsec;
}

/* The header of the open file f, with its identity. */
static mrt_status header_of(FILE *f, const char *path, const struct stat *sb,
                            mrt_npy_header *h, mrt_error *err)
{
    mrt_status st = read_header_fp(f, path, (int64_t)sb->st_size, h, err);
    if (st == MRT_OK)
        set_identity(h, sb);
    return st;
}

mrt_status mrt_npy_read_header(const char *path, mrt_npy_header *h,
                               mrt_error *err)
{
    FILE *f;
    struct stat sb;
    mrt_status st = open_read(path, &f, &sb, err);
    if (st)
        return st;
    st = header_of(f, path, &sb, h, err);
    fclose(f);
    return st;
}

/* int64 indices narrowed in place to int32 (each within its range). */
static mrt_status narrow(const char *path, const mrt_npy_header *h, void *data,
                         mrt_error *err)
{
    const int64_t *w = data;
    int32_t *n = data;
    for (int64_t i = 0; i < h->count; i++) {
        int64_t v = w[i]; /* (read before n[i] overwrites its bytes) */
        if (v < INT32_MIN || v > INT32_MAX)
            return mrt_npy_error(err, path,
                                 "element %lld is %lld, beyond int32's range "
                                 "(int64 indices are read as int32)",
                                 (long long)i, (long long)v);
        n[i] = (int32_t)v;
    }
    return MRT_OK;
}

/* The data of the open file f, whose header is h, into a new *data. */
static mrt_status read_data(FILE *f, const char *path, const mrt_npy_header *h,
                            void **data, mrt_error *err)
{
    int esize = h->wide ? 8 : mrt_dtype_size(h->dtype);
    size_t bytes = (size_t)h->count * (size_t)esize;
    *data = malloc(bytes ? bytes : 1);
    if (!*data)
        return mrt_error_set(err, MRT_E_NOMEM, path, no_mark,
                             "out of memory: %zu bytes for the data", bytes);
    if (fseek(f, h->data_offset, SEEK_SET) != 0 ||
        fread(*data, 1, bytes, f) != bytes) {
        free(*data);
        *data = NULL;
        return mrt_npy_error(err, path, "cannot read the data: %s",
                             ferror(f) ? strerror(errno) : "short read");
    }
    if (host_is_big_endian())
        swap_bytes(*data, (size_t)h->count, esize);
    mrt_status st = h->wide ? narrow(path, h, *data, err) : MRT_OK;
    if (st) {
        free(*data);
        *data = NULL;
    }
    return st;
}

mrt_status mrt_npy_read(const char *path, mrt_npy_header *h, void **data,
                        mrt_error *err)
{
    FILE *f;
    struct stat sb;
    *data = NULL;
    mrt_status st = open_read(path, &f, &sb, err);
    if (st)
        return st;
    st = header_of(f, path, &sb, h, err);
    if (st == MRT_OK)
        st = read_data(f, path, h, data, err);
    fclose(f);
    return st;
}

/* What differs between the file as it was checked (was) and as it is
 * (now), or NULL when nothing does. */
static const char *what_changed(const mrt_npy_header *was,
                                const mrt_npy_header *now)
{
    if (now->dev != was->dev || now->ino != was->ino)
        return "it was replaced by another file";
    if (now->size != was->size)
        return "its size changed";
    if (now->mtime_sec != was->mtime_sec || now->mtime_nsec != was->mtime_nsec)
        return "it was modified";
    int same = now->dtype == was->dtype && now->wide == was->wide &&
               now->ndims == was->ndims && now->count == was->count &&
               now->data_offset == was->data_offset;
    for (int i = 0; same && i < now->ndims; i++)
        same = now->shape[i] == was->shape[i];
    return same ? NULL : "its header changed";
}

static mrt_status changed(mrt_error *err, const char *path, const char *what)
{
    return mrt_error_set(err, MRT_E_RUNTIME, path, no_mark,
                         "the file changed after it was checked (%s): "
                         "leave init files alone while meshrt runs",
                         what);
}

mrt_status mrt_npy_read_same(const char *path, const mrt_npy_header *was,
                             void **data, mrt_error *err)
{
    FILE *f;
    struct stat sb;
    mrt_npy_header now = *was;
    const char *what = NULL;
    *data = NULL;
    mrt_status st = open_read(path, &f, &sb, err);
    if (st)
        return st;
    set_identity(&now, &sb);
    if (!(what = what_changed(was, &now)))
        what = header_of(f, path, &sb, &now, NULL) == MRT_OK
                   ? what_changed(was, &now)
                   : "its header is no longer valid";
    if (!what)
        st = read_data(f, path, &now, data, err);
    if (!what && st == MRT_OK && fstat(fileno(f), &sb) == 0) {
        set_identity(&now, &sb); /* written to during the read? */
        what = what_changed(was, &now);
    }
    fclose(f);
    if (!what)
        return st;
    free(*data);
    *data = NULL;
    return changed(err, path, what);
}

/* ---- writing -------------------------------------------------------- */

/* The padded version 1.0 header (magic to newline) into buf; returns its
 * length, a multiple of NPY_ALIGN. */
static size_t format_header(char *buf, size_t size, mrt_dtype t, int ndims,
                            const int64_t shape[])
{
    char dims[MRT_MAX_DIMS * 24 + 8] = "";
    size_t n = 0;
    for (int i = 0; i < ndims; i++)
        n += (size_t)snprintf(dims + n, sizeof dims - n, "%s%lld",
                              i ? ", " : "", (long long)shape[i]);
    if (ndims == 1)
        snprintf(dims + n, sizeof dims - n, ",");
    char dict[sizeof dims + 80];
    int dlen = snprintf(dict, sizeof dict,
                        "{'descr': '%s', 'fortran_order': False, "
                        "'shape': (%s), }",
                        t == MRT_F64   ? "<f8"
                        : t == MRT_I32 ? "<i4"
                        : t == MRT_F16 ? "<f2"
                                       : "<f4",
                        dims);
    size_t total = 10 + (size_t)dlen + 1;
    total = (total + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
    size_t hlen = total - 10;
    assert(total <= size && hlen <= 0xffff);
    memcpy(buf, NPY_MAGIC "\x01\x00", 8);
    buf[8] = (char)(hlen & 0xff);
    buf[9] = (char)(hlen >> 8);
    memcpy(buf + 10, dict, (size_t)dlen);
    memset(buf + 10 + dlen, ' ', total - 10 - (size_t)dlen - 1);
    buf[total - 1] = '\n';
    return total;
}

/* What mrt_write_atomically writes: the header, then the data in
 * little-endian order (swapped in chunks on big-endian). */
struct npy_out {
    const char *head;
    size_t hlen;
    const void *data;
    size_t count;
    int esize;
};

static void put_npy(FILE *f, const void *ctx)
{
    const struct npy_out *o = ctx;
    fwrite(o->head, 1, o->hlen, f);
    if (!host_is_big_endian()) {
        if (o->count)
            fwrite(o->data, (size_t)o->esize, o->count, f);
        return;
    }
    unsigned char chunk[4096];
    const unsigned char *p = o->data;
    size_t per = sizeof chunk / (size_t)o->esize;
    for (size_t done = 0; done < o->count && !ferror(f); done += per) {
        size_t k = o->count - done < per ? o->count - done : per;
        memcpy(chunk, p + done * (size_t)o->esize, k * (size_t)o->esize);
        swap_bytes(chunk, k, o->esize);
        fwrite(chunk, (size_t)o->esize, k, f);
    }
}

static mrt_status check_write_args(const char *path, mrt_dtype t, int ndims,
                                   const int64_t shape[], const void *data,
                                   int64_t *count, mrt_error *err)
{
    if (t != MRT_F32 && t != MRT_F64 && t != MRT_I32 && t != MRT_F16)
        return mrt_error_set(err, MRT_E_USAGE, path, no_mark,
                             "cannot write dtype %d", (int)t);
    if (ndims < 0 || ndims > MRT_MAX_DIMS)
        return mrt_error_set(err, MRT_E_USAGE, path, no_mark,
                             "cannot write %d dims (at most %d)", ndims,
                             MRT_MAX_DIMS);
    mrt_npy_header h = {.dtype = t, .ndims = ndims};
    for (int i = 0; i < ndims; i++) {
        if (shape[i] < 0)
            return mrt_error_set(err, MRT_E_USAGE, path, no_mark,
                                 "negative extent %lld in dim %d",
                                 (long long)shape[i], i);
        h.shape[i] = shape[i];
    }
    mrt_status st = mrt_npy_shape_count(path, &h, err);
    if (!st && h.count > 0 && !data)
        st = mrt_error_set(err, MRT_E_USAGE, path, no_mark, "no data to write");
    *count = h.count;
    return st;
}

/* A bfloat16 array as float32 (numpy has no bfloat16). */
static mrt_status write_bf16(const char *path, int ndims, const int64_t shape[],
                             const void *data, mrt_error *err)
{
    int64_t count = 0;
    mrt_status st = check_write_args(path, MRT_F32, ndims, shape, data, &count,
                                     err);
    if (st)
        return st;
    float *wide = malloc((size_t)(count ? count : 1) * sizeof *wide);
    if (!wide)
        return mrt_error_set(err, MRT_E_NOMEM, path, no_mark,
                             "out of memory widening bfloat16 to float32");
    for (int64_t i = 0; i < count; i++)
        wide[i] = mrt_bf16_to_f32(((const uint16_t *)data)[i]);
    st = mrt_npy_write(path, MRT_F32, ndims, shape, wide, err);
    free(wide);
    return st;
}

mrt_status mrt_npy_write(const char *path, mrt_dtype t, int ndims,
                         const int64_t shape[], const void *data,
                         mrt_error *err)
{
    if (t == MRT_BF16)
        return write_bf16(path, ndims, shape, data, err);
    int64_t count = 0;
    mrt_status st = check_write_args(path, t, ndims, shape, data, &count, err);
    if (st)
        return st;
    char head[1024];
    size_t hlen = format_header(head, sizeof head, t, ndims, shape);
    struct npy_out out = {head, hlen, data, (size_t)count, mrt_dtype_size(t)};
    return mrt_write_atomically(path, "the array", put_npy, &out, err);
}
