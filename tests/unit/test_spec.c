/*
 * test_spec.c — the spec loader (yaml/spec*.c) and the program it fills
 * (ir/spec.h), checked field by field.
 *
 * Golden errors: every tests/specs/bad/NAME.yaml must fail to load with
 * exactly the one line in NAME.err (as mrt_error_format writes it).  A
 * first line "# --mesh: VALUE" passes VALUE as the mesh override.  The
 * folder is listed with opendir, so adding a pair adds a test.
 * Positive tests load the specs in tests/specs/good and check resolved
 * fields, and derive specs under other rules (`layouts:`, search).
 * A small fuzz pass truncates and mutates a good spec at every byte: the
 * loader must never crash and must always give a positioned error.
 *
 * Paths are relative to the repository root (the golden files name the
 * specs that way); run from tests/, the program moves up one folder.
 */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "meshrt.h"
#include "spec.h"

#define BAD_DIR "tests/specs/bad"
#define GOOD_DIR "tests/specs/good"
#define OVERRIDE_TAG "# --mesh: "

static char **bad_files;
static int nbad;

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void list_bad_specs(void)
{
    DIR *d = opendir(BAD_DIR);
    struct dirent *e;
    if (!d)
        return;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".yaml"))
            continue;
        bad_files = realloc(bad_files, (size_t)(nbad + 1) * sizeof *bad_files);
        bad_files[nbad] = malloc(sizeof BAD_DIR + n + 1);
        sprintf(bad_files[nbad++], "%s/%s", BAD_DIR, e->d_name);
    }
    closedir(d);
    qsort(bad_files, (size_t)nbad, sizeof *bad_files, by_name);
}

/* The first line of path without its newline ("" if none). */
static char *first_line(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    buf[0] = '\0';
    if (f) {
        if (!fgets(buf, (int)size, f))
            buf[0] = '\0';
        fclose(f);
    }
    buf[strcspn(buf, "\n")] = '\0';
    return buf;
}

/* Loads path and returns the formatted error in buf; the spec must not
 * load. */
static mrt_status load_error(const char *path, const char *mesh, char *buf,
                             size_t size)
{
    mrt_error err = {0};
    mrt_spec *spec = (mrt_spec *)1;
    mrt_status st = mrt_spec_load_ex(
        path, &(mrt_spec_load_options){.mesh = mesh}, &spec, &err);
    ck_assert_msg(st != MRT_OK, "%s loaded, but should not", path);
    ck_assert_ptr_null(spec);
    ck_assert_int_eq(err.code, st);
    mrt_error_format(&err, buf, size);
    return st;
}

START_TEST(golden_error)
{
    const char *yaml = bad_files[_i];
    char want_path[512], want[1024], got[1024], line[256];
    const char *mesh = NULL;
    snprintf(want_path, sizeof want_path, "%.*s.err", (int)(strlen(yaml) - 5),
             yaml);
    first_line(yaml, line, sizeof line);
    if (!strncmp(line, OVERRIDE_TAG, strlen(OVERRIDE_TAG)))
        mesh = line + strlen(OVERRIDE_TAG);
    ck_assert_msg(access(want_path, R_OK) == 0, "%s has no .err file", yaml);
    first_line(want_path, want, sizeof want);
    load_error(yaml, mesh, got, sizeof got);
    ck_assert_msg(!strcmp(got, want), "%s\n got: %s\nwant: %s", yaml, got,
                  want);
}
END_TEST

START_TEST(golden_folder_is_full)
{
    ck_assert_int_ge(nbad, 40);
}
END_TEST

/* ---- codes and paths of errors ------------------------------------ */

START_TEST(error_codes)
{
    char buf[1024];
    ck_assert_int_eq(
        load_error(BAD_DIR "/syntax_flow.yaml", NULL, buf, sizeof buf),
        MRT_E_SYNTAX);
    ck_assert_int_eq(
        load_error(BAD_DIR "/init_npy_missing.yaml", NULL, buf, sizeof buf),
        MRT_E_IO);
    ck_assert_int_eq(
        load_error(BAD_DIR "/init_npy_shape.yaml", NULL, buf, sizeof buf),
        MRT_E_SPEC);
    ck_assert_int_eq(load_error(BAD_DIR "/empty.yaml", NULL, buf, sizeof buf),
                     MRT_E_SPEC);
    ck_assert_int_eq(load_error(GOOD_DIR "/mlp.yaml", "x=0", buf, sizeof buf),
                     MRT_E_USAGE);
}
END_TEST

START_TEST(missing_file)
{
    mrt_error err = {0};
    mrt_spec *spec = NULL;
    const char *path = "tests/specs/no/such.yaml";
    ck_assert_int_eq(mrt_spec_load(path, &spec, &err), MRT_E_IO);
    ck_assert_ptr_null(spec);
    ck_assert_str_eq(err.file, path);
    ck_assert_int_eq(err.line, 0);
    ck_assert_int_eq(err.column, 0);
    ck_assert_str_eq(err.message,
                     "cannot open spec: No such file or directory");
}
END_TEST

START_TEST(directory_as_spec)
{
    mrt_error err = {0};
    mrt_spec *spec = NULL;
    ck_assert_int_eq(mrt_spec_load(GOOD_DIR, &spec, &err), MRT_E_IO);
    ck_assert_ptr_null(spec);
    ck_assert_str_eq(err.message,
                     "cannot read spec: it is a folder, not a regular file");
}
END_TEST

START_TEST(null_error_and_first_error_wins)
{
    mrt_spec *spec = NULL;
    mrt_error err = {0};
    ck_assert_int_eq(
        mrt_spec_load(BAD_DIR "/op_unknown_kind.yaml", &spec, NULL),
        MRT_E_SPEC);
    ck_assert_ptr_null(spec);
    err.code = MRT_E_RUNTIME;
    strcpy(err.message, "earlier");
    ck_assert_int_eq(
        mrt_spec_load(BAD_DIR "/op_unknown_kind.yaml", &spec, &err),
        MRT_E_SPEC);
    ck_assert_int_eq(err.code, MRT_E_RUNTIME);
    ck_assert_str_eq(err.message, "earlier");
    ck_assert_int_eq(mrt_spec_load(NULL, &spec, NULL), MRT_E_USAGE);
    mrt_spec_destroy(NULL);
}
END_TEST

static const struct {
    const char *mesh, *message;
} bad_overrides[] = {
    {"", "invalid --mesh '': expected AXIS=SIZE[,AXIS=SIZE...]"},
    {"data", "invalid --mesh 'data': 'data' is not AXIS=SIZE"},
    {"x=0", "invalid --mesh 'x=0': the size of axis 'x' must be a positive "
            "integer, got '0'"},
    {"x=-2", "invalid --mesh 'x=-2': the size of axis 'x' must be a "
             "positive integer, got '-2'"},
    {"x=1.5", "invalid --mesh 'x=1.5': the size of axis 'x' must be a "
              "positive integer, got '1.5'"},
    {"1x=2", "invalid --mesh '1x=2': '1x' is not a valid axis name"},
    {"=2", "invalid --mesh '=2': '' is not a valid axis name"},
    {"a=2,", "invalid --mesh 'a=2,': '' is not AXIS=SIZE"},
    {"a=2,a=3", "invalid --mesh 'a=2,a=3': axis 'a' is given twice"},
    {"a=1,b=1,c=1,d=1,e=1,f=1,g=1,h=1,i=1",
     "invalid --mesh 'a=1,b=1,c=1,d=1,e=1,f=1,g=1,h=1,i=1': more than 8 axes"},
    {"a=65536,b=65536", "invalid --mesh 'a=65536,b=65536': more than "
                        "2147483647 ranks"},
    {"a=99999999999999999999",
     "invalid --mesh 'a=99999999999999999999': "
     "the size of axis 'a' must be a positive integer, got "
     "'99999999999999999999'"},
};

START_TEST(override_errors)
{
    mrt_error err = {0};
    mrt_spec *spec = NULL;
    ck_assert_int_eq(mrt_spec_load_ex(GOOD_DIR "/mlp.yaml",
                                      &(mrt_spec_load_options){
                                          .mesh = bad_overrides[_i].mesh},
                                      &spec, &err),
                     MRT_E_USAGE);
    ck_assert_ptr_null(spec);
    ck_assert_str_eq(err.file, "");
    ck_assert_int_eq(err.line, 0);
    ck_assert_str_eq(err.message, bad_overrides[_i].message);
}
END_TEST

/* mrt_spec_load_opts: --dim resizes dims before any shape is read, and
 * an alternative that does not fit an override keeps its error for
 * mrt_spec_select_alternative instead of failing the load. */
START_TEST(load_opts_overrides)
{
    const char *path = "tests/specs/cli/alts_override.yaml";
    mrt_error err = {0};
    mrt_spec *s = NULL, *alt = NULL;
    mrt_spec_load_options ov = {.mesh = "data=4", .dims = NULL};
    ck_assert_int_eq(mrt_spec_load_ex(path, &ov, &s, &err), MRT_OK);
    ck_assert_int_eq(s->nlayouts, 3);
    ck_assert(s->layouts[0].broken && s->layouts[1].broken);
    ck_assert(!s->layouts[2].broken);
    ck_assert_int_eq(mrt_spec_select_alternative(s, "dp", &alt, &err),
                     MRT_E_SPEC);
    ck_assert_ptr_null(alt);
    ck_assert_int_eq(err.line, 14);
    ck_assert_ptr_nonnull(strstr(err.message, "unknown mesh axis 'model'"));
    err = (mrt_error){0};
    ck_assert_int_eq(mrt_spec_select_alternative(s, "rows", &alt, &err),
                     MRT_OK);
    ck_assert_int_eq(alt->mesh.nranks, 4);
    mrt_spec_destroy(alt);
    mrt_spec_destroy(s);

    ov = (mrt_spec_load_options){.mesh = NULL, .dims = " batch = 16,d_ff=32"};
    ck_assert_int_eq(mrt_spec_load_ex(path, &ov, &s, &err), MRT_OK);
    ck_assert_int_eq(s->dim_size[mrt_spec_find_dim(s, "batch")], 16);
    ck_assert_int_eq(s->dim_size[mrt_spec_find_dim(s, "d_ff")], 32);
    ck_assert_int_eq(s->dim_size[mrt_spec_find_dim(s, "d_model")], 8);
    int h = mrt_spec_find_tensor(s, "h");
    ck_assert_int_eq(s->tensor[h].layout.size[0], 16);
    ck_assert_int_eq(s->tensor[h].layout.size[1], 32);
    ck_assert(!s->layouts[0].broken);
    mrt_spec_destroy(s);

    ov = (mrt_spec_load_options){.mesh = NULL,
                                 .dims = "batch=6"}; /* dp: 6 over 4 ranks, */
    ck_assert_int_eq(mrt_spec_load_ex(path, &ov, &s, &err), MRT_OK);
    ck_assert(!s->layouts[0].broken && !s->layouts[1].broken); /* uneven */
    mrt_spec_destroy(s);

    ov = (mrt_spec_load_options){.mesh = NULL, .dims = "batch=2,nope=2"};
    ck_assert_int_eq(mrt_spec_load_ex(path, &ov, &s, &err), MRT_E_USAGE);
    ck_assert_ptr_null(s);
    ck_assert_str_eq(err.message,
                     "--dim: no dim 'nope' in "
                     "tests/specs/cli/alts_override.yaml (dims: batch, "
                     "d_model, d_ff)");
    /* no override: the file's own alternatives are still checked */
    ck_assert_int_eq(mrt_spec_load_ex(path, NULL, &s, &err), MRT_OK);
    for (int i = 0; i < s->nlayouts; i++)
        ck_assert(!s->layouts[i].broken);
    mrt_spec_destroy(s);
}
END_TEST

/* ---- specs that load ---------------------------------------------- */

static mrt_spec *load_ok(const char *path, const char *mesh)
{
    mrt_error err = {0};
    mrt_spec *spec = NULL;
    char buf[1024];
    mrt_status st = mrt_spec_load_ex(
        path, &(mrt_spec_load_options){.mesh = mesh}, &spec, &err);
    ck_assert_msg(st == MRT_OK, "%s", mrt_error_format(&err, buf, sizeof buf));
    ck_assert_ptr_nonnull(spec);
    return spec;
}

/* Checks dim i of tensor t: dim name and the names of its axes. */
static void check_dim(const mrt_spec *s, const char *tensor, int i,
                      const char *dim, const char *axes)
{
    int t = mrt_spec_find_tensor(s, tensor);
    char got[256] = "";
    ck_assert_int_ge(t, 0);
    const mrt_layout *l = &s->tensor[t].layout;
    ck_assert_int_lt(i, l->ndims);
    ck_assert_str_eq(s->dim_name[l->dim[i]], dim);
    ck_assert_int_eq(l->size[i], s->dim_size[l->dim[i]]);
    for (int j = 0; j < l->naxes[i]; j++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s",
                 j ? "+" : "", s->mesh.name[l->axes[i][j]]);
    ck_assert_str_eq(got, axes);
    ck_assert_uint_eq(l->partial, 0);
}

START_TEST(mlp_mesh_dims_rules)
{
    mrt_spec *s = load_ok(GOOD_DIR "/mlp.yaml", NULL);
    ck_assert_str_eq(s->path, GOOD_DIR "/mlp.yaml");
    ck_assert_str_eq(s->dir, GOOD_DIR);
    ck_assert_int_eq(s->mesh.naxes, 2);
    ck_assert_str_eq(s->mesh.name[0], "data");
    ck_assert_str_eq(s->mesh.name[1], "model");
    ck_assert_int_eq(s->mesh.size[0], 2);
    ck_assert_int_eq(s->mesh.nranks, 4);
    ck_assert_int_eq(s->mesh_mark.line, 3);
    ck_assert_int_eq(s->mesh_mark.column, 7);
    ck_assert_int_eq(s->dtype, MRT_F64);
    ck_assert_int_eq(s->ndims, 3);
    ck_assert_int_eq(mrt_spec_find_dim(s, "d_ff"), 2);
    ck_assert_int_eq(mrt_spec_find_dim(s, "nope"), -1);
    ck_assert_int_eq(s->dim_size[2], 16);
    for (int i = 0; i < s->ndims; i++)
        ck_assert_ptr_eq(s->dim_names[i], s->dim_name[i]);
    ck_assert_int_eq(s->rule[0].naxes, 1);
    ck_assert_int_eq(s->rule[0].axes[0], 0);
    ck_assert_int_eq(s->rule[0].mark.line, 7);
    ck_assert_int_eq(s->rule[0].mark.column, 10);
    ck_assert_int_eq(s->rule[1].naxes, 0);
    ck_assert_int_eq(s->rule[2].axes[0], 1);
    mrt_spec_destroy(s);
}
END_TEST

START_TEST(mlp_tensors)
{
    mrt_spec *s = load_ok(GOOD_DIR "/mlp.yaml", NULL);
    const char *names[] = {"x", "w1", "w2", "b", "h", "y"};
    ck_assert_int_eq(s->ntensors, 6);
    for (int i = 0; i < 6; i++)
        ck_assert_int_eq(mrt_spec_find_tensor(s, names[i]), i);
    ck_assert_int_eq(mrt_spec_find_tensor(s, "z"), -1);
    const mrt_spec_tensor *x = &s->tensor[0], *w1 = &s->tensor[1],
                          *w2 = &s->tensor[2], *b = &s->tensor[3];
    ck_assert_int_eq(x->init, MRT_INIT_RANDOM);
    /* the default seed is the name's FNV-1a hash (ir/init.c): the
     * same name gives the same values in every run and every front end */
    ck_assert_uint_eq(x->seed, 0xaf63f54c86021707ull);
    ck_assert_int_eq(x->producer, -1);
    ck_assert_int_eq(x->mark.line, 10);
    ck_assert_int_eq(x->shape_mark.column, 15);
    ck_assert_int_eq(w1->init, MRT_INIT_RANDOM);
    ck_assert_uint_eq(w1->seed, 7);
    ck_assert_int_eq(w2->init, MRT_INIT_FILE);
    ck_assert_str_eq(w2->file, GOOD_DIR "/w2.npy");
    ck_assert_int_eq(w2->init_mark.line, 12);
    ck_assert_int_eq(b->init, MRT_INIT_FILL);
    ck_assert(b->fill == 0.5);
    check_dim(s, "x", 0, "batch", "data");
    check_dim(s, "x", 1, "d_model", "");
    check_dim(s, "w1", 1, "d_ff", "model");
    /* w2's own layout replaces the rules: d_ff is replicated. */
    check_dim(s, "w2", 0, "d_ff", "");
    check_dim(s, "w2", 1, "d_model", "model");
    ck_assert_int_eq(w2->split_mark[1].line, 12);
    ck_assert_int_eq(w2->split_mark[0].line, 0);
    check_dim(s, "b", 0, "d_ff", "model");
    mrt_spec_destroy(s);
}
END_TEST

START_TEST(mlp_ops_outputs)
{
    mrt_spec *s = load_ok(GOOD_DIR "/mlp.yaml", NULL);
    ck_assert_int_eq(s->nops, 2);
    ck_assert_int_eq(s->op[0].kind, MRT_OP_EINSUM);
    ck_assert_int_eq(s->op[0].nin, 2);
    ck_assert_int_eq(s->op[0].in[0], 0);
    ck_assert_int_eq(s->op[0].in[1], 1);
    ck_assert_int_eq(s->op[0].out, 4);
    ck_assert_int_eq(s->op[0].in_mark[1].line, 15);
    ck_assert_int_eq(s->op[0].in_mark[1].column, 26);
    ck_assert_int_eq(s->op[1].in[0], 4);
    ck_assert_int_eq(s->op[1].out, 5);
    ck_assert_int_eq(s->tensor[4].producer, 0);
    ck_assert_int_eq(s->tensor[5].producer, 1);
    ck_assert_int_eq(s->tensor[5].init, MRT_INIT_NONE);
    ck_assert_int_eq(s->tensor[5].mark.line, 16);
    check_dim(s, "h", 0, "batch", "data");
    check_dim(s, "h", 1, "d_ff", "model");
    check_dim(s, "y", 0, "batch", "data+model");
    check_dim(s, "y", 1, "d_model", "");
    ck_assert_int_eq(s->noutputs, 1);
    ck_assert_int_eq(s->output[0], 5);
    mrt_spec_destroy(s);
}
END_TEST

START_TEST(block_style_any_order)
{
    mrt_spec *s = load_ok(GOOD_DIR "/block.yaml", NULL);
    ck_assert_int_eq(s->dtype, MRT_F32);
    ck_assert_int_eq(s->mesh.nranks, 6);
    ck_assert_str_eq(s->mesh.name[1], "cols");
    ck_assert_int_eq(s->noutputs, 2);
    ck_assert_int_eq(s->output[0], 1);
    ck_assert_int_eq(s->output[1], 0);
    ck_assert(s->tensor[0].fill == -1.5e-1);
    ck_assert_int_eq(s->op[0].nin, 1);
    check_dim(s, "a", 0, "i", "rows");
    check_dim(s, "a", 1, "j", "");
    check_dim(s, "s", 0, "i", "rows");
    mrt_spec_destroy(s);
}
END_TEST

START_TEST(shared_axis_in_rules)
{
    mrt_spec *s = load_ok(GOOD_DIR "/shared_axis.yaml", NULL);
    check_dim(s, "q", 0, "heads", "model");
    check_dim(s, "w", 1, "d_ff", "model");
    mrt_spec_destroy(s);
}
END_TEST

/* A float64 file into a float32 program: values that round to a float32
 * load (a subnormal, 0 below the smallest subnormal, NaN, infinities,
 * just past FLT_MAX in decimal); a value beyond float32's range is the
 * golden error init_npy_float32_range. */
START_TEST(file_float32_range)
{
    const char *text = "mesh: {data: 1}\n"
                       "dtype: float32\n"
                       "dims: {a: 2, b: 3}\n"
                       "tensors:\n"
                       "  x: {shape: [a, b], init: {file: tiny_f64.npy}}\n"
                       "ops:\n"
                       "  - {op: neg, in: [x], out: y}\n"
                       "outputs: [y]\n";
    mrt_spec *s = NULL;
    mrt_error err = {0};
    ck_assert_msg(mrt_spec_load_string(GOOD_DIR "/tiny.yaml", text,
                                       strlen(text), &s, &err) == MRT_OK,
                  "%s", err.message);
    mrt_spec_destroy(s);
}
END_TEST

START_TEST(override_replaces_mesh)
{
    mrt_spec *s = load_ok(GOOD_DIR "/mlp.yaml", "data=4,model=1");
    ck_assert_int_eq(s->mesh.naxes, 2);
    ck_assert_int_eq(s->mesh.size[0], 4);
    ck_assert_int_eq(s->mesh.size[1], 1);
    ck_assert_int_eq(s->mesh.nranks, 4);
    ck_assert_int_eq(s->mesh_mark.line, 3);
    check_dim(s, "y", 0, "batch", "data+model");
    mrt_spec_destroy(s);
    /* Axis ids follow the override's order, and blanks are allowed. */
    s = load_ok(GOOD_DIR "/mlp.yaml", " model = 2 , data=1 , extra=1");
    ck_assert_int_eq(s->mesh.naxes, 3);
    ck_assert_str_eq(s->mesh.name[0], "model");
    ck_assert_int_eq(s->rule[0].axes[0], 1);
    check_dim(s, "x", 0, "batch", "data");
    check_dim(s, "y", 0, "batch", "data+model");
    mrt_spec_destroy(s);
}
END_TEST

/* ---- network:, expect:, layouts: and derived specs ------------------ */

START_TEST(network_and_expect)
{
    mrt_spec *s = load_ok(GOOD_DIR "/alts.yaml", NULL);
    ck_assert_int_eq(s->nnet, 2);
    ck_assert_str_eq(s->net_axis[0], "data");
    ck_assert_str_eq(s->net_axis[1], "model");
    ck_assert(s->net_latency_s[0] == 2.5 * 1e-6);
    ck_assert(s->net_bandwidth_Bps[0] == 12 * 1e9);
    ck_assert(s->net_bandwidth_Bps[1] == 1e2 * 1e9);
    ck_assert_int_eq(s->net_mark[1].line, 7);
    ck_assert_int_eq(s->net_mark[1].column, 3);
    ck_assert_int_eq(s->expect.comm_bytes_max, 4096);
    ck_assert_int_eq(s->expect.peak_memory_max, -1);
    ck_assert_int_eq(s->expect.mark.line, 8);
    ck_assert_int_eq(s->expect.mark.column, 9);
    ck_assert_int_eq(s->op[0].expect.comm_bytes_max, -1);
    ck_assert_int_eq(s->op[0].expect.peak_memory_max, 100000);
    ck_assert_int_eq(s->op[0].expect.mark.line, 14);
    ck_assert_int_eq(s->op[1].expect.comm_bytes_max, -1);
    ck_assert_int_eq(s->op[1].expect.peak_memory_max, -1);
    mrt_spec_destroy(s);
    /* Without the keys: no links, no budgets. */
    s = load_ok(GOOD_DIR "/mlp.yaml", NULL);
    ck_assert_int_eq(s->nnet, 0);
    ck_assert_int_eq(s->expect.comm_bytes_max, -1);
    ck_assert_int_eq(s->expect.peak_memory_max, -1);
    for (int i = 0; i < s->nops; i++)
        ck_assert_int_eq(s->op[i].expect.comm_bytes_max, -1);
    ck_assert_int_eq(s->nlayouts, 0);
    mrt_spec_destroy(s);
}
END_TEST

START_TEST(own_layout_flag)
{
    mrt_spec *s = load_ok(GOOD_DIR "/mlp.yaml", NULL);
    const char *own[] = {"w2", "y"}, *global[] = {"x", "w1", "b", "h"};
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(s->tensor[mrt_spec_find_tensor(s, own[i])].own_layout,
                         1);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(
            s->tensor[mrt_spec_find_tensor(s, global[i])].own_layout, 0);
    mrt_spec_destroy(s);
}
END_TEST

START_TEST(layouts_parsed)
{
    mrt_spec *s = load_ok(GOOD_DIR "/alts.yaml", NULL);
    ck_assert_int_eq(s->nlayouts, 3);
    ck_assert_str_eq(s->layouts[0].name, "dp");
    ck_assert_str_eq(s->layouts[2].name, "flat");
    ck_assert_int_eq(s->layouts[0].mark.line, 17);
    ck_assert_int_eq(s->layouts[0].has_mesh, 0);
    ck_assert_int_eq(s->layouts[0].rule[0].naxes, 2);
    ck_assert_int_eq(s->layouts[0].rule[2].naxes, 0);
    ck_assert_int_eq(s->layouts[1].rule[0].naxes, 0);
    ck_assert_int_eq(s->layouts[1].rule[2].axes[0], 1);
    ck_assert_int_eq(s->layouts[2].has_mesh, 1);
    ck_assert_str_eq(s->layouts[2].mesh.name[0], "model");
    ck_assert_int_eq(s->layouts[2].mesh.nranks, 4);
    /* Rules of an alternative with a mesh name that mesh's axes. */
    ck_assert_int_eq(s->layouts[2].rule[2].axes[0], 0);
    ck_assert_int_eq(s->layouts[2].rule[2].mark.line, 20);
    mrt_spec_destroy(s);
}
END_TEST

START_TEST(select_layout)
{
    mrt_spec *s = load_ok(GOOD_DIR "/alts.yaml", NULL), *d = NULL;
    mrt_error err = {0};
    ck_assert_int_eq(mrt_spec_select_alternative(s, "dp", &d, &err), MRT_OK);
    ck_assert_int_eq(d->nlayouts, 0);
    ck_assert_ptr_null(d->layouts);
    check_dim(d, "x", 0, "batch", "data+model");
    check_dim(d, "h", 0, "batch", "data+model");
    check_dim(d, "h", 1, "d_ff", "");
    check_dim(d, "w2", 1, "d_model", "model"); /* its own layout stays */
    ck_assert_int_eq(d->rule[0].naxes, 2);
    ck_assert_int_eq(d->expect.comm_bytes_max, 4096);
    ck_assert_int_eq(d->nnet, 2);
    ck_assert_str_eq(d->path, s->path);
    for (int i = 0; i < d->ndims; i++)
        ck_assert_ptr_eq(d->dim_names[i], d->dim_name[i]);
    /* The original is untouched. */
    check_dim(s, "x", 0, "batch", "data");
    mrt_spec_destroy(d);

    ck_assert_int_eq(mrt_spec_select_alternative(s, "flat", &d, &err), MRT_OK);
    ck_assert_str_eq(d->mesh.name[0], "model");
    ck_assert_int_eq(d->mesh.size[0], 4);
    ck_assert_int_eq(d->mesh_mark.line, 19);
    check_dim(d, "x", 0, "batch", "");
    check_dim(d, "w1", 1, "d_ff", "model");
    /* w2's own layout follows its axis by name onto the new mesh. */
    check_dim(d, "w2", 1, "d_model", "model");
    ck_assert_int_eq(d->tensor[2].layout.axes[1][0], 0);
    mrt_spec_destroy(d);

    ck_assert_int_eq(mrt_spec_select_alternative(s, "tp", &d, &err),
                     MRT_E_USAGE);
    ck_assert_ptr_null(d);
    ck_assert_str_eq(err.file, "");
    ck_assert_int_eq(err.line, 0);
    ck_assert_str_eq(err.message,
                     "unknown layout 'tp' (the spec's layouts: dp, mp, flat)");
    mrt_spec_destroy(s);

    s = load_ok(GOOD_DIR "/mlp.yaml", NULL);
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(mrt_spec_select_alternative(s, "dp", &d, &err),
                     MRT_E_USAGE);
    ck_assert_str_eq(err.message, "unknown layout 'dp' (the spec has no "
                                  "layouts: block)");
    mrt_spec_destroy(s);
}
END_TEST

/* Deriving under the spec's own rules changes nothing. */
START_TEST(derive_same_rules)
{
    mrt_spec *s = load_ok(GOOD_DIR "/mlp.yaml", NULL), *d = NULL;
    mrt_error err = {0};
    ck_assert_int_eq(mrt_spec_derive(s, s->rule, NULL, &d, &err), MRT_OK);
    ck_assert_int_eq(d->ntensors, s->ntensors);
    for (int t = 0; t < s->ntensors; t++) {
        ck_assert(mrt_layout_equal(&d->tensor[t].layout, &s->tensor[t].layout));
        ck_assert_int_eq(d->tensor[t].split_mark[0].line,
                         s->tensor[t].split_mark[0].line);
    }
    ck_assert_int_eq(d->noutputs, s->noutputs);
    ck_assert_int_eq(d->output[0], s->output[0]);
    ck_assert_int_eq(d->op[1].out, s->op[1].out);
    mrt_spec_destroy(d);
    mrt_spec_destroy(s);
}
END_TEST

/* Rules made by a program have no positions: errors point at the
 * tensor's shape, and read as the loader's. */
START_TEST(derive_errors)
{
    mrt_spec *s = load_ok(GOOD_DIR "/mlp.yaml", NULL), *d = (mrt_spec *)1;
    mrt_error err = {0};
    mrt_rule rules[3] = {{0}};
    rules[1].naxes = rules[2].naxes = 1;
    rules[1].axes[0] = rules[2].axes[0] = 1; /* d_model, d_ff: model */
    ck_assert_int_eq(mrt_spec_derive(s, rules, NULL, &d, &err), MRT_E_SPEC);
    ck_assert_ptr_null(d);
    ck_assert_str_eq(err.file, s->path);
    ck_assert_int_eq(err.line, s->tensor[1].shape_mark.line);
    ck_assert_int_eq(err.column, s->tensor[1].shape_mark.column);
    ck_assert_str_eq(err.message,
                     "tensor 'w1' would split mesh axis 'model' "
                     "twice: d_model: model and d_ff: model (give it its own "
                     "layout:)");

    mrt_mesh m = s->mesh;
    m.size[0] = 4, m.size[1] = 1;
    memset(rules, 0, sizeof rules);
    rules[2].naxes = 1;
    rules[2].axes[0] = 0; /* d_ff: data, on data=4 */
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(mrt_spec_derive(s, rules, &m, &d, &err), MRT_OK);
    check_dim(d, "w1", 1, "d_ff", "data");
    check_dim(d, "x", 0, "batch", "");
    check_dim(d, "y", 0, "batch", "data+model"); /* its own layout */
    mrt_spec_destroy(d);

    m.size[0] = 3, m.nranks = 6;
    ck_assert_int_eq(mrt_spec_derive(s, rules, &m, &d, &err), MRT_E_USAGE);
    mrt_spec_destroy(s);
}
END_TEST

/* Search derives many specs: each is independent and freed whole. */
START_TEST(derive_many)
{
    mrt_spec *s = load_ok(GOOD_DIR "/alts.yaml", NULL);
    for (int i = 0; i < 300; i++) {
        mrt_spec *d = NULL;
        const mrt_spec_layout *l = &s->layouts[i % s->nlayouts];
        ck_assert_int_eq(mrt_spec_derive(s, l->rule,
                                         l->has_mesh ? &l->mesh : NULL, &d,
                                         NULL),
                         MRT_OK);
        mrt_spec_destroy(d);
    }
    mrt_spec_destroy(s);
}
END_TEST

/* ---- robustness ----------------------------------------------------- */

/* Loads text from a temporary file: it must load or fail with a
 * positioned error of a parse-time kind. */
static void load_text(const char *text, size_t len)
{
    char path[] = "/tmp/test_spec_XXXXXX", buf[1024];
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
    close(fd);
    mrt_error err = {0};
    mrt_spec *spec = NULL;
    mrt_status st = mrt_spec_load(path, &spec, &err);
    unlink(path);
    mrt_spec_destroy(spec);
    if (st == MRT_OK)
        return;
    ck_assert_msg(st == MRT_E_SYNTAX || st == MRT_E_SPEC || st == MRT_E_IO,
                  "%s", mrt_error_format(&err, buf, sizeof buf));
    ck_assert_msg(err.line > 0 && err.column > 0, "no position: %.*s -> %s",
                  (int)len, text, mrt_error_format(&err, buf, sizeof buf));
}

START_TEST(fuzz_truncate_and_mutate)
{
    static const char marks[] = "[{:*&-,\"'#!|>\t";
    FILE *f = fopen(GOOD_DIR "/mlp.yaml", "rb");
    char text[4096], copy[4096];
    ck_assert_ptr_nonnull(f);
    size_t len = fread(text, 1, sizeof text, f);
    fclose(f);
    for (size_t n = 0; n < len; n++)
        load_text(text, n);
    for (size_t i = 0; i < len; i += 3)
        for (const char *m = marks; *m; m++) {
            memcpy(copy, text, len);
            copy[i] = *m;
            load_text(copy, len);
        }
}
END_TEST

static Suite *spec_suite(void)
{
    Suite *s = suite_create("spec");
    TCase *golden = tcase_create("golden");
    tcase_add_loop_test(golden, golden_error, 0, nbad);
    tcase_add_test(golden, golden_folder_is_full);
    suite_add_tcase(s, golden);
    TCase *errors = tcase_create("errors");
    tcase_add_test(errors, error_codes);
    tcase_add_test(errors, missing_file);
    tcase_add_test(errors, directory_as_spec);
    tcase_add_test(errors, null_error_and_first_error_wins);
    tcase_add_loop_test(errors, override_errors, 0,
                        sizeof bad_overrides / sizeof bad_overrides[0]);
    suite_add_tcase(s, errors);
    TCase *good = tcase_create("good");
    tcase_add_test(good, mlp_mesh_dims_rules);
    tcase_add_test(good, mlp_tensors);
    tcase_add_test(good, mlp_ops_outputs);
    tcase_add_test(good, block_style_any_order);
    tcase_add_test(good, shared_axis_in_rules);
    tcase_add_test(good, override_replaces_mesh);
    tcase_add_test(good, file_float32_range);
    suite_add_tcase(s, good);
    TCase *alts = tcase_create("alternatives");
    tcase_add_test(alts, network_and_expect);
    tcase_add_test(alts, own_layout_flag);
    tcase_add_test(alts, layouts_parsed);
    tcase_add_test(alts, select_layout);
    tcase_add_test(alts, derive_same_rules);
    tcase_add_test(alts, derive_errors);
    tcase_add_test(alts, derive_many);
    tcase_add_test(alts, load_opts_overrides);
    suite_add_tcase(s, alts);
    TCase *fuzz = tcase_create("fuzz");
    tcase_set_timeout(fuzz, 100);
    tcase_add_test(fuzz, fuzz_truncate_and_mutate);
    suite_add_tcase(s, fuzz);
    return s;
}

int main(void)
{
    if (access(BAD_DIR, F_OK) != 0 && access("specs/bad", F_OK) == 0 &&
        chdir("..") != 0)
        return 1;
    list_bad_specs();
    SRunner *sr = srunner_create(spec_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    for (int i = 0; i < nbad; i++)
        free(bad_files[i]);
    free(bad_files);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
