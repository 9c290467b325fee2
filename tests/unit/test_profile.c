/*
 * test_profile.c — machine profile files (cost/profile_io.c): a saved
 * profile loads back to the same numbers, a file that names only some
 * keys changes only those, `measured:` is skipped, bad files fail with
 * one positioned error (checked word for word) and leave the profile as
 * it was (numbers out of the limits that keep modeled times finite
 * among them), a missing file is an i/o error, and saving creates missing
 * folders and leaves no temporary file behind.
 */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cost.h"
#include "profile_io.h"

static char dir[64];

/* A gemm row of an n x n x n product. */
static mrt_gemm_row cube_row(int64_t n, int form, double flops, int dtype)
{
    return (mrt_gemm_row){n, form, flops, dtype, MRT_GEMM_CUBE, 0};
}

/* A float32 gemm row of a thin product in form nn: side of n, the
 * other two of other. */
static mrt_gemm_row thin_row(int64_t n, int side, double flops, int64_t other)
{
    return (mrt_gemm_row){n, MRT_GEMM_NN, flops, MRT_F32, side, other};
}

static void make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/mrt_profile_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void remove_dir(const char *d)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
    ck_assert_int_eq(system(cmd), 0);
}

/* Writes text to dir/name; returns the path in buf. */
static const char *write_file(const char *name, const char *text, char *buf,
                              size_t size)
{
    snprintf(buf, size, "%s/%s", dir, name);
    FILE *f = fopen(buf, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return buf;
}

static int close_to(double a, double b)
{
    return fabs(a - b) <= 1e-12 * fmax(fabs(a), fabs(b));
}

static void assert_same_numbers(const mrt_profile *a, const mrt_profile *b)
{
    ck_assert_int_eq(a->naxes, b->naxes);
    for (int i = 0; i < a->naxes; i++) {
        ck_assert_str_eq(a->axis[i], b->axis[i]);
        ck_assert(close_to(a->link[i].latency_s, b->link[i].latency_s));
        ck_assert(close_to(a->link[i].bandwidth_Bps, b->link[i].bandwidth_Bps));
    }
    ck_assert(close_to(a->fallback.latency_s, b->fallback.latency_s));
    ck_assert(close_to(a->fallback.bandwidth_Bps, b->fallback.bandwidth_Bps));
    for (int t = 0; t < MRT_COMPUTE_DTYPE_COUNT; t++)
        ck_assert(close_to(a->gemm_flops[t], b->gemm_flops[t]));
    ck_assert(close_to(a->reduce_flops, b->reduce_flops));
    ck_assert(close_to(a->copy_Bps, b->copy_Bps));
    ck_assert_str_eq(a->kernel, b->kernel);
    ck_assert_int_eq(a->ranks_per_node, b->ranks_per_node);
    ck_assert(close_to(a->intra.latency_s, b->intra.latency_s));
    ck_assert(close_to(a->intra.bandwidth_Bps, b->intra.bandwidth_Bps));
    ck_assert(close_to(a->inter.latency_s, b->inter.latency_s));
    ck_assert(close_to(a->inter.bandwidth_Bps, b->inter.bandwidth_Bps));
}

static mrt_profile sample(void)
{
    mrt_profile p;
    mrt_profile_default(&p);
    snprintf(p.source, sizeof p.source,
             "calibrated on \"box\"\\1 with 4 "
             "ranks, 2026-11-29T20:30:00Z");
    snprintf(p.kernel, sizeof p.kernel, "zen3");
    p.gemm_flops[MRT_F32] = 50.2e9;
    p.gemm_flops[MRT_F64] = 1.0 / 3.0 * 1e11;
    p.reduce_flops = 1.5e9;
    p.copy_Bps = 8e9;
    p.fallback = (mrt_link){2.25e-6, 5.5e9};
    mrt_profile_set_link(&p, "data", (mrt_link){1.1e-6, 6.2e9});
    mrt_profile_set_link(&p, "model", (mrt_link){0, 1e12});
    p.ranks_per_node = 8;
    p.intra = (mrt_link){3e-6, 300e9};
    p.inter = (mrt_link){5.5e-6, 25e9};
    return p;
}

START_TEST(round_trip)
{
    make_dir();
    char path[256], want[2 * PATH_MAX];
    /* Folders that do not exist yet are made. */
    snprintf(path, sizeof path, "%s/a/b/profile.yaml", dir);
    mrt_profile p = sample(), q;
    mrt_error err = {0};
    ck_assert_int_eq(mrt_profile_save(path, &p, &err), MRT_OK);
    mrt_profile_default(&q);
    ck_assert_int_eq(mrt_profile_load(path, &q, &err), MRT_OK);
    assert_same_numbers(&p, &q);
    snprintf(want, sizeof want, "%s (%s)", path, p.source);
    ck_assert_str_eq(q.source, want);
    /* Saved again over itself, with a measured block: the same numbers,
     * and only the profile in the folder. */
    ck_assert_int_eq(mrt_profile_save_measured(
                         path, &q,
                         "ranks: 4\n"
                         "allreduce:\n  - {bytes: 8, measured_us: 3}\n",
                         &err),
                     MRT_OK);
    mrt_profile r;
    mrt_profile_default(&r);
    ck_assert_int_eq(mrt_profile_load(path, &r, &err), MRT_OK);
    assert_same_numbers(&p, &r);
    snprintf(path, sizeof path, "%s/a/b", dir);
    DIR *d = opendir(path);
    struct dirent *e;
    int files = 0;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') {
            ck_assert_str_eq(e->d_name, "profile.yaml");
            files++;
        }
    closedir(d);
    ck_assert_int_eq(files, 1);
    remove_dir(dir);
}
END_TEST

START_TEST(partial_files_keep_the_rest)
{
    make_dir();
    char path[256];
    mrt_error err = {0};
    mrt_profile p, def;
    mrt_profile_default(&def);
    p = def;
    write_file("p.yaml",
               "# only some keys\n"
               "copy_GBps: 3\n"
               "default: {latency_us: 7}\n"
               "axes:\n"
               "  data: {bandwidth_GBps: 2}\n"
               "measured:\n"
               "  anything: [1, {goes: here}]\n"
               "  unknown_keys: too\n",
               path, sizeof path);
    ck_assert_int_eq(mrt_profile_load(path, &p, &err), MRT_OK);
    ck_assert(close_to(p.copy_Bps, 3e9));
    ck_assert(close_to(p.fallback.latency_s, 7e-6));
    ck_assert(close_to(p.fallback.bandwidth_Bps, def.fallback.bandwidth_Bps));
    ck_assert_int_eq(p.naxes, 1);
    ck_assert(close_to(p.link[0].latency_s, 7e-6)); /* from default: */
    ck_assert(close_to(p.link[0].bandwidth_Bps, 2e9));
    ck_assert(close_to(p.gemm_flops[MRT_F32], def.gemm_flops[MRT_F32]));
    ck_assert_str_eq(p.source, path);
    remove_dir(dir);
}
END_TEST

static const struct bad {
    const char *text;
    mrt_status code;
    const char *error; /* after "PATH:" */
} bad[] = {
    {"source: x\nbogus: 1\n", MRT_E_SPEC,
     "2:1: error: unknown key 'bogus' in the profile (expected: source, "
     "kernel, reduce_gflops, copy_GBps, default, axes, nodes, measured, "
     "collectives, gemm, products, maps, ranks, cores, device_memory)"},
    {"default: {latency_us: fast}\n", MRT_E_SPEC,
     "1:23: error: 'latency_us' in 'default' must be a number from 0 to "
     "1e+09 (microseconds), got 'fast'"},
    {"axes:\n  data: {latency_us: 1, bandwidth_GBps: 0}\n", MRT_E_SPEC,
     "2:41: error: 'bandwidth_GBps' in axis 'data' must be a number from "
     "1e-09 to 1e+12 (GB/s), got '0'"},
    /* Limits that keep every modeled time finite (profile.h): tiny and
     * subnormal rates (inf seconds), rates whose bytes per second
     * overflow a double, latencies past 1000 s or below 0. */
    {"default: {latency_us: 1, bandwidth_GBps: 1e-310}\n", MRT_E_SPEC,
     "1:42: error: 'bandwidth_GBps' in 'default' must be a number from "
     "1e-09 to 1e+12 (GB/s), got '1e-310'"},
    {"axes:\n  data: {bandwidth_GBps: 9e-10}\n", MRT_E_SPEC,
     "2:26: error: 'bandwidth_GBps' in axis 'data' must be a number from "
     "1e-09 to 1e+12 (GB/s), got '9e-10'"},
    {"kernel: {gflops_float32: 5e-324}\n", MRT_E_SPEC,
     "1:26: error: 'gflops_float32' in 'kernel' must be a number from 1e-09 "
     "to 1e+12 (GFLOP/s), got '5e-324'"},
    {"reduce_gflops: 1e-12\n", MRT_E_SPEC,
     "1:16: error: 'reduce_gflops' in the profile must be a number from "
     "1e-09 to 1e+12 (GFLOP/s), got '1e-12'"},
    {"copy_GBps: 1e308\n", MRT_E_SPEC,
     "1:12: error: 'copy_GBps' in the profile must be a number from 1e-09 "
     "to 1e+12 (GB/s), got '1e308'"},
    {"axes:\n  data: {latency_us: 1.5e9}\n", MRT_E_SPEC,
     "2:22: error: 'latency_us' in axis 'data' must be a number from 0 to "
     "1e+09 (microseconds), got '1.5e9'"},
    {"default: {latency_us: -1e-300}\n", MRT_E_SPEC,
     "1:23: error: 'latency_us' in 'default' must be a number from 0 to "
     "1e+09 (microseconds), got '-1e-300'"},
    {"copy_GBps: 1\ncopy_GBps: 2\n", MRT_E_SPEC,
     "2:1: error: duplicate key 'copy_GBps' in the profile (first at 1:1)"},
    {"- 1\n", MRT_E_SPEC,
     "1:1: error: expected a mapping at the top of the profile, got a "
     "sequence"},
    {"", MRT_E_SPEC,
     "1:1: error: the profile is empty (meshrt calibrate writes one)"},
    {"# nothing\n", MRT_E_SPEC,
     "1:1: error: the profile is empty (meshrt calibrate writes one)"},
    {"kernel: {family: zen3, gflops: 5}\n", MRT_E_SPEC,
     "1:24: error: unknown key 'gflops' in 'kernel' (expected: family, "
     "gflops_float32, gflops_float64)"},
    {"copy_GBps: \"8\"\n", MRT_E_SPEC,
     "1:12: error: 'copy_GBps' in the profile must be a number from 1e-09 "
     "to 1e+12 (GB/s), got the string '8'"},
    {"copy_GBps: 1\n---\ncopy_GBps: 2\n", MRT_E_SPEC,
     "2:1: error: a profile is one YAML document, but a second one starts "
     "here"},
    {"axes:\n  2d: {latency_us: 1}\n", MRT_E_SPEC,
     "2:3: error: invalid mesh axis name '2d' (a name starts with a letter "
     "or '_' and has only letters, digits and '_', at most 63)"},
    {"axes: [data]\n", MRT_E_SPEC,
     "1:7: error: expected a mapping for 'axes', got a sequence"},
    {"source: [a]\n", MRT_E_SPEC,
     "1:9: error: 'source' must be text, got a sequence"},
    {"kernel: {family: zen3\n", MRT_E_SYNTAX,
     "2:1: error: did not find expected ',' or '}' (while parsing a flow "
     "mapping that starts at 1:9)"},
    /* Read by io/'s YAML reader, as the spec is: one document only (an
     * empty second one too, and before the first one's alias errors),
     * the depth bounded, aliases resolved, keys worded as the spec's. */
    {"copy_GBps: 1\n---\n", MRT_E_SPEC,
     "2:1: error: a profile is one YAML document, but a second one starts "
     "here"},
    {"copy_GBps: *x\n---\n", MRT_E_SPEC,
     "2:1: error: a profile is one YAML document, but a second one starts "
     "here"},
    {"copy_GBps: *x\n", MRT_E_SYNTAX, "1:12: error: found undefined alias"},
    {"measured: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
     "\n",
     MRT_E_SPEC, "1:42: error: the profile nests deeper than 32 levels"},
    {"\"bogus\": 1\n", MRT_E_SPEC,
     "1:1: error: unknown key 'bogus' in the profile (expected: source, "
     "kernel, reduce_gflops, copy_GBps, default, axes, nodes, measured, "
     "collectives, gemm, products, maps, ranks, cores, device_memory)"},
    {"nodes: {intra: {latency_us: 1}}\n", MRT_E_SPEC,
     "1:8: error: 'nodes' needs 'ranks_per_node' (the ranks on one node)"},
    {"nodes: {ranks_per_node: 2.5}\n", MRT_E_SPEC,
     "1:25: error: 'ranks_per_node' in 'nodes' must be an integer from 1 "
     "to 2147483647, got '2.5'"},
    {"nodes: {ranks_per_node: 2, inter: {bandwidth_GBps: 0}}\n", MRT_E_SPEC,
     "1:52: error: 'bandwidth_GBps' in 'inter' in 'nodes' must be a number "
     "from 1e-09 to 1e+12 (GB/s), got '0'"},
    {"nodes: {ranks_per_node: 2, links: {}}\n", MRT_E_SPEC,
     "1:28: error: unknown key 'links' in 'nodes' (expected: "
     "ranks_per_node, intra, inter)"},
    {"default: &l {latency_us: 1}\naxes: {data: *l, data: *l}\n", MRT_E_SPEC,
     "2:18: error: duplicate key 'data' in 'axes' (first at 2:8)"},
    /* The rows by form and by function (profile_rows.c). */
    {"gemm: [{n: 8, form: nx, gflops: 1}]\n", MRT_E_SPEC,
     "1:21: error: 'form' of a gemm row must be nn, nt, tn or tt, got 'nx'"},
    {"maps: [{fn: Gelu, elements: 8, ns_per_element: 1}]\n", MRT_E_SPEC,
     "1:13: error: 'fn' of a map row must be a function's name (lower-case "
     "letters, digits and '_', at most 23), got 'Gelu'"},
    {"maps: [{fn: gelu, elements: 8}]\n", MRT_E_SPEC,
     "1:8: error: a map row needs 'ns_per_element'"},
    {"maps: [{fn: gelu, elements: 0, ns_per_element: 1}]\n", MRT_E_SPEC,
     "1:29: error: 'elements' of a map row must be a positive integer, got "
     "'0'"},
    {"maps: [{fn: gelu, elements: 8, ns_per_element: 0}]\n", MRT_E_SPEC,
     "1:48: error: 'ns_per_element' of a map row must be a number above 0 "
     "and at most 1e+09, got '0'"},
    {"maps: [{fn: gelu, elements: 8, ns_per_element: 1, gflops: 2}]\n",
     MRT_E_SPEC,
     "1:51: error: unknown key 'gflops' in a map row (expected: fn, "
     "elements, ns_per_element, dtype)"},
    {"maps: [{fn: gelu, dtype: bfloat16, elements: 8, ns_per_element: 1}]\n",
     MRT_E_SPEC,
     "1:26: error: 'dtype' of a map row must be float32 or float64 (the "
     "types the kernels compute in), got 'bfloat16'"},
    {"maps: [{fn: gelu, elements: 8, ns_per_element: 1},\n"
     "       {fn: exp, elements: 8, ns_per_element: 1, dtype: [float64]}]\n",
     MRT_E_SPEC,
     "2:57: error: 'dtype' of a map row must be float32 or float64 (the "
     "types the kernels compute in), got a sequence"},
    {"maps: {fn: gelu}\n", MRT_E_SPEC,
     "1:7: error: expected a sequence for 'maps', got a mapping"},
    {"gemm: [{n: 8, gflops: 1},\n"
     "       {n: 16, form: tn, dtype: float16, gflops: 2}]\n",
     MRT_E_SPEC,
     "2:33: error: 'dtype' of a gemm row must be float32 or float64 (the "
     "types the kernels compute in), got 'float16'"},
    {"gemm: [{n: 8, gflops: 1, dtype: {t: float64}}]\n", MRT_E_SPEC,
     "1:33: error: 'dtype' of a gemm row must be float32 or float64 (the "
     "types the kernels compute in), got a mapping"},
    {"gemm: [{n: 8, gflops: 1, type: float64}]\n", MRT_E_SPEC,
     "1:26: error: unknown key 'type' in a gemm row (expected: n, gflops, "
     "form, dtype, thin, other)"},
    {"gemm: [{n: 8, gflops: 1, thin: m}]\n", MRT_E_SPEC,
     "1:32: error: a thin gemm row needs both 'thin' (its short side) and "
     "'other' (the size of the other two)"},
    {"gemm: [{n: 8, gflops: 1, thin: x, other: 64}]\n", MRT_E_SPEC,
     "1:32: error: 'thin' of a gemm row must be m, n or k, got 'x'"},
    {"gemm: [{n: 64, gflops: 1, thin: k, other: 64}]\n", MRT_E_SPEC,
     "1:43: error: 'other' of a thin gemm row (64) must be larger than its "
     "'n' (64)"},
    {"products: [{m: 8, n: 8, gflops: 1}]\n", MRT_E_SPEC,
     "1:12: error: a products row needs 'k'"},
    {"products: [{m: 8, n: 8, k: 0, gflops: 1}]\n", MRT_E_SPEC,
     "1:28: error: 'k' of a products row must be a positive integer, got '0'"},
    {"products: [{m: 8, n: 8, k: 8, form: nx, gflops: 1}]\n", MRT_E_SPEC,
     "1:37: error: 'form' of a products row must be nn, nt, tn or tt, got "
     "'nx'"},
    {"products: [{m: 8, n: 8, k: 8, gflops: 1},\n"
     "           {m: 8, n: 8, k: 8, form: nn, gflops: 2}]\n",
     MRT_E_SPEC, "1:11: error: 'products' lists 8 x 8 x 8 (nn) twice"},
    {"products: [{m: 8, n: 8, k: 8, c: cols, gflops: 1}]\n", MRT_E_SPEC,
     "1:34: error: 'c' of a products row must be rows or columns (how C is "
     "stored), got 'cols'"},
};

START_TEST(bad_files)
{
    make_dir();
    char path[256], want[1024], got[1024];
    mrt_profile def;
    mrt_profile_default(&def);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mrt_profile p = def;
        mrt_error err = {0};
        write_file("bad.yaml", bad[i].text, path, sizeof path);
        mrt_status st = mrt_profile_load(path, &p, &err);
        snprintf(want, sizeof want, "%s:%s", path, bad[i].error);
        ck_assert_str_eq(mrt_error_format(&err, got, sizeof got), want);
        ck_assert_int_eq(st, bad[i].code);
        ck_assert_int_eq(err.code, bad[i].code);
        assert_same_numbers(&p, &def); /* a failed load changes nothing */
        ck_assert_str_eq(p.source, def.source);
    }
    remove_dir(dir);
}
END_TEST

/* GEMM rows by form and map rows: saved and loaded back sorted, and
 * priced by the cost model as docs/calibration.md says (the expected
 * figures computed here from the rows). */
/* Thin rows: a product whose shortest side is M, N or K is priced by
 * that side's rows at its length, unless the cube of its volume is
 * slower; without thin rows, the rule before them (a cube of twice the
 * short side); the rows survive a save and load. */
START_TEST(thin_products_by_side)
{
    make_dir();
    char path[256];
    mrt_profile p = sample(), q;
    mrt_error err = {0};
    p.gemm[p.ngemm++] = cube_row(16, MRT_GEMM_NN, 2e9, MRT_F32);
    p.gemm[p.ngemm++] = cube_row(1024, MRT_GEMM_NN, 200e9, MRT_F32);
    double rows_only = mrt_cost_gemm(&p, MRT_F32, 1e9, 64, 1024, 1024);
    p.gemm[p.ngemm++] = thin_row(16, MRT_GEMM_THIN_M, 20e9, 1024);
    p.gemm[p.ngemm++] = thin_row(256, MRT_GEMM_THIN_M, 140e9, 1024);
    p.gemm[p.ngemm++] = thin_row(16, MRT_GEMM_THIN_K, 80e9, 1024);
    p.gemm[p.ngemm++] = thin_row(256, MRT_GEMM_THIN_K, 300e9, 1024);
    snprintf(path, sizeof path, "%s/thin.yaml", dir);
    ck_assert_int_eq(mrt_profile_save(path, &p, &err), MRT_OK);
    mrt_profile_default(&q);
    ck_assert_int_eq(mrt_profile_load(path, &q, &err), MRT_OK);
    ck_assert_int_eq(q.ngemm, 6);
    ck_assert_int_eq(q.gemm[2].thin, MRT_GEMM_THIN_M); /* cubes first */
    ck_assert_int_eq(q.gemm[2].other, 1024);
    ck_assert_int_eq(q.gemm[5].thin, MRT_GEMM_THIN_K);
    /* the cube rule before: 2 x 64 = 128 between the cubes 16 and 1024 */
    double cube128 = 2e9 + 198e9 * (log(128.0) - log(16.0)) /
                               (log(1024.0) - log(16.0));
    ck_assert(fabs(rows_only - 1e9 / cube128) < 1e-9 * rows_only);
    /* M short at 64: the thin M rows between 16 and 256 in log n */
    double m64 = 20e9 +
                 120e9 * (log(64.0) - log(16.0)) / (log(256.0) - log(16.0));
    double t = mrt_cost_gemm(&q, MRT_F32, 1e9, 64, 2048, 512);
    ck_assert(fabs(t - 1e9 / m64) < 1e-9 * t);
    /* K short at 64: its row (190 GFLOP/s) is faster than the cube of
     * the volume (cbrt(2048 x 512 x 64) = 406), which then holds it */
    double s = cbrt(2048.0 * 512 * 64);
    double cube = 2e9 +
                  198e9 * (log(s) - log(16.0)) / (log(1024.0) - log(16.0));
    t = mrt_cost_gemm(&q, MRT_F32, 1e9, 2048, 512, 64);
    ck_assert(fabs(t - 1e9 / cube) < 1e-9 * t);
    /* N short: no rows of that side, so the rule before thin rows */
    t = mrt_cost_gemm(&q, MRT_F32, 1e9, 1024, 64, 1024);
    ck_assert(fabs(t - 1e9 / cube128) < 1e-9 * t);
    remove_dir(dir);
}
END_TEST

/* A products row prices its own shape, form and compute type at its
 * rate, and nothing else; rows are kept sorted, set again in place, and
 * survive a save and load. */
START_TEST(products_by_their_own_shape)
{
    make_dir();
    char path[256];
    mrt_profile p = sample(), q;
    mrt_error err = {0};
    p.gemm[p.ngemm++] = cube_row(16, MRT_GEMM_NN, 2e9, MRT_F32);
    p.gemm[p.ngemm++] = cube_row(1024, MRT_GEMM_NN, 200e9, MRT_F32);
    double f = 2.0 * 128 * 1024 * 512;
    double rows_only = mrt_cost_gemm_form(&p, MRT_F32, f, 128, 1024, 512,
                                          MRT_GEMM_NN);
    ck_assert(mrt_profile_set_product(
        &p, (mrt_product_row){128, 1024, 512, MRT_GEMM_TN, MRT_F32, 45e9}));
    ck_assert(mrt_profile_set_product(
        &p, (mrt_product_row){64, 64, 64, MRT_GEMM_NN, MRT_F64, 20e9}));
    ck_assert(mrt_profile_set_product(
        &p, (mrt_product_row){64, 64, 64, MRT_GEMM_NN, MRT_F32, 60e9}));
    ck_assert(
        mrt_profile_set_product(/* the same shape: set again */
                                &p, (mrt_product_row){64, 64, 64, MRT_GEMM_NN,
                                                      MRT_F32, 70e9}));
    mrt_product_row ccols = {128,     1024,
                             512,     MRT_GEMM_TN + MRT_PRODUCT_C_COLS,
                             MRT_F32, 30e9}; /* C by columns: another call */
    ck_assert(mrt_profile_set_product(&p, ccols));
    ck_assert_int_eq(p.nprod, 4);
    snprintf(path, sizeof path, "%s/products.yaml", dir);
    ck_assert_int_eq(mrt_profile_save(path, &p, &err), MRT_OK);
    mrt_profile_default(&q);
    ck_assert_int_eq(mrt_profile_load(path, &q, &err), MRT_OK);
    ck_assert_int_eq(q.nprod, 4);
    ck_assert_int_eq(q.prod[0].m, 64); /* float32 first, nn, then tn */
    ck_assert(close_to(q.prod[0].flops, 70e9));
    ck_assert_int_eq(q.prod[1].form, MRT_GEMM_TN);
    ck_assert_int_eq(q.prod[2].form, MRT_GEMM_TN + MRT_PRODUCT_C_COLS);
    ck_assert(close_to(q.prod[2].flops, 30e9));
    ck_assert_int_eq(q.prod[3].dtype, MRT_F64);
    double t = mrt_cost_gemm_form(&q, MRT_F32, f, 128, 1024, 512, MRT_GEMM_TN);
    ck_assert(fabs(t - f / 45e9) < 1e-9 * t);
    /* bfloat16 computes in float32: the same row */
    t = mrt_cost_gemm_form(&q, MRT_BF16, f, 128, 1024, 512, MRT_GEMM_TN);
    ck_assert(fabs(t - f / 45e9) < 1e-9 * t);
    /* another form, or another side, is the gemm rows' */
    t = mrt_cost_gemm_form(&q, MRT_F32, f, 128, 1024, 512, MRT_GEMM_NN);
    ck_assert(fabs(t - rows_only) < 1e-9 * t);
    t = mrt_cost_gemm_form(&q, MRT_F32, f, 128, 512, 1024, MRT_GEMM_TN);
    ck_assert(fabs(t - f / 45e9) > 0.1 * t);
    t = mrt_cost_gemm_form(&q, MRT_F64, 2.0 * 64 * 64 * 64, 64, 64, 64,
                           MRT_GEMM_NN);
    ck_assert(fabs(t - 2.0 * 64 * 64 * 64 / 20e9) < 1e-9 * t);
    /* a full table takes no new shape, but still sets one it has */
    p.nprod = MRT_PROFILE_PRODUCT_ROWS;
    for (int i = 4; i < p.nprod; i++)
        p.prod[i] = (mrt_product_row){100000 + i, 1, 1, 0, MRT_F64, 1e9};
    ck_assert(!mrt_profile_set_product(
        &p, (mrt_product_row){8, 8, 8, MRT_GEMM_NN, MRT_F32, 1e9}));
    ck_assert(mrt_profile_set_product(
        &p, (mrt_product_row){64, 64, 64, MRT_GEMM_NN, MRT_F32, 1e9}));
    remove_dir(dir);
}
END_TEST

START_TEST(rates_by_form_and_function)
{
    make_dir();
    char path[256];
    mrt_profile p = sample(), q;
    mrt_error err = {0};
    p.gemm[p.ngemm++] = cube_row(512, MRT_GEMM_NT, 50e9, MRT_F32);
    p.gemm[p.ngemm++] = cube_row(16, MRT_GEMM_NN, 2e9, MRT_F32);
    p.gemm[p.ngemm++] = cube_row(64, MRT_GEMM_NT, 10e9, MRT_F32);
    p.gemm[p.ngemm++] = cube_row(1024, MRT_GEMM_NN, 40e9, MRT_F32);
    p.map[p.nmap++] = (mrt_map_row){"gelu", 1 << 20, 8e-9, MRT_F32};
    p.map[p.nmap++] = (mrt_map_row){"gelu", 1 << 10, 2e-9, MRT_F32};
    p.map[p.nmap++] = (mrt_map_row){"add", 1 << 10, 0.5e-9, MRT_F32};
    snprintf(path, sizeof path, "%s/p.yaml", dir);
    ck_assert_int_eq(mrt_profile_save(path, &p, &err), MRT_OK);
    mrt_profile_default(&q);
    ck_assert_int_eq(mrt_profile_load(path, &q, &err), MRT_OK);
    /* sorted: forms, then n; functions, then elements */
    ck_assert_int_eq(q.ngemm, 4);
    ck_assert_int_eq(q.gemm[0].form, MRT_GEMM_NN);
    ck_assert_int_eq(q.gemm[0].n, 16);
    ck_assert_int_eq(q.gemm[1].n, 1024);
    ck_assert_int_eq(q.gemm[2].form, MRT_GEMM_NT);
    ck_assert_int_eq(q.gemm[2].n, 64);
    ck_assert(close_to(q.gemm[3].flops, 50e9));
    ck_assert_int_eq(q.nmap, 3);
    ck_assert_str_eq(q.map[0].fn, "add");
    ck_assert_str_eq(q.map[1].fn, "gelu");
    ck_assert_int_eq(q.map[1].elements, 1 << 10);
    ck_assert(close_to(q.map[2].s_per_elem, 8e-9));
    /* a 256^3 product: nt between its rows 64 and 512 in log n; tt has no
     * rows and takes nn's (between 16 and 1024); float64 at the ratio of
     * the peaks */
    double f = 2.0 * 256 * 256 * 256, x = log(256.0);
    double nt = 10e9 + 40e9 * (x - log(64.0)) / (log(512.0) - log(64.0));
    double nn = 2e9 + 38e9 * (x - log(16.0)) / (log(1024.0) - log(16.0));
    ck_assert(
        fabs(mrt_cost_gemm_form(&q, MRT_F32, f, 256, 256, 256, MRT_GEMM_NT) -
             f / nt) < 1e-9 * f / nt);
    ck_assert(
        fabs(mrt_cost_gemm_form(&q, MRT_F32, f, 256, 256, 256, MRT_GEMM_TT) -
             f / nn) < 1e-9 * f / nn);
    ck_assert(fabs(mrt_cost_gemm(&q, MRT_F32, f, 256, 256, 256) - f / nn) <
              1e-9 * f / nn);
    double r64 = nn * q.gemm_flops[MRT_F64] / q.gemm_flops[MRT_F32];
    ck_assert(
        fabs(mrt_cost_gemm_form(&q, MRT_F64, f, 256, 256, 256, MRT_GEMM_TN) -
             f / r64) < 1e-9 * f / r64);
    /* maps: per element, interpolated in log elements, held at the ends,
     * float64 twice float32; -1 for a function without rows */
    double e = 1 << 15, per = 2e-9 + 6e-9 * (log(e) - log(1024.0)) /
                                         (log(1048576.0) - log(1024.0));
    ck_assert(fabs(mrt_cost_map(&q, "gelu", e, MRT_F32, 4) - e * per) <
              1e-9 * e * per);
    ck_assert(fabs(mrt_cost_map(&q, "gelu", e, MRT_F64, 8) - 2 * e * per) <
              1e-9 * e * per);
    ck_assert(close_to(mrt_cost_map(&q, "gelu", 10, MRT_F32, 4), 10 * 2e-9));
    ck_assert(close_to(mrt_cost_map(&q, "gelu", 1e8, MRT_F32, 4), 1e8 * 8e-9));
    ck_assert(close_to(mrt_cost_map(&q, "add", 1e6, MRT_F32, 4), 1e6 * 0.5e-9));
    ck_assert(mrt_cost_map(&q, "relu", 1e6, MRT_F32, 4) < 0);
    mrt_profile d;
    mrt_profile_default(&d);
    ck_assert(mrt_cost_map(&d, "gelu", 1e6, MRT_F32, 4) < 0);
    remove_dir(dir);
}
END_TEST

/* p saved to path, and the file's text read back into buf (size bytes,
 * NUL-terminated). */
static void saved_text(const char *path, const mrt_profile *p, char *buf,
                       size_t size)
{
    mrt_error err = {0};
    ck_assert_int_eq(mrt_profile_save(path, p, &err), MRT_OK);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(buf, 1, size - 1, f);
    fclose(f);
    buf[n] = 0;
}

/* Map rows timed in float64 (`dtype: float64`): written with the key,
 * loaded back as float64 rows next to float32's (rows without the key),
 * and priced by type: a float64 map at its own rows, a 16-bit one at
 * float32's scaled by its bytes, float64 without float64 rows at twice
 * float32's, float32 never at float64's. */
START_TEST(map_rows_by_type)
{
    make_dir();
    char path[256], text[4096];
    mrt_profile p = sample(), q;
    mrt_error err = {0};
    p.map[p.nmap++] = (mrt_map_row){"exp", 1 << 20, 22e-9, MRT_F64};
    p.map[p.nmap++] = (mrt_map_row){"exp", 1 << 10, 0.6e-9, MRT_F32};
    p.map[p.nmap++] = (mrt_map_row){"exp", 1 << 10, 18e-9, MRT_F64};
    p.map[p.nmap++] = (mrt_map_row){"add", 1 << 10, 0.5e-9, MRT_F32};
    p.map[p.nmap++] = (mrt_map_row){"log", 1 << 10, 15e-9, MRT_F64};
    mrt_profile_sort_rows(&p); /* (as calibrate saves them) */
    snprintf(path, sizeof path, "%s/p.yaml", dir);
    saved_text(path, &p, text, sizeof text);
    /* float32's rows as before, float64's with the key */
    ck_assert_ptr_nonnull(
        strstr(text, "  - {fn: exp, elements: 1024, ns_per_element: 0.6}\n"));
    ck_assert_ptr_nonnull(strstr(
        text,
        "  - {fn: exp, dtype: float64, elements: 1024, ns_per_element: 18}\n"));
    mrt_profile_default(&q);
    ck_assert_int_eq(mrt_profile_load(path, &q, &err), MRT_OK);
    /* sorted: function, type (float32 first), elements */
    ck_assert_int_eq(q.nmap, 5);
    const char *fn[] = {"add", "exp", "exp", "exp", "log"};
    const int type[] = {MRT_F32, MRT_F32, MRT_F64, MRT_F64, MRT_F64};
    const double per[] = {0.5e-9, 0.6e-9, 18e-9, 22e-9, 15e-9};
    for (int i = 0; i < 5; i++) {
        ck_assert_str_eq(q.map[i].fn, fn[i]);
        ck_assert_int_eq(q.map[i].dtype, type[i]);
        ck_assert(close_to(q.map[i].s_per_elem, per[i]));
    }
    /* saved again: the same rows (the source line says where it was
     * loaded from) */
    char again[4096];
    saved_text(path, &q, again, sizeof again);
    ck_assert_ptr_nonnull(strstr(text, "\nmaps:\n"));
    ck_assert_ptr_nonnull(strstr(again, "\nmaps:\n"));
    ck_assert_str_eq(strstr(again, "\nmaps:\n"), strstr(text, "\nmaps:\n"));
    /* float64: its own rows, between 18 and 22 ns in log elements (the
     * bytes rule would say 1.2 ns) */
    double e = 1 << 15, x = 18e-9 + 4e-9 * (log(e) - log(1024.0)) /
                                        (log(1048576.0) - log(1024.0));
    ck_assert(fabs(mrt_cost_map(&q, "exp", e, MRT_F64, 8) - e * x) <
              1e-9 * e * x);
    ck_assert(close_to(mrt_cost_map(&q, "exp", 1e8, MRT_F64, 8), 1e8 * 22e-9));
    /* float32 and 16-bit types: float32's rows by their bytes */
    ck_assert(close_to(mrt_cost_map(&q, "exp", e, MRT_F32, 4), e * 0.6e-9));
    ck_assert(
        close_to(mrt_cost_map(&q, "exp", e, MRT_BF16, 2), e * 0.6e-9 / 2));
    ck_assert(close_to(mrt_cost_map(&q, "exp", e, MRT_F16, 2), e * 0.6e-9 / 2));
    /* float64 without float64 rows: float32's at twice the bytes */
    ck_assert(close_to(mrt_cost_map(&q, "add", e, MRT_F64, 8), e * 1e-9));
    /* only float64 rows: none for float32 */
    ck_assert(close_to(mrt_cost_map(&q, "log", e, MRT_F64, 8), e * 15e-9));
    ck_assert(mrt_cost_map(&q, "log", e, MRT_F32, 4) < 0);
    /* a row without `dtype:` is float32's, as in a profile written
     * before float64 rows existed */
    mrt_profile_default(&q);
    write_file("old.yaml",
               "maps:\n  - {fn: exp, elements: 1024, ns_per_element: 0.6}\n"
               "  - {fn: exp, elements: 1024, ns_per_element: 18, dtype: "
               "float64}\n  - {fn: exp, elements: 2048, ns_per_element: 0.7, "
               "dtype: float32}\n",
               path, sizeof path);
    ck_assert_int_eq(mrt_profile_load(path, &q, &err), MRT_OK);
    ck_assert_int_eq(q.nmap, 3);
    ck_assert_int_eq(q.map[0].dtype, MRT_F32);
    ck_assert_int_eq(q.map[1].dtype, MRT_F32);
    ck_assert_int_eq(q.map[1].elements, 2048);
    ck_assert_int_eq(q.map[2].dtype, MRT_F64);
    remove_dir(dir);
}
END_TEST

START_TEST(nodes_tiers_default_to_default_link)
{
    make_dir();
    char path[256];
    mrt_profile p;
    mrt_profile_default(&p);
    mrt_error err = {0};
    write_file("n.yaml",
               "default: {latency_us: 4, bandwidth_GBps: 2}\n"
               "nodes: {ranks_per_node: 4, inter: {latency_us: 9}}\n",
               path, sizeof path);
    ck_assert_int_eq(mrt_profile_load(path, &p, &err), MRT_OK);
    ck_assert_int_eq(p.ranks_per_node, 4);
    ck_assert(close_to(p.intra.latency_s, 4e-6));
    ck_assert(close_to(p.intra.bandwidth_Bps, 2e9));
    ck_assert(close_to(p.inter.latency_s, 9e-6));
    ck_assert(close_to(p.inter.bandwidth_Bps, 2e9));
    remove_dir(dir);
}
END_TEST

START_TEST(missing_file)
{
    mrt_profile p, def;
    mrt_profile_default(&p);
    def = p;
    mrt_error err = {0};
    ck_assert_int_eq(mrt_profile_load("/nonexistent/profile.yaml", &p, &err),
                     MRT_E_IO);
    ck_assert_str_eq(err.file, "/nonexistent/profile.yaml");
    ck_assert_int_eq(err.line, 0);
    ck_assert_str_eq(err.message,
                     "cannot open profile: No such file or directory");
    assert_same_numbers(&p, &def);
    ck_assert_str_eq(p.source, def.source);
    /* A folder that cannot be made: an i/o error, nothing written. */
    mrt_error werr = {0};
    ck_assert_int_eq(mrt_profile_save("/dev/null/x/profile.yaml", &p, &werr),
                     MRT_E_IO);
    ck_assert_ptr_nonnull(strstr(werr.message, "cannot create the folder"));
}
END_TEST

START_TEST(default_path)
{
    char buf[256];
    setenv("MESHRT_PROFILE", "/etc/p.yaml", 1);
    ck_assert_str_eq(mrt_profile_default_path(buf, sizeof buf), "/etc/p.yaml");
    unsetenv("MESHRT_PROFILE");
    setenv("XDG_CONFIG_HOME", "/x", 1);
    ck_assert_str_eq(mrt_profile_default_path(buf, sizeof buf),
                     "/x/meshrt/profile.yaml");
    unsetenv("XDG_CONFIG_HOME");
    setenv("HOME", "/home/u", 1);
    ck_assert_str_eq(mrt_profile_default_path(buf, sizeof buf),
                     "/home/u/.config/meshrt/profile.yaml");
}
END_TEST

/* GEMM rows timed in float64 (`dtype: float64`): written with the key,
 * loaded back after float32's (rows without the key), and priced by
 * type: a float64 product at float64's rows as measured (not float32's
 * times the peaks' ratio, today's rule without them), a form they lack
 * at float64's nn rows, float32 and 16-bit products at float32's rows
 * only. */
START_TEST(gemm_rows_by_type)
{
    make_dir();
    char path[256], text[4096];
    mrt_profile p = sample(), q;
    mrt_error err = {0};
    p.gemm_flops[MRT_F32] = 100e9;
    p.gemm_flops[MRT_F64] = 50e9;
    p.gemm[p.ngemm++] = cube_row(1024, MRT_GEMM_NN, 50e9, MRT_F64);
    p.gemm[p.ngemm++] = cube_row(16, MRT_GEMM_NN, 2e9, MRT_F32);
    p.gemm[p.ngemm++] = cube_row(16, MRT_GEMM_NN, 4e9, MRT_F64);
    p.gemm[p.ngemm++] = cube_row(1024, MRT_GEMM_NN, 100e9, MRT_F32);
    p.gemm[p.ngemm++] = cube_row(64, MRT_GEMM_NT, 30e9, MRT_F64);
    p.gemm[p.ngemm++] = cube_row(64, MRT_GEMM_TN, 8e9, MRT_F32);
    mrt_profile_sort_rows(&p); /* (as calibrate saves them) */
    snprintf(path, sizeof path, "%s/p.yaml", dir);
    saved_text(path, &p, text, sizeof text);
    /* float32's rows as before, float64's with the key */
    ck_assert_ptr_nonnull(strstr(text,
                                 "gemm:\n  - {n: 16, gflops: 2}\n"
                                 "  - {n: 1024, gflops: 100}\n"
                                 "  - {n: 64, form: tn, gflops: 8}\n"
                                 "  - {n: 16, dtype: float64, gflops: 4}\n"
                                 "  - {n: 1024, dtype: float64, gflops: "
                                 "50}\n  - {n: 64, form: nt, dtype: "
                                 "float64, gflops: 30}\n"));
    mrt_profile_default(&q);
    ck_assert_int_eq(mrt_profile_load(path, &q, &err), MRT_OK);
    /* sorted: type (float32 first), form, n */
    ck_assert_int_eq(q.ngemm, 6);
    const int type[] = {MRT_F32, MRT_F32, MRT_F32, MRT_F64, MRT_F64, MRT_F64};
    const int form[] = {MRT_GEMM_NN, MRT_GEMM_NN, MRT_GEMM_TN,
                        MRT_GEMM_NN, MRT_GEMM_NN, MRT_GEMM_NT};
    const int64_t size[] = {16, 1024, 64, 16, 1024, 64};
    const double rate[] = {2e9, 100e9, 8e9, 4e9, 50e9, 30e9};
    for (int i = 0; i < 6; i++) {
        ck_assert_int_eq(q.gemm[i].dtype, type[i]);
        ck_assert_int_eq(q.gemm[i].form, form[i]);
        ck_assert_int_eq(q.gemm[i].n, size[i]);
        ck_assert(close_to(q.gemm[i].flops, rate[i]));
    }
    /* saved again: the same rows */
    char again[4096];
    saved_text(path, &q, again, sizeof again);
    ck_assert_ptr_nonnull(strstr(again, "\ngemm:\n"));
    ck_assert_str_eq(strstr(again, "\ngemm:\n"), strstr(text, "\ngemm:\n"));

    /* a 128^3 product, nn: float64 at its rows between 16 and 1024 in
     * log n (4 + 46 * 0.5 = 27 GFLOP/s), where float32's rows times the
     * peaks' ratio would say (2 + 98 * 0.5) * 0.5 = 25.5 */
    double fl = 2.0 * 128 * 128 * 128,
           x = (log(128.0) - log(16.0)) / (log(1024.0) - log(16.0));
    double r64 = 4e9 + 46e9 * x, r32 = 2e9 + 98e9 * x;
    ck_assert(
        close_to(mrt_cost_gemm(&q, MRT_F64, fl, 128, 128, 128), fl / r64));
    ck_assert(fabs(fl / r64 - fl / (r32 * 0.5)) > 0.05 * fl / r64);
    /* tn: float64 has no tn rows and takes its nn rows, not float32's tn */
    ck_assert(close_to(
        mrt_cost_gemm_form(&q, MRT_F64, fl, 128, 128, 128, MRT_GEMM_TN),
        fl / r64));
    /* nt: float64's one nt row, held beyond it */
    ck_assert(close_to(
        mrt_cost_gemm_form(&q, MRT_F64, fl, 128, 128, 128, MRT_GEMM_NT),
        fl / 30e9));
    /* float32 and the 16-bit types (computed in float32): float32's rows,
     * never float64's */
    ck_assert(
        close_to(mrt_cost_gemm(&q, MRT_F32, fl, 128, 128, 128), fl / r32));
    ck_assert(
        close_to(mrt_cost_gemm(&q, MRT_BF16, fl, 128, 128, 128), fl / r32));
    ck_assert(close_to(
        mrt_cost_gemm_form(&q, MRT_F32, fl, 128, 128, 128, MRT_GEMM_NT),
        fl / r32));
    /* thin: s = 2 * 8 = 16, float64's smallest row */
    ck_assert(
        close_to(mrt_cost_gemm(&q, MRT_F64, 2.0 * 8 * 512 * 512, 8, 512, 512),
                 2.0 * 8 * 512 * 512 / 4e9));

    /* without float64 rows: today's rule, float32's times the peaks'
     * ratio */
    mrt_profile o = q;
    o.ngemm = 3;
    ck_assert(close_to(mrt_cost_gemm(&o, MRT_F64, fl, 128, 128, 128),
                       fl / (r32 * 0.5)));
    /* only float64 rows: float32 at its peak */
    for (int i = 0; i < 3; i++)
        o.gemm[i] = q.gemm[3 + i];
    ck_assert(
        close_to(mrt_cost_gemm(&o, MRT_F32, fl, 128, 128, 128), fl / 100e9));
    ck_assert(
        close_to(mrt_cost_gemm(&o, MRT_F64, fl, 128, 128, 128), fl / r64));

    /* a row without `dtype:` is float32's (a profile written before
     * float64 rows existed); `dtype: float32` says the same */
    mrt_profile_default(&q);
    write_file("old.yaml",
               "gemm:\n  - {n: 64, gflops: 5}\n"
               "  - {n: 64, dtype: float64, gflops: 7}\n"
               "  - {n: 128, dtype: float32, form: nt, gflops: 9}\n",
               path, sizeof path);
    ck_assert_int_eq(mrt_profile_load(path, &q, &err), MRT_OK);
    ck_assert_int_eq(q.ngemm, 3);
    ck_assert_int_eq(q.gemm[0].dtype, MRT_F32);
    ck_assert_int_eq(q.gemm[0].form, MRT_GEMM_NN);
    ck_assert_int_eq(q.gemm[1].dtype, MRT_F32);
    ck_assert_int_eq(q.gemm[1].form, MRT_GEMM_NT);
    ck_assert_int_eq(q.gemm[2].dtype, MRT_F64);
    ck_assert(close_to(q.gemm[2].flops, 7e9));
    remove_dir(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("profile");
    TCase *tc = tcase_create("profile");
    tcase_add_test(tc, round_trip);
    tcase_add_test(tc, partial_files_keep_the_rest);
    tcase_add_test(tc, bad_files);
    tcase_add_test(tc, rates_by_form_and_function);
    tcase_add_test(tc, thin_products_by_side);
    tcase_add_test(tc, products_by_their_own_shape);
    tcase_add_test(tc, map_rows_by_type);
    tcase_add_test(tc, gemm_rows_by_type);
    tcase_add_test(tc, nodes_tiers_default_to_default_link);
    tcase_add_test(tc, missing_file);
    tcase_add_test(tc, default_path);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
