/*
 * test_api_spec.c — meshrt.h's "inspecting a spec", "searching layouts"
 * and "files" sections through the shared libmeshrt only (include/ on
 * the include path, no MPI): a spec read back as data (mesh, dims, each
 * tensor's shape, layout and shard shape, uneven splits, alternatives
 * and selecting one), what bad indices and names return, a file
 * written atomically with JSON strings and numbers, and the rules search
 * as data (best first, no slower than the spec's rules, shown as text),
 * and a sweep of one dim (a row per partitioning, a column per size),
 * and a plan's values with their pending sums and every rank's block.
 */
#define _GNU_SOURCE /* open_memstream */
/* planning only: meshrt.h, no mpi.h */
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
                                         strlen(spec_text), &s, &err);
    ck_assert_msg(st == MRT_OK, "load: %s", err.message);
    return s;
}

/* A plan's values as data (what meshrt show draws): an einsum whose
 * summed dim is split leaves a pending sum over that axis, reduced by
 * the next step; every rank's block follows the uneven block rule (5
 * over data: 3 then 2); the mesh is the plan's. */
START_TEST(values_and_shards_as_data)
{
    static const char text[] = "mesh: {data: 2, model: 2}\n"
                               "dims: {batch: 5, d: 8, f: 4}\n"
                               "layout: {batch: data, d: model}\n"
                               "tensors:\n"
                               "  x: {shape: [batch, d]}\n"
                               "  w: {shape: [d, f]}\n"
                               "ops:\n"
                               "  - {op: einsum, in: [x, w], out: h, shape: "
                               "[batch, f], layout: {batch: data}}\n"
                               "  - {op: relu, in: [h], out: r}\n";
    mrt_spec *s = NULL;
    mrt_plan *p = NULL;
    ck_assert_int_eq(
        mrt_spec_load_string("v.yaml", text, strlen(text), &s, NULL), MRT_OK);
    ck_assert_int_eq(mrt_plan_create(s, NULL, &p, NULL), MRT_OK);
    mrt_mesh_info m;
    mrt_plan_get_mesh(p, &m);
    ck_assert_int_eq(m.naxes, 2);
    ck_assert_str_eq(m.name[1], "model");
    int xv = mrt_plan_find_value(p, "x");
    mrt_plan_value_info vi;
    ck_assert_int_eq(mrt_plan_get_value(p, xv, &vi, NULL), MRT_OK);
    ck_assert(vi.input && vi.step == -1 && vi.partial == 0);
    ck_assert_int_eq(vi.naxes[0], 1);
    ck_assert_int_eq(vi.axis[0][0], 0); /* batch over data */
    ck_assert_int_eq(vi.axis[1][0], 1); /* d over model */
    int64_t start[2], extent[2];
    ck_assert_int_eq(mrt_plan_get_shard(p, xv, 3, start, extent, NULL),
                     MRT_OK); /* data=1, model=1 */
    ck_assert(start[0] == 3 && extent[0] == 2 && start[1] == 4 &&
              extent[1] == 4);
    int pending = 0, reduced = 0;
    for (int i = 0; i < mrt_plan_value_count(p); i++) {
        ck_assert_int_eq(mrt_plan_get_value(p, i, &vi, NULL), MRT_OK);
        if (strcmp(vi.name, "h") != 0)
            continue;
        pending += vi.partial == 2u && !reduced; /* over model first */
        reduced += vi.partial == 0;
    }
    ck_assert_int_eq(pending, 1);
    ck_assert_int_ge(reduced, 1);
    mrt_error err = {0};
    ck_assert_int_eq(mrt_plan_get_shard(p, xv, 4, start, extent, &err),
                     MRT_E_USAGE);
    ck_assert_int_eq(mrt_plan_get_value(p, -1, &vi, NULL), MRT_E_USAGE);
    ck_assert_int_eq(mrt_plan_find_value(p, "nosuch"), -1);
    mrt_plan_destroy(p);
    mrt_spec_destroy(s);
}
END_TEST

/* An alternative that no longer fits a mesh override keeps its error,
 * at the axis it names, with the entry being applied as its context:
 * mrt_error_format prints it as a note line. */
START_TEST(alternative_error_has_its_context)
{
    static const char text[] = "mesh: {data: 2, model: 2}\n"
                               "dims: {batch: 8, d_ff: 16}\n"
                               "layout: {batch: data}\n"
                               "tensors:\n"
                               "  x: {shape: [batch, d_ff]}\n"
                               "ops:\n"
                               "  - {op: relu, in: [x], out: y}\n"
                               "layouts:\n"
                               "  tp: {d_ff: model}\n";
    mrt_spec *s = NULL, *d = NULL;
    mrt_error err = {0};
    const mrt_spec_load_options opt = {
        .mesh = "data=4", .text = text, .len = strlen(text)};
    ck_assert_msg(mrt_spec_load_ex("inspect.yaml", &opt, &s, &err) == MRT_OK,
                  "%s", err.message);
    ck_assert_msg(mrt_spec_select_alternative(s, "tp", &d, &err) == MRT_E_SPEC,
                  "%s:%d:%d %s", err.file, err.line, err.column, err.message);
    ck_assert_ptr_null(d);
    ck_assert_int_eq(err.line, 9);
    ck_assert_int_gt(err.column, 3);
    ck_assert_int_eq(err.context_line, 9);
    ck_assert_int_eq(err.context_column, 3);
    ck_assert_ptr_nonnull(strstr(err.context, "alternative 'tp'"));
    char buf[2048];
    mrt_error_format(&err, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "\ninspect.yaml:9:3: note: while applying "
                              "alternative 'tp'"),
                  "%s", buf);
    ck_assert_ptr_eq(strstr(buf, "inspect.yaml:9:"), buf);
    mrt_spec_destroy(s);
    /* no context: one line */
    mrt_error plain = {.code = MRT_E_SPEC,
                       .file = "a.yaml",
                       .line = 2,
                       .column = 5,
                       .message = "bad"};
    ck_assert_str_eq(mrt_error_format(&plain, buf, sizeof buf),
                     "a.yaml:2:5: error: bad");
}
END_TEST

/* The public enums' names; out of range: NULL. */
START_TEST(enum_names)
{
    ck_assert_str_eq(mrt_dtype_name(MRT_F64), "float64");
    ck_assert_ptr_null(mrt_dtype_name(MRT_DTYPE_COUNT));
    ck_assert_str_eq(mrt_planner_name(MRT_PLANNER_MESHTF), "meshtf");
    ck_assert_str_eq(mrt_planner_name(MRT_PLANNER_RULES), "rules");
    ck_assert_ptr_null(mrt_planner_name((mrt_planner)-1));
    ck_assert_str_eq(mrt_plan_step_kind_name(MRT_PLAN_STEP_PERMUTE), "permute");
    ck_assert_str_eq(mrt_plan_step_kind_name(MRT_PLAN_STEP_ALLTOALL_GROUP),
                     "alltoall_group");
    ck_assert_ptr_null(mrt_plan_step_kind_name(MRT_PLAN_STEP_KIND_COUNT));
    for (int k = 0; k < MRT_PLAN_STEP_KIND_COUNT; k++)
        ck_assert_ptr_nonnull(mrt_plan_step_kind_name((mrt_plan_step_kind)k));
}
END_TEST

/* Issue 17 item 15: misuse the builder, the planner and the loader. */
START_TEST(misuse_is_a_usage_error)
{
    mrt_error err = {0};
    mrt_ir *b = NULL;
    const int64_t size[] = {2};
    /* one axis, NULL names: the argument at fault, not "naxes" */
    ck_assert_int_eq(mrt_ir_create("p", 1, NULL, size, &b, &err), MRT_E_USAGE);
    ck_assert_ptr_null(b);
    ck_assert_msg(strstr(err.message, "'axis'") &&
                      !strstr(err.message, "naxes"),
                  "%s", err.message);

    /* an out-of-range planner */
    mrt_spec *s = load(), *t = NULL;
    mrt_plan *p = NULL;
    mrt_plan_options opt = {.planner = MRT_PLANNER_COUNT};
    err = (mrt_error){0};
    ck_assert_int_eq(mrt_plan_create(s, &opt, &p, &err), MRT_E_USAGE);
    ck_assert_ptr_null(p);
    ck_assert_ptr_nonnull(strstr(err.message, "planner"));
    opt.planner = (mrt_planner)-1;
    ck_assert_int_eq(mrt_plan_create(s, &opt, &p, NULL), MRT_E_USAGE);
    mrt_spec_destroy(s);

    /* the loader names the call it was given */
    err = (mrt_error){0};
    ck_assert_int_eq(mrt_spec_load_string("x.yaml", NULL, 4, &t, &err),
                     MRT_E_USAGE);
    ck_assert_msg(strstr(err.message, "mrt_spec_load_string") &&
                      !strstr(err.message, "load_text"),
                  "%s", err.message);
}
END_TEST

/* A mesh of no axes, as YAML's `mesh: {}`: one rank. */
START_TEST(builder_mesh_of_no_axes)
{
    mrt_error err = {0};
    mrt_ir *b = NULL;
    ck_assert_msg(mrt_ir_create("p", 0, NULL, NULL, &b, &err) == MRT_OK, "%s",
                  err.message);
    const char *shape[] = {"d"};
    mrt_ir_tensor x = {.name = "x", .ndims = 1, .shape = shape};
    mrt_ir_op op = {.kind = MRT_IR_RELU, .in = {"x"}, .out = "y"};
    mrt_spec *s = NULL;
    mrt_ir_add_dim(b, "d", 4, &err);
    mrt_ir_add_tensor(b, &x, &err);
    mrt_ir_add_op(b, &op, &err);
    ck_assert_msg(mrt_ir_finish(b, &s, &err) == MRT_OK, "%s", err.message);
    mrt_ir_destroy(b);
    mrt_spec_info in;
    mrt_spec_get_info(s, &in);
    ck_assert_int_eq(in.mesh.naxes, 0);
    ck_assert_int_eq(in.mesh.nranks, 1);
    mrt_plan *p = NULL;
    ck_assert_int_eq(mrt_plan_create(s, NULL, &p, NULL), MRT_OK);
    ck_assert_int_eq(mrt_plan_get_totals(p).comm_bytes, 0);
    mrt_plan_destroy(p);
    mrt_spec_destroy(s);
}
END_TEST

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
    ck_assert_int_eq(in.dtype, MRT_F32);
    ck_assert_str_eq(mrt_dtype_name(in.dtype), "float32");
    ck_assert_int_eq(in.ndims, 3);
    ck_assert_int_eq(in.ntensors, 3);
    ck_assert_int_eq(in.nops, 1);
    ck_assert_int_eq(in.nalternatives, 2);
    ck_assert_int_eq(in.training, 0);
    int64_t size = 0;
    ck_assert_str_eq(mrt_spec_get_dim(s, 2, &size), "d_ff");
    ck_assert_int_eq(size, 16);
    ck_assert_ptr_null(mrt_spec_get_dim(s, 3, NULL));
    ck_assert_int_eq(mrt_spec_find_dim(s, "d_model"), 1);
    ck_assert_int_eq(mrt_spec_find_dim(s, "nope"), -1);
    ck_assert_str_eq(mrt_spec_get_alternative(s, 1), "mp");
    ck_assert_ptr_null(mrt_spec_get_alternative(s, 2));

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
    ck_assert_int_eq(mrt_spec_select_alternative(s, "dp", &dp, &err), MRT_OK);
    mrt_spec_tensor_info t;
    ck_assert_int_eq(mrt_spec_get_tensor(dp, 0, &t, NULL), MRT_OK);
    ck_assert_int_eq(t.shard_shape[0], 8 / 6 + 1); /* 8 over 6 ranks */
    ck_assert_int_eq(t.shard_shape[1], 8);
    mrt_spec_destroy(dp);
    dp = NULL;
    ck_assert_int_eq(mrt_spec_select_alternative(s, "nope", &dp, &err),
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
    ck_assert_int_eq(mrt_file_write(path, "the doc", write_doc, "a\"b", &err),
                     MRT_OK);
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
    ck_assert_int_gt(strlen(r->machine), 0); /* as plans name it */
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
    ck_assert_int_eq(
        mrt_sweep_create(path, NULL, "batch", 2, sizes, NULL, &t, &err),
        MRT_OK);
    ck_assert_str_eq(t->dim, "batch");
    ck_assert_int_eq(t->nvalues, 2);
    ck_assert_int_eq(t->nrows, 3);
    ck_assert_str_eq(t->name[0], "spec");
    ck_assert_str_eq(t->name[2], "mp");
    for (int v = 0; v < 2; v++) {
        ck_assert_int_eq(t->load_error[v].code, MRT_OK);
        ck_assert_int_ge(t->fastest[v], 0);
    }
    const mrt_sweep_cell *small = &t->cell[0], *big = &t->cell[1];
    ck_assert(small->ok && big->ok);
    ck_assert(big->totals.flops > small->totals.flops);
    mrt_sweep_destroy(t);
    t = NULL;
    ck_assert_int_eq(
        mrt_sweep_create(path, NULL, "batch", 0, sizes, NULL, &t, &err),
        MRT_E_USAGE);
    ck_assert_ptr_null(t);
    remove(path);
}
END_TEST

/* The general sweep: points of several dims, of a mesh (of another
 * rank count), each column labelled; its argument checks. */
START_TEST(sweep_points_as_data)
{
    char path[] = "/tmp/test_api_points_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs(spec_text, f);
    fclose(f);
    const mrt_sweep_point pts[] = {
        {.dims = "batch=12,d_ff=12"},
        {.dims = "batch=24,d_ff=24", .mesh = "data=4,model=3"},
        {.mesh = "data=2,model=2", .label = "small"}};
    mrt_sweep *t = NULL;
    mrt_error err = {0};
    ck_assert_int_eq(mrt_sweep_create_points(path, NULL, "batch,d_ff", 3, pts,
                                             NULL, &t, &err),
                     MRT_OK);
    ck_assert_str_eq(t->dim, "batch,d_ff");
    ck_assert_str_eq(t->label[0], "batch=12,d_ff=12");
    ck_assert_str_eq(t->label[1], "batch=24,d_ff=24 data=4,model=3");
    ck_assert_str_eq(t->label[2], "small");
    ck_assert_int_eq(t->value[0], 6); /* the rank counts */
    ck_assert_int_eq(t->value[1], 12);
    ck_assert_int_eq(t->value[2], 4);
    ck_assert(t->cell[0].ok && t->cell[1].ok);
    /* twice the batch and d_ff on twice the ranks: twice the flops */
    ck_assert(t->cell[1].totals.flops == 2 * t->cell[0].totals.flops);
    mrt_sweep_destroy(t);
    t = NULL;
    ck_assert_int_eq(
        mrt_sweep_create_points(path, NULL, NULL, 0, pts, NULL, &t, &err),
        MRT_E_USAGE);
    ck_assert_int_eq(
        mrt_sweep_create_points(NULL, NULL, NULL, 1, pts, NULL, &t, &err),
        MRT_E_USAGE);
    ck_assert_ptr_null(t);
    remove(path);
}
END_TEST

/* Under the rules planner every row is pinned, with auto's figures
 * beside it; under auto, none of this spec's rows is. */
START_TEST(compare_pinned_rows)
{
    mrt_spec *s = load();
    mrt_compare *c = NULL, *a = NULL;
    mrt_error err = {0};
    mrt_plan_options rules = {.planner = MRT_PLANNER_RULES};
    ck_assert_int_eq(mrt_compare_create(s, &rules, &c, &err), MRT_OK);
    ck_assert_int_eq(mrt_compare_create(s, NULL, &a, &err), MRT_OK);
    ck_assert_int_eq(c->planner, MRT_PLANNER_RULES);
    for (int r = 0; r < c->nrows; r++) {
        ck_assert(c->row[r].ok && c->row[r].pinned && c->row[r].auto_ok);
        ck_assert(!a->row[r].pinned && !a->row[r].auto_ok);
        ck_assert(c->row[r].auto_totals.time_s == a->row[r].totals.time_s);
        ck_assert(c->row[r].auto_totals.wire_bytes ==
                  a->row[r].totals.wire_bytes);
    }
    mrt_compare_destroy(c);
    mrt_compare_destroy(a);
    mrt_spec_destroy(s);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("api_spec");
    TCase *tc = tcase_create("api_spec");
    tcase_add_test(tc, spec_reads_back_as_data);
    tcase_add_test(tc, alternative_error_has_its_context);
    tcase_add_test(tc, values_and_shards_as_data);
    tcase_add_test(tc, enum_names);
    tcase_add_test(tc, misuse_is_a_usage_error);
    tcase_add_test(tc, builder_mesh_of_no_axes);
    tcase_add_test(tc, selecting_an_alternative_gives_its_layout);
    tcase_add_test(tc, file_written_with_json);
    tcase_add_test(tc, search_rules_as_data);
    tcase_add_test(tc, sweep_as_data);
    tcase_add_test(tc, sweep_points_as_data);
    tcase_add_test(tc, compare_pinned_rows);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
