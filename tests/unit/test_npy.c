/*
 * test_npy.c — .npy reading and writing (io/npy.c) and the values of
 * initialised tensors (ir/init.c).
 *
 * Files live in a fresh folder under /tmp, removed at the end.  Malformed
 * files are assembled byte by byte: each must give MRT_E_IO naming the
 * file, with no position, from both mrt_npy_read_header and mrt_npy_read,
 * and never crash (valgrind and ASan runs check the "never").
 */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "init.h"
#include "npy.h"

static char dir[256];

/* Runs outside any test, so no ck_assert here. */
static int make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/mrt_test_npy.XXXXXX");
    return mkdtemp(dir) != NULL;
}

static void remove_dir(void)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char p[600];
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
    closedir(d);
    rmdir(dir);
}

/* Number of entries in dir besides . and .. */
static int dir_entries(void)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

static void write_bytes(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(p, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

/* A file with the given version and header text (padded to 64 as numpy
 * does unless pad == 0), then nbytes of data. */
static void write_npy_raw(const char *path, int major, const char *header,
                          int pad, size_t nbytes)
{
    int lsize = major == 1 ? 2 : 4;
    size_t hlen = strlen(header) + 1;
    if (pad)
        hlen = (8 + lsize + hlen + 63) / 64 * 64 - 8 - lsize;
    size_t total = 8 + (size_t)lsize + hlen + nbytes;
    unsigned char *b = calloc(1, total);
    ck_assert_ptr_nonnull(b);
    memcpy(b, "\x93NUMPY", 6);
    b[6] = (unsigned char)major;
    for (int i = 0; i < lsize; i++)
        b[8 + i] = (unsigned char)(hlen >> (8 * i));
    memset(b + 8 + lsize, ' ', hlen);
    memcpy(b + 8 + lsize, header, strlen(header));
    b[8 + lsize + hlen - 1] = '\n';
    for (size_t i = 0; i < nbytes / 8; i++) { /* data: 0.5, 1.5, 2.5 ... */
        double v = (double)i + 0.5;
        memcpy(b + 8 + lsize + hlen + 8 * i, &v, 8);
    }
    write_bytes(path, b, total);
    free(b);
}

/* ---- round trips ---------------------------------------------------- */

static void round_trip(mrt_dtype t, int ndims, const int64_t shape[])
{
    char path[300];
    snprintf(path, sizeof path, "%s/x.npy", dir);
    int64_t count = 1;
    for (int i = 0; i < ndims; i++)
        count *= shape[i];
    int es = mrt_dtype_size(t);
    char *data = malloc((size_t)(count * es) + 1);
    ck_assert_ptr_nonnull(data);
    for (int64_t i = 0; i < count; i++) {
        double v = mrt_init_random_value(7, (uint64_t)i);
        float f = (float)v;
        memcpy(data + i * es, t == MRT_F64 ? (void *)&v : (void *)&f,
               (size_t)es);
    }
    mrt_error err = {0};
    ck_assert_int_eq(mrt_npy_write(path, t, ndims, shape, data, &err), MRT_OK);
    ck_assert_int_eq(dir_entries(), 1); /* no temporary file left */

    mrt_npy_header h;
    void *back = NULL;
    ck_assert_int_eq(mrt_npy_read(path, &h, &back, &err), MRT_OK);
    ck_assert_int_eq(h.dtype, t);
    ck_assert_int_eq(h.ndims, ndims);
    for (int i = 0; i < ndims; i++)
        ck_assert_int_eq(h.shape[i], shape[i]);
    ck_assert_int_eq(h.count, count);
    ck_assert_int_eq(h.data_offset % 64, 0);
    struct stat sb;
    ck_assert_int_eq(stat(path, &sb), 0);
    ck_assert_int_eq(sb.st_size, h.data_offset + count * es);
    ck_assert_int_eq(memcmp(back, data, (size_t)(count * es)), 0);

    mrt_npy_header h2;
    ck_assert_int_eq(mrt_npy_read_header(path, &h2, &err), MRT_OK);
    ck_assert_int_eq(h2.data_offset, h.data_offset);
    ck_assert_int_eq(err.code, MRT_OK);
    free(back);
    free(data);
    unlink(path);
}

START_TEST(round_trips)
{
    const int64_t s1[] = {7}, s2[] = {3, 5}, s3[] = {2, 3, 4}, s4[] = {1, 1};
    const int64_t big[] = {123456789012LL, 0};
    for (int t = 0; t < MRT_DTYPE_COUNT; t++) {
        if (t == MRT_BF16) /* written as float32: bf16_as_float32 */
            continue;
        if (t == MRT_U8) /* dropout masks: inputs made inside the run,
                            never read from or saved to a file */
            continue;
        round_trip((mrt_dtype)t, 1, s1);
        round_trip((mrt_dtype)t, 2, s2);
        round_trip((mrt_dtype)t, 3, s3);
        round_trip((mrt_dtype)t, 2, s4);
        round_trip((mrt_dtype)t, 0, NULL); /* a 0-d array */
        round_trip((mrt_dtype)t, 2, big);  /* empty, with a long header */
    }
}
END_TEST

/* numpy has no bfloat16: the file is float32, each value exact. */
START_TEST(bf16_as_float32)
{
    char path[300];
    snprintf(path, sizeof path, "%s/b.npy", dir);
    const uint16_t v[3] = {0x3f80, 0xc0a0, 0x3f81}; /* 1, -5, 1 + 2^-7 */
    const int64_t shape[] = {3};
    mrt_error err = {0};
    ck_assert_int_eq(mrt_npy_write(path, MRT_BF16, 1, shape, v, &err), 0);
    mrt_npy_header h;
    float *back = NULL;
    ck_assert_int_eq(mrt_npy_read(path, &h, (void **)&back, &err), MRT_OK);
    ck_assert_int_eq(h.dtype, MRT_F32);
    ck_assert(back[0] == 1.0f && back[1] == -5.0f && back[2] == 1 + 0x1p-7f);
    free(back);
    unlink(path);
}
END_TEST

START_TEST(header_text)
{
    /* what numpy writes for a (3,) float32 array, byte for byte */
    char path[300];
    snprintf(path, sizeof path, "%s/h.npy", dir);
    const float v[3] = {1, 2, 3};
    const int64_t shape[] = {3};
    ck_assert_int_eq(mrt_npy_write(path, MRT_F32, 1, shape, v, NULL), 0);
    char buf[128] = {0};
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fread(buf, 1, 128, f), 128);
    fclose(f);
    ck_assert_int_eq(memcmp(buf, "\x93NUMPY\x01\x00\x76\x00", 10), 0);
    const char *dict = "{'descr': '<f4', 'fortran_order': False, "
                       "'shape': (3,), }";
    ck_assert_int_eq(memcmp(buf + 10, dict, strlen(dict)), 0);
    ck_assert_int_eq(buf[126], ' ');
    ck_assert_int_eq(buf[127], '\n');
    unlink(path);
}
END_TEST

/* ---- hand-made files ----------------------------------------------- */

static void expect_read(const char *header, int major, int pad, int ndims,
                        int64_t d0, int64_t d1)
{
    char path[300];
    snprintf(path, sizeof path, "%s/r.npy", dir);
    write_npy_raw(path, major, header, pad, 6 * 8);
    mrt_npy_header h;
    void *data = NULL;
    mrt_error err = {0};
    ck_assert_msg(mrt_npy_read(path, &h, &data, &err) == MRT_OK, "%s: %s",
                  header, err.message);
    ck_assert_int_eq(h.dtype, MRT_F64);
    ck_assert_int_eq(h.ndims, ndims);
    ck_assert_int_eq(h.shape[0], d0);
    if (ndims > 1)
        ck_assert_int_eq(h.shape[1], d1);
    for (int i = 0; i < h.count; i++)
        ck_assert_double_eq(((double *)data)[i], i + 0.5);
    free(data);
    unlink(path);
}

START_TEST(handmade)
{
    expect_read("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), "
                "}",
                1, 1, 2, 2, 3);
    /* unpadded, other key order, no trailing comma, double quotes */
    expect_read("{\"shape\": (6,), \"descr\": \"<f8\", "
                "\"fortran_order\": False}",
                1, 0, 1, 6, 0);
    /* version 2.0 and 3.0 (4-byte header length), Python 2 longs */
    expect_read("{'descr': '<f8', 'fortran_order': False, 'shape': (3L, "
                "2L), }",
                2, 1, 2, 3, 2);
    expect_read("{'descr':'<f8','fortran_order':False,'shape':( 1 , 6 )}", 3, 1,
                2, 1, 6);
    /* fewer elements than the file holds: trailing bytes are ignored */
    expect_read("{'descr': '<f8', 'fortran_order': False, 'shape': (5,), }", 1,
                1, 1, 5, 0);
}
END_TEST

/* ---- malformed files ------------------------------------------------ */

static void expect_io_error(const char *path, const char *needle)
{
    mrt_npy_header h;
    void *data = (void *)&h;
    mrt_error err = {0};
    ck_assert_int_eq(mrt_npy_read_header(path, &h, &err), MRT_E_IO);
    ck_assert_int_eq(err.code, MRT_E_IO);
    ck_assert_str_eq(err.file, path);
    ck_assert_int_eq(err.line, 0);
    ck_assert_msg(strstr(err.message, needle), "'%s' lacks '%s'", err.message,
                  needle);
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(mrt_npy_read(path, &h, &data, &err), MRT_E_IO);
    ck_assert_ptr_null(data);
    ck_assert_msg(strstr(err.message, needle), "'%s' lacks '%s'", err.message,
                  needle);
    ck_assert_int_eq(mrt_npy_read(path, &h, &data, NULL), MRT_E_IO);
}

static void bad_header(const char *header, size_t nbytes, const char *needle)
{
    char path[300];
    snprintf(path, sizeof path, "%s/bad.npy", dir);
    write_npy_raw(path, 1, header, 1, nbytes);
    expect_io_error(path, needle);
    unlink(path);
}

START_TEST(malformed_headers)
{
    const char *ok_tail = "'fortran_order': False, 'shape': (2, 3), }";
    char h[400];
    bad_header("{'descr': '<f8', 'fortran_order': False, }", 48, "'shape'");
    bad_header("{'fortran_order': False, 'shape': (2, 3), }", 48, "'descr'");
    bad_header("{'descr': '<f8', 'shape': (2, 3), }", 48, "'fortran_order'");
    bad_header("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", 48,
               "Fortran");
    snprintf(h, sizeof h, "{'descr': '>f8', %s", ok_tail);
    bad_header(h, 48, "big-endian");
    snprintf(h, sizeof h, "{'descr': '<i2', %s", ok_tail);
    bad_header(h, 48, "dtype");
    snprintf(h, sizeof h, "{'descr': '<u2', %s", ok_tail);
    bad_header(h, 48, "dtype");
    snprintf(h, sizeof h, "{'descr': '>f2', %s", ok_tail);
    bad_header(h, 48, "big-endian");
    snprintf(h, sizeof h, "{'descr': [('x', '<f8')], %s", ok_tail);
    bad_header(h, 48, "descr");
    bad_header("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1, 1, "
               "1, 1, 1, 1, 1, 1, 1, 1, 1, 1), }",
               8, "more than 12 dims");
    bad_header("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }",
               47, "shorter");
    bad_header("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", 0,
               "shorter");
    bad_header("{'descr': '<f8', 'fortran_order': False, 'shape': (-1,), }", 8,
               "shape");
    bad_header("{'descr': '<f8', 'fortran_order': False, 'shape': "
               "(99999999999999999999,), }",
               8, "too large");
    bad_header("{'descr': '<f8', 'fortran_order': False, 'shape': "
               "(4294967296, 4294967296), }",
               8, "too large");
    bad_header("{'descr': '<f8', 'fortran_order': False, 'shape': 6, }", 48,
               "tuple");
    bad_header("{'descr': '<f8', 'fortran_order': False, 'shape': (2 3), }", 48,
               "shape");
    bad_header("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3)", 48,
               "expected");
    bad_header("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), } x",
               48, "after the dict");
    bad_header("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), "
               "'extra': 1}",
               48, "'extra'");
    bad_header("{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, "
               "'shape': (2, 3)}",
               48, "twice");
    bad_header("{'descr: '<f8', 'fortran_order': False, 'shape': (2, 3)}", 48,
               "expected");
    bad_header("{'descr': '<f8", 48, "unterminated");
    bad_header("{'descr' '<f8', 'fortran_order': False, 'shape': (2, 3)}", 48,
               "':'");
    bad_header("{'descr': '<f8', 'fortran_order': Maybe, 'shape': (2, 3)}", 48,
               "True or False");
    bad_header("[1, 2]", 48, "dict");
    bad_header("", 48, "dict");
}
END_TEST

START_TEST(malformed_files)
{
    char path[300];
    snprintf(path, sizeof path, "%s/bad.npy", dir);
    write_bytes(path, "", 0);
    expect_io_error(path, "not a .npy file");
    write_bytes(path, "\x93NUMPY", 6);
    expect_io_error(path, "not a .npy file");
    write_bytes(path, "PK\x03\x04 this is a zip file, not npy", 33);
    expect_io_error(path, "magic");
    write_bytes(path, "\x93NUMPY\x01\x00\x40", 9); /* ends in the length */
    expect_io_error(path, "not a .npy file");
    write_bytes(path, "\x93NUMPY\x02\x00\x40\x00", 10);
    expect_io_error(path, "truncated");
    write_bytes(path, "\x93NUMPY\x01\x00\x40\x00{'descr'", 17);
    expect_io_error(path, "truncated");
    write_bytes(path, "\x93NUMPY\x02\x00\xff\xff\xff\xff{'descr'", 19);
    expect_io_error(path, "too long");
    write_bytes(path, "\x93NUMPY\x04\x00\x10\x00{}              ", 26);
    expect_io_error(path, "version 4.0");
    /* a header with a NUL byte in it */
    write_bytes(path, "\x93NUMPY\x01\x00\x06\x00{'a\0'}", 16);
    expect_io_error(path, "malformed header");
    unlink(path);
    snprintf(path, sizeof path, "%s/missing.npy", dir);
    expect_io_error(path, "cannot open");
    expect_io_error(dir, "not a regular file");
}
END_TEST

/* ---- writing -------------------------------------------------------- */

START_TEST(write_failures)
{
    char path[400];
    const double v[4] = {1, 2, 3, 4};
    const int64_t shape[] = {2, 2};
    mrt_error err = {0};
    snprintf(path, sizeof path, "%s/no/such/folder/x.npy", dir);
    ck_assert_int_eq(mrt_npy_write(path, MRT_F64, 2, shape, v, &err), MRT_E_IO);
    ck_assert_str_eq(err.file, path);
    ck_assert_int_eq(err.line, 0);
    ck_assert_ptr_nonnull(strstr(err.message, "cannot write the array: "));
    ck_assert_int_eq(dir_entries(), 0);

    /* a folder in the way */
    snprintf(path, sizeof path, "%s/taken.npy", dir);
    ck_assert_int_eq(mkdir(path, 0777), 0);
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(mrt_npy_write(path, MRT_F64, 2, shape, v, &err), MRT_E_IO);
    ck_assert_ptr_nonnull(strstr(err.message, "it is a folder"));
    ck_assert_int_eq(dir_entries(), 1); /* only the folder: no temp file */
    rmdir(path);

    /* bad arguments */
    const int64_t neg[] = {2, -2};
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(mrt_npy_write(path, MRT_F64, 2, neg, v, &err),
                     MRT_E_USAGE);
    ck_assert_int_eq(mrt_npy_write(path, MRT_F64, 13, shape, v, NULL),
                     MRT_E_USAGE);
    ck_assert_int_eq(mrt_npy_write(path, MRT_F64, 2, shape, NULL, NULL),
                     MRT_E_USAGE);
    ck_assert_int_eq(dir_entries(), 0);

    /* overwriting an existing file replaces it whole */
    snprintf(path, sizeof path, "%s/x.npy", dir);
    ck_assert_int_eq(mrt_npy_write(path, MRT_F64, 2, shape, v, NULL), 0);
    const int64_t shape1[] = {1};
    ck_assert_int_eq(mrt_npy_write(path, MRT_F64, 1, shape1, v + 3, NULL), 0);
    mrt_npy_header h;
    void *data;
    ck_assert_int_eq(mrt_npy_read(path, &h, &data, NULL), 0);
    ck_assert_int_eq(h.count, 1);
    ck_assert_double_eq(((double *)data)[0], 4);
    free(data);
    ck_assert_int_eq(dir_entries(), 1);
    unlink(path);
}
END_TEST

/* A link planted where the old writer put its temporary file
 * (PATH.tmp.PID) must not be followed: its target stays as it was, and
 * the link stays a link. */
START_TEST(planted_link)
{
    char path[400], link[450], victim[400], buf[16] = {0};
    snprintf(path, sizeof path, "%s/p.npy", dir);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    snprintf(link, sizeof link, "%s.tmp.%ld", path, (long)getpid());
    write_bytes(victim, "precious", 8);
    ck_assert_int_eq(symlink(victim, link), 0);
    const double v[2] = {1, 2};
    const int64_t shape[] = {2};
    ck_assert_int_eq(mrt_npy_write(path, MRT_F64, 1, shape, v, NULL), 0);
    FILE *f = fopen(victim, "rb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fread(buf, 1, sizeof buf, f), 8);
    fclose(f);
    ck_assert_str_eq(buf, "precious");
    struct stat sb;
    ck_assert_int_eq(lstat(link, &sb), 0);
    ck_assert(S_ISLNK(sb.st_mode));
    ck_assert_int_eq(lstat(path, &sb), 0);
    ck_assert(S_ISREG(sb.st_mode));
    ck_assert_int_eq(dir_entries(), 3); /* p.npy, the link, the victim */
    unlink(link);
    unlink(victim);
    unlink(path);
}
END_TEST

/* ---- init values ---------------------------------------------------- */

START_TEST(init_values)
{
    /* FNV-1a 64 test vectors */
    ck_assert_uint_eq(mrt_init_seed_from_name(""), 0xcbf29ce484222325ull);
    ck_assert_uint_eq(mrt_init_seed_from_name("a"), 0xaf63dc4c8601ec8cull);
    ck_assert_uint_eq(mrt_init_seed_from_name("foobar"), 0x85944171f73967e8ull);
    /* splitmix64 seeded with 0 first outputs 0xe220a8397b1dcdaf */
    ck_assert_double_eq(mrt_init_random_value(0, 0),
                        (double)(0xe220a8397b1dcdafull >> 11) * 0x1p-52 - 1);
    double sum = 0, lo = 1, hi = -1;
    for (uint64_t i = 0; i < 100000; i++) {
        double v = mrt_init_random_value(42, i);
        ck_assert(v >= -1 && v < 1);
        ck_assert_double_eq(v, mrt_init_random_value(42, i));
        sum += v;
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    ck_assert(sum / 100000 > -0.01 && sum / 100000 < 0.01);
    ck_assert(lo < -0.999 && hi > 0.999);
    ck_assert(mrt_init_random_value(1, 5) != mrt_init_random_value(2, 5));
}
END_TEST

/* mrt_npy_read_same: the data of the file the header came from, and
 * MRT_E_RUNTIME naming the file once it was replaced or rewritten. */
START_TEST(read_same)
{
    char path[300], other[300];
    snprintf(path, sizeof path, "%s/same.npy", dir);
    snprintf(other, sizeof other, "%s/other.npy", dir);
    double v[3] = {1, 2, 3}, w[2] = {5, 6};
    int64_t three[1] = {3}, two[1] = {2};
    mrt_error err = {0};
    ck_assert_int_eq(mrt_npy_write(path, MRT_F64, 1, three, v, &err), MRT_OK);
    mrt_npy_header h;
    void *data = NULL;
    ck_assert_int_eq(mrt_npy_read_header(path, &h, &err), MRT_OK);
    ck_assert_int_eq(mrt_npy_read_same(path, &h, &data, &err), MRT_OK);
    ck_assert_int_eq(memcmp(data, v, sizeof v), 0);
    free(data);
    /* another file renamed over it (mrt_npy_write renames): refused */
    ck_assert_int_eq(mrt_npy_write(other, MRT_F64, 1, two, w, &err), MRT_OK);
    ck_assert_int_eq(rename(other, path), 0);
    ck_assert_int_eq(mrt_npy_read_same(path, &h, &data, &err), MRT_E_RUNTIME);
    ck_assert_ptr_null(data);
    ck_assert_str_eq(err.file, path);
    ck_assert_ptr_nonnull(strstr(err.message, "replaced by another file"));
    /* rewritten in place with the same size: refused (modified) */
    ck_assert_int_eq(mrt_npy_read_header(path, &h, &err), MRT_OK);
    usleep(20000); /* past the file system's clock tick */
    FILE *f = fopen(path, "r+b");
    ck_assert_ptr_nonnull(f);
    fseek(f, h.data_offset, SEEK_SET);
    fwrite(v, sizeof *v, 1, f);
    fclose(f);
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(mrt_npy_read_same(path, &h, &data, &err), MRT_E_RUNTIME);
    ck_assert_ptr_nonnull(strstr(err.message, "modified"));
    /* gone: the open's error */
    unlink(path);
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(mrt_npy_read_same(path, &h, &data, &err), MRT_E_IO);
}
END_TEST

int main(void)
{
    if (!make_dir()) {
        perror("mkdtemp");
        return 1;
    }
    Suite *s = suite_create("npy");
    TCase *tc = tcase_create("npy");
    tcase_add_test(tc, round_trips);
    tcase_add_test(tc, header_text);
    tcase_add_test(tc, bf16_as_float32);
    tcase_add_test(tc, handmade);
    tcase_add_test(tc, malformed_headers);
    tcase_add_test(tc, malformed_files);
    tcase_add_test(tc, write_failures);
    tcase_add_test(tc, planted_link);
    tcase_add_test(tc, init_values);
    tcase_add_test(tc, read_same);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    remove_dir();
    return failed ? 1 : 0;
}
