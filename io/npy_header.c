/*
 * npy_header.c — the header dict of a .npy file: a Python dict literal
 * such as {'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }.
 *
 * A tiny recursive-descent reader that knows only the literals numpy
 * writes (strings, True/False and tuples of ints), then the checks of
 * the values (a little-endian float32 or float64, C order, a shape of at
 * most MRT_MAX_DIMS dims whose byte count fits 64 bits).  Nothing in the
 * text is trusted: every malformation is an MRT_E_IO error naming the
 * file, never a crash.  Reading the file around it is npy.c's job.
 */
#include "npy_header.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"

static const mrt_mark no_mark = {0, 0};

/* Records an MRT_E_IO error about the file at path. */
mrt_status mrt_npy_error(mrt_error *err, const char *path, const char *fmt, ...)
{
    char msg[sizeof err->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return mrt_error_set(err, MRT_E_IO, path, no_mark, "%s", msg);
}

typedef struct hdr_parser {
    const char *p, *end;
    const char *path;
    mrt_error *err;
} hdr_parser;

static void skip_space(hdr_parser *hp)
{
    while (hp->p < hp->end && isspace((unsigned char)*hp->p))
        hp->p++;
}

/* Consumes ch (after spaces) if it is next; returns whether it was. */
static int accept(hdr_parser *hp, char ch)
{
    skip_space(hp);
    if (hp->p < hp->end && *hp->p == ch) {
        hp->p++;
        return 1;
    }
    return 0;
}

/* A quoted string (either quote) into buf; what names it for messages. */
static mrt_status parse_string(hdr_parser *hp, const char *what, char *buf,
                               size_t size)
{
    skip_space(hp);
    if (hp->p >= hp->end || (*hp->p != '\'' && *hp->p != '"'))
        return mrt_npy_error(
            hp->err, hp->path,
            "malformed header: expected a quoted string for %s", what);
    char quote = *hp->p++;
    const char *close = memchr(hp->p, quote, (size_t)(hp->end - hp->p));
    if (!close)
        return mrt_npy_error(hp->err, hp->path,
                             "malformed header: unterminated string in %s",
                             what);
    size_t n = (size_t)(close - hp->p);
    if (n >= size)
        return mrt_npy_error(hp->err, hp->path,
                             "malformed header: %s is too long", what);
    memcpy(buf, hp->p, n);
    buf[n] = '\0';
    hp->p = close + 1;
    return MRT_OK;
}

static mrt_status parse_bool(hdr_parser *hp, int *v)
{
    skip_space(hp);
    size_t left = (size_t)(hp->end - hp->p);
    if (left >= 4 && !memcmp(hp->p, "True", 4)) {
        hp->p += 4;
        *v = 1;
    } else if (left >= 5 && !memcmp(hp->p, "False", 5)) {
        hp->p += 5;
        *v = 0;
    } else {
        return mrt_npy_error(hp->err, hp->path,
                             "malformed header: 'fortran_order' must be True "
                             "or False");
    }
    return MRT_OK;
}

/* A non-negative int literal (Python 2 numpy wrote a trailing L). */
static mrt_status parse_int(hdr_parser *hp, int64_t *v)
{
    skip_space(hp);
    if (hp->p >= hp->end || !isdigit((unsigned char)*hp->p))
        return mrt_npy_error(hp->err, hp->path,
                             "malformed header: 'shape' must be a tuple of "
                             "non-negative integers");
    int64_t x = 0;
    while (hp->p < hp->end && isdigit((unsigned char)*hp->p)) {
        int d = *hp->p++ - '0';
        if (x > (INT64_MAX - d) / 10)
            return mrt_npy_error(hp->err, hp->path,
                                 "header: a 'shape' entry is too large");
        x = 10 * x + d;
    }
    if (hp->p < hp->end && (*hp->p == 'L' || *hp->p == 'l'))
        hp->p++;
    *v = x;
    return MRT_OK;
}

/* '(' [int {',' int} [',']] ')' */
static mrt_status parse_shape(hdr_parser *hp, mrt_npy_header *h)
{
    if (!accept(hp, '('))
        return mrt_npy_error(hp->err, hp->path,
                             "malformed header: 'shape' must be a tuple");
    h->ndims = 0;
    for (;;) {
        if (accept(hp, ')'))
            return MRT_OK;
        int64_t v = 0;
        mrt_status st = parse_int(hp, &v);
        if (st)
            return st;
        if (h->ndims == MRT_MAX_DIMS)
            return mrt_npy_error(hp->err, hp->path,
                                 "the array has more than %d dims (meshrt "
                                 "supports at most %d)",
                                 MRT_MAX_DIMS, MRT_MAX_DIMS);
        h->shape[h->ndims++] = v;
        if (accept(hp, ','))
            continue;
        if (accept(hp, ')'))
            return MRT_OK;
        return mrt_npy_error(
            hp->err, hp->path,
            "malformed header: expected ',' or ')' in 'shape'");
    }
}

enum { KEY_DESCR = 1, KEY_FORTRAN = 2, KEY_SHAPE = 4 };

/* One "'key': value" entry; *seen collects the keys met so far. */
static mrt_status parse_entry(hdr_parser *hp, mrt_npy_header *h, char *descr,
                              size_t dsize, int *fortran, unsigned *seen)
{
    char key[32];
    mrt_status st = parse_string(hp, "a key", key, sizeof key);
    if (st)
        return st;
    if (!accept(hp, ':'))
        return mrt_npy_error(hp->err, hp->path,
                             "malformed header: expected ':' after '%s'", key);
    unsigned bit = !strcmp(key, "descr")           ? KEY_DESCR
                   : !strcmp(key, "fortran_order") ? KEY_FORTRAN
                   : !strcmp(key, "shape")         ? KEY_SHAPE
                                                   : 0;
    if (!bit)
        return mrt_npy_error(hp->err, hp->path,
                             "unexpected key '%s' in the header (expected "
                             "'descr', 'fortran_order' and 'shape')",
                             key);
    if (*seen & bit)
        return mrt_npy_error(hp->err, hp->path,
                             "key '%s' appears twice in the header", key);
    *seen |= bit;
    if (bit == KEY_DESCR)
        return parse_string(hp, "'descr'", descr, dsize);
    if (bit == KEY_FORTRAN)
        return parse_bool(hp, fortran);
    return parse_shape(hp, h);
}

/* Checks the values once the dict is read. */
static mrt_status check_dict(hdr_parser *hp, mrt_npy_header *h,
                             const char *descr, int fortran, unsigned seen)
{
    static const char *const names[] = {"descr", "fortran_order", "shape"};
    for (int i = 0; i < 3; i++)
        if (!(seen & (1u << i)))
            return mrt_npy_error(hp->err, hp->path,
                                 "the header has no '%s' key", names[i]);
    if (!strcmp(descr, "<f4"))
        h->dtype = MRT_F32;
    else if (!strcmp(descr, "<f2"))
        h->dtype = MRT_F16;
    else if (!strcmp(descr, "<f8"))
        h->dtype = MRT_F64;
    else if (!strcmp(descr, "<i4") || !strcmp(descr, "<i8")) {
        h->dtype = MRT_I32; /* index tensors: token ids, labels */
        h->wide = descr[2] == '8';
    } else if (!strcmp(descr, ">f4") || !strcmp(descr, ">f8") ||
               !strcmp(descr, ">f2") || !strcmp(descr, ">i4") ||
               !strcmp(descr, ">i8"))
        return mrt_npy_error(hp->err, hp->path,
                             "big-endian data ('%s') is not supported (save "
                             "it as '<%s')",
                             descr, descr + 1);
    else
        return mrt_npy_error(
            hp->err, hp->path,
            "unsupported dtype '%s' (meshrt reads '<f2' (float16), '<f4' "
            "(float32), '<f8' (float64), '<i4' (int32) and '<i8' (int64 "
            "indices, read as int32))",
            descr);
    if (fortran)
        return mrt_npy_error(hp->err, hp->path,
                             "the array is in Fortran order (meshrt reads C "
                             "order only: save np.ascontiguousarray(x))");
    return MRT_OK;
}

static mrt_status parse_dict(hdr_parser *hp, mrt_npy_header *h)
{
    char descr[32] = "";
    int fortran = 0;
    unsigned seen = 0;
    if (!accept(hp, '{'))
        return mrt_npy_error(hp->err, hp->path,
                             "malformed header: expected a dict starting "
                             "with '{'");
    while (!accept(hp, '}')) {
        mrt_status st = parse_entry(hp, h, descr, sizeof descr, &fortran,
                                    &seen);
        if (st)
            return st;
        if (!accept(hp, ',')) {
            if (!accept(hp, '}'))
                return mrt_npy_error(hp->err, hp->path,
                                     "malformed header: expected ',' or '}'");
            break;
        }
    }
    skip_space(hp);
    if (hp->p != hp->end)
        return mrt_npy_error(
            hp->err, hp->path,
            "malformed header: unexpected text after the dict");
    return check_dict(hp, h, descr, fortran, seen);
}

/* Element count and byte size of the shape, with overflow checks. */
mrt_status mrt_npy_shape_count(const char *path, mrt_npy_header *h,
                               mrt_error *err)
{
    int64_t esize = h->wide ? 8 : mrt_dtype_size(h->dtype), count = 1;
    for (int i = 0; i < h->ndims; i++) {
        if (h->shape[i] && count > INT64_MAX / esize / h->shape[i])
            return mrt_npy_error(err, path,
                                 "the array is too large (shape "
                                 "overflows 64-bit byte counts)");
        count *= h->shape[i];
    }
    h->count = count;
    return MRT_OK;
}

mrt_status mrt_npy_parse_dict(const char *text, size_t len, const char *path,
                              mrt_npy_header *h, mrt_error *err)
{
    hdr_parser hp = {text, text + len, path, err};
    mrt_status st = parse_dict(&hp, h);
    return st ? st : mrt_npy_shape_count(path, h, err);
}
