/*
 * test_api_spec.c — meshrt.h's "inspecting a spec", "searching layouts"
 * and "files" sections through the shared libmeshrt only (include/ on
 * the include path, no MPI): a spec read back as data (mesh, dims, each
 * tensor's shape, layout and shard shape, uneven splits, alternatives
 * and selecting one), what bad indices and names return, a file
 * written atomically with JSON strings and numbers, and the rules search
 * as data (best first, no slower than the spec's rules, shown as text),
 * and a sweep of one dim (a row per partitioning, a column per size).
 */
#define _GNU_SOURCE /* open_memstream */
#define MRT_NO_MPI /* planning only: no mpi.h */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meshrt.h"

static const char spec_text[] =
    "mesh: {data: 2, model: 3}\n"
    "dims: {batch: 8, d_model: 8, d_ff: 16}\n"
    "layout: {batch: data, d_ff: model}\n"
    "tensors:\n"
    "  x:  {shape: [batch, d_model]}\n"
    "  w1: {shape: [d_model, d_ff]}\n"
    "ops:\n"
    "  - {op: einsum, in: [x, w1], out: h, shape: [batch, d_ff]}\n"
    "layouts:\n"
    "  dp: {batch: [data, model]}\n"
    "  mp: {d_ff: data}\n";

static mrt_spec *load(void)
{
    mrt_spec *s = NULL;
    mrt_error err = {0};
    mrt_status st = mrt_spec_load_string("inspect.yaml", spec_text,
                                         strlen(spec_text), NULL, &s, &err);
    ck_assert_msg(st == MRT_OK, "load: %s", err.message);
    return s;
}

START_TEST(spec_reads_back_as_data)
{
    mrt_spec *s = load();
    mrt_spec_info in;
    mrt_spec_get_info(s, &in);
    ck_assert_str_eq(in.path, "inspect.yaml");
    ck_assert_int_eq(in.mesh.naxes, 2);
    ck_assert_str_eq(in.mesh.name[1], "model");
    ck_assert_int_eq(in.mesh.size[1], 3);
    ck_assert_int_eq(in.mesh.nranks, 6);
    ck_assert_str_eq(in.dtype, "float32");
    ck_assert_int_eq(in.ndims, 3);
    ck_assert_int_eq(in.ntensors, 3);
    ck_assert_int_eq(in.nops, 1);
    ck_assert_int_eq(in.nlayouts, 2);
    ck_assert_int_eq(in.training, 0);
    int64_t size = 0;
    ck_assert_str_eq(mrt_spec_get_dim(s, 2, &size), "d_ff");
    ck_assert_int_eq(size, 16);
    ck_assert_ptr_null(mrt_spec_get_dim(s, 3, NULL));
    ck_assert_int_eq(mrt_spec_find_dim(s, "d_model"), 1);
    ck_assert_int_eq(mrt_spec_find_dim(s, "nope"), -1);
    ck_assert_str_eq(mrt_spec_get_layout(s, 1), "mp");
    ck_assert_ptr_null(mrt_spec_get_layout(s, 2));

    /* h = [batch/data, d_ff/model]: 16 over 3 is uneven, 6 the largest */
    mrt_spec_tensor_info t;
    ck_assert_int_eq(mrt_spec_get_tensor(s, 2, &t, NULL), MRT_OK);
    ck_assert_str_eq(t.name, "h");
    ck_assert_int_eq(t.input, 0);
    ck_assert_int_eq(t.ndims, 2);
    ck_assert_str_eq(t.dim[1], "d_ff");
    ck_assert_int_eq(t.shape[1], 16);
    ck_assert_int_eq(t.shard_shape[0], 4);
    ck_assert_int_eq(t.shard_shape[1], 6);
    ck_assert_int_eq(t.even, 0);
    ck_assert_ptr_nonnull(strstr(t.layout, "d_ff"));
    ck_assert_ptr_nonnull(strstr(t.layout, "model"));
    ck_assert_str_eq(t.replicated, "");
    /* x = [batch/data, d_model]: replicated over model */
    ck_assert_int_eq(mrt_spec_get_tensor(s, 0, &t, NULL), MRT_OK);
    ck_assert_int_eq(t.input, 1);
    ck_assert_int_eq(t.even, 1);
    ck_assert_str_eq(t.replicated, "model");

    mrt_error err = {0};
    ck_assert_int_eq(mrt_spec_get_tensor(s, 3, &t, &err), MRT_E_USAGE);
    ck_assert_ptr_nonnull(strstr(err.message, "no tensor 3"));
    mrt_spec_destroy(s);
}
END_TEST

START_TEST(selecting_an_alternative_gives_its_layout)
{
    mrt_spec *s = load(), *dp = NULL;
    mrt_error err = {0};
    ck_assert_int_eq(mrt_spec_select_layout(s, "dp", &dp, &err), MRT_OK);
    mrt_spec_tensor_info t;
    ck_assert_int_eq(mrt_spec_get_tensor(dp, 0, &t, NULL), MRT_OK);
    ck_assert_int_eq(t.shard_shape[0], 8 / 6 + 1); /* 8 over 6 ranks */
    ck_assert_int_eq(t.shard_shape[1], 8);
    mrt_spec_destroy(dp);
    dp = NULL;
    ck_assert_int_eq(mrt_spec_select_layout(s, "nope", &dp, &err),
                     MRT_E_USAGE);
    ck_assert_ptr_null(dp);
    ck_assert_ptr_nonnull(strstr(err.message, "mp"));
    mrt_spec_destroy(s);
}
END_TEST

static void write_doc(FILE *f, const void *ctx)
{
    char buf[MRT_JSON_NUMBER_MAX];
    fputs("{\"name\": ", f);
    mrt_json_write_string(f, ctx);
    fprintf(f, ", \"a\": %s, \"b\": %s}\n",
            mrt_json_format_number(buf, "%.3g", 0.5),
            mrt_json_format_number((char[MRT_JSON_NUMBER_MAX]){0}, "%.9g",
                                   INFINITY));
}

START_TEST(file_written_with_json)
{
    char dir[] = "/tmp/test_api_spec_XXXXXX", path[64], text[128] = {0};
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/out.json", dir);
    mrt_error err = {0};
    ck_assert_int_eq(mrt_file_write(path, "the doc", write_doc, "a\"b",
                                    &err), MRT_OK);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_gt(fread(text, 1, sizeof text - 1, f), 0);
    fclose(f);
    ck_assert_str_eq(text, "{\"name\": \"a\\\"b\", \"a\": 0.5, \"b\": null}\n");
    /* a folder is not a file: MRT_E_IO, on the path */
    ck_assert_int_eq(mrt_file_write(dir, "the doc", write_doc, "x", &err),
                     MRT_E_IO);
    ck_assert_str_eq(err.file, dir);
    remove(path);
    remove(dir);
}
END_TEST

START_TEST(search_rules_as_data)
{
    mrt_spec *s = load();
    mrt_search_rules_report *r = NULL;
    mrt_error err = {0};
    mrt_search_options o = {.top = 3};
    ck_assert_int_eq(mrt_search_rules_create(s, &o, &r, &err), MRT_OK);
    ck_assert_int_eq(r->ndims, 3);
    ck_assert_int_gt(r->enumerated, 1);
    ck_assert_int_ge(r->ntop, 1);
    ck_assert_int_le(r->ntop, 3);
    ck_assert_int_ge(r->npareto, 1);
    ck_assert_int_eq(r->has_spec, 1);
    /* best first; the best is no slower than the spec's own rules */
    for (int i = 1; i < r->ntop; i++)
        ck_assert(r->top[i - 1].totals.time_s <= r->top[i].totals.time_s);
    ck_assert(r->top[0].totals.time_s <= r->spec_totals.time_s);
    ck_assert_int_gt(strlen(r->profile), 0); /* as plans name it */
    /* the rules shown as the spec writes them, naming dims and axes */
    char buf[256];
    const mrt_search_axes *best = r->top[0].rule;
    mrt_search_format_rules(s, best, buf, sizeof buf);
    for (int d = 0; d < r->ndims; d++)
        for (int j = 0; j < best[d].naxes; j++) {
            mrt_spec_info in;
            mrt_spec_get_info(s, &in);
            ck_assert_ptr_nonnull(strstr(buf, mrt_spec_get_dim(s, d, NULL)));
            ck_assert_ptr_nonnull(strstr(buf, in.mesh.name[best[d].axis[j]]));
        }
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    mrt_search_axes none[3] = {{0}};
    mrt_search_write_layout(s, none, f);
    fclose(f);
    ck_assert_str_eq(text, "layout: {}\n");
    free(text);
    mrt_search_format_rules(s, none, buf, sizeof buf);
    ck_assert_str_eq(buf, "(all replicated)");
    mrt_search_rules_destroy(r);
    mrt_spec_destroy(s);
}
END_TEST

START_TEST(sweep_as_data)
{
    char path[] = "/tmp/test_api_sweep_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs(spec_text, f);
    fclose(f);
    const int64_t sizes[] = {6, 60};
    mrt_sweep *t = NULL;
    mrt_error err = {0};
    ck_assert_int_eq(mrt_sweep_create(path, NULL, "batch", 2, sizes, NULL,
                                      &t, &err), MRT_OK);
    ck_assert_str_eq(t->dim, "batch");
    ck_assert_int_eq(t->nvalues, 2);
    ck_assert_int_eq(t->nrows, 3);
    ck_assert_str_eq(t->name[0], "spec");
    ck_assert_str_eq(t->name[2], "mp");
    for (int v = 0; v < 2; v++) {
        ck_assert_str_eq(t->load_error[v], "");
        ck_assert_int_ge(t->fastest[v], 0);
    }
    const mrt_sweep_cell *small = &t->cell[0], *big = &t->cell[1];
    ck_assert(small->ok && big->ok);
    ck_assert(big->totals.flops > small->totals.flops);
    mrt_sweep_destroy(t);
    t = NULL;
    ck_assert_int_eq(mrt_sweep_create(path, NULL, "batch", 0, sizes, NULL,
                                      &t, &err), MRT_E_USAGE);
    ck_assert_ptr_null(t);
    remove(path);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("api_spec");
    TCase *tc = tcase_create("api_spec");
    tcase_add_test(tc, spec_reads_back_as_data);
    tcase_add_test(tc, selecting_an_alternative_gives_its_layout);
    tcase_add_test(tc, file_written_with_json);
    tcase_add_test(tc, search_rules_as_data);
    tcase_add_test(tc, sweep_as_data);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
